//! `/workspace/` bodies and queries: MCP servers, skills, directory
//! listings, the workspace's status and file downloads.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /workspace/directories?agent_id=&session_id=&path=`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DirectoryQuery {
    /// The agent.
    pub agent_id: String,
    /// The session.
    pub session_id: String,
    /// A directory inside the workspace, relative to its root or under it
    /// as the agent sees it; empty lists the root.
    #[serde(default)]
    pub path: String,
}

/// `POST /workspace/files/download-token?agent_id=&session_id=&path=`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FilePathQuery {
    /// The agent.
    pub agent_id: String,
    /// The session.
    pub session_id: String,
    /// A file inside the workspace.
    pub path: String,
}

/// `GET /workspace/files?agent_id=&session_id=&path=&download=&token=`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FileQuery {
    /// The agent.
    pub agent_id: String,
    /// The session.
    pub session_id: String,
    /// A file inside the workspace.
    pub path: String,
    /// Force a `Content-Disposition: attachment`.
    #[serde(default)]
    pub download: bool,
    /// A download token, in place of the caller's credentials.
    #[serde(default)]
    pub token: Option<String>,
}

/// How an MCP server is started or reached (AgentScope's
/// `StdioMCPConfig` / `HttpMCPConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum McpServerConfigBody {
    /// A process speaking MCP on stdin / stdout (inside the sandbox).
    #[serde(rename = "stdio_mcp")]
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Option<Vec<String>>,
        /// Its environment variables (plain names only).
        #[serde(default)]
        env: Option<BTreeMap<String, String>>,
        /// Its working directory, inside the workspace.
        #[serde(default)]
        cwd: Option<String>,
        /// Kept for compatibility.
        #[serde(default = "strict")]
        encoding_error_handler: String,
    },
    /// A streamable-HTTP server (only where the sandbox has network).
    #[serde(rename = "http_mcp")]
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        #[serde(default)]
        headers: Option<BTreeMap<String, String>>,
        /// Seconds to wait for the server.
        #[serde(default = "thirty")]
        timeout: Option<f64>,
    },
}

fn strict() -> String {
    "strict".to_owned()
}

#[allow(clippy::unnecessary_wraps)] // serde's default for an optional field
fn thirty() -> Option<f64> {
    Some(30.0)
}

/// `POST /workspace/mcp`: an MCP server declaration (AgentScope's
/// `MCPClient`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "MCPClient")]
pub struct McpClientBody {
    /// The server's name (its tools are `mcp__{name}__{tool}`).
    pub name: String,
    /// One long-lived session (`true`; stdio servers must) or one per
    /// request.
    pub is_stateful: bool,
    /// How to start or reach it.
    pub mcp_config: McpServerConfigBody,
    /// Only these tools.
    #[serde(default)]
    pub enable_tools: Option<Vec<String>>,
    /// Not these tools.
    #[serde(default)]
    pub disable_tools: Option<Vec<String>>,
    /// Seconds one tool call may take.
    #[serde(default)]
    pub execution_timeout: Option<f64>,
    /// Kept for compatibility.
    #[serde(default)]
    pub stream_progress: bool,
}

/// One tool of an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "ToolInfo")]
pub struct ToolInfo {
    /// The tool's name on its server.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
}

/// `GET /workspace/mcp` items: a declaration with its live state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "MCPClientStatus")]
pub struct McpClientStatus {
    /// The declaration.
    #[serde(flatten)]
    pub client: McpClientBody,
    /// Whether its tools could be listed just now.
    pub is_healthy: bool,
    /// Its tools (after the enable / disable filters).
    pub tools: Vec<ToolInfo>,
    /// Why listing its tools failed.
    pub error: Option<String>,
}

/// `GET /workspace/skill` items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "Skill")]
pub struct WorkspaceSkill {
    /// The skill's name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Its directory, as the agent sees it.
    pub dir: String,
    /// The whole `SKILL.md`.
    pub markdown: String,
    /// When its `SKILL.md` last changed (Unix seconds).
    pub updated_at: f64,
}

/// `POST /workspace/skill`: a skill folder inside the session's
/// workspace.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename = "AddSkillRequest")]
pub struct AddSkillRequest {
    /// The folder, relative to the workspace or under it as the agent
    /// sees it.
    pub skill_path: String,
}

/// `POST /workspace/skill/upload`: multipart form (documentation only;
/// the handler reads the parts as they stream).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename = "Body_upload_skill_workspace_skill_upload_post")]
pub struct UploadSkillForm {
    /// JSON `{entries: [{path, size}]}` describing the parts, in the order
    /// they are sent.
    pub manifest: String,
    /// The folder's files.
    pub files: Vec<String>,
}

/// The `manifest` part of an upload.
#[derive(Debug, Clone, Deserialize)]
pub struct UploadManifest {
    /// The files, in the order of the `files` parts.
    pub entries: Vec<UploadEntry>,
}

/// One file of an upload.
#[derive(Debug, Clone, Deserialize)]
pub struct UploadEntry {
    /// Its path, starting with the picked folder (`webkitRelativePath`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "DirectoryEntry")]
pub struct DirectoryEntry {
    /// The entry's name.
    pub name: String,
    /// Whether it is a directory (a link never is: links are not
    /// followed).
    pub is_dir: bool,
    /// A file's size; null for directories, links and what could not be
    /// read.
    pub size_bytes: Option<u64>,
    /// Last modification (Unix seconds).
    pub updated_at: Option<f64>,
}

/// `GET /workspace/directories`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "DirectoryListing")]
pub struct DirectoryListing {
    /// The directory listed, as the agent sees it.
    pub path: String,
    /// Its immediate children.
    pub entries: Vec<DirectoryEntry>,
}

/// Git state of a directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "GitStatus")]
pub struct GitStatus {
    /// The current branch; null on a detached HEAD.
    pub branch: Option<String>,
    /// The full commit id of HEAD; null before the first commit.
    pub head: Option<String>,
    /// Commits ahead of upstream (not computed: null).
    pub ahead: Option<i64>,
    /// Commits behind upstream (not computed: null).
    pub behind: Option<i64>,
    /// Lines added (not computed: 0).
    pub insertions: u64,
    /// Lines removed (not computed: 0).
    pub deletions: u64,
    /// Files staged (not computed: 0).
    pub staged: u64,
    /// Files changed (not computed: 0).
    pub unstaged: u64,
    /// Files untracked (not computed: 0).
    pub untracked: u64,
    /// Files in conflict (not computed: 0).
    pub conflicted: u64,
}

/// `GET /workspace/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "WorkspaceStatus")]
pub struct WorkspaceStatus {
    /// The workspace root, as the agent sees it.
    pub workdir: String,
    /// The session's working directory, as the agent sees it.
    pub cwd: String,
    /// Git state of `cwd`, when it is in a repository.
    pub git: Option<GitStatus>,
}

/// `POST /workspace/files/download-token`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "DownloadTokenResponse")]
pub struct DownloadTokenResponse {
    /// Pass as `token` to `GET /workspace/files`: valid for this path of
    /// this session only.
    pub token: String,
    /// When it stops being accepted (Unix seconds).
    pub expires_at: f64,
}
