//! The loop of a [`GoalPipeline`](super::GoalPipeline) run: one task that
//! drives the agents in turn and forwards their events.

use std::sync::Arc;

use futures_util::StreamExt as _;
use oxiscope_message::{
    AgentEvent, ErrorInfo, ErrorType, Msg, ReplyEndEvent, ReplyFinishedReason, ReplyStartEvent,
    RichContent, Role,
};
use serde_json::{Map, Value};
use tokio::sync::{MutexGuard, mpsc};
use tokio_util::sync::CancellationToken;

use super::PipelineEvents;
use super::goal::{
    GoalInner, GoalOutcome, GoalPhase, GoalProgress, StepEnd, Verdict, VerdictResult,
};
use super::prompts;
use crate::{Agent, ReplyContext, ReplyInput};

/// Starts a run in its own task and returns its events; dropping them
/// cancels `cancel`, which interrupts the running agent reply.
pub(crate) fn spawn(
    inner: Arc<GoalInner>,
    input: ReplyInput,
    cancel: CancellationToken,
) -> PipelineEvents {
    let (tx, mut rx) = mpsc::channel(256);
    let guard = cancel.clone().drop_guard();
    tokio::spawn(async move {
        let mut progress = inner.progress.lock().await;
        let mut run = Run {
            inner: &inner,
            progress: &mut progress,
            tx,
            cancel,
        };
        run.start(input).await;
    });
    futures_util::stream::poll_fn(move |cx| {
        let _keep = &guard;
        rx.poll_recv(cx)
    })
    .boxed()
}

/// Which agent a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Executor,
    Verifier,
}

struct Run<'a, 'g> {
    inner: &'a GoalInner,
    progress: &'a mut MutexGuard<'g, GoalProgress>,
    tx: mpsc::Sender<AgentEvent>,
    cancel: CancellationToken,
}

impl Run<'_, '_> {
    fn agent(&self, side: Side) -> &Agent {
        match side {
            Side::Executor => &self.inner.executor,
            Side::Verifier => &self.inner.verifier,
        }
    }

    /// Turns the input into the first step, then runs the loop.
    async fn start(&mut self, input: ReplyInput) {
        let first = match input {
            ReplyInput::Msgs(msgs) => {
                let goal: Vec<String> = msgs.iter().map(|m| m.text("\n")).collect();
                **self.progress = GoalProgress {
                    phase: GoalPhase::Executing,
                    goal: goal.join("\n\n"),
                    ..GoalProgress::default()
                };
                Some((Side::Executor, ReplyInput::Msgs(msgs)))
            }
            ReplyInput::Confirm(e) => {
                let id = e.reply_id.clone();
                self.route(&id, ReplyInput::Confirm(e)).await
            }
            ReplyInput::External(e) => {
                let id = e.reply_id.clone();
                self.route(&id, ReplyInput::External(e)).await
            }
            ReplyInput::Interrupt(e) => {
                let id = e.reply_id.clone();
                // Nothing parked there: a no-op, as for an agent.
                self.parked_with(&id)
                    .await
                    .map(|side| (side, ReplyInput::Interrupt(e)))
            }
            ReplyInput::Continue => match self.progress.phase {
                GoalPhase::Idle => None,
                GoalPhase::Executing => Some((Side::Executor, ReplyInput::Continue)),
                GoalPhase::Verifying => Some((Side::Verifier, ReplyInput::Continue)),
            },
        };
        if let Some((side, input)) = first {
            self.drive(side, input).await;
        }
    }

    /// The agent of the run's current phase, if it is parked on reply
    /// `reply_id` (a reply left parked by an earlier run is not resumed).
    async fn parked_with(&self, reply_id: &str) -> Option<Side> {
        let side = match self.progress.phase {
            GoalPhase::Idle => return None,
            GoalPhase::Executing => Side::Executor,
            GoalPhase::Verifying => Side::Verifier,
        };
        let state = self.agent(side).state().await;
        (state.is_parked() && state.reply_context.reply_id == reply_id).then_some(side)
    }

