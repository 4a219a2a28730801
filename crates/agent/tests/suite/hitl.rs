//! Pausing for the user or an external executor, and resuming — also in a
//! new agent loaded from the saved state.

use oxiscope_agent::{AgentState, Awaiting};
use oxiscope_message::{
    AgentEvent, ConfirmResult, ExternalExecutionResultEvent, ReplyFinishedReason, ToolCallState,
    ToolResultBlock, ToolResultState, UserConfirmResultEvent,
};
use oxiscope_test_support::ScriptedTurn;
use pretty_assertions::assert_eq;

use super::common::*;

fn asked(events: &[AgentEvent]) -> (String, Vec<oxiscope_message::ToolCallBlock>) {
    match events.last() {
        Some(AgentEvent::RequireUserConfirm(e)) => (e.reply_id.clone(), e.tool_calls.clone()),
        other => panic!("expected a confirmation request, got {other:?}"),
    }
}

/// The user's answer denying `call`.
fn deny(reply_id: String, call: &oxiscope_message::ToolCallBlock) -> UserConfirmResultEvent {
    UserConfirmResultEvent::new(
        reply_id,
        vec![ConfirmResult {
            confirmed: false,
            tool_call: call.clone(),
            rules: None,
        }],
    )
}

#[tokio::test]
async fn an_ask_pauses_and_an_approval_with_rules_resumes_in_a_new_agent() {
    let model = scripted(vec![
        ScriptedTurn::text("I'll delete it.").and_tool_call(
            "c1",
            "delete_file",
            r#"{"path": "old.log"}"#,
        ),
        ScriptedTurn::text("Done."),
        ScriptedTurn::tool_call("c2", "delete_file", r#"{"path": "old.log"}"#),
        ScriptedTurn::text("Deleted again."),
    ]);
    let first = agent(&model, AgentState::default());
    let pause = collect(first.reply_stream(user("Delete old.log"))).await;
    assert!(
        !types(&pause).contains(&"REPLY_END"),
        "a parked reply has not ended"
    );
    let (reply_id, calls) = asked(&pause);
    assert_eq!(calls[0].state, ToolCallState::Asking);
    assert!(!calls[0].suggested_rules.is_empty());

    // Save, then load into a fresh agent (a new process would do the same).
    let saved = serde_json::to_string(&first.state().await).unwrap();
    let state: AgentState = serde_json::from_str(&saved).unwrap();
    assert_eq!(state.awaiting(), Some(Awaiting::Permission));
    let second = agent(&model, state);
    let answer = UserConfirmResultEvent::new(
        reply_id.clone(),
        vec![ConfirmResult {
            confirmed: true,
            tool_call: calls[0].clone(),
            rules: Some(calls[0].suggested_rules.clone()),
        }],
    );
    let resume = collect(second.reply_stream(answer.clone())).await;
    let t = types(&resume);
    assert_eq!(t.first(), Some(&"REPLY_START"));
    let Some(AgentEvent::ReplyStart(start)) = resume.first() else {
        panic!()
    };
    assert_eq!(start.reply_id, reply_id, "the resumed reply keeps its id");
    assert_eq!(
        &t[1..4],
        [
            "TOOL_RESULT_START",
            "TOOL_RESULT_TEXT_DELTA",
            "TOOL_RESULT_END"
        ]
    );
    assert_eq!(t.last(), Some(&"REPLY_END"));

    // The rebuilt message (pause, input event, resume) equals the state.
    let mut msg = rebuild(&pause, None);
    msg.append_event(&answer.into()).unwrap();
    let rebuilt = rebuild(&resume[1..], Some(msg));
    same_blocks(&rebuilt, &state_reply(&second).await);
    assert_eq!(
        rebuilt.finished_reason,
        Some(ReplyFinishedReason::Completed)
    );

    // The accepted rule allows the same call next time without asking.
    let again = collect(second.reply_stream(user("Once more"))).await;
    assert!(
        !types(&again).contains(&"REQUIRE_USER_CONFIRM"),
        "{:?}",
        types(&again)
    );
    assert_eq!(rebuild(&again, None).text(""), "Deleted again.");
}

#[tokio::test]
async fn a_denial_gives_the_model_a_denied_result() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "delete_file", r#"{"path": "a"}"#),
        ScriptedTurn::text("Okay, I won't."),
    ]);
    let agent = agent(&model, AgentState::default());
    let (reply_id, calls) = asked(&collect(agent.reply_stream(user("rm a"))).await);
    let answer = deny(reply_id, &calls[0]);
    let reply = agent.reply(answer).await.unwrap();
    let result = reply.tool_results().next().unwrap();
    assert_eq!(result.state, ToolResultState::Denied);
    assert_eq!(reply.text(""), "Okay, I won't.");
}

#[tokio::test]
async fn a_partial_answer_leaves_the_rest_asking_without_asking_again() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "delete_file", r#"{"path": "a"}"#).and_tool_call(
            "c2",
            "delete_file",
            r#"{"path": "b"}"#,
        ),
        ScriptedTurn::text("Both handled."),
    ]);
    let agent = agent(&model, AgentState::default());
    let (reply_id, calls) = asked(&collect(agent.reply_stream(user("rm a b"))).await);
    // c2's input differs, so its suggestion differs: both are asked.
    assert_eq!(calls.len(), 2);
    let first = UserConfirmResultEvent::new(
        reply_id.clone(),
        vec![ConfirmResult {
            confirmed: true,
            tool_call: calls[0].clone(),
            rules: None,
        }],
    );
    let events = collect(agent.reply_stream(first)).await;
    let t = types(&events);
    assert!(
        !t.contains(&"REQUIRE_USER_CONFIRM"),
        "no second request: {t:?}"
    );
    assert!(!t.contains(&"REPLY_END"), "still parked on c2: {t:?}");
    assert_eq!(agent.state().await.awaiting(), Some(Awaiting::Permission));
    let second = UserConfirmResultEvent::new(
        reply_id,
        vec![ConfirmResult {
            confirmed: true,
            tool_call: calls[1].clone(),
            rules: None,
        }],
    );
    let reply = agent.reply(second).await.unwrap();
    assert_eq!(reply.tool_results().count(), 2);
    assert_eq!(reply.text(""), "Both handled.");
}

