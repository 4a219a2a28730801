//! JWT bearer tokens, verified against an issuer's signing keys (a JWKS).
//!
//! A token is accepted when its header names `RS256` or `ES256` and a key
//! of the set (by `kid`; without one, any key of that algorithm), its
//! signature verifies with that key, its `iss` is the configured issuer,
//! its `aud` names the configured audience, it has not expired and is
//! already valid (both with a small leeway), and the configured claim
//! (`sub` by default) is a non-empty string: that string is the user.
//!
//! The set is read on first use. A `kid` the set does not have makes the
//! verifier read it again — at most once per
//! [`JwtConfig::refresh_interval`], so a flood of made-up ids cannot make
//! the server hammer its issuer — and is refused if it is still unknown.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::Value;

use super::jwks::{KeySet, KeySource};

/// How long a token's times may be off: the clocks of issuer and server
/// differ a little.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// The least time between two reads of the key set for unknown key ids.
const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// The algorithms a token may be signed with.
const ACCEPTED: &[(&str, Algorithm)] = &[("RS256", Algorithm::RS256), ("ES256", Algorithm::ES256)];

/// Where the signing keys come from, and what a token must say.
#[derive(Debug, Clone)]
pub struct JwtConfig {
    /// The issuer: the `iss` every token must carry, and (unless
    /// [`Self::jwks_file`] is set) where its discovery document is read,
    /// `<issuer>/.well-known/openid-configuration`, whose `jwks_uri`
    /// names the key set. `https://`, or `http://` on loopback only.
    pub issuer: String,
    /// Read the key set from this file instead of the issuer.
    pub jwks_file: Option<PathBuf>,
    /// The audience every token's `aud` must name.
    pub audience: String,
    /// The claim that names the user.
    pub user_claim: String,
    /// How far `exp` and `nbf` may be off.
    pub leeway: Duration,
    /// The least time between two reads of the key set.
    pub refresh_interval: Duration,
}

impl JwtConfig {
    /// Tokens of `issuer` for `audience`, the user in `sub`, keys from the
    /// issuer's discovery document.
    #[must_use]
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            jwks_file: None,
            audience: audience.into(),
            user_claim: "sub".to_owned(),
            leeway: DEFAULT_LEEWAY,
            refresh_interval: DEFAULT_REFRESH_INTERVAL,
        }
    }

    /// Reads the key set from `path` instead of the issuer.
    #[must_use]
    pub fn with_jwks_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.jwks_file = Some(path.into());
        self
    }

    /// Another claim names the user.
    #[must_use]
    pub fn with_user_claim(mut self, claim: impl Into<String>) -> Self {
        self.user_claim = claim.into();
        self
    }

    /// Another least time between two reads of the key set.
    #[must_use]
    pub fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }
}

/// Why a token was refused. Its text is the `detail` of the `401`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// Not three base64url parts with a JSON header.
    #[error("Invalid token: not a JWT")]
    Malformed,
    /// Signed with another algorithm (or `none`).
    #[error("Invalid token: algorithm {0:?} is not accepted (RS256 or ES256)")]
    Algorithm(String),
    /// No key of the set has the token's `kid`, even after reading it again.
    #[error("Invalid token: unknown signing key {0:?}")]
    UnknownKey(String),
    /// The signature does not verify.
    #[error("Invalid token: bad signature")]
    Signature,
    /// `exp` is past.
    #[error("Invalid token: expired")]
    Expired,
    /// `nbf` is still to come.
    #[error("Invalid token: not valid yet")]
    NotYetValid,
    /// `aud` does not name this server.
    #[error("Invalid token: wrong audience")]
    Audience,
    /// `iss` is not the configured issuer.
    #[error("Invalid token: wrong issuer")]
    Issuer,
    /// A claim the server needs is missing or not a non-empty string.
    #[error("Invalid token: no {0:?} claim")]
    MissingClaim(String),
    /// The key set could not be read.
    #[error("Token keys are unavailable: {0}")]
    Keys(String),
}

/// The verifier: the configuration and the key set it last read.
#[derive(Debug)]
pub struct Jwt {
    config: JwtConfig,
    source: KeySource,
    keys: RwLock<Option<Arc<KeySet>>>,
    /// When the set was last read for an unknown key id, or failed to be
    /// read; held across a read, so that concurrent requests wait for one
    /// read instead of each starting theirs.
    last_read: tokio::sync::Mutex<Option<Instant>>,
}

