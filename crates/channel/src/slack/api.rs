//! The Web API calls the channel makes (`apps.connections.open` with the
//! app-level token, `auth.test` and `chat.postMessage` with the bot
//! token): a POST answered `{"ok": true, ...}` or `{"ok": false,
//! "error"}` — usually with status 200 — and a `429` with `Retry-After`
//! when rate-limited.

use std::time::Duration;

use oxiscope_http::{HttpClient, RetryPolicy};
use serde_json::Value;

use crate::error::{Error, Result};

/// The largest answer read.
const MAX_ANSWER: u64 = 1024 * 1024;

/// One app's Web API.
#[derive(Debug, Clone)]
pub(crate) struct Api {
    pub(crate) http: HttpClient,
    pub(crate) base: String,
}

impl Api {
    /// Calls `method` with `token` and a JSON `body`.
    ///
    /// # Errors
    /// [`Error::Platform`] for `ok: false` (401 for refused tokens, 429
    /// for `ratelimited`) or an error status with its `Retry-After`;
    /// [`Error::Transport`] when no answer came; [`Error::Malformed`] for
    /// an answer that is not JSON.
    pub(crate) async fn call(&self, method: &str, token: &str, body: &Value) -> Result<Value> {
        let http = self.http.with_retry_policy(RetryPolicy::none());
        let request = http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token)
            .json(body);
        let raw = match http.send(request).await {
            Ok(response) => http
                .body(response)
                .collect_bounded(MAX_ANSWER)
                .await
                .map_err(|e| Error::Transport(e.to_string()))?,
            Err(oxiscope_http::Error::Status(status)) => {
                return Err(Error::Platform {
                    status: status.status.as_u16(),
                    description: format!("{method} failed"),
                    retry_after: status.retry_after,
                });
            }
            Err(e) => return Err(Error::Transport(e.to_string())),
        };
        let answer: Value =
            serde_json::from_slice(&raw).map_err(|e| Error::Malformed(format!("{method}: {e}")))?;
        if answer.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(answer);
        }
        let error = answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown_error")
            .to_owned();
        let status = match error.as_str() {
            "invalid_auth" | "not_authed" | "account_inactive" | "token_revoked"
            | "token_expired" | "missing_scope" => 401,
            "ratelimited" => 429,
            "internal_error" | "fatal_error" | "service_unavailable" | "request_timeout" => 503,
            _ => 400,
        };
        Err(Error::Platform {
            status,
            description: format!("{method}: {error}"),
            retry_after: (status == 429).then_some(Duration::from_secs(1)),
        })
    }
}
