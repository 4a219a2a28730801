//! The end gate: how a reply learns whether its `REPLY_END` made it through
//! the `on_reply` middlewares to the consumer, or whether a middleware
//! swallowed it and asked for another round ([`ReplyControl::another_round`]).
//!
//! Swallowing is explicit: a middleware that merely relays or buffers events
//! (and so reads ahead) never starts a round by accident. A `REPLY_END` the
//! innermost stream is asked past without a decision ends that stream.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_util::Stream;
use oxiscope_message::AgentEvent;
use tokio::sync::{Notify, mpsc};

use crate::middleware::EventStream;

/// What became of a `REPLY_END` sent into the middleware chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// It reached the consumer: the reply ends.
    Delivered,
    /// A middleware asked for the next event instead of passing it on: the
    /// reply runs another round.
    Continue,
}

#[derive(Debug, Default)]
struct GateState {
    pending: bool,
    decision: Option<Decision>,
}

/// Shared by the reply loop, the innermost stream and the outermost one.
#[derive(Debug, Default)]
pub(crate) struct EndGate {
    state: Mutex<GateState>,
    notify: Notify,
}

impl EndGate {
    fn with<R>(&self, f: impl FnOnce(&mut GateState) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The loop is about to send a `REPLY_END`.
    pub(crate) fn sent(&self) {
        self.with(|s| {
            s.pending = true;
            s.decision = None;
        });
    }

    fn decide(&self, decision: Decision) {
        let changed = self.with(|s| {
            if !s.pending {
                return false;
            }
            s.pending = false;
            s.decision = Some(decision);
            true
        });
        if changed {
            self.notify.notify_one();
        }
    }

    /// Whether a `REPLY_END` is out and undecided.
    fn pending(&self) -> bool {
        self.with(|s| s.pending)
    }

    /// Waits for the decision on the `REPLY_END` just sent; `None` when the
    /// consumer went away or the reply was interrupted first.
    pub(crate) async fn wait(
        &self,
        tx: &mpsc::Sender<AgentEvent>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Option<Decision> {
        loop {
            let notified = self.notify.notified();
            if let Some(d) = self.with(|s| s.decision.take()) {
                return Some(d);
            }
            tokio::select! {
                () = notified => {}
                () = tx.closed() => return self.with(|s| s.decision.take()),
                () = cancel.cancelled() => return None,
            }
        }
    }
}

/// Lets an `on_reply` middleware ask for another round: call
/// [`another_round`](Self::another_round) when a completed `REPLY_END`
/// arrives and, instead of passing the event on, ask for the next one.
#[derive(Debug, Clone)]
pub struct ReplyControl {
    pub(crate) gate: Arc<EndGate>,
}

impl ReplyControl {
    /// Runs another reasoning-acting round in the same reply instead of
    /// ending it (same reply id, `max_iters` still applies). Only the
    /// `REPLY_END` that just arrived is affected; call it before asking for
    /// the next event. Has no effect at any other time.
    pub fn another_round(&self) {
        self.gate.decide(Decision::Continue);
    }
}

/// The innermost stream: the loop's events. Asked for another event after
/// yielding a `REPLY_END` nobody decided on (no round was asked for, and it
/// has not reached the consumer yet), it ends: the reply is over.
pub(crate) struct Inner {
    pub(crate) rx: mpsc::Receiver<AgentEvent>,
    pub(crate) gate: Arc<EndGate>,
    pub(crate) yielded_end: bool,
}

impl Stream for Inner {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        if self.yielded_end {
            if self.gate.pending() {
                self.rx.close();
                return Poll::Ready(None);
            }
            self.yielded_end = false;
        }
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(AgentEvent::ReplyEnd(_))) = &polled {
            self.yielded_end = true;
        }
        polled
    }
}

/// The outermost stream: a `REPLY_END` leaving it was delivered.
pub(crate) struct Outer {
    pub(crate) events: EventStream,
    pub(crate) gate: Arc<EndGate>,
}

impl Stream for Outer {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let polled = self.events.as_mut().poll_next(cx);
        if let Poll::Ready(Some(AgentEvent::ReplyEnd(_))) = &polled {
            self.gate.decide(Decision::Delivered);
        }
        polled
    }
}
