//! A model's chunk stream, turned into the block events of the reply.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::{Stream, StreamExt};
use oxiscope_message::{
    AgentEvent, ContentBlock, DataBlockDeltaEvent, DataBlockEndEvent, DataBlockStartEvent,
    DataSource, FinishedReason, Id, ModelCallEndEvent, Msg, TextBlockDeltaEvent, TextBlockEndEvent,
    TextBlockStartEvent, ThinkingBlockDeltaEvent, ThinkingBlockEndEvent, ThinkingBlockStartEvent,
    ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent,
};
use oxiscope_model::{ChatResponse, ChatStream};

use super::room::Room;
use super::{StepEnd, StepItem, StepStream};

/// The block currently streaming (tool calls are tracked apart: several can
/// be open at once when a provider interleaves their fragments).
#[derive(Debug, Clone, PartialEq)]
enum Open {
    Text(Id),
    Thinking(Id),
    Data(Id),
}

/// Turns a model's chunk stream into the block events of the reply, ended
/// by one [`StepItem::End`] carrying the final chunk or the error. Open
/// blocks are always closed, so the events fit the reply whatever the
/// model did. A delta chunk that does not fit the reply's `room` ends the
/// step with [`AgentError::ReplyTooLarge`](crate::AgentError) before any of
/// its events, and the model's stream is dropped (which stops the call).
pub(crate) fn translate(stream: ChatStream, reply_id: String, room: Room) -> StepStream {
    Box::pin(Translate {
        stream: Some(stream),
        t: BlockTranslator {
            reply_id,
            open: None,
            open_calls: Vec::new(),
            room,
        },
        out: VecDeque::new(),
    })
}

/// The stream [`translate`] returns: the events of each chunk go through
/// one reused queue.
struct Translate {
    /// `None` once the step has ended.
    stream: Option<ChatStream>,
    t: BlockTranslator,
    out: Out,
}

impl Stream for Translate {
    type Item = StepItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StepItem>> {
        let this = &mut *self;
        loop {
            if let Some(item) = this.out.pop_front() {
                return Poll::Ready(Some(item));
            }
            let Some(stream) = &mut this.stream else {
                return Poll::Ready(None);
            };
            let next = ready!(stream.poll_next_unpin(cx));
            if !this.t.chunk(&mut this.out, next) {
                this.stream = None;
            }
        }
    }
}

impl BlockTranslator {
    /// Queues the events of the stream's next item; `false` once the step
    /// has ended (its [`StepItem::End`] is queued).
    fn chunk(
        &mut self,
        out: &mut Out,
        next: Option<Result<ChatResponse, oxiscope_model::ModelError>>,
    ) -> bool {
        match next {
            Some(Ok(chunk)) if chunk.is_last => {
                self.close_all(out);
                let usage = chunk
                    .usage
                    .clone()
                    .unwrap_or_else(|| oxiscope_model::ChatUsage::tokens(0, 0));
                let mut end = ModelCallEndEvent::new(
                    self.r(),
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_input_tokens,
                    usage.cache_creation_input_tokens,
                    chunk.finished_reason,
                );
                end.metadata
                    .insert("time".to_owned(), serde_json::Value::from(usage.time));
                push(out, end);
                out.push_back(StepItem::End(StepEnd::answered(chunk)));
                false
            }
            Some(Ok(chunk)) => {
                if let Err(e) = self.room.charge(&chunk.content) {
                    tracing::warn!(error = %e, "cutting off the model's reply");
                    self.close_all(out);
                    out.push_back(StepItem::End(StepEnd::failed(e)));
                    return false;
                }
                for block in chunk.content {
                    self.block(out, block);
                }
                true
            }
            Some(Err(e)) => {
                self.close_all(out);
                out.push_back(StepItem::End(StepEnd::failed(e.into())));
                false
            }
            None => {
                // A model implementation must end with a final chunk; its
                // absence is a broken stream, not a silent success.
                self.close_all(out);
                let e = oxiscope_model::ModelError::Stream {
                    message: "the model's stream ended without its final chunk".to_owned(),
                };
                out.push_back(StepItem::End(StepEnd::failed(e.into())));
                false
            }
        }
    }
}

/// The items queued for the step's stream.
type Out = VecDeque<StepItem>;

fn push(out: &mut Out, event: impl Into<AgentEvent>) {
    out.push_back(StepItem::Event(event.into()));
}

