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
use std::sync::LazyLock;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::config::{
    ConfigError, ContextConfig, InjectionConfig, ModelConfig, ReActConfig, ReplyLimits,
};
use crate::context::tokens::{CounterSource, TokenLedger};
use crate::context::{CompressOutcome, CompressRequest};
use crate::error::AgentError;
use crate::middleware::{EventStream, Middleware, ReplyCall, ReplyNext};
use crate::state::AgentState;
use crate::stream::{ReplyItem, ReplyStream};
use oxiscope_model::TokenCounter;
use oxiscope_tool::Offloader;

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
/// reply waits for the first). The parts that do not change per session are
/// held once and shared by every agent built with them: the model, the
/// toolkit (its tool schemas), the system prompt (pass an `Arc<str>` to share
/// one), the execution backend and the default configs. Only the session's
/// [`AgentState`] is the agent's own.
#[derive(Debug, Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) name: String,
    pub(crate) system_prompt: Arc<str>,
    pub(crate) model: Arc<dyn DynChatModel>,
    pub(crate) fallback_model: Option<Arc<dyn DynChatModel>>,
    pub(crate) toolkit: Arc<Toolkit>,
    pub(crate) react: Arc<ReActConfig>,
    pub(crate) injection: Arc<InjectionConfig>,
    pub(crate) model_config: ModelConfig,
    pub(crate) reply_limits: ReplyLimits,
    pub(crate) context: Arc<ContextConfig>,
    /// The context window: the builder's, else the model's card, read on
    /// first use (see [`Inner::context_size`]).
    pub(crate) context_size: std::sync::OnceLock<u64>,
    pub(crate) offloader: Option<Arc<dyn Offloader>>,
    pub(crate) workdir: PathBuf,
    pub(crate) backend: Arc<dyn ExecBackend>,
    pub(crate) middlewares: Vec<Arc<dyn Middleware>>,
    pub(crate) state: Mutex<AgentState>,
    /// Token counts of the context; locked after `state`, never before.
    pub(crate) ledger: Mutex<TokenLedger>,
}

/// The context window assumed for a model without a known one.
pub const DEFAULT_CONTEXT_SIZE: u64 = 128_000;

impl Agent {
    /// Starts building an agent called `name` that thinks with `model`.
    pub fn builder(name: impl Into<String>, model: Arc<dyn DynChatModel>) -> AgentBuilder {
        AgentBuilder {
            name: name.into(),
            system_prompt: None,
            model,
            fallback_model: None,
            toolkit: None,
            react: None,
            injection: None,
            model_config: ModelConfig::default(),
            reply_limits: ReplyLimits::default(),
            context: None,
            context_size: None,
            offloader: None,
            counter: None,
            workdir: None,
            backend: None,
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
        let mut guard = self.inner.state.lock().await;
        *guard = state;
        self.inner.ledger.lock().await.clear();
    }

    /// The context window compression works against: the builder's
    /// [`AgentBuilder::context_size`], else the model's card, else
    /// [`DEFAULT_CONTEXT_SIZE`].
    #[must_use]
    pub fn context_size(&self) -> u64 {
        self.inner.context_size()
    }

    /// Compresses the context now if it is above the threshold (a no-op
    /// below it): with the agent's context config or `config` for this call,
    /// guided by `instructions`. Waits for a running reply to finish. Runs
    /// through the middlewares' `on_compress_context`.
    ///
    /// # Errors
    /// [`AgentError::Config`] for an invalid `config`;
    /// [`AgentError::Context`] when the system prompt alone is too large, or
    /// when no summary could be made and truncation is switched off (the
    /// context is then unchanged).
    pub async fn compress_context(
        &self,
        config: Option<ContextConfig>,
        instructions: Option<String>,
    ) -> Result<CompressOutcome, AgentError> {
        let config = match config {
            Some(c) => {
                c.validate()?;
                Arc::new(c)
            }
            None => Arc::clone(&self.inner.context),
        };
        let mut guard = self.inner.state.lock().await;
        let state = &mut *guard;
        let mut ledger = self.inner.ledger.lock().await;
        let system = self.inner.system_msg();
        let tools = self.inner.tools_for(state);
        let request = CompressRequest {
            ratio: config.trigger_ratio,
            config,
            instructions,
        };
        let cancel = CancellationToken::new();
        let session_id = state.session_id.clone();
        let outcome = crate::context::run_compression(
            &self.inner,
            &mut state.context,
            &mut state.summary,
            &mut ledger,
            &system,
            &tools,
            &session_id,
            cancel,
            request,
        )
        .await?;
        Ok(outcome)
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
        let core = ReplyCore {
            inner: Arc::clone(&self.inner),
            cancel: cancel.clone(),
        };
        let call = ReplyCall {
            input: input.into(),
            schema,
        };
        let events = ReplyNext::new(core).run(call);
        ReplyStream::new(events, cancel, Arc::clone(&self.inner))
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
        let stream = self.reply_stream_with(input, schema, CancellationToken::new());
        let mut items = std::pin::pin!(stream.with_message());
        let mut error = None;
        let mut msg = None;
        while let Some(item) = items.next().await {
            match item {
                ReplyItem::Event(AgentEvent::ReplyEnd(e)) => error = e.error,
                ReplyItem::Message(m) => msg = Some(m),
                ReplyItem::Event(_) => {}
            }
        }
        if msg.is_none() {
            // No reply ran (an interrupt with nothing parked): the last one.
            msg = self.inner.state.lock().await.reply_msg().cloned();
        }
        match (msg, error) {
            (_, Some(info)) => Err(AgentError::Failed(info)),
            (Some(m), None) => Ok(m),
            (None, None) => Err(AgentError::Internal(
                "the reply produced no message".to_owned(),
            )),
        }
    }
}

/// What starts the reply at the core of the `on_reply` onion.
pub(crate) struct ReplyCore {
    inner: Arc<Inner>,
    cancel: CancellationToken,
}

impl ReplyCore {
    /// The `on_reply` layer at `at`, outermost first.
    pub(crate) fn middleware(&self, at: usize) -> Option<Arc<dyn Middleware>> {
        self.inner.middlewares.get(at).cloned()
    }

