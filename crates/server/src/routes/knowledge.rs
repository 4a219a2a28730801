//! `/knowledge_bases/`: knowledge bases, their documents and search. Every
//! route is scoped to the caller: another user's ids answer 404.

use axum::Json;
use axum::extract::{FromRequestParts, Multipart, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use axum::routing::on;
use serde::Deserialize;

use super::table::{Access, Route, any, optional, query, schema};
use crate::api::{
    CreateKnowledgeBaseRequest, CreateKnowledgeBaseResponse, DocumentDownloadQuery,
    DocumentDownloadTokenResponse, DocumentStatusQuery, KbMiddlewareParametersSchemaResponse,
    KnowledgeBaseView, ListChunkersResponse, ListDocumentChunksResponse, ListDocumentsQuery,
    ListKbEmbeddingModelsResponse, ListKnowledgeBasesQuery, ListKnowledgeBasesResponse,
    ListKnowledgeDocumentStatusResponse, ListKnowledgeDocumentsResponse,
    ListSupportedContentTypesResponse, PageQuery, SearchKnowledgeBaseRequest,
    SearchKnowledgeBaseResponse, UpdateKnowledgeBaseRequest, UploadKnowledgeDocumentForm,
    UploadKnowledgeDocumentResponse,
};
use crate::auth::UserId;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiQuery};
use crate::service::knowledge as service;
use crate::state::AppState;

/// The `/knowledge_bases/` routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/knowledge_bases/embedding_models", |m| {
        on(m, embedding_models)
    })
    .user()
    .ok(schema::<ListKbEmbeddingModelsResponse>),
    Route::get("/knowledge_bases/chunkers", |m| on(m, chunkers))
        .user()
        .ok(schema::<ListChunkersResponse>),
    Route::get("/knowledge_bases/middleware/parameters_schema", |m| {
        on(m, middleware_schema)
    })
    .user()
    .ok(schema::<KbMiddlewareParametersSchemaResponse>),
    Route::get("/knowledge_bases/supported_content_types", |m| {
        on(m, content_types)
    })
    .user()
    .ok(schema::<ListSupportedContentTypesResponse>),
    Route::post("/knowledge_bases/", |m| on(m, create))
        .user()
        .body(schema::<CreateKnowledgeBaseRequest>)
        .created(schema::<CreateKnowledgeBaseResponse>),
    Route::get("/knowledge_bases/", |m| on(m, list))
        .user()
        .query(&[
            optional("id"),
            optional("name"),
            optional("page"),
            optional("page_size"),
            optional("orderby"),
            optional("desc"),
        ])
        .ok(schema::<ListKnowledgeBasesResponse>),
    Route::patch(BASE, |m| on(m, update))
        .user()
        .body(schema::<UpdateKnowledgeBaseRequest>)
        .ok(schema::<KnowledgeBaseView>),
    Route::delete(BASE, |m| on(m, delete)).user(),
    Route::get(DOCS, |m| on(m, list_documents))
        .user()
        .query(&[
            optional("id"),
            optional("keywords"),
            optional("status"),
            optional("page"),
            optional("page_size"),
            optional("orderby"),
            optional("desc"),
        ])
        .ok(schema::<ListKnowledgeDocumentsResponse>),
    Route::post(DOCS, |m| {
        // The upload limit is the service's (configurable); it counts the
        // file's bytes as they stream.
        on(m, upload).layer(axum::extract::DefaultBodyLimit::disable())
    })
    .user()
    .form(schema::<UploadKnowledgeDocumentForm>)
    .created(schema::<UploadKnowledgeDocumentResponse>),
    Route::get(
        "/knowledge_bases/{knowledge_base_id}/documents/status",
        |m| on(m, statuses),
    )
    .user()
    .query(&[query("ids")])
    .ok(schema::<ListKnowledgeDocumentStatusResponse>),
    Route::delete(DOC, |m| on(m, delete_document)).user(),
    // A download token may stand in for the caller's credentials.
    Route::get(DOC, |m| on(m, download))
        .access(Access::TokenOrUser)
        .query(&[optional("download"), optional("token")])
        .ok(any),
    Route::post("/knowledge_bases/{knowledge_base_id}/search", |m| {
        on(m, search)
    })
    .user()
    .body(schema::<SearchKnowledgeBaseRequest>)
    .ok(schema::<SearchKnowledgeBaseResponse>),
    Route::get(
        "/knowledge_bases/{knowledge_base_id}/documents/{document_id}/chunks",
        |m| on(m, chunks),
    )
    .user()
    .query(&[optional("page"), optional("page_size")])
    .ok(schema::<ListDocumentChunksResponse>),
    Route::post(
        "/knowledge_bases/{knowledge_base_id}/documents/{document_id}/download_token",
        |m| on(m, download_token),
    )
    .user()
    .ok(schema::<DocumentDownloadTokenResponse>),
];

const BASE: &str = "/knowledge_bases/{knowledge_base_id}";
const DOCS: &str = "/knowledge_bases/{knowledge_base_id}/documents";
const DOC: &str = "/knowledge_bases/{knowledge_base_id}/documents/{document_id}";

/// `GET /knowledge_bases/embedding_models`.
pub(super) async fn embedding_models(
    State(state): State<AppState>,
    UserId(user): UserId,
) -> ApiResult<Json<ListKbEmbeddingModelsResponse>> {
    Ok(Json(service::embedding_models(&state, &user).await?))
}

