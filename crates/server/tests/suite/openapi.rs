//! Our OpenAPI document against AgentScope's (a copy stripped of prose):
//! every reference operation of the implemented groups exists with the
//! same parameters, and request/response schemas carry the reference's
//! properties. Known differences are listed with their reasons.

use std::collections::BTreeSet;

use serde_json::Value;

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/agentscope-2.0.11/openapi.stripped.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const GROUPS: &[&str] = &[
    "/agent/",
    "/credential/",
    "/model/",
    "/sessions/",
    "/chat/",
    "/health",
    "/workspace/",
    "/mcp",
    "/skill",
    "/hub/",
    "/embedding-model/",
    "/tts-model/",
    "/channels/",
];

/// Reference operations we do not serve, and why.
const NOT_SERVED: &[(&str, &str, &str)] = &[(
    "get",
    "/agent/schema",
    "deprecated sectioned schema; /agent/schema/v2 replaces it",
)];

/// Reference properties our schemas do not carry, and why.
const KNOWN_GAPS: &[(&str, &str, &str)] = &[(
    "SessionView",
    "team",
    "teams are not implemented; always null",
)];

fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    // `Option<T>` is `anyOf: [T, null]`: look at T.
    if let Some(first) = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .and_then(|members| {
            members
                .iter()
                .find(|m| m.get("type") != Some(&Value::from("null")))
        })
    {
        return resolve(doc, first);
    }
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap();
            &doc["components"]["schemas"][name]
        }
        None => schema,
    }
}

