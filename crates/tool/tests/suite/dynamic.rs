//! Dynamic tool sources: snapshot swaps, the collision rule, schemas,
//! argument preparation, permissions and calls of dynamic tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxiscope_message::ToolResultState;
use oxiscope_permission::{PermissionContext, PermissionMode};
use oxiscope_tool::{
    BASIC_GROUP, DynamicTools, Error, FunctionTool, SessionState, Tool, ToolCallContext, ToolChunk,
    ToolContext, ToolGroup, ToolSet, ToolSource, ToolStream, Toolkit,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::support::{expect, run};

/// Two integers.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    /// Left operand.
    a: i64,
    /// Right operand.
    b: i64,
}

/// A tool answering `{label}: a+b`, under any name.
fn adder(name: &str, label: &'static str) -> Arc<dyn Tool> {
    Arc::new(FunctionTool::new(name, move |x: Pair| async move {
        format!("{label}: {}", x.a + x.b)
    }))
}

/// A tool that counts how often its input schema is read.
#[derive(Debug)]
struct Probe {
    name: String,
    schema: Value,
    reads: Arc<AtomicUsize>,
}

impl Probe {
    fn shared(name: &str, schema: Value) -> (Arc<dyn Tool>, Arc<AtomicUsize>) {
        let reads = Arc::new(AtomicUsize::new(0));
        let probe = Self {
            name: name.to_owned(),
            schema,
            reads: reads.clone(),
        };
        (Arc::new(probe), reads)
    }
}

impl Tool for Probe {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "Echoes its input."
    }

    fn input_schema(&self) -> &Value {
        self.reads.fetch_add(1, Ordering::SeqCst);
        &self.schema
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        Box::pin(futures_util::stream::once(async move {
            ToolChunk::text(input.to_string()).with_state(ToolResultState::Success)
        }))
    }
}

fn ctx() -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir()).with_session(SessionState::default())
}

fn names(toolkit: &Toolkit, context: &ToolContext) -> Vec<String> {
    toolkit
        .schemas(context)
        .into_iter()
        .map(|s| s.function.name)
        .collect()
}

fn basic() -> ToolContext {
    ToolContext::default()
}

