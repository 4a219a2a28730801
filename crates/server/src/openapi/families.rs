//! The operations of the schedule, knowledge-base, workspace and library
//! families, for the document [`super::document`] builds.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The `/schedule/` operations.
pub(super) fn schedule_operations(g: &mut SchemaGenerator) -> Vec<Op> {
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
pub(super) fn knowledge_operations(g: &mut SchemaGenerator) -> Vec<Op> {
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
pub(super) fn workspace_operations(
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
pub(super) fn library_operations(
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
