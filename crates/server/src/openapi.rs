//! `/openapi.json`, assembled from our own DTO types.
//!
//! The document is built by hand from a table of operations plus schemars
//! schemas of the request/response types: the routes stay plain axum
//! handlers, and no OpenAPI macro framework is compiled in. It describes
//! how this server authenticates: with API keys, a bearer security scheme
//! that every operation but the public ones requires; with the development
//! header, AgentScope's `x-user-id` header parameter.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::api::{
    AddFromLibraryRequest, AddFromLibraryResponse, AddSkillsFromLibraryRequest, HubInfo,
    InstallMcpRequest, McpCard, McpHubPage, McpView, SkillCard, SkillHubPage, SkillRecordView,
    SkillView, UpdateMcpRequest,
};
use crate::api::{
    AddSkillRequest, DirectoryListing, DownloadTokenResponse, McpClientBody, McpClientStatus,
    UploadSkillForm, WorkspaceSkill, WorkspaceStatus,
};
use crate::api::{
    AgentSchemaV2Response, AgentView, ChatRequest, ChatTriggerResponse, CreateAgentRequest,
    CreateAgentResponse, CreateCredentialRequest, CreateCredentialResponse, CreateSessionRequest,
    CreateSessionResponse, CredentialView, HealthResponse, InterruptSessionResponse,
    ListAgentsResponse, ListCredentialSchemasResponse, ListCredentialsResponse,
    ListMessagesResponse, ListModelsResponse, ListSessionsResponse, SessionRecordView,
    SessionStatusResponse, UpdateAgentRequest, UpdateCredentialRequest, UpdateSessionRequest,
};
use crate::auth::AuthMode;

mod channels;
mod families;
use channels::channel_operations;
use families::{
    knowledge_operations, library_operations, schedule_operations, workspace_operations,
};

/// One parameter: name, location, required.
type Param = (&'static str, &'static str, bool);

/// The development header: documented only under [`AuthMode::DevHeader`].
const USER: Param = ("x-user-id", "header", true);
const AGENT_Q: Param = ("agent_id", "query", true);
const SESSION_P: Param = ("session_id", "path", true);

struct Op {
    /// Whether it needs an authenticated user.
    auth: bool,
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    params: Vec<Param>,
    body: Option<Value>,
    status: &'static str,
    response: Option<Value>,
}

fn schema_ref<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    g.subschema_for::<T>().to_value()
}

