//! What AgentScope's web UI builds from our answers: the agent form from
//! `GET /agent/schema/v2` (against AgentScope 2.0.11's `AgentData` schema,
//! `$ref`s inlined and prose blanked, in
//! `fixtures/agentscope-2.0.11/agent_schema_v2.json`), and the CORS
//! preflight answers a browser caches.

use oxiscope_permission::PermissionMode;
use oxiscope_server::{AuthMode, TenantPolicy};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::common::Harness;

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/agentscope-2.0.11/agent_schema_v2.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Defaults worded by each implementation (prompts, the interruption
/// reply); the fixture blanks them.
const PROSE_DEFAULTS: &[&str] = &[
    "compression_prompt",
    "summary_template",
    "interruption_message",
];

/// `schema` with every description blanked (after checking it says
/// something) and worded defaults blanked, as the fixture is.
fn blank_prose(schema: &Value, name: Option<&str>) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let value = match (key.as_str(), value) {
                    ("description", Value::String(text)) => {
                        assert!(!text.trim().is_empty(), "empty description of {name:?}");
                        json!("")
                    }
                    ("default", Value::String(_))
                        if name.is_some_and(|n| PROSE_DEFAULTS.contains(&n)) =>
                    {
                        json!("")
                    }
                    ("properties", Value::Object(props)) => Value::Object(
                        props
                            .iter()
                            .map(|(k, v)| (k.clone(), blank_prose(v, Some(k))))
                            .collect(),
                    ),
                    (_, other) => blank_prose(other, None),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| blank_prose(v, None)).collect()),
        other => other.clone(),
    }
}

/// The property names of every object schema, depth first, in order (the
/// form shows fields in this order; `==` on JSON maps ignores it).
fn property_order(schema: &Value, at: &str, out: &mut Vec<(String, Vec<String>)>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.push((at.to_owned(), props.keys().cloned().collect()));
        for (key, value) in props {
            property_order(value, &format!("{at}/{key}"), out);
        }
    }
}

async fn schema_of(h: &Harness) -> Value {
    let (code, body) = h.get("/agent/schema/v2", "u").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body.as_object().map(Map::len), Some(1), "{body}");
    body["schema"].clone()
}

#[tokio::test]
async fn the_agent_form_schema_is_agentscopes_agent_data_schema() {
    let h = Harness::start().await;
    let mut ours = schema_of(&h).await;
    // Our extension, checked below; everything else is AgentScope's.
    let mode = ours["properties"]
        .as_object_mut()
        .unwrap()
        .shift_remove("permission_mode")
        .expect("permission_mode is offered");
    assert_eq!(mode["type"], "string");
    let reference = reference();
    assert_eq!(blank_prose(&ours, None), reference);
    let (mut ours_order, mut reference_order) = (Vec::new(), Vec::new());
    property_order(&ours, "", &mut ours_order);
    property_order(&reference, "", &mut reference_order);
    assert_eq!(ours_order, reference_order);
}

#[tokio::test]
async fn long_texts_are_textareas_and_every_section_has_a_title() {
    let h = Harness::start().await;
    let schema = schema_of(&h).await;
    let props = &schema["properties"];
    assert_eq!(props["system_prompt"]["format"], "textarea");
    assert_eq!(props["system_prompt"]["title"], "System Prompt");
    assert_eq!(
        props["system_prompt"]["default"],
        "You're a helpful assistant."
    );
    let chat = &props["chat_config"];
    assert_eq!(chat["title"], "Chat Config");
    assert_eq!(chat["type"], "object");
    let sections = chat["properties"].as_object().unwrap();
    let titles: Vec<&str> = sections
        .values()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Context Config", "React Config", "Invite Config"]);
    let context = &sections["context_config"]["properties"];
    assert_eq!(context["compression_prompt"]["format"], "textarea");
    assert!(
        context.get("summary_schema").is_none(),
        "internal field offered"
    );
    let invite = &sections["invite_config"]["properties"];
    assert_eq!(invite["invite_description"]["format"], "textarea");
    // Self-contained: the form renders it without resolving references.
    let text = schema.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
    // The deprecated top-level copies are accepted, never offered.
    for legacy in ["context_config", "react_config", "invite_config"] {
        assert!(props.get(legacy).is_none(), "{legacy} offered at the top");
    }
}

#[tokio::test]
async fn the_permission_mode_is_a_titled_choice_of_the_allowed_modes() {
    let h = Harness::start().await;
    let schema = schema_of(&h).await;
    let mode = &schema["properties"]["permission_mode"];
    assert_eq!(mode["title"], "Permission Mode");
    assert_eq!(mode["default"], "default");
    // The default policy allows every mode but bypass.
    assert_eq!(
        mode["enum"],
        json!(["default", "accept_edits", "explore", "dont_ask"])
    );
    let description = mode["description"].as_str().unwrap();
    for allowed in ["default:", "accept_edits:", "explore:", "dont_ask:"] {
        assert!(description.contains(allowed), "{description}");
    }
    assert!(!description.contains("bypass"), "{description}");

    let h = Harness::start_with_policy(TenantPolicy {
        allowed_modes: vec![PermissionMode::Explore],
        ..TenantPolicy::default()
    })
    .await;
    let schema = schema_of(&h).await;
    let mode = &schema["properties"]["permission_mode"];
    assert_eq!(mode["enum"], json!(["explore"]));
    assert!(mode.get("default").is_none(), "{mode}");
    // What the form offers is what creating an agent accepts.
    let (code, body) = h
        .post(
            "/agent/",
            "u",
            json!({"name": "A", "permission_mode": "explore"}),
        )
        .await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = h
        .post(
            "/agent/",
            "u",
            json!({"name": "B", "permission_mode": "default"}),
        )
        .await;
    assert_eq!(code, 403, "{body}");
}

#[tokio::test]
async fn the_forms_defaults_are_what_a_new_agent_gets() {
    let h = Harness::start().await;
    let schema = schema_of(&h).await;
    let (code, created) = h.post("/agent/", "u", json!({"name": "A"})).await;
    assert_eq!(code, 201, "{created}");
    let (code, list) = h.get("/agent/", "u").await;
    assert_eq!(code, 200, "{list}");
    let agent = list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == created["agent_id"])
        .unwrap();
    assert_eq!(
        agent["data"]["system_prompt"],
        schema["properties"]["system_prompt"]["default"]
    );
    let react = &schema["properties"]["chat_config"]["properties"]["react_config"]["properties"];
    let stored = agent["data"]["chat_config"]["react_config"]
        .as_object()
        .unwrap();
    for (key, field) in react.as_object().unwrap() {
        assert_eq!(stored[key], field["default"], "react_config.{key}");
    }
}

#[tokio::test]
async fn a_cors_preflight_answer_may_be_cached_for_ten_minutes() {
    let origin = "http://app.test:3000";
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_cors_origins(vec![origin.to_owned()])
    })
    .await;
    let response = h
        .http
        .request(reqwest::Method::OPTIONS, format!("{}/agent/", h.base))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type,x-user-id")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(header("access-control-max-age").as_deref(), Some("600"));
    assert_eq!(
        header("access-control-allow-origin").as_deref(),
        Some(origin)
    );
}