    /// Routes a resuming input to the parked agent it names, or refuses it
    /// with a well-formed failed reply.
    async fn route(&mut self, reply_id: &str, input: ReplyInput) -> Option<(Side, ReplyInput)> {
        if let Some(side) = self.parked_with(reply_id).await {
            return Some((side, input));
        }
        let session_id = self.inner.executor.state().await.session_id;
        let start = ReplyStartEvent::new(
            session_id.clone(),
            reply_id.to_owned(),
            prompts::SENDER.to_owned(),
            Role::Assistant,
        );
        let info = ErrorInfo::new(
            ErrorType::InvalidRequest,
            format!("no agent of the pipeline is parked on reply {reply_id:?}"),
        );
        let end = ReplyEndEvent::new(
            session_id,
            reply_id.to_owned(),
            ReplyFinishedReason::Error,
            Some(info),
        );
        if self.tx.send(start.into()).await.is_ok() {
            let _ = self.tx.send(end.into()).await;
        }
        None
    }

    /// Runs steps until the run ends or an agent parks.
    async fn drive(&mut self, mut side: Side, mut input: ReplyInput) {
        loop {
            self.progress.phase = match side {
                Side::Executor => GoalPhase::Executing,
                Side::Verifier => GoalPhase::Verifying,
            };
            let end = self.step(side, input).await;
            let next = match end {
                StepEnd::Parked => return,
                StepEnd::Stopped => {
                    if self.cancel.is_cancelled() || self.tx.is_closed() {
                        self.finish(GoalOutcome::Interrupted);
                    }
                    return;
                }
                StepEnd::Ended(ReplyFinishedReason::Interrupted, _) => {
                    self.finish(GoalOutcome::Interrupted);
                    return;
                }
                StepEnd::Ended(ReplyFinishedReason::Error, message) => {
                    let message = message.unwrap_or_else(|| "the reply failed".to_owned());
                    self.finish(GoalOutcome::Failed { message });
                    return;
                }
                StepEnd::Ended(_, _) => self.judge(side).await,
            };
            match next {
                Some((r, i)) if !self.cancel.is_cancelled() => {
                    side = r;
                    input = i;
                }
                Some(_) => {
                    self.finish(GoalOutcome::Interrupted);
                    return;
                }
                None => return,
            }
        }
    }

    /// Runs one agent reply, forwarding its events.
    async fn step(&self, side: Side, input: ReplyInput) -> StepEnd {
        let schema = match side {
            Side::Executor => prompts::report_schema(),
            Side::Verifier => prompts::verdict_schema(),
        };
        let mut events =
            self.agent(side)
                .reply_stream_with(input, Some(schema), self.cancel.child_token());
        let mut last = None;
        while let Some(event) = events.next().await {
            if self.tx.send(event.clone()).await.is_err() {
                return StepEnd::Stopped;
            }
            last = Some(event);
        }
        StepEnd::from_last(last.as_ref())
    }

    /// After a finished reply: reads its structured output and decides the
    /// next step (`None`: the run is over).
    async fn judge(&mut self, side: Side) -> Option<(Side, ReplyInput)> {
        let output = self
            .agent(side)
            .state()
            .await
            .reply_context
            .structured_output;
        let parsed = match side {
            Side::Executor => parse_report(output).map(Judged::Report),
            Side::Verifier => parse_verdict(output).map(Judged::Verdict),
        };
        let judged = match parsed {
            Ok(j) => j,
            Err(problem) => return self.retry(side, &problem),
        };
        self.progress.retries = 0;
        match judged {
            Judged::Report(report) => {
                let msg = if self.progress.verifier_knows_goal {
                    prompts::verify_again(&report)
                } else {
                    prompts::verify_with_goal(&self.progress.goal, &report)
                };
                self.progress.report = Some(report);
                self.progress.verifier_knows_goal = true;
                self.next_msg(Side::Verifier, msg)
            }
            Judged::Verdict(verdict) => self.on_verdict(verdict).await,
        }
    }

