//! Resource sharing: which other users' credentials, agents and knowledge
//! bases a viewer may see and use ([`Access::Read`]) or also change
//! ([`Access::Edit`]).
//!
//! The engine has no users, groups or memberships of its own: a
//! [`ResourceAccess`] policy maps a viewer to the resources shared with
//! them. The default, [`OwnerOnly`], shares nothing. [`FilePolicy`] is the
//! operator's file of groups and grants (`serve --sharing FILE`), read again
//! on every reload so that a revoked grant stops working at once.
//!
//! Whatever the policy says, deleting a resource stays with its owner, and
//! a shared credential's secret is never shown to anyone but its owner.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::Deserialize;

/// The kinds of resources that can be shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    /// A model provider's credential (`/credential`).
    Credential,
    /// An agent record (`/agent`).
    Agent,
    /// A knowledge base (`/knowledge_bases`).
    KnowledgeBase,
}

/// What a viewer may do with a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    /// Nothing: the resource does not exist for the viewer (404).
    None,
    /// See it and use it (a credential's secret stays hidden).
    Read,
    /// Also change it (not delete it: that is the owner's).
    Edit,
}

/// One resource shared with a viewer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceRef {
    /// Its kind.
    pub kind: ResourceKind,
    /// Whose it is.
    pub owner_id: String,
    /// Its id.
    pub resource_id: String,
    /// What the viewer may do with it ([`Access::Read`] or
    /// [`Access::Edit`]).
    pub access: Access,
}

/// Who may reach whose resources. The engine asks it on every request that
/// reads or changes a credential, an agent or a knowledge base the viewer
/// does not own; the viewer's own resources never reach it.
pub trait ResourceAccess: Send + Sync + std::fmt::Debug {
    /// The resources of `kind` shared with `viewer` (not the viewer's own).
    /// A ref whose `resource_id` is `*` stands for every resource of that
    /// kind of its owner.
    fn list_accessible(&self, viewer: &str, kind: ResourceKind) -> Vec<ResourceRef>;

    /// What `viewer` may do with `owner`'s resource `id` of `kind`. The
    /// default is the highest access among the matching refs of
    /// [`ResourceAccess::list_accessible`].
    fn access(&self, viewer: &str, kind: ResourceKind, owner: &str, id: &str) -> Access {
        if viewer == owner {
            return Access::Edit;
        }
        self.list_accessible(viewer, kind)
            .into_iter()
            .filter(|r| r.owner_id == owner && (r.resource_id == id || r.resource_id == "*"))
            .map(|r| r.access)
            .max()
            .unwrap_or(Access::None)
    }
}

/// Shares nothing: every user sees only their own resources (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnerOnly;

impl ResourceAccess for OwnerOnly {
    fn list_accessible(&self, _viewer: &str, _kind: ResourceKind) -> Vec<ResourceRef> {
        Vec::new()
    }
}

/// The engine's policy, shared by every door.
pub type SharedAccess = Arc<dyn ResourceAccess>;

/// The default policy as a [`SharedAccess`].
#[must_use]
pub fn owner_only() -> SharedAccess {
    Arc::new(OwnerOnly)
}

/// Why a sharing file was refused.
#[derive(Debug, thiserror::Error)]
pub enum SharingFileError {
    /// It could not be read.
    #[error("sharing file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a sharing policy (bad JSON/TOML, an unknown field, a
    /// grant naming a group that does not exist...).
    #[error("sharing file {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The grant levels a file may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    #[serde(alias = "READ")]
    Read,
    #[serde(alias = "EDIT")]
    Edit,
}

/// One grant: `owner`'s resource(s) of `kind` to users and groups.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grant {
    kind: ResourceKind,
    owner: String,
    /// A resource id, or `*` for all of the owner's resources of `kind`.
    id: String,
    access: Level,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    groups: Vec<String>,
}

/// The file's shape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    /// Group name → its users.
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    grants: Vec<Grant>,
}

