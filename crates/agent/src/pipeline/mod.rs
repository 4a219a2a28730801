//! Pipelines: several agents run by a fixed logic behind one interface.
//!
//! A pipeline takes the same inputs as an agent ([`ReplyInput`]: messages,
//! confirmation results, external results, interrupts) and streams the
//! events of every agent inside it through one stream; the `reply_id` (and
//! the `name` of each `REPLY_START`) tells the agents apart. When an agent
//! parks on a confirmation or an external result, the stream simply ends;
//! the answer, passed back in, is routed to the agent whose `reply_id` it
//! names. An [`Agent`] is a pipeline of one, so code that drives a
//! [`PipelineProtocol`] drives either.
//!
//! [`GoalPipeline`] keeps an executor working until a verifier accepts its
//! result; [`Agent::sibling`] makes the second agent of a pipeline from
//! the first (same model, tools and working place, its own conversation).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use oxiscope_agent::Agent;
//! use oxiscope_agent::pipeline::{GoalOutcome, GoalPipeline};
//! use oxiscope_message::Msg;
//! use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let submit = |args: &str| ScriptedTurn::tool_call("c1", "GenerateStructuredOutput", args);
//! let model = Arc::new(ScriptedModel::new([
//!     submit(r#"{"report": "hello.py prints hello"}"#),
//!     submit(r#"{"result": "pass", "message": "checked"}"#),
//! ]));
//! let executor = Agent::builder("Executor", model).build()?;
//! let verifier = executor.sibling("Verifier", "You review work strictly.");
//! let pipe = GoalPipeline::builder(executor, verifier).max_iters(5).build();
//!
//! let progress = pipe.run(Msg::user("user", "Write hello.py")?).await;
//! assert!(matches!(progress.outcome, Some(GoalOutcome::Passed { .. })));
//! # Ok(())
//! # }
//! ```

mod goal;
mod goal_run;
mod prompts;
mod sibling;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use oxiscope_message::AgentEvent;
use serde_json::Value;
pub use tokio_util::sync::CancellationToken;

use crate::{Agent, AgentState, ReplyInput};

pub use goal::{
    GoalOutcome, GoalPhase, GoalPipeline, GoalPipelineBuilder, GoalProgress, Verdict, VerdictResult,
};

/// The events of one pipeline run.
pub type PipelineEvents = BoxStream<'static, AgentEvent>;

/// Why a pipeline's state could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The saved state does not have the pipeline's shape.
    #[error("the pipeline state is invalid: {0}")]
    InvalidState(#[from] serde_json::Error),
}

/// Take inputs, stream events: what an agent and every pipeline can do.
///
/// # Contract
/// Each agent reply inside the stream starts with its `REPLY_START` and
/// either ends with exactly one `REPLY_END`, or parks with
/// `REQUIRE_USER_CONFIRM` / `REQUIRE_EXTERNAL_EXECUTION`, which then is the
/// last event of the stream. Resuming inputs carry the parked reply's
/// `reply_id`.
///
/// # Cancel safety
/// Cancelling `cancel` (or dropping the stream) interrupts the running
/// reply, which ends as interrupted.
pub trait PipelineProtocol: Send + Sync + std::fmt::Debug {
    /// Replies to `input`, streaming every event.
    fn reply_stream(&self, input: ReplyInput, cancel: CancellationToken) -> PipelineEvents;

    /// The state to save (JSON), waiting for a running reply to finish.
    fn save_state(&self) -> BoxFuture<'_, Value>;

    /// Replaces the state with a saved one (waits for a running reply).
    ///
    /// # Errors
    /// [`PipelineError::InvalidState`] when `state` is not a saved state of
    /// this kind of pipeline; the current state is then unchanged.
    fn load_state(&self, state: Value) -> BoxFuture<'_, Result<(), PipelineError>>;
}

impl PipelineProtocol for Agent {
    fn reply_stream(&self, input: ReplyInput, cancel: CancellationToken) -> PipelineEvents {
        self.reply_stream_with(input, None, cancel).boxed()
    }

    fn save_state(&self) -> BoxFuture<'_, Value> {
        Box::pin(async move {
            // An `AgentState` always serialises (string keys, no floats
            // that could be NaN from JSON).
            serde_json::to_value(self.state().await).unwrap_or(Value::Null)
        })
    }

    fn load_state(&self, state: Value) -> BoxFuture<'_, Result<(), PipelineError>> {
        Box::pin(async move {
            let state: AgentState = serde_json::from_value(state)?;
            self.set_state(state).await;
            Ok(())
        })
    }
}
