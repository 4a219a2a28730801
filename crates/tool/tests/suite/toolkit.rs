//! Registration, dispatch, function tools, groups and `reset_tools`.

use std::sync::Arc;

use oxiscope_message::{PermissionBehavior, ToolCallBlock, ToolResultState};
use oxiscope_permission::{PermissionContext, PermissionMode};
use oxiscope_tool::{
    Error, FunctionTool, SessionState, ToolCallContext, ToolChunk, ToolContext, ToolGroup, Toolkit,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::support::{expect, run};

/// Add two integers.
#[derive(Deserialize, JsonSchema)]
struct Add {
    /// Left operand.
    a: i64,
    /// Right operand.
    b: i64,
}

fn add() -> FunctionTool {
    FunctionTool::new("add", |x: Add| async move { (x.a + x.b).to_string() })
}

/// Divide two integers.
#[derive(Deserialize, JsonSchema)]
struct Div {
    /// Dividend.
    a: i64,
    /// Divisor.
    b: i64,
}

fn div() -> FunctionTool {
    FunctionTool::new("div", |x: Div| async move {
        if x.b == 0 {
            Err("division by zero")
        } else {
            Ok((x.a / x.b).to_string())
        }
    })
}

fn ctx(session: &SessionState) -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir()).with_session(session.clone())
}

#[tokio::test]
async fn a_function_tool_gets_repaired_typed_arguments() {
    let mut toolkit = Toolkit::new();
    toolkit.register(add()).unwrap();
    let session = SessionState::default();
    let response = run(&toolkit, "add", json!({"a": "40", "b": 2}), ctx(&session)).await;
    assert_eq!(expect(&response, ToolResultState::Success), "42");
}

