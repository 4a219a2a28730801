//! Background tool calls: a tool call that outlives the offload timeout
//! ([`EngineConfig::tool_offload`](crate::EngineConfig::tool_offload), 10 s
//! by default, `0` turns it off) is moved to the background, so the reply
//! does not wait for it.
//!
//! [`ToolOffloadMiddleware`] wraps every executing tool call of a
//! session's agent (`on_acting`). Calls parked for a confirmation or run
//! by an external executor never get there; only a call that is actually
//! executing can be offloaded. Its chunks stream as usual until the
//! timeout; then the call is recorded in storage as a background task
//! (`background_tasks`, state `running`), its stream is handed to a task
//! of this process, and the reply gets at once a placeholder result that
//! names the tool, the call and the task id and says the result comes
//! later as a message. The model reads it like any tool result and the
//! reply goes on.
//!
//! When the call ends, its outcome (state and text output, capped at
//! [`RESULT_CAP`] bytes) is stored in the task's row first, then delivered
//! to the session as an assistant message holding one hint block
//! ([`deliver_hint`](super::deliver::deliver_hint)): it is queued in the
//! session's inbox and starts a run (or waits for the active one), so the
//! model reasons over the result and the events reach the session's
//! stream. The row is marked delivered afterwards: a crash in between
//! delivers it again at the next start (at least once).
//!
//! Interrupting a session (`POST /sessions/{id}/interrupt`) or deleting
//! it cancels its background calls running in this process: an
//! interrupted call is delivered as such, so the model learns it did not
//! finish (the interrupt reaches the calls of the replica that serves the
//! request, as it does for runs).
//!
//! Nothing is lost on a restart. Each process has a boot id; its tasks'
//! rows name it as `owner`, and it refreshes their heartbeat every
//! [`takeover_interval`](crate::EngineConfig::takeover_interval). A row
//! whose heartbeat is older than
//! [`lock_ttl`](crate::EngineConfig::lock_ttl) belongs to a process that
//! died; at start and on every sweep each process takes such rows over
//! (an atomic compare-and-set on owner and heartbeat, so one replica wins
//! each): a `running` one becomes `lost` and its session gets a hint that
//! the call was cut off by a restart and may be retried; a finished one
//! that was never delivered is delivered. A process that shuts down
//! gracefully drops its running calls and zeroes their heartbeats, so the
//! next start takes them over at once. Delivered rows are deleted after
//! [`KEEP_DELIVERED_DAYS`] days.
//!
//! Tools that change the session's tool state (the task and tool-group
//! tools) finish in far less than a timeout; a call that did run past it
//! would keep its state changes out of the reply.

#[path = "offload_tasks.rs"]
mod tasks;

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use oxiscope_agent::{ActingCall, ActingNext, Middleware};
use oxiscope_message::{ToolCallBlock, ToolResultState};
use oxiscope_tool::{ToolChunk, ToolStream};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::Engine;

pub use tasks::{BackgroundTasks, abandon, cancel_session, recover, spawn_keeper};

/// The most bytes of a background call's text output kept and delivered;
/// a longer output is cut at a character boundary and marked.
pub const RESULT_CAP: usize = 16 * 1024;

/// How long delivered background tasks stay in storage.
pub const KEEP_DELIVERED_DAYS: i64 = 7;

/// Moves tool calls that outlive `timeout` to the background (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct ToolOffloadMiddleware {
    state: Engine,
    user_id: String,
    session_id: String,
    timeout: Duration,
}

impl ToolOffloadMiddleware {
    /// Offloads the calls of `session_id` (owned by `user_id`) after
    /// `timeout`.
    pub fn new(state: Engine, user_id: &str, session_id: &str, timeout: Duration) -> Self {
        Self {
            state,
            user_id: user_id.to_owned(),
            session_id: session_id.to_owned(),
            timeout,
        }
    }
}

impl Middleware for ToolOffloadMiddleware {
    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        Box::pin(async move {
            // A timeout too far away to count is none.
            let deadline = tokio::time::Instant::now().checked_add(self.timeout);
            let mut call = call;
            // The call gets a token of its own, so it can outlive the
            // reply; until it is offloaded, the reply's cancellation (or
            // the reply dropping its stream) reaches it.
            let reply_cancel = call.ctx.cancel.clone();
            let own = CancellationToken::new();
            call.ctx.cancel = own.clone();
            let block = call.call.clone();
            let tool = next.run(call).await;
            let job = Job {
                state: self.state.clone(),
                user_id: self.user_id.clone(),
                session_id: self.session_id.clone(),
                call: block,
                cancel: own.clone(),
            };
            foreground(job, tool, deadline, reply_cancel, own.drop_guard())
        })
    }
}

