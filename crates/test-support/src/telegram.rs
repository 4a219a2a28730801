//! A fake Telegram Bot API server, written from the published Bot API:
//! `POST /bot<token>/<method>` with a JSON body, answered by
//! `{"ok": true, "result": ...}` or `{"ok": false, "error_code",
//! "description", "parameters": {"retry_after"}}`; `getUpdates` long-polls
//! and an `offset` confirms (drops) every earlier update; files are served
//! at `/file/bot<token>/<file_path>`.
//!
//! Faults are scripted per method ([`FakeTelegram::fail_next`]): a status,
//! a 429 with `retry_after`, or a connection that breaks mid-body.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The fake bot's user id.
pub const BOT_ID: i64 = 4242;
/// The fake bot's username.
pub const BOT_USERNAME: &str = "oxi_test_bot";

/// A scripted failure of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TelegramFault {
    /// Answer with this status and the API's error body.
    Status(u16),
    /// `429 Too Many Requests` asking to wait this many seconds.
    RateLimit(u64),
    /// A 200 whose body breaks off before its end.
    Drop,
}

#[derive(Debug, Default)]
struct Books {
    next_update: i64,
    next_message: i64,
    pending: VecDeque<Value>,
    sent: Vec<Value>,
    calls: Vec<(String, Value)>,
    faults: HashMap<String, VecDeque<TelegramFault>>,
    files: HashMap<String, (String, Vec<u8>)>,
}

#[derive(Debug)]
struct Shared {
    token: String,
    books: Mutex<Books>,
    changed: Notify,
}

