//! [`AgentSpec`]: an agent record's data, as the engine reads it.

use oxiscope_agent::{ContextConfig, ReActConfig};
use oxiscope_permission::PermissionMode;
use oxiscope_storage::AgentRecord;
use serde_json::{Map, Value};

use super::{Parsed, as_map, object, text};

/// Where a stored agent's data keeps who made it, when not the user
/// (`"team"`: a worker a team leader created).
pub const SOURCE_KEY: &str = "source";

/// What an agent's stored data says: its name and prompt, its loop and
/// context settings, whether other agents may invite it, the mode its
/// sessions start in. The stored document is kept as it was.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    raw: Map<String, Value>,
    /// `name`.
    pub name: Option<String>,
    /// `system_prompt`.
    pub system_prompt: String,
    /// `chat_config.react_config`; a stored one that does not parse reads
    /// as the defaults, as it always has.
    pub react: ReActConfig,
    /// `chat_config.context_config`, read the same way.
    pub context: ContextConfig,
    /// `chat_config.invite_config`, or the deprecated top-level copy.
    pub invite: Option<Invite>,
    /// `permission_mode`: the mode the agent's sessions start in.
    pub permission_mode: Option<PermissionMode>,
    /// `source`: who made it when not the user (`"team"`).
    pub source: Option<String>,
    /// `recipe`: the server's named recipe the agent is built with (see
    /// [`crate::recipe`]).
    pub recipe: Option<String>,
}

/// An agent's `invite_config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invite {
    /// `invitable`.
    pub invitable: bool,
    /// `invite_description`, trimmed.
    pub description: String,
}

impl AgentSpec {
    /// The view of `record`'s data.
    #[must_use]
    pub fn of(record: &AgentRecord) -> Self {
        Self::parse(&record.data)
    }

    /// The view of a stored agent document.
    #[must_use]
    pub fn parse(data: &Value) -> Self {
        let raw = as_map(data);
        let chat = object(&raw, "chat_config");
        let sub = |key: &str| chat.and_then(|c| c.get(key));
        let invite = sub("invite_config")
            .or_else(|| raw.get("invite_config"))
            .and_then(Value::as_object)
            .map(|config| Invite {
                invitable: config.get("invitable").and_then(Value::as_bool) == Some(true),
                description: config
                    .get("invite_description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .trim()
                    .to_owned(),
            });
        Self {
            name: text(&raw, "name"),
            system_prompt: raw
                .get("system_prompt")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            react: Parsed::of(sub("react_config"))
                .ok()
                .cloned()
                .unwrap_or_default(),
            context: Parsed::of(sub("context_config"))
                .ok()
                .cloned()
                .unwrap_or_default(),
            invite,
            permission_mode: Parsed::of(raw.get("permission_mode")).ok().copied(),
            source: text(&raw, SOURCE_KEY),
            recipe: text(&raw, "recipe"),
            raw,
        }
    }

    /// The display name, `fallback` when it has none.
    #[must_use]
    pub fn name_or<'a>(&'a self, fallback: &'a str) -> &'a str {
        self.name.as_deref().unwrap_or(fallback)
    }

    /// The description other agents see when it is invitable (with a
    /// description that says something), else `None`.
    #[must_use]
    pub fn invite_description(&self) -> Option<&str> {
        self.invite
            .as_ref()
            .filter(|i| i.invitable && !i.description.is_empty())
            .map(|i| i.description.as_str())
    }

    /// The stored document, as it was read.
    #[must_use]
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    /// The stored document without its `source` (what the API shows as
    /// `data`).
    #[must_use]
    pub fn into_wire_data(mut self) -> Map<String, Value> {
        self.raw.remove(SOURCE_KEY);
        self.raw
    }
}
