//! Document download tokens: a capability for one document, sealed with
//! the server's key (as workspace download tokens are, with their own
//! kind so neither passes for the other) and valid for a short time.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::crypto::Sealer;
use crate::error::ApiError;

/// What a token is for.
const KIND: &str = "knowledge-download";
/// The prefix sealed values carry (left out of the token).
const SEALED_PREFIX: &str = "v1:";

/// The claims of a document download token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DocumentClaims {
    kind: String,
    /// The owner.
    pub(crate) user: String,
    /// The knowledge base.
    pub(crate) kb: String,
    /// The document.
    pub(crate) doc: String,
    /// Expiry (Unix milliseconds).
    exp: u64,
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A token for the document, valid for `ttl`; with its expiry in Unix
/// seconds.
///
/// # Errors
/// 500 when sealing fails.
pub(super) fn mint(
    sealer: &Sealer,
    user: &str,
    kb: &str,
    doc: &str,
    ttl: Duration,
) -> Result<(String, f64), ApiError> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
    let exp = now_millis().saturating_add(ttl_ms);
    let claims = DocumentClaims {
        kind: KIND.to_owned(),
        user: user.to_owned(),
        kb: kb.to_owned(),
        doc: doc.to_owned(),
        exp,
    };
    let fail = |e: String| ApiError::Internal(format!("a download token: {e}"));
    let plain = serde_json::to_vec(&claims).map_err(|e| fail(e.to_string()))?;
    let sealed = sealer.seal(&plain).map_err(|e| fail(e.to_string()))?;
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

/// The claims of an unexpired document token sealed by this server.
///
/// # Errors
/// 401 for a damaged, forged, expired or other kind of token.
pub(crate) fn open_token(sealer: &Sealer, token: &str) -> Result<DocumentClaims, ApiError> {
    let invalid = || ApiError::Unauthorized("Invalid download token".to_owned());
    if token.len() > 8192
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
        .open(&format!("{SEALED_PREFIX}{body}"))
        .map_err(|_| invalid())?;
    let claims: DocumentClaims = serde_json::from_slice(&plain).map_err(|_| invalid())?;
    if claims.kind != KIND {
        return Err(invalid());
    }
    if claims.exp < now_millis() {
        return Err(ApiError::Unauthorized(
            "The download token has expired".to_owned(),
        ));
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_their_document_and_resist_tampering() {
        let sealer = Sealer::from_key(&[1; 32]);
        let (token, _) = mint(&sealer, "u", "kb", "doc", Duration::from_secs(60)).unwrap();
        let claims = open_token(&sealer, &token).unwrap();
        assert_eq!(
            (
                claims.user.as_str(),
                claims.kb.as_str(),
                claims.doc.as_str()
            ),
            ("u", "kb", "doc")
        );
        assert!(open_token(&Sealer::from_key(&[2; 32]), &token).is_err());
        let mut tampered = token.into_bytes();
        let i = tampered.len() / 2;
        tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
        assert!(open_token(&sealer, &String::from_utf8(tampered).unwrap()).is_err());
        let (expired, _) = mint(&sealer, "u", "kb", "doc", Duration::from_millis(1)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(open_token(&sealer, &expired).is_err());
    }
}
