//! The supervised session of a stateful client: lazy start, restart of a
//! dead server with bounded retries and backoff, and leases that let a
//! failed call retire the session it used.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::Peer;
use rmcp::RoleClient;

use super::Inner;
use crate::error::{Error, Result};
use crate::transport::{self, Session};

/// The state of a stateful client's connection.
#[derive(Default)]
pub(super) enum Slot {
    /// Never started, or retired after a failure: start on the next use.
    #[default]
    Idle,
    /// A session, numbered so a failed call can retire exactly it.
    Live(Session, u64),
    /// Closed by the user: nothing starts until `connect()`.
    Closed,
}

/// What a request runs on.
pub(super) enum Lease {
    /// The shared session `generation` of a stateful client.
    Shared(u64),
    /// A session opened for this one request (stateless HTTP).
    Own(Session),
}

impl Inner {
    /// Opens one session.
    pub(super) async fn open(&self) -> Result<Session> {
        transport::open(
            &self.name,
            &self.config,
            &self.timeouts,
            &self.headers,
            &self.events,
        )
        .await
    }

    /// Opens a session, retrying as the restart policy says.
    async fn open_with_retries(&self) -> Result<Session> {
        let attempts = self.restart.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            match self.open().await {
                Ok(session) => return Ok(session),
                Err(e) if attempt >= attempts => {
                    tracing::warn!(server = %self.name, attempts, "MCP server did not start: {e}");
                    return Err(if attempts == 1 {
                        e
                    } else {
                        Error::RestartsExhausted {
                            server: self.name.to_string(),
                            attempts,
                            last: Box::new(e),
                        }
                    });
                }
                Err(e) => {
                    let pause = self.restart.backoff(attempt);
                    tracing::warn!(
                        server = %self.name, attempt,
                        "MCP server did not start, retrying in {pause:?}: {e}"
                    );
                    tokio::time::sleep(pause).await;
                    attempt += 1;
                }
            }
        }
    }

    /// A peer to send one request to, starting or restarting the server
    /// when needed.
    pub(super) async fn lease(&self) -> Result<(Peer<RoleClient>, Lease)> {
        if !self.stateful {
            let session = self.open().await?;
            let peer = session.peer().clone();
            return Ok((peer, Lease::Own(session)));
        }
        let mut slot = self.slot.lock().await;
        match &*slot {
            Slot::Live(session, generation) if alive(session) => {
                return Ok((session.peer().clone(), Lease::Shared(*generation)));
            }
            Slot::Closed => {
                return Err(Error::Closed {
                    server: self.name.to_string(),
                });
            }
            Slot::Live(..) => {
                tracing::warn!(server = %self.name, "MCP server has died; restarting it");
                self.restarts.fetch_add(1, Ordering::AcqRel);
            }
            Slot::Idle => {}
        }
        *slot = Slot::Idle;
        let session = self.open_with_retries().await?;
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        let peer = session.peer().clone();
        *slot = Slot::Live(session, generation);
        Ok((peer, Lease::Shared(generation)))
    }

    /// Ends a lease; a connection failure retires the shared session so the
    /// next use starts a fresh one.
    pub(super) async fn release(&self, lease: Lease, failure: Option<&Error>) {
        match lease {
            Lease::Own(session) => close_session(&self.name, session).await,
            Lease::Shared(generation) => {
                if !failure.is_some_and(Error::is_connection_failure) {
                    return;
                }
                let mut slot = self.slot.lock().await;
                if matches!(&*slot, Slot::Live(_, g) if *g == generation) {
                    tracing::warn!(server = %self.name, "MCP connection failed; it restarts on next use");
                    self.restarts.fetch_add(1, Ordering::AcqRel);
                    if let Slot::Live(session, _) = std::mem::take(&mut *slot) {
                        close_session(&self.name, session).await;
                    }
                }
            }
        }
    }

    /// Starts the server now (stateful clients), in one attempt.
    pub(super) async fn connect(&self) -> Result<()> {
        let mut slot = self.slot.lock().await;
        if matches!(&*slot, Slot::Live(s, _) if alive(s)) {
            return Ok(());
        }
        *slot = Slot::Idle;
        let session = self.open().await.inspect_err(|e| {
            tracing::warn!(server = %self.name, "MCP server did not start: {e}");
        })?;
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        *slot = Slot::Live(session, generation);
        Ok(())
    }

    /// Stops the server and refuses further use until `connect()`.
    pub(super) async fn close(&self) {
        let mut slot = self.slot.lock().await;
        if let Slot::Live(session, _) = std::mem::replace(&mut *slot, Slot::Closed) {
            close_session(&self.name, session).await;
        }
    }

    /// Whether a stateful client has a live session.
    pub(super) async fn is_connected(&self) -> bool {
        matches!(&*self.slot.lock().await, Slot::Live(s, _) if alive(s))
    }
}

/// Whether the session's service loop still runs: it stops when the
/// transport ends (a dead process, a closed stream) or on cancellation.
fn alive(session: &Session) -> bool {
    !session.is_closed() && !session.peer().is_transport_closed()
}

/// Ends a session: cancels its service (which closes the transport, killing
/// a child process or deleting an HTTP session), never waiting long.
async fn close_session(server: &Arc<str>, mut session: Session) {
    match session
        .close_with_timeout(std::time::Duration::from_secs(5))
        .await
    {
        Ok(Some(_)) => {}
        Ok(None) => tracing::warn!(server = %server, "MCP session did not close in time"),
        Err(e) => tracing::warn!(server = %server, "MCP session ended badly: {e}"),
    }
}
