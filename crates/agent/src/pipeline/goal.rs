//! [`GoalPipeline`]: an executor works, a verifier judges, a refusal goes
//! back to the executor with its reason, until the work passes or the
//! attempts run out.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use oxiscope_message::{AgentEvent, ReplyFinishedReason};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::{PipelineError, PipelineEvents, PipelineProtocol};
use crate::{Agent, AgentState, ReplyInput};

/// A verifier's judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictResult {
    /// The work meets the goal.
    Pass,
    /// The work does not meet the goal yet.
    Fail,
    /// The goal cannot be reached at all.
    Impossible,
}

/// The verifier's structured output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The judgement.
    pub result: VerdictResult,
    /// On a refusal, what is missing and where to fix it (sent to the
    /// executor verbatim); on `impossible`, why.
    #[serde(default)]
    pub message: String,
}

/// Which agent the pipeline's run is with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalPhase {
    /// No run is going on.
    #[default]
    Idle,
    /// The executor works (or is parked).
    Executing,
    /// The verifier judges (or is parked).
    Verifying,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GoalOutcome {
    /// The verifier accepted the work.
    Passed {
        /// The executor's last report.
        report: String,
        /// The verifier's message.
        message: String,
    },
    /// The verifier found the goal unreachable.
    Impossible {
        /// Why.
        message: String,
    },
    /// `max_iters` refusals were spent.
    MaxIters {
        /// The last refusal's message.
        message: String,
    },
    /// An agent gave no valid structured output even after `max_retries`
    /// reminders.
    InvalidOutput {
        /// The agent's name.
        agent: String,
    },
    /// The run was interrupted (by the user or a cancellation).
    Interrupted,
    /// An agent's reply ended with an error.
    Failed {
        /// The error's message.
        message: String,
    },
}

/// Where a run stands: saved with the pipeline's state, so a parked run
/// resumes after a restart with the attempts it had left.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GoalProgress {
    /// The agent the run is with.
    pub phase: GoalPhase,
    /// The goal: the text of the messages that started the run.
    pub goal: String,
    /// Refusals spent (against `max_iters`).
    pub refusals: u32,
    /// Invalid structured outputs of the current step (against
    /// `max_retries`; they spend no attempt).
    pub retries: u32,
    /// The executor's last valid report.
    pub report: Option<String>,
    /// The verifier's last valid verdict.
    pub verdict: Option<Verdict>,
    /// Whether the goal is in the verifier's conversation.
    pub verifier_knows_goal: bool,
    /// How the last run ended (`None` while one is going on).
    pub outcome: Option<GoalOutcome>,
}

/// The saved state of a [`GoalPipeline`].
#[derive(Serialize, Deserialize)]
struct SavedState {
    executor: AgentState,
    verifier: AgentState,
    #[serde(default)]
    progress: GoalProgress,
}

/// A pipeline that keeps an executor working until a verifier accepts the
/// result.
///
/// The first messages of a run are both the executor's task and the goal
/// the verifier judges against. The executor answers with a structured
/// `report`; the verifier, given the goal and the report, answers with a
/// structured verdict (`pass`, `fail` or `impossible`, and a `message`). A
/// `fail` spends one of `max_iters` attempts and sends the message back to
/// the executor; `pass` and `impossible` end the run. A reply without a
/// valid structured output spends no attempt: the agent is reminded and
/// asked again, at most `max_retries` times in a row.
///
/// Events: every event of both agents, in order; each agent reply has its
/// own `REPLY_START` (whose `name` is the agent's) and `REPLY_END`. When an
/// agent parks on a confirmation or an external result the stream ends
/// with the `REQUIRE_*` event; pass the answer back in and it is routed to
/// the agent whose `reply_id` it names. A new message starts a new run with
/// the full budget; a resumption keeps the run's counters.
#[derive(Debug, Clone)]
pub struct GoalPipeline {
    pub(crate) inner: Arc<GoalInner>,
}

#[derive(Debug)]
pub(crate) struct GoalInner {
    pub(crate) executor: Agent,
    pub(crate) verifier: Agent,
    pub(crate) verifier_reset_context: bool,
    pub(crate) max_iters: u32,
    pub(crate) max_retries: u32,
    pub(crate) progress: Mutex<GoalProgress>,
}

impl GoalPipeline {
    /// Starts building a pipeline of `executor` and `verifier`.
    #[must_use]
    pub fn builder(executor: Agent, verifier: Agent) -> GoalPipelineBuilder {
        GoalPipelineBuilder {
            executor,
            verifier,
            verifier_reset_context: true,
            max_iters: 10,
            max_retries: 3,
        }
    }

