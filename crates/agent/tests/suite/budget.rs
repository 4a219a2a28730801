//! `ReplyBudgetControlMiddleware`: the weighted cost of a reply, the wrap-up
//! once it is spent, and the running total kept in the state.

use std::sync::Arc;

use oxiscope_agent::{Agent, AgentState, ReplyBudgetControlMiddleware};
use oxiscope_message::{
    AgentEvent, ConfirmResult, ContentBlock, Msg, ReplyFinishedReason, UserConfirmResultEvent,
};
use oxiscope_model::{DynChatModel, ToolChoice};
use oxiscope_test_support::{RecordedChatRequest, ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::*;

const HINT: &str = "Budget spent: answer now.";

fn budget(
    token_budget: f64,
    input_weight: f64,
    output_weight: f64,
) -> ReplyBudgetControlMiddleware {
    ReplyBudgetControlMiddleware {
        token_budget,
        input_token_weight: input_weight,
        output_token_weight: output_weight,
        prompt: HINT.to_owned(),
    }
}

fn budget_agent(
    model: &Arc<ScriptedModel>,
    state: AgentState,
    middleware: ReplyBudgetControlMiddleware,
) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .middleware(middleware)
        .state(state)
        .build()
        .unwrap()
}

/// The budget's hints in a message (the agent adds runtime-state hints of
/// its own).
fn hints(msg: &Msg) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Hint(h) if h.hint.text("") == HINT => Some(HINT.to_owned()),
            _ => None,
        })
        .collect()
}

/// The hints the model was sent in the last message of `request`.
fn sent_hints(request: &RecordedChatRequest) -> Vec<String> {
    request.messages.last().map(hints).unwrap_or_default()
}

/// Two weather lookups, then the answer; every call reports 50 input and
/// 30 output tokens.
fn three_turns() -> Arc<ScriptedModel> {
    scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"city": "Paris"}"#).with_usage(50, 30),
        ScriptedTurn::tool_call("c2", "get_weather", r#"{"city": "Rome"}"#).with_usage(50, 30),
        ScriptedTurn::text("Sunny in both.").with_usage(50, 30),
    ])
}

#[tokio::test]
async fn under_budget_nothing_changes_and_the_total_is_cleaned_up() {
    let model = three_turns();
    let agent = budget_agent(&model, state_allowing_weather(), budget(1_000.0, 1.0, 1.0));
    let events = collect(agent.reply_stream(user("Weather in Paris and Rome?"))).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("no end: {events:?}");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.tool_choice, None);
        assert!(sent_hints(request).is_empty());
    }
    let state = agent.state().await;
    assert!(hints(state.reply_msg().unwrap()).is_empty());
    assert!(
        !state
            .middle_context
            .contains_key(ReplyBudgetControlMiddleware::KEY),
        "the reply's total is removed when it ends: {:?}",
        state.middle_context
    );
}

#[tokio::test]
async fn over_budget_the_next_call_gets_no_tools_and_the_hint() {
    // First call: 50 * 1 + 30 * 2 = 110 >= 100.
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"city": "Paris"}"#).with_usage(50, 30),
        ScriptedTurn::text("Sunny in Paris; I stop here.").with_usage(50, 30),
    ]);
    let agent = budget_agent(&model, state_allowing_weather(), budget(100.0, 1.0, 2.0));
    let events = collect(agent.reply_stream(user("Weather in Paris and Rome?"))).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("no end: {events:?}");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tool_choice, None);
    assert!(sent_hints(&requests[0]).is_empty());
    assert_eq!(requests[1].tool_choice, Some(ToolChoice::none()));
    assert_eq!(sent_hints(&requests[1]), [HINT]);

    // The hint is part of the reply, and streamed.
    let hint_events: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::HintBlock(h) if h.hint.text("") == HINT => Some(HINT.to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(hint_events, [HINT]);
    let reply = state_reply(&agent).await;
    assert_eq!(hints(&reply), [HINT]);
    same_blocks(&rebuild(&events, None), &reply);
}

