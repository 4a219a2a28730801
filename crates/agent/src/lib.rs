//! The Oxiscope agent: the reasoning-acting loop, its event stream,
//! human-in-the-loop pauses, interruption, structured output, middleware
//! and the session state.
//!
//! An [`Agent`] holds a model, a toolkit, a system prompt and an
//! [`AgentState`]. Each reply runs the loop: reason (one streamed model
//! call), act (the round's tool calls, each judged by the permission
//! engine), repeat until the model answers, the reply parks on a
//! confirmation or an external result, or `max_iters` is reached. Every
//! step is an [`AgentEvent`](oxiscope_message::AgentEvent) on the
//! [`ReplyStream`]; the reply message in the state is built only by
//! applying those events with [`apply_event`], so a consumer that rebuilds
//! the stream the same way holds exactly the same message (with
//! `Msg::append_event`, as AgentScope does, only the creation times of
//! blocks differ: they come from the clock). See [`ReplyStream`] for the
//! contract: one `REPLY_START`, then exactly one `REPLY_END`, last (a
//! parked reply ends on its `REQUIRE_*` event instead).
//!
//! # One reply, one path
//! `reply` sequences rounds and ends the reply in one place; `start`
//! checks and applies the input; `reasoning` runs a step (hints, the model
//! call with its retry policy and fallback, the decoding into events, which
//! carry the step's outcome); `acting` runs a round's tool calls. A
//! middleware asks for another round in one way only:
//! [`Middleware::on_reply_end`] returning [`ReplyEndAction::Continue`].
//!
//! # Context management
//!
//! Before every reasoning step the prompt's tokens (system prompt, summary,
//! context, tool schemas) are totalled with the model's token counter; the
//! count of each message is cached, so a step counts only what changed, and
//! a prompt whose byte size is already under the threshold is not counted
//! at all. Above `trigger_ratio` of the context window, the older messages
//! are summarised into a five-field structured summary through a forced
//! tool call (a feature every provider has) and the newest ones, within
//! `reserve_ratio`, are kept; a tool call is never separated from its
//! result, and a reply's own message is split at a tool-round boundary, so
//! compression also works in the middle of a long tool loop. When the
//! summary keeps failing, the oldest messages are dropped with a note (or,
//! with `compression_fallback_to_truncation` off, the reply ends with
//! [`ContextError::SummaryFailed`] and the context is unchanged). Tool
//! results above `tool_result_limit` tokens are cut with a marker, images
//! beyond `max_image_num` are replaced by a note, and with an
//! [`Offloader`](oxiscope_tool::Offloader) everything that leaves the
//! context is saved first and the note names the file. When compression
//! cuts into the running reply, the reply message in the state (and the one
//! [`Agent::reply`] returns) keeps only what stayed; a consumer that rebuilt
//! the stream still holds everything. See
//! [`ContextConfig`], [`Agent::compress_context`] and the `CompressContext`
//! tool ([`ContextConfig::compression_tool_enabled`]).
//!
//! A parked reply is described entirely by the state: save it as JSON, load
//! it into a new agent (in a new process), pass the confirmation, and the
//! reply continues. The crate names no provider and no backend: models come
//! in as [`DynChatModel`](oxiscope_model::DynChatModel), tools as an
//! [`oxiscope_tool::Toolkit`].
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use futures_util::StreamExt;
//! use oxiscope_agent::Agent;
//! use oxiscope_message::{AgentEvent, Msg};
//! use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hello!")]));
//! let agent = Agent::builder("Friday", model).system_prompt("Be brief.").build()?;
//!
//! let mut events = agent.reply_stream(Msg::user("alice", "Hi")?);
//! let mut text = String::new();
//! while let Some(event) = events.next().await {
//!     if let AgentEvent::TextBlockDelta(delta) = event {
//!         text.push_str(&delta.delta);
//!     }
//! }
//! assert_eq!(text, "Hello!");
//! assert_eq!(agent.state().await.context.len(), 2); // the question and the reply
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod acting;
mod agent;
mod budget;
mod config;
mod context;
mod emit;
mod error;
mod hitl;
mod inject;
mod middleware;
pub mod otel;
pub mod pipeline;
mod reasoning;
mod reply;
mod running;
mod start;
mod state;
mod stream;
mod structured;
mod tool_list;

pub use agent::{Agent, AgentBuilder, DEFAULT_CONTEXT_SIZE, ReplyInput};
pub use budget::ReplyBudgetControlMiddleware;
pub use config::{
    ConfigError, ContextConfig, DEFAULT_MAX_REPLY_TEXT_BYTES, DEFAULT_MAX_REPLY_TOOL_INPUT_BYTES,
    DEFAULT_MAX_RETRIES, InjectionConfig, ModelConfig, ReActConfig, ReplyLimits,
};
pub use context::{CompressNext, CompressOutcome, CompressRequest};
pub use emit::apply_event;
pub use error::{AgentError, ContextError, ReplyPart};
pub use middleware::{
    ActingCall, ActingNext, EventStream, Middleware, ModelCall, ModelNext, ReasoningCall,
    ReasoningNext, ReasoningPrep, ReplyCall, ReplyEndAction, ReplyNext,
};
pub use reasoning::{
    MIDDLEWARE_HINT_SOURCE, PrepHint, RETRY_BASE_DELAY, RETRY_MAX_DELAY, StepEnd, StepItem,
    StepStream,
};
pub use start::new_reply_msg;
pub use state::{AgentState, Awaiting, ReplyContext};
pub use stream::{ReplyItem, ReplyStream};
pub use tool_list::ToolList;
