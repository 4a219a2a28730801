//! The end gate: how a reply learns whether its `REPLY_END` made it through
//! every `on_reply` middleware to the consumer, or was swallowed (which asks
//! for another round in the same reply).

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

    /// Waits for the decision on the `REPLY_END` just sent; `None` when the
    /// consumer went away first.
    pub(crate) async fn wait(&self, tx: &mpsc::Sender<AgentEvent>) -> Option<Decision> {
        loop {
            let notified = self.notify.notified();
            if let Some(d) = self.with(|s| s.decision.take()) {
                return Some(d);
            }
            tokio::select! {
                () = notified => {}
                () = tx.closed() => return self.with(|s| s.decision.take()),
            }
        }
    }
}

/// The innermost stream: the loop's events. Asked for another event right
/// after yielding an undecided `REPLY_END`, it reports the end swallowed.
pub(crate) struct Inner {
    pub(crate) rx: mpsc::Receiver<AgentEvent>,
    pub(crate) gate: Arc<EndGate>,
    pub(crate) yielded_end: bool,
}

impl Stream for Inner {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        if self.yielded_end {
            self.yielded_end = false;
            self.gate.decide(Decision::Continue);
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
