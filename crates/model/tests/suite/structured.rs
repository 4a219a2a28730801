//! `generate_structured_output` driven by the scripted model.

use std::sync::LazyLock;

use oxiscope_message::{ContentBlock, Msg, RichContent, Role, ToolResultState};
use oxiscope_model::{
    AttemptFailure, ModelError, RepairError, STRUCTURED_OUTPUT_TOOL, StructuredError,
    StructuredOptions, ToolChoice, generate_structured_output,
};
use oxiscope_test_support::{RecordedChatRequest, ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::fixtures::load;

/// The schema of the reference scenario, as a pydantic model dumps it
/// (with `title` annotations, which are not sent to the model).
fn city_schema() -> Value {
    json!({
        "description": "Structured output schema used by scenario i.",
        "properties": {
            "city": {"title": "City", "type": "string"},
            "population": {"title": "Population", "type": "integer"},
        },
        "required": ["city", "population"],
        "title": "CityInfo",
        "type": "object",
    })
}

/// The conversation, built once so every test compares the same ids.
fn question() -> Vec<Msg> {
    static QUESTION: LazyLock<Vec<Msg>> = LazyLock::new(|| {
        vec![
            Msg::system("system", "You are Friday, a helpful assistant.").unwrap(),
            Msg::user("user", "Give me Paris as structured data.").unwrap(),
        ]
    });
    QUESTION.clone()
}

fn call(args: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call("call_1", STRUCTURED_OUTPUT_TOOL, args)
}

async fn generate(
    model: &ScriptedModel,
    options: StructuredOptions,
) -> Result<oxiscope_model::StructuredOutput, StructuredError> {
    generate_structured_output(model, &question(), &city_schema(), options).await
}

fn tool_results(request: &RecordedChatRequest) -> Vec<(String, String, ToolResultState)> {
    request
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => {
                let RichContent::Text(text) = &r.output else {
                    panic!("text output expected: {r:?}");
                };
                Some((r.id.to_string(), text.clone(), r.state))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_valid_first_answer_is_returned_with_its_usage() {
    let model = ScriptedModel::new([ScriptedTurn::text("Here you go.")
        .and_tool_call(
            "call_1",
            STRUCTURED_OUTPUT_TOOL,
            r#"{"city": "Paris", "population": 2102650}"#,
        )
        .with_usage(90, 20)])
    .with_chunk_chars(7);
    let out = generate(&model, StructuredOptions::default())
        .await
        .unwrap();
    assert_eq!(
        Value::Object(out.value),
        json!({"city": "Paris", "population": 2_102_650})
    );
    assert_eq!(out.attempts, 1);
    assert_eq!((out.usage.input_tokens, out.usage.output_tokens), (90, 20));
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].messages, question());
    assert_eq!(
        requests[0].tool_choice,
        Some(ToolChoice::tool(STRUCTURED_OUTPUT_TOOL))
    );
}

#[tokio::test]
async fn the_tool_has_the_reference_name_and_parameters() {
    let reference = load("streams/i_structured_output.1-reply.model_calls.json");
    let sent = &reference[0]["tools"][0]["function"];
    let model = ScriptedModel::new([call(r#"{"city": "Paris", "population": 1}"#)]);
    generate(&model, StructuredOptions::default())
        .await
        .unwrap();
    let tool = &model.requests()[0].tools[0];
    assert_eq!(tool.kind, "function");
    assert_eq!(tool.function.name, sent["name"].as_str().unwrap());
    assert_eq!(tool.function.parameters, sent["parameters"]);
}

#[tokio::test]
async fn repairable_arguments_are_repaired_without_a_retry() {
    let fenced = "```json\n{\"city\": \"Paris\", \"population\": \"2102650\"}\n```";
    let model = ScriptedModel::new([call(fenced)]);
    let out = generate(&model, StructuredOptions::default())
        .await
        .unwrap();
    assert_eq!(
        Value::Object(out.value),
        json!({"city": "Paris", "population": 2_102_650})
    );
    assert_eq!(out.attempts, 1);
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn invalid_arguments_are_retried_with_the_validation_error() {
    let model = ScriptedModel::new([
        call(r#"{"city": "Paris", "population": "lots"}"#).with_usage(90, 20),
        ScriptedTurn::tool_call(
            "call_2",
            STRUCTURED_OUTPUT_TOOL,
            r#"{"city": "Paris", "population": 2102650}"#,
        )
        .with_usage(130, 15),
    ]);
    let out = generate(&model, StructuredOptions::default())
        .await
        .unwrap();
    assert_eq!(out.attempts, 2);
    assert_eq!((out.usage.input_tokens, out.usage.output_tokens), (220, 35));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(tool_results(&requests[0]).is_empty());
    // The second request: the question, then the rejected call and its error result.
    assert_eq!(requests[1].messages.len(), 3);
    let answer = &requests[1].messages[2];
    assert_eq!(answer.role, Role::Assistant);
    let ContentBlock::ToolCall(rejected) = &answer.content[0] else {
        panic!("the rejected call comes first: {answer:?}");
    };
    assert_eq!(rejected.input, r#"{"city": "Paris", "population": "lots"}"#);
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    let (id, text, state) = &results[0];
    assert_eq!((id.as_str(), *state), ("call_1", ToolResultState::Error));
    assert!(text.contains("`/population`"), "{text}");
    assert!(text.contains("integer"), "{text}");
}

#[tokio::test]
async fn an_answer_without_the_tool_call_gets_a_reminder() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris has about two million people."),
        call(r#"{"city": "Paris", "population": 2102650}"#),
    ]);
    let out = generate(&model, StructuredOptions::default())
        .await
        .unwrap();
    assert_eq!(out.attempts, 2);
    let second = &model.requests()[1];
    assert_eq!(second.messages.len(), 4);
    assert_eq!(second.messages[2].role, Role::Assistant);
    let reminder = &second.messages[3];
    assert_eq!(reminder.role, Role::User);
    assert!(reminder.text("").contains(STRUCTURED_OUTPUT_TOOL));
}

#[tokio::test]
async fn always_invalid_ends_with_the_last_error_after_the_retries() {
    let bad =
        |n: u32| call(&format!(r#"{{"city": "Paris", "population": "x{n}"}}"#)).with_usage(10, 1);
    let model = ScriptedModel::new([bad(1), bad(2), bad(3), bad(4)]);
    let err = generate(&model, StructuredOptions::default().with_max_retries(2))
        .await
        .unwrap_err();
    let StructuredError::Exhausted {
        attempts,
        last,
        usage,
    } = &err
    else {
        panic!("expected Exhausted, got {err:?}");
    };
    assert_eq!(*attempts, 3);
    assert_eq!((usage.input_tokens, usage.output_tokens), (30, 3));
    let AttemptFailure::InvalidArguments {
        raw,
        error: RepairError::SchemaMismatch { violations },
        ..
    } = last
    else {
        panic!("expected invalid arguments, got {last:?}");
    };
    assert_eq!(raw, r#"{"city": "Paris", "population": "x3"}"#);
    assert_eq!(violations[0].path, "/population");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(model.remaining(), 1);
    assert!(err.to_string().contains("after 3 attempts"), "{err}");
}

#[tokio::test]
async fn the_default_allows_three_retries() {
    let bad = || call(r#"{"city": ["Paris"], "population": 1}"#);
    let model = ScriptedModel::new([bad(), bad(), bad(), bad(), bad()]);
    let err = generate(&model, StructuredOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, StructuredError::Exhausted { attempts: 4, .. }),
        "{err:?}"
    );
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn a_failing_call_is_a_model_error_with_the_usage_so_far() {
    let cut = ModelError::Stream {
        message: "cut".into(),
    };
    let model = ScriptedModel::new([
        call(r#"{"city": "Paris"}"#).with_usage(50, 5),
        call(r#"{"city": "Paris", "population": 1}"#).fail_after(0, cut.clone()),
    ]);
    let err = generate(&model, StructuredOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.usage().map(|u| u.input_tokens), Some(50));
    let StructuredError::Model { attempt, error, .. } = err else {
        panic!("expected a model error, got {err:?}");
    };
    assert_eq!((attempt, error), (2, cut));
}

#[tokio::test]
async fn an_exhausted_script_surfaces_as_a_model_error() {
    let model = ScriptedModel::new([]);
    let err = generate(&model, StructuredOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            StructuredError::Model {
                attempt: 1,
                error: ModelError::InvalidRequest { .. },
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn cancelling_interrupts_a_hanging_call() {
    let model = ScriptedModel::new([call(r#"{"city": "Paris", "population": 1}"#).hang_after(0)]);
    let cancel = CancellationToken::new();
    let options = StructuredOptions::default().with_cancel(cancel.clone());
    let run = generate(&model, options);
    let canceller = async {
        // Let the call start and block, then interrupt it.
        tokio::task::yield_now().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(run, canceller);
    assert!(
        matches!(result, Err(StructuredError::Interrupted { attempt: 1, .. })),
        "{result:?}"
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_schema_that_is_not_an_object_schema_is_refused_before_any_call() {
    let model = ScriptedModel::new([]);
    for schema in [
        json!({"type": "string"}),
        json!({"type": 7}),
        json!({"properties": {}}),
    ] {
        let err =
            generate_structured_output(&model, &question(), &schema, StructuredOptions::default())
                .await
                .unwrap_err();
        assert!(
            matches!(err, StructuredError::InvalidSchema { .. }),
            "{schema}: {err:?}"
        );
    }
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn a_custom_tool_name_is_used_and_forced() {
    let model = ScriptedModel::new([ScriptedTurn::tool_call(
        "c",
        "emit",
        r#"{"city": "A", "population": 1}"#,
    )]);
    let options = StructuredOptions::default()
        .with_tool_name("emit")
        .with_tool_description("d");
    generate(&model, options).await.unwrap();
    let request = &model.requests()[0];
    assert_eq!(request.tools[0].function.name, "emit");
    assert_eq!(request.tools[0].function.description, "d");
    assert_eq!(request.tool_choice, Some(ToolChoice::tool("emit")));
}
