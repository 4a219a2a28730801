//! Download tokens: a capability for one file of one session (see
//! [`crate::token`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ApiResult;
use oxiscope_session::Sealer;

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
) -> ApiResult<(String, f64)> {
    let claims = DownloadClaims {
        user: user.to_owned(),
        agent: agent.to_owned(),
        session: session.to_owned(),
        path: path.to_owned(),
    };
    crate::token::mint(sealer, KIND, &claims, ttl)
}

/// The claims of an unexpired token sealed by this server.
///
/// # Errors
/// 401 for a damaged, forged or expired token.
pub(crate) fn open_download_token(sealer: &Sealer, token: &str) -> ApiResult<DownloadClaims> {
    crate::token::open(sealer, KIND, token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;

    fn unauthorized(r: &ApiResult<DownloadClaims>) -> bool {
        matches!(r, Err(ApiError::Unauthorized(_)))
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

    /// A stored secret whose plain text the tenant chose (a credential
    /// holding a token's envelope) is no token, sealed either way.
    #[test]
    fn other_sealed_values_are_not_tokens() {
        let key = [1; 32];
        let sealer = Sealer::from_key(&key);
        let envelope = format!(
            r#"{{"kind":"{KIND}","exp":99999999999999,"claims":{{"user":"u","agent":"a","session":"s","path":"p"}}}}"#
        );
        let as_token = |sealed: &str| {
            let body = sealed.split_once(':').unwrap().1;
            body.replace('+', "-")
                .replace('/', "_")
                .trim_end_matches('=')
                .to_owned()
        };
        let credential = sealer
            .seal(oxiscope_session::Purpose::Credential, envelope.as_bytes())
            .unwrap();
        assert!(unauthorized(&open_download_token(
            &sealer,
            &as_token(&credential)
        )));
        let library = sealer
            .seal(oxiscope_session::Purpose::LibraryMcp, envelope.as_bytes())
            .unwrap();
        assert!(unauthorized(&open_download_token(
            &sealer,
            &as_token(&library)
        )));
        // As the master key sealed credentials before purposes existed.
        use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
        let cipher = aes_gcm::Aes256Gcm::new(aes_gcm::Key::<aes_gcm::Aes256Gcm>::from_slice(&key));
        let nonce = aes_gcm::Aes256Gcm::generate_nonce(&mut OsRng);
        let mut raw = nonce.to_vec();
        raw.extend(cipher.encrypt(&nonce, envelope.as_bytes()).unwrap());
        use base64::Engine as _;
        let legacy = format!(
            "v1:{}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        );
        assert!(unauthorized(&open_download_token(
            &sealer,
            &as_token(&legacy)
        )));
        // The same envelope minted as a token does open.
        let minted = sealer
            .seal(oxiscope_session::Purpose::Token(KIND), envelope.as_bytes())
            .unwrap();
        assert_eq!(
            open_download_token(&sealer, &as_token(&minted))
                .unwrap()
                .path,
            "p"
        );
    }
}
