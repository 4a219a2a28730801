//! MiniMax errors: the Anthropic family's, naming MiniMax and reading the
//! `base_resp` bodies MiniMax's gateway answers with.

use oxiscope_model::ModelError;
use serde_json::Value;

/// The provider name in errors.
pub(crate) const PROVIDER: &str = "minimax";

/// `err`, from the Anthropic family's decoding, as a MiniMax error: a
/// provider error names MiniMax, and a body the Anthropic reading left raw
/// (`{"base_resp": {"status_code": 1004, "status_msg": "..."}}`) gives its
/// code and message. Other errors are unchanged.
pub(crate) fn rename(err: ModelError) -> ModelError {
    match err {
        ModelError::Provider {
            status,
            code,
            message,
            request_id,
            retry_after,
            ..
        } => {
            let (code, message) = match code {
                Some(code) => (Some(code), message),
                None => base_resp(&message).unwrap_or((None, message)),
            };
            ModelError::Provider {
                provider: PROVIDER.to_owned(),
                status,
                code,
                message,
                request_id,
                retry_after,
            }
        }
        other => other,
    }
}

/// `(status_code, status_msg)` of a `base_resp` body.
fn base_resp(body: &str) -> Option<(Option<String>, String)> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let resp = parsed.get("base_resp")?;
    let code = resp.get("status_code").map(|c| match c {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let message = resp
        .get("status_msg")
        .and_then(Value::as_str)
        .unwrap_or(body)
        .to_owned();
    Some((code, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::time::Duration;

    fn provider(code: Option<&str>, message: &str) -> ModelError {
        ModelError::Provider {
            provider: "anthropic".into(),
            status: 429,
            code: code.map(str::to_owned),
            message: message.into(),
            request_id: Some("r1".into()),
            retry_after: Some(Duration::from_secs(2)),
        }
    }

    #[test]
    fn provider_errors_name_minimax_and_keep_their_fields() {
        assert_eq!(
            rename(provider(Some("rate_limit_error"), "slow down")),
            ModelError::Provider {
                provider: "minimax".into(),
                status: 429,
                code: Some("rate_limit_error".into()),
                message: "slow down".into(),
                request_id: Some("r1".into()),
                retry_after: Some(Duration::from_secs(2)),
            }
        );
    }

    #[test]
    fn a_base_resp_body_gives_the_code_and_message() {
        let body = r#"{"base_resp": {"status_code": 1002, "status_msg": "rate limit"}}"#;
        let ModelError::Provider { code, message, .. } = rename(provider(None, body)) else {
            panic!()
        };
        assert_eq!(
            (code.as_deref(), message.as_str()),
            (Some("1002"), "rate limit")
        );
        let ModelError::Provider { code, message, .. } = rename(provider(None, "<html>")) else {
            panic!()
        };
        assert_eq!((code, message.as_str()), (None, "<html>"));
    }

    #[test]
    fn other_errors_are_unchanged() {
        let err = ModelError::Stream {
            message: "cut".into(),
        };
        assert_eq!(rename(err.clone()), err);
    }
}
