//! `/mcp`, `/skill` and `/workspace/*/from-library` bodies: the user's
//! library of installed MCP servers and skills. An MCP's rendered config
//! never appears in an answer: it carries the user's API keys.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One installed MCP, as shown in the user's library (without its config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "MCPView")]
pub struct McpView {
    /// The installed-MCP record id.
    pub id: String,
    /// The MCP name, unique for this user.
    pub name: String,
    /// Whether it needs a session.
    pub is_stateful: bool,
    /// Whether the user has it turned on.
    pub enabled: bool,
    /// The card's user-facing name at install time.
    pub display_name: Option<String>,
    /// The card's description at install time.
    pub description: String,
    /// The card's tags at install time.
    pub tags: Vec<String>,
    /// Who published the MCP.
    pub author: Option<String>,
    /// The card's icon at install time.
    pub icon_url: Option<String>,
    /// The MCP's page on the hub's website.
    pub url: Option<String>,
    /// The hub it came from, or null when added by hand.
    pub hub_id: Option<String>,
    /// The card's id on that hub.
    pub card_id: Option<String>,
    /// The card version installed.
    pub version: Option<String>,
}

/// `PATCH /mcp/{mcp_id}`: omitted fields are left alone.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(rename = "UpdateMCPRequest")]
pub struct UpdateMcpRequest {
    /// A new name (`[a-zA-Z0-9_-]+`, unique for this user).
    #[serde(default)]
    pub name: Option<String>,
    /// New answers to the card's `inputs_schema`, merged over the stored
    /// ones; the config is re-rendered from the card.
    #[serde(default)]
    pub values: Option<Map<String, Value>>,
    /// Whether the MCP is turned on.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// One installed skill, as shown in the user's library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillView {
    /// The installed-skill record id.
    pub id: String,
    /// The skill name, unique for this user.
    pub name: String,
    /// Whether the user has it turned on.
    pub enabled: bool,
    /// The card's user-facing name at install time.
    pub display_name: Option<String>,
    /// The card's description at install time.
    pub description: String,
    /// The card's tags at install time.
    pub tags: Vec<String>,
    /// Who published the skill.
    pub author: Option<String>,
    /// The card's icon at install time.
    pub icon_url: Option<String>,
    /// The skill's page on the hub's website.
    pub url: Option<String>,
    /// The hub it came from, or null when added by hand.
    pub hub_id: Option<String>,
    /// The card's id on that hub.
    pub card_id: Option<String>,
    /// The card version installed.
    pub version: Option<String>,
}

/// One installed skill with its `SKILL.md` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "SkillRecord")]
pub struct SkillRecordView {
    /// The record id.
    pub id: String,
    /// Last change.
    pub updated_at: String,
    /// Creation.
    pub created_at: String,
    /// The owner.
    pub user_id: String,
    /// The skill name.
    pub name: String,
    /// The user-facing name.
    pub display_name: Option<String>,
    /// The description.
    pub description: String,
    /// The tags.
    pub tags: Vec<String>,
    /// Who published it.
    pub author: Option<String>,
    /// Its icon.
    pub icon_url: Option<String>,
    /// Its page on the hub's website.
    pub url: Option<String>,
    /// The `SKILL.md` body.
    pub markdown: String,
    /// The hub it came from.
    pub hub_id: Option<String>,
    /// The card's id on that hub.
    pub card_id: Option<String>,
    /// The card version installed.
    pub version: Option<String>,
    /// Whether the user has it turned on.
    pub enabled: bool,
}

/// The query of the `/workspace/*/from-library` routes.
#[derive(Debug, Clone, Deserialize)]
pub struct WorkspaceQuery {
    /// The agent of the session.
    pub agent_id: String,
    /// The session whose workspace receives the items.
    pub session_id: String,
}

/// `POST /workspace/mcp/from-library`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddFromLibraryRequest {
    /// The installed-MCP record ids to add.
    pub mcp_ids: Vec<String>,
}

/// `POST /workspace/skill/from-library`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddSkillsFromLibraryRequest {
    /// The installed-skill record ids to add.
    pub skill_ids: Vec<String>,
}

/// What landed in the workspace, and what did not (id → why).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AddFromLibraryResponse {
    /// The names now in the workspace.
    pub added: Vec<String>,
    /// Whatever could not be added, mapped to why.
    pub failed: BTreeMap<String, String>,
}
