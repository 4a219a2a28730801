//! The Oxiscope agent (work in progress, issue #6).

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
pub use middleware::{Middleware, ModelCall, ModelNext, ReplyEndAction};
pub use state::{AgentState, Awaiting, ReplyContext};
pub use stream::ReplyStream;
