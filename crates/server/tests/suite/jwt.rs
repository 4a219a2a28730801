//! JWT sign-in through the real service: tokens signed with keys the test
//! makes (RSA with `openssl`, P-256 with ring), verified against a fake
//! OIDC issuer on loopback (discovery document + JWKS) or a JWKS file.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::State;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use pretty_assertions::assert_eq;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use serde_json::{Value, json};

use super::common::Harness;
use oxiscope_server::{AuthMode, Jwt, JwtConfig};

const AUDIENCE: &str = "oxiscope-test";

/// A signing key the test made, with the JWK of its public half.
enum Key {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

impl Key {
    /// A 2048-bit RSA key, made by `openssl` (ring verifies RSA but does
    /// not make keys).
    fn rsa() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.der");
        let status = std::process::Command::new("openssl")
            .args([
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:2048",
            ])
            .args(["-outform", "DER", "-out"])
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("the JWT tests make RSA keys with the openssl command");
        assert!(status.success(), "openssl genpkey failed");
        // OpenSSL writes PKCS#1 or PKCS#8 DER, depending on its version.
        let der = std::fs::read(&path).unwrap();
        let key = RsaKeyPair::from_pkcs8(&der).or_else(|_| RsaKeyPair::from_der(&der));
        Self::Rsa(key.unwrap())
    }

    /// A P-256 key.
    fn ec() -> Self {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        Self::Ec(EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap())
    }

    fn alg(&self) -> &'static str {
        match self {
            Self::Rsa(_) => "RS256",
            Self::Ec(_) => "ES256",
        }
    }

    fn jwk(&self, kid: &str) -> Value {
        match self {
            Self::Rsa(key) => {
                let public: ring::rsa::PublicKeyComponents<Vec<u8>> = key.public().into();
                json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                    "n": B64.encode(&public.n), "e": B64.encode(&public.e)})
            }
            Self::Ec(key) => {
                let point = key.public_key().as_ref();
                json!({"kty": "EC", "kid": kid, "crv": "P-256",
                    "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])})
            }
        }
    }

    /// A token of `claims` with `header`, signed with this key.
    fn sign_with(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let sig = match self {
            Self::Rsa(key) => {
                let mut sig = vec![0; key.public().modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut sig,
                )
                .unwrap();
                sig
            }
            Self::Ec(key) => key.sign(&rng, input.as_bytes()).unwrap().as_ref().to_vec(),
        };
        format!("{input}.{}", B64.encode(sig))
    }

    fn sign(&self, kid: &str, claims: &Value) -> String {
        self.sign_with(
            &json!({"alg": self.alg(), "typ": "JWT", "kid": kid}),
            claims,
        )
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A fake OIDC issuer: its discovery document and a JWKS that the test
/// may change, counting how often the JWKS is read.
struct Issuer {
    url: String,
    jwks: Arc<Mutex<Value>>,
    reads: Arc<AtomicUsize>,
}

#[derive(Clone)]
struct IssuerState {
    url: String,
    jwks: Arc<Mutex<Value>>,
    reads: Arc<AtomicUsize>,
}

impl Issuer {
    async fn start(keys: Value) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = IssuerState {
            url: url.clone(),
            jwks: Arc::new(Mutex::new(keys)),
            reads: Arc::new(AtomicUsize::new(0)),
        };
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(|State(s): State<IssuerState>| async move {
                    Json(json!({"issuer": s.url, "jwks_uri": format!("{}/jwks", s.url)}))
                }),
            )
            .route(
                "/jwks",
                get(|State(s): State<IssuerState>| async move {
                    s.reads.fetch_add(1, Ordering::SeqCst);
                    Json(s.jwks.lock().unwrap().clone())
                }),
            )
            .with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url,
            jwks: state.jwks,
            reads: state.reads,
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// Claims this issuer would sign for `user`, valid for an hour.
    fn claims(&self, user: &str) -> Value {
        json!({"iss": self.url, "aud": AUDIENCE, "sub": user, "iat": now(), "exp": now() + 3600})
    }
}

async fn server(config: JwtConfig) -> Harness {
    let jwt = Arc::new(Jwt::new(config).unwrap());
    Harness::start_custom(AuthMode::ApiKeys, move |c| c.with_jwt(jwt)).await
}