#[tokio::test]
async fn the_weights_decide_when_the_budget_is_spent() {
    // Same usage, output weight 1: 50 + 30 = 80 < 100 after one call, 160
    // after two.
    let model = three_turns();
    let agent = budget_agent(&model, state_allowing_weather(), budget(100.0, 1.0, 1.0));
    collect(agent.reply_stream(user("Weather in Paris and Rome?"))).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].tool_choice, None);
    assert_eq!(requests[2].tool_choice, Some(ToolChoice::none()));
    assert_eq!(sent_hints(&requests[2]), [HINT]);

    // Input weight 0: only the output counts (30 per call, 90 < 100).
    let model = three_turns();
    let agent = budget_agent(&model, state_allowing_weather(), budget(100.0, 0.0, 1.0));
    collect(agent.reply_stream(user("Weather in Paris and Rome?"))).await;
    assert!(model.requests().iter().all(|r| r.tool_choice.is_none()));
}

#[tokio::test]
async fn the_running_total_survives_a_pause_and_a_state_round_trip() {
    // delete_file asks; its call costs 60.
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "delete_file", r#"{"path": "a.log"}"#).with_usage(60, 0),
        ScriptedTurn::tool_call("c2", "get_weather", r#"{"city": "Oslo"}"#).with_usage(50, 0),
        ScriptedTurn::text("Deleted; and it is sunny in Oslo."),
    ]);
    let first = budget_agent(&model, state_allowing_weather(), budget(100.0, 1.0, 1.0));
    let pause = collect(first.reply_stream(user("Delete a.log, then the weather"))).await;
    let Some(AgentEvent::RequireUserConfirm(ask)) = pause.last() else {
        panic!("expected a confirmation request: {pause:?}");
    };
    let saved = serde_json::to_string(&first.state().await).unwrap();
    let state: AgentState = serde_json::from_str(&saved).unwrap();
    assert_eq!(
        state.middle_context[ReplyBudgetControlMiddleware::KEY],
        json!({ ask.reply_id.clone(): 60.0 })
    );
    assert_eq!(
        ReplyBudgetControlMiddleware::used(&state.middle_context, &ask.reply_id),
        60.0
    );

    // A new agent (as after a restart) resumes the reply: 60 + 50 >= 100.
    let second = budget_agent(&model, state, budget(100.0, 1.0, 1.0));
    let answer = UserConfirmResultEvent::new(
        ask.reply_id.clone(),
        vec![ConfirmResult {
            confirmed: true,
            tool_call: ask.tool_calls[0].clone(),
            rules: None,
        }],
    );
    let resume = collect(second.reply_stream(answer)).await;
    let Some(AgentEvent::ReplyEnd(end)) = resume.last() else {
        panic!("no end: {resume:?}");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].tool_choice, None, "60 is under the budget");
    assert_eq!(requests[2].tool_choice, Some(ToolChoice::none()));
    assert_eq!(sent_hints(&requests[2]), [HINT]);
}

#[tokio::test]
async fn a_new_reply_starts_from_zero() {
    let model = scripted(vec![
        ScriptedTurn::text("One.").with_usage(90, 0),
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"city": "Oslo"}"#).with_usage(90, 0),
        ScriptedTurn::text("Sunny.").with_usage(10, 0),
    ]);
    let agent = budget_agent(&model, state_allowing_weather(), budget(100.0, 1.0, 1.0));
    collect(agent.reply_stream(user("First"))).await;
    collect(agent.reply_stream(user("Second"))).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    // 90 in the first reply does not count in the second one.
    assert!(requests.iter().all(|r| r.tool_choice.is_none()));
}

#[test]
fn the_default_budget_weighs_tokens_alike_and_tells_the_model_to_wrap_up() {
    let b = ReplyBudgetControlMiddleware::new(500.0);
    assert_eq!(b.token_budget, 500.0);
    assert_eq!(b.input_token_weight, 1.0);
    assert_eq!(b.output_token_weight, 1.0);
    assert_eq!(b.prompt, ReplyBudgetControlMiddleware::DEFAULT_PROMPT);
    assert!(b.prompt.contains("<system-reminder>"));
    assert!(b.prompt.contains("do not call any more tools"));
}
