//! The fake server: scripted answers, recorded requests.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::sync::watch;

use crate::script::{BodyEnd, ScriptedBody, ScriptedResponse};

/// Largest request body the server records.
const MAX_REQUEST_BODY: usize = 64 * 1024 * 1024;

/// A request the fake server received.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The method, upper case (`"POST"`).
    pub method: String,
    /// The path, without the query (`"/v1/chat/completions"`).
    pub path: String,
    /// The query string without `?`, if any.
    pub query: Option<String>,
    /// The headers in arrival order, names lower case; values that are not UTF-8 are
    /// decoded lossily.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as UTF-8 text (lossy).
    #[must_use]
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    ///
    /// # Errors
    ///
    /// When the body is not JSON.
    pub fn body_json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_slice(&self.body)
    }
}

/// A scripted HTTP server on `127.0.0.1` for tests; see the crate docs.
///
/// Each request takes the next response scripted for its path ([`FakeServer::push_for`]),
/// else the next one of the general queue ([`FakeServer::push`]). When nothing is scripted
/// it answers `501 Not Implemented` with a body saying so (501 is not retried by clients).
/// The server stops when dropped.
#[derive(Debug)]
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<ScriptState>,
    /// Streamed bodies the client dropped before their end.
    abandoned: watch::Sender<usize>,
    /// Requests received so far.
    received: watch::Sender<usize>,
}

#[derive(Debug, Default)]
struct ScriptState {
    queue: VecDeque<ScriptedResponse>,
    by_path: HashMap<String, VecDeque<ScriptedResponse>>,
    requests: Vec<RecordedRequest>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ScriptState> {
        // A panicking test thread cannot leave the script half-updated in a way that
        // matters, so a poisoned lock is still used.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl FakeServer {
    /// Starts a server on `127.0.0.1` with an ephemeral port, on the current tokio
    /// runtime.
    ///
    /// # Errors
    ///
    /// When the listener cannot be bound.
    pub async fn start() -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            // Serving ends only with an I/O error on the listener; the test then sees
            // connection failures.
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, shared, task })
    }

    /// The address the server listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, `http://127.0.0.1:<port>`, without trailing slash.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URL of `path` on the server (`path` should start with `/`).
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Adds a response to the general queue.
    pub fn push(&self, response: ScriptedResponse) {
        self.shared.lock().queue.push_back(response);
    }

    /// Adds a response for requests to `path` only (matched exactly, query excluded).
    pub fn push_for(&self, path: impl Into<String>, response: ScriptedResponse) {
        self.shared
            .lock()
            .by_path
            .entry(path.into())
            .or_default()
            .push_back(response);
    }

    /// Every request received so far, in arrival order.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests were received so far.
    #[must_use]
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// How many scripted responses are still waiting to be served.
    #[must_use]
    pub fn pending_responses(&self) -> usize {
        let state = self.shared.lock();
        state.queue.len() + state.by_path.values().map(VecDeque::len).sum::<usize>()
    }

    /// Waits until `count` requests have been received.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe. Wrap it in a timeout: it waits forever if the requests never come.
    pub async fn wait_for_requests(&self, count: usize) {
        let mut received = self.shared.received.subscribe();
        // The sender lives as long as `self`, so waiting cannot fail.
        let _ = received.wait_for(|n| *n >= count).await;
    }

    /// Waits until `count` streamed bodies were dropped by the client before their end
    /// (the client closed the connection mid-stream).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe. Wrap it in a timeout: it waits forever if it never happens.
    pub async fn wait_for_abandoned_bodies(&self, count: usize) {
        let mut abandoned = self.shared.abandoned.subscribe();
        let _ = abandoned.wait_for(|n| *n >= count).await;
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_REQUEST_BODY).await {
        Ok(body) => body,
        Err(err) => return plain(StatusCode::BAD_REQUEST, format!("fake server: {err}")),
    };
    let path = parts.uri.path().to_owned();
    let recorded = RecordedRequest {
        method: parts.method.as_str().to_owned(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    };
    let scripted = {
        let mut state = shared.lock();
        state.requests.push(recorded);
        let for_path = state.by_path.get_mut(&path).and_then(VecDeque::pop_front);
        for_path.or_else(|| state.queue.pop_front())
    };
    shared.received.send_modify(|n| *n += 1);
    let Some(scripted) = scripted else {
        return plain(
            StatusCode::NOT_IMPLEMENTED,
            format!(
                "fake server: no response scripted for {} {path}",
                parts.method
            ),
        );
    };
    if !scripted.delay.is_zero() {
        tokio::time::sleep(scripted.delay).await;
    }
    build(scripted, &shared)
}

fn plain(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

fn build(scripted: ScriptedResponse, shared: &Arc<Shared>) -> Response {
    let body = match scripted.body {
        ScriptedBody::Whole(bytes) => Body::from(bytes),
        ScriptedBody::Chunks { chunks, end } => {
            Body::from_stream(chunk_stream(chunks, end, shared))
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() =
        StatusCode::from_u16(scripted.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in scripted.headers {
        let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) else {
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("fake server: invalid scripted header {name:?}"),
            );
        };
        response.headers_mut().append(name, value);
    }
    response
}

/// Notes a body dropped before its end (the client went away mid-stream).
#[derive(Debug)]
struct EndGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.abandoned.send_modify(|n| *n += 1);
        }
    }
}

fn chunk_stream(
    chunks: Vec<crate::script::Chunk>,
    end: BodyEnd,
    shared: &Arc<Shared>,
) -> BoxStream<'static, Result<Bytes, io::Error>> {
    let guard = EndGuard {
        shared: Arc::clone(shared),
        finished: false,
    };
    let state = (chunks.into_iter(), guard);
    stream::unfold(Some(state), move |state| async move {
        let (mut chunks, mut guard) = state?;
        if let Some(chunk) = chunks.next() {
            if !chunk.delay.is_zero() {
                tokio::time::sleep(chunk.delay).await;
            }
            return Some((Ok(chunk.bytes), Some((chunks, guard))));
        }
        match end {
            BodyEnd::Complete => {
                guard.finished = true;
                None
            }
            BodyEnd::Abort => {
                guard.finished = true;
                // Pause once so the server flushes what it has (headers included) before
                // the cut; otherwise the client may see no response at all.
                tokio::task::yield_now().await;
                let cut = io::Error::new(io::ErrorKind::ConnectionAborted, "scripted abort");
                Some((Err(cut), None))
            }
            BodyEnd::Stall => {
                // Held open until the client goes away (the guard then counts it).
                std::future::pending::<()>().await;
                None
            }
        }
    })
    .boxed()
}
