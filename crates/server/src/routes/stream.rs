//! `GET /sessions/{id}/stream`: the session's events as SSE — the current
//! run's retained log after `after`, then live events of this and later
//! runs, with a `:` heartbeat; the stream ends when the session is deleted.
//!
//! The replay log keeps a run's last `replay_limit` events: a client whose
//! `after` is older than that gets the whole retained log, a consistent
//! suffix of the run.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use oxiscope_storage::{BusEvent, Cursor};

use crate::api::StreamQuery;
use crate::auth::UserId;
use crate::error::{ApiError, ApiResult};
use crate::extract::ApiQuery;
use crate::state::AppState;

/// One SSE frame: `data: <payload>\n\n`.
fn frame(event: &BusEvent) -> Bytes {
    let mut out = Vec::with_capacity(event.payload.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(event.payload.as_bytes());
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A `:` comment every `every`.
fn heartbeats(every: Duration) -> BoxStream<'static, Bytes> {
    stream::unfold((), move |()| async move {
        tokio::time::sleep(every).await;
        Some((Bytes::from_static(b":\n\n"), ()))
    })
    .boxed()
}

pub(super) async fn stream(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path(session_id): Path<String>,
    ApiQuery(query): ApiQuery<StreamQuery>,
) -> ApiResult<Response> {
    let after: Option<Cursor> = query
        .after
        .as_deref()
        .filter(|a| !a.is_empty())
        .map(str::parse)
        .transpose()
        .map_err(|e: oxiscope_storage::InvalidCursor| {
            ApiError::invalid(&["query", "after"], e.to_string(), "value_error")
        })?;
    let at = crate::service::SessionKey {
        owner: &user,
        agent_id: &query.agent_id,
        session_id: &session_id,
    };
    let events = state.sessions().subscribe(at, after).await?;
    // `None` marks the end of the events: the response ends with them.
    let frames = events
        .map(|e| Some(frame(&e)))
        .chain(stream::once(async { None }));
    let beats = heartbeats(state.edge().heartbeat).map(Some);
    let merged = stream::select(frames, beats)
        .take_while(|f| std::future::ready(f.is_some()))
        .filter_map(std::future::ready);
    let shutdown = state.shutdown_token().clone();
    let body = merged
        .take_until(async move { shutdown.cancelled().await })
        .map(Ok::<_, Infallible>);
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}
