//! The A2A agent and its builder.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use oxiscope_http::HttpClient;
use oxiscope_message::Msg;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::card::AgentCard;
use crate::client::RpcClient;
use crate::error::Result;
use crate::parts::to_parts;
use crate::state::A2AAgentState;
use crate::stream::A2AReplyStream;
use crate::wire::Task;

/// How long an interrupted reply waits for `CancelTask` by default.
const DEFAULT_CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// What a reply sends: messages (each block becomes a part of one A2A
/// message, after the observed ones).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct A2AInput(pub Vec<Msg>);

impl From<Msg> for A2AInput {
    fn from(m: Msg) -> Self {
        Self(vec![m])
    }
}

impl From<Vec<Msg>> for A2AInput {
    fn from(m: Vec<Msg>) -> Self {
        Self(m)
    }
}

impl From<Option<Msg>> for A2AInput {
    fn from(m: Option<Msg>) -> Self {
        Self(m.into_iter().collect())
    }
}

/// A local proxy for a remote agent behind the A2A protocol (1.0, JSON-RPC
/// binding). It holds no logic of its own: [`A2AAgent::reply_stream`] sends
/// the input to the remote agent and streams its answer back as
/// [`AgentEvent`](oxiscope_message::AgentEvent)s, so a caller can use it
/// where it uses an `Agent`.
///
/// | `Agent` capability | here |
/// |---|---|
/// | `reply` / `reply_stream` | sends the input, streams the translated answer |
/// | `observe` | buffers messages, sent with the next reply |
/// | `compress_context` | a no-op: the remote side keeps the context |
/// | model, tools, middleware, permissions, structured output | decided by the remote side |
/// | HITL pauses | none: a remote task waiting for input is an ordinary reply |
///
/// Replies are serialised; every reply carries the remote `context_id`, so
/// the conversation continues remotely. The state ([`A2AAgentState`]) can
/// be saved and given back to resume it.
#[derive(Debug, Clone)]
pub struct A2AAgent {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) name: String,
    pub(crate) card: AgentCard,
    pub(crate) rpc: RpcClient,
    pub(crate) state: Mutex<A2AAgentState>,
    pub(crate) observed: std::sync::Mutex<Vec<Msg>>,
    pub(crate) cancel_timeout: Duration,
}

