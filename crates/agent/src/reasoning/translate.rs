//! A model's chunk stream, turned into the block events of the reply.

use futures_util::stream::{self, StreamExt};
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
    let translator = BlockTranslator {
        reply_id,
        open: None,
        open_calls: Vec::new(),
        room,
    };
    stream::unfold(Some((stream, translator)), |st| async move {
        let (mut stream, mut t) = st?;
        let mut out = Vec::new();
        match stream.next().await {
            Some(Ok(chunk)) if chunk.is_last => {
                t.close_all(&mut out);
                let usage = chunk
                    .usage
                    .clone()
                    .unwrap_or_else(|| oxiscope_model::ChatUsage::tokens(0, 0));
                let mut end = ModelCallEndEvent::new(
                    t.r(),
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_input_tokens,
                    usage.cache_creation_input_tokens,
                    chunk.finished_reason,
                );
                end.metadata
                    .insert("time".to_owned(), serde_json::Value::from(usage.time));
                let mut out: Vec<StepItem> = out.into_iter().map(StepItem::Event).collect();
                out.push(StepItem::Event(end.into()));
                out.push(StepItem::End(StepEnd::answered(chunk)));
                Some((out, None))
            }
            Some(Ok(chunk)) => {
                if let Err(e) = t.room.charge(&chunk.content) {
                    tracing::warn!(error = %e, "cutting off the model's reply");
                    t.close_all(&mut out);
                    let mut out = events(out);
                    out.push(StepItem::End(StepEnd::failed(e)));
                    return Some((out, None));
                }
                for block in chunk.content {
                    t.block(&mut out, block);
                }
                Some((events(out), Some((stream, t))))
            }
            Some(Err(e)) => {
                t.close_all(&mut out);
                let mut out = events(out);
                out.push(StepItem::End(StepEnd::failed(e.into())));
                Some((out, None))
            }
            None => {
                // A model implementation must end with a final chunk; its
                // absence is a broken stream, not a silent success.
                t.close_all(&mut out);
                let e = oxiscope_model::ModelError::Stream {
                    message: "the model's stream ended without its final chunk".to_owned(),
                };
                let mut out = events(out);
                out.push(StepItem::End(StepEnd::failed(e.into())));
                Some((out, None))
            }
        }
    })
    .flat_map(stream::iter)
    .boxed()
}

fn events(out: Vec<AgentEvent>) -> Vec<StepItem> {
    out.into_iter().map(StepItem::Event).collect()
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

    fn block(&mut self, out: &mut Vec<AgentEvent>, block: ContentBlock) {
        let r = self.r();
        match block {
            ContentBlock::Text(t) => {
                self.switch_to(out, Open::Text(t.id.clone()));
                if !t.text.is_empty() {
                    out.push(TextBlockDeltaEvent::new(r, t.id.to_string(), t.text).into());
                }
            }
            ContentBlock::Thinking(t) => {
                self.switch_to(out, Open::Thinking(t.id.clone()));
                if !t.thinking.is_empty() {
                    out.push(ThinkingBlockDeltaEvent::new(r, t.id.to_string(), t.thinking).into());
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
                    out.push(start.into());
                    self.open = Some(Open::Data(d.id.clone()));
                }
                let (media_type, data, url) = match d.source {
                    DataSource::Base64(s) => (s.media_type, Some(s.data), None),
                    DataSource::Url(s) => (s.media_type, None, Some(s.url)),
                };
                out.push(
                    DataBlockDeltaEvent::new(r, d.id.to_string(), media_type, data, url).into(),
                );
            }
            ContentBlock::ToolCall(c) => {
                self.close_current(out);
                if !self.open_calls.contains(&c.id) {
                    let start =
                        ToolCallStartEvent::new(r.clone(), c.id.to_string(), c.name.clone());
                    out.push(start.into());
                    self.open_calls.push(c.id.clone());
                }
                if !c.input.is_empty() {
                    out.push(ToolCallDeltaEvent::new(r, c.id.to_string(), c.input).into());
                }
            }
            // A model does not produce hints or tool results.
            ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {}
        }
    }

    fn switch_to(&mut self, out: &mut Vec<AgentEvent>, next: Open) {
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
        out.push(start);
        self.open = Some(next);
    }

    fn close_current(&mut self, out: &mut Vec<AgentEvent>) {
        let r = self.r();
        let end: AgentEvent = match self.open.take() {
            None => return,
            Some(Open::Text(id)) => TextBlockEndEvent::new(r, id.into(), None).into(),
            Some(Open::Thinking(id)) => ThinkingBlockEndEvent::new(r, id.into()).into(),
            Some(Open::Data(id)) => DataBlockEndEvent::new(r, id.into()).into(),
        };
        out.push(end);
    }

    fn close_all(&mut self, out: &mut Vec<AgentEvent>) {
        self.close_current(out);
        for id in std::mem::take(&mut self.open_calls) {
            out.push(ToolCallEndEvent::new(self.r(), id.to_string()).into());
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
