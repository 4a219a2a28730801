//! The catalogue format of a hub, and browsing it.
//!
//! A catalogue is one JSON document, from a local file (or a directory's
//! `hub.json`) or an `https://` URL:
//!
//! ```json
//! {"kind": "mcp", "hub_id": "internal", "display_name": "Internal",
//!  "description": "...", "icon_url": null,
//!  "cards": [{"id": "weather", "name": "weather", "config_template": {...},
//!             "inputs_schema": {...}}]}
//! ```
//!
//! `kind` is `mcp` or `skill`; MCP cards carry `MCPCard`'s fields, skill
//! cards `SkillCard`'s plus where their files are: `path`, a directory
//! relative to a local catalogue's own directory, or `archive_url`, the
//! `https://` URL of a `.tar.gz` archive (remote catalogues only).

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::Value;

use crate::api::{HubInfo, McpCard, SkillCard};
use crate::error::SessionError;

/// The largest catalogue document read.
pub(crate) const MAX_CATALOGUE_BYTES: u64 = 8 << 20;
/// The most cards one catalogue may list.
const MAX_CARDS: usize = 10_000;

/// What a hub offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HubKind {
    /// MCP servers.
    Mcp,
    /// Skills.
    Skill,
}

impl HubKind {
    /// `mcp` or `skill`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Skill => "skill",
        }
    }
}

/// Where a skill card's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillFiles {
    /// A directory relative to the local catalogue's directory.
    Dir(PathBuf),
    /// A `.tar.gz` archive at this URL.
    Archive(String),
}

impl SkillFiles {
    /// A description for the library record.
    pub fn describe(&self) -> String {
        match self {
            Self::Dir(dir) => dir.display().to_string(),
            Self::Archive(url) => url.clone(),
        }
    }
}

/// A skill card and where its files are.
#[derive(Debug, Clone)]
pub struct SkillEntry {
    /// What the hub says of the skill.
    pub card: SkillCard,
    /// Where its files are.
    pub files: SkillFiles,
}

/// A parsed, checked catalogue.
#[derive(Debug)]
pub struct Catalogue {
    /// Whether it lists MCP servers or skills.
    pub kind: HubKind,
    /// The hub itself.
    pub info: HubInfo,
    /// Its MCP servers (an MCP hub).
    pub mcp: Vec<McpCard>,
    /// Its skills (a skill hub).
    pub skills: Vec<SkillEntry>,
    /// The directory of a local catalogue, canonical: skill directories
    /// must stay inside it.
    pub root: Option<PathBuf>,
    /// The URL a remote catalogue was downloaded from: its archives are
    /// fetched from that origin freely, from elsewhere at public addresses
    /// only.
    pub source_url: Option<String>,
}

#[derive(Deserialize)]
struct Document {
    kind: HubKind,
    hub_id: String,
    display_name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    icon_url: Option<String>,
    #[serde(default)]
    cards: Vec<Value>,
}

impl Catalogue {
    /// Parses and checks a catalogue; `root` is a local catalogue's
    /// directory (`None` for a remote one).
    ///
    /// # Errors
    /// Why the document is not a usable catalogue.
    pub fn parse(bytes: &[u8], root: Option<PathBuf>) -> Result<Self, String> {
        let doc: Document =
            serde_json::from_slice(bytes).map_err(|e| format!("not a hub catalogue: {e}"))?;
        oxiscope_workspace::validate_id("hub id", &doc.hub_id).map_err(|e| e.to_string())?;
        if doc.cards.len() > MAX_CARDS {
            return Err(format!("more than {MAX_CARDS} cards"));
        }
        let mut seen = HashSet::new();
        let mut mcp = Vec::new();
        let mut skills = Vec::new();
        for (i, value) in doc.cards.into_iter().enumerate() {
            let id = match doc.kind {
                HubKind::Mcp => {
                    let mut card: McpCard = serde_json::from_value(value)
                        .map_err(|e| format!("card {i}: not an MCP card: {e}"))?;
                    card.hub_id.clone_from(&doc.hub_id);
                    if card.id.is_empty() {
                        card.id.clone_from(&card.name);
                    }
                    let id = card.id.clone();
                    mcp.push(card);
                    id
                }
                HubKind::Skill => {
                    let entry = skill_entry(value, &doc.hub_id, root.is_some())
                        .map_err(|e| format!("card {i}: {e}"))?;
                    let id = entry.card.id.clone();
                    skills.push(entry);
                    id
                }
            };
            if id.is_empty() || !seen.insert(id.clone()) {
                return Err(format!("card {i}: its id {id:?} is empty or repeated"));
            }
        }
        Ok(Self {
            kind: doc.kind,
            info: HubInfo {
                hub_id: doc.hub_id,
                display_name: doc.display_name,
                description: doc.description,
                icon_url: doc.icon_url,
            },
            mcp,
            skills,
            root,
            source_url: None,
        })
    }

