//! Agent middleware: hooks around the loop's key steps.
//!
//! | hook | kind | runs |
//! |---|---|---|
//! | [`on_reply`](Middleware::on_reply) | onion, first registered outermost | around a whole reply; may rewrite the input and the event stream on its way to the consumer |
//! | [`on_system_prompt`](Middleware::on_system_prompt) | transformer, left to right | every time the prompt is assembled |
//! | [`list_tools`](Middleware::list_tools) | transformer, left to right | when a reply starts or resumes and before every reasoning step; may add tools (offered and run) and take tools away |
//! | [`on_prepare_reasoning`](Middleware::on_prepare_reasoning) | in order | before every reasoning step (async); may set the tool choice, add hints for the model ([`PrepHint`](crate::PrepHint): source, streamed or not, recorded or for this request only) and update its state in `middle_context` |
//! | [`on_reasoning`](Middleware::on_reasoning) | onion, first registered outermost | around every reasoning step (model call with its retries and fallback, and the decoding of its answer into events); may rewrite the tool choice and the step's events |
//! | [`on_model_call`](Middleware::on_model_call) | onion, first registered outermost | around every model call; may rewrite the request or wrap the stream |
//! | [`on_check_permission`](Middleware::on_check_permission) | chain, in order | after the permission engine decided a tool call |
//! | [`on_acting`](Middleware::on_acting) | onion, first registered outermost | around every allowed tool call; may rewrite the input or wrap the chunk stream |
//! | [`on_compress_context`](Middleware::on_compress_context) | onion, first registered outermost | around every compression check (before each reasoning step, by hand, by the `CompressContext` tool); may rewrite the config or skip it |
//! | [`on_reply_end`](Middleware::on_reply_end) | veto, in order | before a reply ends as completed; the one way to ask for another round |
//! | [`on_event`](Middleware::on_event) | observer, in order | for every event the running reply records; may update its state in `middle_context` |
//!
//! Per-tool hooks around a tool's execution are the toolkit's
//! [`ToolMiddleware`](oxiscope_tool::ToolMiddleware).

use std::borrow::Cow;
use std::fmt::Debug;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use oxiscope_message::{AgentEvent, Msg, ToolCallBlock};
use oxiscope_model::{ChatRequest, ChatStream, DynChatModel, ModelError, ToolChoice, ToolSchema};
use oxiscope_permission::{PermissionContext, PermissionDecision};
use oxiscope_tool::{ToolCallContext, ToolStream, Toolkit};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::{CompressNext, CompressOutcome, CompressRequest};
use crate::reasoning::{PrepHint, StepStream};
use crate::tool_list::ToolList;

/// A stream of events, owned (`'static`), as the event-rewriting hooks pass
/// them along. A middleware that needs its own state inside the stream
/// keeps it behind an `Arc` and clones it in.
pub type EventStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = AgentEvent> + Send>>;

/// A reply about to run, as `on_reply` middleware sees it.
#[derive(Debug, Clone)]
pub struct ReplyCall {
    /// What the reply starts from.
    pub input: crate::agent::ReplyInput,
    /// The JSON schema of a required structured output.
    pub schema: Option<Value>,
}

/// The rest of the reply onion: the inner middlewares, then the reply
/// itself.
pub struct ReplyNext {
    at: usize,
    core: crate::agent::ReplyCore,
}

impl std::fmt::Debug for ReplyNext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyNext")
            .field("layer", &self.at)
            .finish_non_exhaustive()
    }
}

impl ReplyNext {
    pub(crate) fn new(core: crate::agent::ReplyCore) -> Self {
        Self { at: 0, core }
    }

    /// Runs the inner layers with `call` and returns their events. The
    /// reply starts when the innermost layer is reached.
    pub fn run(self, call: ReplyCall) -> EventStream {
        match self.core.middleware(self.at) {
            Some(layer) => layer.on_reply(
                call,
                ReplyNext {
                    at: self.at + 1,
                    core: self.core,
                },
            ),
            None => self.core.start(call),
        }
    }
}