fn props(doc: &Value, schema: &Value) -> BTreeSet<String> {
    resolve(doc, schema)["properties"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn params(op: &Value) -> BTreeSet<(String, String, bool)> {
    op["parameters"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap().to_owned(),
                        p["in"].as_str().unwrap().to_owned(),
                        p["required"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn json_schema(node: &Value) -> Option<&Value> {
    node.get("content")?.get("application/json")?.get("schema")
}

#[test]
fn every_reference_operation_of_our_groups_matches() {
    let reference = reference();
    let ours = oxiscope_server::openapi_document(oxiscope_server::AuthMode::DevHeader);
    let mut problems = Vec::new();
    let mut checked = 0;
    for (path, item) in reference["paths"].as_object().unwrap() {
        if !GROUPS
            .iter()
            .any(|g| path.starts_with(g) || path == g.trim_end_matches('/'))
        {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            if NOT_SERVED.iter().any(|(m, p, _)| m == method && p == path) {
                continue;
            }
            checked += 1;
            let Some(mine) = ours["paths"].get(path).and_then(|i| i.get(method)) else {
                problems.push(format!("missing {method} {path}"));
                continue;
            };
            if params(op) != params(mine) {
                problems.push(format!(
                    "{method} {path}: parameters {:?} != {:?}",
                    params(mine),
                    params(op)
                ));
            }
            let ref_codes: BTreeSet<&String> =
                op["responses"].as_object().unwrap().keys().collect();
            let my_codes: BTreeSet<&String> =
                mine["responses"].as_object().unwrap().keys().collect();
            if ref_codes != my_codes {
                problems.push(format!(
                    "{method} {path}: responses {my_codes:?} != {ref_codes:?}"
                ));
            }
            let bodies = [(
                op.get("requestBody").and_then(json_schema),
                mine.get("requestBody").and_then(json_schema),
                "request",
            )];
            let mut pairs: Vec<_> = bodies.into_iter().collect();
            for (code, node) in op["responses"].as_object().unwrap() {
                if code.starts_with('2') {
                    pairs.push((
                        json_schema(node),
                        mine["responses"].get(code).and_then(json_schema),
                        "response",
                    ));
                }
            }
            for (theirs, mine_schema, what) in pairs {
                let Some(theirs) = theirs else { continue };
                let their_props = props(&reference, theirs);
                if their_props.is_empty() {
                    continue;
                }
                let Some(mine_schema) = mine_schema else {
                    problems.push(format!("{method} {path}: no {what} schema"));
                    continue;
                };
                let my_props = props(&ours, mine_schema);
                for p in their_props.difference(&my_props) {
                    problems.push(format!("{method} {path}: {what} lacks `{p}`"));
                }
                // Nested views: their properties too.
                for p in their_props.intersection(&my_props) {
                    let t = &resolve(&reference, theirs)["properties"][p];
                    let m = &resolve(&ours, mine_schema)["properties"][p];
                    let t_items = t.get("items").unwrap_or(t);
                    let m_items = m.get("items").unwrap_or(m);
                    let (tp, mp) = (props(&reference, t_items), props(&ours, m_items));
                    let name = t_items
                        .get("$ref")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .rsplit('/')
                        .next()
                        .unwrap_or("");
                    let m_resolved = resolve(&ours, m_items);
                    // No properties and not a scalar: a free-form value on our side.
                    let scalar = ["string", "integer", "number", "boolean", "array"]
                        .iter()
                        .any(|t| m_resolved.get("type") == Some(&Value::from(*t)));
                    let free_form = mp.is_empty() && !scalar;
                    for gap in tp.difference(&mp) {
                        if free_form {
                            continue; // a free-form value on our side carries it as is
                        }
                        if KNOWN_GAPS.iter().any(|(n, f, _)| *n == name && f == gap) {
                            continue;
                        }
                        problems.push(format!("{method} {path}: {what}.{p} lacks `{gap}`"));
                    }
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} operations compared");
    assert!(problems.is_empty(), "differences:\n{}", problems.join("\n"));
}

#[tokio::test]
async fn the_served_document_describes_the_servers_authentication() {
    use super::common::Harness;
    use oxiscope_server::AuthMode;

    let keys = Harness::start_with(AuthMode::ApiKeys).await;
    let res = keys
        .http
        .get(format!("{}/openapi.json", keys.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200, "the document is public");
    let doc: Value = res.json().await.unwrap();
    assert_eq!(doc, oxiscope_server::openapi_document(AuthMode::ApiKeys));
    assert_eq!(
        doc["components"]["securitySchemes"]["APIKey"],
        serde_json::json!({"type": "http", "scheme": "bearer", "description": "An API key from `oxiscope keys create`, as `Authorization: Bearer <key>`."})
    );
    assert!(!doc.to_string().contains("x-user-id"));

    let dev = Harness::start().await;
    let (code, doc) = dev.get("/openapi.json", "u").await;
    assert_eq!(code, 200);
    assert_eq!(doc, oxiscope_server::openapi_document(AuthMode::DevHeader));
    assert!(doc.get("security").is_none());
    assert!(doc["components"].get("securitySchemes").is_none());
}

/// Every documented operation reaches a handler: requests with made-up
/// ids get the handler's answer (a 404 naming the record, a 422, ...),
/// never the router's `{"detail": "Not Found"}` or a 405. (That every
/// route is documented is a unit test of the route table.)
#[tokio::test]
async fn every_documented_operation_is_served() {
    use super::common::Harness;

    let h = Harness::start().await;
    let doc = oxiscope_server::openapi_document(oxiscope_server::AuthMode::DevHeader);
    let router_404 = serde_json::json!({"detail": "Not Found"});
    // The probe tells the router's answer from a handler's.
    let (code, body) = h.get("/agent/nope/extra", "u").await;
    assert_eq!((code, &body), (404, &router_404));
    let (code, _) = h.call(reqwest::Method::PUT, "/agent/", "u", None).await;
    assert_eq!(code, 405);
    let mut probed = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let concrete = path
            .split('/')
            .map(|seg| if seg.starts_with('{') { "nope" } else { seg })
            .collect::<Vec<_>>()
            .join("/");
        for method in item.as_object().unwrap().keys() {
            let url = format!("{concrete}?agent_id=nope&provider=openai_credential");
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let body = matches!(method, reqwest::Method::POST | reqwest::Method::PATCH)
                .then(|| serde_json::json!({}));
            let (code, answer) = h.call(method.clone(), &url, "u", body).await;
            assert_ne!(code, 405, "{method} {path}");
            assert!(
                code != 404 || answer != router_404,
                "{method} {path}: {answer}"
            );
            probed += 1;
        }
    }
    assert!(probed >= 21, "{probed}");
}
