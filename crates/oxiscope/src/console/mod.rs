//! [`launch_console`]: the console's input loop and renderer over any
//! agent or pipeline a program builds — a `user>` prompt, each reply
//! rendered as it streams, tool calls that need a confirmation asked about
//! one by one, `exit`, `quit` or end of input to leave.
//!
//! [`Console`] is the same loop over any input and output (a test's
//! scripted lines, a socket): `launch_console` is a `Console` over stdin and
//! stdout that also interrupts a running reply on Ctrl+C.
//!
//! ```
//! use std::sync::Arc;
//! use oxiscope::console::Console;
//! use oxiscope::prelude::*;
//! # use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hello!")]));
//! let agent = Agent::builder("Friday", model).build()?;
//! // In a program: `oxiscope::console::launch_console(&agent).await?`.
//! let input: &[u8] = b"Hi\nexit\n";
//! let mut console = Console::new(input, Vec::new(), RenderOptions::plain());
//! let summary = console.run(&agent).await?;
//! assert_eq!(summary.replies, 1);
//! let screen = String::from_utf8(console.into_output())?;
//! assert!(screen.starts_with("user> ") && screen.contains("Hello!"), "{screen}");
//! # Ok(())
//! # }
//! ```

mod ask;

use std::io::{self, Write};

use futures_util::StreamExt as _;
use oxiscope_agent::ReplyInput;
use oxiscope_agent::pipeline::{CancellationToken, PipelineProtocol};
use oxiscope_message::{
    AgentEvent, Msg, MsgError, ReplyEnding, ReplyFinishedReason, RequireUserConfirmEvent,
    UserInterruptEvent,
};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

use crate::render::{ConsoleRenderer, RenderOptions};

pub use ask::Answer;

/// Why the console stopped before its input ended.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConsoleError {
    /// Reading the input or writing the output failed.
    #[error("console input or output failed: {0}")]
    Io(#[from] io::Error),
    /// A line could not become a user message.
    #[error("the input is not a valid message: {0}")]
    Message(#[from] MsgError),
}

/// What a console session did, once its input ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsoleSummary {
    /// Messages sent (each started a reply of the agent or pipeline).
    pub replies: usize,
    /// Replies that ended with an error.
    pub failed: usize,
    /// Replies that were interrupted (Ctrl+C, or no answer to a question).
    pub interrupted: usize,
    /// Confirmation questions answered.
    pub confirmations: usize,
}

/// Runs the console over stdin and stdout until `exit`, `quit` or end of
/// input, with colours when stdout is a terminal (and `NO_COLOR` is not
/// set). Ctrl+C interrupts the running reply; at the prompt it only says
/// how to leave. Works for an [`Agent`](oxiscope_agent::Agent), a
/// [`GoalPipeline`](oxiscope_agent::pipeline::GoalPipeline), a remote A2A
/// agent: anything that is a [`PipelineProtocol`].
///
/// # Errors
/// [`ConsoleError`] when stdin or stdout fails.
pub async fn launch_console(target: &dyn PipelineProtocol) -> Result<ConsoleSummary, ConsoleError> {
    use std::io::IsTerminal as _;
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut console = Console::new(
        input,
        io::stdout(),
        RenderOptions::default().with_color(color),
    )
    .with_ctrl_c(true);
    console.run(target).await
}

/// The console's loop over any line input and any output.
#[derive(Debug)]
pub struct Console<R, W: Write> {
    input: R,
    renderer: ConsoleRenderer<W>,
    user: String,
    ctrl_c: bool,
    summary: ConsoleSummary,
}

impl<R: AsyncBufRead + Unpin, W: Write> Console<R, W> {
    /// A console reading lines from `input` and rendering to `output`.
    pub fn new(input: R, output: W, options: RenderOptions) -> Self {
        Self {
            input,
            renderer: ConsoleRenderer::new(output, options),
            user: "user".to_owned(),
            ctrl_c: false,
            summary: ConsoleSummary::default(),
        }
    }

    /// The name on the user's messages and the prompt (default `user`).
    #[must_use]
    pub fn with_user(mut self, name: impl Into<String>) -> Self {
        self.user = name.into();
        self
    }

    /// Whether Ctrl+C (SIGINT) interrupts a running reply (default off:
    /// listening takes the signal from the whole process).
    #[must_use]
    pub fn with_ctrl_c(mut self, on: bool) -> Self {
        self.ctrl_c = on;
        self
    }

    /// The renderer, with the messages it rebuilt.
    pub fn renderer(&self) -> &ConsoleRenderer<W> {
        &self.renderer
    }

    /// Gives the output back.
    pub fn into_output(self) -> W {
        self.renderer.into_inner()
    }

