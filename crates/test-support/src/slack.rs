//! A fake Slack, written from the published Socket Mode and Web API
//! docs: `POST /api/apps.connections.open` (app-level token) answers a
//! `ws://` URL; the socket sends `hello`, then `events_api` envelopes that
//! the client acknowledges with their `envelope_id` — one not acknowledged
//! when its socket ends is delivered again on the next with `retry_attempt`
//! raised; `POST /api/auth.test` and `POST /api/chat.postMessage` take the
//! bot token. Web API errors are `{"ok": false, "error"}` with status 200;
//! a scripted rate limit is a `429` with `Retry-After`.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;

/// The fake bot's user id.
pub const SLACK_BOT_USER: &str = "UBOT";

/// What the next socket does after its `hello`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketFault {
    /// Closes without a word after delivering (not acknowledged) the
    /// first pending envelope.
    DropAfterDelivery,
    /// Sends `{"type": "disconnect", "reason": "refresh_requested"}`.
    Disconnect,
}

#[derive(Debug, Default)]
struct Books {
    next_envelope: u64,
    /// Envelopes not acknowledged yet: (id, attempts so far, payload).
    pending: VecDeque<(String, u64, Value)>,
    acked: Vec<String>,
    posted: Vec<Value>,
    opens: usize,
    socket_faults: VecDeque<SocketFault>,
    post_rate_limits: usize,
}

#[derive(Debug)]
struct Shared {
    app_token: String,
    bot_token: String,
    ws: SocketAddr,
    books: Mutex<Books>,
    changed: Notify,
}

impl Shared {
    fn books(&self) -> MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The fake; it stops when dropped.
#[derive(Debug)]
pub struct FakeSlack {
    http: SocketAddr,
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for FakeSlack {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl FakeSlack {
    /// A fake for the app with these tokens, on `127.0.0.1`.
    ///
    /// # Errors
    /// When a listener cannot be bound.
    pub async fn start(app_token: &str, bot_token: &str) -> io::Result<Self> {
        let http = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let ws = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let shared = Arc::new(Shared {
            app_token: app_token.to_owned(),
            bot_token: bot_token.to_owned(),
            ws: ws.local_addr()?,
            books: Mutex::new(Books::default()),
            changed: Notify::new(),
        });
        let addr = http.local_addr()?;
        let app = axum::Router::new()
            .fallback(web_api)
            .with_state(Arc::clone(&shared));
        let serving = tokio::spawn(async move {
            let _ = axum::serve(http, app).await;
        });
        let sockets = {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                while let Ok((stream, _)) = ws.accept().await {
                    let shared = Arc::clone(&shared);
                    tokio::spawn(async move { socket(shared, stream).await });
                }
            })
        };
        Ok(Self {
            http: addr,
            shared,
            tasks: vec![serving, sockets],
        })
    }

    /// The Web API base, `http://127.0.0.1:<port>/api`.
    #[must_use]
    pub fn api_base(&self) -> String {
        format!("http://{}/api", self.http)
    }

    /// Queues an `events_api` envelope carrying `event`; its id.
    pub fn push_event(&self, event: &Value) -> String {
        let id = {
            let mut books = self.shared.books();
            books.next_envelope += 1;
            let id = format!("env-{}", books.next_envelope);
            let payload = json!({"type": "event_callback", "team_id": "T1",
                                 "event_id": format!("Ev{id}"), "event": event});
            books.pending.push_back((id.clone(), 0, payload));
            id
        };
        self.shared.changed.notify_waiters();
        id
    }

    /// What the next socket does.
    pub fn fault_next_socket(&self, fault: SocketFault) {
        self.shared.books().socket_faults.push_back(fault);
    }

    /// The next `n` posts are answered `429` with `Retry-After: 1`.
    pub fn rate_limit_posts(&self, n: usize) {
        self.shared.books().post_rate_limits = n;
    }

    /// The envelopes acknowledged, in order.
    #[must_use]
    pub fn acked(&self) -> Vec<String> {
        self.shared.books().acked.clone()
    }

    /// How many sockets were opened.
    #[must_use]
    pub fn opens(&self) -> usize {
        self.shared.books().opens
    }

    /// The `chat.postMessage` bodies that succeeded.
    #[must_use]
    pub fn posted(&self) -> Vec<Value> {
        self.shared.books().posted.clone()
    }

