//! The channel trait: one platform connection, self-described by its
//! [`ChannelType`].

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::inbound::Inbound;

/// What a channel type tells the form that creates one (AgentScope's
/// `ChannelTypeSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ChannelTypeSchema")]
pub struct ChannelTypeInfo {
    /// The unique type id (`telegram`).
    pub channel_type: String,
    /// The name shown in the management UI.
    pub display_name: String,
    /// A one-line description.
    pub description: String,
    /// A brand icon URL, or empty.
    pub icon_url: String,
    /// JSON Schema of the secret credentials.
    pub credentials_schema: Value,
    /// JSON Schema of the non-secret config.
    pub config_schema: Value,
    /// The credential field that identifies the bot (one connection per
    /// bot).
    pub platform_bot_id_field: String,
    /// Whether credentials can be handed over by QR code.
    pub supports_credential_binding: bool,
}

/// What a platform can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Markdown renders.
    pub markdown: bool,
    /// Images can be sent.
    pub image: bool,
    /// Files can be sent.
    pub file: bool,
    /// Buttons or cards can ask for a decision.
    pub interactive: bool,
    /// The most characters one message may hold.
    pub max_message_length: usize,
}

/// A channel's connection state (AgentScope's `ChannelStatus`): `stopped`
/// → `connecting` → `connected`; `retrying` after a drop; `failed` when
/// the channel gave up until it is edited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChannelStatus {
    /// `stopped`, `connecting`, `connected`, `retrying` or `failed`.
    pub state: String,
    /// The last error, or empty.
    pub last_error: String,
}

impl Default for ChannelStatus {
    fn default() -> Self {
        Self {
            state: "stopped".into(),
            last_error: String::new(),
        }
    }
}

/// A channel's status, shared between its connection task and readers.
#[derive(Debug, Clone, Default)]
pub struct StatusCell(Arc<Mutex<ChannelStatus>>);

impl StatusCell {
    /// The status now.
    #[must_use]
    pub fn get(&self) -> ChannelStatus {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets the state, keeping the last error.
    pub fn set(&self, state: &str) {
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.clone_into(&mut s.state);
        if state == "connected" {
            s.last_error.clear();
        }
    }

    /// Sets the state and the error that caused it.
    pub fn fail(&self, state: &str, error: &str) {
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.clone_into(&mut s.state);
        error.clone_into(&mut s.last_error);
    }
}

/// What the runtime did with an inbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handled {
    /// It reached a session (started a run, or waits in its inbox).
    Submitted {
        /// The session.
        session_id: String,
    },
    /// It answered a parked confirmation.
    Answered {
        /// The session.
        session_id: String,
    },
    /// Taken before (a redelivery, or another replica took it).
    Duplicate,
    /// Not for the bot (a group message without a mention under
    /// `only_at_reply`).
    Ignored,
    /// It could not be handled; the chat was told why when possible.
    Refused(String),
}

/// Where a channel hands its normalised messages.
pub trait InboundSink: Send + Sync {
    /// Takes one message: deduplicates, routes and submits it. A channel
    /// acknowledges the message to its platform only after this returns
    /// (a `Refused` message is not delivered again).
    fn handle(&self, message: Inbound) -> BoxFuture<'_, Handled>;
}

/// One platform connection of one channel.
///
/// A channel keeps its connection in [`Channel::run`] (reconnecting with
/// backoff, honouring the platform's rate limits), hands every message to
/// the sink, and sends what the runtime gives it with [`Channel::send`].
pub trait Channel: Send + Sync + Debug {
    /// Connects and receives until `stop` is cancelled; never returns
    /// early on a platform error (it retries, or parks as `failed` on
    /// refused credentials until stopped).
    fn run<'a>(&'a self, sink: &'a dyn InboundSink, stop: CancellationToken) -> BoxFuture<'a, ()>;
    /// Sends one message (at most [`Capabilities::max_message_length`]
    /// characters) to a chat, retrying rate limits and server errors a few
    /// times.
    ///
    /// # Errors
    /// The platform's refusal, or the last failure after the retries.
    fn send<'a>(&'a self, chat_id: &'a str, text: &'a str) -> BoxFuture<'a, Result<()>>;
    /// The connection's live status.
    fn status(&self) -> ChannelStatus;
    /// What the platform can show.
    fn capabilities(&self) -> Capabilities;
    /// Takes one delivery the platform pushed over HTTP (webhook mode),
    /// checking the secret the platform sent with it (`secret`: the header
    /// the platform uses for it), and hands its message to `sink`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] when the channel takes no webhooks, or
    /// for a missing or wrong secret or a body that is not the platform's.
    fn webhook<'a>(
        &'a self,
        sink: &'a dyn InboundSink,
        secret: Option<&'a str>,
        body: &'a [u8],
    ) -> BoxFuture<'a, Result<Handled>> {
        let _ = (sink, secret, body);
        Box::pin(async {
            Err(crate::Error::Invalid(
                "this channel takes no webhooks".into(),
            ))
        })
    }
}

/// The credentials and config of one channel, checked against its type's
/// schemas by [`ChannelType::open`].
#[derive(Debug, Clone)]
pub struct ChannelSpec {
    /// The channel id.
    pub id: String,
    /// The credentials (unsealed).
    pub credentials: Value,
    /// The platform config.
    pub config: Value,
}

/// A platform: describes its forms and opens channels. A custom platform
/// is one implementation registered in the [`Registry`](crate::Registry)
/// when the server is built.
pub trait ChannelType: Send + Sync + Debug {
    /// The type's description and forms.
    fn info(&self) -> ChannelTypeInfo;
    /// The bot's platform id from credentials (the value of
    /// [`ChannelTypeInfo::platform_bot_id_field`], or what identifies the
    /// bot without revealing a secret).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for credentials that do not fit.
    fn platform_bot_id(&self, credentials: &Value) -> Result<String>;
    /// A channel over `spec`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for credentials or config that do not fit.
    fn open(&self, spec: ChannelSpec) -> Result<Arc<dyn Channel>>;
}
