//! What the embedding and TTS wires share: their own HTTP client, request
//! errors, and HTTP failures as [`ModelError`]s.

use oxiscope_http::{Error as HttpError, HttpClient};
use oxiscope_model::{Credential, ModelError};

/// Reads a provider's error body into `(code, message)`.
pub(crate) type ReadBody = fn(&str) -> (Option<String>, Option<String>);

/// The shared HTTP client, for a model that was given none.
pub(crate) fn own_client() -> Result<HttpClient, ModelError> {
    HttpClient::shared().map_err(|e| invalid(format!("cannot build the HTTP client: {e}")))
}

/// A request that cannot be made.
pub(crate) fn invalid(message: String) -> ModelError {
    ModelError::InvalidRequest { message }
}

/// The error for a credential of the wrong type.
pub(crate) fn wrong_credential(needs: &str, credential: &Credential) -> ModelError {
    invalid(format!(
        "{needs}, not a {}",
        credential.credential_type().as_str()
    ))
}

/// An HTTP failure of a call to `provider`; `read_body` turns an error
/// body into the provider's `(code, message)`; `what` names what was being
/// read when the body broke (`embedding response`, `speech stream`).
pub(crate) fn from_http(
    err: HttpError,
    provider: &str,
    read_body: ReadBody,
    what: &str,
) -> ModelError {
    match err {
        HttpError::RefusedAddress {
            url,
            address,
            reason,
        } => invalid(format!(
            "the model endpoint {url} resolves to {reason} ({address}), and model endpoints \
             are restricted to public addresses here; nothing was sent to it"
        )),
        HttpError::Status(status) => {
            let (code, message) = read_body(&status.body);
            let message = message.unwrap_or_else(|| {
                let body = status.body.trim();
                if body.is_empty() {
                    format!("HTTP {} with an empty body", status.status.as_u16())
                } else {
                    body.to_owned()
                }
            });
            ModelError::Provider {
                provider: provider.to_owned(),
                status: status.status.as_u16(),
                code,
                message,
                request_id: status.request_id.clone(),
                retry_after: status.retry_after,
            }
        }
        HttpError::Connect { .. } | HttpError::Timeout { .. } => ModelError::Connection {
            message: err.to_string(),
        },
        HttpError::Build { .. } | HttpError::InvalidRequest { .. } => invalid(err.to_string()),
        other => ModelError::Stream {
            message: format!("cannot read the {provider} {what}: {other}"),
        },
    }
}
