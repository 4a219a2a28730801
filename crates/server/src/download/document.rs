//! Document downloads: with the caller's identity, or with a short-lived
//! token sealed by the server (for links a browser opens).

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use oxiscope_session::knowledge::{document_path, find_document};

use crate::api::DocumentDownloadTokenResponse;
use crate::error::ApiError;
use crate::error::ApiResult;
use crate::state::AppState;

/// A short-lived token to download a document without the caller's
/// identity.
///
/// # Errors
/// 404 when the user has no such document.
pub(crate) async fn download_token(
    state: &AppState,
    user: &str,
    kb_id: &str,
    id: &str,
) -> ApiResult<DocumentDownloadTokenResponse> {
    let doc = find_document(state, user, kb_id, id).await?;
    let (token, expires_at) = super::document_token::mint(
        state.sealer(),
        user,
        kb_id,
        &doc.id,
        state.edge().download_token_ttl,
    )?;
    Ok(DocumentDownloadTokenResponse { token, expires_at })
}

/// Types served as they are; anything else is `application/octet-stream`
/// (so nothing uploaded runs as a page of the API's origin).
const PASSIVE: &[&str] = &[
    "text/plain",
    "text/markdown",
    "text/csv",
    "application/pdf",
    "application/json",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
];

/// The document's file, streamed.
///
/// # Errors
/// 404 when the user has no such document (or its file is gone).
pub(crate) async fn document_file(
    state: &AppState,
    user: &str,
    kb_id: &str,
    id: &str,
    download: bool,
) -> ApiResult<Response> {
    let doc = find_document(state, user, kb_id, id).await?;
    let path = document_path(state, kb_id, &doc.id)?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|_| ApiError::NotFound(format!("Document {id} has no file")))?;
    let kind: &'static str = PASSIVE
        .iter()
        .find(|t| doc.content_type.as_deref() == Some(**t))
        .copied()
        .unwrap_or("application/octet-stream");
    let ascii: String = doc
        .filename
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_ ".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = if download || kind == "application/octet-stream" {
        "attachment"
    } else {
        "inline"
    };
    let mut response = Body::from_stream(tokio_util::io::ReaderStream::new(file)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    crate::served_file::sandbox(headers);
    if let Ok(v) = HeaderValue::from_str(&format!("{disposition}; filename=\"{ascii}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}