#[tokio::test]
async fn an_external_tool_parks_until_its_result_arrives() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "open_url", r#"{"path": "https://example.com"}"#),
        ScriptedTurn::text("Opened."),
    ]);
    let agent = agent(&model, AgentState::default());
    let pause = collect(agent.reply_stream(user("open it"))).await;
    let t = types(&pause);
    assert_eq!(
        &t[t.len() - 2..],
        ["TOOL_RESULT_START", "REQUIRE_EXTERNAL_EXECUTION"]
    );
    let Some(AgentEvent::RequireExternalExecution(req)) = pause.last() else {
        panic!()
    };
    assert_eq!(
        agent.state().await.awaiting(),
        Some(Awaiting::ExternalResult)
    );
    let result = ToolResultBlock::new(
        "c1",
        "open_url",
        "Opened in a new tab.",
        ToolResultState::Success,
    );
    let reply = agent
        .reply(ExternalExecutionResultEvent::new(
            req.reply_id.clone(),
            vec![result],
        ))
        .await
        .unwrap();
    assert_eq!(
        reply.tool_results().next().unwrap().output.text(""),
        "Opened in a new tab."
    );
    assert_eq!(reply.text(""), "Opened.");
}

#[tokio::test]
async fn a_confirmation_for_another_reply_is_refused_and_changes_nothing() {
    let model = scripted(vec![ScriptedTurn::tool_call(
        "c1",
        "delete_file",
        r#"{"path": "a"}"#,
    )]);
    let agent = agent(&model, AgentState::default());
    let (_, calls) = asked(&collect(agent.reply_stream(user("rm a"))).await);
    let before = agent.state().await;
    let wrong = UserConfirmResultEvent::new(
        "not-the-reply".into(),
        vec![ConfirmResult {
            confirmed: true,
            tool_call: calls[0].clone(),
            rules: None,
        }],
    );
    let events = collect(agent.reply_stream(wrong)).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    assert_eq!(agent.state().await, before);
}

#[tokio::test]
async fn a_resume_that_does_not_fit_is_refused_once_and_changes_nothing() {
    let model = scripted(vec![ScriptedTurn::tool_call(
        "c1",
        "delete_file",
        r#"{"path": "old.log"}"#,
    )]);
    let agent = agent(&model, AgentState::default());
    let pause = collect(agent.reply_stream(user("Delete old.log"))).await;
    let (reply_id, calls) = asked(&pause);
    let before = agent.state().await;

    let mut stranger = calls[0].clone();
    stranger.id = "not-asked".into();
    let cases = [
        (
            UserConfirmResultEvent::new(
                reply_id.clone(),
                vec![ConfirmResult {
                    confirmed: true,
                    tool_call: stranger,
                    rules: None,
                }],
            ),
            "invalid input",
        ),
        (
            UserConfirmResultEvent::new("another-reply".to_owned(), Vec::new()),
            "is for reply",
        ),
    ];
    for (answer, why) in cases {
        let input = oxiscope_agent::ReplyInput::from(answer);
        let checked = before.check_input(&input).unwrap_err().to_string();
        assert!(checked.contains(why), "{checked}");
        let events = collect(agent.reply_stream(input)).await;
        // One REPLY_START, one REPLY_END with the same error, nothing else.
        assert_eq!(types(&events), ["REPLY_START", "REPLY_END"]);
        let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
            panic!()
        };
        assert!(end.error.as_ref().unwrap().message.contains(why), "{end:?}");
        assert_eq!(
            agent.state().await,
            before,
            "a refused input changed nothing"
        );
    }

    // External results while a confirmation is awaited: nothing is parked
    // for them.
    let external = ExternalExecutionResultEvent::new(reply_id, Vec::new());
    let refused = before.check_input(&external.into()).unwrap_err();
    assert!(
        refused.to_string().contains("nothing is waiting"),
        "{refused}"
    );
}

#[tokio::test]
async fn stop_on_reject_ends_the_reply_at_a_denial() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "delete_file", r#"{"path": "a"}"#),
        ScriptedTurn::text("Okay, I won't."),
    ]);
    let dynamic: std::sync::Arc<dyn oxiscope_model::DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .react_config(oxiscope_agent::ReActConfig {
            stop_on_reject: true,
            ..oxiscope_agent::ReActConfig::default()
        })
        .build()
        .unwrap();
    let (reply_id, calls) = asked(&collect(agent.reply_stream(user("rm a"))).await);
    let answer = deny(reply_id, &calls[0]);
    let events = collect(agent.reply_stream(answer)).await;
    match events.last() {
        Some(AgentEvent::ReplyEnd(end)) => {
            assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);
        }
        other => panic!("expected the reply to end, got {other:?}"),
    }
    // The denied call has its result and the model was not asked again.
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ToolResultEnd(end) if end.state == ToolResultState::Denied)));
    assert_eq!(
        model.remaining(),
        1,
        "the model must not be called after the denial"
    );
}
