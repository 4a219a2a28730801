//! MCP servers for `oxiscope chat` and `oxiscope mcp`: the config file's
//! `[mcp_servers.NAME]` tables and the `--mcp NAME=...` flags, turned into
//! workspace declarations ([`McpDeclaration`]).
//!
//! `${VAR}` (and `${VAR:-default}`) in a server's command, args, env
//! values, cwd, url and headers is replaced from the environment; a
//! variable that is not set is an error naming the server and the
//! variable, never an empty string.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use oxiscope_workspace::{McpDeclaration, McpServerConfig};
use serde::Deserialize;

/// How long a server may take to start (and list its tools) unless its
/// `startup_timeout` says otherwise.
pub(crate) const DEFAULT_STARTUP: Duration = Duration::from_secs(30);

/// The longest timeout accepted, in seconds (a day).
const MAX_SECONDS: f64 = 86_400.0;

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerSpec {
    /// What the workspace would store for it.
    pub(crate) decl: McpDeclaration,
    /// `enabled = false` keeps it listed but never started.
    pub(crate) enabled: bool,
    /// How long starting it and listing its tools may take.
    pub(crate) startup_timeout: Duration,
}

impl ServerSpec {
    /// The server's name.
    pub(crate) fn name(&self) -> &str {
        &self.decl.name
    }

    /// `stdio` or `http`.
    pub(crate) fn transport(&self) -> &'static str {
        match self.decl.mcp_config {
            McpServerConfig::Stdio { .. } => "stdio",
            McpServerConfig::Http { .. } => "http",
        }
    }
}

/// `[mcp_servers.NAME]` in the config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    enabled_tools: Option<Vec<String>>,
    disabled_tools: Option<Vec<String>>,
    timeout: Option<f64>,
    startup_timeout: Option<f64>,
    enabled: Option<bool>,
}