impl Inner {
    /// Takes the observed messages.
    pub(crate) fn take_observed(&self) -> Vec<Msg> {
        std::mem::take(&mut *self.observed.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts observed messages back in front (the reply did not send them).
    pub(crate) fn restore_observed(&self, mut msgs: Vec<Msg>) {
        let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
        msgs.append(&mut observed);
        *observed = msgs;
    }
}

impl A2AAgent {
    /// An agent for `card` over the shared HTTP client.
    ///
    /// # Errors
    /// [`CardError`](crate::CardError) when the card offers no usable
    /// endpoint; [`Error::Http`](crate::Error::Http) when the HTTP client
    /// cannot be built.
    pub fn new(card: AgentCard) -> Result<Self> {
        Self::builder(card).build()
    }

    /// A builder for an agent for `card`.
    pub fn builder(card: AgentCard) -> A2AAgentBuilder {
        A2AAgentBuilder {
            card,
            http: None,
            state: None,
            cancel_timeout: DEFAULT_CANCEL_TIMEOUT,
        }
    }

    /// Fetches the card of the agent at `base_url` and builds an agent for it.
    ///
    /// # Errors
    /// As [`AgentCard::resolve`] and [`A2AAgent::new`].
    pub async fn connect(base_url: &str) -> Result<Self> {
        let http = HttpClient::shared()?;
        let card = AgentCard::resolve(&http, base_url).await?;
        Self::builder(card).http(http).build()
    }

    /// The remote agent's name (from its card).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The remote agent's card.
    #[must_use]
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The conversation state (waits for a running reply to end).
    pub async fn state(&self) -> A2AAgentState {
        self.inner.state.lock().await.clone()
    }

    /// Replaces the conversation state (waits for a running reply to end).
    pub async fn set_state(&self, state: A2AAgentState) {
        *self.inner.state.lock().await = state;
    }

    /// Buffers messages; they are sent before the input of the next reply.
    ///
    /// # Errors
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) for a message
    /// holding blocks A2A cannot carry (only text and data blocks).
    pub fn observe(&self, msgs: Vec<Msg>) -> Result<()> {
        for m in &msgs {
            if !m.content.is_empty() {
                to_parts(std::slice::from_ref(m))?;
            }
        }
        self.inner
            .observed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(msgs);
        Ok(())
    }

    /// A no-op: the remote service keeps the context.
    pub async fn compress_context(&self) {}

    /// Sends the input and streams the remote answer; see [`A2AReplyStream`]
    /// for the contract. Must be called within a tokio runtime (the reply
    /// runs in a spawned task).
    pub fn reply_stream(&self, input: impl Into<A2AInput>) -> A2AReplyStream {
        self.reply_stream_with(input, CancellationToken::new())
    }

    /// Like [`A2AAgent::reply_stream`], interrupted when `cancel` fires
    /// (dropping the stream cancels `cancel` too).
    pub fn reply_stream_with(
        &self,
        input: impl Into<A2AInput>,
        cancel: CancellationToken,
    ) -> A2AReplyStream {
        self.start(Ok(input.into().0), cancel)
    }

    /// Starts a reply; an `Err` input ends it at once with that error.
    pub(crate) fn start(
        &self,
        input: Result<Vec<Msg>>,
        cancel: CancellationToken,
    ) -> A2AReplyStream {
        let (tx, rx) = mpsc::channel(64);
        let run = crate::run::run(Arc::clone(&self.inner), input, cancel.clone(), tx);
        A2AReplyStream::new(rx, cancel, tokio::spawn(run))
    }

    /// Sends the input and returns the reply message once the remote answer
    /// ended.
    ///
    /// # Errors
    /// The [`Error`](crate::Error) that ended the reply with an error
    /// (including [`Error::TaskFailed`](crate::Error::TaskFailed) for a
    /// failed or rejected remote task).
    pub async fn reply(&self, input: impl Into<A2AInput>) -> Result<Msg> {
        self.reply_stream(input).message().await
    }

    /// Asks the remote agent to cancel the kept task (`CancelTask`) and
    /// records its new state. `None` when no task is kept.
    ///
    /// # Errors
    /// The request's error (for instance [`Error::Rpc`](crate::Error::Rpc)
    /// for a task that cannot be cancelled).
    pub async fn cancel_task(&self) -> Result<Option<Task>> {
        let mut state = self.inner.state.lock().await;
        let Some(task_id) = state.task_id.clone() else {
            return Ok(None);
        };
        let task = self.inner.rpc.cancel_task(&task_id).await?;
        state.track(Some(task_id), Some(task.status.state));
        Ok(Some(task))
    }

    /// Fetches the kept task (`GetTask`) and records its state. `None` when
    /// no task is kept.
    ///
    /// # Errors
    /// The request's error.
    pub async fn refresh_task(&self) -> Result<Option<Task>> {
        let mut state = self.inner.state.lock().await;
        let Some(task_id) = state.task_id.clone() else {
            return Ok(None);
        };
        let task = self.inner.rpc.get_task(&task_id).await?;
        state.track(Some(task_id), Some(task.status.state));
        Ok(Some(task))
    }
}

/// Builds an [`A2AAgent`].
#[derive(Debug)]
pub struct A2AAgentBuilder {
    card: AgentCard,
    http: Option<HttpClient>,
    state: Option<A2AAgentState>,
    cancel_timeout: Duration,
}

impl A2AAgentBuilder {
    /// The HTTP client to use (timeouts, retries, default headers such as
    /// credentials); the shared one by default.
    #[must_use]
    pub fn http(mut self, http: HttpClient) -> Self {
        self.http = Some(http);
        self
    }

    /// Resumes an earlier conversation.
    #[must_use]
    pub fn state(mut self, state: A2AAgentState) -> Self {
        self.state = Some(state);
        self
    }

    /// How long an interrupted reply waits for the remote `CancelTask`.
    #[must_use]
    pub fn cancel_timeout(mut self, timeout: Duration) -> Self {
        self.cancel_timeout = timeout;
        self
    }

    /// Builds the agent.
    ///
    /// # Errors
    /// [`CardError`](crate::CardError) when the card offers no usable
    /// endpoint; [`Error::Http`](crate::Error::Http) when the shared HTTP
    /// client cannot be built.
    pub fn build(self) -> Result<A2AAgent> {
        let endpoint = self.card.endpoint()?;
        let http = match self.http {
            Some(h) => h,
            None => HttpClient::shared()?,
        };
        Ok(A2AAgent {
            inner: Arc::new(Inner {
                name: self.card.name.clone(),
                rpc: RpcClient::new(http, endpoint),
                card: self.card,
                state: Mutex::new(self.state.unwrap_or_default()),
                observed: std::sync::Mutex::default(),
                cancel_timeout: self.cancel_timeout,
            }),
        })
    }
}
