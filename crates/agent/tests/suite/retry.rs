//! The model call's one retry layer: `max_retries` with backoff and
//! `Retry-After`, then the fallback model; an interrupt during a wait.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_agent::{Agent, ModelConfig, RETRY_BASE_DELAY};
use oxiscope_message::{AgentEvent, ReplyFinishedReason};
use oxiscope_model::{DynChatModel, ModelError};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;

use super::common::*;

fn refused(status: u16, retry_after: Option<Duration>) -> ScriptedTurn {
    ScriptedTurn::error(ModelError::Provider {
        provider: "scripted".to_owned(),
        status,
        code: None,
        message: "refused".to_owned(),
        request_id: None,
        retry_after,
    })
}

fn agent_with(
    model: &Arc<ScriptedModel>,
    fallback: Option<&Arc<ScriptedModel>>,
    max_retries: u32,
) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let mut builder = Agent::builder("Friday", dynamic).model_config(ModelConfig { max_retries });
    if let Some(f) = fallback {
        let f: Arc<dyn DynChatModel> = f.clone();
        builder = builder.fallback_model(f);
    }
    builder.build().unwrap()
}

fn end_reason(events: &[AgentEvent]) -> Option<ReplyFinishedReason> {
    match events.last() {
        Some(AgentEvent::ReplyEnd(e)) => Some(e.finished_reason),
        _ => None,
    }
}

#[tokio::test(start_paused = true)]
async fn retryable_failures_are_retried_within_the_budget_with_backoff() {
    let model = scripted(vec![
        refused(503, None),
        refused(503, None),
        ScriptedTurn::text("Third time lucky."),
    ]);
    let agent = agent_with(&model, None, 2);
    let started = tokio::time::Instant::now();
    let events = collect(agent.reply_stream(user("Hi"))).await;
    let waited = started.elapsed();
    assert_eq!(end_reason(&events), Some(ReplyFinishedReason::Completed));
    let t = types(&events);
    assert_eq!(t.iter().filter(|x| **x == "MODEL_CALL_START").count(), 3);
    assert_eq!(t.iter().filter(|x| **x == "MODEL_CALL_END").count(), 3);
    assert_eq!(rebuild(&events, None).text(""), "Third time lucky.");
    // Backoff: at least half of 1x and 2x the base delay (jitter).
    assert!(
        waited >= RETRY_BASE_DELAY / 2 + RETRY_BASE_DELAY,
        "{waited:?}"
    );
    assert!(waited <= RETRY_BASE_DELAY * 3, "{waited:?}");
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured_and_the_budget_is_not_exceeded() {
    let model = scripted(vec![
        refused(429, Some(Duration::from_secs(7))),
        refused(429, Some(Duration::from_secs(7))),
        ScriptedTurn::text("never asked"),
    ]);
    let agent = agent_with(&model, None, 1);
    let started = tokio::time::Instant::now();
    let events = collect(agent.reply_stream(user("Hi"))).await;
    assert!(started.elapsed() >= Duration::from_secs(7));
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(end_reason(&events), Some(ReplyFinishedReason::Error));
    assert_eq!(model.requests().len(), 2, "one call and one retry");
    assert_eq!(rebuild(&events, None), state_reply(&agent).await);
}

#[tokio::test(start_paused = true)]
async fn a_failure_retrying_cannot_fix_goes_to_the_fallback_at_once() {
    let model = scripted(vec![refused(400, None), ScriptedTurn::text("unused")]);
    let fallback = scripted(vec![ScriptedTurn::text("From the fallback.")]);
    let agent = agent_with(&model, Some(&fallback), 3);
    let started = tokio::time::Instant::now();
    let events = collect(agent.reply_stream(user("Hi"))).await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(end_reason(&events), Some(ReplyFinishedReason::Completed));
    assert_eq!(model.requests().len(), 1);
    assert_eq!(fallback.requests().len(), 1);
    assert_eq!(rebuild(&events, None).text(""), "From the fallback.");
}

#[tokio::test(start_paused = true)]
async fn an_interrupt_during_a_retry_wait_ends_the_reply_as_interrupted() {
    let model = scripted(vec![
        refused(429, Some(Duration::from_secs(20))),
        ScriptedTurn::text("never asked"),
    ]);
    let agent = agent_with(&model, None, 3);
    let mut stream = agent.reply_stream(user("Hi"));
    let first = stream.next().await;
    assert!(matches!(first, Some(AgentEvent::ReplyStart(_))));
    tokio::time::sleep(Duration::from_secs(1)).await;
    stream.interrupt();
    let mut events = vec![first.unwrap()];
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    assert_eq!(end_reason(&events), Some(ReplyFinishedReason::Interrupted));
    assert_eq!(model.requests().len(), 1);
    assert_eq!(rebuild(&events, None), state_reply(&agent).await);
}