impl Shared {
    fn books(&self) -> MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The fake server; it stops when dropped.
#[derive(Debug)]
pub struct FakeTelegram {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeTelegram {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeTelegram {
    /// A server for the bot with `token`, on `127.0.0.1`.
    ///
    /// # Errors
    /// When the listener cannot be bound.
    pub async fn start(token: &str) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            token: token.to_owned(),
            books: Mutex::new(Books {
                next_update: 1000,
                next_message: 1,
                ..Books::default()
            }),
            changed: Notify::new(),
        });
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, shared, task })
    }

    /// `http://127.0.0.1:<port>`: the API base.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a message from a user for the bot; the update's id.
    pub fn push_message(&self, message: &Value) -> i64 {
        let id = {
            let mut books = self.shared.books();
            let id = books.next_update;
            books.next_update += 1;
            books
                .pending
                .push_back(json!({"update_id": id, "message": message}));
            id
        };
        self.shared.changed.notify_waiters();
        id
    }

    /// Queues a raw update (any shape).
    pub fn push_raw(&self, update: Value) {
        self.shared.books().pending.push_back(update);
        self.shared.changed.notify_waiters();
    }

    /// The next call of `method` fails with `fault` (faults of one method
    /// apply in order).
    pub fn fail_next(&self, method: &str, fault: TelegramFault) {
        self.shared
            .books()
            .faults
            .entry(method.to_owned())
            .or_default()
            .push_back(fault);
    }

    /// Serves `bytes` as the file `file_id`.
    pub fn add_file(&self, file_id: &str, bytes: Vec<u8>) {
        let path = format!("files/{file_id}.bin");
        self.shared
            .books()
            .files
            .insert(file_id.to_owned(), (path, bytes));
    }

    /// The `sendMessage` calls that succeeded, in order.
    #[must_use]
    pub fn sent(&self) -> Vec<Value> {
        self.shared.books().sent.clone()
    }

    /// The bodies of every call of `method` (failed ones included).
    #[must_use]
    pub fn calls(&self, method: &str) -> Vec<Value> {
        self.shared
            .books()
            .calls
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// Updates not confirmed by an offset yet.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.shared.books().pending.len()
    }

    /// Waits (at most `within`) until `n` messages were sent; what was.
    pub async fn wait_sent(&self, n: usize, within: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let sent = self.sent();
            if sent.len() >= n || tokio::time::Instant::now() >= deadline {
                return sent;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A private-chat message from user `user_id`.
#[must_use]
pub fn private_message(message_id: i64, user_id: i64, name: &str, text: &str) -> Value {
    json!({
        "message_id": message_id, "date": 1_700_000_000,
        "from": {"id": user_id, "is_bot": false, "first_name": name},
        "chat": {"id": user_id, "type": "private", "first_name": name},
        "text": text,
    })
}

/// A message in group `chat_id` ("supergroup"), mentioning the bot first
/// when `mention`.
#[must_use]
pub fn group_message(
    message_id: i64,
    chat_id: i64,
    title: &str,
    user_id: i64,
    name: &str,
    text: &str,
    mention: bool,
) -> Value {
    let handle = format!("@{BOT_USERNAME}");
    let (text, entities) = if mention {
        let length = handle.encode_utf16().count();
        (
            format!("{handle} {text}"),
            json!([{"type": "mention", "offset": 0, "length": length}]),
        )
    } else {
        (text.to_owned(), json!([]))
    };
    json!({
        "message_id": message_id, "date": 1_700_000_000,
        "from": {"id": user_id, "is_bot": false, "first_name": name},
        "chat": {"id": chat_id, "type": "supergroup", "title": title},
        "text": text, "entities": entities,
    })
}

fn ok(result: Value) -> Response {
    let mut body = serde_json::Map::new();
    body.insert("ok".into(), true.into());
    body.insert("result".into(), result);
    reply(StatusCode::OK, &Value::Object(body))
}

fn error(status: u16, description: &str, retry_after: Option<u64>) -> Response {
    let mut body = json!({"ok": false, "error_code": status, "description": description});
    if let Some(secs) = retry_after {
        body["parameters"] = json!({"retry_after": secs});
    }
    reply(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &body,
    )
}

fn reply(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

fn broken() -> Response {
    let chunks: Vec<Result<Bytes, io::Error>> = vec![
        Ok(Bytes::from_static(
            b"{\"ok\":true,\"result\":[{\"update_id\"",
        )),
        Err(io::Error::new(io::ErrorKind::ConnectionReset, "dropped")),
    ];
    let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    response.headers_mut().insert(
        axum::http::header::CONTENT_LENGTH,
        axum::http::HeaderValue::from_static("4096"),
    );
    response
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let body = axum::body::to_bytes(request.into_body(), 16 * 1024 * 1024)
        .await
        .unwrap_or_default();
    if let Some(rest) = path.strip_prefix("/file/bot") {
        return file(&shared, rest);
    }
    let Some((token, method)) = path
        .strip_prefix("/bot")
        .and_then(|rest| rest.split_once('/'))
    else {
        return error(404, "Not Found", None);
    };
    if token != shared.token {
        return error(401, "Unauthorized", None);
    }
    let params: Value = if body.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(_) => return error(400, "Bad Request: can't parse JSON", None),
        }
    };
    let fault = {
        let mut books = shared.books();
        books.calls.push((method.to_owned(), params.clone()));
        books.faults.get_mut(method).and_then(VecDeque::pop_front)
    };
    match fault {
        Some(TelegramFault::Status(status)) => {
            return error(status, "Internal Server Error", None);
        }
        Some(TelegramFault::RateLimit(secs)) => {
            return error(
                429,
                &format!("Too Many Requests: retry after {secs}"),
                Some(secs),
            );
        }
        Some(TelegramFault::Drop) => return broken(),
        None => {}
    }
    match method {
        "getMe" => ok(json!({"id": BOT_ID, "is_bot": true, "first_name": "Oxi",
                              "username": BOT_USERNAME})),
        "getUpdates" => get_updates(&shared, &params).await,
        "sendMessage" => send_message(&shared, &params),
        "getFile" => get_file(&shared, &params),
        "setWebhook" | "deleteWebhook" => ok(json!(true)),
        _ => error(404, "Not Found: method not found", None),
    }
}

async fn get_updates(shared: &Shared, params: &Value) -> Response {
    let offset = params.get("offset").and_then(Value::as_i64);
    let wait = params
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(50);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    loop {
        let changed = shared.changed.notified();
        let found: Vec<Value> = {
            let mut books = shared.books();
            if let Some(offset) = offset {
                books
                    .pending
                    .retain(|u| u["update_id"].as_i64().is_none_or(|id| id >= offset));
            }
            books.pending.iter().take(100).cloned().collect()
        };
        if !found.is_empty() || tokio::time::Instant::now() >= deadline {
            return ok(Value::Array(found));
        }
        let _ = tokio::time::timeout_at(deadline, changed).await;
    }
}

fn send_message(shared: &Shared, params: &Value) -> Response {
    let text = params.get("text").and_then(Value::as_str).unwrap_or("");
    if params.get("chat_id").is_none_or(Value::is_null) {
        return error(400, "Bad Request: chat_id is empty", None);
    }
    if text.trim().is_empty() {
        return error(400, "Bad Request: message text is empty", None);
    }
    if text.chars().count() > 4096 {
        return error(400, "Bad Request: message is too long", None);
    }
    let mut books = shared.books();
    let id = books.next_message;
    books.next_message += 1;
    books.sent.push(params.clone());
    ok(json!({"message_id": id, "date": 1_700_000_000,
              "chat": {"id": params["chat_id"], "type": "private"}, "text": text}))
}

fn get_file(shared: &Shared, params: &Value) -> Response {
    let id = params.get("file_id").and_then(Value::as_str).unwrap_or("");
    match shared.books().files.get(id) {
        Some((path, bytes)) => ok(json!({"file_id": id, "file_unique_id": id,
                                         "file_size": bytes.len(), "file_path": path})),
        None => error(400, "Bad Request: invalid file_id", None),
    }
}

fn file(shared: &Shared, rest: &str) -> Response {
    let Some((token, path)) = rest.split_once('/') else {
        return error(404, "Not Found", None);
    };
    if token != shared.token {
        return error(401, "Unauthorized", None);
    }
    let books = shared.books();
    match books.files.values().find(|(p, _)| p == path) {
        Some((_, bytes)) => Response::new(Body::from(bytes.clone())),
        None => error(404, "Not Found", None),
    }
}
