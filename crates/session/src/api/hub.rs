//! `/hub/mcp/*` and `/hub/skill/*` bodies: hubs, their cards and pages.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One registered hub, as shown in the hub picker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HubInfo {
    /// The id addressing this hub.
    pub hub_id: String,
    /// The user-facing hub name.
    pub display_name: String,
    /// The user-facing description.
    pub description: String,
    /// An image identifying the hub, when it has one.
    pub icon_url: Option<String>,
}

/// How an MCP server is started or reached; string leaves of a card's
/// template may hold `${name}` placeholders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum McpConfig {
    /// A process speaking MCP on its stdin / stdout.
    #[serde(rename = "stdio_mcp")]
    Stdio(StdioMcpConfig),
    /// A server reached over streamable HTTP.
    #[serde(rename = "http_mcp")]
    Http(HttpMcpConfig),
}

/// The STDIO MCP server configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "StdioMCPConfig")]
pub struct StdioMcpConfig {
    /// The command to start the MCP server.
    pub command: String,
    /// The command line arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// The environment variables to pass to the server.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// The working directory of the process.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The text encoding error handler (`strict`, `ignore`, `replace`).
    #[serde(default = "strict")]
    pub encoding_error_handler: String,
}

fn strict() -> String {
    "strict".to_owned()
}

/// The HTTP MCP server configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "HttpMCPConfig")]
pub struct HttpMcpConfig {
    /// The URL of the MCP server.
    pub url: String,
    /// Additional headers sent with every request.
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// The HTTP request timeout in seconds.
    #[serde(default = "thirty")]
    pub timeout: Option<f64>,
}

#[allow(clippy::unnecessary_wraps)] // serde's default for an optional field
fn thirty() -> Option<f64> {
    Some(30.0)
}

fn stateful() -> bool {
    true
}

fn inputs() -> String {
    "inputs".to_owned()
}

/// A single MCP listing on a hub: a template plus the JSON Schema of the
/// values the user supplies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "MCPCard")]
pub struct McpCard {
    /// The id of the hub this card came from.
    #[serde(default)]
    pub hub_id: String,
    /// The identifier addressing this card on its hub (defaults to
    /// `name`).
    #[serde(default)]
    pub id: String,
    /// The default name of the installed MCP client.
    pub name: String,
    /// The user-facing name, falling back to `name`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// The user-facing description.
    #[serde(default)]
    pub description: String,
    /// The tags categorising this card.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The card version reported by the hub.
    #[serde(default)]
    pub version: Option<String>,
    /// The last-updated timestamp (Unix epoch seconds).
    #[serde(default)]
    pub updated_at: Option<f64>,
    /// Who published the MCP.
    #[serde(default)]
    pub author: Option<String>,
    /// An image representing the MCP.
    #[serde(default)]
    pub icon_url: Option<String>,
    /// The MCP's page on the hub's website.
    #[serde(default)]
    pub url: Option<String>,
    /// Long-form documentation; left out when browsing.
    #[serde(default)]
    pub readme: Option<String>,
    /// How many times it was installed, when the hub counts.
    #[serde(default)]
    pub installs: Option<u64>,
    /// How many times it was downloaded, when the hub counts.
    #[serde(default)]
    pub downloads: Option<u64>,
    /// Whether the installed client keeps one session.
    #[serde(default = "stateful")]
    pub is_stateful: bool,
    /// How the user authenticates: `none` or `inputs`.
    #[serde(default = "inputs")]
    pub auth: String,
    /// A JSON Schema (`type: object`) of the values the user supplies.
    #[serde(default)]
    pub inputs_schema: Map<String, Value>,
    /// The config whose string leaves may hold `${name}` placeholders.
    pub config_template: McpConfig,
}

/// A single skill listing on a hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "SkillCard")]
pub struct SkillCard {
    /// The id of the hub this card came from.
    #[serde(default)]
    pub hub_id: String,
    /// The identifier addressing this card on its hub (defaults to
    /// `name`).
    #[serde(default)]
    pub id: String,
    /// The skill name.
    pub name: String,
    /// The user-facing description.
    #[serde(default)]
    pub description: String,
    /// The user-facing name, falling back to `name`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// The tags categorising this card.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The card version reported by the hub.
    #[serde(default)]
    pub version: Option<String>,
    /// The last-updated timestamp (Unix epoch seconds).
    #[serde(default)]
    pub updated_at: Option<f64>,
    /// Who published the skill.
    #[serde(default)]
    pub author: Option<String>,
    /// An image representing the skill.
    #[serde(default)]
    pub icon_url: Option<String>,
    /// How many times it was installed, when the hub counts.
    #[serde(default)]
    pub installs: Option<u64>,
    /// How many times it was downloaded, when the hub counts.
    #[serde(default)]
    pub downloads: Option<u64>,
    /// The skill's page on the hub's website.
    #[serde(default)]
    pub url: Option<String>,
    /// The `SKILL.md` body; left out when browsing.
    #[serde(default)]
    pub markdown: Option<String>,
    /// Hub-specific extra fields, carried verbatim.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

/// One page of MCP cards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "MCPHubPage")]
pub struct McpHubPage {
    /// The cards on this page.
    pub cards: Vec<McpCard>,
    /// The cursor of the following page; `None` on the last one.
    pub next_cursor: Option<String>,
}

/// One page of skill cards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillHubPage {
    /// The cards on this page.
    pub cards: Vec<SkillCard>,
    /// The cursor of the following page; `None` on the last one.
    pub next_cursor: Option<String>,
}

/// The query of `GET /hub/{kind}/{hub_id}/cards`.
#[derive(Debug, Clone, Deserialize)]
pub struct CardsQuery {
    /// A keyword to search for; everything when absent.
    #[serde(default)]
    pub q: Option<String>,
    /// The cursor of a previous page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// At most this many cards (1 to 200, default 20).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// The query of `POST /hub/skill/{hub_id}/cards/{card_id}/install`.
#[derive(Debug, Clone, Deserialize)]
pub struct InstallSkillQuery {
    /// The name to install under, defaulting to the card's.
    #[serde(default)]
    pub name: Option<String>,
}

/// `POST /hub/mcp/{hub_id}/cards/{card_id}/install`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(rename = "InstallMCPRequest")]
pub struct InstallMcpRequest {
    /// The name to install under, defaulting to the card's name; must
    /// match `[a-zA-Z0-9_-]+`.
    #[serde(default)]
    pub name: Option<String>,
    /// The answers to the card's `inputs_schema` (API keys, say).
    #[serde(default)]
    pub values: Map<String, Value>,
}