#[tokio::test]
async fn a_valid_token_reaches_its_users_own_records_only() {
    let rsa = Key::rsa();
    let ec = Key::ec();
    let issuer = Issuer::start(json!({"keys": [rsa.jwk("r1"), ec.jwk("e1")]})).await;
    let h = server(JwtConfig::new(&issuer.url, AUDIENCE)).await;
    let alice = rsa.sign("r1", &issuer.claims("alice"));
    let bob = ec.sign("e1", &issuer.claims("bob"));

    let (code, created) = h.post("/agent/", &alice, json!({"name": "A"})).await;
    assert_eq!(code, 201, "{created}");
    let id = created["agent_id"].as_str().unwrap().to_owned();
    let (code, list) = h.get("/agent/", &alice).await;
    assert_eq!(code, 200);
    assert_eq!(list["agents"][0]["user_id"], "alice");
    let (code, list) = h.get("/agent/", &bob).await;
    assert_eq!((code, list["total"].clone()), (200, json!(0)));
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/agent/{id}"),
            &bob,
            Some(json!({"name": "B"})),
        )
        .await;
    assert_eq!(code, 404, "another user's agent is not found");
    let (code, _) = h
        .call(reqwest::Method::DELETE, &format!("/agent/{id}"), &bob, None)
        .await;
    assert_eq!(code, 404);
    // Without a `kid`, the keys of the token's algorithm are tried.
    let no_kid = rsa.sign_with(&json!({"alg": "RS256"}), &issuer.claims("alice"));
    let (code, list) = h.get("/agent/", &no_kid).await;
    assert_eq!((code, list["total"].clone()), (200, json!(1)));
    // A token that expired a moment ago is within the leeway.
    let mut late = issuer.claims("alice");
    late["exp"] = json!(now() - 5);
    let (code, _) = h.get("/agent/", &rsa.sign("r1", &late)).await;
    assert_eq!(code, 200);
    assert_eq!(issuer.reads(), 1, "the key set is read once");

    // API keys still work, and the document names both schemes.
    let (key, hash) = oxiscope_server::generate_api_key();
    h.state
        .storage()
        .create_api_key(&oxiscope_storage::ApiKeyRecord {
            hash,
            user_id: "alice".into(),
            label: "test".into(),
            created_at: oxiscope_storage::now(),
        })
        .await
        .unwrap();
    let (code, list) = h.get("/agent/", &key).await;
    assert_eq!((code, list["total"].clone()), (200, json!(1)));
    let (_, doc) = h.get("/openapi.json", "").await;
    assert_eq!(doc["security"], json!([{"APIKey": []}, {"JWT": []}]));
    assert_eq!(
        doc["components"]["securitySchemes"]["JWT"]["bearerFormat"],
        "JWT"
    );
}

