//! How to reach a server ([`McpConfig`]) and how patiently
//! ([`Timeouts`], [`RestartPolicy`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Where an MCP server lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpConfig {
    /// A local process speaking MCP over its stdin / stdout.
    Stdio(StdioConfig),
    /// A remote server speaking MCP over streamable HTTP.
    Http(HttpConfig),
}

impl McpConfig {
    /// A stdio server started as `command args...`.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self::Stdio(StdioConfig {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
            clear_env: false,
            data_fds: Vec::new(),
        })
    }

    /// Starts the process (stdio; ignored for HTTP) with no variable of
    /// this process's environment: only those added with
    /// [`with_env`](Self::with_env).
    #[must_use]
    pub fn with_clean_env(mut self) -> Self {
        if let Self::Stdio(c) = &mut self {
            c.clear_env = true;
        }
        self
    }

    /// Gives the process (stdio; ignored for HTTP) a read-only in-memory
    /// file holding `data` at descriptor `fd` (3 or more): a launcher's
    /// options kept off its command line.
    #[must_use]
    pub fn with_data_fd(mut self, fd: i32, data: Vec<u8>) -> Self {
        if let Self::Stdio(c) = &mut self {
            c.data_fds.push((fd, data));
        }
        self
    }

    /// A streamable-HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Self::Http(HttpConfig {
            url: url.into(),
            headers: BTreeMap::new(),
        })
    }

    /// Adds an environment variable (stdio; ignored for HTTP).
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Self::Stdio(c) = &mut self {
            c.env.insert(key.into(), value.into());
        }
        self
    }

    /// Sets the working directory (stdio; ignored for HTTP).
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        if let Self::Stdio(c) = &mut self {
            c.cwd = Some(cwd.into());
        }
        self
    }

    /// Adds a static header (HTTP; ignored for stdio).
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Self::Http(c) = &mut self {
            c.headers.insert(name.into(), value.into());
        }
        self
    }
}

/// A server started as a child process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioConfig {
    /// The program (looked up on `PATH` when it has no slash).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables (the parent's environment is
    /// inherited unless `clear_env`).
    pub env: BTreeMap<String, String>,
    /// The working directory; the parent's when `None`.
    pub cwd: Option<PathBuf>,
    /// Whether the process starts without the parent's environment.
    pub clear_env: bool,
    /// Files given to the process at these descriptor numbers, each
    /// holding the bytes (made anew at every start).
    pub data_fds: Vec<(i32, Vec<u8>)>,
}

/// A server reached over streamable HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    pub url: String,
    /// Headers sent with every request (runtime headers override them).
    pub headers: BTreeMap<String, String>,
}

/// How long to wait for a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Spawning / connecting plus the `initialize` handshake.
    pub startup: Duration,
    /// One `tools/call`.
    pub call: Duration,
    /// One `tools/list` (all pages).
    pub list: Duration,
    /// Establishing a TCP connection (HTTP).
    pub connect: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            startup: Duration::from_secs(30),
            call: Duration::from_secs(120),
            list: Duration::from_secs(30),
            connect: Duration::from_secs(10),
        }
    }
}

/// How a stateful client restarts a server it found dead.
///
/// On the next use after a death the client tries up to `max_attempts`
/// starts, sleeping `initial_backoff`, then twice as long each time (at
/// most `max_backoff`), between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Starts tried per use; at least one start is always tried.
    pub max_attempts: u32,
    /// The pause after the first failed start.
    pub initial_backoff: Duration,
    /// The longest pause.
    pub max_backoff: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl RestartPolicy {
    /// One start per use, no retry.
    #[must_use]
    pub fn once() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The pause after failed attempt number `attempt` (1-based).
    #[must_use]
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// Which of a server's tools are exposed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolFilter {
    pub(crate) enable: Option<Vec<String>>,
    pub(crate) disable: Vec<String>,
}

impl ToolFilter {
    pub(crate) fn allows(&self, tool: &str) -> bool {
        let enabled = self
            .enable
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == tool));
        enabled && !self.disable.iter().any(|n| n == tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RestartPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
        };
        let pauses: Vec<_> = (1..=4).map(|a| policy.backoff(a).as_millis()).collect();
        assert_eq!(pauses, [100, 200, 350, 350]);
    }

    #[test]
    fn filter_applies_enable_then_disable() {
        let filter = ToolFilter {
            enable: Some(vec!["a".into(), "b".into()]),
            disable: vec!["b".into()],
        };
        assert!(filter.allows("a"));
        assert!(!filter.allows("b"));
        assert!(!filter.allows("c"));
        assert!(ToolFilter::default().allows("anything"));
    }
}