/// A reasoning step about to run, as middleware sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReasoningCall {
    /// The tool choice of the model call (`None`: the model decides).
    pub tool_choice: Option<ToolChoice>,
}

/// The core of a reasoning step: the model call, decoded into events.
pub(crate) trait ReasoningCore: Send + Sync {
    fn run(&self, call: ReasoningCall) -> BoxFuture<'_, StepStream>;
}

/// The rest of the reasoning onion: the inner middlewares, then the model
/// call.
#[derive(Clone, Copy)]
pub struct ReasoningNext<'a> {
    rest: &'a [Arc<dyn Middleware>],
    core: &'a dyn ReasoningCore,
}

impl std::fmt::Debug for ReasoningNext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReasoningNext")
            .field("layers", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl<'a> ReasoningNext<'a> {
    pub(crate) fn new(rest: &'a [Arc<dyn Middleware>], core: &'a dyn ReasoningCore) -> Self {
        Self { rest, core }
    }

    /// Runs the inner layers with `call`; the stream holds the step's
    /// events (`MODEL_CALL_START`, the blocks, `MODEL_CALL_END`), then its
    /// [`StepItem::End`](crate::StepItem::End).
    pub fn run(self, call: ReasoningCall) -> BoxFuture<'a, StepStream> {
        match self.rest.split_first() {
            Some((first, rest)) => first.on_reasoning(
                call,
                ReasoningNext {
                    rest,
                    core: self.core,
                },
            ),
            None => self.core.run(call),
        }
    }
}
use crate::error::ContextError;
use crate::state::AgentState;

/// A model call as middleware sees it. Messages are borrowed until a
/// middleware rewrites them.
#[derive(Debug, Clone)]
pub struct ModelCall<'a> {
    /// The messages, system prompt first.
    pub messages: Cow<'a, [Msg]>,
    /// The tools offered.
    pub tools: Cow<'a, [ToolSchema]>,
    /// The tool choice.
    pub tool_choice: Option<ToolChoice>,
    /// Cancels the call.
    pub cancel: CancellationToken,
}

/// The rest of the model-call onion: the inner middlewares, then the model.
#[derive(Debug, Clone, Copy)]
pub struct ModelNext<'a> {
    rest: &'a [Arc<dyn Middleware>],
    model: &'a dyn DynChatModel,
}

impl<'a> ModelNext<'a> {
    pub(crate) fn new(rest: &'a [Arc<dyn Middleware>], model: &'a dyn DynChatModel) -> Self {
        Self { rest, model }
    }

    /// Runs the inner layers with `call`.
    ///
    /// # Errors
    /// The model's setup error (or one an inner middleware returns).
    pub fn run(self, call: ModelCall<'a>) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        match self.rest.split_first() {
            Some((first, rest)) => first.on_model_call(
                call,
                ModelNext {
                    rest,
                    model: self.model,
                },
            ),
            None => Box::pin(async move {
                let request = ChatRequest {
                    messages: &call.messages,
                    tools: &call.tools,
                    tool_choice: call.tool_choice.as_ref(),
                };
                self.model.call_boxed(request, call.cancel.clone()).await
            }),
        }
    }
}

/// A model seen through the middlewares' `on_model_call`: calls made with
/// it (the summary calls of compression) pass the same onion as the
/// reasoning steps' calls.
#[derive(Debug)]
pub(crate) struct ThroughMiddleware<'a> {
    pub(crate) middlewares: &'a [Arc<dyn Middleware>],
    pub(crate) model: &'a dyn DynChatModel,
}

impl DynChatModel for ThroughMiddleware<'_> {
    fn model_name(&self) -> &str {
        self.model.model_name()
    }

    fn context_size(&self) -> Option<u64> {
        self.model.context_size()
    }

    fn call_boxed<'a>(
        &'a self,
        request: ChatRequest<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        let call = ModelCall {
            messages: Cow::Borrowed(request.messages),
            tools: Cow::Borrowed(request.tools),
            tool_choice: request.tool_choice.cloned(),
            cancel,
        };
        ModelNext::new(self.middlewares, self.model).run(call)
    }
}

