//! AgentScope routes of features this server does not run: SOPs and
//! realtime voice. Each answers the way AgentScope
//! answers for a feature that is turned off — a list route with an empty
//! list, anything else with `503` and a `detail` saying what
//! is missing — so a client built for AgentScope (its web UI polls several
//! of them on every page) never meets a bare `404` on a documented route.
//!
//! When a feature lands, its rows leave this table for real routes.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter, on};
use serde_json::{Value, json};

use super::Verb;
use crate::auth::UserId;
use crate::state::AppState;

/// What an off route answers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    /// `200` with this JSON: the empty form of the route's list.
    Empty(&'static str),
    /// `503` with this `detail`.
    Unavailable(&'static str),
}

impl Answer {
    fn respond(self) -> Response {
        match self {
            Self::Empty(body) => {
                let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
                (StatusCode::OK, Json(value)).into_response()
            }
            Self::Unavailable(detail) => (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "detail": detail })),
            )
                .into_response(),
        }
    }

    /// The status code, as the OpenAPI document spells it.
    pub(crate) fn status(self) -> &'static str {
        match self {
            Self::Empty(_) => "200",
            Self::Unavailable(_) => "503",
        }
    }
}

/// One off route: method, path, whether it takes the caller's identity
/// (AgentScope's user-scoped routes), its answer.
pub(crate) type OffRoute = (Verb, &'static str, bool, Answer);

const SOP: Answer = Answer::Unavailable(
    "SOPs are not available on this server: this version of oxiscope does not run SOPs.",
);
const REALTIME: Answer = Answer::Unavailable(
    "Realtime voice is not available on this server: this version of oxiscope has no \
     realtime models.",
);
const NO_MODELS: Answer = Answer::Empty(r#"{"models": [], "total": 0}"#);

/// Every off route.
pub(crate) const OFF: &[OffRoute] = {
    use Verb::{Delete, Get, Patch, Post};
    &[
        (
            Get,
            "/agent/schema",
            false,
            Answer::Unavailable("This deprecated form schema is not served; use /agent/schema/v2."),
        ),
        (Get, "/sop/schema", true, SOP),
        (
            Get,
            "/sop/",
            true,
            Answer::Empty(r#"{"sops": [], "total": 0}"#),
        ),
        (Post, "/sop/", true, SOP),
        (
            Get,
            "/sop/runs",
            true,
            Answer::Empty(r#"{"runs": [], "total": 0}"#),
        ),
        (Get, "/sop/runs/{sop_run_id}", true, SOP),
        (Delete, "/sop/runs/{sop_run_id}", true, SOP),
        (Post, "/sop/runs/{sop_run_id}/verdict", true, SOP),
        (Get, "/sop/{sop_id}", true, SOP),
        (Patch, "/sop/{sop_id}", true, SOP),
        (Delete, "/sop/{sop_id}", true, SOP),
        (Post, "/sop/{sop_id}/runs", true, SOP),
        (Get, "/realtime/models", false, NO_MODELS),
        (Get, "/realtime/config", true, REALTIME),
        (
            Post,
            "/realtime/sessions/{session_id}/offer",
            true,
            REALTIME,
        ),
    ]
};

/// The handler of an off route: user-scoped ones authenticate first, as
/// the real route would.
pub(crate) fn handler(filter: MethodFilter, user: bool, answer: Answer) -> MethodRouter<AppState> {
    if user {
        on(
            filter,
            move |UserId(_): UserId| async move { answer.respond() },
        )
    } else {
        on(filter, move || async move { answer.respond() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_empty_answer_is_json() {
        for (_, path, _, answer) in OFF {
            if let Answer::Empty(body) = answer {
                assert!(
                    serde_json::from_str::<Value>(body).is_ok(),
                    "{path}: {body}"
                );
            }
        }
    }
}
