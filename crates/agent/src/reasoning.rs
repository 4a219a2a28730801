//! One model call, turned into block events for the reply.

use std::sync::{Arc, Mutex};

use futures_util::stream::{self, StreamExt};
use oxiscope_message::{
    AgentEvent, ContentBlock, DataBlockDeltaEvent, DataBlockEndEvent, DataBlockStartEvent,
    DataSource, FinishedReason, ModelCallEndEvent, Msg, TextBlockDeltaEvent, TextBlockEndEvent,
    TextBlockStartEvent, ThinkingBlockDeltaEvent, ThinkingBlockEndEvent, ThinkingBlockStartEvent,
    ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent,
};
use oxiscope_model::{ChatResponse, ChatStream};

use crate::error::AgentError;
use crate::middleware::EventStream;

/// The block currently streaming (tool calls are tracked apart: several can
/// be open at once when a provider interleaves their fragments).
#[derive(Debug, Clone, PartialEq)]
enum Open {
    Text(String),
    Thinking(String),
    Data(String),
}

/// What a reasoning step's stream leaves behind once it ended: the model's
/// final chunk, or its error.
#[derive(Debug, Default)]
pub(crate) struct StepOutcome {
    pub(crate) last: Option<ChatResponse>,
    pub(crate) error: Option<AgentError>,
}

/// Shared between a step's event stream and the loop that consumes it.
pub(crate) type Slot = Arc<Mutex<StepOutcome>>;

/// Records into the slot (a poisoned lock still records: the data is plain).
pub(crate) fn record(slot: &Slot, f: impl FnOnce(&mut StepOutcome)) {
    let mut guard = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut guard);
}

/// Turns a model's chunk stream into the block events of the reply; the
/// final chunk or the error lands in `slot`. Open blocks are always closed,
/// so the events fit the reply whatever the model did.
pub(crate) fn translate(stream: ChatStream, reply_id: String, slot: Slot) -> EventStream {
    let translator = BlockTranslator {
        reply_id,
        open: None,
        open_calls: Vec::new(),
    };
    stream::unfold(Some((stream, translator, slot)), |st| async move {
        let (mut stream, mut t, slot) = st?;
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
                out.push(end.into());
                record(&slot, |o| o.last = Some(chunk));
                Some((out, None))
            }
            Some(Ok(chunk)) => {
                for block in chunk.content {
                    t.block(&mut out, block);
                }
                Some((out, Some((stream, t, slot))))
            }
            Some(Err(e)) => {
                t.close_all(&mut out);
                record(&slot, |o| o.error = Some(e.into()));
                Some((out, None))
            }
            None => {
                // A model implementation must end with a final chunk; its
                // absence is a broken stream, not a silent success.
                t.close_all(&mut out);
                let e = oxiscope_model::ModelError::Stream {
                    message: "the model's stream ended without its final chunk".to_owned(),
                };
                record(&slot, |o| o.error = Some(e.into()));
                Some((out, None))
            }
        }
    })
    .flat_map(stream::iter)
    .boxed()
}

/// Translates a model's chunks into block events.
#[derive(Debug)]
struct BlockTranslator {
    reply_id: String,
    open: Option<Open>,
    open_calls: Vec<String>,
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
                    out.push(TextBlockDeltaEvent::new(r, t.id, t.text).into());
                }
            }
            ContentBlock::Thinking(t) => {
                self.switch_to(out, Open::Thinking(t.id.clone()));
                if !t.thinking.is_empty() {
                    out.push(ThinkingBlockDeltaEvent::new(r, t.id, t.thinking).into());
                }
            }
            ContentBlock::Data(d) => {
                if self.open != Some(Open::Data(d.id.clone())) {
                    self.close_current(out);
                    let start = DataBlockStartEvent::new(
                        r.clone(),
                        d.id.clone(),
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
                out.push(DataBlockDeltaEvent::new(r, d.id, media_type, data, url).into());
            }
            ContentBlock::ToolCall(c) => {
                self.close_current(out);
                if !self.open_calls.contains(&c.id) {
                    let start = ToolCallStartEvent::new(r.clone(), c.id.clone(), c.name.clone());
                    out.push(start.into());
                    self.open_calls.push(c.id.clone());
                }
                if !c.input.is_empty() {
                    out.push(ToolCallDeltaEvent::new(r, c.id, c.input).into());
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
            Open::Text(id) => TextBlockStartEvent::new(r, id.clone()).into(),
            Open::Thinking(id) => ThinkingBlockStartEvent::new(r, id.clone()).into(),
            Open::Data(_) => return,
        };
        out.push(start);
        self.open = Some(next);
    }

    fn close_current(&mut self, out: &mut Vec<AgentEvent>) {
        let r = self.r();
        let end: AgentEvent = match self.open.take() {
            None => return,
            Some(Open::Text(id)) => TextBlockEndEvent::new(r, id, None).into(),
            Some(Open::Thinking(id)) => ThinkingBlockEndEvent::new(r, id).into(),
            Some(Open::Data(id)) => DataBlockEndEvent::new(r, id).into(),
        };
        out.push(end);
    }

    fn close_all(&mut self, out: &mut Vec<AgentEvent>) {
        self.close_current(out);
        for id in std::mem::take(&mut self.open_calls) {
            out.push(ToolCallEndEvent::new(self.r(), id).into());
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