/// Grants resolved per viewer and kind.
type Table = BTreeMap<(String, ResourceKind), BTreeSet<ResourceRef>>;

impl Rules {
    fn parse(path: &Path, text: &str) -> Result<Self, SharingFileError> {
        let invalid = |message: String| SharingFileError::Invalid {
            path: path.to_owned(),
            message,
        };
        let is_json =
            path.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
        let rules: Self = if is_json {
            serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?
        } else {
            toml::from_str(text).map_err(|e| invalid(e.to_string()))?
        };
        for grant in &rules.grants {
            if let Some(g) = grant.groups.iter().find(|g| !rules.groups.contains_key(*g)) {
                return Err(invalid(format!("a grant names the unknown group {g:?}")));
            }
            if grant.owner.is_empty() || grant.id.is_empty() {
                return Err(invalid("a grant needs an owner and an id".into()));
            }
        }
        Ok(rules)
    }

    fn table(&self) -> Table {
        let mut table = Table::new();
        for grant in &self.grants {
            let members = grant
                .groups
                .iter()
                .flat_map(|g| self.groups.get(g).into_iter().flatten());
            let access = match grant.access {
                Level::Read => Access::Read,
                Level::Edit => Access::Edit,
            };
            for viewer in grant.users.iter().chain(members) {
                if *viewer == grant.owner {
                    continue;
                }
                table
                    .entry((viewer.clone(), grant.kind))
                    .or_default()
                    .insert(ResourceRef {
                        kind: grant.kind,
                        owner_id: grant.owner.clone(),
                        resource_id: grant.id.clone(),
                        access,
                    });
            }
        }
        table
    }
}

/// The operator's sharing file: groups of users and grants of READ or EDIT
/// per resource, in TOML or JSON (`.json`):
///
/// ```toml
/// [groups]
/// support = ["bob", "carol"]
///
/// [[grants]]
/// kind = "credential"        # credential | agent | knowledge_base
/// owner = "alice"
/// id = "cred-openai-prod"    # or "*": all of alice's credentials
/// access = "read"            # read | edit
/// groups = ["support"]
/// users = ["dave"]
/// ```
///
/// [`FilePolicy::reload`] reads the file again; until a reload succeeds the
/// grants read last stay in force.
#[derive(Debug)]
pub struct FilePolicy {
    path: PathBuf,
    table: RwLock<Table>,
}

impl FilePolicy {
    /// Reads the policy at `path`.
    ///
    /// # Errors
    /// [`SharingFileError`] when it cannot be read or is no policy.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, SharingFileError> {
        let path = path.into();
        let table = Self::read(&path)?;
        Ok(Self {
            path,
            table: RwLock::new(table),
        })
    }

    /// A policy from `text` (TOML, or JSON when it starts with `{`), not
    /// backed by a file (its reloads read nothing new).
    ///
    /// # Errors
    /// [`SharingFileError::Invalid`] when it is no policy.
    pub fn from_text(text: &str) -> Result<Self, SharingFileError> {
        let path = PathBuf::new();
        let table = Rules::parse(&path, text)?.table();
        Ok(Self {
            path,
            table: RwLock::new(table),
        })
    }

    /// Replaces the grants with those of `text`; requests after it see
    /// only the new ones.
    ///
    /// # Errors
    /// [`SharingFileError::Invalid`] (the old grants stay in force).
    pub fn replace(&self, text: &str) -> Result<(), SharingFileError> {
        let table = Rules::parse(&self.path, text)?.table();
        *self
            .table
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = table;
        Ok(())
    }

    /// Reads the file again.
    ///
    /// # Errors
    /// [`SharingFileError`] (the old grants stay in force).
    pub fn reload(&self) -> Result<(), SharingFileError> {
        if self.path.as_os_str().is_empty() {
            return Ok(());
        }
        let table = Self::read(&self.path)?;
        *self
            .table
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = table;
        Ok(())
    }

    /// The file this policy is read from (empty for [`FilePolicy::from_text`]).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(path: &Path) -> Result<Table, SharingFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| SharingFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        Ok(Rules::parse(path, &text)?.table())
    }
}

