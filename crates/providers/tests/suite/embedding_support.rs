//! Helpers of the embedding tests: a fast-retrying HTTP client, numbered
//! texts, and an echo server that answers each request from its body (so
//! concurrent chunks can be answered out of order and still be checked).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use oxiscope_http::{HttpClient, RetryPolicy};
use serde_json::Value;

/// A client that retries quickly.
pub(super) fn http() -> HttpClient {
    let retry = RetryPolicy::default()
        .with_base_delay(Duration::from_millis(5))
        .with_max_delay(Duration::from_millis(20));
    HttpClient::builder().with_retry(retry).build().unwrap()
}

/// `t0`, `t1`, ...
pub(super) fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("t{i}")).collect()
}

/// The number of a text made by [`texts`].
pub(super) fn number(text: &str) -> u64 {
    text.trim_start_matches('t').parse().unwrap()
}

/// The vector the echo server gives text `t{n}`.
pub(super) fn echo_vector(n: u64) -> Vec<f32> {
    vec![n as f32, 0.5]
}

/// How the echo server answers a request body: status, body and delay.
pub(super) type Answer = fn(&Value) -> (u16, Value, Duration);

#[derive(Default)]
struct Shared {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    bodies: Mutex<Vec<Value>>,
}

/// A server on 127.0.0.1 answering every request with an [`Answer`].
pub(super) struct EchoServer {
    pub(super) base_url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl EchoServer {
    pub(super) async fn start(answer: Answer) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared::default());
        let state = (Arc::clone(&shared), answer);
        let app = axum::Router::new().fallback(handle).with_state(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base_url,
            shared,
            task,
        }
    }

    /// The request bodies in arrival order.
    pub(super) fn bodies(&self) -> Vec<Value> {
        self.shared.bodies.lock().unwrap().clone()
    }

    /// The most requests that were in flight at once.
    pub(super) fn peak(&self) -> usize {
        self.shared.peak.load(Ordering::SeqCst)
    }
}

async fn handle(
    State((shared, answer)): State<(Arc<Shared>, Answer)>,
    request: Request,
) -> Response {
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 26)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    shared.bodies.lock().unwrap().push(body.clone());
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.peak.fetch_max(now, Ordering::SeqCst);
    let (status, reply, delay) = answer(&body);
    tokio::time::sleep(delay).await;
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut response = Response::new(Body::from(reply.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap();
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}