    async fn on_verdict(&mut self, verdict: Verdict) -> Option<(Side, ReplyInput)> {
        self.progress.verdict = Some(verdict.clone());
        match verdict.result {
            VerdictResult::Pass => {
                let report = self.progress.report.clone().unwrap_or_default();
                self.finish(GoalOutcome::Passed {
                    report,
                    message: verdict.message,
                });
                None
            }
            VerdictResult::Impossible => {
                self.finish(GoalOutcome::Impossible {
                    message: verdict.message,
                });
                None
            }
            VerdictResult::Fail => {
                self.progress.refusals += 1;
                if self.progress.refusals >= self.inner.max_iters {
                    // The last refusal stays in the verifier's conversation.
                    self.finish(GoalOutcome::MaxIters {
                        message: verdict.message,
                    });
                    return None;
                }
                if self.inner.verifier_reset_context {
                    self.reset_verifier().await;
                }
                self.next_msg(Side::Executor, prompts::refused(&verdict.message))
            }
        }
    }

    /// A reply without a valid structured output: remind the agent, unless
    /// the retries are spent.
    fn retry(&mut self, side: Side, problem: &str) -> Option<(Side, ReplyInput)> {
        self.progress.retries += 1;
        if self.progress.retries > self.inner.max_retries {
            let agent = self.agent(side).name().to_owned();
            self.finish(GoalOutcome::InvalidOutput { agent });
            return None;
        }
        tracing::debug!(
            problem,
            agent = self.agent(side).name(),
            "structured output asked again"
        );
        self.next_msg(side, prompts::output_missing(problem))
    }

    fn next_msg(
        &mut self,
        side: Side,
        msg: Result<Msg, oxiscope_message::MsgError>,
    ) -> Option<(Side, ReplyInput)> {
        match msg {
            Ok(m) => Some((side, ReplyInput::Msgs(vec![m]))),
            Err(e) => {
                self.finish(GoalOutcome::Failed {
                    message: e.to_string(),
                });
                None
            }
        }
    }

    /// Clears the verifier's conversation, keeping the rest of its state.
    async fn reset_verifier(&mut self) {
        let verifier = &self.inner.verifier;
        let mut state = verifier.state().await;
        state.context.clear();
        state.summary = RichContent::Text(String::new());
        state.reply_context = ReplyContext::default();
        verifier.set_state(state).await;
        self.progress.verifier_knows_goal = false;
    }

    fn finish(&mut self, outcome: GoalOutcome) {
        tracing::debug!(?outcome, "goal pipeline run ended");
        self.progress.phase = GoalPhase::Idle;
        self.progress.outcome = Some(outcome);
    }
}

enum Judged {
    Report(String),
    Verdict(Verdict),
}

fn parse_report(output: Option<Map<String, Value>>) -> Result<String, String> {
    let output = output.ok_or_else(|| "no structured output was submitted".to_owned())?;
    match output.get("report") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err("the output has no `report` text".to_owned()),
    }
}

fn parse_verdict(output: Option<Map<String, Value>>) -> Result<Verdict, String> {
    let output = output.ok_or_else(|| "no structured output was submitted".to_owned())?;
    serde_json::from_value(Value::Object(output))
        .map_err(|e| format!("the verdict is not valid: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Option<Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    #[test]
    fn a_verdict_outside_the_three_results_is_invalid() {
        let err = parse_verdict(map(json!({"result": "maybe", "message": ""}))).unwrap_err();
        assert!(err.contains("maybe"), "{err}");
        let ok = parse_verdict(map(json!({"result": "fail", "message": "no tests"}))).unwrap();
        assert_eq!(
            ok,
            Verdict {
                result: VerdictResult::Fail,
                message: "no tests".to_owned()
            }
        );
    }

    #[test]
    fn a_missing_output_or_report_is_named() {
        assert!(
            parse_report(None)
                .unwrap_err()
                .contains("no structured output")
        );
        assert!(
            parse_report(map(json!({"x": 1})))
                .unwrap_err()
                .contains("report")
        );
        assert_eq!(
            parse_report(map(json!({"report": "done"}))).unwrap(),
            "done"
        );
    }
}