impl Jwt {
    /// A verifier for `config`. The key set is read on first use.
    ///
    /// # Errors
    /// The issuer's URL is not `https://` (or `http://` on loopback), or
    /// the HTTP client cannot be built.
    pub fn new(config: JwtConfig) -> Result<Self, JwtError> {
        let source = KeySource::new(&config)?;
        Ok(Self {
            config,
            source,
            keys: RwLock::new(None),
            last_read: tokio::sync::Mutex::new(None),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &JwtConfig {
        &self.config
    }

    /// The user `token` names, once it is verified.
    ///
    /// # Errors
    /// Why the token is refused (see [`JwtError`]).
    pub async fn verify(&self, token: &str) -> Result<String, JwtError> {
        let (alg, kid) = header(token)?;
        let keys = match self.current() {
            None => self.refresh(true).await?,
            Some(keys) if kid.as_deref().is_some_and(|k| !keys.has(k)) => {
                self.refresh(false).await?
            }
            Some(keys) => keys,
        };
        let candidates = keys.candidates(kid.as_deref(), alg);
        if candidates.is_empty() {
            return Err(JwtError::UnknownKey(kid.unwrap_or_default()));
        }
        let mut validation = Validation::new(alg);
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_audience(&[&self.config.audience]);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let mut last = JwtError::Signature;
        for key in candidates {
            match jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, key, &validation) {
                Ok(data) => return self.user(&data.claims),
                Err(e) => {
                    last = refusal(e.kind());
                    if last != JwtError::Signature {
                        break;
                    }
                }
            }
        }
        Err(last)
    }

    /// The key set last read; `None` before the first read.
    fn current(&self) -> Option<Arc<KeySet>> {
        match self.keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reads the key set: the first time (`first`), or again for an
    /// unknown key id — unless a read for an unknown id, or one that
    /// failed, happened less than the refresh interval ago. Returns the
    /// set to use.
    async fn refresh(&self, first: bool) -> Result<Arc<KeySet>, JwtError> {
        let mut last = self.last_read.lock().await;
        // Another request may have read the set while this one waited.
        if let (true, Some(keys)) = (first, self.current()) {
            return Ok(keys);
        }
        if last.is_some_and(|at| at.elapsed() < self.config.refresh_interval) {
            return self.current().ok_or_else(|| {
                JwtError::Keys("the last read failed; trying again shortly".to_owned())
            });
        }
        match self.source.read().await {
            Ok(set) => {
                if !first {
                    *last = Some(Instant::now());
                }
                let set = Arc::new(set);
                match self.keys.write() {
                    Ok(mut keys) => *keys = Some(Arc::clone(&set)),
                    Err(poisoned) => *poisoned.into_inner() = Some(Arc::clone(&set)),
                }
                Ok(set)
            }
            Err(e) => {
                *last = Some(Instant::now());
                tracing::warn!(error = %e, "could not read the JWT signing keys");
                Err(e)
            }
        }
    }

    fn user(&self, claims: &serde_json::Map<String, Value>) -> Result<String, JwtError> {
        let claim = &self.config.user_claim;
        claims
            .get(claim)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| JwtError::MissingClaim(claim.clone()))
    }
}

/// The token's algorithm (one we accept) and key id, read from its header.
fn header(token: &str) -> Result<(Algorithm, Option<String>), JwtError> {
    let mut parts = token.split('.');
    let (Some(head), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed);
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .map_err(|_| JwtError::Malformed)?;
    let header: serde_json::Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|_| JwtError::Malformed)?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(&(_, algorithm)) = ACCEPTED.iter().find(|(name, _)| *name == alg) else {
        return Err(JwtError::Algorithm(alg.to_owned()));
    };
    let kid = header.get("kid").and_then(Value::as_str).map(str::to_owned);
    Ok((algorithm, kid))
}

/// What a failed decode means for the caller.
fn refusal(kind: &ErrorKind) -> JwtError {
    match kind {
        ErrorKind::ExpiredSignature => JwtError::Expired,
        ErrorKind::ImmatureSignature => JwtError::NotYetValid,
        ErrorKind::InvalidAudience => JwtError::Audience,
        ErrorKind::InvalidIssuer => JwtError::Issuer,
        ErrorKind::MissingRequiredClaim(claim) => JwtError::MissingClaim(claim.clone()),
        ErrorKind::InvalidAlgorithm => JwtError::Algorithm(String::new()),
        ErrorKind::InvalidToken
        | ErrorKind::Base64(_)
        | ErrorKind::Json(_)
        | ErrorKind::Utf8(_) => JwtError::Malformed,
        _ => JwtError::Signature,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    #[test]
    fn only_rs256_and_es256_headers_are_read() {
        let token = |h: &str| format!("{}.{}.sig", b64(h), b64("{}"));
        assert_eq!(
            header(&token(r#"{"alg":"RS256","kid":"k1"}"#)),
            Ok((Algorithm::RS256, Some("k1".to_owned())))
        );
        assert_eq!(
            header(&token(r#"{"alg":"ES256"}"#)),
            Ok((Algorithm::ES256, None))
        );
        for alg in ["none", "HS256", "RS512", ""] {
            let h = format!(r#"{{"alg":"{alg}"}}"#);
            assert_eq!(
                header(&token(&h)),
                Err(JwtError::Algorithm(alg.to_owned())),
                "{alg}"
            );
        }
        for bad in [
            "",
            "a.b",
            "a.b.c.d",
            "!!.e30.x",
            &format!("{}.e30.x", b64("[1]")),
        ] {
            assert_eq!(header(bad), Err(JwtError::Malformed), "{bad}");
        }
    }
}
