//! The console renderer: events in, text out, the reply message rebuilt.

use std::collections::HashMap;
use std::io::{self, Write};

use oxiscope_message::{AgentEvent, ContentBlock, Msg, ReplyFinishedReason, Role};
use serde_json::Value;

use super::blocks;
use super::style::{Painter, Tone};
use super::{RenderOptions, Verbosity};

/// What kind of block is streaming to the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Streaming {
    Text,
    Thinking,
}

/// The block currently streaming: its reply, its id and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Open {
    reply_id: String,
    block_id: String,
    kind: Streaming,
}

/// Renders an agent's event stream to a terminal (or any writer), and
/// rebuilds each reply message from the events it sees.
///
/// Reply text and thinking stream live (thinking dimmed); tool calls and
/// results print as whole blocks on their end events, so concurrent tools
/// never interleave; long results collapse after
/// [`RenderOptions::max_tool_lines`] lines; hints (notes for the model,
/// such as the runtime state) show in a bordered panel at
/// [`Verbosity::Debug`];
/// binary data shows as a placeholder such as `[data: image/png, ~34KB]`;
/// a token-usage line follows each model call. Events are attributed by
/// reply id, so the replies of several agents (a pipeline) can share one
/// renderer. The renderer only displays confirmation and external-execution
/// notices; answering them is the caller's job.
///
/// ```
/// use oxiscope::render::{ConsoleRenderer, RenderOptions};
/// use oxiscope_message::AgentEvent;
///
/// let events: Vec<AgentEvent> = serde_json::from_str(r#"[
///   {"type": "REPLY_START", "session_id": "s", "reply_id": "r1", "name": "Friday"},
///   {"type": "TEXT_BLOCK_START", "reply_id": "r1", "block_id": "b1"},
///   {"type": "TEXT_BLOCK_DELTA", "reply_id": "r1", "block_id": "b1", "delta": "Hi!"},
///   {"type": "TEXT_BLOCK_END", "reply_id": "r1", "block_id": "b1"},
///   {"type": "REPLY_END", "session_id": "s", "reply_id": "r1"}
/// ]"#)?;
/// let mut renderer = ConsoleRenderer::new(Vec::new(), RenderOptions::plain());
/// for event in &events {
///     renderer.render(event)?;
/// }
/// assert_eq!(renderer.last_msg().map(|m| m.text("")), Some("Hi!".to_owned()));
/// assert_eq!(String::from_utf8(renderer.into_inner())?, "Friday: Hi!\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ConsoleRenderer<W: Write> {
    out: W,
    options: RenderOptions,
    painter: Painter,
    replies: HashMap<String, Msg>,
    last_reply: Option<String>,
    open: Option<Open>,
    at_line_start: bool,
}

impl<W: Write> ConsoleRenderer<W> {
    /// A renderer writing to `out`.
    pub fn new(out: W, options: RenderOptions) -> Self {
        Self {
            out,
            painter: Painter {
                color: options.color,
            },
            options,
            replies: HashMap::new(),
            last_reply: None,
            open: None,
            at_line_start: true,
        }
    }

    /// The options in use.
    #[must_use]
    pub fn options(&self) -> &RenderOptions {
        &self.options
    }

    /// The message of the most recent reply, rebuilt from its events.
    #[must_use]
    pub fn last_msg(&self) -> Option<&Msg> {
        self.last_reply.as_ref().and_then(|id| self.replies.get(id))
    }

    /// The message of reply `reply_id`, rebuilt from its events.
    #[must_use]
    pub fn msg(&self, reply_id: &str) -> Option<&Msg> {
        self.replies.get(reply_id)
    }

    /// Continues a reply that began elsewhere (a saved session parked on a
    /// confirmation): its later events apply to `msg`, whose id is the
    /// reply id. A resumed reply streams no `REPLY_START`.
    pub fn resume(&mut self, msg: Msg) {
        self.last_reply = Some(msg.id.to_string());
        self.replies.insert(msg.id.to_string(), msg);
    }

