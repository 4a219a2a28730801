//! The Bot API calls the channel makes (`getMe`, `getUpdates`,
//! `sendMessage`, `getFile`, `setWebhook`, `deleteWebhook`), each a POST
//! of JSON to `<base>/bot<token>/<method>` answered by
//! `{"ok": true, "result": ...}` or `{"ok": false, "error_code",
//! "description", "parameters": {"retry_after"}}`.

use std::time::Duration;

use oxiscope_http::{HttpClient, RetryPolicy};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};

/// The largest answer read (a page of updates is far smaller).
const MAX_ANSWER: u64 = 8 * 1024 * 1024;

#[derive(Debug, Deserialize)]
struct Answer<T> {
    ok: bool,
    result: Option<T>,
    #[serde(default)]
    error_code: Option<u16>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Parameters>,
}

#[derive(Debug, Deserialize)]
struct Parameters {
    #[serde(default)]
    retry_after: Option<u64>,
}

/// One bot's API.
#[derive(Debug, Clone)]
pub(crate) struct Api {
    pub(crate) http: HttpClient,
    pub(crate) base: String,
    pub(crate) token: String,
}

impl Api {
    /// Calls `method` with `params`.
    ///
    /// # Errors
    /// [`Error::Platform`] for the API's refusal (with its `retry_after`),
    /// [`Error::Transport`] when no answer came, [`Error::Malformed`] for
    /// an answer that is not the API's. No message names the token.
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<T> {
        let url = format!("{}/bot{}/{method}", self.base, self.token);
        let http = self.http.with_retry_policy(RetryPolicy::none());
        let request = http.post(url).json(params);
        let body = match http.send(request).await {
            Ok(response) => http
                .body(response)
                .collect_bounded(MAX_ANSWER)
                .await
                .map_err(|e| Error::Transport(self.hide(&e.to_string())))?,
            Err(oxiscope_http::Error::Status(status)) => {
                return Err(self.refusal(status.status.as_u16(), &status.body, status.retry_after));
            }
            Err(e) => return Err(Error::Transport(self.hide(&e.to_string()))),
        };
        let answer: Answer<T> = serde_json::from_slice(&body)
            .map_err(|e| Error::Malformed(format!("{method}: {e}")))?;
        match answer {
            Answer {
                ok: true,
                result: Some(result),
                ..
            } => Ok(result),
            Answer {
                error_code,
                description,
                parameters,
                ..
            } => Err(Error::Platform {
                status: error_code.unwrap_or(500),
                description: self.hide(&description.unwrap_or_else(|| format!("{method} failed"))),
                retry_after: parameters
                    .and_then(|p| p.retry_after)
                    .map(Duration::from_secs),
            }),
        }
    }

    /// Downloads a file the API named (`getFile`'s `file_path`).
    ///
    /// # Errors
    /// As [`Api::call`]; [`Error::Invalid`] past `max_bytes`.
    pub(crate) async fn download(&self, file_path: &str, max_bytes: u64) -> Result<Vec<u8>> {
        if file_path.contains("..") || file_path.starts_with('/') {
            return Err(Error::Malformed(
                "a file path outside the bot's files".into(),
            ));
        }
        let url = format!("{}/file/bot{}/{file_path}", self.base, self.token);
        let got = self
            .http
            .get_bytes(url, max_bytes, Duration::from_secs(60))
            .await
            .map_err(|e| match e {
                oxiscope_http::Error::BodyTooLarge { .. } => {
                    Error::Invalid(format!("an attachment is over {max_bytes} bytes"))
                }
                other => Error::Transport(self.hide(&other.to_string())),
            })?;
        Ok(got.bytes.to_vec())
    }

    fn refusal(&self, status: u16, body: &str, retry_after: Option<Duration>) -> Error {
        let answer = serde_json::from_str::<Answer<Value>>(body).ok();
        let description = answer
            .as_ref()
            .and_then(|a| a.description.clone())
            .unwrap_or_else(|| format!("HTTP {status}"));
        let retry_after = answer
            .and_then(|a| a.parameters)
            .and_then(|p| p.retry_after)
            .map(Duration::from_secs)
            .or(retry_after);
        Error::Platform {
            status,
            description: self.hide(&description),
            retry_after,
        }
    }

    /// `text` without the token.
    fn hide(&self, text: &str) -> String {
        if self.token.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.token, "<token>")
        }
    }
}
