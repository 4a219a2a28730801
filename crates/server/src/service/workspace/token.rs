//! Download tokens: a capability for one file of one session, sealed with
//! the server's key (AES-GCM, so it can be neither read nor forged) and
//! valid for a short time. Nothing is stored: the token carries its
//! claims.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{WsError, WsResult};
use crate::crypto::Sealer;
use crate::error::ApiError;

/// What a token is for, so no other sealed value can pass as one.
const KIND: &str = "workspace-download";
/// The prefix sealed values carry (left out of the token).
const SEALED_PREFIX: &str = "v1:";

/// The claims of a download token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DownloadClaims {
    kind: String,
    /// The user the download is for.
    pub(crate) user: String,
    /// The agent of the session.
    pub(crate) agent: String,
    /// The session.
    pub(crate) session: String,
    /// The file, relative to the workspace.
    pub(crate) path: String,
    /// Expiry (Unix milliseconds).
    exp: u64,
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A token for `path` (relative to the workspace) of the session, valid
/// for `ttl`; with its expiry in Unix seconds.
///
/// # Errors
/// 500 when sealing fails.
pub(crate) fn mint_download_token(
    sealer: &Sealer,
    user: &str,
    agent: &str,
    session: &str,
    path: &str,
    ttl: Duration,
) -> WsResult<(String, f64)> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
    let exp = now_millis().saturating_add(ttl_ms);
    let claims = DownloadClaims {
        kind: KIND.to_owned(),
        user: user.to_owned(),
        agent: agent.to_owned(),
        session: session.to_owned(),
        path: path.to_owned(),
        exp,
    };
    let plain = serde_json::to_vec(&claims)
        .map_err(|e| WsError::Api(ApiError::Internal(format!("a download token: {e}"))))?;
    let sealed = sealer
        .seal(&plain)
        .map_err(|e| WsError::Api(ApiError::Internal(format!("a download token: {e}"))))?;
    let body = sealed.strip_prefix(SEALED_PREFIX).unwrap_or(&sealed);
    // URL-safe, so the token can go into a link as is.
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

/// The claims of an unexpired token sealed by this server.
///
/// # Errors
/// 401 for a damaged, forged or expired token.
pub(crate) fn open_download_token(sealer: &Sealer, token: &str) -> WsResult<DownloadClaims> {
    let invalid = || WsError::Api(ApiError::Unauthorized("Invalid download token".to_owned()));
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
    let claims: DownloadClaims = serde_json::from_slice(&plain).map_err(|_| invalid())?;
    if claims.kind != KIND {
        return Err(invalid());
    }
    if claims.exp < now_millis() {
        return Err(WsError::Api(ApiError::Unauthorized(
            "The download token has expired".to_owned(),
        )));
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unauthorized(r: &WsResult<DownloadClaims>) -> bool {
        matches!(r, Err(WsError::Api(ApiError::Unauthorized(_))))
    }

    #[test]
    fn tokens_open_with_their_claims_and_only_with_the_same_key() {
        let sealer = Sealer::from_key(&[1; 32]);
        let (token, exp) =
            mint_download_token(&sealer, "u", "a", "s", "dir/f.txt", Duration::from_secs(60))
                .unwrap();
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        let claims = open_download_token(&sealer, &token).unwrap();
        assert_eq!(
            (
                claims.user.as_str(),
                claims.agent.as_str(),
                claims.session.as_str()
            ),
            ("u", "a", "s")
        );
        assert_eq!(claims.path, "dir/f.txt");
        #[allow(clippy::cast_precision_loss)]
        let now = now_millis() as f64 / 1000.0;
        assert!(exp > now);
        assert!(unauthorized(&open_download_token(
            &Sealer::from_key(&[2; 32]),
            &token
        )));
        // Any flipped character breaks the seal.
        let mut tampered = token.into_bytes();
        let i = tampered.len() / 2;
        tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert!(unauthorized(&open_download_token(&sealer, &tampered)));
        assert!(unauthorized(&open_download_token(&sealer, "")));
        assert!(unauthorized(&open_download_token(&sealer, "a b")));
    }

    #[test]
    fn other_sealed_values_are_not_tokens() {
        let sealer = Sealer::from_key(&[1; 32]);
        let sealed = sealer
            .seal(br#"{"user":"u","agent":"a","session":"s","path":"p","exp":99999999999}"#)
            .unwrap();
        let token = sealed
            .trim_start_matches("v1:")
            .replace('+', "-")
            .replace('/', "_");
        let token = token.trim_end_matches('=');
        assert!(unauthorized(&open_download_token(&sealer, token)));
    }
}