    /// Waits (at most `within`) until `n` messages were posted; what was.
    pub async fn wait_posted(&self, n: usize, within: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let posted = self.posted();
            if posted.len() >= n || tokio::time::Instant::now() >= deadline {
                return posted;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn answer(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

async fn web_api(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let token = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    let body = axum::body::to_bytes(request.into_body(), 1024 * 1024)
        .await
        .unwrap_or_default();
    let params: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let refused = || {
        answer(
            StatusCode::OK,
            &json!({"ok": false, "error": "invalid_auth"}),
        )
    };
    match path.as_str() {
        "/api/apps.connections.open" => {
            if token != shared.app_token {
                return refused();
            }
            let mut books = shared.books();
            books.opens += 1;
            let url = format!("ws://{}/link/?ticket={}", shared.ws, books.opens);
            answer(StatusCode::OK, &json!({"ok": true, "url": url}))
        }
        "/api/auth.test" => {
            if token != shared.bot_token {
                return refused();
            }
            answer(
                StatusCode::OK,
                &json!({"ok": true, "user_id": SLACK_BOT_USER, "bot_id": "B1", "team_id": "T1"}),
            )
        }
        "/api/chat.postMessage" => {
            if token != shared.bot_token {
                return refused();
            }
            let mut books = shared.books();
            if books.post_rate_limits > 0 {
                books.post_rate_limits -= 1;
                let mut limited = answer(
                    StatusCode::TOO_MANY_REQUESTS,
                    &json!({"ok": false, "error": "ratelimited"}),
                );
                limited.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from_static("1"),
                );
                return limited;
            }
            let channel = params.get("channel").and_then(Value::as_str);
            let text = params.get("text").and_then(Value::as_str).unwrap_or("");
            if channel.is_none() {
                return answer(
                    StatusCode::OK,
                    &json!({"ok": false, "error": "channel_not_found"}),
                );
            }
            if text.trim().is_empty() {
                return answer(StatusCode::OK, &json!({"ok": false, "error": "no_text"}));
            }
            books.posted.push(params.clone());
            answer(
                StatusCode::OK,
                &json!({"ok": true, "channel": channel, "ts": "1.000"}),
            )
        }
        _ => answer(
            StatusCode::NOT_FOUND,
            &json!({"ok": false, "error": "unknown_method"}),
        ),
    }
}

/// One client socket: `hello`, then every pending envelope, in order,
/// each delivered once per socket until acknowledged.
async fn socket(shared: Arc<Shared>, stream: tokio::net::TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let hello = json!({"type": "hello", "num_connections": 1,
                       "connection_info": {"app_id": "A1"}});
    if ws.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    let fault = shared.books().socket_faults.pop_front();
    if fault == Some(SocketFault::Disconnect) {
        let bye = json!({"type": "disconnect", "reason": "refresh_requested"});
        let _ = ws.send(Message::text(bye.to_string())).await;
        return;
    }
    let mut sent: Vec<String> = Vec::new();
    loop {
        let changed = shared.changed.notified();
        let next = {
            let mut books = shared.books();
            books
                .pending
                .iter_mut()
                .find(|(id, _, _)| !sent.contains(id))
                .map(|(id, attempts, payload)| {
                    let envelope = json!({"envelope_id": id, "type": "events_api",
                        "accepts_response_payload": false, "retry_attempt": *attempts,
                        "retry_reason": if *attempts > 0 { "timeout" } else { "" },
                        "payload": payload});
                    *attempts += 1;
                    (id.clone(), envelope)
                })
        };
        if let Some((id, envelope)) = next {
            if ws.send(Message::text(envelope.to_string())).await.is_err() {
                return;
            }
            sent.push(id);
            if fault == Some(SocketFault::DropAfterDelivery) {
                // Gone before any acknowledgement is read.
                return;
            }
            continue;
        }
        tokio::select! {
            () = changed => {}
            frame = ws.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    if let Ok(ack) = serde_json::from_str::<Value>(text.as_str())
                        && let Some(id) = ack.get("envelope_id").and_then(Value::as_str)
                    {
                        let mut books = shared.books();
                        books.pending.retain(|(p, _, _)| p != id);
                        books.acked.push(id.to_owned());
                    }
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
