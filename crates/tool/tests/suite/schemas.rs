//! Tool schemas against the reference: names, parameter names, types,
//! required lists and defaults.
//!
//! Normalisations (the only differences allowed): every `description`
//! string is removed on both sides (ours are our own words), and the
//! reference's AskUser and PowerShell tools are not built in here.

use oxiscope_message::PermissionBehavior;
use oxiscope_tool::{FunctionTool, ToolContext, ToolGroup, Toolkit};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::support::{builtin_toolkit, fixture, strip_descriptions};

const NOT_BUILT_IN: [&str; 2] = ["AskUser", "PowerShell"];

fn reference_by_name(list: &Value) -> Vec<(String, Value)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["function"]["name"].as_str().unwrap().to_owned(),
                strip_descriptions(s),
            )
        })
        .collect()
}

#[test]
fn builtin_schemas_match_the_reference_structure() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = builtin_toolkit(dir.path());
    let ours: Vec<(String, Value)> = toolkit
        .schemas(&ToolContext::default())
        .iter()
        .map(|s| {
            (
                s.function.name.clone(),
                strip_descriptions(&serde_json::to_value(s).unwrap()),
            )
        })
        .collect();
    let reference: Vec<(String, Value)> =
        reference_by_name(&fixture("tools/builtin_tool_schemas.json")["schemas"])
            .into_iter()
            .filter(|(n, _)| n != "get_weather" && !NOT_BUILT_IN.contains(&n.as_str()))
            .collect();
    assert_eq!(ours, reference);
}

#[test]
fn builtin_flags_match_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let toolkit = builtin_toolkit(dir.path());
    let attributes = &fixture("tools/builtin_tool_schemas.json")["tool_attributes"];
    for name in toolkit.tool_names() {
        let flags = toolkit.tool(name).unwrap().flags();
        let expected = &attributes[name];
        let ours = json!({
            "is_read_only": flags.read_only,
            "is_concurrency_safe": flags.concurrency_safe,
            "is_external_tool": flags.external,
            "is_state_injected": flags.state_injected,
            "is_mcp": flags.mcp,
        });
        let theirs = json!({
            "is_read_only": expected["is_read_only"],
            "is_concurrency_safe": expected["is_concurrency_safe"],
            "is_external_tool": expected["is_external_tool"],
            "is_state_injected": expected["is_state_injected"],
            "is_mcp": expected["is_mcp"],
        });
        assert_eq!(ours, theirs, "{name}");
    }
}

/// Get the current weather of a city.
#[derive(Deserialize, JsonSchema)]
struct Weather {
    /// The city name, e.g. "Paris".
    city: String,
    /// "celsius" or "fahrenheit".
    #[serde(default = "celsius")]
    unit: String,
}

fn celsius() -> String {
    "celsius".to_owned()
}

fn weather_tool() -> FunctionTool {
    FunctionTool::new("get_weather", |w: Weather| async move {
        format!("{}: 21 {}", w.city, w.unit)
    })
}

#[test]
fn a_typed_function_tool_has_the_reference_function_schema() {
    let tool = weather_tool();
    let mut toolkit = Toolkit::new();
    toolkit.register(tool).unwrap();
    let ours = serde_json::to_value(&toolkit.schemas(&ToolContext::default())[0]).unwrap();
    let reference = &fixture("tools/builtin_tool_schemas.json")["schemas"][0];
    assert_eq!(strip_descriptions(&ours), *reference);
    assert_eq!(
        ours["function"]["description"],
        "Get the current weather of a city."
    );
    assert_eq!(
        ours["function"]["parameters"]["properties"]["city"]["description"],
        "The city name, e.g. \"Paris\"."
    );
}

fn browser_toolkit() -> Toolkit {
    let dir = tempfile::tempdir().unwrap();
    let mut toolkit = Toolkit::new();
    let bash = builtin_toolkit(dir.path()).tool("Bash").unwrap().clone();
    toolkit.register_arc(bash, "basic").unwrap();
    toolkit
        .add_group(ToolGroup::new("browser", "Browser automation tools"))
        .unwrap();
    toolkit
        .register_in(
            "browser",
            weather_tool().with_permission(PermissionBehavior::Allow),
        )
        .unwrap();
    toolkit
}

#[test]
fn reset_tools_schemas_match_the_reference_with_and_without_the_group() {
    let toolkit = browser_toolkit();
    let reference = fixture("tools/tool_groups_schemas.json");
    let render = |ctx: &ToolContext| -> Value {
        strip_descriptions(&serde_json::to_value(toolkit.schemas(ctx)).unwrap())
    };
    assert_eq!(
        render(&ToolContext::default()),
        reference["no_groups_activated"]
    );
    let active = ToolContext {
        activated_groups: vec!["browser".into()],
        ..ToolContext::default()
    };
    assert_eq!(render(&active), reference["browser_activated"]);
    // The group description is what the model reads for the switch.
    let schemas = toolkit.schemas(&ToolContext::default());
    assert_eq!(
        schemas[0].function.parameters["properties"]["browser"]["description"],
        "Browser automation tools"
    );
}