    /// The MCP card `id`.
    pub fn mcp_card(&self, id: &str) -> Option<&McpCard> {
        self.mcp.iter().find(|c| c.id == id)
    }

    /// The skill card `id`.
    pub fn skill(&self, id: &str) -> Option<&SkillEntry> {
        self.skills.iter().find(|s| s.card.id == id)
    }
}

fn skill_entry(value: Value, hub_id: &str, local: bool) -> Result<SkillEntry, String> {
    let path = value.get("path").and_then(Value::as_str).map(str::to_owned);
    let archive = value
        .get("archive_url")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut card: SkillCard =
        serde_json::from_value(value).map_err(|e| format!("not a skill card: {e}"))?;
    card.hub_id = hub_id.to_owned();
    if card.id.is_empty() {
        card.id.clone_from(&card.name);
    }
    let files = match (path, archive) {
        (Some(path), _) if local => SkillFiles::Dir(relative_dir(&path)?),
        (_, Some(url)) => {
            super::fetch::check_url(&url)?;
            SkillFiles::Archive(url)
        }
        _ if local => return Err("a skill card needs a `path` or an `archive_url`".to_owned()),
        _ => return Err("a remote skill card needs an `archive_url`".to_owned()),
    };
    Ok(SkillEntry { card, files })
}

/// A relative path that stays where it starts: no root, no `..`.
fn relative_dir(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    let plain = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if path.is_empty() || !plain {
        return Err(format!(
            "the skill path {path:?} must be relative to the catalogue, without `..`"
        ));
    }
    Ok(p.to_path_buf())
}

/// Whether `q` (case-insensitive) is part of the name, display name or a
/// tag.
pub fn matches(q: &str, name: &str, display_name: Option<&str>, tags: &[String]) -> bool {
    let q = q.to_lowercase();
    name.to_lowercase().contains(&q)
        || display_name.is_some_and(|d| d.to_lowercase().contains(&q))
        || tags.iter().any(|t| t.to_lowercase().contains(&q))
}

/// The most cards one page holds.
const MAX_LIMIT: i64 = 200;
/// The page size when none is asked for.
const DEFAULT_LIMIT: i64 = 20;

/// One page of `items` from `cursor` (an opaque offset) and the cursor of
/// the next page.
///
/// # Errors
/// 422 for a limit out of 1..=200 or a cursor this server did not issue.
pub fn page<T>(
    items: Vec<T>,
    cursor: Option<&str>,
    limit: Option<i64>,
) -> Result<(Vec<T>, Option<String>), SessionError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(SessionError::invalid(
            &["query", "limit"],
            format!("Input should be between 1 and {MAX_LIMIT}"),
            "value_error",
        ));
    }
    let start = match cursor.filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => decode_cursor(c).ok_or_else(|| {
            SessionError::invalid(&["query", "cursor"], "Invalid cursor", "value_error")
        })?,
    };
    let total = items.len();
    let limit = usize::try_from(limit).unwrap_or(1);
    let cards: Vec<T> = items.into_iter().skip(start).take(limit).collect();
    let end = start.saturating_add(cards.len());
    let next = (end < total).then(|| URL_SAFE_NO_PAD.encode(format!("o:{end}")));
    Ok((cards, next))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.strip_prefix("o:")?.parse().ok()
}