impl ResourceAccess for FilePolicy {
    fn list_accessible(&self, viewer: &str, kind: ResourceKind) -> Vec<ResourceRef> {
        let table = self
            .table
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        table
            .get(&(viewer.to_owned(), kind))
            .map(|refs| refs.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = r#"
[groups]
support = ["bob", "carol"]

[[grants]]
kind = "credential"
owner = "alice"
id = "c1"
access = "read"
groups = ["support"]

[[grants]]
kind = "agent"
owner = "alice"
id = "*"
access = "edit"
users = ["bob"]
"#;

    #[test]
    fn owner_only_shares_nothing() {
        let p = OwnerOnly;
        assert_eq!(
            p.access("bob", ResourceKind::Agent, "alice", "a1"),
            Access::None
        );
        assert_eq!(
            p.access("alice", ResourceKind::Agent, "alice", "a1"),
            Access::Edit
        );
        assert!(
            p.list_accessible("bob", ResourceKind::Credential)
                .is_empty()
        );
    }

    #[test]
    fn file_grants_by_group_user_and_wildcard() {
        let p = FilePolicy::from_text(RULES).unwrap();
        let cred = ResourceKind::Credential;
        assert_eq!(p.access("carol", cred, "alice", "c1"), Access::Read);
        assert_eq!(p.access("carol", cred, "alice", "c2"), Access::None);
        assert_eq!(p.access("dave", cred, "alice", "c1"), Access::None);
        assert_eq!(
            p.access("bob", ResourceKind::Agent, "alice", "any"),
            Access::Edit
        );
        assert_eq!(
            p.access("carol", ResourceKind::Agent, "alice", "any"),
            Access::None
        );
        // A grant for one owner says nothing of another owner's resource.
        assert_eq!(p.access("carol", cred, "eve", "c1"), Access::None);
    }

    #[test]
    fn replacing_revokes_at_once_and_bad_text_keeps_the_old_grants() {
        let p = FilePolicy::from_text(RULES).unwrap();
        assert!(p.replace("grants = [").is_err());
        let cred = ResourceKind::Credential;
        assert_eq!(p.access("bob", cred, "alice", "c1"), Access::Read);
        p.replace("").unwrap();
        assert_eq!(p.access("bob", cred, "alice", "c1"), Access::None);
    }

    #[test]
    fn json_and_refusals() {
        let json = r#"{"grants":[{"kind":"knowledge_base","owner":"a","id":"k","access":"EDIT","users":["b"]}]}"#;
        let p = FilePolicy::from_text(json).unwrap();
        assert_eq!(
            p.access("b", ResourceKind::KnowledgeBase, "a", "k"),
            Access::Edit
        );
        let unknown_group = r#"[[grants]]
kind = "agent"
owner = "a"
id = "x"
access = "read"
groups = ["nobody"]
"#;
        assert!(FilePolicy::from_text(unknown_group).is_err());
        assert!(
            FilePolicy::from_text(
                "[[grants]]\nkind = \"session\"\nowner=\"a\"\nid=\"x\"\naccess=\"read\""
            )
            .is_err()
        );
        assert!(FilePolicy::from_text("extra = 1").is_err());
    }

    #[test]
    fn reload_reads_the_file_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sharing.toml");
        std::fs::write(&path, RULES).unwrap();
        let p = FilePolicy::load(&path).unwrap();
        assert_eq!(
            p.access("bob", ResourceKind::Credential, "alice", "c1"),
            Access::Read
        );
        std::fs::write(&path, "[groups]\n").unwrap();
        p.reload().unwrap();
        assert_eq!(
            p.access("bob", ResourceKind::Credential, "alice", "c1"),
            Access::None
        );
        assert!(FilePolicy::load(dir.path().join("missing.toml")).is_err());
    }
}
