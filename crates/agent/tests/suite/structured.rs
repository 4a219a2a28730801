//! Structured output through the `GenerateStructuredOutput` tool.

use oxiscope_message::{ReplyFinishedReason, ToolResultState};
use oxiscope_test_support::ScriptedTurn;
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common::*;

fn schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"city": {"type": "string"},
           "population": {"type": "integer"}}, "required": ["city", "population"]})
}

#[tokio::test]
async fn an_invalid_submission_goes_back_to_the_model_and_the_valid_one_lands_on_the_reply() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("s1", "GenerateStructuredOutput", r#"{"city": "Paris"}"#),
        ScriptedTurn::text("Here you go.").and_tool_call(
            "s2",
            "GenerateStructuredOutput",
            r#"{"city": "Paris", "population": 2102650}"#,
        ),
    ]);
    let agent = agent(&model, Default::default());
    let reply = agent
        .reply_with(user("Paris as data"), Some(schema()))
        .await
        .unwrap();
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
    let output = serde_json::Value::Object(*reply.structured_output.clone().unwrap());
    assert_eq!(output, json!({"city": "Paris", "population": 2102650}));
    let results: Vec<_> = reply.tool_results().collect();
    assert_eq!(results[0].state, ToolResultState::Error);
    assert!(results[0].output.text("").contains("population"));
    assert_eq!(results[1].state, ToolResultState::Success);
    // The tool was offered with the schema as its input.
    let offered = &model.requests()[0].tools;
    let tool = offered
        .iter()
        .find(|t| t.function.name == "GenerateStructuredOutput")
        .unwrap();
    assert_eq!(tool.function.parameters, schema());
    assert_eq!(
        agent.state().await.reply_context.structured_output,
        reply.structured_output.map(|o| *o)
    );
}

#[tokio::test]
async fn after_max_iters_the_submission_is_forced_within_the_grace_rounds() {
    let model = scripted(vec![
        ScriptedTurn::text("Thinking about it."),
        ScriptedTurn::tool_call(
            "s1",
            "GenerateStructuredOutput",
            r#"{"city": "Rome", "population": 1}"#,
        ),
    ]);
    let agent = oxiscope_agent::Agent::builder("Friday", model.clone())
        .toolkit(toolkit())
        .react_config(oxiscope_agent::ReActConfig {
            max_iters: 1,
            ..Default::default()
        })
        .build()
        .unwrap();
    let events =
        collect(agent.reply_stream_with(user("Rome"), Some(schema()), CancellationToken::new()))
            .await;
    let reply = rebuild(&events, None);
    assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1]
            .tool_choice
            .as_ref()
            .map(|c| c.mode.as_str().to_owned()),
        Some("GenerateStructuredOutput".to_owned())
    );
    assert!(
        agent
            .state()
            .await
            .reply_context
            .structured_output
            .is_some()
    );
}
