//! [`McpDeclaration`]: an MCP server as a workspace stores it — the JSON
//! of AgentScope's `MCPClient` model, so declarations written by either
//! implementation (and the service's `/workspace/mcp` bodies) read the
//! same.

use std::collections::BTreeMap;
use std::time::Duration;

use oxiscope_mcp::{McpClient, McpConfig, Timeouts};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An MCP server declared in a workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpDeclaration {
    /// The server's name (tool names are prefixed with it).
    pub name: String,
    /// One long-lived session (`true`) or a session per request.
    pub is_stateful: bool,
    /// How to start or reach the server.
    pub mcp_config: McpServerConfig,
    /// Only these tools, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_tools: Option<Vec<String>>,
    /// Not these tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_tools: Option<Vec<String>>,
    /// Seconds one tool call may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_timeout: Option<f64>,
    /// Whether progress notifications are streamed (kept for
    /// compatibility; calls report their result when done).
    #[serde(default)]
    pub stream_progress: bool,
}

/// How a declared server is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum McpServerConfig {
    /// A process speaking MCP on its stdin / stdout.
    #[serde(rename = "stdio_mcp")]
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<Vec<String>>,
        /// Environment variables it gets (in a sandbox: the only ones
        /// besides the sandbox's own).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        env: Option<BTreeMap<String, String>>,
        /// Its working directory (in a sandbox: inside the workspace).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// How undecodable output is handled (kept for compatibility).
        #[serde(default = "strict")]
        encoding_error_handler: String,
    },
    /// A server reached over streamable HTTP.
    #[serde(rename = "http_mcp")]
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// A number of seconds as a duration, if it is a usable one.
fn seconds(value: Option<f64>) -> Option<Duration> {
    value
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| Duration::from_secs_f64(s.min(86_400.0)))
}

