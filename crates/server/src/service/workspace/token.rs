//! Download tokens: a capability for one file of one session (see
//! [`crate::token`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{WsError, WsResult};
use crate::crypto::Sealer;

/// What a token is for, so no other token passes for one.
const KIND: &str = "workspace-download";

/// The claims of a download token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DownloadClaims {
    /// The user the download is for.
    pub(crate) user: String,
    /// The agent of the session.
    pub(crate) agent: String,
    /// The session.
    pub(crate) session: String,
    /// The file, relative to the workspace.
    pub(crate) path: String,
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
    let claims = DownloadClaims {
        user: user.to_owned(),
        agent: agent.to_owned(),
        session: session.to_owned(),
        path: path.to_owned(),
    };
    crate::token::mint(sealer, KIND, &claims, ttl).map_err(WsError::Api)
}

/// The claims of an unexpired token sealed by this server.
///
/// # Errors
/// 401 for a damaged, forged or expired token.
pub(crate) fn open_download_token(sealer: &Sealer, token: &str) -> WsResult<DownloadClaims> {
    crate::token::open(sealer, KIND, token).map_err(WsError::Api)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;

    fn unauthorized(r: &WsResult<DownloadClaims>) -> bool {
        matches!(r, Err(WsError::Api(ApiError::Unauthorized(_))))
    }

    #[test]
    fn tokens_open_with_their_claims_and_only_with_the_same_key() {
        let sealer = Sealer::from_key(&[1; 32]);
        let (token, _) =
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