/// Translates a model's chunks into block events.
#[derive(Debug)]
struct BlockTranslator {
    reply_id: String,
    open: Option<Open>,
    open_calls: Vec<Id>,
    /// What the reply may still take.
    room: Room,
}

impl BlockTranslator {
    fn r(&self) -> String {
        self.reply_id.clone()
    }

    fn block(&mut self, out: &mut Out, block: ContentBlock) {
        let r = self.r();
        match block {
            ContentBlock::Text(t) => {
                self.switch_to(out, Open::Text(t.id.clone()));
                if !t.text.is_empty() {
                    push(out, TextBlockDeltaEvent::new(r, t.id.to_string(), t.text));
                }
            }
            ContentBlock::Thinking(t) => {
                self.switch_to(out, Open::Thinking(t.id.clone()));
                if !t.thinking.is_empty() {
                    push(
                        out,
                        ThinkingBlockDeltaEvent::new(r, t.id.to_string(), t.thinking),
                    );
                }
            }
            ContentBlock::Data(d) => {
                if self.open != Some(Open::Data(d.id.clone())) {
                    self.close_current(out);
                    let start = DataBlockStartEvent::new(
                        r.clone(),
                        d.id.to_string(),
                        d.source.media_type().to_owned(),
                        d.name.clone(),
                    );
                    push(out, start);
                    self.open = Some(Open::Data(d.id.clone()));
                }
                let (media_type, data, url) = match d.source {
                    DataSource::Base64(s) => (s.media_type, Some(s.data), None),
                    DataSource::Url(s) => (s.media_type, None, Some(s.url)),
                };
                push(
                    out,
                    DataBlockDeltaEvent::new(r, d.id.to_string(), media_type, data, url),
                );
            }
            ContentBlock::ToolCall(c) => {
                self.close_current(out);
                if !self.open_calls.contains(&c.id) {
                    let start =
                        ToolCallStartEvent::new(r.clone(), c.id.to_string(), c.name.clone());
                    push(out, start);
                    self.open_calls.push(c.id.clone());
                }
                if !c.input.is_empty() {
                    push(out, ToolCallDeltaEvent::new(r, c.id.to_string(), c.input));
                }
            }
            // A model does not produce hints or tool results.
            ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {}
        }
    }

    fn switch_to(&mut self, out: &mut Out, next: Open) {
        if self.open.as_ref() == Some(&next) {
            return;
        }
        self.close_current(out);
        let r = self.r();
        let start: AgentEvent = match &next {
            Open::Text(id) => TextBlockStartEvent::new(r, id.to_string()).into(),
            Open::Thinking(id) => ThinkingBlockStartEvent::new(r, id.to_string()).into(),
            Open::Data(_) => return,
        };
        push(out, start);
        self.open = Some(next);
    }

    fn close_current(&mut self, out: &mut Out) {
        let Some(open) = self.open.take() else {
            return;
        };
        let r = self.r();
        let end: AgentEvent = match open {
            Open::Text(id) => TextBlockEndEvent::new(r, id.into(), None).into(),
            Open::Thinking(id) => ThinkingBlockEndEvent::new(r, id.into()).into(),
            Open::Data(id) => DataBlockEndEvent::new(r, id.into()).into(),
        };
        push(out, end);
    }

    fn close_all(&mut self, out: &mut Out) {
        self.close_current(out);
        for id in std::mem::take(&mut self.open_calls) {
            push(out, ToolCallEndEvent::new(self.r(), id.to_string()));
        }
    }
}

/// Provider fields of thinking blocks (signatures) are not carried by any
/// event; they are copied from the final chunk into the reply so that the
/// next request can send them back.
pub(crate) fn keep_provider_fields(reply: &mut Msg, last: &ChatResponse) {
    for block in &last.content {
        let ContentBlock::Thinking(full) = block else {
            continue;
        };
        if full.extra.is_empty() {
            continue;
        }
        for b in reply.content.iter_mut().rev() {
            if let ContentBlock::Thinking(t) = b
                && t.id == full.id
            {
                t.extra.clone_from(&full.extra);
                break;
            }
        }
    }
}

/// Whether the final chunk's reason means the call was cut short.
pub(crate) fn was_interrupted(last: &ChatResponse) -> bool {
    last.finished_reason == FinishedReason::Interrupted
}