/// A tool call about to run, as middleware sees it.
#[derive(Debug, Clone)]
pub struct ActingCall {
    /// The call as the model made it.
    pub call: ToolCallBlock,
    /// The prepared (parsed, repaired, validated) input.
    pub input: Value,
    /// The call's context (working directory, session, cancellation).
    pub ctx: ToolCallContext,
}

/// The rest of the acting onion: the inner middlewares, then the tool (one
/// a middleware added through [`Middleware::list_tools`], else the
/// toolkit's).
#[derive(Debug, Clone, Copy)]
pub struct ActingNext<'a> {
    rest: &'a [Arc<dyn Middleware>],
    toolkit: &'a Toolkit,
    added: &'a ToolList,
}

impl<'a> ActingNext<'a> {
    pub(crate) fn new(
        rest: &'a [Arc<dyn Middleware>],
        toolkit: &'a Toolkit,
        added: &'a ToolList,
    ) -> Self {
        Self {
            rest,
            toolkit,
            added,
        }
    }

    /// Runs the inner layers with `call`.
    pub fn run(self, call: ActingCall) -> BoxFuture<'a, ToolStream> {
        match self.rest.split_first() {
            Some((first, rest)) => first.on_acting(
                call,
                ActingNext {
                    rest,
                    toolkit: self.toolkit,
                    added: self.added,
                },
            ),
            None => Box::pin(async move {
                // A middleware's tool runs as it is (the toolkit's
                // per-tool middleware wraps the toolkit's tools only).
                if let Some(tool) = self.added.added(&call.call.name) {
                    return tool.call(call.input, call.ctx);
                }
                self.toolkit
                    .call_prepared(&call.call.name, call.input, call.ctx)
                    .await
            }),
        }
    }
}

/// What a reply does when a middleware is asked before it ends
/// ([`Middleware::on_reply_end`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyEndAction {
    /// End the reply.
    Finish,
    /// Run another round in the same reply (same reply id, within
    /// `max_iters`), first adding this hint text for the model (for
    /// example "the tests still fail; keep going"), recorded and streamed
    /// as a middleware hint. No `REPLY_END` is emitted for the round that
    /// would have ended.
    Continue(String),
}

/// A reasoning step about to be prepared, as
/// [`Middleware::on_prepare_reasoning`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct ReasoningPrep<'a> {
    /// The reply's id.
    pub reply_id: &'a str,
    /// Reasoning-acting rounds the reply used so far.
    pub cur_iter: u32,
    /// The tool choice of the model call (`None`: the model decides); a
    /// middleware may change it.
    pub tool_choice: Option<ToolChoice>,
    /// Hints for the model, added before it is called (by default
    /// recorded in the reply and streamed as `HINT_BLOCK` events; see
    /// [`PrepHint`]). A `String` converts into a default hint.
    pub hints: Vec<PrepHint>,
    /// The middlewares' free-form state (the state's `middle_context`);
    /// each middleware keeps its own entry under a key of its own.
    pub middle_context: &'a mut serde_json::Map<String, Value>,
}

/// Hooks into the agent loop. Every method has a pass-through default.
pub trait Middleware: Send + Sync + Debug {
    /// Rewrites the system prompt.
    fn on_system_prompt(&self, prompt: String) -> String {
        prompt
    }

    /// Shapes the tools offered to the model: add tools of your own with
    /// [`ToolList::add`] (they are offered after the others and run when
    /// the model calls them, through the permission check and `on_acting`)
    /// or take tools away with [`ToolList::retain`]. Asked when a reply
    /// starts or resumes and before every reasoning step (so the list may
    /// change with `state`), each middleware in turn seeing the list the
    /// previous one left. While a reply runs the conversation is kept with
    /// the reply, so `state.context` may be empty; the other fields are
    /// current.
    fn list_tools(&self, tools: &mut ToolList, state: &AgentState) {
        let _ = (tools, state);
    }

