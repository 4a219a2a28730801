//! The errors of the A2A client.

use oxiscope_message::{ErrorInfo, ErrorType};

use crate::wire::TaskState;

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an agent card cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// The card is not the JSON of an agent card.
    #[error("the agent card is not valid JSON of an A2A agent card: {source}")]
    Invalid {
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The card has no name (it becomes the agent's name).
    #[error("the agent card has no name")]
    MissingName,
    /// No interface speaks A2A 1.x over JSON-RPC.
    #[error(
        "the agent card offers no A2A 1.x JSONRPC interface (advertised: {advertised:?}); \
         this client speaks JSON-RPC with SSE streaming"
    )]
    NoSupportedInterface {
        /// Every advertised interface as `binding@version`.
        advertised: Vec<String>,
    },
    /// The chosen interface's URL is not an absolute `http(s)` URL.
    #[error("the agent card's interface URL {url:?} is not usable: {reason}")]
    InvalidUrl {
        /// The URL as written in the card.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The base URL given to resolve a card is not a URL.
    #[error("cannot resolve an agent card from {base_url:?}: {reason}")]
    InvalidBaseUrl {
        /// The base URL given.
        base_url: String,
        /// Why it was rejected.
        reason: String,
    },
}

/// An error of the A2A client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The agent card cannot be used.
    #[error(transparent)]
    Card(#[from] CardError),
    /// The HTTP exchange failed (connection, status, timeout, broken stream).
    #[error("A2A request failed: {0}")]
    Http(#[from] oxiscope_http::Error),
    /// The remote agent answered with a JSON-RPC error.
    #[error("the A2A agent answered error {code}: {message}")]
    Rpc {
        /// The JSON-RPC error code (A2A: -32001 task not found, -32002 not
        /// cancelable, -32004 unsupported operation, -32009 version ...).
        code: i64,
        /// The error message.
        message: String,
        /// The error's data, when sent.
        data: Option<serde_json::Value>,
    },
    /// The remote agent sent something that is not A2A 1.0 (bad JSON-RPC
    /// envelope, bad payload, a response with neither result nor error).
    #[error("the A2A agent sent an invalid response: {0}")]
    Protocol(String),
    /// A part this client cannot translate (a structured data part, an
    /// empty part).
    #[error("unsupported A2A part: {kind}; only text, raw bytes and URL parts are supported")]
    UnsupportedPart {
        /// What the part held.
        kind: String,
    },
    /// An input this client cannot send.
    #[error("invalid input for the A2A agent: {0}")]
    InvalidInput(String),
    /// The response stream ended while the remote task was still running:
    /// the connection was cut, or the server closed the stream early.
    #[error("the A2A stream ended while task {task_id:?} was {state}")]
    StreamCut {
        /// The task, when one was created.
        task_id: Option<String>,
        /// The last state seen.
        state: TaskState,
    },
    /// The last remote task is still running: sending a message would run it
    /// a second time. Cancel it ([`A2AAgent::cancel_task`](crate::A2AAgent::cancel_task))
    /// or wait for it ([`A2AAgent::refresh_task`](crate::A2AAgent::refresh_task)).
    #[error("the A2A task {task_id:?} is still {state}; cancel it or wait for it first")]
    TaskStillRunning {
        /// The task.
        task_id: String,
        /// Its state.
        state: TaskState,
    },
    /// The remote task failed or was rejected.
    #[error("the A2A task {task_id:?} ended {state}{}", message_suffix(.message))]
    TaskFailed {
        /// The task.
        task_id: Option<String>,
        /// `failed` or `rejected`.
        state: TaskState,
        /// The status message's text, when there was one.
        message: Option<String>,
    },
    /// The reply's task ended abnormally (a bug).
    #[error("internal error of the A2A client: {0}")]
    Internal(String),
}

fn message_suffix(message: &Option<String>) -> String {
    match message {
        Some(m) if !m.is_empty() => format!(": {m}"),
        _ => String::new(),
    }
}

impl Error {
    /// The A2A JSON-RPC code for a task the server does not know.
    pub const TASK_NOT_FOUND: i64 = -32001;

    /// The error as the [`ErrorInfo`] a `REPLY_END` carries.
    #[must_use]
    pub fn to_info(&self) -> ErrorInfo {
        let kind = match self {
            Self::Card(_) => ErrorType::Setup,
            Self::Http(e) => match e.status().map(|s| s.as_u16()) {
                Some(401) => ErrorType::Authentication,
                Some(403) => ErrorType::Permission,
                Some(429) => ErrorType::RateLimit,
                Some(400..=499) => ErrorType::InvalidRequest,
                Some(_) => ErrorType::Upstream,
                None => ErrorType::Connection,
            },
            Self::Rpc { .. }
            | Self::Protocol(_)
            | Self::StreamCut { .. }
            | Self::TaskFailed { .. } => ErrorType::Upstream,
            Self::Internal(_) => ErrorType::Internal,
            Self::UnsupportedPart { .. }
            | Self::InvalidInput(_)
            | Self::TaskStillRunning { .. } => ErrorType::InvalidRequest,
        };
        ErrorInfo::new(kind, self.to_string())
    }
}
