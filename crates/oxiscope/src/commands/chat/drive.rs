//! Running one reply stream to its end, with Ctrl+C interrupting it.

use futures_util::StreamExt as _;
use oxiscope_agent::ReplyInput;
use oxiscope_agent::pipeline::{CancellationToken, PipelineProtocol};
use oxiscope_message::{AgentEvent, ReplyEnding};

/// How a reply stream ended: its last event, when that ends a reply;
/// `None` when the stream was empty (an interrupt of an idle agent) or
/// abandoned.
pub(crate) type Ending = Option<ReplyEnding>;

/// Streams the reply of `target` (an agent or a pipeline) to `input`
/// through `on_event`. The first Ctrl+C interrupts the reply (the stream
/// still ends with its reply end); a second one abandons the stream, which
/// interrupts it as well.
///
/// # Cancel safety
/// Dropping the future drops the stream, which interrupts the reply.
pub(crate) async fn drive(
    target: &dyn PipelineProtocol,
    input: ReplyInput,
    mut on_event: impl FnMut(&AgentEvent) -> std::io::Result<()>,
) -> anyhow::Result<Ending> {
    let cancel = CancellationToken::new();
    let mut stream = target.reply_stream(input, cancel.clone());
    let mut interrupts = Interrupts::new()?;
    let mut pressed = 0;
    let mut last = None;
    loop {
        tokio::select! {
            event = stream.next() => {
                let Some(event) = event else { break };
                on_event(&event)?;
                last = Some(event);
            }
            () = interrupts.next(), if pressed < 2 => {
                pressed += 1;
                if pressed == 1 {
                    cancel.cancel();
                } else {
                    break;
                }
            }
        }
    }
    Ok(last.and_then(AgentEvent::into_ending))
}

/// Ctrl+C presses (SIGINT) while a reply streams.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    #[cfg(unix)]
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            signal: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Self> {
        Ok(Self {})
    }

    #[cfg(unix)]
    async fn next(&mut self) {
        if self.signal.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }

    #[cfg(not(unix))]
    async fn next(&mut self) {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
