//! Document download tokens: a capability for one document (see
//! [`crate::token`]), of their own kind so no other token passes for one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use oxiscope_session::Sealer;

/// What a token is for.
const KIND: &str = "knowledge-download";

/// The claims of a document download token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DocumentClaims {
    /// The owner.
    pub(crate) user: String,
    /// The knowledge base.
    pub(crate) kb: String,
    /// The document.
    pub(crate) doc: String,
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
    let claims = DocumentClaims {
        user: user.to_owned(),
        kb: kb.to_owned(),
        doc: doc.to_owned(),
    };
    crate::token::mint(sealer, KIND, &claims, ttl)
}

/// The claims of an unexpired document token sealed by this server.
///
/// # Errors
/// 401 for a damaged, forged, expired or other kind of token.
pub(crate) fn open_token(sealer: &Sealer, token: &str) -> Result<DocumentClaims, ApiError> {
    crate::token::open(sealer, KIND, token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_their_document_and_are_not_workspace_tokens() {
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
        let (workspace, _) = crate::download::mint_download_token(
            &sealer,
            "u",
            "kb",
            "doc",
            "p",
            Duration::from_secs(60),
        )
        .unwrap();
        assert!(open_token(&sealer, &workspace).is_err());
    }
}
