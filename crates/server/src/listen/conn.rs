//! One connection: hyper's HTTP/1 server over the socket, a watchdog that
//! closes it when it idles or dawdles over a request head, and the
//! request time bound.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::ListenLimits;
use super::admit::Ticket;
use super::deadline::{bound, too_slow};

/// What a connection's task needs besides its socket.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) router: Router,
    pub(super) limits: ListenLimits,
    /// `true` once the server shuts down.
    pub(super) stop: watch::Receiver<bool>,
    /// Held until the connection is closed.
    pub(super) open: watch::Receiver<()>,
    /// The connection's places in the admission counts.
    pub(super) ticket: Ticket,
}

/// Serves one connection to its end.
pub(super) async fn serve(stream: TcpStream, job: Job) {
    let Job {
        router,
        limits,
        mut stop,
        open,
        ticket,
    } = job;
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        io: stream,
        activity: Arc::clone(&activity),
    });
    let service = {
        let activity = Arc::clone(&activity);
        hyper::service::service_fn(move |req: Request<Incoming>| {
            respond(router.clone(), limits, Arc::clone(&activity), req)
        })
    };
    // Request heads are timed by the watchdog below (hyper's own timer
    // would also run while a kept-alive connection waits).
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let mut stopping = *stop.borrow();
    if stopping {
        conn.as_mut().graceful_shutdown();
    }
    // How often the watchdog looks while a request is in flight.
    let check = limits.header_timeout.min(limits.idle_timeout);
    loop {
        let wait = match activity.due(&limits) {
            Some(due) if due <= Instant::now() => {
                tracing::debug!("closing a connection: no request (head) in time");
                break;
            }
            Some(due) => due - Instant::now(),
            None => check,
        };
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(error = %e, "a connection ended with an error");
                }
                break;
            }
            () = tokio::time::sleep(wait) => {}
            changed = stop.changed(), if !stopping => {
                // A dropped sender is a stop too.
                if changed.is_err() || *stop.borrow() {
                    stopping = true;
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
    drop(ticket);
    drop(open);
}

/// Runs `req` through `router` within its time bound, counting it in
/// flight until its response body is done.
async fn respond(
    mut router: Router,
    limits: ListenLimits,
    activity: Arc<Activity>,
    req: Request<Incoming>,
) -> Result<Response<Tracked>, std::convert::Infallible> {
    let in_flight = activity.start();
    let kind = bound(req.method(), req.uri().path());
    let call = tower_service::Service::call(&mut router, req.map(Body::new));
    let response = match kind.limit(&limits) {
        None => call.await,
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(response) => response,
            Err(_) => Ok(too_slow(kind, limit)),
        },
    };
    let response = response.unwrap_or_else(|never| match never {});
    Ok(response.map(|body| Tracked {
        body,
        _in_flight: in_flight,
    }))
}

/// What the watchdog reads: requests in flight, and since when the
/// connection has waited for one (in milliseconds since `base`).
#[derive(Debug)]
struct Activity {
    base: Instant,
    in_flight: AtomicUsize,
    /// When the last request ended (or the connection was accepted).
    idle_since: AtomicU64,
    /// When the first byte of the next request's head came, or [`NONE`].
    head_since: AtomicU64,
    /// Requests served so far.
    served: AtomicU64,
}

const NONE: u64 = u64::MAX;

impl Activity {
    fn new() -> Self {
        Self {
            base: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_since: AtomicU64::new(NONE),
            served: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    /// Bytes came from the client.
    fn read(&self) {
        if self.in_flight.load(Ordering::SeqCst) == 0 {
            let now = self.now();
            let _ = self
                .head_since
                .compare_exchange(NONE, now, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// A request's head is in: it is in flight until the guard drops.
    fn start(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.head_since.store(NONE, Ordering::SeqCst);
        InFlight(Arc::clone(self))
    }

    /// When the connection is to be closed; `None` while a request is in
    /// flight.
    fn due(&self, limits: &ListenLimits) -> Option<Instant> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let head = self.head_since.load(Ordering::SeqCst);
        let (since, allowed) = if head != NONE {
            (head, limits.header_timeout)
        } else if self.served.load(Ordering::SeqCst) == 0 {
            // A new connection has the head timeout for its first request.
            (
                self.idle_since.load(Ordering::SeqCst),
                limits.header_timeout,
            )
        } else {
            (self.idle_since.load(Ordering::SeqCst), limits.idle_timeout)
        };
        self.base
            .checked_add(Duration::from_millis(since))
            .and_then(|at| at.checked_add(allowed))
    }
}

/// A request in flight; dropped when its response body is done (or
/// dropped, the client having gone).
#[derive(Debug)]
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let activity = &self.0;
        activity.served.fetch_add(1, Ordering::SeqCst);
        activity.idle_since.store(activity.now(), Ordering::SeqCst);
        activity.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that keeps its request in flight.
#[derive(Debug)]
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The socket, noting when bytes come in.
#[derive(Debug)]
struct Watched {
    io: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ListenLimits {
        ListenLimits {
            header_timeout: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(30),
            ..ListenLimits::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_is_due_by_its_head_then_its_idle_time() {
        let activity = Arc::new(Activity::new());
        let start = activity.base;
        let limits = limits();
        // New: the head timeout from the accept.
        assert_eq!(activity.due(&limits), Some(start + Duration::from_secs(2)));
        tokio::time::advance(Duration::from_secs(1)).await;
        let request = activity.start();
        assert_eq!(activity.due(&limits), None, "in flight");
        // Bytes of a body do not start a head.
        activity.read();
        tokio::time::advance(Duration::from_secs(5)).await;
        drop(request);
        let ended = start + Duration::from_secs(6);
        assert_eq!(activity.due(&limits), Some(ended + Duration::from_secs(30)));
        tokio::time::advance(Duration::from_secs(3)).await;
        // The next request's first byte: the head timeout from it.
        activity.read();
        tokio::time::advance(Duration::from_secs(1)).await;
        activity.read();
        assert_eq!(
            activity.due(&limits),
            Some(ended + Duration::from_secs(3 + 2))
        );
    }
}
