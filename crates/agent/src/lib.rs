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
//! applying those events, so a consumer that rebuilds the stream with
//! `Msg::append_event` holds the same message (up to the clock-derived
//! fields AgentScope also takes from the clock).
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
//! let agent = Agent::builder("Friday", model).system_prompt("Be brief.").build();
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

mod acting;
mod agent;
mod config;
mod emit;
mod error;
mod hitl;
mod inject;
mod middleware;
mod reasoning;
mod reply;
mod state;
mod stream;
mod structured;

pub use agent::{Agent, AgentBuilder, ReplyInput};
pub use config::{InjectionConfig, ModelConfig, ReActConfig};
pub use error::AgentError;
pub use middleware::{ActingCall, ActingNext, Middleware, ModelCall, ModelNext, ReplyEndAction};
pub use state::{AgentState, Awaiting, ReplyContext};
pub use stream::ReplyStream;
