//! Reply limits: a model that writes without end is cut off, the reply
//! ends with an error, and the session goes on.

use std::sync::Arc;

use oxiscope_agent::{Agent, AgentError, ReplyLimits, ReplyPart};
use oxiscope_message::{AgentEvent, ErrorType, ReplyFinishedReason, ToolResultState};
use oxiscope_model::{DynChatModel, ModelDelta};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;

use super::common::*;

fn limited(model: &Arc<ScriptedModel>, limits: ReplyLimits) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday, a helpful assistant.")
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .state(state_allowing_weather())
        .reply_limits(limits)
        .build()
        .unwrap()
}

fn reply_end(events: &[AgentEvent]) -> &oxiscope_message::ReplyEndEvent {
    match events.last() {
        Some(AgentEvent::ReplyEnd(end)) => end,
        other => panic!("the reply must end with REPLY_END, got {other:?}"),
    }
}

/// 200 deltas of 1 KiB each: 200 KiB of answer.
fn endless_text() -> ScriptedTurn {
    let kib = "x".repeat(1024);
    ScriptedTurn::deltas((0..200).map(|_| ModelDelta::Text(kib.clone())).collect())
}

#[tokio::test]
async fn a_reply_past_its_text_limit_ends_with_an_error_and_the_session_goes_on() {
    let model = Arc::new(ScriptedModel::new([
        endless_text(),
        ScriptedTurn::text("Short answer."),
    ]));
    let limits = ReplyLimits {
        max_text_bytes: 16 * 1024,
        ..ReplyLimits::default()
    };
    let agent = limited(&model, limits);
    let events = collect(agent.reply_stream(user("Write forever"))).await;
    let end = reply_end(&events);
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    let error = end.error.clone().unwrap();
    assert_eq!(error.kind, ErrorType::Upstream);
    let expected = AgentError::ReplyTooLarge {
        part: ReplyPart::Text,
        limit: 16 * 1024,
    };
    assert_eq!(error.message, expected.to_string());
    // The blocks are closed, and the reply keeps what fitted.
    let t = types(&events);
    assert_eq!(
        t.iter().filter(|x| **x == "TEXT_BLOCK_START").count(),
        t.iter().filter(|x| **x == "TEXT_BLOCK_END").count()
    );
    let rebuilt = rebuild(&events, None);
    let kept = rebuilt.text("").len();
    assert!(kept > 0 && kept <= 16 * 1024, "{kept} bytes kept");
    same_blocks(&rebuilt, &state_reply(&agent).await);

    // The next reply runs normally.
    let events = collect(agent.reply_stream(user("Now briefly"))).await;
    assert_eq!(
        reply_end(&events).finished_reason,
        ReplyFinishedReason::Completed
    );
    assert_eq!(rebuild(&events, None).text(""), "Short answer.");
}

#[tokio::test]
async fn a_tool_call_past_the_argument_limit_is_closed_with_an_error_and_never_runs() {
    let huge = format!(r#"{{"city": "{}"}}"#, "P".repeat(64 * 1024));
    let model = scripted(vec![
        ScriptedTurn::tool_call("call_1", "get_weather", huge),
        ScriptedTurn::text("Done."),
    ]);
    let limits = ReplyLimits {
        max_tool_input_bytes: 8 * 1024,
        ..ReplyLimits::default()
    };
    let agent = limited(&model, limits);
    let events = collect(agent.reply_stream(user("Weather?"))).await;
    let end = reply_end(&events);
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    let message = end.error.clone().unwrap().message;
    assert!(message.contains("tool-call arguments"), "{message}");
    let rebuilt = rebuild(&events, None);
    let call = rebuilt.tool_calls().next().expect("the cut call is kept");
    assert!(call.input.len() <= 8 * 1024);
    let result = rebuilt.tool_results().next().expect("the call is closed");
    assert_eq!(result.state, ToolResultState::Error);
    assert!(
        !result.output.text("").contains("degrees"),
        "the tool never ran"
    );
    // Only the one model call was made; the next reply uses the next turn.
    assert_eq!(model.requests().len(), 1);
    let events = collect(agent.reply_stream(user("Again"))).await;
    assert_eq!(
        reply_end(&events).finished_reason,
        ReplyFinishedReason::Completed
    );
}

#[tokio::test]
async fn the_limit_counts_every_model_call_of_the_reply() {
    // Each call writes 6 KiB (within the limit alone), then calls a tool;
    // the second call's text brings the reply past 10 KiB.
    let six = "y".repeat(6 * 1024);
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::text(six.clone()).and_tool_call("c1", "get_weather", r#"{"city": "A"}"#),
        ScriptedTurn::text(six).and_tool_call("c2", "get_weather", r#"{"city": "B"}"#),
        ScriptedTurn::text("never asked"),
    ]));
    let limits = ReplyLimits {
        max_text_bytes: 10 * 1024,
        ..ReplyLimits::default()
    };
    let agent = limited(&model, limits);
    let events = collect(agent.reply_stream(user("Go"))).await;
    assert_eq!(
        reply_end(&events).finished_reason,
        ReplyFinishedReason::Error
    );
    assert_eq!(model.requests().len(), 2);
    assert_eq!(model.remaining(), 1);
}
