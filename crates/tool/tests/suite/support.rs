//! Helpers shared by the test modules.

use std::path::Path;

use oxiscope_message::ToolResultState;
use oxiscope_permission::PathEnv;
use oxiscope_tool::{SessionState, ToolCallContext, ToolResponse, Toolkit, builtin_tools};
use serde_json::Value;

/// A reference file copied into the repository's fixtures.
pub(crate) use oxiscope_test_support::fixtures::load as fixture;

/// A toolkit with every built-in tool, judging paths relative to `dir`.
pub(crate) fn builtin_toolkit(dir: &Path) -> Toolkit {
    let mut toolkit = Toolkit::new();
    for tool in builtin_tools(&PathEnv::new(dir, None)) {
        toolkit
            .register_arc(tool, oxiscope_tool::BASIC_GROUP)
            .unwrap();
    }
    toolkit
}

/// A local call context working in `dir` with the given session.
pub(crate) fn ctx(dir: &Path, session: &SessionState) -> ToolCallContext {
    ToolCallContext::local(dir).with_session(session.clone())
}

/// Runs one call through the toolkit and adds up the chunks.
pub(crate) async fn run(
    toolkit: &Toolkit,
    name: &str,
    input: Value,
    ctx: ToolCallContext,
) -> ToolResponse {
    oxiscope_tool::collect(toolkit.call(name, &input.to_string(), ctx).await).await
}

/// Asserts the state and returns the text.
#[track_caller]
pub(crate) fn expect(response: &ToolResponse, state: ToolResultState) -> String {
    assert_eq!(
        response.state,
        state,
        "unexpected state; output: {}",
        response.text()
    );
    response.text()
}

/// Every `description` string removed, recursively.
pub(crate) fn strip_descriptions(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !(k.as_str() == "description" && v.is_string()))
                .map(|(k, v)| (k.clone(), strip_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_descriptions).collect()),
        other => other.clone(),
    }
}
