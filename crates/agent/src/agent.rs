//! The agent and its builder.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_message::{
    AgentEvent, ExternalExecutionResultEvent, Msg, UserConfirmResultEvent, UserInterruptEvent,
};
use oxiscope_model::DynChatModel;
use oxiscope_tool::{ExecBackend, LocalBackend, Toolkit};
use serde_json::Value;
use std::path::PathBuf;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::config::{InjectionConfig, ModelConfig, ReActConfig};
use crate::error::AgentError;
use crate::middleware::Middleware;
use crate::state::AgentState;
use crate::stream::ReplyStream;

/// What a reply starts from.
#[derive(Debug, Clone)]
pub enum ReplyInput {
    /// New messages: a new reply.
    Msgs(Vec<Msg>),
    /// The user's answers to a confirmation request: the parked reply goes on.
    Confirm(UserConfirmResultEvent),
    /// Results of externally executed calls: the parked reply goes on.
    External(ExternalExecutionResultEvent),
    /// Interrupts the parked reply (a no-op when nothing is parked).
    Interrupt(UserInterruptEvent),
    /// No input: continue from the state (a new reply over the context).
    Continue,
}

impl From<Msg> for ReplyInput {
    fn from(m: Msg) -> Self {
        Self::Msgs(vec![m])
    }
}

impl From<Vec<Msg>> for ReplyInput {
    fn from(m: Vec<Msg>) -> Self {
        Self::Msgs(m)
    }
}

impl From<UserConfirmResultEvent> for ReplyInput {
    fn from(e: UserConfirmResultEvent) -> Self {
        Self::Confirm(e)
    }
}

impl From<ExternalExecutionResultEvent> for ReplyInput {
    fn from(e: ExternalExecutionResultEvent) -> Self {
        Self::External(e)
    }
}

impl From<UserInterruptEvent> for ReplyInput {
    fn from(e: UserInterruptEvent) -> Self {
        Self::Interrupt(e)
    }
}

impl TryFrom<AgentEvent> for ReplyInput {
    type Error = AgentError;

    fn try_from(e: AgentEvent) -> Result<Self, AgentError> {
        match e {
            AgentEvent::UserConfirmResult(e) => Ok(Self::Confirm(e)),
            AgentEvent::ExternalExecutionResult(e) => Ok(Self::External(e)),
            AgentEvent::UserInterrupt(e) => Ok(Self::Interrupt(e)),
            other => Err(AgentError::InvalidInput(format!(
                "{} is not an input event",
                other.event_type().as_str()
            ))),
        }
    }
}

/// An agent: a model, tools, a system prompt and a session state, driven by
/// the reasoning-acting loop.
///
/// One agent serves one session at a time; replies are serialised (a second
/// reply waits for the first). The toolkit and model can be shared by many
/// agents.
#[derive(Debug, Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) name: String,
    pub(crate) system_prompt: String,
    pub(crate) model: Arc<dyn DynChatModel>,
    pub(crate) fallback_model: Option<Arc<dyn DynChatModel>>,
    pub(crate) toolkit: Arc<Toolkit>,
    pub(crate) react: ReActConfig,
    pub(crate) injection: InjectionConfig,
    pub(crate) model_config: ModelConfig,
    pub(crate) workdir: PathBuf,
    pub(crate) backend: Arc<dyn ExecBackend>,
    pub(crate) middlewares: Vec<Arc<dyn Middleware>>,
    pub(crate) state: Mutex<AgentState>,
}

impl Agent {
    /// Starts building an agent called `name` that thinks with `model`.
    pub fn builder(name: impl Into<String>, model: Arc<dyn DynChatModel>) -> AgentBuilder {
        AgentBuilder {
            name: name.into(),
            system_prompt: String::new(),
            model,
            fallback_model: None,
            toolkit: Arc::new(Toolkit::new()),
            react: ReActConfig::default(),
            injection: InjectionConfig::default(),
            model_config: ModelConfig::default(),
            workdir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            backend: Arc::new(LocalBackend::new()),
            middlewares: Vec::new(),
            state: AgentState::default(),
        }
    }

    /// The agent's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// A copy of the state (waits for a running reply to finish).
    pub async fn state(&self) -> AgentState {
        self.inner.state.lock().await.clone()
    }

    /// Replaces the state (waits for a running reply to finish).
    pub async fn set_state(&self, state: AgentState) {
        *self.inner.state.lock().await = state;
    }

    /// Adds messages to the context without replying.
    ///
    /// # Errors
    /// [`AgentError::InvalidInput`] for a message that breaks its role's
    /// rules.
    pub async fn observe(&self, msgs: Vec<Msg>) -> Result<(), AgentError> {
        for m in &msgs {
            m.validate()
                .map_err(|e| AgentError::InvalidInput(e.to_string()))?;
        }
        self.inner.state.lock().await.context.extend(msgs);
        Ok(())
    }

    /// Runs a reply and streams its events; see [`ReplyStream`] for the
    /// contract.
    pub fn reply_stream(&self, input: impl Into<ReplyInput>) -> ReplyStream {
        self.reply_stream_with(input, None, CancellationToken::new())
    }