    /// Reads messages until `exit`, `quit` or the end of the input; each
    /// one is a reply of `target`, rendered as it streams, its questions
    /// asked on the same input.
    ///
    /// # Errors
    /// [`ConsoleError`] when the input or output fails.
    pub async fn run(
        &mut self,
        target: &dyn PipelineProtocol,
    ) -> Result<ConsoleSummary, ConsoleError> {
        loop {
            let prompt = format!("{}> ", self.user);
            let Some(line) = self.read_line(&prompt).await? else {
                break;
            };
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if matches!(text, "exit" | "quit") {
                break;
            }
            self.renderer.clear();
            self.summary.replies += 1;
            let input = Msg::user(self.user.clone(), text)?;
            self.reply(target, input.into()).await?;
        }
        Ok(self.summary)
    }

    /// Streams replies to `input` until one ends, asking what the agent
    /// asks.
    async fn reply(
        &mut self,
        target: &dyn PipelineProtocol,
        mut input: ReplyInput,
    ) -> Result<(), ConsoleError> {
        loop {
            let last = self.stream(target, input).await?;
            input = match last.and_then(AgentEvent::into_ending) {
                Some(ReplyEnding::Confirm(request)) => self.confirm(&request).await?,
                Some(ReplyEnding::External(request)) => {
                    self.say(
                        "The reply waits for tools run outside the agent; it is interrupted.",
                    )?;
                    UserInterruptEvent::new(request.reply_id).into()
                }
                Some(ReplyEnding::Finished(end)) => {
                    match end.finished_reason {
                        ReplyFinishedReason::Error => self.summary.failed += 1,
                        ReplyFinishedReason::Interrupted => self.summary.interrupted += 1,
                        _ => {}
                    }
                    return Ok(());
                }
                None => return Ok(()),
            };
        }
    }

    /// Renders one reply stream; returns its last event. With Ctrl+C on, a
    /// first press interrupts the reply (which still ends with its reply
    /// end), a second abandons the stream.
    async fn stream(
        &mut self,
        target: &dyn PipelineProtocol,
        input: ReplyInput,
    ) -> Result<Option<AgentEvent>, ConsoleError> {
        let cancel = CancellationToken::new();
        let mut events = target.reply_stream(input, cancel.clone());
        let mut last = None;
        let mut presses = 0;
        loop {
            let event = if self.ctrl_c && presses < 2 {
                tokio::select! {
                    event = events.next() => event,
                    pressed = tokio::signal::ctrl_c() => {
                        pressed?;
                        presses += 1;
                        if presses == 1 {
                            cancel.cancel();
                            continue;
                        }
                        break;
                    }
                }
            } else {
                events.next().await
            };
            let Some(event) = event else { break };
            self.renderer.render(&event)?;
            last = Some(event);
        }
        self.renderer.writer().flush()?;
        Ok(last)
    }

    /// Asks about each call of `request`; no answer (end of input)
    /// interrupts the reply.
    async fn confirm(
        &mut self,
        request: &RequireUserConfirmEvent,
    ) -> Result<ReplyInput, ConsoleError> {
        let mut answers = Vec::new();
        for call in &request.tool_calls {
            let line = self.read_line(&ask::question(call)).await?;
            let Some(answer) = line.as_deref().map(Answer::parse) else {
                self.say("(no answer: the reply is interrupted)")?;
                return Ok(UserInterruptEvent::new(request.reply_id.clone()).into());
            };
            self.summary.confirmations += 1;
            answers.push(answer.result(call));
        }
        Ok(oxiscope_message::UserConfirmResultEvent::new(request.reply_id.clone(), answers).into())
    }

    /// Writes `prompt` and reads one line (`None` at the end of the
    /// input). With Ctrl+C on, a press at the prompt says how to leave.
    async fn read_line(&mut self, prompt: &str) -> Result<Option<String>, ConsoleError> {
        loop {
            let out = self.renderer.writer();
            write!(out, "{prompt}")?;
            out.flush()?;
            let mut line = String::new();
            let read = if self.ctrl_c {
                tokio::select! {
                    read = self.input.read_line(&mut line) => read?,
                    pressed = tokio::signal::ctrl_c() => {
                        pressed?;
                        self.say("\n(type exit or press Ctrl+D to leave)")?;
                        continue;
                    }
                }
            } else {
                self.input.read_line(&mut line).await?
            };
            if read == 0 {
                // The end of the input ends the prompt's line too.
                writeln!(self.renderer.writer())?;
                return Ok(None);
            }
            return Ok(Some(line));
        }
    }

    /// One line of the console's own.
    fn say(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.renderer.writer(), "{text}")
    }
}

#[cfg(test)]
#[path = "console_tests.rs"]
mod tests;