    /// Prepares a reasoning step before it runs (before `on_reasoning`):
    /// read and update your entry of `step.middle_context`, change
    /// `step.tool_choice`, push hints for the model onto `step.hints`
    /// (each with its source and whether it is streamed and recorded).
    /// Middlewares are asked in order, each awaited before the next.
    fn on_prepare_reasoning<'a>(&'a self, step: &'a mut ReasoningPrep<'_>) -> BoxFuture<'a, ()> {
        let _ = step;
        Box::pin(std::future::ready(()))
    }

    /// Sees every event the reply's loop records, up to and including
    /// `REPLY_END`, in order, as the agent applies it to the reply; update
    /// your entry of `middle_context` from them (token usage arrives in
    /// `MODEL_CALL_END`). `REPLY_START`, and the results a confirmation or
    /// an external execution brings in before a parked reply's loop goes
    /// on, are not shown; nor is the end of a parked reply closed by a new
    /// message.
    fn on_event(&self, event: &AgentEvent, middle_context: &mut serde_json::Map<String, Value>) {
        let _ = (event, middle_context);
    }

    /// Wraps a whole reply: rewrite `call`, call `next.run(call)`, and map
    /// the reply's events (add, change or drop them) on their way to the
    /// consumer. The agent's state records what the agent did (the events
    /// before this hook). Dropping events here changes only what the
    /// consumer sees; to run another round instead of ending the reply,
    /// use [`on_reply_end`](Self::on_reply_end).
    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        next.run(call)
    }

    /// Wraps a reasoning step: rewrite `call`, call `next.run(call)`, and
    /// map its events ([`StepItem::Event`](crate::StepItem): add, change or
    /// drop them) before they are applied to the reply and streamed; pass
    /// the step's [`StepItem::End`](crate::StepItem) on. Events that do not
    /// fit the reply (a delta for a block that is not open, say) are
    /// dropped with a warning, so the state stays consistent.
    fn on_reasoning<'a>(
        &'a self,
        call: ReasoningCall,
        next: ReasoningNext<'a>,
    ) -> BoxFuture<'a, StepStream> {
        next.run(call)
    }

    /// Wraps a model call: rewrite `call`, call `next.run(call)`, and
    /// optionally map the returned stream.
    ///
    /// # Errors
    /// A model error to report instead of calling the model.
    fn on_model_call<'a>(
        &'a self,
        call: ModelCall<'a>,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        next.run(call)
    }

    /// Reviews the permission engine's decision for one tool call and
    /// returns the decision to apply.
    fn on_check_permission(
        &self,
        call: &ToolCallBlock,
        input: &Value,
        context: &PermissionContext,
        decision: PermissionDecision,
    ) -> PermissionDecision {
        let _ = (call, input, context);
        decision
    }

    /// Wraps the execution of an allowed tool call: rewrite `call`, call
    /// `next.run(call)`, and optionally map the chunk stream (or return
    /// chunks of your own instead of running the tool).
    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        next.run(call)
    }

    /// Wraps a compression check: rewrite `request` (config, instructions,
    /// threshold), call `next.run(request)`, and look at the outcome — or
    /// return an outcome of your own without calling `next` to skip it.
    ///
    /// # Errors
    /// A [`ContextError`] to report instead.
    fn on_compress_context<'a>(
        &'a self,
        request: CompressRequest,
        next: CompressNext<'a>,
    ) -> BoxFuture<'a, Result<CompressOutcome, ContextError>> {
        next.run(request)
    }

    /// Asked, in order, before a reply ends as completed (the model
    /// answered, or the structured output was given); the first
    /// [`ReplyEndAction::Continue`] runs another round instead. Not asked
    /// once `max_iters` is reached. The middlewares' state is in
    /// `state.middle_context`.
    fn on_reply_end(&self, reply: &Msg, state: &AgentState) -> ReplyEndAction {
        let _ = (reply, state);
        ReplyEndAction::Finish
    }
}