    /// Starts the reply's loop and returns its events.
    pub(crate) fn start(self, call: ReplyCall) -> EventStream {
        let (tx, mut rx) = mpsc::channel(256);
        let inner = self.inner;
        let cancel = self.cancel;
        tokio::spawn(async move {
            crate::reply::run(inner, call.input, call.schema, tx, cancel).await;
        });
        Box::pin(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }
}

/// Builds an [`Agent`].
#[derive(Debug)]
pub struct AgentBuilder {
    name: String,
    system_prompt: Option<Arc<str>>,
    model: Arc<dyn DynChatModel>,
    fallback_model: Option<Arc<dyn DynChatModel>>,
    toolkit: Option<Arc<Toolkit>>,
    react: Option<ReActConfig>,
    injection: Option<InjectionConfig>,
    model_config: ModelConfig,
    reply_limits: ReplyLimits,
    context: Option<ContextConfig>,
    context_size: Option<u64>,
    offloader: Option<Arc<dyn Offloader>>,
    counter: Option<Arc<dyn TokenCounter>>,
    workdir: Option<PathBuf>,
    backend: Option<Arc<dyn ExecBackend>>,
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

    /// The directory tools work in (default: the current directory when the
    /// agent is built).
    #[must_use]
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    /// Where tools read, write and run processes (default: this machine).
    #[must_use]
    pub fn backend(mut self, backend: Arc<dyn ExecBackend>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The system prompt. An `Arc<str>` is shared, not copied: agents built
    /// from one prompt hold it once.
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<Arc<str>>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The tools (shared: one toolkit may serve many agents).
    #[must_use]
    pub fn toolkit(mut self, toolkit: Arc<Toolkit>) -> Self {
        self.toolkit = Some(toolkit);
        self
    }

    /// The loop's limits.
    #[must_use]
    pub fn react_config(mut self, config: ReActConfig) -> Self {
        self.react = Some(config);
        self
    }

    /// Runtime-state injection.
    #[must_use]
    pub fn injection_config(mut self, config: InjectionConfig) -> Self {
        self.injection = Some(config);
        self
    }

    /// Model-call retries.
    #[must_use]
    pub fn model_config(mut self, config: ModelConfig) -> Self {
        self.model_config = config;
        self
    }

    /// The most a model may write into one reply (default:
    /// [`ReplyLimits::default`], 4 MiB of text and 4 MiB of tool-call
    /// arguments).
    #[must_use]
    pub fn reply_limits(mut self, limits: ReplyLimits) -> Self {
        self.reply_limits = limits;
        self
    }

    /// Context management: compression, tool-result and image limits
    /// (checked by [`AgentBuilder::build`]).
    #[must_use]
    pub fn context_config(mut self, config: ContextConfig) -> Self {
        self.context = Some(config);
        self
    }

    /// The context window in tokens (default: the model's card, else
    /// [`DEFAULT_CONTEXT_SIZE`]).
    #[must_use]
    pub fn context_size(mut self, tokens: u64) -> Self {
        self.context_size = Some(tokens);
        self
    }

    /// Where compressed messages, cut tool results and dropped images are
    /// kept so the agent can read them back (default: nowhere, they are
    /// dropped).
    #[must_use]
    pub fn offloader(mut self, offloader: Arc<dyn Offloader>) -> Self {
        self.offloader = Some(offloader);
        self
    }

    /// The token counter (default: the model's tokenizer when it is known,
    /// else an estimate; see [`oxiscope_model::counter_for`]).
    #[must_use]
    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = Some(counter);
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
    ///
    /// # Errors
    /// [`AgentError::Config`] when the context config's ratios do not work
    /// (see [`ContextConfig::validate`]) or the injection template lacks
    /// `{runtime_state}`.
    pub fn build(self) -> Result<Agent, AgentError> {
        // Defaults are made once and shared by every agent of the process.
        static DEFAULT_CONTEXT: LazyLock<Arc<ContextConfig>> = LazyLock::new(Arc::default);
        static DEFAULT_INJECTION: LazyLock<Arc<InjectionConfig>> = LazyLock::new(Arc::default);
        static DEFAULT_REACT: LazyLock<Arc<ReActConfig>> = LazyLock::new(Arc::default);
        static EMPTY_TOOLKIT: LazyLock<Arc<Toolkit>> = LazyLock::new(Arc::default);
        static LOCAL_BACKEND: LazyLock<Arc<LocalBackend>> = LazyLock::new(Arc::default);
        static EMPTY_PROMPT: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from(""));
        let react = self
            .react
            .map_or_else(|| Arc::clone(&DEFAULT_REACT), Arc::new);
        let injection = self
            .injection
            .map_or_else(|| Arc::clone(&DEFAULT_INJECTION), Arc::new);
        let mut context = self
            .context
            .map_or_else(|| Arc::clone(&DEFAULT_CONTEXT), Arc::new);
        if let Some(buffer) = injection.context_buffer_ratio {
            // The deprecated field of the injection config wins.
            Arc::make_mut(&mut context).context_buffer_ratio = buffer;
        }
        context.validate()?;
        if !injection.template.contains("{runtime_state}") {
            return Err(ConfigError::Template.into());
        }
        // The model's card is read when the size is first needed: the
        // first read of the shipped cards parses them.
        let context_size = self
            .context_size
            .map(|n| std::sync::OnceLock::from(n.max(1)))
            .unwrap_or_default();
        let source = match self.counter {
            Some(c) => CounterSource::Custom(c),
            None => CounterSource::Builtin(self.model.model_name().to_owned()),
        };
        Ok(Agent {
            inner: Arc::new(Inner {
                name: self.name,
                system_prompt: self
                    .system_prompt
                    .unwrap_or_else(|| Arc::clone(&EMPTY_PROMPT)),
                model: self.model,
                fallback_model: self.fallback_model,
                toolkit: self.toolkit.unwrap_or_else(|| Arc::clone(&EMPTY_TOOLKIT)),
                react,
                injection,
                model_config: self.model_config,
                reply_limits: self.reply_limits,
                context,
                context_size,
                offloader: self.offloader,
                workdir: self.workdir.unwrap_or_else(|| {
                    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
                }),
                backend: self.backend.unwrap_or_else(|| {
                    let local: Arc<dyn ExecBackend> = LOCAL_BACKEND.clone();
                    local
                }),
                middlewares: self.middlewares,
                state: Mutex::new(self.state),
                ledger: Mutex::new(TokenLedger::new(source)),
            }),
        })
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
