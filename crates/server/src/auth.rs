//! Who is calling: API keys (`Authorization: Bearer`), or — only when the
//! operator asks for it — AgentScope's development header `X-User-ID`.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::AppState;

/// How requests are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// `Authorization: Bearer <key>`; keys are stored as SHA-256 hashes.
    ApiKeys,
    /// Trust the `X-User-ID` header, as AgentScope's service does. For
    /// development only: anyone can claim any user.
    DevHeader,
}

/// The authenticated user's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserId(pub String);

/// The hex SHA-256 of an API key: what the store keeps.
#[must_use]
pub fn hash_api_key(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new random API key (`oxk_` + 64 hex digits) and its hash.
#[must_use]
pub fn generate_api_key() -> (String, String) {
    let key = format!(
        "oxk_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let hash = hash_api_key(&key);
    (key, hash)
}

impl FromRequestParts<AppState> for UserId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        match state.auth_mode() {
            AuthMode::DevHeader => {
                let Some(value) = parts.headers.get("x-user-id") else {
                    return Err(ApiError::invalid(
                        &["header", "x-user-id"],
                        "Field required",
                        "missing",
                    ));
                };
                let user = value.to_str().unwrap_or_default().trim();
                if user.is_empty() {
                    return Err(ApiError::Unauthorized(
                        "X-User-ID header is required.".to_owned(),
                    ));
                }
                Ok(Self(user.to_owned()))
            }
            AuthMode::ApiKeys => {
                let key = parts
                    .headers
                    .get(axum::http::header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| ApiError::Unauthorized("Not authenticated".to_owned()))?;
                let record = state.storage().find_api_key(&hash_api_key(key)).await?;
                record
                    .map(|r| Self(r.user_id))
                    .ok_or_else(|| ApiError::Unauthorized("Invalid API key".to_owned()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_hash_to_stable_hex_and_differ() {
        assert_eq!(
            hash_api_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let (k1, h1) = generate_api_key();
        let (k2, _) = generate_api_key();
        assert_ne!(k1, k2);
        assert_eq!(hash_api_key(&k1), h1);
        assert!(k1.starts_with("oxk_"));
    }
}