impl McpDeclaration {
    /// Checks what every workspace requires: a usable name and a
    /// non-empty command or URL.
    ///
    /// # Errors
    /// [`Error::InvalidMcp`].
    pub fn validate(&self) -> Result<()> {
        let invalid = |reason: &str| Error::InvalidMcp {
            name: self.name.clone(),
            reason: reason.to_owned(),
        };
        if crate::error::validate_id("MCP server name", &self.name).is_err() {
            return Err(invalid(
                "the name must be 1 to 64 letters, digits, '_' or '-'",
            ));
        }
        match &self.mcp_config {
            McpServerConfig::Stdio { command, .. } if command.trim().is_empty() => {
                Err(invalid("the command is empty"))
            }
            McpServerConfig::Stdio { .. } if !self.is_stateful => Err(invalid(
                "a stdio server keeps one session; it cannot be stateless",
            )),
            McpServerConfig::Http { url, .. }
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                Err(invalid("the URL must be http:// or https://"))
            }
            _ => Ok(()),
        }
    }

    /// The client for this declaration, started by `config` (which a
    /// sandbox rewrites to run inside it).
    ///
    /// # Errors
    /// [`Error::InvalidMcp`] when the client cannot be built (a bad
    /// header, say).
    pub fn client_with(&self, config: McpConfig) -> Result<McpClient> {
        self.client_with_timeouts(config, self.timeouts())
    }

    /// The timeouts the declaration asks for: `execution_timeout` per
    /// call, an HTTP server's `timeout` for startup and listing, the
    /// defaults otherwise.
    #[must_use]
    pub fn timeouts(&self) -> Timeouts {
        let mut timeouts = Timeouts::default();
        if let Some(call) = seconds(self.execution_timeout) {
            timeouts.call = call;
        }
        if let McpServerConfig::Http { timeout, .. } = &self.mcp_config
            && let Some(wait) = seconds(*timeout)
        {
            timeouts.startup = wait;
            timeouts.list = wait;
        }
        timeouts
    }

    /// As [`client_with`](Self::client_with), with `timeouts` instead of
    /// the declaration's own (a caller with its own startup budget starts
    /// from [`timeouts`](Self::timeouts) and changes what it needs).
    ///
    /// # Errors
    /// As [`client_with`](Self::client_with).
    pub fn client_with_timeouts(&self, config: McpConfig, timeouts: Timeouts) -> Result<McpClient> {
        let mut builder = McpClient::builder(self.name.clone(), config)
            .stateful(self.is_stateful)
            .timeouts(timeouts);
        if let Some(enable) = &self.enable_tools {
            builder = builder.enable_tools(enable.clone());
        }
        if let Some(disable) = &self.disable_tools {
            builder = builder.disable_tools(disable.clone());
        }
        builder.build().map_err(|e| Error::InvalidMcp {
            name: self.name.clone(),
            reason: e.to_string(),
        })
    }

    /// The config to start the server on the host, as declared.
    #[must_use]
    pub fn host_config(&self) -> McpConfig {
        match &self.mcp_config {
            McpServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
                ..
            } => {
                let mut config =
                    McpConfig::stdio(command.clone(), args.clone().unwrap_or_default());
                for (k, v) in env.iter().flatten() {
                    config = config.with_env(k.clone(), v.clone());
                }
                if let Some(cwd) = cwd {
                    config = config.with_cwd(cwd.clone());
                }
                config
            }
            McpServerConfig::Http { url, headers, .. } => {
                let mut config = McpConfig::http(url.clone());
                for (k, v) in headers.iter().flatten() {
                    config = config.with_header(k.clone(), v.clone());
                }
                config
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn agentscope_mcp_client_json_round_trips() {
        let wire = json!({
            "name": "fs",
            "is_stateful": true,
            "mcp_config": {"type": "stdio_mcp", "command": "node", "args": ["server.js"],
                           "env": {"A": "1"}, "cwd": "/workspace", "encoding_error_handler": "strict"},
            "enable_tools": ["read"],
            "execution_timeout": 5.0,
            "stream_progress": false
        });
        let decl: McpDeclaration = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decl).unwrap(), wire);
        let http: McpDeclaration = serde_json::from_value(json!({
            "name": "remote", "is_stateful": false,
            "mcp_config": {"type": "http_mcp", "url": "http://127.0.0.1:1/mcp"}
        }))
        .unwrap();
        assert_eq!(
            http.mcp_config,
            McpServerConfig::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: None,
                timeout: Some(30.0)
            }
        );
        http.validate().unwrap();
    }

    #[test]
    fn the_timeouts_come_from_the_declaration() {
        let http: McpDeclaration = serde_json::from_value(json!({
            "name": "remote", "is_stateful": true, "execution_timeout": 7.5,
            "mcp_config": {"type": "http_mcp", "url": "http://127.0.0.1:1/mcp", "timeout": 4.0}
        }))
        .unwrap();
        let t = http.timeouts();
        assert_eq!(t.call, Duration::from_millis(7500));
        assert_eq!(
            (t.startup, t.list),
            (Duration::from_secs(4), Duration::from_secs(4))
        );
        let stdio: McpDeclaration = serde_json::from_value(json!({
            "name": "fs", "is_stateful": true, "execution_timeout": -1.0,
            "mcp_config": {"type": "stdio_mcp", "command": "node"}
        }))
        .unwrap();
        assert_eq!(stdio.timeouts(), Timeouts::default());
        let custom = Timeouts {
            startup: Duration::from_secs(1),
            ..Timeouts::default()
        };
        stdio
            .client_with_timeouts(stdio.host_config(), custom)
            .unwrap();
    }

    #[test]
    fn unusable_declarations_are_refused() {
        let base = |name: &str, config: McpServerConfig, stateful: bool| McpDeclaration {
            name: name.into(),
            is_stateful: stateful,
            mcp_config: config,
            enable_tools: None,
            disable_tools: None,
            execution_timeout: None,
            stream_progress: false,
        };
        let stdio = |command: &str| McpServerConfig::Stdio {
            command: command.into(),
            args: None,
            env: None,
            cwd: None,
            encoding_error_handler: strict(),
        };
        for decl in [
            base("../x", stdio("node"), true),
            base("ok", stdio(" "), true),
            base("ok", stdio("node"), false),
            base(
                "ok",
                McpServerConfig::Http {
                    url: "file:///etc/passwd".into(),
                    headers: None,
                    timeout: None,
                },
                true,
            ),
        ] {
            assert!(
                matches!(decl.validate(), Err(Error::InvalidMcp { .. })),
                "{decl:?}"
            );
        }
    }
}