#[tokio::test]
async fn every_bad_token_is_refused_with_its_reason() {
    let rsa = Key::rsa();
    let ec = Key::ec();
    let other = Key::ec();
    let issuer = Issuer::start(json!({"keys": [rsa.jwk("r1"), ec.jwk("e1")]})).await;
    let h = server(JwtConfig::new(&issuer.url, AUDIENCE)).await;
    let good = issuer.claims("mallory");
    let with = |key: &str, value: Value| {
        let mut claims = good.clone();
        claims[key] = value;
        claims
    };
    let valid = rsa.sign("r1", &good);
    let (code, _) = h.get("/agent/", &valid).await;
    assert_eq!(code, 200, "the control token is accepted");

    let (head, rest) = valid.split_once('.').unwrap();
    let (_, sig) = rest.split_once('.').unwrap();
    let forged_claims = B64.encode(with("sub", json!("alice")).to_string());
    let unsigned = |alg: &str| {
        let header = B64.encode(json!({"alg": alg, "kid": "r1"}).to_string());
        format!("{header}.{}.", B64.encode(good.to_string()))
    };
    let mut no_sub = good.clone();
    no_sub.as_object_mut().unwrap().remove("sub");
    let cases = [
        (
            "expired",
            rsa.sign("r1", &with("exp", json!(now() - 3600))),
            "Invalid token: expired",
        ),
        (
            "not yet valid",
            rsa.sign("r1", &with("nbf", json!(now() + 3600))),
            "Invalid token: not valid yet",
        ),
        (
            "claims swapped under a real signature",
            format!("{head}.{forged_claims}.{sig}"),
            "Invalid token: bad signature",
        ),
        (
            "signed by another key",
            other.sign("e1", &good),
            "Invalid token: bad signature",
        ),
        (
            "alg none",
            unsigned("none"),
            "Invalid token: algorithm \"none\" is not accepted (RS256 or ES256)",
        ),
        (
            "HS256",
            unsigned("HS256"),
            "Invalid token: algorithm \"HS256\" is not accepted (RS256 or ES256)",
        ),
        (
            "wrong audience",
            rsa.sign("r1", &with("aud", json!("someone-else"))),
            "Invalid token: wrong audience",
        ),
        (
            "wrong issuer",
            rsa.sign("r1", &with("iss", json!("https://evil.example"))),
            "Invalid token: wrong issuer",
        ),
        (
            "no user claim",
            rsa.sign("r1", &no_sub),
            "Invalid token: no \"sub\" claim",
        ),
        (
            "not a JWT",
            "eyJhbGciOi".to_owned(),
            "Invalid token: not a JWT",
        ),
    ];
    for (what, token, detail) in cases {
        let (code, body) = h.get("/agent/", &token).await;
        assert_eq!((code, body), (401, json!({"detail": detail})), "{what}");
    }
    assert_eq!(issuer.reads(), 1, "known keys need no new read");

    // An unknown key id reads the set once more, then is refused; another
    // one right after does not make the server read it again.
    let (code, body) = h.get("/agent/", &rsa.sign("r2", &good)).await;
    let unknown = json!({"detail": "Invalid token: unknown signing key \"r2\""});
    assert_eq!((code, body), (401, unknown));
    assert_eq!(issuer.reads(), 2);
    let (code, _) = h.get("/agent/", &rsa.sign("r3", &good)).await;
    assert_eq!(code, 401);
    assert_eq!(issuer.reads(), 2, "reads for unknown keys are rate-limited");
}

#[tokio::test]
async fn a_key_the_issuer_adds_later_is_read_and_accepted() {
    let first = Key::ec();
    let second = Key::ec();
    let issuer = Issuer::start(json!({"keys": [first.jwk("k1")]})).await;
    let config = JwtConfig::new(&issuer.url, AUDIENCE).with_refresh_interval(Duration::ZERO);
    let h = server(config).await;
    let (code, _) = h
        .get("/agent/", &first.sign("k1", &issuer.claims("u")))
        .await;
    assert_eq!(code, 200);
    let token = second.sign("k2", &issuer.claims("u"));
    let (code, _) = h.get("/agent/", &token).await;
    assert_eq!(code, 401, "not published yet");
    *issuer.jwks.lock().unwrap() = json!({"keys": [first.jwk("k1"), second.jwk("k2")]});
    let (code, _) = h.get("/agent/", &token).await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn keys_can_come_from_a_file_and_the_user_from_another_claim() {
    let key = Key::ec();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, json!({"keys": [key.jwk("f1")]}).to_string()).unwrap();
    let issuer = "https://id.example";
    let config = JwtConfig::new(issuer, AUDIENCE)
        .with_jwks_file(&file)
        .with_user_claim("email");
    let h = server(config).await;
    let claims = json!({"iss": issuer, "aud": [AUDIENCE, "other"], "sub": "123",
        "email": "dana@example.com", "exp": now() + 60});
    let token = key.sign("f1", &claims);
    let (code, created) = h.post("/agent/", &token, json!({"name": "D"})).await;
    assert_eq!(code, 201, "{created}");
    let (_, list) = h.get("/agent/", &token).await;
    assert_eq!(list["agents"][0]["user_id"], "dana@example.com");
}

#[tokio::test]
async fn an_unreachable_issuer_answers_503_not_401() {
    // A port with nothing listening.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let h = server(JwtConfig::new(&url, AUDIENCE)).await;
    let key = Key::ec();
    let claims = json!({"iss": url, "aud": AUDIENCE, "sub": "u", "exp": now() + 60});
    let token = key.sign("k1", &claims);
    for _ in 0..2 {
        let (code, body) = h.get("/agent/", &token).await;
        let detail = json!({"detail": "Token keys are unavailable; try again later."});
        assert_eq!((code, body), (503, detail));
    }
}
