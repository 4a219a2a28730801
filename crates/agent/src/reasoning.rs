//! One model call, turned into block events on the reply.

use futures_util::StreamExt;
use oxiscope_message::{
    AgentEvent, ContentBlock, DataBlockDeltaEvent, DataBlockEndEvent, DataBlockStartEvent,
    DataSource, FinishedReason, ModelCallEndEvent, Msg, TextBlockDeltaEvent, TextBlockEndEvent,
    TextBlockStartEvent, ThinkingBlockDeltaEvent, ThinkingBlockEndEvent, ThinkingBlockStartEvent,
    ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent,
};
use oxiscope_model::{ChatResponse, ChatStream};

use crate::emit::Emitter;
use crate::error::AgentError;

/// The block currently streaming (tool calls are tracked apart: several can
/// be open at once when a provider interleaves their fragments).
#[derive(Debug, Clone, PartialEq)]
enum Open {
    Text(String),
    Thinking(String),
    Data(String),
}

/// Translates a model's chunk stream into block events on `reply`.
#[derive(Debug)]
pub(crate) struct BlockTranslator<'a> {
    reply_id: &'a str,
    open: Option<Open>,
    open_calls: Vec<String>,
}

impl<'a> BlockTranslator<'a> {
    pub(crate) fn new(reply_id: &'a str) -> Self {
        Self {
            reply_id,
            open: None,
            open_calls: Vec::new(),
        }
    }

    fn r(&self) -> String {
        self.reply_id.to_owned()
    }

    /// Streams every chunk of `stream` into events; returns the final chunk.
    ///
    /// # Errors
    /// The model's error item, after the open blocks were closed so the
    /// reply stays consistent.
    pub(crate) async fn run(
        mut self,
        mut stream: ChatStream,
        reply: &mut Msg,
        emitter: &mut Emitter,
    ) -> Result<ChatResponse, AgentError> {
        while let Some(item) = stream.next().await {
            match item {
                Ok(chunk) if chunk.is_last => {
                    self.close_all(reply, emitter).await?;
                    keep_provider_fields(reply, &chunk);
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
                    emitter.emit(reply, end.into()).await?;
                    return Ok(chunk);
                }
                Ok(chunk) => {
                    for block in chunk.content {
                        self.block(reply, emitter, block).await?;
                    }
                }
                Err(e) => {
                    self.close_all(reply, emitter).await?;
                    return Err(e.into());
                }
            }
        }
        // A model implementation must end with a final chunk; treat its
        // absence as a broken stream rather than a silent success.
        self.close_all(reply, emitter).await?;
        Err(oxiscope_model::ModelError::Stream {
            message: "the model's stream ended without its final chunk".to_owned(),
        }
        .into())
    }

    async fn block(
        &mut self,
        reply: &mut Msg,
        emitter: &mut Emitter,
        block: ContentBlock,
    ) -> Result<(), AgentError> {
        let r = self.r();
        match block {
            ContentBlock::Text(t) => {
                self.switch_to(reply, emitter, Open::Text(t.id.clone()))
                    .await?;
                if !t.text.is_empty() {
                    emitter
                        .emit(reply, TextBlockDeltaEvent::new(r, t.id, t.text).into())
                        .await?;
                }
            }
            ContentBlock::Thinking(t) => {
                self.switch_to(reply, emitter, Open::Thinking(t.id.clone()))
                    .await?;
                if !t.thinking.is_empty() {
                    let e = ThinkingBlockDeltaEvent::new(r, t.id, t.thinking);
                    emitter.emit(reply, e.into()).await?;
                }
            }
            ContentBlock::Data(d) => {
                if self.open != Some(Open::Data(d.id.clone())) {
                    self.close_current(reply, emitter).await?;
                    let start = DataBlockStartEvent::new(
                        r.clone(),
                        d.id.clone(),
                        d.source.media_type().to_owned(),
                        d.name.clone(),
                    );
                    emitter.emit(reply, start.into()).await?;
                    self.open = Some(Open::Data(d.id.clone()));
                }
                let (media_type, data, url) = match d.source {
                    DataSource::Base64(s) => (s.media_type, Some(s.data), None),
                    DataSource::Url(s) => (s.media_type, None, Some(s.url)),
                };
                let e = DataBlockDeltaEvent::new(r, d.id, media_type, data, url);
                emitter.emit(reply, e.into()).await?;
            }
            ContentBlock::ToolCall(c) => {
                self.close_current(reply, emitter).await?;
                if !self.open_calls.contains(&c.id) {
                    let start = ToolCallStartEvent::new(r.clone(), c.id.clone(), c.name.clone());
                    emitter.emit(reply, start.into()).await?;
                    self.open_calls.push(c.id.clone());
                }
                if !c.input.is_empty() {
                    emitter
                        .emit(reply, ToolCallDeltaEvent::new(r, c.id, c.input).into())
                        .await?;
                }
            }
            // A model does not produce hints or tool results.
            ContentBlock::Hint(_) | ContentBlock::ToolResult(_) => {}
        }
        Ok(())
    }

    async fn switch_to(
        &mut self,
        reply: &mut Msg,
        emitter: &mut Emitter,
        next: Open,
    ) -> Result<(), AgentError> {
        if self.open.as_ref() == Some(&next) {
            return Ok(());
        }
        self.close_current(reply, emitter).await?;
        let r = self.r();
        let start: AgentEvent = match &next {
            Open::Text(id) => TextBlockStartEvent::new(r, id.clone()).into(),
            Open::Thinking(id) => ThinkingBlockStartEvent::new(r, id.clone()).into(),
            Open::Data(_) => return Ok(()),
        };
        emitter.emit(reply, start).await?;
        self.open = Some(next);
        Ok(())
    }

    async fn close_current(
        &mut self,
        reply: &mut Msg,
        emitter: &mut Emitter,
    ) -> Result<(), AgentError> {
        let r = self.r();
        let end: AgentEvent = match self.open.take() {
            None => return Ok(()),
            Some(Open::Text(id)) => TextBlockEndEvent::new(r, id, None).into(),
            Some(Open::Thinking(id)) => ThinkingBlockEndEvent::new(r, id).into(),
            Some(Open::Data(id)) => DataBlockEndEvent::new(r, id).into(),
        };
        emitter.emit(reply, end).await
    }

    async fn close_all(
        &mut self,
        reply: &mut Msg,
        emitter: &mut Emitter,
    ) -> Result<(), AgentError> {
        self.close_current(reply, emitter).await?;
        for id in std::mem::take(&mut self.open_calls) {
            emitter
                .emit(reply, ToolCallEndEvent::new(self.r(), id).into())
                .await?;
        }
        Ok(())
    }
}

/// Provider fields of thinking blocks (signatures) are not carried by any
/// event; they are copied from the final chunk into the reply so that the
/// next request can send them back.
fn keep_provider_fields(reply: &mut Msg, last: &ChatResponse) {
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
