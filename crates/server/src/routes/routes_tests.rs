use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::routes;
use crate::auth::AuthMode;

fn documented(auth: AuthMode) -> Vec<(String, String)> {
    let doc = crate::openapi::document(auth);
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            ops.push((method.clone(), path.clone()));
        }
    }
    ops.sort();
    ops
}

/// Every served (method, path), off routes included, sorted.
fn served() -> Vec<(String, String)> {
    let mut served: Vec<(String, String)> = routes()
        .map(|r| (r.verb, r.path))
        .chain(super::OFF.iter().map(|&(verb, path, _, _)| (verb, path)))
        .map(|(verb, path)| (verb.as_str().to_owned(), path.to_owned()))
        .collect();
    served.sort();
    served
}

#[test]
fn no_method_and_path_is_routed_twice() {
    let mut served = served();
    let all = served.len();
    served.dedup();
    assert_eq!(served.len(), all, "a route repeats");
}

#[test]
fn only_the_document_itself_is_left_out_of_the_document() {
    let undocumented: Vec<(&str, &str)> = routes()
        .filter(|r| r.operation.is_none())
        .map(|r| (r.verb.as_str(), r.path))
        .collect();
    assert_eq!(undocumented, [("get", "/openapi.json")]);
    let mut expected = served();
    expected.retain(|(m, p)| (m.as_str(), p.as_str()) != ("get", "/openapi.json"));
    for auth in [AuthMode::ApiKeys, AuthMode::DevHeader] {
        assert_eq!(documented(auth), expected, "{auth:?}");
    }
}

#[test]
fn every_path_parameter_is_documented_and_named_in_its_path() {
    let doc = crate::openapi::document(AuthMode::DevHeader);
    for (path, item) in doc["paths"].as_object().unwrap() {
        let in_path: Vec<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        for (method, op) in item.as_object().unwrap() {
            let documented: Vec<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            assert_eq!(documented, in_path, "{method} {path}");
        }
    }
}

#[test]
fn with_api_keys_the_document_declares_the_bearer_scheme_and_no_user_header() {
    let doc = crate::openapi::document(AuthMode::ApiKeys);
    assert_eq!(
        doc["components"]["securitySchemes"]["APIKey"]["scheme"],
        "bearer"
    );
    assert_eq!(doc["security"], serde_json::json!([{"APIKey": []}]));
    let text = doc.to_string();
    assert!(!text.contains("x-user-id"), "{text}");
    // Private operations answer 401 without a key; public ones need none.
    assert!(doc["paths"]["/agent/"]["get"]["responses"]["401"].is_object());
    assert!(doc["paths"]["/agent/"]["get"].get("security").is_none());
    for (method, path) in [
        ("get", "/health"),
        ("get", "/model/"),
        ("get", "/agent/schema/v2"),
        ("get", "/credential/schemas"),
    ] {
        let op = &doc["paths"][path][method];
        assert_eq!(op["security"], serde_json::json!([]), "{method} {path}");
        assert!(op["responses"].get("401").is_none(), "{method} {path}");
    }
}

#[test]
fn with_the_development_header_the_document_has_it_and_no_security_scheme() {
    let doc = crate::openapi::document(AuthMode::DevHeader);
    assert_eq!(doc.get("security"), None);
    assert_eq!(doc["components"].get("securitySchemes"), None);
    let params = &doc["paths"]["/agent/"]["get"]["parameters"];
    assert_eq!(
        params[0],
        serde_json::json!({"name": "x-user-id", "in": "header", "required": true, "schema": {"type": "string"}})
    );
    let no_user: Vec<&Value> = doc["paths"]["/model/"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "x-user-id")
        .collect();
    assert!(no_user.is_empty());
}

#[test]
fn every_documented_agentscope_route_is_served() {
    let reference: Value = serde_json::from_str(include_str!(
        "../../../../fixtures/agentscope-2.0.11/openapi.stripped.json"
    ))
    .unwrap();
    let served: BTreeSet<(String, String)> = served().into_iter().collect();
    let mut missing = Vec::new();
    for (path, item) in reference["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if !served.contains(&(method.clone(), path.clone())) {
                missing.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    assert!(missing.is_empty(), "not served: {missing:?}");
}
