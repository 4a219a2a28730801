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
    ops
}

/// The `/schedule/` operations.
fn schedule_operations(g: &mut SchemaGenerator) -> Vec<Op> {
    use crate::api::{
        CreateScheduleRequest as Create, CreateScheduleResponse as Created,
        ListSchedulesResponse as List, ScheduleSessionsResponse as Sessions, ScheduleView as View,
        UpdateScheduleRequest as Update,
    };
    const ID: Param = ("schedule_id", "path", true);
    let op = |method, path, params: Vec<Param>, body, status, response| Op {
        auth: true,
        method,
        path,
        tag: "schedule",
        params,
        body,
        status,
        response,
    };
    let one = "/schedule/{schedule_id}";
    vec![
        op(
            "get",
            "/schedule/",
            vec![USER],
            None,
            "200",
            Some(schema_ref::<List>(g)),
        ),
        op(
            "post",
            "/schedule/",
            vec![USER],
            Some(schema_ref::<Create>(g)),
            "201",
            Some(schema_ref::<Created>(g)),
        ),
        op(
            "patch",
            one,
            vec![ID, USER],
            Some(schema_ref::<Update>(g)),
            "200",
            Some(schema_ref::<View>(g)),
        ),
        op("delete", one, vec![ID, USER], None, "204", None),
        op(
            "get",
            "/schedule/{schedule_id}/sessions",
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<Sessions>(g)),
        ),
    ]
}

/// The `/knowledge_bases/` operations.
fn knowledge_operations(g: &mut SchemaGenerator) -> Vec<Op> {
    use crate::api::{
        CreateKnowledgeBaseRequest as Create, CreateKnowledgeBaseResponse as Created,
        DocumentDownloadTokenResponse as Token, KbMiddlewareParametersSchemaResponse as Schema,
        KnowledgeBaseView as View, ListChunkersResponse as Chunkers,
        ListDocumentChunksResponse as Chunks, ListKbEmbeddingModelsResponse as Models,
        ListKnowledgeBasesResponse as Bases, ListKnowledgeDocumentStatusResponse as Statuses,
        ListKnowledgeDocumentsResponse as Docs, ListSupportedContentTypesResponse as Types,
        SearchKnowledgeBaseRequest as Search, SearchKnowledgeBaseResponse as Hits,
        UpdateKnowledgeBaseRequest as Update, UploadKnowledgeDocumentForm as Form,
        UploadKnowledgeDocumentResponse as Uploaded,
    };
    const KB: Param = ("knowledge_base_id", "path", true);
    const DOC: Param = ("document_id", "path", true);
    const PAGE: [Param; 2] = [("page", "query", false), ("page_size", "query", false)];
    let listing = |extra: &[Param]| -> Vec<Param> {
        let mut p = extra.to_vec();
        p.extend(PAGE);
        p.extend([("orderby", "query", false), ("desc", "query", false), USER]);
        p
    };
    let op = |method, path, params: Vec<Param>, body, status, response| Op {
        auth: true,
        method,
        path,
        tag: "knowledge_bases",
        params,
        body,
        status,
        response,
    };
    let root = "/knowledge_bases/";
    let base = "/knowledge_bases/{knowledge_base_id}";
    let docs = "/knowledge_bases/{knowledge_base_id}/documents";
    let doc = "/knowledge_bases/{knowledge_base_id}/documents/{document_id}";
    vec![
        op(
            "get",
            "/knowledge_bases/embedding_models",
            vec![USER],
            None,
            "200",
            Some(schema_ref::<Models>(g)),
        ),
        op(
            "get",
            "/knowledge_bases/chunkers",
            vec![USER],
            None,
            "200",
            Some(schema_ref::<Chunkers>(g)),
        ),
        op(
            "get",
            "/knowledge_bases/middleware/parameters_schema",
            vec![USER],
            None,
            "200",
            Some(schema_ref::<Schema>(g)),
        ),
        op(
            "get",
            "/knowledge_bases/supported_content_types",
            vec![USER],
            None,
            "200",
            Some(schema_ref::<Types>(g)),
        ),
        op(
            "post",
            root,
            vec![USER],
            Some(schema_ref::<Create>(g)),
            "201",
            Some(schema_ref::<Created>(g)),
        ),
        op(
            "get",
            root,
            listing(&[("id", "query", false), ("name", "query", false)]),
            None,
            "200",
            Some(schema_ref::<Bases>(g)),
        ),
        op(
            "patch",
            base,
            vec![KB, USER],
            Some(schema_ref::<Update>(g)),
            "200",
            Some(schema_ref::<View>(g)),
        ),
        op("delete", base, vec![KB, USER], None, "204", None),
        op(
            "get",
            docs,
            listing(&[
                KB,
                ("id", "query", false),
                ("keywords", "query", false),
                ("status", "query", false),
            ]),
            None,
            "200",
            Some(schema_ref::<Docs>(g)),
        ),
        op(
            "post",
            docs,
            vec![KB, USER],
            Some(schema_ref::<Form>(g)),
            "201",
            Some(schema_ref::<Uploaded>(g)),
        ),
        op(
            "get",
            "/knowledge_bases/{knowledge_base_id}/documents/status",
            vec![KB, ("ids", "query", true), USER],
            None,
            "200",
            Some(schema_ref::<Statuses>(g)),
        ),
        op("delete", doc, vec![KB, DOC, USER], None, "204", None),
        // A download token may stand in for the caller's credentials.
        op(
            "get",
            doc,
            vec![
                KB,
                DOC,
                ("download", "query", false),
                ("token", "query", false),
                ("x-user-id", "header", false),
            ],
            None,
            "200",
            Some(json!({})),
        ),
        op(
            "post",
            "/knowledge_bases/{knowledge_base_id}/search",
            vec![KB, USER],
            Some(schema_ref::<Search>(g)),
            "200",
            Some(schema_ref::<Hits>(g)),
        ),
        op(
            "get",
            "/knowledge_bases/{knowledge_base_id}/documents/{document_id}/chunks",
            vec![KB, DOC, PAGE[0], PAGE[1], USER],
            None,
            "200",
            Some(schema_ref::<Chunks>(g)),
        ),
        op(
            "post",
            "/knowledge_bases/{knowledge_base_id}/documents/{document_id}/download_token",
            vec![KB, DOC, USER],
            None,
            "200",
            Some(schema_ref::<Token>(g)),
        ),
    ]
}

