//! Errors of the MCP client.
//!
//! A failing MCP tool call is not a Rust error for the agent: [`McpTool`]
//! turns every [`Error`] into an error tool result the model reads. The
//! typed errors are what [`McpClient`]'s own methods return.
//!
//! [`McpTool`]: crate::McpTool
//! [`McpClient`]: crate::McpClient

use std::time::Duration;

/// What can go wrong while talking to an MCP server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server process could not be started.
    #[error("MCP server `{server}`: cannot start `{command}`: {source}")]
    Spawn {
        /// The client's name.
        server: String,
        /// The command that failed.
        command: String,
        /// Why the operating system refused.
        #[source]
        source: std::io::Error,
    },
    /// The server did not finish the `initialize` handshake in time.
    #[error("MCP server `{server}` did not answer `initialize` within {after:?}")]
    StartupTimeout {
        /// The client's name.
        server: String,
        /// The startup timeout that elapsed.
        after: Duration,
    },
    /// The handshake failed: the server exited, sent garbage or refused.
    #[error("MCP server `{server}` failed to initialize: {reason}")]
    Initialize {
        /// The client's name.
        server: String,
        /// What went wrong, with the tail of the server's stderr if any.
        reason: String,
    },
    /// A request got no answer in time.
    #[error("MCP server `{server}`: `{method}` got no answer within {after:?}")]
    RequestTimeout {
        /// The client's name.
        server: String,
        /// The MCP method, e.g. `tools/call`.
        method: String,
        /// The timeout that elapsed.
        after: Duration,
    },
    /// The server answered a request with an error.
    #[error("MCP server `{server}`: `{method}` failed: {reason}")]
    Request {
        /// The client's name.
        server: String,
        /// The MCP method, e.g. `tools/list`.
        method: String,
        /// The server's error message.
        reason: String,
    },
    /// The connection broke (the process died, the HTTP server went away).
    #[error("MCP server `{server}` is disconnected: {reason}")]
    Disconnected {
        /// The client's name.
        server: String,
        /// What the transport reported.
        reason: String,
    },
    /// A stateful client was closed with `close()`; call `connect()` again.
    #[error("MCP client `{server}` is closed; call connect() to open it again")]
    Closed {
        /// The client's name.
        server: String,
    },
    /// The server could not be (re)started within the restart policy.
    #[error("MCP server `{server}` could not be started after {attempts} attempt(s): {last}")]
    RestartsExhausted {
        /// The client's name.
        server: String,
        /// How many starts were tried.
        attempts: u32,
        /// The error of the last attempt.
        #[source]
        last: Box<Error>,
    },
    /// The call was cancelled by the caller.
    #[error("MCP call to `{server}` was cancelled")]
    Cancelled {
        /// The client's name.
        server: String,
    },
    /// A stdio server needs a process, so it cannot be stateless.
    #[error("MCP client `{server}`: a stdio server can only be stateful")]
    StatelessStdio {
        /// The client's name.
        server: String,
    },
    /// Runtime headers exist only on streamable-HTTP clients.
    #[error("MCP client `{server}` is not a streamable-HTTP client; it has no headers")]
    NotHttp {
        /// The client's name.
        server: String,
    },
    /// A header the HTTP layer owns (`host`, `connection`, ...) was given.
    #[error("header `{name}` is managed by the HTTP layer and cannot be set")]
    ForbiddenHeader {
        /// The rejected header name.
        name: String,
    },
    /// A header name or value is not valid HTTP.
    #[error("invalid header `{name}`: {reason}")]
    InvalidHeader {
        /// The header name as given.
        name: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for MCP server `{server}`: {reason}")]
    HttpClient {
        /// The client's name.
        server: String,
        /// Why building failed.
        reason: String,
    },
    /// An MCP tool could not be added to a toolkit.
    #[error("cannot register the tools of MCP server `{server}`: {source}")]
    Toolkit {
        /// The client's name.
        server: String,
        /// The toolkit's error.
        #[source]
        source: oxiscope_tool::Error,
    },
}

impl Error {
    /// Whether the error means the server is gone (dead process, broken
    /// connection, failed start), so a stateful client restarts it on the
    /// next use.
    #[must_use]
    pub fn is_connection_failure(&self) -> bool {
        matches!(
            self,
            Self::Spawn { .. }
                | Self::StartupTimeout { .. }
                | Self::Initialize { .. }
                | Self::Disconnected { .. }
                | Self::RestartsExhausted { .. }
        )
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
