//! A fake Discord, written from the published Gateway and REST docs:
//! `GET /api/v10/gateway/bot` names the socket; the socket sends `Hello`
//! (op 10), takes `Identify` (op 2: a wrong token closes with 4004) or
//! `Resume` (op 6: the missed dispatches are replayed, then `RESUMED`),
//! acknowledges heartbeats (op 1 → op 11) and sends `MESSAGE_CREATE`
//! dispatches with growing sequence numbers; `POST
//! /api/v10/channels/{id}/messages` takes the replies (`Bot <token>`),
//! and a scripted rate limit is a 429 with `retry_after` in the body.

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
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The fake bot's user id.
pub const DISCORD_BOT_USER: &str = "900";

#[derive(Debug, Default)]
struct Books {
    /// Every dispatch of the session, by sequence (1-based; READY is 1).
    log: Vec<Value>,
    session: Option<String>,
    identifies: Vec<Value>,
    resumes: usize,
    heartbeats: usize,
    posted: Vec<(String, Value)>,
    post_rate_limits: usize,
    /// Bumped to make the live socket drop.
    drops: u64,
    next_message: u64,
}

#[derive(Debug)]
struct Shared {
    token: String,
    ws: SocketAddr,
    heartbeat_ms: u64,
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
pub struct FakeDiscord {
    http: SocketAddr,
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl FakeDiscord {
    /// A fake for the bot with `token`, asking for a heartbeat every
    /// `heartbeat`.
    ///
    /// # Errors
    /// When a listener cannot be bound.
    pub async fn start(token: &str, heartbeat: Duration) -> io::Result<Self> {
        let http = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let ws = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let shared = Arc::new(Shared {
            token: token.to_owned(),
            ws: ws.local_addr()?,
            heartbeat_ms: u64::try_from(heartbeat.as_millis()).unwrap_or(u64::MAX),
            books: Mutex::new(Books {
                next_message: 1000,
                ..Books::default()
            }),
            changed: Notify::new(),
        });
        let addr = http.local_addr()?;
        let app = axum::Router::new()
            .fallback(rest)
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

    /// The REST base, `http://127.0.0.1:<port>/api/v10`.
    #[must_use]
    pub fn api_base(&self) -> String {
        format!("http://{}/api/v10", self.http)
    }

    /// A message from `user` in `channel` (of `guild`, or a DM); its id.
    pub fn push_message(
        &self,
        channel: &str,
        guild: Option<&str>,
        user: &str,
        content: &str,
        mentions_bot: bool,
    ) -> String {
        let id = {
            let mut books = self.shared.books();
            books.next_message += 1;
            let id = books.next_message.to_string();
            let mentions = if mentions_bot {
                json!([{"id": DISCORD_BOT_USER, "username": "oxi", "bot": true}])
            } else {
                json!([])
            };
            let content = if mentions_bot {
                format!("<@{DISCORD_BOT_USER}> {content}")
            } else {
                content.to_owned()
            };
            let mut d = json!({"id": id, "channel_id": channel, "content": content,
                "author": {"id": user, "username": format!("user{user}")},
                "mentions": mentions, "attachments": [], "type": 0});
            if let Some(guild) = guild {
                d["guild_id"] = json!(guild);
            }
            books.log.push(json!({"t": "MESSAGE_CREATE", "d": d}));
            id
        };
        self.shared.changed.notify_waiters();
        id
    }

    /// Drops the live socket (as a network failure would).
    pub fn drop_socket(&self) {
        self.shared.books().drops += 1;
        self.shared.changed.notify_waiters();
    }

    /// The next `n` posts are answered 429 with `retry_after` 0.2 s.
    pub fn rate_limit_posts(&self, n: usize) {
        self.shared.books().post_rate_limits = n;
    }

    /// The identify payloads received.
    #[must_use]
    pub fn identifies(&self) -> Vec<Value> {
        self.shared.books().identifies.clone()
    }

    /// How many resumes were accepted.
    #[must_use]
    pub fn resumes(&self) -> usize {
        self.shared.books().resumes
    }

    /// How many heartbeats came.
    #[must_use]
    pub fn heartbeats(&self) -> usize {
        self.shared.books().heartbeats
    }

    /// The replies posted: (channel id, body).
    #[must_use]
    pub fn posted(&self) -> Vec<(String, Value)> {
        self.shared.books().posted.clone()
    }

    /// Waits (at most `within`) until `n` replies were posted; what was.
    pub async fn wait_posted(&self, n: usize, within: Duration) -> Vec<(String, Value)> {
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

async fn rest(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let authorized = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(format!("Bot {}", shared.token).as_str());
    let body = axum::body::to_bytes(request.into_body(), 1024 * 1024)
        .await
        .unwrap_or_default();
    if !authorized {
        return answer(
            StatusCode::UNAUTHORIZED,
            &json!({"message": "401: Unauthorized", "code": 0}),
        );
    }
    if path == "/api/v10/gateway/bot" {
        return answer(
            StatusCode::OK,
            &json!({"url": format!("ws://{}", shared.ws), "shards": 1,
                    "session_start_limit": {"total": 1000, "remaining": 999,
                                            "reset_after": 0, "max_concurrency": 1}}),
        );
    }
    let channel = path
        .strip_prefix("/api/v10/channels/")
        .and_then(|rest| rest.strip_suffix("/messages"));
    let Some(channel) = channel else {
        return answer(
            StatusCode::NOT_FOUND,
            &json!({"message": "404: Not Found", "code": 0}),
        );
    };
    let params: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut books = shared.books();
    if books.post_rate_limits > 0 {
        books.post_rate_limits -= 1;
        return answer(
            StatusCode::TOO_MANY_REQUESTS,
            &json!({"message": "You are being rate limited.", "retry_after": 0.2,
                    "global": false}),
        );
    }
    let content = params.get("content").and_then(Value::as_str).unwrap_or("");
    if content.is_empty() || content.chars().count() > 2000 {
        return answer(
            StatusCode::BAD_REQUEST,
            &json!({"message": "Invalid Form Body", "code": 50035}),
        );
    }
    books.posted.push((channel.to_owned(), params.clone()));
    answer(
        StatusCode::OK,
        &json!({"id": "1", "channel_id": channel, "content": content}),
    )
}

fn frame(value: &Value) -> Message {
    Message::text(value.to_string())
}

/// One client socket: `Hello`, the client's opening, then dispatches from
/// where the client stands, heartbeats acknowledged, until it drops.
async fn socket(shared: Arc<Shared>, stream: tokio::net::TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let hello = json!({"op": 10, "d": {"heartbeat_interval": shared.heartbeat_ms}});
    if ws.send(frame(&hello)).await.is_err() {
        return;
    }
    let drops = shared.books().drops;
    // Dispatches sent so far on this socket (sequence numbers).
    let mut sent: Option<usize> = None;
    loop {
        let changed = shared.changed.notified();
        let (pending, dropped) = {
            let books = shared.books();
            let pending: Vec<(usize, Value)> = match sent {
                Some(n) => books
                    .log
                    .iter()
                    .enumerate()
                    .skip(n)
                    .map(|(i, v)| (i + 1, v.clone()))
                    .collect(),
                None => Vec::new(),
            };
            (pending, books.drops != drops)
        };
        if dropped {
            return;
        }
        for (seq, dispatch) in pending {
            let mut out = dispatch;
            out["op"] = json!(0);
            out["s"] = json!(seq);
            if ws.send(frame(&out)).await.is_err() {
                return;
            }
            sent = Some(seq);
        }
        let incoming = tokio::select! {
            () = changed => continue,
            incoming = ws.next() => incoming,
        };
        let text = match incoming {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_)) | Err(_)) | None => return,
            Some(Ok(_)) => continue,
        };
        let Ok(payload) = serde_json::from_str::<Value>(text.as_str()) else {
            continue;
        };
        match payload.get("op").and_then(Value::as_u64) {
            Some(1) => {
                shared.books().heartbeats += 1;
                if ws.send(frame(&json!({"op": 11}))).await.is_err() {
                    return;
                }
            }
            Some(2) => {
                if payload.pointer("/d/token").and_then(Value::as_str) != Some(&shared.token) {
                    let close = CloseFrame {
                        code: CloseCode::from(4004),
                        reason: "Authentication failed.".into(),
                    };
                    let _ = ws.send(Message::Close(Some(close))).await;
                    return;
                }
                let mut books = shared.books();
                books.identifies.push(payload.clone());
                let session = format!("sess-{}", books.identifies.len());
                books.session = Some(session.clone());
                // A new session: its log starts with READY.
                let queued: Vec<Value> = books
                    .log
                    .iter()
                    .filter(|e| e["t"] != "READY")
                    .cloned()
                    .collect();
                books.log = vec![json!({"t": "READY", "d": {"v": 10, "session_id": session,
                    "resume_gateway_url": format!("ws://{}", shared.ws),
                    "user": {"id": DISCORD_BOT_USER, "username": "oxi", "bot": true}}})];
                books.log.extend(queued);
                sent = Some(0);
            }
            Some(6) => {
                let session = payload.pointer("/d/session_id").and_then(Value::as_str);
                let seq = payload.pointer("/d/seq").and_then(Value::as_u64);
                let from = {
                    let mut books = shared.books();
                    if session.is_some() && session == books.session.as_deref() {
                        books.resumes += 1;
                        let from = usize::try_from(seq.unwrap_or(0))
                            .unwrap_or(0)
                            .min(books.log.len());
                        books.log.push(json!({"t": "RESUMED", "d": {}}));
                        Some(from)
                    } else {
                        None
                    }
                };
                let Some(from) = from else {
                    let _ = ws.send(frame(&json!({"op": 9, "d": false}))).await;
                    return;
                };
                sent = Some(from);
            }
            _ => {}
        }
    }
}