/// The `/workspace/` operations of the session's MCP servers, skills and
/// files.
fn workspace_operations(
    g: &mut SchemaGenerator,
    op: &impl Fn(
        &'static str,
        &'static str,
        &'static str,
        &[Param],
        Option<Value>,
        &'static str,
        Option<Value>,
    ) -> Op,
) -> Vec<Op> {
    const SESSION_Q: Param = ("session_id", "query", true);
    const IDS: [Param; 3] = [AGENT_Q, SESSION_Q, USER];
    let mcps = g.subschema_for::<Vec<McpClientStatus>>().to_value();
    let skills = g.subschema_for::<Vec<WorkspaceSkill>>().to_value();
    let created = Some(json!({}));
    vec![
        op(
            "get",
            "/workspace/mcp",
            "workspace",
            &IDS,
            None,
            "200",
            Some(mcps),
        ),
        op(
            "post",
            "/workspace/mcp",
            "workspace",
            &IDS,
            Some(schema_ref::<McpClientBody>(g)),
            "201",
            created.clone(),
        ),
        op(
            "delete",
            "/workspace/mcp/{mcp_name}",
            "workspace",
            &[("mcp_name", "path", true), AGENT_Q, SESSION_Q, USER],
            None,
            "204",
            None,
        ),
        op(
            "get",
            "/workspace/skill",
            "workspace",
            &IDS,
            None,
            "200",
            Some(skills),
        ),
        op(
            "post",
            "/workspace/skill",
            "workspace",
            &IDS,
            Some(schema_ref::<AddSkillRequest>(g)),
            "201",
            created.clone(),
        ),
        op(
            "post",
            "/workspace/skill/upload",
            "workspace",
            &IDS,
            Some(schema_ref::<UploadSkillForm>(g)),
            "201",
            created,
        ),
        op(
            "delete",
            "/workspace/skill/{skill_name}",
            "workspace",
            &[("skill_name", "path", true), AGENT_Q, SESSION_Q, USER],
            None,
            "204",
            None,
        ),
        op(
            "get",
            "/workspace/directories",
            "workspace",
            &[AGENT_Q, SESSION_Q, ("path", "query", false), USER],
            None,
            "200",
            Some(schema_ref::<DirectoryListing>(g)),
        ),
        op(
            "get",
            "/workspace/status",
            "workspace",
            &IDS,
            None,
            "200",
            Some(schema_ref::<WorkspaceStatus>(g)),
        ),
        op(
            "post",
            "/workspace/files/download-token",
            "workspace",
            &[AGENT_Q, SESSION_Q, ("path", "query", true), USER],
            None,
            "200",
            Some(schema_ref::<DownloadTokenResponse>(g)),
        ),
        // A download token may stand in for the caller's credentials.
        op(
            "get",
            "/workspace/files",
            "workspace",
            &[
                AGENT_Q,
                SESSION_Q,
                ("path", "query", true),
                ("download", "query", false),
                ("token", "query", false),
                ("x-user-id", "header", false),
            ],
            None,
            "200",
            Some(json!({})),
        ),
    ]
}

