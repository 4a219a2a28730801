//! Short-lived capability tokens: claims sealed with the server's token
//! key (AES-GCM, so a token can be neither read nor forged; a key of its
//! own, so no stored secret passes for a token), bound to what they are
//! for (so one kind never passes for another) and an expiry, in
//! a URL-safe form that goes into a link as is. Nothing is stored: the
//! token carries its claims.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use oxiscope_session::{Purpose, SEALED_PREFIX, Sealer};

/// The longest token [`open`] reads.
const MAX_TOKEN_LEN: usize = 8192;

/// What is sealed: the claims with their kind and expiry.
#[derive(Serialize)]
struct Envelope<'a, T> {
    kind: &'a str,
    /// Expiry (Unix milliseconds).
    exp: u64,
    claims: &'a T,
}

#[derive(Deserialize)]
struct Opened<T> {
    kind: String,
    exp: u64,
    claims: T,
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A token of `kind` for `claims`, valid for `ttl`; with its expiry in
/// Unix seconds.
///
/// # Errors
/// 500 when sealing fails.
pub(crate) fn mint<T: Serialize>(
    sealer: &Sealer,
    kind: &'static str,
    claims: &T,
    ttl: Duration,
) -> Result<(String, f64), ApiError> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
    let exp = now_millis().saturating_add(ttl_ms);
    let fail = |e: String| ApiError::Internal(format!("a {kind} token: {e}"));
    let plain =
        serde_json::to_vec(&Envelope { kind, exp, claims }).map_err(|e| fail(e.to_string()))?;
    let sealed = sealer
        .seal(Purpose::Token(kind), &plain)
        .map_err(|e| fail(e.to_string()))?;
    let body = sealed.strip_prefix(SEALED_PREFIX).unwrap_or(&sealed);
    let token: String = body
        .chars()
        .filter(|&c| c != '=')
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect();
    #[allow(clippy::cast_precision_loss)] // milliseconds fit an f64 exactly for ages
    let expires_at = exp as f64 / 1000.0;
    Ok((token, expires_at))
}

/// The claims of an unexpired token of `kind` sealed by this server.
///
/// # Errors
/// 401 for a damaged, forged, expired or other kind of token.
pub(crate) fn open<T: DeserializeOwned>(
    sealer: &Sealer,
    kind: &'static str,
    token: &str,
) -> Result<T, ApiError> {
    let invalid = || ApiError::Unauthorized("Invalid download token".to_owned());
    if token.len() > MAX_TOKEN_LEN
        || !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(invalid());
    }
    let mut body: String = token
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            other => other,
        })
        .collect();
    while !body.len().is_multiple_of(4) {
        body.push('=');
    }
    let plain = sealer
        .open(Purpose::Token(kind), &format!("{SEALED_PREFIX}{body}"))
        .map_err(|_| invalid())?;
    let opened: Opened<T> = serde_json::from_slice(&plain).map_err(|_| invalid())?;
    if opened.kind != kind {
        return Err(invalid());
    }
    if opened.exp < now_millis() {
        return Err(ApiError::Unauthorized(
            "The download token has expired".to_owned(),
        ));
    }
    Ok(opened.claims)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn unauthorized<T>(r: &Result<T, ApiError>) -> bool {
        matches!(r, Err(ApiError::Unauthorized(_)))
    }

    #[test]
    fn a_token_opens_with_its_claims_only_with_its_key_and_kind() {
        let sealer = Sealer::from_key(&[1; 32]);
        let (token, exp) = mint(&sealer, "k", &("u", 7), Duration::from_secs(60)).unwrap();
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        #[allow(clippy::cast_precision_loss)]
        let now = now_millis() as f64 / 1000.0;
        assert!(exp > now);
        let claims: (String, u32) = open(&sealer, "k", &token).unwrap();
        assert_eq!(claims, ("u".to_owned(), 7));
        assert!(unauthorized(&open::<(String, u32)>(
            &sealer, "other", &token
        )));
        assert!(unauthorized(&open::<(String, u32)>(
            &Sealer::from_key(&[2; 32]),
            "k",
            &token
        )));
        let mut tampered = token.into_bytes();
        let i = tampered.len() / 2;
        tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert!(unauthorized(&open::<(String, u32)>(
            &sealer, "k", &tampered
        )));
        assert!(unauthorized(&open::<(String, u32)>(&sealer, "k", "")));
        assert!(unauthorized(&open::<(String, u32)>(&sealer, "k", "a b")));
        let long = "A".repeat(MAX_TOKEN_LEN + 1);
        assert!(unauthorized(&open::<(String, u32)>(&sealer, "k", &long)));
    }

    #[test]
    fn an_expired_token_is_refused() {
        let sealer = Sealer::from_key(&[1; 32]);
        let (token, _) = mint(&sealer, "k", &1, Duration::from_millis(1)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(unauthorized(&open::<u32>(&sealer, "k", &token)));
    }
}
