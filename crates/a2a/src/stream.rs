//! The stream an A2A reply returns.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use oxiscope_message::{AgentEvent, Msg};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// The events of one A2A reply.
///
/// # Contract
/// The first event is `REPLY_START`, the last exactly one `REPLY_END`, also
/// after an error or an interrupt. Between them: text and data block events
/// only (start / delta / end); every block-end event carries
/// `metadata["a2a"]` (the `task_id`, `artifact_id`, `message_id` it came
/// from), and the `REPLY_END` carries `metadata["a2a"]` with the
/// `context_id`, the kept `task_id` and its `task_state`. The finished
/// reason follows the remote task: `completed` for a completed task, a
/// direct message, or a task waiting for input / auth (its status message is
/// ordinary content; the next reply answers it); `interrupted` for a
/// cancelled task or an interrupt; `error` for a failed or rejected task, a
/// stream cut before the task ended, or any other failure.
///
/// # Cancel safety
/// Dropping the stream interrupts the reply: the remote task is cancelled
/// (`CancelTask`, best effort) and the state is left consistent.
#[derive(Debug)]
pub struct A2AReplyStream {
    rx: mpsc::Receiver<AgentEvent>,
    cancel: CancellationToken,
    handle: Option<JoinHandle<Result<Msg>>>,
}

impl A2AReplyStream {
    pub(crate) fn new(
        rx: mpsc::Receiver<AgentEvent>,
        cancel: CancellationToken,
        handle: JoinHandle<Result<Msg>>,
    ) -> Self {
        Self {
            rx,
            cancel,
            handle: Some(handle),
        }
    }

    /// Interrupts the reply: the remote task is cancelled and the stream
    /// ends with `REPLY_END` (`interrupted`).
    pub fn interrupt(&self) {
        self.cancel.cancel();
    }

    /// Reads the remaining events and returns the reply message: the one
    /// `Msg::append_event` rebuilds from the events, with
    /// `metadata["a2a"]` set as on the `REPLY_END`.
    ///
    /// # Errors
    /// The error that ended the reply.
    pub async fn message(mut self) -> Result<Msg> {
        while self.rx.recv().await.is_some() {}
        let Some(handle) = self.handle.take() else {
            return Err(Error::Internal("the reply was already awaited".to_owned()));
        };
        handle
            .await
            .map_err(|e| Error::Internal(format!("the reply task ended abnormally: {e}")))?
    }
}

impl Stream for A2AReplyStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for A2AReplyStream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