/// The servers of the config file (`file`, by name) and of the `--mcp`
/// flags; a flag replaces the config server of the same name. Config
/// servers come in name order, then the flags' new ones in flag order.
///
/// # Errors
/// A server's table or flag is unusable (unknown key, both or neither of
/// `command` and `url`, a bad name or timeout, an unset variable); the
/// message names the server.
pub(crate) fn resolve_servers(
    file: &BTreeMap<String, toml::Value>,
    flags: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Vec<ServerSpec>> {
    let mut servers = Vec::new();
    for (name, value) in file {
        servers.push(from_entry(name, value, env).with_context(|| {
            format!("in the config file: MCP server `{name}` ([mcp_servers.{name}])")
        })?);
    }
    for flag in flags {
        let spec = parse_flag(flag).with_context(|| format!("--mcp {flag}"))?;
        match servers.iter_mut().find(|s| s.name() == spec.name()) {
            Some(slot) => *slot = spec,
            None => servers.push(spec),
        }
    }
    Ok(servers)
}

/// One `[mcp_servers.NAME]` table.
fn from_entry(
    name: &str,
    value: &toml::Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<ServerSpec> {
    anyhow::ensure!(
        value.is_table(),
        "must be a table with `command` or `url`, not {}",
        value.type_str()
    );
    let entry: ServerEntry = value
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| anyhow::anyhow!("{}", e.message().trim_end()))?;
    let ex = |text: &str, place: &str| {
        expand(text, env).map_err(|e| anyhow::anyhow!("{e} (in {place})"))
    };
    let startup = positive_seconds(entry.startup_timeout, "startup_timeout")?;
    let mcp_config = match (&entry.command, &entry.url) {
        (Some(_), Some(_)) => {
            anyhow::bail!("give either `command` (stdio) or `url` (HTTP), not both")
        }
        (None, None) => anyhow::bail!("needs `command` (a stdio server) or `url` (an HTTP server)"),
        (Some(command), None) => {
            anyhow::ensure!(
                entry.headers.is_empty(),
                "`headers` are for HTTP servers (`url`), not `command`"
            );
            let args = entry
                .args
                .iter()
                .map(|a| ex(a, "args"))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let mut vars = BTreeMap::new();
            for (key, value) in &entry.env {
                vars.insert(key.clone(), ex(value, &format!("env.{key}"))?);
            }
            let cwd = entry.cwd.as_deref().map(|c| ex(c, "cwd")).transpose()?;
            McpServerConfig::Stdio {
                command: ex(command, "command")?,
                args: (!args.is_empty()).then_some(args),
                env: (!vars.is_empty()).then_some(vars),
                cwd,
                encoding_error_handler: "strict".to_owned(),
            }
        }
        (None, Some(url)) => {
            let stdio_only = [
                ("args", !entry.args.is_empty()),
                ("env", !entry.env.is_empty()),
                ("cwd", entry.cwd.is_some()),
            ];
            for (key, given) in stdio_only {
                anyhow::ensure!(
                    !given,
                    "`{key}` is for stdio servers (`command`), not `url`"
                );
            }
            let mut headers = BTreeMap::new();
            for (key, value) in &entry.headers {
                headers.insert(key.clone(), ex(value, &format!("headers.{key}"))?);
            }
            McpServerConfig::Http {
                url: ex(url, "url")?,
                headers: (!headers.is_empty()).then_some(headers),
                timeout: Some(startup.unwrap_or(DEFAULT_STARTUP).as_secs_f64()),
            }
        }
    };
    let decl = McpDeclaration {
        name: name.to_owned(),
        is_stateful: true,
        mcp_config,
        enable_tools: entry.enabled_tools,
        disable_tools: entry.disabled_tools,
        execution_timeout: positive_seconds(entry.timeout, "timeout")?.map(|d| d.as_secs_f64()),
        stream_progress: false,
    };
    decl.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(ServerSpec {
        decl,
        enabled: entry.enabled.unwrap_or(true),
        startup_timeout: startup.unwrap_or(DEFAULT_STARTUP),
    })
}

/// A timeout in seconds: positive, finite, at most a day.
fn positive_seconds(value: Option<f64>, key: &str) -> anyhow::Result<Option<Duration>> {
    let Some(secs) = value else {
        return Ok(None);
    };
    anyhow::ensure!(
        secs.is_finite() && secs > 0.0 && secs <= MAX_SECONDS,
        "`{key}` must be a number of seconds above 0 and at most {MAX_SECONDS}, not {secs}"
    );
    Ok(Some(Duration::from_secs_f64(secs)))
}

/// `--mcp NAME=COMMAND [ARGS...]` (split like a shell would, quotes
/// included; no variables are expanded) or `--mcp NAME=URL` for an
/// `http://` or `https://` server.
///
/// # Errors
/// No `=`, a bad name, an empty command, an unclosed quote.
pub(crate) fn parse_flag(text: &str) -> anyhow::Result<ServerSpec> {
    let (name, rest) = text
        .split_once('=')
        .context("expected NAME=COMMAND [ARGS...] or NAME=URL")?;
    let name = name.trim();
    let rest = rest.trim();
    let is_url = (rest.starts_with("http://") || rest.starts_with("https://"))
        && !rest.contains(char::is_whitespace);
    let mcp_config = if is_url {
        McpServerConfig::Http {
            url: rest.to_owned(),
            headers: None,
            timeout: Some(DEFAULT_STARTUP.as_secs_f64()),
        }
    } else {
        let mut words = split_words(rest).map_err(anyhow::Error::msg)?.into_iter();
        let command = words.next().context("the command is empty")?;
        let args: Vec<String> = words.collect();
        McpServerConfig::Stdio {
            command,
            args: (!args.is_empty()).then_some(args),
            env: None,
            cwd: None,
            encoding_error_handler: "strict".to_owned(),
        }
    };
    let decl = McpDeclaration {
        name: name.to_owned(),
        is_stateful: true,
        mcp_config,
        enable_tools: None,
        disable_tools: None,
        execution_timeout: None,
        stream_progress: false,
    };
    decl.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(ServerSpec {
        decl,
        enabled: true,
        startup_timeout: DEFAULT_STARTUP,
    })
}

/// Why `${...}` could not be replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// The variable is not set (and has no `:-` default).
    Unset(String),
    /// `${` without its `}`, or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    Malformed(String),
}

impl std::fmt::Display for ExpandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unset(var) => write!(f, "environment variable {var} is not set"),
            Self::Malformed(text) => write!(
                f,
                "`{text}` is not a variable reference: write ${{NAME}} or ${{NAME:-default}}"
            ),
        }
    }
}

impl std::error::Error for ExpandError {}

/// Replaces each `${NAME}` in `text` with `env(NAME)`, and `${NAME:-x}`
/// with `x` when NAME is unset or empty. A `$` not followed by `{` is
/// kept; nothing else is interpreted (no nesting in defaults).
///
/// # Errors
/// An unset variable without default; a malformed reference.
pub(crate) fn expand(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Malformed(rest[at..].to_owned()));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ExpandError::Malformed(format!("${{{inner}}}")));
        }
        match (env(name), default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(ExpandError::Unset(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Splits `text` into words as a POSIX shell would, without expansions:
/// blanks separate words; `'...'` is literal; `"..."` is literal except
/// that `\` escapes `"`, `\`, `$` and `` ` ``; a `\` outside quotes makes
/// the next character literal.
///
/// # Errors
/// An unclosed quote, or a trailing `\`.
pub(crate) fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("a single quote is not closed".to_owned()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("a double quote is not closed".to_owned()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("a double quote is not closed".to_owned()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("the text ends with a lone backslash".to_owned()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
#[path = "mcp_config_tests.rs"]
mod tests;
