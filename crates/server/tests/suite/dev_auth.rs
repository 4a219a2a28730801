//! `--dev-auth` trusts `X-User-ID`, so it serves only requests that name
//! this server: a page elsewhere cannot drive a developer's server through
//! DNS rebinding (its own name in `Host`) or a cross-site request (its
//! origin in `Origin`). Requests are written by hand so `Host` is exactly
//! what a browser would send.

use oxiscope_server::AuthMode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::common::Harness;

/// One HTTP/1.1 request with exactly `headers`: (status, `x-request-id`,
/// body as JSON).
async fn raw(
    h: &Harness,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, Option<String>, Value) {
    let addr = h.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\nconnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        request.push_str(&format!(
            "content-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8(response).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let request_id = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("x-request-id: ")
            .map(str::to_owned)
    });
    // Bodies are small JSON documents, sent whole or in one chunk.
    let json_text = body
        .find('{')
        .and_then(|start| body.rfind('}').map(|end| &body[start..=end]))
        .unwrap_or("null");
    (status, request_id, serde_json::from_str(json_text).unwrap())
}

fn port(h: &Harness) -> &str {
    h.base.rsplit(':').next().unwrap()
}

#[tokio::test]
async fn a_request_for_another_host_is_refused_and_changes_nothing() {
    let h = Harness::start().await;
    let own = format!("localhost:{}", port(&h));
    let agent = json!({"name": "Planted"});
    for host in [
        "evil.example:8000",
        &format!("evil.example:{}", port(&h)),
        "localhost:1",
        "localhost",
    ] {
        let headers = [("host", host), ("x-user-id", "alice")];
        let (code, id, body) = raw(&h, "POST", "/agent/", &headers, Some(&agent)).await;
        assert_eq!(code, 403, "{host}: {body}");
        assert!(body["detail"].as_str().unwrap().contains("Host"), "{body}");
        assert!(id.is_some(), "a refusal still carries its request id");
    }
    // Nothing was created; the server's own names are served.
    for host in [
        own.as_str(),
        &format!("127.0.0.1:{}", port(&h)),
        &format!("[::1]:{}", port(&h)),
    ] {
        let headers = [("host", host), ("x-user-id", "alice")];
        let (code, _, body) = raw(&h, "GET", "/agent/", &headers, None).await;
        assert_eq!((code, body["total"].clone()), (200, json!(0)), "{host}");
    }
    // Every route is guarded, the public ones and unknown paths too.
    for path in [
        "/health",
        "/openapi.json",
        "/model/?provider=openai_credential",
        "/nope",
    ] {
        let (code, _, _) = raw(&h, "GET", path, &[("host", "evil.example:8000")], None).await;
        assert_eq!(code, 403, "{path}");
    }
    // A request without Host names nothing.
    let (code, _, _) = raw(&h, "GET", "/health", &[], None).await;
    assert_eq!(code, 403);
}

#[tokio::test]
async fn a_page_of_another_origin_cannot_call_but_the_servers_own_and_cors_origins_can() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_cors_origins(vec!["http://app.test:3000".to_owned()])
    })
    .await;
    let host = format!("127.0.0.1:{}", port(&h));
    let call = |origin: String| {
        let host = host.clone();
        let h = &h;
        async move {
            let headers = [
                ("host", host.as_str()),
                ("origin", origin.as_str()),
                ("x-user-id", "alice"),
            ];
            raw(h, "GET", "/agent/", &headers, None).await
        }
    };
    for origin in [
        "http://evil.example".to_owned(),
        "http://localhost:3000".to_owned(),
        format!("https://localhost:{}", port(&h)),
        "null".to_owned(),
    ] {
        let (code, _, body) = call(origin.clone()).await;
        assert_eq!(code, 403, "{origin}");
        assert!(
            body["detail"].as_str().unwrap().contains("Origin"),
            "{body}"
        );
    }
    for origin in [
        format!("http://localhost:{}", port(&h)),
        "http://app.test:3000".to_owned(),
    ] {
        let (code, _, body) = call(origin.clone()).await;
        assert_eq!(code, 200, "{origin}: {body}");
    }
    // A CORS preflight from a foreign page is refused too.
    let headers = [
        ("host", host.as_str()),
        ("origin", "http://evil.example"),
        ("access-control-request-method", "POST"),
    ];
    let (code, _, _) = raw(&h, "OPTIONS", "/agent/", &headers, None).await;
    assert_eq!(code, 403);
}

#[tokio::test]
async fn api_keys_do_not_depend_on_the_host() {
    let h = Harness::start_with(AuthMode::ApiKeys).await;
    let headers = [("host", "evil.example:8000")];
    let (code, _, body) = raw(&h, "GET", "/agent/", &headers, None).await;
    assert_eq!((code, body), (401, json!({"detail": "Not authenticated"})));
    let (code, _, _) = raw(&h, "GET", "/health", &headers, None).await;
    assert_eq!(code, 200);
}
