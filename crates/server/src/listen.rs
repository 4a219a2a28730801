//! The tenants' listener: HTTP/1 connections under limits, so no client
//! can hold the server with connections it never uses.
//!
//! - At most [`ListenLimits::max_connections`] connections are open at
//!   once, and at most [`ListenLimits::max_connections_per_ip`] from one
//!   client address; a connection past either is closed as soon as it is
//!   accepted (never queued).
//! - A connection must send a complete request head within
//!   [`ListenLimits::header_timeout`]: from its accept for its first
//!   request, from the first byte of each later one.
//! - A kept-alive connection with no request in flight is closed after
//!   [`ListenLimits::idle_timeout`].
//! - A request must have its response (its head: a streamed body such as
//!   an SSE stream or a download goes on) within
//!   [`ListenLimits::request_timeout`], or it is answered `408`; uploads
//!   have [`ListenLimits::upload_timeout`] instead, and the session event
//!   streams no bound at all (see [`deadline`]).
//!
//! [`raise_open_file_limit`] lifts the process's soft limit on open files
//! to its hard limit, so the connection limit, not the file table, is what
//! turns clients away.

mod admit;
mod conn;
mod deadline;

use std::future::Future;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;

use admit::Admission;

/// What the listener allows each client; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenLimits {
    /// Open connections at once, from every client together.
    pub max_connections: usize,
    /// Open connections at once from one client address.
    pub max_connections_per_ip: usize,
    /// How long a client may take to send a request's head.
    pub header_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// How long an ordinary request may take to be answered.
    pub request_timeout: Duration,
    /// How long an upload (a knowledge-base document, a skill) may take.
    pub upload_timeout: Duration,
}

impl Default for ListenLimits {
    /// 10,000 connections, 256 per client address, 10 s for a request
    /// head, 60 s idle, 60 s per request, 15 minutes per upload.
    fn default() -> Self {
        Self {
            max_connections: 10_000,
            max_connections_per_ip: 256,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            upload_timeout: Duration::from_secs(900),
        }
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown`
/// completes; then accepts no more connections, lets each open one finish
/// its request in flight (idle ones close at once), and returns once all
/// are closed.
///
/// # Errors
/// None today: a failed accept (a client that left, no file descriptor
/// free) is logged and the listener goes on; the `Result` is the
/// listener's, as `axum::serve`'s is.
///
/// # Cancel safety
/// Dropping the future stops accepting; connections already open are
/// served to their end by their own tasks, without the graceful close.
pub async fn listen(
    listener: TcpListener,
    router: Router,
    limits: ListenLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let admission = Admission::new(limits.max_connections, limits.max_connections_per_ip);
    // `true` once the server shuts down; each connection watches it.
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection holds a receiver: all are closed once the sender
    // sees none left.
    let (open_tx, open_rx) = watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                accept_failed(&e).await;
                continue;
            }
        };
        let Some(ticket) = admission.admit(peer.ip()) else {
            // Closed at once: the client learns now, not after a queue.
            tracing::debug!(%peer, "connection refused: over the connection limit");
            drop(stream);
            continue;
        };
        let job = conn::Job {
            router: router.clone(),
            limits,
            stop: stop_rx.clone(),
            open: open_rx.clone(),
            ticket,
        };
        tokio::spawn(conn::serve(stream, job));
    }
    drop(listener);
    // Receivers only see a change, so a connection that starts after this
    // line still finds `true` when it looks.
    let _ = stop_tx.send(true);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}

/// After a failed accept: a client that left before it was accepted is
/// nothing; anything else (no file descriptor free) is logged, and the
/// listener pauses briefly so it does not spin.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind as K;
    if matches!(
        e.kind(),
        K::ConnectionAborted | K::ConnectionReset | K::ConnectionRefused | K::Interrupted
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Raises this process's soft limit on open files (`RLIMIT_NOFILE`) to
/// its hard limit; returns the soft limit before and after (`None`:
/// unlimited). Connections, workspaces' MCP servers and the database all
/// take descriptors, and a soft limit of 1,024 (a common default) would
/// refuse clients long before the connection limit does.
///
/// # Errors
/// The kernel refused (the hard limit is above what it allows for one
/// process, say).
pub fn raise_open_file_limit() -> std::io::Result<(Option<u64>, Option<u64>)> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    // An unlimited hard limit is not a value the kernel takes for open
    // files; Linux's default ceiling (`fs.nr_open`) is.
    let target = now.maximum.unwrap_or(1 << 20);
    if now.current.is_some_and(|c| c >= target) {
        return Ok((now.current, now.current));
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(target),
            maximum: now.maximum,
        },
    )?;
    Ok((now.current, getrlimit(Resource::Nofile).current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let (_, after) = raise_open_file_limit().unwrap();
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(after, limit.current);
        if let Some(hard) = limit.maximum {
            assert_eq!(limit.current, Some(hard));
        }
    }
}