fn operations(g: &mut SchemaGenerator) -> Vec<Op> {
    let op = |method, path, tag, params: &[Param], body, status, response| Op {
        // `/health` takes AgentScope's header there but needs no user.
        auth: params.contains(&USER) && path != "/health",
        method,
        path,
        tag,
        params: params.to_vec(),
        body,
        status,
        response,
    };
    let mut ops = vec![
        op(
            "get",
            "/agent/schema/v2",
            "agent",
            &[],
            None,
            "200",
            Some(schema_ref::<AgentSchemaV2Response>(g)),
        ),
        op(
            "get",
            "/agent/",
            "agent",
            &[USER],
            None,
            "200",
            Some(schema_ref::<ListAgentsResponse>(g)),
        ),
        op(
            "post",
            "/agent/",
            "agent",
            &[USER],
            Some(schema_ref::<CreateAgentRequest>(g)),
            "201",
            Some(schema_ref::<CreateAgentResponse>(g)),
        ),
        op(
            "patch",
            "/agent/{agent_id}",
            "agent",
            &[("agent_id", "path", true), USER],
            Some(schema_ref::<UpdateAgentRequest>(g)),
            "200",
            Some(schema_ref::<AgentView>(g)),
        ),
        op(
            "delete",
            "/agent/{agent_id}",
            "agent",
            &[("agent_id", "path", true), USER],
            None,
            "204",
            None,
        ),
        op(
            "post",
            "/chat/",
            "chat",
            &[USER],
            Some(schema_ref::<ChatRequest>(g)),
            "200",
            Some(schema_ref::<ChatTriggerResponse>(g)),
        ),
        // Oxiscope extension: the caller's token usage and quota.
        op(
            "get",
            "/usage",
            "usage",
            &[USER],
            None,
            "200",
            Some(schema_ref::<crate::api::UsageResponse>(g)),
        ),
        op(
            "get",
            "/credential/schemas",
            "credential",
            &[],
            None,
            "200",
            Some(schema_ref::<ListCredentialSchemasResponse>(g)),
        ),
        op(
            "get",
            "/credential/",
            "credential",
            &[USER],
            None,
            "200",
            Some(schema_ref::<ListCredentialsResponse>(g)),
        ),
        op(
            "post",
            "/credential/",
            "credential",
            &[USER],
            Some(schema_ref::<CreateCredentialRequest>(g)),
            "201",
            Some(schema_ref::<CreateCredentialResponse>(g)),
        ),
        op(
            "patch",
            "/credential/{credential_id}",
            "credential",
            &[("credential_id", "path", true), USER],
            Some(schema_ref::<UpdateCredentialRequest>(g)),
            "200",
            Some(schema_ref::<CredentialView>(g)),
        ),
        op(
            "delete",
            "/credential/{credential_id}",
            "credential",
            &[("credential_id", "path", true), USER],
            None,
            "204",
            None,
        ),
        op(
            "get",
            "/health",
            "health",
            &[USER],
            None,
            "200",
            Some(schema_ref::<HealthResponse>(g)),
        ),
        op(
            "get",
            "/model/",
            "model",
            &[("provider", "query", true)],
            None,
            "200",
            Some(schema_ref::<ListModelsResponse>(g)),
        ),
        op(
            "get",
            "/embedding-model/",
            "embedding-model",
            &[("provider", "query", true)],
            None,
            "200",
            Some(schema_ref::<ListModelsResponse>(g)),
        ),
        op(
            "get",
            "/tts-model/",
            "tts-model",
            &[("provider", "query", true)],
            None,
            "200",
            Some(schema_ref::<ListModelsResponse>(g)),
        ),
        op(
            "get",
            "/sessions/",
            "sessions",
            &[AGENT_Q, USER],
            None,
            "200",
            Some(schema_ref::<ListSessionsResponse>(g)),
        ),
        op(
            "post",
            "/sessions/",
            "sessions",
            &[USER],
            Some(schema_ref::<CreateSessionRequest>(g)),
            "201",
            Some(schema_ref::<CreateSessionResponse>(g)),
        ),
        op(
            "delete",
            "/sessions/{session_id}",
            "sessions",
            &[SESSION_P, AGENT_Q, USER],
            None,
            "204",
            None,
        ),
        op(
            "patch",
            "/sessions/{session_id}",
            "sessions",
            &[SESSION_P, AGENT_Q, USER],
            Some(schema_ref::<UpdateSessionRequest>(g)),
            "200",
            Some(schema_ref::<SessionRecordView>(g)),
        ),
        op(
            "post",
            "/sessions/{session_id}/interrupt",
            "sessions",
            &[SESSION_P, AGENT_Q, USER],
            None,
            "202",
            Some(schema_ref::<InterruptSessionResponse>(g)),
        ),
        op(
            "get",
            "/sessions/{session_id}/messages",
            "sessions",
            &[
                SESSION_P,
                AGENT_Q,
                ("before", "query", false),
                ("offset", "query", false),
                ("limit", "query", false),
                USER,
            ],
            None,
            "200",
            Some(schema_ref::<ListMessagesResponse>(g)),
        ),
        op(
            "get",
            "/sessions/{session_id}/status",
            "sessions",
            &[SESSION_P, AGENT_Q, USER],
            None,
            "200",
            Some(schema_ref::<SessionStatusResponse>(g)),
        ),
        op(
            "get",
            "/sessions/{session_id}/stream",
            "sessions",
            &[SESSION_P, AGENT_Q, ("after", "query", false), USER],
            None,
            "200",
            None,
        ),
    ];
    ops.extend(library_operations(g, &op));
    ops.extend(workspace_operations(g, &op));
    ops.extend(knowledge_operations(g));
    ops.extend(schedule_operations(g));
    ops.extend(channel_operations(g));
    ops
}

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

