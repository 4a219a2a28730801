//! The loop without pauses: text answers, tool rounds, errors, max_iters.

use oxiscope_message::{AgentEvent, ReplyFinishedReason, ToolResultState};
use oxiscope_model::ModelError;
use oxiscope_test_support::ScriptedTurn;
use pretty_assertions::assert_eq;

use super::common::*;

#[tokio::test]
async fn a_text_answer_streams_and_the_state_equals_the_rebuilt_message() {
    let model = scripted(vec![
        ScriptedTurn::text("Hello! How can I help?").with_usage(12, 6),
    ]);
    let agent = agent(&model, Default::default());
    let events = collect(agent.reply_stream(user("Hi"))).await;
    let t = types(&events);
    assert_eq!(t.first(), Some(&"REPLY_START"));
    assert_eq!(t.last(), Some(&"REPLY_END"));
    assert_eq!(t.iter().filter(|x| **x == "REPLY_END").count(), 1);
    assert!(t.contains(&"HINT_BLOCK"), "runtime state injected: {t:?}");
    assert!(t.contains(&"TEXT_BLOCK_DELTA"));
    let rebuilt = rebuild(&events, None);
    assert_eq!(rebuilt.text(""), "Hello! How can I help?");
    assert_eq!(
        rebuilt.finished_reason,
        Some(ReplyFinishedReason::Completed)
    );
    assert_eq!(
        rebuilt.usage.map(|u| (u.input_tokens, u.output_tokens)),
        Some((12, 6))
    );
    same_blocks(&rebuilt, &state_reply(&agent).await);
    // The model saw the system prompt first, then the user message.
    let request = &model.requests()[0];
    assert_eq!(
        request.messages[0].text(""),
        "You are Friday, a helpful assistant."
    );
    assert_eq!(request.messages[1].text(""), "Hi");
}

#[tokio::test]
async fn an_allowed_tool_call_runs_and_the_model_reads_its_result() {
    let model = scripted(vec![
        ScriptedTurn::text("Let me check.").and_tool_call(
            "call_1",
            "get_weather",
            r#"{"city": "Paris"}"#,
        ),
        ScriptedTurn::text("It is sunny in Paris."),
    ]);
    let agent = agent(&model, state_allowing_weather());
    let events = collect(agent.reply_stream(user("Weather in Paris?"))).await;
    let t = types(&events);
    let expected_tail = [
        "TOOL_CALL_END",
        "MODEL_CALL_END",
        "TOOL_RESULT_START",
        "TOOL_RESULT_TEXT_DELTA",
        "TOOL_RESULT_END",
        "MODEL_CALL_START",
    ];
    assert!(
        t.windows(expected_tail.len()).any(|w| w == expected_tail),
        "{t:?}"
    );
    let rebuilt = rebuild(&events, None);
    let result = rebuilt.tool_results().next().unwrap();
    assert_eq!(result.state, ToolResultState::Success);
    assert_eq!(result.output.text(""), "Paris: 21 degrees celsius, sunny");
    assert_eq!(
        rebuilt.finished_reason,
        Some(ReplyFinishedReason::Completed)
    );
    same_blocks(&rebuilt, &state_reply(&agent).await);
    // The second call carried the tool result.
    let second = &model.requests()[1];
    let reply = second.messages.last().unwrap();
    assert_eq!(reply.tool_results().count(), 1);
    assert_eq!(agent.state().await.reply_context.cur_iter, 2);
}

#[tokio::test]
async fn broken_arguments_and_unknown_tools_become_error_results_the_model_reads() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"town": "Paris"}"#)
            .and_tool_call("c2", "teleport", "{}"),
        ScriptedTurn::text("Sorry."),
    ]);
    let agent = agent(&model, state_allowing_weather());
    let events = collect(agent.reply_stream(user("?"))).await;
    let rebuilt = rebuild(&events, None);
    let results: Vec<_> = rebuilt.tool_results().collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.state == ToolResultState::Error));
    assert!(
        results[0].output.text("").contains("city"),
        "{:?}",
        results[0].output
    );
    assert!(results[1].output.text("").contains("teleport"));
    assert_eq!(
        rebuilt.finished_reason,
        Some(ReplyFinishedReason::Completed)
    );
}