    /// Forgets the rebuilt messages (they grow with every reply).
    pub fn clear(&mut self) {
        self.replies.clear();
        self.last_reply = None;
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut W {
        &mut self.out
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Renders one event given as JSON; an event type this version does not
    /// know is skipped (one line at [`Verbosity::Debug`]).
    ///
    /// # Errors
    /// Only the writer's errors.
    pub fn render_value(&mut self, value: &Value) -> io::Result<()> {
        match serde_json::from_value::<AgentEvent>(value.clone()) {
            Ok(event) => self.render(&event),
            Err(error) => {
                if self.options.verbosity >= Verbosity::Debug {
                    let kind = value.get("type").and_then(Value::as_str).unwrap_or("?");
                    self.line_break()?;
                    let text = format!("[skipped event {kind}: {error}]");
                    let line = format!("{}\n", self.painter.paint(Tone::Dim, &text));
                    self.write(&line)?;
                }
                Ok(())
            }
        }
    }

    /// Renders one event and applies it to its reply's message.
    ///
    /// # Errors
    /// Only the writer's errors; an event that does not fit the rebuilt
    /// message is reported in [`Verbosity::Debug`] and otherwise ignored.
    pub fn render(&mut self, event: &AgentEvent) -> io::Result<()> {
        self.apply(event)?;
        let v = self.options.verbosity;
        let p = self.painter;
        match event {
            AgentEvent::ReplyStart(e) if v >= Verbosity::Debug => {
                let text = format!("[reply start: {} {}]", e.name, e.reply_id);
                self.notice(Tone::Dim, &text)?;
            }
            AgentEvent::ReplyEnd(e) => {
                self.close_stream()?;
                match e.finished_reason {
                    ReplyFinishedReason::Error => {
                        let message = e.error.as_ref().map_or("the reply failed", |e| &e.message);
                        self.notice(Tone::Red, &format!("error: {message}"))?;
                    }
                    ReplyFinishedReason::Interrupted => self.notice(Tone::Dim, "[interrupted]")?,
                    ReplyFinishedReason::ExceedMaxIters if v >= Verbosity::Default => {
                        self.notice(Tone::Yellow, "[stopped: too many reasoning-acting rounds]")?;
                    }
                    ReplyFinishedReason::ExceedMaxIters | ReplyFinishedReason::Completed => {}
                }
                if v >= Verbosity::Debug {
                    let reason = serde_json::to_value(e.finished_reason)
                        .ok()
                        .and_then(|r| r.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    self.notice(Tone::Dim, &format!("[reply end: {reason}]"))?;
                }
            }
            AgentEvent::ModelCallStart(e) if v >= Verbosity::Debug => {
                self.close_stream()?;
                self.notice(Tone::Dim, &format!("[model call: {}]", e.model_name))?;
            }
            AgentEvent::ModelCallEnd(e) if v >= Verbosity::Default => {
                self.close_stream()?;
                let line = blocks::usage_line(p, e, v >= Verbosity::Debug);
                self.write(&line)?;
            }
            AgentEvent::TextBlockDelta(e) => {
                self.stream(&e.reply_id, &e.block_id, Streaming::Text, &e.delta)?;
            }
            AgentEvent::ThinkingBlockDelta(e) if v >= Verbosity::Default => {
                self.stream(&e.reply_id, &e.block_id, Streaming::Thinking, &e.delta)?;
            }
            AgentEvent::TextBlockEnd(e) => self.end_stream(&e.reply_id, &e.block_id)?,
            AgentEvent::ThinkingBlockEnd(e) => self.end_stream(&e.reply_id, &e.block_id)?,
            AgentEvent::DataBlockEnd(e) => {
                let text = self.find(&e.reply_id, |b| match b {
                    ContentBlock::Data(d) if d.id == e.block_id => {
                        Some(blocks::data_placeholder(d))
                    }
                    _ => None,
                });
                if let Some(text) = text {
                    self.block(&format!("{text}\n"))?;
                }
            }
            // Hints (the runtime state, reminders) are written for the model.
            AgentEvent::HintBlock(e) if v >= Verbosity::Debug => {
                self.block(&blocks::hint_panel(p, e.source.as_deref(), &e.hint))?;
            }
            AgentEvent::ToolCallEnd(e) if v >= Verbosity::Default => {
                let text = self.find(&e.reply_id, |b| match b {
                    ContentBlock::ToolCall(c) if c.id == e.tool_call_id => {
                        Some(blocks::call_block(p, c))
                    }
                    _ => None,
                });
                if let Some(text) = text {
                    self.block(&text)?;
                }
            }
            AgentEvent::ToolResultEnd(e) if v >= Verbosity::Default => {
                let max = self.options.max_tool_lines;
                let meta = v >= Verbosity::Debug;
                let text = self.find(&e.reply_id, |b| match b {
                    ContentBlock::ToolResult(r) if r.id == e.tool_call_id => {
                        Some(blocks::result_block(p, r, max, meta))
                    }
                    _ => None,
                });
                if let Some(text) = text {
                    self.block(&text)?;
                }
            }
            AgentEvent::RequireUserConfirm(e) if v >= Verbosity::Default => {
                self.block(&blocks::confirm_notice(p, &e.tool_calls))?;
            }
            AgentEvent::RequireExternalExecution(e) if v >= Verbosity::Default => {
                self.block(&blocks::external_notice(p, &e.tool_calls))?;
            }
            other if v >= Verbosity::Debug && !is_rendered(other) => {
                let text = format!("[{}]", other.event_type().as_str());
                self.notice(Tone::Dim, &text)?;
            }
            _ => {}
        }
        self.out.flush()
    }

    /// Applies the event to its reply's message, creating the message on
    /// the reply's first event.
    fn apply(&mut self, event: &AgentEvent) -> io::Result<()> {
        let Some(reply_id) = event.reply_id() else {
            return Ok(());
        };
        if oxiscope_message::is_input_event(event.event_type())
            && !self.replies.contains_key(reply_id)
        {
            return Ok(());
        }
        let msg = self.replies.entry(reply_id.to_owned()).or_insert_with(|| {
            let (name, role) = match event {
                AgentEvent::ReplyStart(e) => (e.name.clone(), e.role),
                _ => ("assistant".to_owned(), Role::Assistant),
            };
            let mut msg = Msg::reply(name, reply_id);
            msg.role = role;
            msg
        });
        let result = msg.append_event(event);
        self.last_reply = Some(reply_id.to_owned());
        if let Err(error) = result
            && self.options.verbosity >= Verbosity::Debug
        {
            self.line_break()?;
            let text = format!("[event not applied: {error}]");
            let line = format!("{}\n", self.painter.paint(Tone::Dim, &text));
            self.write(&line)?;
        }
        Ok(())
    }

    /// The first block of reply `reply_id` for which `f` gives a value,
    /// searching from the end.
    fn find<T>(&self, reply_id: &str, f: impl Fn(&ContentBlock) -> Option<T>) -> Option<T> {
        self.replies
            .get(reply_id)
            .and_then(|m| m.content.iter().rev().find_map(f))
    }

    /// Streams a delta, opening the block's line first when it is new.
    fn stream(
        &mut self,
        reply_id: &str,
        block_id: &str,
        kind: Streaming,
        delta: &str,
    ) -> io::Result<()> {
        let same = self
            .open
            .as_ref()
            .is_some_and(|o| o.reply_id == reply_id && o.block_id == block_id);
        if !same {
            self.close_stream()?;
            let name = self
                .replies
                .get(reply_id)
                .map_or("assistant", |m| m.name.as_str());
            let head = match kind {
                Streaming::Text => self.painter.paint(Tone::Bold, &format!("{name}: ")),
                Streaming::Thinking => self
                    .painter
                    .paint(Tone::Dim, &format!("{name} (thinking): ")),
            };
            self.write(&head)?;
            self.open = Some(Open {
                reply_id: reply_id.to_owned(),
                block_id: block_id.to_owned(),
                kind,
            });
        }
        if delta.is_empty() {
            return Ok(());
        }
        let text = match kind {
            Streaming::Text => delta.to_owned(),
            Streaming::Thinking => format!(
                "{}{delta}{}",
                self.painter.open(Tone::Dim),
                self.painter.close()
            ),
        };
        self.write(&text)
    }

    /// Closes the streaming block when it is this one.
    fn end_stream(&mut self, reply_id: &str, block_id: &str) -> io::Result<()> {
        if self
            .open
            .as_ref()
            .is_some_and(|o| o.reply_id == reply_id && o.block_id == block_id)
        {
            self.close_stream()?;
        }
        Ok(())
    }

    /// Ends the streaming block's line.
    fn close_stream(&mut self) -> io::Result<()> {
        self.open = None;
        self.line_break()
    }

    /// Starts a new line unless at the start of one.
    fn line_break(&mut self) -> io::Result<()> {
        if !self.at_line_start {
            self.write("\n")?;
        }
        Ok(())
    }

    /// Prints a whole block on lines of its own.
    fn block(&mut self, text: &str) -> io::Result<()> {
        self.close_stream()?;
        self.write(text)
    }

    /// Prints a one-line notice in a tone.
    fn notice(&mut self, tone: Tone, text: &str) -> io::Result<()> {
        self.close_stream()?;
        let line = format!("{}\n", self.painter.paint(tone, text));
        self.write(&line)
    }

    fn write(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.at_line_start = text.ends_with('\n');
        Ok(())
    }
}

/// Whether some verbosity level renders the event in its own way (the
/// others get a one-line mention in debug).
fn is_rendered(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::ReplyStart(_)
            | AgentEvent::ReplyEnd(_)
            | AgentEvent::ModelCallStart(_)
            | AgentEvent::ModelCallEnd(_)
            | AgentEvent::TextBlockStart(_)
            | AgentEvent::TextBlockDelta(_)
            | AgentEvent::TextBlockEnd(_)
            | AgentEvent::ThinkingBlockStart(_)
            | AgentEvent::ThinkingBlockDelta(_)
            | AgentEvent::ThinkingBlockEnd(_)
            | AgentEvent::DataBlockStart(_)
            | AgentEvent::DataBlockDelta(_)
            | AgentEvent::DataBlockEnd(_)
            | AgentEvent::HintBlock(_)
            | AgentEvent::ToolCallStart(_)
            | AgentEvent::ToolCallDelta(_)
            | AgentEvent::ToolCallEnd(_)
            | AgentEvent::ToolResultStart(_)
            | AgentEvent::ToolResultTextDelta(_)
            | AgentEvent::ToolResultDataDelta(_)
            | AgentEvent::ToolResultEnd(_)
            | AgentEvent::RequireUserConfirm(_)
            | AgentEvent::RequireExternalExecution(_)
    )
}
