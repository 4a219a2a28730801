//! [`AuthProvider`]: how a request's headers name its user — API keys, JWT
//! bearer tokens, or the development header — and the one the server runs
//! with.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::http::{HeaderMap, header};
use oxiscope_storage::Storage;

use super::jwt::{Jwt, JwtError};
use super::{UserId, hash_api_key};
use crate::error::ApiError;

/// Why a request has no user.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No credentials at all.
    #[error("Not authenticated")]
    Missing,
    /// An API key no user has.
    #[error("Invalid API key")]
    UnknownKey,
    /// The development header is absent.
    #[error("X-User-ID header is missing")]
    NoUserHeader,
    /// The development header is empty.
    #[error("X-User-ID header is required.")]
    EmptyUserHeader,
    /// A bearer token that does not verify.
    #[error(transparent)]
    Token(#[from] JwtError),
    /// The store could not be asked.
    #[error(transparent)]
    Storage(#[from] oxiscope_storage::Error),
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::NoUserHeader => {
                Self::invalid(&["header", "x-user-id"], "Field required", "missing")
            }
            AuthError::Storage(e) => e.into(),
            AuthError::Token(JwtError::Keys(detail)) => {
                tracing::warn!(%detail, "a bearer token could not be checked");
                Self::Status(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    "Token keys are unavailable; try again later.".to_owned(),
                )
            }
            other => Self::Unauthorized(other.to_string()),
        }
    }
}

/// How a request's headers name its user.
///
/// The server holds one, chosen by its [`ServerConfig`](crate::ServerConfig):
/// [`ApiKeys`] (with [`Jwt`] tokens besides when configured) or
/// [`DevHeader`].
pub trait AuthProvider: Send + Sync + fmt::Debug + 'static {
    /// The user `headers` name.
    ///
    /// # Errors
    /// Why they name none (see [`AuthError`]).
    fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> impl Future<Output = Result<UserId, AuthError>> + Send;
}

/// An [`AuthProvider`] behind a pointer.
pub(crate) type DynAuth = Arc<dyn BoxedAuth>;

type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<UserId, AuthError>> + Send + 'a>>;

/// The boxed twin of [`AuthProvider`], for `dyn`.
pub(crate) trait BoxedAuth: Send + Sync + fmt::Debug {
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthFuture<'a>;
}

impl<T: AuthProvider> BoxedAuth for T {
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthFuture<'a> {
        Box::pin(AuthProvider::authenticate(self, headers))
    }
}

/// The bearer token of `Authorization: Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Result<&str, AuthError> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or(AuthError::Missing)
}

/// API keys (`oxiscope keys create`), stored as SHA-256 hashes; with a
/// [`Jwt`] verifier, a bearer token that is not a key is checked as a JWT.
pub struct ApiKeys {
    storage: Arc<dyn Storage>,
    jwt: Option<Arc<Jwt>>,
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKeys")
            .field("jwt", &self.jwt)
            .finish_non_exhaustive()
    }
}

impl ApiKeys {
    /// Keys of `storage`, and JWTs when `jwt` is given.
    #[must_use]
    pub fn new(storage: Arc<dyn Storage>, jwt: Option<Arc<Jwt>>) -> Self {
        Self { storage, jwt }
    }
}

/// How an API key starts (see [`crate::generate_api_key`]); a JWT never
/// does (its header is base64url JSON, `eyJ`...).
const KEY_PREFIX: &str = "oxk_";

impl AuthProvider for ApiKeys {
    async fn authenticate(&self, headers: &HeaderMap) -> Result<UserId, AuthError> {
        let token = bearer(headers)?;
        if let (Some(jwt), false) = (&self.jwt, token.starts_with(KEY_PREFIX)) {
            return Ok(UserId(jwt.verify(token).await?));
        }
        let record = self.storage.find_api_key(&hash_api_key(token)).await?;
        record
            .map(|r| UserId(r.user_id))
            .ok_or(AuthError::UnknownKey)
    }
}

/// Trust the `X-User-ID` header, as AgentScope's service does: for
/// development only.
#[derive(Debug, Clone, Copy, Default)]
pub struct DevHeader;

impl AuthProvider for DevHeader {
    async fn authenticate(&self, headers: &HeaderMap) -> Result<UserId, AuthError> {
        let value = headers.get("x-user-id").ok_or(AuthError::NoUserHeader)?;
        let user = value.to_str().unwrap_or_default().trim();
        if user.is_empty() {
            return Err(AuthError::EmptyUserHeader);
        }
        Ok(UserId(user.to_owned()))
    }
}

impl AuthProvider for Jwt {
    async fn authenticate(&self, headers: &HeaderMap) -> Result<UserId, AuthError> {
        Ok(UserId(self.verify(bearer(headers)?).await?))
    }
}