#[tokio::test]
async fn a_swapped_snapshot_changes_schemas_lookups_and_calls() {
    let dynamic = DynamicTools::new();
    let mut toolkit = Toolkit::new();
    toolkit
        .register_arc(adder("static_add", "static"), BASIC_GROUP)
        .unwrap();
    toolkit
        .register_source(Arc::new(dynamic.clone()), BASIC_GROUP)
        .unwrap();
    let toolkit = Arc::new(toolkit);
    assert_eq!(names(&toolkit, &basic()), ["static_add"]);
    assert!(toolkit.tool("plus").is_none());

    dynamic.replace([adder("plus", "first")]);
    assert_eq!(names(&toolkit, &basic()), ["static_add", "plus"]);
    assert_eq!(toolkit.tool("plus").unwrap().name(), "plus");
    assert_eq!(toolkit.all_tool_names(), ["static_add", "plus"]);
    // tool_names() stays the static list.
    assert_eq!(toolkit.tool_names(), ["static_add"]);
    let response = run(&toolkit, "plus", json!({"a": "2", "b": 3}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "first: 5");

    // A new snapshot with a different tool of the same name replaces it.
    dynamic.replace([adder("plus", "second"), adder("more", "more")]);
    assert_eq!(names(&toolkit, &basic()), ["static_add", "plus", "more"]);
    let response = run(&toolkit, "plus", json!({"a": 1, "b": 1}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "second: 2");

    dynamic.clear();
    assert_eq!(names(&toolkit, &basic()), ["static_add"]);
    assert!(toolkit.tool("plus").is_none());
    let response = run(&toolkit, "plus", json!({"a": 1, "b": 1}), ctx()).await;
    let text = expect(&response, ToolResultState::Error);
    assert!(
        text.starts_with("ToolNotFoundError: The tool named 'plus' doesn't exist."),
        "{text}"
    );
    assert!(text.contains("static_add"), "{text}");
}

#[tokio::test]
async fn static_tools_win_collisions_then_the_earlier_source() {
    let first = DynamicTools::with_tools([adder("add", "first-source"), adder("mul", "first")]);
    let second = DynamicTools::with_tools([adder("mul", "second"), adder("sub", "second")]);
    let mut toolkit = Toolkit::new();
    toolkit
        .register_source(Arc::new(first.clone()), BASIC_GROUP)
        .unwrap();
    toolkit
        .register_source(Arc::new(second.clone()), BASIC_GROUP)
        .unwrap();
    // A static tool registered after the source still wins.
    toolkit
        .register_arc(adder("add", "static"), BASIC_GROUP)
        .unwrap();
    for _ in 0..2 {
        assert_eq!(names(&toolkit, &basic()), ["add", "mul", "sub"]);
    }
    let response = run(&toolkit, "add", json!({"a": 1, "b": 2}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "static: 3");
    let response = run(&toolkit, "mul", json!({"a": 1, "b": 2}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "first: 3");

    // When the first source drops `mul`, the second one's shows.
    first.replace([adder("add", "first-source")]);
    assert_eq!(names(&toolkit, &basic()), ["add", "mul", "sub"]);
    let response = run(&toolkit, "mul", json!({"a": 1, "b": 2}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "second: 3");

    // A dynamic tool can never shadow reset_tools.
    toolkit
        .add_group(ToolGroup::new("extra", "Extra tools"))
        .unwrap();
    second.replace([adder("reset_tools", "sneaky")]);
    assert_eq!(names(&toolkit, &basic()), ["reset_tools", "add"]);
    let reset = toolkit.tool("reset_tools").unwrap();
    assert!(reset.description().contains("tool groups"));
}

#[tokio::test]
async fn dynamic_arguments_are_repaired_validated_and_judged() {
    let dynamic = DynamicTools::with_tools([adder("plus", "dyn")]);
    let mut toolkit = Toolkit::new();
    toolkit
        .register_source(Arc::new(dynamic), BASIC_GROUP)
        .unwrap();
    assert_eq!(
        toolkit
            .prepare("plus", r#"{"a": "4", "b": 5.0}"#, &basic())
            .unwrap(),
        json!({"a": 4, "b": 5})
    );
    let error = toolkit
        .prepare("plus", r#"{"a": "four"}"#, &basic())
        .unwrap_err();
    let text = error.text_content();
    assert!(text.contains("Invalid arguments for tool `plus`"), "{text}");
    let perm = PermissionContext::new(PermissionMode::Default);
    assert!(
        toolkit
            .decide("plus", &json!({"a": 1, "b": 2}), &perm)
            .is_some()
    );
    assert!(toolkit.decide("minus", &json!({}), &perm).is_none());
}

#[test]
fn argument_schemas_are_compiled_once_per_snapshot() {
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    });
    let (probe, reads) = Probe::shared("probe", schema);
    let dynamic = DynamicTools::with_tools([probe]);
    let compiled = reads.load(Ordering::SeqCst);
    assert!(compiled >= 1);
    let mut toolkit = Toolkit::new();
    toolkit
        .register_source(Arc::new(dynamic), BASIC_GROUP)
        .unwrap();
    for i in 0..50 {
        let value = toolkit
            .prepare("probe", &format!(r#"{{"text": {i}}}"#), &basic())
            .unwrap();
        assert_eq!(value, json!({"text": i.to_string()}));
    }
    assert!(toolkit.prepare("probe", "{}", &basic()).is_err());
    assert_eq!(reads.load(Ordering::SeqCst), compiled);
}

#[tokio::test]
async fn a_source_in_a_group_is_hidden_until_the_group_is_active() {
    let dynamic = DynamicTools::with_tools([adder("plus", "grouped")]);
    let mut toolkit = Toolkit::new();
    assert!(matches!(
        toolkit.register_source(Arc::new(dynamic.clone()), "remote"),
        Err(Error::UnknownGroup { name }) if name == "remote"
    ));
    toolkit
        .add_group(ToolGroup::new("remote", "Remote tools"))
        .unwrap();
    toolkit
        .register_source(Arc::new(dynamic), "remote")
        .unwrap();
    assert_eq!(names(&toolkit, &basic()), ["reset_tools"]);
    let error = toolkit.prepare("plus", "{}", &basic()).unwrap_err();
    assert_eq!(
        error.text_content(),
        "ToolGroupInactiveError: The tool 'plus' in group 'remote' is currently inactive. You \
         should first activate the group by calling the 'reset_tools' tool."
    );
    let active = ToolContext {
        activated_groups: vec!["remote".to_owned()],
        ..ToolContext::default()
    };
    assert_eq!(names(&toolkit, &active), ["reset_tools", "plus"]);
    assert!(
        toolkit
            .prepare("plus", r#"{"a": 1, "b": 2}"#, &active)
            .is_ok()
    );

    // Calls read the session's active groups.
    let session = SessionState::default();
    let call = |session: &SessionState| {
        ToolCallContext::local(std::env::temp_dir()).with_session(session.clone())
    };
    let response = run(&toolkit, "plus", json!({"a": 1, "b": 2}), call(&session)).await;
    expect(&response, ToolResultState::Error);
    session
        .tool_context()
        .lock()
        .await
        .activated_groups
        .push("remote".to_owned());
    let response = run(&toolkit, "plus", json!({"a": 1, "b": 2}), call(&session)).await;
    assert_eq!(expect(&response, ToolResultState::Success), "grouped: 3");
}

#[test]
fn a_tool_set_leaves_out_broken_and_repeated_tools() {
    let (broken, _) = Probe::shared("broken", json!({"type": 12}));
    let set = ToolSet::new([
        adder("plus", "a"),
        broken,
        adder("plus", "b"),
        adder("minus", "c"),
    ]);
    assert_eq!(set.names(), ["plus", "minus"]);
    assert_eq!(set.len(), 2);
    assert!(!set.is_empty());
    assert!(set.get("broken").is_none());
    let rejected: Vec<String> = set.rejected().iter().map(ToString::to_string).collect();
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(rejected[0].contains("`broken` is invalid"), "{rejected:?}");
    assert!(rejected[1].contains("`plus` is already"), "{rejected:?}");
    assert!(ToolSet::empty().is_empty());
}

#[test]
fn an_unchanged_source_keeps_its_snapshot_and_clones_share_it() {
    let dynamic = DynamicTools::new();
    let other = dynamic.clone();
    let before = dynamic.snapshot();
    assert!(Arc::ptr_eq(&before, &dynamic.snapshot()));
    let published = other.replace([adder("plus", "x")]);
    let after = dynamic.snapshot();
    assert!(Arc::ptr_eq(&published, &after));
    assert!(!Arc::ptr_eq(&before, &after));
    assert_eq!(after.names(), ["plus"]);
    let debug = format!("{dynamic:?}");
    assert!(debug.contains("plus"), "{debug}");
}

#[test]
fn readers_never_see_a_torn_set_while_another_thread_swaps() {
    let dynamic = DynamicTools::new();
    let mut toolkit = Toolkit::new();
    toolkit
        .register_source(Arc::new(dynamic.clone()), BASIC_GROUP)
        .unwrap();
    let toolkit = Arc::new(toolkit);
    let sets = [
        vec!["a", "b"],
        vec!["c"],
        vec!["d", "e", "f"],
        Vec::<&str>::new(),
    ];
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            for round in 0..200 {
                let names = &sets[round % sets.len()];
                dynamic.replace(names.iter().map(|n| adder(n, "t")));
            }
        });
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..200 {
                    let seen = names(&toolkit, &basic());
                    assert!(
                        sets.iter().any(|s| s.as_slice() == seen.as_slice()),
                        "{seen:?}"
                    );
                }
            });
        }
        writer.join().unwrap();
    });
}
