//! `/openapi.json`, built from the route table.
//!
//! Each route row (`routes/table.rs`) carries what its operation says —
//! who may call, query parameters, request body, success status and
//! schema — and this module turns the rows, plus the off routes
//! (`routes/off.rs`), into the document, with schemars schemas of the
//! DTO types: the routes stay plain axum handlers, and no OpenAPI macro
//! framework is compiled in. The document describes how this server
//! authenticates: with API keys, a bearer security scheme that every
//! operation but the public ones requires; with the development header,
//! AgentScope's `x-user-id` header parameter.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::auth::AuthMode;
use crate::routes::{Access, OFF, OffAnswer, Query, Reply, Verb, routes};

/// Tags whose operations declare no `404` in AgentScope's document (and
/// our `usage` extension, which has none).
const NO_DECLARED_404: &[&str] = &[
    "workspace",
    "mcp",
    "skill",
    "hub",
    "usage",
    "health",
    "channels",
];

/// The name of the API-key scheme in `components.securitySchemes`.
const API_KEY_SCHEME: &str = "APIKey";

/// The name of the JWT scheme, when the server accepts JWTs.
const JWT_SCHEME: &str = "JWT";

/// One operation, its schemas written.
struct Op {
    verb: Verb,
    path: &'static str,
    access: Access,
    query: &'static [Query],
    /// The request body's schema and media type.
    body: Option<(Value, &'static str)>,
    status: &'static str,
    /// The success response object.
    ok: Value,
}

/// The OpenAPI 3.1 document of the service under `auth`.
#[must_use]
pub fn document(auth: AuthMode) -> Value {
    document_for(auth, false)
}

/// The document of a server under `auth` that, with `jwt`, accepts JWT
/// bearer tokens besides API keys.
pub(crate) fn document_for(auth: AuthMode, jwt: bool) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    let mut g = settings.into_generator();
    let mut ops = Vec::new();
    for route in routes() {
        let Some(op) = route.operation else {
            continue;
        };
        let body = op
            .body
            .map(|(schema, media)| (schema(&mut g), media.as_str()));
        let ok = match op.reply {
            Reply::Empty => json!({}),
            Reply::Json(schema) => {
                json!({"content": {"application/json": {"schema": schema(&mut g)}}})
            }
            Reply::EventStream => json!({"content": {"text/event-stream": {"schema": {}}}}),
        };
        ops.push(Op {
            verb: route.verb,
            path: route.path,
            access: op.access,
            query: op.query,
            body,
            status: op.status,
            ok,
        });
    }
    ops.extend(OFF.iter().map(|&(verb, path, user, answer)| Op {
        verb,
        path,
        access: if user { Access::User } else { Access::Public },
        query: &[],
        body: None,
        status: answer.status(),
        ok: json!({"content": {"application/json": {"schema": off_schema(answer)}}}),
    }));
    let mut schemas = g.take_definitions(true);
    schemas.insert(
        "HTTPValidationError".into(),
        json!({"type": "object", "properties": {"detail": {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}}}}),
    );
    schemas.insert(
        "ValidationError".into(),
        json!({"type": "object", "required": ["loc", "msg", "type"], "properties": {
            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "msg": {"type": "string"}, "type": {"type": "string"}}}),
    );
    let api_keys = auth == AuthMode::ApiKeys;
    let mut paths = Map::new();
    for op in ops {
        let (path, method) = (op.path, op.verb.as_str());
        let entry = paths
            .entry(path.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = entry {
            map.insert(method.into(), operation(op, api_keys));
        }
    }
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {"title": "Oxiscope", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "components": {"schemas": schemas},
    });
    if api_keys {
        doc["components"]["securitySchemes"] = json!({API_KEY_SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key from `oxiscope keys create`, as `Authorization: Bearer <key>`.",
        }});
        doc["security"] = json!([{API_KEY_SCHEME: []}]);
        if jwt {
            doc["components"]["securitySchemes"][JWT_SCHEME] = json!({
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "A JWT of the configured issuer, as `Authorization: Bearer <token>`.",
            });
            doc["security"] = json!([{API_KEY_SCHEME: []}, {JWT_SCHEME: []}]);
        }
    }
    doc
}

/// The operation object of `op`, under API keys or the development header.
fn operation(op: Op, api_keys: bool) -> Value {
    // The tag is the path's first segment.
    let tag = op.path.split('/').find(|s| !s.is_empty()).unwrap_or("");
    let path_params = op
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| parameter(name, "path", true));
    let query = op.query.iter().map(|q| parameter(q.0, "query", q.1));
    let header = op
        .access
        .user_header()
        .filter(|_| !api_keys)
        .map(|required| parameter("x-user-id", "header", required));
    let params: Vec<Value> = path_params.chain(query).chain(header).collect();
    let needs_key = api_keys && op.access.needs_key();
    let mut operation = Map::new();
    operation.insert("tags".into(), json!([tag]));
    let validated = !params.is_empty() || op.body.is_some();
    if !params.is_empty() {
        operation.insert("parameters".into(), Value::Array(params));
    }
    if let Some((schema, media)) = op.body {
        operation.insert(
            "requestBody".into(),
            json!({"required": true, "content": {media: {"schema": schema}}}),
        );
    }
    if api_keys && !needs_key {
        // Public: no credentials needed.
        operation.insert("security".into(), json!([]));
    }
    let mut responses = Map::new();
    responses.insert(op.status.into(), op.ok);
    if needs_key {
        responses.insert("401".into(), json!({}));
    }
    // AgentScope's routers declare a 404 on every operation but those of
    // its workspace, library, hub and health routers.
    if !NO_DECLARED_404.contains(&tag) {
        responses.insert("404".into(), json!({}));
    }
    if validated {
        responses.insert(
            "422".into(),
            json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}}),
        );
    }
    operation.insert("responses".into(), Value::Object(responses));
    Value::Object(operation)
}

/// A parameter object.
fn parameter(name: &str, location: &str, required: bool) -> Value {
    json!({"name": name, "in": location, "required": required, "schema": param_schema(name)})
}

/// A parameter's schema, by its name: the same name means the same thing
/// on every route.
fn param_schema(name: &str) -> Value {
    match name {
        "offset" => json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        "limit" => json!({"type": "integer", "minimum": 1, "maximum": 200, "default": 50}),
        "before" | "after" | "token" => {
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        }
        "download" | "desc" => json!({"type": "boolean", "default": name == "desc"}),
        "page" => json!({"type": "integer", "minimum": 1, "default": 1}),
        "page_size" => json!({"type": "integer", "minimum": 1, "maximum": 128, "default": 30}),
        _ => json!({"type": "string"}),
    }
}

/// What an off route answers: the empty list it stands for, or a
/// `detail` (see `routes/off.rs`).
fn off_schema(answer: OffAnswer) -> Value {
    match answer {
        OffAnswer::Empty(body) => {
            let example: Value = serde_json::from_str(body).unwrap_or(Value::Null);
            let kind = if example.is_array() {
                "array"
            } else {
                "object"
            };
            json!({"type": kind, "example": example})
        }
        OffAnswer::Unavailable(_) => json!({
            "type": "object",
            "required": ["detail"],
            "properties": {"detail": {"type": "string"}},
        }),
    }
}
