//! A known path asked with another method answers FastAPI's 405.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::Harness;

#[tokio::test]
async fn a_known_path_with_another_method_answers_fastapis_405() {
    let h = Harness::start().await;
    for (method, path, allow) in [
        (reqwest::Method::DELETE, "/agent/", "GET,HEAD,POST"),
        (reqwest::Method::PUT, "/chat/", "POST"),
        (reqwest::Method::GET, "/sessions/s1/interrupt", "POST"),
        (reqwest::Method::POST, "/health", "GET,HEAD"),
    ] {
        let res = h
            .http
            .request(method.clone(), format!("{}{path}", h.base))
            .header("x-user-id", "alice")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 405, "{method} {path}");
        let headers = res.headers().clone();
        assert_eq!(
            headers["content-type"].to_str().unwrap(),
            "application/json",
            "{method} {path}"
        );
        let mut allowed: Vec<&str> = headers["allow"].to_str().unwrap().split(',').collect();
        allowed.sort_unstable();
        assert_eq!(allowed.join(","), allow, "{method} {path}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(
            body,
            json!({"detail": "Method Not Allowed"}),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn an_unknown_path_still_answers_404() {
    let h = Harness::start().await;
    let (status, body) = h.get("/no/such/path", "alice").await;
    assert_eq!((status, body), (404, json!({"detail": "Not Found"})));
}