/// `GET /knowledge_bases/chunkers`.
pub(super) async fn chunkers(UserId(_): UserId) -> Json<ListChunkersResponse> {
    Json(service::chunkers())
}

/// `GET /knowledge_bases/middleware/parameters_schema`.
pub(super) async fn middleware_schema(
    UserId(_): UserId,
) -> Json<KbMiddlewareParametersSchemaResponse> {
    Json(service::middleware_schema())
}

/// `GET /knowledge_bases/supported_content_types`.
pub(super) async fn content_types(
    State(state): State<AppState>,
    UserId(_): UserId,
) -> Json<ListSupportedContentTypesResponse> {
    Json(service::content_types(&state))
}

/// `POST /knowledge_bases/`.
pub(super) async fn create(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiJson(body): ApiJson<CreateKnowledgeBaseRequest>,
) -> ApiResult<(StatusCode, Json<CreateKnowledgeBaseResponse>)> {
    let knowledge_base_id = service::create_base(&state, &user, body).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreateKnowledgeBaseResponse { knowledge_base_id }),
    ))
}

/// `GET /knowledge_bases/`.
pub(super) async fn list(
    State(state): State<AppState>,
    UserId(user): UserId,
    ApiQuery(q): ApiQuery<ListKnowledgeBasesQuery>,
) -> ApiResult<Json<ListKnowledgeBasesResponse>> {
    Ok(Json(service::list_bases(&state, &user, q).await?))
}

/// `PATCH /knowledge_bases/{knowledge_base_id}`.
pub(super) async fn update(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateKnowledgeBaseRequest>,
) -> ApiResult<Json<KnowledgeBaseView>> {
    Ok(Json(service::update_base(&state, &user, &id, body).await?))
}

/// `DELETE /knowledge_bases/{knowledge_base_id}`.
pub(super) async fn delete(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    service::delete_base(&state, &user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /knowledge_bases/{knowledge_base_id}/documents`.
pub(super) async fn list_documents(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<ListDocumentsQuery>,
) -> ApiResult<Json<ListKnowledgeDocumentsResponse>> {
    Ok(Json(service::list_documents(&state, &user, &id, q).await?))
}

/// `POST /knowledge_bases/{knowledge_base_id}/documents`: multipart
/// `file` (and optionally `content_type`).
pub(super) async fn upload(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    multipart: Multipart,
) -> ApiResult<(StatusCode, Json<UploadKnowledgeDocumentResponse>)> {
    let answer =
        service::upload_document(&state, &user, &id, crate::upload::upload(multipart)).await?;
    Ok((StatusCode::CREATED, Json(answer)))
}

/// `GET /knowledge_bases/{knowledge_base_id}/documents/status`.
pub(super) async fn statuses(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<DocumentStatusQuery>,
) -> ApiResult<Json<ListKnowledgeDocumentStatusResponse>> {
    Ok(Json(
        service::document_statuses(&state, &user, &id, &q.ids).await?,
    ))
}

/// `DELETE /knowledge_bases/{knowledge_base_id}/documents/{document_id}`.
pub(super) async fn delete_document(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path((kb, doc)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    service::delete_document(&state, &user, &kb, &doc).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who downloads: the caller, or the holder of a token.
#[derive(Debug)]
pub(super) struct DocumentCaller {
    user: String,
    /// The document a token is for.
    only: Option<(String, String)>,
}

impl FromRequestParts<AppState> for DocumentCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        #[derive(Deserialize)]
        struct TokenQuery {
            token: Option<String>,
        }
        let token = serde_urlencoded::from_str::<TokenQuery>(parts.uri.query().unwrap_or_default())
            .ok()
            .and_then(|q| q.token);
        match token {
            Some(token) => {
                let claims = crate::download::open_token(state.sealer(), &token)?;
                Ok(Self {
                    user: claims.user,
                    only: Some((claims.kb, claims.doc)),
                })
            }
            None => {
                let UserId(user) = UserId::from_request_parts(parts, state).await?;
                Ok(Self { user, only: None })
            }
        }
    }
}

/// `GET /knowledge_bases/{knowledge_base_id}/documents/{document_id}`:
/// the file (with the caller's identity or a download token).
pub(super) async fn download(
    State(state): State<AppState>,
    caller: DocumentCaller,
    Path((kb, doc)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<DocumentDownloadQuery>,
) -> ApiResult<Response> {
    if let Some((token_kb, token_doc)) = &caller.only
        && (token_kb != &kb || token_doc != &doc)
    {
        return Err(ApiError::Forbidden(
            "The download token is for another document".to_owned(),
        ));
    }
    crate::download::document_file(&state, &caller.user, &kb, &doc, q.download).await
}

/// `POST /knowledge_bases/{knowledge_base_id}/search`.
pub(super) async fn search(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<SearchKnowledgeBaseRequest>,
) -> ApiResult<Json<SearchKnowledgeBaseResponse>> {
    Ok(Json(service::search(&state, &user, &id, body).await?))
}

/// `GET /knowledge_bases/{knowledge_base_id}/documents/{document_id}/chunks`.
pub(super) async fn chunks(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path((kb, doc)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<ListDocumentChunksResponse>> {
    Ok(Json(
        service::document_chunks(&state, &user, &kb, &doc, q).await?,
    ))
}

/// `POST .../documents/{document_id}/download_token`.
pub(super) async fn download_token(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path((kb, doc)): Path<(String, String)>,
) -> ApiResult<Json<DocumentDownloadTokenResponse>> {
    Ok(Json(
        crate::download::download_token(&state, &user, &kb, &doc).await?,
    ))
}
