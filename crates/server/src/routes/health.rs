//! `GET /health`: liveness plus each component checked for real.
//!
//! - `storage`: a trivial query.
//! - `message_bus`: a round trip: an event published on a probe session
//!   arrives on a subscription to it.
//! - `workspace`: for sandboxed workspaces, whether bubblewrap still runs
//!   sandboxes ([`oxiscope_workspace::probe_sandbox`]), remembered for
//!   [`SANDBOX_TTL`] since it starts a process; local workspaces need no
//!   check.
//! - `chat`: `not_ready` once the server is shutting down.
//!
//! Any `not_ready` makes the status `not_ready` and the answer a 503, as
//! AgentScope does; each failure is logged with its cause.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::on;
use axum::{Extension, Json};
use futures_util::StreamExt as _;
use oxiscope_storage::MessageBus;
use oxiscope_workspace::SandboxConfig;
use tokio::sync::Mutex;

use super::table::{Access, Route, schema};
use crate::api::HealthResponse;
use crate::state::AppState;
use oxiscope_session::WorkspaceMode;

/// `/health`: it needs no user, though AgentScope documents its header.
pub(super) const ROUTES: &[Route] = &[Route::get("/health", |m| on(m, health))
    .access(Access::PublicWithUserHeader)
    .ok(schema::<HealthResponse>)];

/// How long one component check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a sandbox probe's answer is reused.
pub(crate) const SANDBOX_TTL: Duration = Duration::from_secs(15);
/// The bus session the round trip uses; never a real session's id (those
/// are 32 hex digits).
const PROBE_SESSION: &str = "__oxiscope_health__";

/// What checks keep between requests: the last sandbox probe.
#[derive(Debug, Default)]
pub(crate) struct HealthChecks {
    sandbox: Mutex<Option<(Instant, Result<(), String>)>>,
}

/// `GET /health`.
pub(super) async fn health(
    State(state): State<AppState>,
    Extension(checks): Extension<Arc<HealthChecks>>,
) -> (StatusCode, Json<HealthResponse>) {
    let (storage, bus, workspace) = tokio::join!(
        timed(async { state.storage().ping().await.map_err(|e| e.to_string()) }),
        timed(bus_round_trip(state.bus())),
        workspace_check(&state, &checks),
    );
    let chat = if state.shutdown_token().is_cancelled() {
        Err("the server is shutting down".to_owned())
    } else {
        Ok(())
    };
    let mut components = BTreeMap::new();
    for (name, outcome) in [
        ("storage", storage),
        ("message_bus", bus),
        ("workspace", workspace),
        ("chat", chat),
    ] {
        let status = match outcome {
            Ok(()) => "ok",
            Err(cause) => {
                tracing::error!(component = name, %cause, "health check failed");
                "not_ready"
            }
        };
        components.insert(name.to_owned(), status.to_owned());
    }
    let ready = components.values().all(|c| c != "not_ready");
    let body = HealthResponse {
        status: if ready { "ok" } else { "not_ready" }.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        components,
    };
    let code = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body))
}

/// `check`, failing when it takes longer than [`CHECK_TIMEOUT`].
async fn timed(check: impl Future<Output = Result<(), String>>) -> Result<(), String> {
    tokio::time::timeout(CHECK_TIMEOUT, check)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {CHECK_TIMEOUT:?}")))
}

/// Publishes a fresh token on the probe session and waits for it on a
/// subscription. Nothing is kept in the probe's log (live delivery only);
/// concurrent rounds skip each other's tokens.
async fn bus_round_trip(bus: &dyn MessageBus) -> Result<(), String> {
    let token: Arc<str> = format!("{{\"health\":\"{}\"}}", uuid::Uuid::new_v4().simple()).into();
    let mut events = bus
        .subscribe(PROBE_SESSION, None)
        .await
        .map_err(|e| e.to_string())?;
    bus.publish(PROBE_SESSION, Arc::clone(&token), 0)
        .await
        .map_err(|e| e.to_string())?;
    while let Some(event) = events.next().await {
        if event.payload == token {
            return Ok(());
        }
    }
    Err("the subscription ended before the probe event arrived".to_owned())
}

/// The workspace backend: the sandbox probe, remembered for a while.
async fn workspace_check(state: &AppState, checks: &HealthChecks) -> Result<(), String> {
    match &state.config().workspace {
        WorkspaceMode::Sandbox(config) => checks.sandbox(config).await,
        WorkspaceMode::Local => Ok(()),
    }
}

impl HealthChecks {
    /// The sandbox probe's answer, at most [`SANDBOX_TTL`] old. One probe
    /// runs at a time; requests meanwhile wait for its answer.
    async fn sandbox(&self, config: &SandboxConfig) -> Result<(), String> {
        let mut last = self.sandbox.lock().await;
        if let Some((at, outcome)) = last.as_ref()
            && at.elapsed() < SANDBOX_TTL
        {
            return outcome.clone();
        }
        let outcome = timed(async {
            oxiscope_workspace::probe_sandbox(config)
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        *last = Some((Instant::now(), outcome.clone()));
        outcome
    }
}
