use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::ROUTES;
use crate::auth::AuthMode;

/// Served but not documented, as FastAPI does not document its own
/// document.
const UNDOCUMENTED: &[(&str, &str)] = &[("get", "/openapi.json")];

fn documented(auth: AuthMode) -> BTreeSet<(String, String)> {
    let doc = crate::openapi::document(auth);
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            ops.insert((method.clone(), path.clone()));
        }
    }
    ops
}

#[test]
fn the_document_lists_exactly_the_routes_the_router_serves() {
    let off = super::OFF
        .iter()
        .map(|(verb, path, _, _)| (verb.as_str().to_owned(), (*path).to_owned()));
    let served: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(verb, path, _)| (verb.as_str().to_owned(), (*path).to_owned()))
        .chain(off)
        .filter(|(m, p)| !UNDOCUMENTED.contains(&(m.as_str(), p.as_str())))
        .collect();
    assert_eq!(
        ROUTES.len() + super::OFF.len(),
        served.len() + UNDOCUMENTED.len(),
        "a route repeats"
    );
    for auth in [AuthMode::ApiKeys, AuthMode::DevHeader] {
        assert_eq!(documented(auth), served, "{auth:?}");
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
    let served: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(verb, path, _)| (verb.as_str().to_owned(), (*path).to_owned()))
        .chain(
            super::OFF
                .iter()
                .map(|(verb, path, _, _)| (verb.as_str().to_owned(), (*path).to_owned())),
        )
        .collect();
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
