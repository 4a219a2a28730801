//! `/workspace/`: the MCP servers, skills and files of a session's
//! workspace. Every route takes `agent_id` and `session_id`; the session
//! must be the caller's and the agent's (404 otherwise). Changes apply
//! from the session's next run, when its agent is rebuilt.

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRequestParts, Multipart, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::on;
use serde::Deserialize;
use serde_json::Value;

use crate::api::{
    AddSkillRequest, DirectoryListing, DirectoryQuery, DownloadTokenResponse, FilePathQuery,
    FileQuery, McpClientBody, McpClientStatus, UploadSkillForm, WorkspaceQuery, WorkspaceSkill,
    WorkspaceStatus,
};
use crate::auth::UserId;
use crate::download::DownloadClaims;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiQuery};
use crate::service::workspace::{self as service, open_session, tenant_path};
use crate::state::AppState;

use super::table::{Access, Query, Route, any, optional, query, schema};
pub(super) use service::UPLOAD_BODY_LIMIT;

/// The `/workspace/` routes (the from-library ones are the library's).
pub(super) const ROUTES: &[Route] = &[
    Route::get("/workspace/mcp", |m| on(m, list_mcps))
        .user()
        .query(SESSION)
        .ok(schema::<Vec<McpClientStatus>>),
    Route::post("/workspace/mcp", |m| on(m, add_mcp))
        .user()
        .query(SESSION)
        .body(schema::<McpClientBody>)
        .created(any),
    Route::delete("/workspace/mcp/{mcp_name}", |m| on(m, remove_mcp))
        .user()
        .query(SESSION),
    Route::get("/workspace/skill", |m| on(m, list_skills))
        .user()
        .query(SESSION)
        .ok(schema::<Vec<WorkspaceSkill>>),
    Route::post("/workspace/skill", |m| on(m, add_skill))
        .user()
        .query(SESSION)
        .body(schema::<AddSkillRequest>)
        .created(any),
    Route::post("/workspace/skill/upload", |m| {
        on(m, upload_skill).layer(axum::extract::DefaultBodyLimit::max(UPLOAD_BODY_LIMIT))
    })
    .user()
    .query(SESSION)
    .form(schema::<UploadSkillForm>)
    .created(any),
    Route::delete("/workspace/skill/{skill_name}", |m| on(m, remove_skill))
        .user()
        .query(SESSION),
    Route::get("/workspace/directories", |m| on(m, directories))
        .user()
        .query(&[query("agent_id"), query("session_id"), optional("path")])
        .ok(schema::<DirectoryListing>),
    Route::get("/workspace/status", |m| on(m, status))
        .user()
        .query(SESSION)
        .ok(schema::<WorkspaceStatus>),
    Route::post("/workspace/files/download-token", |m| on(m, download_token))
        .user()
        .query(FILE)
        .ok(schema::<DownloadTokenResponse>),
    // A download token may stand in for the caller's credentials.
    Route::get("/workspace/files", |m| on(m, read_file))
        .access(Access::Token)
        .query(&[
            query("agent_id"),
            query("session_id"),
            query("path"),
            optional("download"),
            optional("token"),
        ])
        .ok(any),
];

/// The session whose workspace it is.
const SESSION: &[Query] = &[query("agent_id"), query("session_id")];
/// A file of that workspace.
const FILE: &[Query] = &[query("agent_id"), query("session_id"), query("path")];

/// `201` with AgentScope's empty (`null`) body.
fn created() -> (StatusCode, Json<Value>) {
    (StatusCode::CREATED, Json(Value::Null))
}

/// `GET /workspace/mcp`.
pub(super) async fn list_mcps(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
) -> ApiResult<Json<Vec<McpClientStatus>>> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    Ok(Json(service::list_mcps(&ws).await?))
}

/// `POST /workspace/mcp`.
pub(super) async fn add_mcp(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
    ApiJson(body): ApiJson<McpClientBody>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    service::add_mcp(&ws, &body).await?;
    Ok(created())
}

/// `DELETE /workspace/mcp/{mcp_name}`.
pub(super) async fn remove_mcp(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
) -> ApiResult<StatusCode> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    service::remove_mcp(&ws, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /workspace/skill`.
pub(super) async fn list_skills(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
) -> ApiResult<Json<Vec<WorkspaceSkill>>> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    Ok(Json(service::list_skills(&ws).await?))
}

/// `POST /workspace/skill`: a skill folder inside the workspace.
pub(super) async fn add_skill(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
    ApiJson(body): ApiJson<AddSkillRequest>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    service::add_skill_from_path(&state, &ws, &body.skill_path).await?;
    Ok(created())
}

/// `POST /workspace/skill/upload`: a folder as a manifest and its files.
pub(super) async fn upload_skill(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
    multipart: Multipart,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    service::upload_skill(&state, &ws, crate::upload::upload(multipart)).await?;
    Ok(created())
}

/// `DELETE /workspace/skill/{skill_name}`.
pub(super) async fn remove_skill(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
) -> ApiResult<StatusCode> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    ws.workspace
        .remove_skill(&name, &ws.session.agent_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /workspace/directories`.
pub(super) async fn directories(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<DirectoryQuery>,
) -> ApiResult<Json<DirectoryListing>> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    Ok(Json(service::list_directory(&ws, &q.path).await?))
}