#[tokio::test]
async fn max_iters_ends_with_a_summary_call_without_tools() {
    let call = |id: &str| ScriptedTurn::tool_call(id, "get_weather", r#"{"city": "Oslo"}"#);
    let model = scripted(vec![
        call("a"),
        call("b"),
        ScriptedTurn::text("Summary: sunny."),
    ]);
    let agent = oxiscope_agent::Agent::builder("Friday", model.clone())
        .toolkit(toolkit())
        .react_config(oxiscope_agent::ReActConfig {
            max_iters: 2,
            ..Default::default()
        })
        .state(state_allowing_weather())
        .build()
        .unwrap();
    let events = collect(agent.reply_stream(user("Oslo?"))).await;
    let t = types(&events);
    assert_eq!(&t[t.len() - 2..], ["EXCEED_MAX_ITERS", "REPLY_END"]);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[2]
            .tool_choice
            .as_ref()
            .map(|c| c.mode.as_str().to_owned()),
        Some("none".to_owned())
    );
    let rebuilt = rebuild(&events, None);
    assert_eq!(
        rebuilt.finished_reason,
        Some(ReplyFinishedReason::ExceedMaxIters)
    );
}

#[tokio::test]
async fn a_model_error_ends_the_reply_with_error_and_the_agent_stays_usable() {
    let model = scripted(vec![
        ScriptedTurn::error(ModelError::Provider {
            provider: "openai".into(),
            status: 401,
            code: Some("invalid_api_key".into()),
            message: "bad key".into(),
            request_id: None,
            retry_after: None,
        }),
        ScriptedTurn::text("Back."),
    ]);
    let agent = agent(&model, Default::default());
    let events = collect(agent.reply_stream(user("hi"))).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    assert_eq!(
        end.error.as_ref().map(|e| e.kind),
        Some(oxiscope_message::ErrorType::Authentication)
    );
    let reply = agent.reply(user("again")).await.unwrap();
    assert_eq!(reply.text(""), "Back.");
}

#[tokio::test]
async fn a_mid_stream_error_keeps_the_context_valid() {
    let model = scripted(vec![
        ScriptedTurn::text("partial answer")
            .and_tool_call("c1", "get_weather", r#"{"city": "X"}"#)
            .fail_after(
                2,
                ModelError::Stream {
                    message: "cut".into(),
                },
            ),
        ScriptedTurn::text("ok"),
    ]);
    let agent = agent(&model, state_allowing_weather());
    let events = collect(agent.reply_stream(user("hi"))).await;
    let rebuilt = rebuild(&events, None);
    assert_eq!(rebuilt.finished_reason, Some(ReplyFinishedReason::Error));
    let state = agent.state().await;
    let reply = state.reply_msg().unwrap();
    // Every tool call has a result.
    assert_eq!(reply.tool_calls().count(), reply.tool_results().count());
}

#[tokio::test]
async fn the_toolkit_skills_are_announced_in_the_system_prompt() {
    let model = scripted(vec![ScriptedTurn::text("ok")]);
    let mut toolkit = oxiscope_tool::Toolkit::new();
    toolkit
        .add_skills([oxiscope_tool::Skill::new(
            "release-notes",
            "Write release notes.",
            "# Steps",
        )])
        .unwrap();
    let agent = oxiscope_agent::Agent::builder("Friday", model.clone())
        .system_prompt("Base.")
        .toolkit(std::sync::Arc::new(toolkit))
        .build()
        .unwrap();
    agent.reply(user("hi")).await.unwrap();
    let system = model.requests()[0].messages[0].text("");
    assert!(system.starts_with("Base.\n\n"), "{system}");
    assert!(
        system.contains("release-notes") && system.contains("Write release notes."),
        "{system}"
    );
}
