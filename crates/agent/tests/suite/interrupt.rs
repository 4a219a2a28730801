//! Interrupting a parked or a running reply.

use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_agent::AgentState;
use oxiscope_message::{AgentEvent, ReplyFinishedReason, ToolResultState, UserInterruptEvent};
use oxiscope_test_support::ScriptedTurn;
use pretty_assertions::assert_eq;

use super::common::*;

#[tokio::test]
async fn an_interrupt_closes_a_parked_reply_with_interrupted_results() {
    let model = scripted(vec![ScriptedTurn::tool_call(
        "c1",
        "delete_file",
        r#"{"path": "a"}"#,
    )]);
    let agent = agent(&model, AgentState::default());
    let pause = collect(agent.reply_stream(user("rm a"))).await;
    let Some(AgentEvent::RequireUserConfirm(req)) = pause.last() else {
        panic!()
    };
    let events = collect(agent.reply_stream(UserInterruptEvent::new(req.reply_id.clone()))).await;
    assert_eq!(
        types(&events),
        [
            "REPLY_START",
            "TOOL_RESULT_START",
            "TOOL_RESULT_TEXT_DELTA",
            "TOOL_RESULT_END",
            "REPLY_END"
        ]
    );
    let state = agent.state().await;
    assert!(!state.is_parked());
    let reply = state.reply_msg().unwrap();
    assert_eq!(
        reply.finished_reason,
        Some(ReplyFinishedReason::Interrupted)
    );
    assert_eq!(
        reply.tool_results().next().unwrap().state,
        ToolResultState::Interrupted
    );
}

#[tokio::test]
async fn an_interrupt_on_an_idle_agent_is_a_no_op() {
    let model = scripted(vec![]);
    let agent = agent(&model, AgentState::default());
    let before = agent.state().await;
    let events = collect(agent.reply_stream(UserInterruptEvent::new("r".into()))).await;
    assert!(events.is_empty());
    assert_eq!(agent.state().await, before);
}

#[tokio::test]
async fn dropping_a_running_reply_interrupts_it_and_keeps_the_partial_text() {
    let model = scripted(vec![
        ScriptedTurn::text("a long answer that never ends").hang_after(2),
        ScriptedTurn::text("Fresh start."),
    ]);
    let agent = agent(&model, AgentState::default());
    let mut stream = agent.reply_stream(user("talk"));
    // Read until the first text delta arrives, then walk away.
    while let Some(event) = stream.next().await {
        if matches!(event, AgentEvent::TextBlockDelta(_)) {
            break;
        }
    }
    drop(stream);
    // The next reply waits for the interrupted one to settle, then runs.
    let reply = tokio::time::timeout(Duration::from_secs(10), agent.reply(user("again")))
        .await
        .expect("the agent accepts new input after an interruption")
        .unwrap();
    assert_eq!(reply.text(""), "Fresh start.");
    let state = agent.state().await;
    let interrupted = state
        .context
        .iter()
        .find(|m| m.finished_reason == Some(ReplyFinishedReason::Interrupted))
        .expect("the first reply ended interrupted");
    assert!(
        interrupted.text("").starts_with("a lo"),
        "{:?}",
        interrupted.text("")
    );
}

#[tokio::test]
async fn an_interrupt_while_a_tool_runs_closes_it() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"city": "Paris"}"#).hang_after(100),
    ]);
    let agent = agent(&model, state_allowing_weather());
    let stream = agent.reply_stream(user("hi"));
    stream.interrupt();
    let events = collect(stream).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("{:?}", types(&events))
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Interrupted);
    let state = agent.state().await;
    let reply = state.reply_msg().unwrap();
    assert_eq!(reply.tool_calls().count(), reply.tool_results().count());
}