/// `GET /workspace/status`.
pub(super) async fn status(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<WorkspaceQuery>,
) -> ApiResult<Json<WorkspaceStatus>> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    Ok(Json(service::workspace_status(&ws).await?))
}

/// `POST /workspace/files/download-token`: fails early (404) when the
/// file does not exist.
pub(super) async fn download_token(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<FilePathQuery>,
) -> ApiResult<Json<DownloadTokenResponse>> {
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    let rel = tenant_path(ws.workspace.workdir(), &q.path)?;
    drop(service::open_file(&ws, &rel).await?);
    let (token, expires_at) = crate::download::mint_download_token(
        state.sealer(),
        &user,
        &ws.session.agent_id,
        &ws.session.id,
        &rel.to_string_lossy(),
        state.edge().download_token_ttl,
    )?;
    Ok(Json(DownloadTokenResponse { token, expires_at }))
}

/// Who may download: the authenticated caller, or the bearer of a download
/// token (accepted on this route only).
pub(super) enum DownloadCaller {
    /// Authenticated as usual.
    User(String),
    /// A valid, unexpired token.
    Token(DownloadClaims),
}

impl FromRequestParts<AppState> for DownloadCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        #[derive(Deserialize)]
        struct TokenQuery {
            token: Option<String>,
        }
        let token = serde_urlencoded::from_str::<TokenQuery>(parts.uri.query().unwrap_or_default())
            .ok()
            .and_then(|q| q.token);
        match token {
            Some(token) => {
                crate::download::open_download_token(state.sealer(), &token).map(Self::Token)
            }
            None => UserId::from_request_parts(parts, state)
                .await
                .map(|UserId(user)| Self::User(user)),
        }
    }
}

/// `GET /workspace/files`: the file, streamed.
pub(super) async fn read_file(
    State(state): State<AppState>,
    caller: DownloadCaller,
    ApiQuery(q): ApiQuery<FileQuery>,
) -> ApiResult<Response> {
    let wrong_token = || ApiError::Forbidden("The download token is for another file".to_owned());
    let (user, claims) = match caller {
        DownloadCaller::User(user) => (user, None),
        DownloadCaller::Token(claims) => {
            if claims.agent != q.agent_id || claims.session != q.session_id {
                return Err(wrong_token());
            }
            (claims.user.clone(), Some(claims))
        }
    };
    let ws = open_session(&state, &user, &q.agent_id, &q.session_id).await?;
    let rel = tenant_path(ws.workspace.workdir(), &q.path)?;
    if claims.is_some_and(|c| c.path != rel.to_string_lossy()) {
        return Err(wrong_token());
    }
    let download = service::open_file(&ws, &rel).await?;
    Ok(file_response(download, q.download))
}

/// Types a browser would run as a page of the API's origin: served as
/// plain text unless downloaded.
const ACTIVE: &[&str] = &["html", "htm", "xhtml", "svg", "xml", "xsl", "js", "mjs"];

/// The `Content-Type` of a file name, from a small table.
fn content_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "md" | "log" | "csv" | "tsv" | "py" | "rs" | "toml" | "yaml" | "yml" | "ini"
        | "sh" | "c" | "h" | "cpp" | "java" | "go" | "ts" => "text/plain; charset=utf-8",
        "json" => "application/json",
        "html" | "htm" => "text/html; charset=utf-8",
        "xhtml" => "application/xhtml+xml",
        "xml" | "xsl" => "application/xml",
        "svg" => "image/svg+xml",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "tar" => "application/x-tar",
        _ => "application/octet-stream",
    }
}

/// `attachment` with the name made safe: an ASCII fallback and the
/// UTF-8 name percent-encoded (RFC 6266).
fn attachment(name: &str) -> HeaderValue {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ' ') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let ascii = if ascii.trim().is_empty() {
        "download".to_owned()
    } else {
        ascii
    };
    let mut encoded = String::new();
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    HeaderValue::from_str(&format!(
        "attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

fn file_response(download: service::FileDownload, as_attachment: bool) -> Response {
    let name = download.name;
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let kind = if !as_attachment && ACTIVE.contains(&ext.as_str()) {
        "text/plain; charset=utf-8"
    } else {
        content_type(&name)
    };
    let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(download.file));
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(download.len));
    crate::served_file::sandbox(headers);
    if as_attachment {
        headers.insert(header::CONTENT_DISPOSITION, attachment(&name));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachment_names_cannot_break_the_header() {
        assert_eq!(
            attachment("report.pdf"),
            "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"
        );
        let evil = attachment("a\"; filename=x.html\r\n.txt");
        let text = evil.to_str().unwrap();
        assert!(
            text.starts_with("attachment; filename=\"a__ filename_x.html__.txt\""),
            "{text}"
        );
        assert!(!text.contains('\r') && !text.contains('\n'));
        assert!(
            attachment("été.md")
                .to_str()
                .unwrap()
                .contains("%C3%A9t%C3%A9.md")
        );
    }

    #[test]
    fn content_types_come_from_a_small_table() {
        assert_eq!(content_type("a.PNG"), "image/png");
        assert_eq!(content_type("noext"), "application/octet-stream");
        assert_eq!(content_type("x.svg"), "image/svg+xml");
    }
}