    /// The agent doing the work.
    #[must_use]
    pub fn executor(&self) -> &Agent {
        &self.inner.executor
    }

    /// The agent judging it.
    #[must_use]
    pub fn verifier(&self) -> &Agent {
        &self.inner.verifier
    }

    /// Where the current (or last) run stands (waits for a running reply).
    pub async fn progress(&self) -> GoalProgress {
        self.inner.progress.lock().await.clone()
    }

    /// Replies to `input`; see [`GoalPipeline`] for what is streamed.
    ///
    /// # Cancel safety
    /// Dropping the stream interrupts the running agent reply and ends the
    /// run as [`GoalOutcome::Interrupted`].
    pub fn reply_stream(&self, input: impl Into<ReplyInput>) -> PipelineEvents {
        PipelineProtocol::reply_stream(self, input.into(), CancellationToken::new())
    }

    /// Runs to the end of the run (or a park) and returns where it stands.
    pub async fn run(&self, input: impl Into<ReplyInput>) -> GoalProgress {
        use futures_util::StreamExt as _;
        let mut events = self.reply_stream(input);
        while events.next().await.is_some() {}
        self.progress().await
    }
}

impl PipelineProtocol for GoalPipeline {
    fn reply_stream(&self, input: ReplyInput, cancel: CancellationToken) -> PipelineEvents {
        super::goal_run::spawn(Arc::clone(&self.inner), input, cancel)
    }

    fn save_state(&self) -> BoxFuture<'_, Value> {
        Box::pin(async move {
            let progress = self.inner.progress.lock().await;
            let saved = SavedState {
                executor: self.inner.executor.state().await,
                verifier: self.inner.verifier.state().await,
                progress: progress.clone(),
            };
            serde_json::to_value(saved).unwrap_or(Value::Null)
        })
    }

    fn load_state(&self, state: Value) -> BoxFuture<'_, Result<(), PipelineError>> {
        Box::pin(async move {
            let saved: SavedState = serde_json::from_value(state)?;
            let mut progress = self.inner.progress.lock().await;
            self.inner.executor.set_state(saved.executor).await;
            self.inner.verifier.set_state(saved.verifier).await;
            *progress = saved.progress;
            Ok(())
        })
    }
}

/// Builds a [`GoalPipeline`].
#[derive(Debug)]
pub struct GoalPipelineBuilder {
    executor: Agent,
    verifier: Agent,
    verifier_reset_context: bool,
    max_iters: u32,
    max_retries: u32,
}

impl GoalPipelineBuilder {
    /// Whether the verifier's conversation is cleared after each refusal, so
    /// the next verification sees only the new report (default: `true`).
    /// Only the verifier's conversation (context, summary, reply) is
    /// cleared; its permissions, tools and middleware state stay.
    #[must_use]
    pub fn verifier_reset_context(mut self, reset: bool) -> Self {
        self.verifier_reset_context = reset;
        self
    }

    /// How many refusals a run may spend (default: 10).
    #[must_use]
    pub fn max_iters(mut self, max_iters: u32) -> Self {
        self.max_iters = max_iters;
        self
    }

    /// How many times in a row an agent is asked again after a reply
    /// without a valid structured output (default: 3).
    #[must_use]
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The pipeline.
    #[must_use]
    pub fn build(self) -> GoalPipeline {
        GoalPipeline {
            inner: Arc::new(GoalInner {
                executor: self.executor,
                verifier: self.verifier,
                verifier_reset_context: self.verifier_reset_context,
                max_iters: self.max_iters,
                max_retries: self.max_retries,
                progress: Mutex::new(GoalProgress::default()),
            }),
        }
    }
}

/// How one agent reply inside a run ended.
#[derive(Debug)]
pub(crate) enum StepEnd {
    /// With its `REPLY_END`.
    Ended(ReplyFinishedReason, Option<String>),
    /// Parked on a confirmation or an external result.
    Parked,
    /// The stream stopped early (the consumer went away) or was empty.
    Stopped,
}

impl StepEnd {
    /// How the reply ended, judged by its last event.
    pub(crate) fn from_last(last: Option<&AgentEvent>) -> Self {
        match (last, last.and_then(AgentEvent::reply_outcome)) {
            (Some(AgentEvent::ReplyEnd(e)), _) => Self::Ended(
                e.finished_reason,
                e.error.as_ref().map(|i| i.message.clone()),
            ),
            (_, Some(ends)) if ends.is_parked() => Self::Parked,
            _ => Self::Stopped,
        }
    }
}