#[tokio::test]
async fn a_function_returning_err_gives_an_error_result() {
    let mut toolkit = Toolkit::new();
    toolkit.register(div()).unwrap();
    let call = ToolCallBlock::new("call-7", "div", r#"{"a": 1, "b": 0}"#);
    let block = toolkit.execute(&call, ctx(&SessionState::default())).await;
    assert_eq!(block.state, ToolResultState::Error);
    assert_eq!(block.output.text(""), "division by zero");
    assert_eq!((block.id.as_str(), block.name.as_str()), ("call-7", "div"));
}

#[test]
fn function_tools_ask_by_default_and_can_be_allowed() {
    let mut toolkit = Toolkit::new();
    toolkit.register(add()).unwrap();
    toolkit
        .register(
            FunctionTool::new("add2", |x: Add| async move { (x.a + x.b).to_string() })
                .with_permission(PermissionBehavior::Allow),
        )
        .unwrap();
    let perm = PermissionContext::new(PermissionMode::Default);
    let input = json!({"a": 1, "b": 2});
    assert_eq!(
        toolkit.decide("add", &input, &perm).unwrap().behavior,
        PermissionBehavior::Ask
    );
    assert_eq!(
        toolkit.decide("add2", &input, &perm).unwrap().behavior,
        PermissionBehavior::Allow
    );
    assert!(toolkit.decide("nope", &input, &perm).is_none());
}

#[test]
fn registration_rejects_clashes_and_unknown_groups() {
    let mut toolkit = Toolkit::new();
    toolkit.register(add()).unwrap();
    assert!(matches!(toolkit.register(add()), Err(Error::DuplicateTool { name }) if name == "add"));
    assert!(matches!(
        toolkit.register_in("web", div()),
        Err(Error::UnknownGroup { .. })
    ));
    assert!(matches!(
        toolkit.add_group(ToolGroup::new("basic", "x")),
        Err(Error::DuplicateGroup { .. })
    ));
    toolkit.add_group(ToolGroup::new("web", "x")).unwrap();
    assert!(matches!(
        toolkit.add_group(ToolGroup::new("web", "y")),
        Err(Error::DuplicateGroup { .. })
    ));
}

fn grouped_toolkit() -> Toolkit {
    let mut toolkit = Toolkit::new();
    toolkit.register(add()).unwrap();
    toolkit
        .add_group(
            ToolGroup::new("math", "More arithmetic").with_instructions("Never divide by zero."),
        )
        .unwrap();
    toolkit
        .add_group(ToolGroup::new("web", "Web access").with_instructions("Cite sources."))
        .unwrap();
    toolkit.register_in("math", div()).unwrap();
    toolkit
}

fn names(toolkit: &Toolkit, context: &ToolContext) -> Vec<String> {
    toolkit
        .schemas(context)
        .into_iter()
        .map(|s| s.function.name)
        .collect()
}

#[tokio::test]
async fn reset_tools_sets_the_final_state_and_returns_new_instructions() {
    let toolkit = grouped_toolkit();
    let session = SessionState::default();
    assert_eq!(
        names(&toolkit, &ToolContext::default()),
        ["reset_tools", "add"]
    );

    // A tool of an inactive group is refused.
    let refused = run(&toolkit, "div", json!({"a": 4, "b": 2}), ctx(&session)).await;
    assert!(expect(&refused, ToolResultState::Error).starts_with(
        "ToolGroupInactiveError: The tool 'div' in group 'math' is currently inactive."
    ));

    let on = run(
        &toolkit,
        "reset_tools",
        json!({"math": true, "web": true}),
        ctx(&session),
    )
    .await;
    let text = expect(&on, ToolResultState::Success);
    assert!(
        text.contains("Never divide by zero.") && text.contains("Cite sources."),
        "{text}"
    );
    let state = session.tool_context().lock().await.clone();
    assert_eq!(state.activated_groups, ["math", "web"]);
    assert_eq!(names(&toolkit, &state), ["reset_tools", "add", "div"]);
    let divided = run(&toolkit, "div", json!({"a": 4, "b": 2}), ctx(&session)).await;
    assert_eq!(expect(&divided, ToolResultState::Success), "2");

    // Only `web` is listed: `math` is switched off; no instructions are new.
    let again = run(&toolkit, "reset_tools", json!({"web": true}), ctx(&session)).await;
    let text = expect(&again, ToolResultState::Success);
    assert!(
        !text.contains("Never divide") && !text.contains("Cite sources."),
        "{text}"
    );
    assert!(text.contains("Switched off: math"), "{text}");
    assert_eq!(
        session.tool_context().lock().await.activated_groups,
        ["web"]
    );

    // An empty input switches everything off.
    let off = run(&toolkit, "reset_tools", json!({}), ctx(&session)).await;
    expect(&off, ToolResultState::Success);
    assert!(
        session
            .tool_context()
            .lock()
            .await
            .activated_groups
            .is_empty()
    );
}

#[tokio::test]
async fn reset_tools_rejects_unknown_groups_without_changing_anything() {
    let toolkit = grouped_toolkit();
    let session = SessionState::default();
    run(
        &toolkit,
        "reset_tools",
        json!({"math": true}),
        ctx(&session),
    )
    .await;
    let bad = run(
        &toolkit,
        "reset_tools",
        json!({"mail": true}),
        ctx(&session),
    )
    .await;
    assert!(expect(&bad, ToolResultState::Error).contains("mail"));
    assert_eq!(
        session.tool_context().lock().await.activated_groups,
        ["math"]
    );
    let bad_type = run(
        &toolkit,
        "reset_tools",
        json!({"math": "maybe"}),
        ctx(&session),
    )
    .await;
    expect(&bad_type, ToolResultState::Error);
}

#[tokio::test]
async fn one_toolkit_serves_sessions_with_different_groups() {
    let toolkit = Arc::new(grouped_toolkit());
    let (a, b) = (SessionState::default(), SessionState::default());
    run(&toolkit, "reset_tools", json!({"math": true}), ctx(&a)).await;
    let handles: Vec<_> = [
        (a.clone(), ToolResultState::Success),
        (b.clone(), ToolResultState::Error),
    ]
    .into_iter()
    .map(|(session, want)| {
        let toolkit = Arc::clone(&toolkit);
        tokio::spawn(async move {
            let r = run(&toolkit, "div", json!({"a": 9, "b": 3}), ctx(&session)).await;
            assert_eq!(r.state, want);
        })
    })
    .collect();
    for h in handles {
        h.await.unwrap();
    }
    assert!(b.tool_context().lock().await.activated_groups.is_empty());
}

#[tokio::test]
async fn a_streaming_tool_chunks_are_added_up_in_order() {
    #[derive(Debug)]
    struct Counter;
    impl oxiscope_tool::Tool for Counter {
        fn name(&self) -> &str {
            "count"
        }
        fn description(&self) -> &str {
            "counts"
        }
        fn input_schema(&self) -> &serde_json::Value {
            static S: std::sync::LazyLock<serde_json::Value> =
                std::sync::LazyLock::new(|| json!({"type": "object", "properties": {}}));
            &S
        }
        fn call(&self, _: serde_json::Value, _: ToolCallContext) -> oxiscope_tool::ToolStream {
            Box::pin(futures_util::stream::iter(vec![
                ToolChunk::partial("1 "),
                ToolChunk::partial("2 "),
                ToolChunk::text("3").with_metadata("n", 3),
                ToolChunk::text("never seen"),
            ]))
        }
    }
    let mut toolkit = Toolkit::new();
    toolkit.register(Counter).unwrap();
    let response = run(&toolkit, "count", json!({}), ctx(&SessionState::default())).await;
    assert_eq!(expect(&response, ToolResultState::Success), "1 2 3");
    assert_eq!(response.metadata["n"], json!(3));
}
