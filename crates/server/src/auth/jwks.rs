//! Reading a JWKS: from a file, or from an OIDC issuer (its discovery
//! document names the set's URL), and keeping the keys JWTs can use.

use std::path::PathBuf;
use std::time::Duration;

use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, DecodingKey};
use oxiscope_http::reqwest::Url;
use oxiscope_http::{DownloadOptions, HttpClient, RetryPolicy};

use super::jwt::{JwtConfig, JwtError};

/// The most a discovery document or key set may weigh.
const MAX_BYTES: u64 = 1024 * 1024;

/// How long one read from the issuer may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Where the key set is read from.
#[derive(Debug)]
pub(super) enum KeySource {
    File(PathBuf),
    Issuer { issuer: String, http: HttpClient },
}

impl KeySource {
    pub(super) fn new(config: &JwtConfig) -> Result<Self, JwtError> {
        check_url(&config.issuer)?;
        if let Some(path) = &config.jwks_file {
            return Ok(Self::File(path.clone()));
        }
        let http = HttpClient::builder()
            .with_retry(RetryPolicy::none())
            .with_connect_timeout(TIMEOUT)
            .build()
            .map_err(|e| JwtError::Keys(e.to_string()))?;
        Ok(Self::Issuer {
            issuer: config.issuer.clone(),
            http,
        })
    }

    /// Reads the set.
    pub(super) async fn read(&self) -> Result<KeySet, JwtError> {
        let text = match self {
            Self::File(path) => tokio::fs::read(path)
                .await
                .map_err(|e| JwtError::Keys(format!("{}: {e}", path.display())))?,
            Self::Issuer { issuer, http } => {
                let discovery = format!(
                    "{}/.well-known/openid-configuration",
                    issuer.trim_end_matches('/')
                );
                let doc: serde_json::Value = serde_json::from_slice(&get(http, &discovery).await?)
                    .map_err(|e| JwtError::Keys(format!("{discovery}: {e}")))?;
                // OpenID Connect Discovery: the document names its issuer,
                // which must be the one configured.
                let named = doc.get("issuer").and_then(serde_json::Value::as_str);
                if named.map(|i| i.trim_end_matches('/')) != Some(issuer.trim_end_matches('/')) {
                    return Err(JwtError::Keys(format!(
                        "{discovery} names issuer {named:?}, not {issuer:?}"
                    )));
                }
                let Some(jwks_uri) = doc.get("jwks_uri").and_then(serde_json::Value::as_str) else {
                    return Err(JwtError::Keys(format!("{discovery} has no jwks_uri")));
                };
                check_url(jwks_uri)?;
                get(http, jwks_uri).await?.to_vec()
            }
        };
        let set: JwkSet = serde_json::from_slice(&text)
            .map_err(|e| JwtError::Keys(format!("not a JWKS: {e}")))?;
        Ok(KeySet::from_jwks(&set))
    }
}

/// A bounded GET.
async fn get(http: &HttpClient, url: &str) -> Result<bytes::Bytes, JwtError> {
    http.download(url, &DownloadOptions::new(MAX_BYTES, TIMEOUT))
        .await
        .map(|d| d.bytes)
        .map_err(|e| JwtError::Keys(format!("{url}: {e}")))
}

/// Refuses a URL that is not `https://`, or `http://` to a loopback host.
fn check_url(url: &str) -> Result<(), JwtError> {
    let parsed = Url::parse(url).map_err(|e| JwtError::Keys(format!("{url:?}: {e}")))?;
    let host = parsed.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(JwtError::Keys(format!(
            "{url:?}: token keys are read over https:// (http:// only on loopback)"
        ))),
    }
}

/// The signing keys of a set that tokens may use.
pub(super) struct KeySet {
    keys: Vec<(Option<String>, Algorithm, DecodingKey)>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<_> = self.keys.iter().map(|(id, alg, _)| (id, alg)).collect();
        f.debug_struct("KeySet").field("keys", &ids).finish()
    }
}

impl KeySet {
    /// The RS256 and ES256 signing keys of `set`; others are left out.
    fn from_jwks(set: &JwkSet) -> Self {
        let keys = set
            .keys
            .iter()
            .filter(|k| !matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption)))
            .filter_map(|jwk| {
                let alg = algorithm(jwk)?;
                let key = DecodingKey::from_jwk(jwk).ok()?;
                Some((jwk.common.key_id.clone(), alg, key))
            })
            .collect();
        Self { keys }
    }

    /// Whether a key has this id.
    pub(super) fn has(&self, kid: &str) -> bool {
        self.keys
            .iter()
            .any(|(id, _, _)| id.as_deref() == Some(kid))
    }

    /// The keys a token of `alg` with `kid` may be signed with: the one of
    /// that id, or without an id every key of that algorithm.
    pub(super) fn candidates(&self, kid: Option<&str>, alg: Algorithm) -> Vec<&DecodingKey> {
        self.keys
            .iter()
            .filter(|(id, a, _)| *a == alg && (kid.is_none() || id.as_deref() == kid))
            .map(|(_, _, key)| key)
            .collect()
    }
}

/// The algorithm a key signs with: its `alg`, or what its type implies
/// (RSA: RS256; EC on P-256: ES256). `None` for any other.
fn algorithm(jwk: &Jwk) -> Option<Algorithm> {
    let implied = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            Algorithm::ES256
        }
        _ => return None,
    };
    match jwk.common.key_algorithm {
        None => Some(implied),
        Some(KeyAlgorithm::RS256) if implied == Algorithm::RS256 => Some(implied),
        Some(KeyAlgorithm::ES256) if implied == Algorithm::ES256 => Some(implied),
        Some(_) => None,
    }
}