    /// Like [`Agent::reply_stream`], requiring a structured output that
    /// follows the JSON `schema`, and interrupted when `cancel` fires.
    pub fn reply_stream_with(
        &self,
        input: impl Into<ReplyInput>,
        schema: Option<Value>,
        cancel: CancellationToken,
    ) -> ReplyStream {
        let (tx, rx) = mpsc::channel(256);
        let inner = Arc::clone(&self.inner);
        let input = input.into();
        let token = cancel.clone();
        tokio::spawn(async move {
            crate::reply::run(inner, input, schema, tx, token).await;
        });
        ReplyStream::new(rx, cancel)
    }

    /// Runs a reply to its end (or pause) and returns the reply message:
    /// finished (`finished_reason` set) or parked (`finished_reason` unset,
    /// with tool calls waiting).
    ///
    /// # Errors
    /// The reply's error when it ended with one; [`AgentError::Internal`]
    /// when the reply produced no message.
    pub async fn reply(&self, input: impl Into<ReplyInput>) -> Result<Msg, AgentError> {
        self.reply_with(input, None).await
    }

    /// Like [`Agent::reply`], requiring a structured output that follows
    /// the JSON `schema`; the reply message carries it in
    /// `structured_output`.
    ///
    /// # Errors
    /// As [`Agent::reply`].
    pub async fn reply_with(
        &self,
        input: impl Into<ReplyInput>,
        schema: Option<Value>,
    ) -> Result<Msg, AgentError> {
        let mut stream = self.reply_stream_with(input, schema, CancellationToken::new());
        let mut reply_id = None;
        let mut error = None;
        while let Some(event) = stream.next().await {
            match event {
                AgentEvent::ReplyStart(e) => reply_id = Some(e.reply_id),
                AgentEvent::ReplyEnd(e) => error = e.error,
                _ => {}
            }
        }
        let state = self.inner.state.lock().await;
        let msg = reply_id
            .and_then(|id| state.context.iter().rev().find(|m| m.id == id).cloned())
            .or_else(|| state.reply_msg().cloned());
        match (msg, error) {
            (_, Some(info)) => Err(AgentError::Failed(info)),
            (Some(m), None) => Ok(m),
            (None, None) => Err(AgentError::Internal(
                "the reply produced no message".to_owned(),
            )),
        }
    }
}

/// Builds an [`Agent`].
#[derive(Debug)]
pub struct AgentBuilder {
    name: String,
    system_prompt: String,
    model: Arc<dyn DynChatModel>,
    fallback_model: Option<Arc<dyn DynChatModel>>,
    toolkit: Arc<Toolkit>,
    react: ReActConfig,
    injection: InjectionConfig,
    model_config: ModelConfig,
    workdir: PathBuf,
    backend: Arc<dyn ExecBackend>,
    middlewares: Vec<Arc<dyn Middleware>>,
    state: AgentState,
}

impl AgentBuilder {
    /// Adds a middleware; the first added is the outermost layer.
    #[must_use]
    pub fn middleware(mut self, middleware: impl Middleware + 'static) -> Self {
        self.middlewares.push(Arc::new(middleware));
        self
    }

    /// The directory tools work in (default: the current directory).
    #[must_use]
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = dir.into();
        self
    }

    /// Where tools read, write and run processes (default: this machine).
    #[must_use]
    pub fn backend(mut self, backend: Arc<dyn ExecBackend>) -> Self {
        self.backend = backend;
        self
    }

    /// The system prompt.
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// The tools (shared: one toolkit may serve many agents).
    #[must_use]
    pub fn toolkit(mut self, toolkit: Arc<Toolkit>) -> Self {
        self.toolkit = toolkit;
        self
    }

    /// The loop's limits.
    #[must_use]
    pub fn react_config(mut self, config: ReActConfig) -> Self {
        self.react = config;
        self
    }

    /// Runtime-state injection.
    #[must_use]
    pub fn injection_config(mut self, config: InjectionConfig) -> Self {
        self.injection = config;
        self
    }

    /// Model-call retries.
    #[must_use]
    pub fn model_config(mut self, config: ModelConfig) -> Self {
        self.model_config = config;
        self
    }

    /// A model to try when the main model's call fails.
    #[must_use]
    pub fn fallback_model(mut self, model: Arc<dyn DynChatModel>) -> Self {
        self.fallback_model = Some(model);
        self
    }

    /// The state to start from (a saved session).
    #[must_use]
    pub fn state(mut self, state: AgentState) -> Self {
        self.state = state;
        self
    }

    /// The agent.
    #[must_use]
    pub fn build(self) -> Agent {
        Agent {
            inner: Arc::new(Inner {
                name: self.name,
                system_prompt: self.system_prompt,
                model: self.model,
                fallback_model: self.fallback_model,
                toolkit: self.toolkit,
                react: self.react,
                injection: self.injection,
                model_config: self.model_config,
                workdir: self.workdir,
                backend: self.backend,
                middlewares: self.middlewares,
                state: Mutex::new(self.state),
            }),
        }
    }
}
