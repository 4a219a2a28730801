//! A2A client agent of Oxiscope: a remote agent behind the
//! [A2A protocol](https://a2a-protocol.org/) (1.0, JSON-RPC binding with
//! server-sent events) used where a local agent is.
//!
//! [`A2AAgent`] is only a local proxy: it fetches and checks the remote
//! [`AgentCard`], sends the input as one A2A message (`SendStreamingMessage`,
//! or `SendMessage` when the card says the agent does not stream), and
//! translates what comes back into [`AgentEvent`](oxiscope_message::AgentEvent)s:
//! text parts into text blocks (streamed artifact chunks flow into one
//! block), raw-bytes and URL parts into data blocks; structured data parts
//! are unsupported (a typed error). The remote task's final state decides the
//! reply's finished reason:
//!
//! | remote task state | `finished_reason` |
//! |---|---|
//! | completed, or a direct message | `completed` |
//! | input-required, auth-required | `completed` (the status message is the content; the next reply answers it) |
//! | canceled, or an interrupt | `interrupted` |
//! | failed, rejected, a stream cut mid-task | `error` |
//!
//! The conversation's `context_id` and a task waiting for input live in
//! [`A2AAgentState`] (save it, give it back to resume). Interrupting a reply
//! (dropping its stream, or [`A2AReplyStream::interrupt`]) cancels the
//! remote task with `CancelTask`.
//!
//! It implements [`PipelineProtocol`](oxiscope_agent::pipeline::PipelineProtocol),
//! so pipelines and other code that drive an agent through it drive a
//! remote agent the same way (confirmation and external-execution inputs
//! are rejected: a remote agent never parks locally).
//!
//! It owns no HTTP client of its own: requests go through
//! [`oxiscope_http::HttpClient`]. It does not serve A2A, and speaks neither
//! the `HTTP+JSON` nor the gRPC binding.
//!
//! # Example
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use oxiscope_a2a::A2AAgent;
//! use oxiscope_message::{AgentEvent, Msg};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = A2AAgent::connect("http://127.0.0.1:9999").await?;
//! let mut events = agent.reply_stream(Msg::user("user", "Plan me a weekend trip.")?);
//! while let Some(event) = events.next().await {
//!     if let AgentEvent::TextBlockDelta(delta) = event {
//!         print!("{}", delta.delta);
//!     }
//! }
//! // The second reply continues the same remote conversation.
//! let reply = agent.reply(Msg::user("user", "Make it kid-friendly.")?).await?;
//! println!("{}", reply.text("\n"));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod agent;
mod card;
mod client;
mod error;
mod parts;
mod pipeline;
mod run;
mod state;
mod stream;
mod translate;
pub mod wire;

pub use agent::{A2AAgent, A2AAgentBuilder, A2AInput};
pub use card::{
    AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Endpoint, WELL_KNOWN_CARD_PATH,
};
pub use client::PROTOCOL_VERSION;
pub use error::{CardError, Error, Result};
pub use state::A2AAgentState;
pub use stream::A2AReplyStream;
pub use wire::{Task, TaskState};
