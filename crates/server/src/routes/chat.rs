//! `POST /chat/`: start (or resume) a run in the background.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::on;
use oxiscope_agent::otel::{SpanContext, SpanData, SpanKind};

use super::table::{Route, schema};
use crate::api::{ChatRequest, ChatTriggerResponse};
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::extract::ApiJson;
use crate::service::SessionKey;
use crate::state::AppState;

/// The `/chat/` route.
pub(super) const ROUTES: &[Route] = &[Route::post("/chat/", |m| on(m, chat))
    .user()
    .body(schema::<ChatRequest>)
    .ok(schema::<ChatTriggerResponse>)];

/// `POST /chat/`: `{status: "started", session_id}`; the events arrive on
/// the session's stream. A resume sent while a run is active is queued for
/// it; 429 when the session already has `inbox_limit` inputs queued, or
/// when the caller has spent the operator's token quota (checked before
/// any model is called); 422 for media the session's models may not read
/// (checked before anything is stored, so the session stays usable).
///
/// With tracing on, the request is a span and the run's spans hang under
/// it; under the caller's W3C `traceparent` only when the operator trusts
/// callers' headers (`ServerConfig::trust_traceparent`), else a new trace.
pub(super) async fn chat(
    State(state): State<AppState>,
    UserId(user): UserId,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ChatRequest>,
) -> ApiResult<Json<ChatTriggerResponse>> {
    let Some(exporter) = state.config().span_exporter.clone() else {
        return start(&state, &user, body, None).await;
    };
    let caller = headers
        .get("traceparent")
        .filter(|_| state.edge().trust_traceparent)
        .and_then(|v| v.to_str().ok())
        .and_then(SpanContext::from_traceparent);
    let mut span = SpanData::start("POST /chat/", SpanKind::Server, caller);
    span.set("http.request.method", "POST");
    span.set("http.route", "/chat/");
    span.set("enduser.id", user.as_str());
    span.set("gen_ai.conversation.id", body.session_id.as_str());
    span.set("gen_ai.agent.id", body.agent_id.as_str());
    let outcome = start(&state, &user, body, Some(span.context)).await;
    match &outcome {
        Ok(_) => span.set("http.response.status_code", 200_i64),
        Err(e) => {
            let status = i64::from(e.status().as_u16());
            span.set("http.response.status_code", status);
            if status >= 500 {
                span.fail("http", e.to_string());
            }
        }
    }
    span.end();
    exporter.export(span);
    outcome
}

async fn start(
    state: &AppState,
    user: &str,
    body: ChatRequest,
    trace: Option<SpanContext>,
) -> ApiResult<Json<ChatTriggerResponse>> {
    let at = SessionKey {
        owner: user,
        agent_id: &body.agent_id,
        session_id: &body.session_id,
    };
    // Started or queued, the answer is the same: the events arrive on the
    // session's stream.
    state.sessions().submit(at, body.input, trace).await?;
    Ok(Json(ChatTriggerResponse {
        status: "started".to_owned(),
        session_id: body.session_id,
    }))
}