/// The hub, library and from-library operations.
fn library_operations(
    g: &mut SchemaGenerator,
    op: &impl Fn(
        &'static str,
        &'static str,
        &'static str,
        &[Param],
        Option<Value>,
        &'static str,
        Option<Value>,
    ) -> Op,
) -> Vec<Op> {
    const HUB_P: Param = ("hub_id", "path", true);
    const CARD_P: Param = ("card_id", "path", true);
    const MCP_P: Param = ("mcp_id", "path", true);
    const SKILL_P: Param = ("skill_id", "path", true);
    const PAGE: [Param; 3] = [
        ("q", "query", false),
        ("cursor", "query", false),
        ("limit", "query", false),
    ];
    let hubs = g.subschema_for::<Vec<HubInfo>>().to_value();
    let mcps = g.subschema_for::<Vec<McpView>>().to_value();
    let skills = g.subschema_for::<Vec<SkillView>>().to_value();
    let from_library = || ("session_id", "query", true);
    vec![
        op(
            "get",
            "/hub/mcp",
            "hub",
            &[],
            None,
            "200",
            Some(hubs.clone()),
        ),
        op(
            "get",
            "/hub/mcp/{hub_id}/cards",
            "hub",
            &[HUB_P, PAGE[0], PAGE[1], PAGE[2], USER],
            None,
            "200",
            Some(schema_ref::<McpHubPage>(g)),
        ),
        op(
            "get",
            "/hub/mcp/{hub_id}/cards/{card_id}",
            "hub",
            &[HUB_P, CARD_P, USER],
            None,
            "200",
            Some(schema_ref::<McpCard>(g)),
        ),
        op(
            "post",
            "/hub/mcp/{hub_id}/cards/{card_id}/install",
            "hub",
            &[HUB_P, CARD_P, USER],
            Some(schema_ref::<InstallMcpRequest>(g)),
            "201",
            Some(schema_ref::<McpView>(g)),
        ),
        op("get", "/hub/skill", "hub", &[], None, "200", Some(hubs)),
        op(
            "get",
            "/hub/skill/{hub_id}/cards",
            "hub",
            &[HUB_P, PAGE[0], PAGE[1], PAGE[2], USER],
            None,
            "200",
            Some(schema_ref::<SkillHubPage>(g)),
        ),
        op(
            "get",
            "/hub/skill/{hub_id}/cards/{card_id}",
            "hub",
            &[HUB_P, CARD_P, USER],
            None,
            "200",
            Some(schema_ref::<SkillCard>(g)),
        ),
        op(
            "post",
            "/hub/skill/{hub_id}/cards/{card_id}/install",
            "hub",
            &[HUB_P, CARD_P, ("name", "query", false), USER],
            None,
            "201",
            Some(schema_ref::<SkillView>(g)),
        ),
        op("get", "/mcp", "mcp", &[USER], None, "200", Some(mcps)),
        op(
            "patch",
            "/mcp/{mcp_id}",
            "mcp",
            &[MCP_P, USER],
            Some(schema_ref::<UpdateMcpRequest>(g)),
            "200",
            Some(schema_ref::<McpView>(g)),
        ),
        op(
            "delete",
            "/mcp/{mcp_id}",
            "mcp",
            &[MCP_P, USER],
            None,
            "204",
            None,
        ),
        op("get", "/skill", "skill", &[USER], None, "200", Some(skills)),
        op(
            "get",
            "/skill/{skill_id}",
            "skill",
            &[SKILL_P, USER],
            None,
            "200",
            Some(schema_ref::<SkillRecordView>(g)),
        ),
        op(
            "delete",
            "/skill/{skill_id}",
            "skill",
            &[SKILL_P, USER],
            None,
            "204",
            None,
        ),
        op(
            "post",
            "/workspace/mcp/from-library",
            "workspace",
            &[AGENT_Q, from_library(), USER],
            Some(schema_ref::<AddFromLibraryRequest>(g)),
            "201",
            Some(schema_ref::<AddFromLibraryResponse>(g)),
        ),
        op(
            "post",
            "/workspace/skill/from-library",
            "workspace",
            &[AGENT_Q, from_library(), USER],
            Some(schema_ref::<AddSkillsFromLibraryRequest>(g)),
            "201",
            Some(schema_ref::<AddFromLibraryResponse>(g)),
        ),
    ]
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
const NO_DECLARED_404: &[&str] = &["workspace", "mcp", "skill", "hub", "usage"];

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
