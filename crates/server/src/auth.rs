//! Who is calling: API keys or JWTs (`Authorization: Bearer`), or — only
//! when the operator asks for it — AgentScope's development header
//! `X-User-ID`.

mod jwks;
mod jwt;
mod provider;

pub use jwt::{Jwt, JwtConfig, JwtError};
pub(crate) use provider::DynAuth;
pub use provider::{ApiKeys, AuthError, AuthProvider, DevHeader};

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::state::AppState;

/// How requests are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// `Authorization: Bearer <key>`; keys are stored as SHA-256 hashes.
    /// With a [`Jwt`] verifier configured, JWTs of its issuer too.
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
        Ok(state.auth().authenticate(&parts.headers).await?)
    }
}

/// Under [`AuthMode::DevHeader`], refuses a request (403) whose `Host`, or
/// `Origin` when present, names neither this server nor a configured CORS
/// origin. The development header lets anyone act as any user, so without
/// this a web page elsewhere could drive a developer's local server by
/// pointing its own name at 127.0.0.1 (DNS rebinding) or by posting to it.
pub(crate) async fn dev_host_guard(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let edge = state.edge();
    match check_dev_request(edge.listen_addr, &edge.cors_origins, req.headers()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

/// Whether `headers` name this server (see [`dev_host_guard`]).
fn check_dev_request(
    listen_addr: Option<std::net::SocketAddr>,
    cors: &[String],
    headers: &HeaderMap,
) -> Result<(), ApiError> {
    let allowed = Allowed::new(listen_addr, cors);
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let host_ok = host
        .and_then(|h| parse_authority(h, 80))
        .is_some_and(|(name, port)| allowed.serves(&name, port));
    if !host_ok {
        let host = host.unwrap_or_default();
        tracing::warn!(
            host,
            "refused a request for another host (development authentication)"
        );
        return Err(ApiError::Forbidden(format!(
            "Host {host:?} is not this server: with development authentication only local \
             addresses and the configured CORS origins are served."
        )));
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("null");
    if !allowed.accepts_origin(origin) {
        tracing::warn!(
            origin,
            "refused a request from another origin (development authentication)"
        );
        return Err(ApiError::Forbidden(format!(
            "Origin {origin:?} is not allowed: with development authentication only this \
             server's own pages and the configured CORS origins may call it."
        )));
    }
    Ok(())
}

/// What a development server answers to.
struct Allowed<'a> {
    /// The listening port; `None`: any.
    port: Option<u16>,
    /// Another name of the server: the address it listens on.
    own_ip: Option<std::net::IpAddr>,
    /// Listening on every address: any address literal names it.
    any_ip: bool,
    /// The configured CORS origins, as given.
    cors: &'a [String],
}

impl<'a> Allowed<'a> {
    fn new(addr: Option<std::net::SocketAddr>, cors: &'a [String]) -> Self {
        Self {
            port: addr.map(|a| a.port()),
            own_ip: addr.map(|a| a.ip()).filter(|ip| !ip.is_unspecified()),
            any_ip: addr.is_some_and(|a| a.ip().is_unspecified()),
            cors,
        }
    }

    /// Whether `name:port` (lowercase, IPv6 in brackets) is this server or
    /// the host of a CORS origin.
    fn serves(&self, name: &str, port: u16) -> bool {
        self.is_self(name, port)
            || self
                .cors
                .iter()
                .filter_map(|o| parse_origin(o))
                .any(|(_, n, p)| n == name && p == port)
    }

    fn is_self(&self, name: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let ip = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name)
            .parse::<std::net::IpAddr>()
            .ok();
        matches!(name, "localhost" | "127.0.0.1" | "[::1]")
            || ip.is_some_and(|ip| self.any_ip || Some(ip) == self.own_ip)
    }

    /// Whether a browser page of `origin` may call: a CORS origin (or `*`),
    /// or this server's own `http` origin.
    fn accepts_origin(&self, origin: &str) -> bool {
        let given = origin.trim_end_matches('/');
        let configured = self
            .cors
            .iter()
            .any(|o| o == "*" || o.trim_end_matches('/').eq_ignore_ascii_case(given));
        configured
            || parse_origin(given)
                .is_some_and(|(scheme, name, port)| scheme == "http" && self.is_self(&name, port))
    }
}

/// `scheme://host[:port]` as (scheme, host, port), lowercase, the port
/// defaulting to the scheme's.
fn parse_origin(origin: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = origin.trim_end_matches('/').split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (name, port) = parse_authority(rest, default)?;
    Some((scheme, name, port))
}

/// `host[:port]` as (lowercase host, port or `default`); `None` for
/// anything else (user info, a path, an empty host, a bad port).
fn parse_authority(text: &str, default: u16) -> Option<(String, u16)> {
    if text.contains(['@', '/', '?', '#']) {
        return None;
    }
    let authority: axum::http::uri::Authority = text.parse().ok()?;
    let name = authority.host().to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    Some((name, authority.port_u16().unwrap_or(default)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ServerConfig;

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

    fn dev_config(listen: &str, cors: &[&str]) -> ServerConfig {
        ServerConfig::new("/tmp")
            .with_auth(AuthMode::DevHeader)
            .with_listen_addr(listen.parse().unwrap())
            .with_cors_origins(cors.iter().map(|s| (*s).to_owned()).collect())
    }

    fn check(config: &ServerConfig, host: Option<&str>, origin: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, origin.parse().unwrap());
        }
        check_dev_request(config.listen_addr, &config.cors_origins, &headers).is_ok()
    }

    #[test]
    fn a_development_server_answers_only_to_its_own_names_and_port() {
        let c = dev_config("127.0.0.1:8000", &[]);
        for host in [
            "localhost:8000",
            "127.0.0.1:8000",
            "[::1]:8000",
            "LOCALHOST:8000",
        ] {
            assert!(check(&c, Some(host), None), "{host}");
        }
        for host in [
            "evil.example:8000",
            "evil.example",
            "localhost:9000",
            "localhost",
            "localhost.:8000",
            "user@localhost:8000",
            "10.0.0.1:8000",
            "",
        ] {
            assert!(!check(&c, Some(host), None), "{host}");
        }
        assert!(!check(&c, None, None), "no Host");
        // Port 80 may be left out.
        assert!(check(
            &dev_config("127.0.0.1:80", &[]),
            Some("localhost"),
            None
        ));
    }

    #[test]
    fn every_address_literal_names_a_server_listening_on_all_addresses() {
        let c = dev_config("0.0.0.0:8000", &[]);
        assert!(check(&c, Some("192.168.1.7:8000"), None));
        assert!(check(&c, Some("[fe80::1]:8000"), None));
        assert!(!check(&c, Some("rebind.evil.example:8000"), None));
        let own = dev_config("192.168.1.7:8000", &[]);
        assert!(check(&own, Some("192.168.1.7:8000"), None));
        assert!(!check(&own, Some("192.168.1.8:8000"), None));
    }

    #[test]
    fn origins_must_be_the_server_itself_or_configured() {
        let c = dev_config("127.0.0.1:8000", &["http://app.test:3000"]);
        let host = Some("localhost:8000");
        assert!(check(&c, host, Some("http://localhost:8000")));
        assert!(check(&c, host, Some("http://127.0.0.1:8000")));
        assert!(check(&c, host, Some("http://app.test:3000")));
        for origin in [
            "http://evil.example",
            "http://localhost:3000",
            "https://localhost:8000",
            "null",
            "http://app.test:3001",
        ] {
            assert!(!check(&c, host, Some(origin)), "{origin}");
        }
        // The host of a CORS origin may be the Host (a proxy in front).
        assert!(check(&c, Some("app.test:3000"), None));
        assert!(check(
            &dev_config("127.0.0.1:8000", &["*"]),
            host,
            Some("http://x.test")
        ));
    }

    #[test]
    fn without_a_listen_address_any_port_of_a_loopback_name_is_served() {
        let c = ServerConfig::new("/tmp").with_auth(AuthMode::DevHeader);
        assert!(check(
            &c,
            Some("127.0.0.1:41234"),
            Some("http://localhost:41234")
        ));
        assert!(!check(&c, Some("evil.example:41234"), None));
        assert!(!check(&c, Some("10.0.0.1:41234"), None));
    }
}