/// What offloading a call needs.
#[derive(Debug, Clone)]
struct Job {
    state: Engine,
    user_id: String,
    session_id: String,
    call: ToolCallBlock,
    cancel: CancellationToken,
}

/// The call's stream as the reply sees it, until it ends or is offloaded.
struct Foreground {
    job: Job,
    tool: Option<ToolStream>,
    deadline: Option<tokio::time::Instant>,
    reply_cancel: CancellationToken,
    /// Cancels the call if the reply drops this stream before the call is
    /// handed over (an interrupt).
    guard: Option<DropGuard>,
    /// The text output so far (capped), for the background result.
    output: Output,
    finished: bool,
}

/// Streams `tool`; at `deadline`, offloads the rest (see the module
/// docs).
fn foreground(
    job: Job,
    tool: ToolStream,
    deadline: Option<tokio::time::Instant>,
    reply_cancel: CancellationToken,
    guard: DropGuard,
) -> ToolStream {
    let start = Foreground {
        job,
        tool: Some(tool),
        deadline,
        reply_cancel,
        guard: Some(guard),
        output: Output::default(),
        finished: false,
    };
    futures_util::stream::unfold(start, |mut fg| async move {
        loop {
            if fg.finished {
                return None;
            }
            let step = {
                let tool = fg.tool.as_mut()?;
                let deadline = fg.deadline;
                let timer = async move {
                    match deadline {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    chunk = tool.next() => Step::Chunk(chunk),
                    () = fg.reply_cancel.cancelled() => Step::Cancelled,
                    () = timer => Step::Timeout,
                }
            };
            match step {
                Step::Chunk(Some(chunk)) => {
                    fg.output.push(&chunk);
                    if chunk.is_last {
                        fg.finished = true;
                        disarm(&mut fg.guard);
                    }
                    return Some((chunk, fg));
                }
                Step::Chunk(None) => {
                    disarm(&mut fg.guard);
                    return None;
                }
                Step::Cancelled => {
                    // The reply stops: so does the call (its stream is
                    // dropped with this one).
                    fg.job.cancel.cancel();
                    fg.finished = true;
                    let end = ToolChunk::new(Vec::new(), ToolResultState::Interrupted);
                    return Some((end, fg));
                }
                Step::Timeout => {
                    let tool = fg.tool.take()?;
                    let output = std::mem::take(&mut fg.output);
                    let nothing_yet = output.is_empty();
                    match tasks::offload(&fg.job, tool, output).await {
                        Ok(task_id) => {
                            disarm(&mut fg.guard);
                            fg.finished = true;
                            let text = placeholder(&fg.job.call, &task_id, nothing_yet);
                            return Some((ToolChunk::text(text), fg));
                        }
                        Err((tool, output)) => {
                            // Not recorded, so not offloaded: the reply
                            // waits for the call.
                            fg.tool = Some(tool);
                            fg.output = output;
                            fg.deadline = None;
                        }
                    }
                }
            }
        }
    })
    .boxed()
}

enum Step {
    Chunk(Option<ToolChunk>),
    Cancelled,
    Timeout,
}

/// The call is handed over (or over): the reply no longer cancels it.
fn disarm(guard: &mut Option<DropGuard>) {
    if let Some(guard) = guard.take() {
        guard.disarm();
    }
}

/// The placeholder result the model reads for an offloaded call.
fn placeholder(call: &ToolCallBlock, task_id: &str, nothing_yet: bool) -> String {
    let lead = if nothing_yet { "" } else { "\n" };
    format!(
        "{lead}[The call {name} ({id}) is taking long and now runs in the background as task \
         {task_id}. Its result will arrive later as a separate message; go on without waiting \
         for it, and do not run it again.]",
        name = call.name,
        id = call.id,
    )
}

/// A call's text output, capped at [`RESULT_CAP`] bytes, and how it ended.
#[derive(Debug, Default, Clone)]
pub struct Output {
    text: String,
    cut: bool,
    error: bool,
}

impl Output {
    /// Adds a chunk's text; an error chunk marks the call failed.
    pub fn push(&mut self, chunk: &ToolChunk) {
        if chunk.state == ToolResultState::Error {
            self.error = true;
        }
        if self.cut {
            return;
        }
        let text = chunk.text_content();
        if self.text.len() + text.len() <= RESULT_CAP {
            self.text.push_str(&text);
            return;
        }
        let mut end = RESULT_CAP - self.text.len();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&text[..end]);
        self.cut = true;
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text, marked when cut.
    pub fn text(&self) -> String {
        if self.cut {
            format!("{}… [output cut at {RESULT_CAP} bytes]", self.text)
        } else {
            self.text.clone()
        }
    }
}

#[cfg(test)]
#[path = "offload_tests.rs"]
mod tests;