/// The media type of an operation's request body.
fn media_type(path: &str) -> &'static str {
    if path == "/workspace/skill/upload" || path == "/knowledge_bases/{knowledge_base_id}/documents"
    {
        "multipart/form-data"
    } else {
        "application/json"
    }
}

/// Tags whose operations declare no `404` in AgentScope's document (and
/// our `usage` extension, which has none).
const NO_DECLARED_404: &[&str] = &["workspace", "mcp", "skill", "hub", "usage", "channels"];

/// The name of the API-key scheme in `components.securitySchemes`.
const API_KEY_SCHEME: &str = "APIKey";

/// The routes of features this server does not run: an empty list or a
/// `503` with a `detail` (see `routes/off.rs`).
fn off_operations() -> Vec<Op> {
    crate::routes::OFF
        .iter()
        .map(|&(verb, path, user, answer)| {
            let mut params: Vec<Param> = path
                .split('/')
                .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
                .map(|name| (name, "path", true))
                .collect();
            if user {
                params.push(USER);
            }
            let tag = path.split('/').find(|s| !s.is_empty()).unwrap_or("");
            let response = match answer {
                crate::routes::OffAnswer::Empty(body) => {
                    let example: Value = serde_json::from_str(body).unwrap_or(Value::Null);
                    let kind = if example.is_array() {
                        "array"
                    } else {
                        "object"
                    };
                    json!({"type": kind, "example": example})
                }
                crate::routes::OffAnswer::Unavailable(_) => json!({
                    "type": "object",
                    "required": ["detail"],
                    "properties": {"detail": {"type": "string"}},
                }),
            };
            Op {
                auth: user,
                method: verb.as_str(),
                path,
                tag,
                params,
                body: None,
                status: answer.status(),
                response: Some(response),
            }
        })
        .collect()
}

/// The OpenAPI 3.1 document of the service under `auth`.
#[must_use]
pub fn document(auth: AuthMode) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    let mut generator = settings.into_generator();
    let mut ops = operations(&mut generator);
    ops.extend(off_operations());
    let mut schemas = generator.take_definitions(true);
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
        let mut operation = Map::new();
        operation.insert("tags".into(), json!([op.tag]));
        let params: Vec<Value> = op
            .params
            .iter()
            .filter(|&&p| !(api_keys && p.0 == USER.0))
            .map(|&(name, location, required)| {
                json!({"name": name, "in": location, "required": required, "schema": param_schema(name)})
            })
            .collect();
        let validated = !params.is_empty() || op.body.is_some();
        if !params.is_empty() {
            operation.insert("parameters".into(), Value::Array(params));
        }
        if let Some(body) = op.body {
            operation.insert(
                "requestBody".into(),
                json!({"required": true, "content": {media_type(op.path): {"schema": body}}}),
            );
        }
        if api_keys && !op.auth {
            // Public: no credentials needed.
            operation.insert("security".into(), json!([]));
        }
        let mut responses = Map::new();
        let ok = match (op.response, op.path.ends_with("/stream")) {
            (_, true) => json!({"content": {"text/event-stream": {"schema": {}}}}),
            (Some(schema), false) => json!({"content": {"application/json": {"schema": schema}}}),
            (None, false) => json!({}),
        };
        responses.insert(op.status.into(), ok);
        if api_keys && op.auth {
            responses.insert("401".into(), json!({}));
        }
        // AgentScope's routers declare a 404 on every operation but those
        // of its workspace, library and hub routers (and `/health`).
        if op.path != "/health" && !NO_DECLARED_404.contains(&op.tag) {
            responses.insert("404".into(), json!({}));
        }
        if validated {
            responses.insert(
                "422".into(),
                json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}}),
            );
        }
        operation.insert("responses".into(), Value::Object(responses));
        let entry = paths
            .entry(op.path.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = entry {
            map.insert(op.method.into(), Value::Object(operation));
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
    }
    doc
}
