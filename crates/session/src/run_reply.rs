//! One reply of a run, from its input to the commit of its message and
//! state.

#[allow(clippy::wildcard_imports)]
use super::*;

/// One reply: new messages are stored with the state before the model is
/// called (a crash keeps them), events are published as they come, the
/// reply message and state are committed at the end. `tally` counts the
/// events (model calls and their usage, tool results, the outcome); its
/// `ended` turns true once the reply's last event is published. The result
/// says whether that event ended a completed reply (not parked,
/// interrupted or failed).
///
/// A resume's input (a confirmation or external results) is echoed on the
/// stream first, as AgentScope does. The reply's last event (its end, or
/// the request that parks it) is published after the commit and a bus
/// checkpoint: a subscriber that comes later without a cursor gets just
/// that event, the rest being in the stored messages.
pub(super) async fn run_once(
    state: &Engine,
    session_id: &str,
    runner: &Runner,
    revision: &mut i64,
    input: ReplyInput,
    cancel: &CancellationToken,
    tally: &mut RunTally,
) -> Result<bool, RunError> {
    let bus = state.bus();
    let agent = &runner.agent;
    let limit = state.config().replay_limit;
    bus.begin_run(session_id).await?;
    let input = journal::guard_confirm(state, session_id, input).await;
    let echo = match &input {
        ReplyInput::Confirm(e) => Some(to_python_json(e)),
        ReplyInput::External(e) => Some(to_python_json(e)),
        _ => None,
    };
    if let Some(payload) = echo {
        let payload = payload?;
        bus.publish(session_id, payload.into(), limit).await?;
    }
    let mut pending: Vec<Value> = Vec::new();
    let input = match input {
        ReplyInput::Msgs(msgs) if !agent.state().await.is_parked() => {
            let json = to_values(&msgs)?;
            agent.observe(msgs).await?;
            commit(state, session_id, agent, revision, &json).await?;
            ReplyInput::Continue
        }
        ReplyInput::Msgs(msgs) => {
            pending = to_values(&msgs)?;
            ReplyInput::Msgs(msgs)
        }
        other => other,
    };
    let mut stream = agent.reply_stream_with(input, None, cancel.child_token());
    // The reply's last event, held until the commit.
    let mut last: Option<String> = None;
    let mut completed = false;
    let mut journal = Journal::default();
    while let Some(event) = stream.next().await {
        tally.observe(&event);
        journal.observe(state, session_id, &event).await;
        if let AgentEvent::ReplyStart(start) = &event {
            // From here until its last event, a replica that finds the
            // session unlocked ends this reply (see `takeover`).
            let info = OpenRunInfo::new(&runner.user_id, &start.reply_id);
            bus.open_run(session_id, info.to_value()).await?;
        }
        let outcome = event.reply_outcome();
        let is_last = outcome.is_some();
        completed = outcome.is_some_and(ReplyOutcome::is_completed);
        if let AgentEvent::ReplyEnd(end) = &event
            && let Some(error) = &end.error
        {
            tracing::error!(
                session_id,
                reply_id = %end.reply_id,
                kind = ?error.kind,
                cause = %error.message,
                "chat run ended with an error"
            );
        }
        let payload = to_python_json(&event)?;
        if let Some(held) = last.take() {
            bus.publish(session_id, held.into(), limit).await?;
            tally.ended = true;
        }
        if is_last {
            last = Some(payload);
        } else {
            bus.publish(session_id, payload.into(), limit).await?;
        }
    }
    if let Some(reply) = agent.state().await.reply_msg() {
        pending.push(serde_json::to_value(reply)?);
    }
    // A failed commit leaves the end unpublished: the caller ends the
    // stream with the error instead.
    commit(state, session_id, agent, revision, &pending).await?;
    tally.record(state).await;
    bus.checkpoint(session_id).await?;
    if let Some(held) = last {
        bus.publish(session_id, held.into(), limit).await?;
        tally.ended = true;
    }
    Ok(completed)
}

fn to_values<T: serde::Serialize>(items: &[T]) -> Result<Vec<Value>, RunError> {
    items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(RunError::from)
}

/// Writes the agent's state and `msgs` if nobody wrote since `revision`.
pub(super) async fn commit(
    state: &Engine,
    session_id: &str,
    agent: &Agent,
    revision: &mut i64,
    msgs: &[Value],
) -> Result<(), RunError> {
    let snapshot = serde_json::to_value(agent.state().await)?;
    *revision = state
        .storage()
        .commit_reply(session_id, *revision, &snapshot, msgs)
        .await?;
    Ok(())
}
