//! Rebuilding a reply message from its event stream (see `Msg::append_event`).

use crate::block::{
    Base64Source, ContentBlock, DataBlock, DataSource, HintBlock, MediaBlock, RichContent,
    TextBlock, ThinkingBlock, ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState,
    UrlSource,
};
use crate::error::AppendError;
use crate::event::{AgentEvent, EventType};
use crate::id::Id;
use crate::meta::Metadata;
use crate::msg::Msg;
use crate::reply::Usage;
use crate::stamp::{Stamper, SystemStamper};

/// What [`Msg::append_event`] did with an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The event changed the message.
    Applied,
    /// The event has no effect on a message (another reply's event, a
    /// lifecycle event such as `MODEL_CALL_START`, a `CUSTOM` event, an
    /// external result that is already there).
    Ignored,
}

impl Msg {
    /// Applies one event of this message's reply, using the real clock for
    /// new blocks.
    ///
    /// | event | effect on the message |
    /// |---|---|
    /// | `REPLY_START` | none (the caller creates the message, see [`Msg::reply`]) |
    /// | `REPLY_END` | sets `finished_at` (the event's time), `finished_reason`, `error` |
    /// | `MODEL_CALL_END` | adds the tokens to `usage` |
    /// | `TEXT/THINKING/DATA_BLOCK_START` | appends an empty block with the event's block id |
    /// | `TEXT/THINKING_BLOCK_DELTA` | appends the delta to the block's text |
    /// | `DATA_BLOCK_DELTA` | appends base64 data to the block, or sets its URL |
    /// | `*_BLOCK_END` | sets the block's `finished_at`; a text end with `text` replaces the text |
    /// | `HINT_BLOCK` | appends a hint block |
    /// | `TOOL_CALL_START / DELTA / END` | appends a pending call / its argument fragment / finishes it |
    /// | `TOOL_RESULT_START` | appends a running result with an empty block list |
    /// | `TOOL_RESULT_TEXT_DELTA` | appends text to the result's last text block (or a new one) |
    /// | `TOOL_RESULT_DATA_DELTA` | appends a data block to the result (or extends the one with that id) |
    /// | `TOOL_RESULT_END` | sets the result's state and `finished_at`; the call becomes `finished` |
    /// | `REQUIRE_USER_CONFIRM` | the calls become `asking`, with the event's suggested rules |
    /// | `REQUIRE_EXTERNAL_EXECUTION` | the calls become `submitted` |
    /// | `USER_CONFIRM_RESULT` | confirmed calls become `allowed`, taking the user's edited input |
    /// | `EXTERNAL_EXECUTION_RESULT` | appends each result whose id has no result block yet |
    /// | `MODEL_CALL_START`, `EXCEED_MAX_ITERS`, `USER_INTERRUPT`, `CUSTOM` | none |
    /// | any event of another reply | none |
    ///
    /// Like AgentScope, the creation time of blocks opened here, of hint blocks
    /// and of text blocks created inside tool results comes from the clock (the
    /// [`Stamper`]), not from the event; `finished_at` comes from the end event.
    ///
    /// Every delta is an amortised O(1) `push_str` onto the open block, found by
    /// scanning from the end of the message (the open block is almost always the
    /// last one).
    ///
    /// # Errors
    /// An [`AppendError`] for an event that refers to a block the message does
    /// not have, extends a block that has ended, or opens a block whose id is
    /// taken. The message is left unchanged.
    pub fn append_event(&mut self, event: &AgentEvent) -> Result<Appended, AppendError> {
        self.append_event_with(event, &SystemStamper)
    }

    /// Like [`Msg::append_event`], with ids and times of new blocks from
    /// `stamper`.
    ///
    /// # Errors
    /// As [`Msg::append_event`].
    pub fn append_event_with(
        &mut self,
        event: &AgentEvent,
        stamper: &dyn Stamper,
    ) -> Result<Appended, AppendError> {
        if event.reply_id().is_some_and(|r| r != self.id) {
            return Ok(Appended::Ignored);
        }
        let tag = event.event_type().as_str();
        match event {
            AgentEvent::ReplyEnd(e) => {
                self.finished_at = Some(e.created_at.clone());
                self.finished_reason = Some(e.finished_reason);
                self.error = e.error.clone().map(Box::new);
            }
            AgentEvent::ModelCallEnd(e) => {
                self.usage.get_or_insert_with(Usage::default).add(&Usage {
                    input_tokens: e.input_tokens,
                    output_tokens: e.output_tokens,
                    cache_input_tokens: e.cache_input_tokens,
                    cache_creation_input_tokens: e.cache_creation_input_tokens,
                });
            }
            AgentEvent::TextBlockStart(e) => {
                self.open_block(tag, &e.block_id)?;
                let mut block = TextBlock::stamped("", stamper);
                block.id = Id::new(&e.block_id);
                self.content.push(block.into());
            }
            AgentEvent::TextBlockDelta(e) => {
                let block = self.open_text(tag, &e.block_id)?;
                block.text.push_str(&e.delta);
            }
            AgentEvent::TextBlockEnd(e) => {
                let block = self.open_text(tag, &e.block_id)?;
                if let Some(text) = &e.text {
                    block.text.clone_from(text);
                }
                block.finished_at = Some(e.created_at.clone());
            }
            AgentEvent::ThinkingBlockStart(e) => {
                self.open_block(tag, &e.block_id)?;
                let mut block = ThinkingBlock::stamped("", stamper);
                block.id = Id::new(&e.block_id);
                self.content.push(block.into());
            }
            AgentEvent::ThinkingBlockDelta(e) => {
                self.open_thinking(tag, &e.block_id)?
                    .thinking
                    .push_str(&e.delta);
            }
            AgentEvent::ThinkingBlockEnd(e) => {
                self.open_thinking(tag, &e.block_id)?.finished_at = Some(e.created_at.clone());
            }
            AgentEvent::DataBlockStart(e) => {
                self.open_block(tag, &e.block_id)?;
                let source = DataSource::Base64(Base64Source {
                    data: String::new(),
                    media_type: e.media_type.clone(),
                });
                let mut block = DataBlock::stamped(source, stamper);
                block.id = Id::new(&e.block_id);
                block.name.clone_from(&e.name);
                self.content.push(block.into());
            }
            AgentEvent::DataBlockDelta(e) => {
                let block = self.open_data(tag, &e.block_id)?;
                extend_source(
                    tag,
                    &mut block.source,
                    &e.media_type,
                    e.data.as_deref(),
                    e.url.as_deref(),
                )?;
            }
            AgentEvent::DataBlockEnd(e) => {
                self.open_data(tag, &e.block_id)?.finished_at = Some(e.created_at.clone());
            }
            AgentEvent::HintBlock(e) => {
                let mut block = HintBlock::stamped(e.hint.clone(), e.source.clone(), stamper);
                block.id = Id::new(&e.block_id);
                self.content.push(block.into());
            }
            AgentEvent::ToolCallStart(e) => {
                if self.find_call(&e.tool_call_id).is_some() {
                    return Err(AppendError::DuplicateBlock {
                        event: tag,
                        id: e.tool_call_id.clone(),
                    });
                }
                let mut call =
                    ToolCallBlock::new(e.tool_call_id.as_str(), e.tool_call_name.clone(), "");
                call.created_at = stamper.now();
                self.content.push(call.into());
            }
            AgentEvent::ToolCallDelta(e) => {
                self.open_call(tag, &e.tool_call_id)?
                    .input
                    .push_str(&e.delta);
            }
            AgentEvent::ToolCallEnd(e) => {
                self.open_call(tag, &e.tool_call_id)?.finished_at = Some(e.created_at.clone());
            }
            AgentEvent::ToolResultStart(e) => {
                if self.find_result(&e.tool_call_id).is_some() {
                    return Err(AppendError::DuplicateBlock {
                        event: tag,
                        id: e.tool_call_id.clone(),
                    });
                }
                let now = stamper.now();
                self.content.push(
                    ToolResultBlock {
                        id: Id::new(&e.tool_call_id),
                        name: e.tool_call_name.clone(),
                        output: RichContent::Blocks(Vec::new()),
                        state: ToolResultState::Running,
                        metadata: Metadata::new(),
                        created_at: now,
                        finished_at: None,
                    }
                    .into(),
                );
            }
            AgentEvent::ToolResultTextDelta(e) => {
                let result = self.open_result(tag, &e.tool_call_id)?;
                match &mut result.output {
                    RichContent::Text(text) => text.push_str(&e.delta),
                    RichContent::Blocks(blocks) => match blocks.last_mut() {
                        Some(MediaBlock::Text(last)) => last.text.push_str(&e.delta),
                        _ => blocks.push(TextBlock::stamped(e.delta.clone(), stamper).into()),
                    },
                }
            }
            AgentEvent::ToolResultDataDelta(e) => {
                let result = self.open_result(tag, &e.tool_call_id)?;
                if let RichContent::Text(text) = &mut result.output {
                    // A plain-text output becomes a block list once data arrives.
                    let text = std::mem::take(text);
                    let mut blocks = Vec::new();
                    if !text.is_empty() {
                        blocks.push(TextBlock::stamped(text, stamper).into());
                    }
                    result.output = RichContent::Blocks(blocks);
                }
                if let RichContent::Blocks(blocks) = &mut result.output {
                    let existing = blocks.iter_mut().rev().find_map(|b| match b {
                        MediaBlock::Data(d) if d.id == e.block_id => Some(d),
                        _ => None,
                    });
                    let (data, url) = (e.data.as_deref(), e.url.as_deref());
                    if let Some(block) = existing {
                        extend_source(tag, &mut block.source, &e.media_type, data, url)?;
                    } else {
                        let source = new_source(tag, &e.media_type, data, url)?;
                        let mut block = DataBlock::stamped(source, stamper);
                        block.id = Id::new(&e.block_id);
                        blocks.push(block.into());
                    }
                }
            }
            AgentEvent::ToolResultEnd(e) => {
                let result = self.open_result(tag, &e.tool_call_id)?;
                result.state = e.state;
                result.finished_at = Some(e.created_at.clone());
                if let Some(call) = self.find_call(&e.tool_call_id) {
                    call.state = ToolCallState::Finished;
                }
            }
            AgentEvent::RequireUserConfirm(e) => {
                self.check_calls(tag, e.tool_calls.iter().map(|c| c.id.as_str()))?;
                for asked in &e.tool_calls {
                    if let Some(call) = self.find_call(&asked.id) {
                        call.state = ToolCallState::Asking;
                        call.suggested_rules.clone_from(&asked.suggested_rules);
                    }
                }
            }
            AgentEvent::RequireExternalExecution(e) => {
                self.check_calls(tag, e.tool_calls.iter().map(|c| c.id.as_str()))?;
                for submitted in &e.tool_calls {
                    if let Some(call) = self.find_call(&submitted.id) {
                        call.state = ToolCallState::Submitted;
                    }
                }
            }
            AgentEvent::UserConfirmResult(e) => {
                self.check_calls(
                    tag,
                    e.confirm_results.iter().map(|r| r.tool_call.id.as_str()),
                )?;
                for answer in e.confirm_results.iter().filter(|r| r.confirmed) {
                    if let Some(call) = self.find_call(&answer.tool_call.id) {
                        call.state = ToolCallState::Allowed;
                        call.input.clone_from(&answer.tool_call.input);
                    }
                }
            }
            AgentEvent::ExternalExecutionResult(e) => {
                let mut applied = Appended::Ignored;
                for result in &e.execution_results {
                    if self.find_result(&result.id).is_none() {
                        self.content.push(result.clone().into());
                        applied = Appended::Applied;
                    }
                }
                return Ok(applied);
            }
            AgentEvent::ReplyStart(_)
            | AgentEvent::ModelCallStart(_)
            | AgentEvent::ExceedMaxIters(_)
            | AgentEvent::UserInterrupt(_)
            | AgentEvent::Custom(_) => return Ok(Appended::Ignored),
        }
        Ok(Appended::Applied)
    }

    fn open_block(&self, event: &'static str, id: &str) -> Result<(), AppendError> {
        if self.content.iter().any(|b| b.id() == id) {
            return Err(AppendError::DuplicateBlock {
                event,
                id: id.to_owned(),
            });
        }
        Ok(())
    }

    fn open_text(&mut self, event: &'static str, id: &str) -> Result<&mut TextBlock, AppendError> {
        let block = find_rev(&mut self.content, |b| match b {
            ContentBlock::Text(t) if t.id == id => Some(t),
            _ => None,
        });
        check_open(event, "text", id, block, |t| t.finished_at.is_some())
    }

    fn open_thinking(
        &mut self,
        event: &'static str,
        id: &str,
    ) -> Result<&mut ThinkingBlock, AppendError> {
        let block = find_rev(&mut self.content, |b| match b {
            ContentBlock::Thinking(t) if t.id == id => Some(t),
            _ => None,
        });
        check_open(event, "thinking", id, block, |t| t.finished_at.is_some())
    }

    fn open_data(&mut self, event: &'static str, id: &str) -> Result<&mut DataBlock, AppendError> {
        let block = find_rev(&mut self.content, |b| match b {
            ContentBlock::Data(d) if d.id == id => Some(d),
            _ => None,
        });
        check_open(event, "data", id, block, |d| d.finished_at.is_some())
    }

    fn open_call(
        &mut self,
        event: &'static str,
        id: &str,
    ) -> Result<&mut ToolCallBlock, AppendError> {
        let block = self.find_call(id);
        check_open(event, "tool_call", id, block, |c| c.finished_at.is_some())
    }

    fn open_result(
        &mut self,
        event: &'static str,
        id: &str,
    ) -> Result<&mut ToolResultBlock, AppendError> {
        let block = self.find_result(id);
        check_open(event, "tool_result", id, block, |r| r.finished_at.is_some())
    }

    fn find_call(&mut self, id: &str) -> Option<&mut ToolCallBlock> {
        find_rev(&mut self.content, |b| match b {
            ContentBlock::ToolCall(c) if c.id == id => Some(c),
            _ => None,
        })
    }

    fn find_result(&mut self, id: &str) -> Option<&mut ToolResultBlock> {
        find_rev(&mut self.content, |b| match b {
            ContentBlock::ToolResult(r) if r.id == id => Some(r),
            _ => None,
        })
    }

    /// Fails unless every id names a tool call of this message, so that an
    /// event touching several calls applies to all of them or to none.
    fn check_calls<'a>(
        &mut self,
        event: &'static str,
        mut ids: impl Iterator<Item = &'a str>,
    ) -> Result<(), AppendError> {
        match ids.find(|id| self.find_call(id).is_none()) {
            Some(id) => Err(AppendError::UnknownBlock {
                event,
                kind: "tool_call",
                id: id.to_owned(),
            }),
            None => Ok(()),
        }
    }
}

fn find_rev<T>(
    content: &mut [ContentBlock],
    pick: impl FnMut(&mut ContentBlock) -> Option<&mut T>,
) -> Option<&mut T> {
    content.iter_mut().rev().find_map(pick)
}

fn check_open<'a, T>(
    event: &'static str,
    kind: &'static str,
    id: &str,
    block: Option<&'a mut T>,
    finished: impl Fn(&T) -> bool,
) -> Result<&'a mut T, AppendError> {
    match block {
        None => Err(AppendError::UnknownBlock {
            event,
            kind,
            id: id.to_owned(),
        }),
        Some(b) if finished(b) => Err(AppendError::BlockFinished {
            event,
            kind,
            id: id.to_owned(),
        }),
        Some(b) => Ok(b),
    }
}

fn new_source(
    event: &'static str,
    media_type: &str,
    data: Option<&str>,
    url: Option<&str>,
) -> Result<DataSource, AppendError> {
    match (data, url) {
        (_, Some(url)) => UrlSource::new(url, media_type)
            .map(DataSource::Url)
            .map_err(|e| AppendError::InvalidUrl {
                event,
                url: e.url,
                reason: e.reason,
            }),
        (data, None) => Ok(DataSource::Base64(Base64Source {
            data: data.unwrap_or_default().to_owned(),
            media_type: media_type.to_owned(),
        })),
    }
}

fn extend_source(
    event: &'static str,
    source: &mut DataSource,
    media_type: &str,
    data: Option<&str>,
    url: Option<&str>,
) -> Result<(), AppendError> {
    if source.media_type() != media_type {
        return Err(AppendError::MediaTypeMismatch {
            event,
            expected: source.media_type().to_owned(),
            got: media_type.to_owned(),
        });
    }
    match (source, data, url) {
        (DataSource::Base64(b), Some(chunk), None) => b.data.push_str(chunk),
        (source, data, url) => *source = new_source(event, media_type, data, url)?,
    }
    Ok(())
}

/// Whether `event_type` is one of the input events that resume a paused reply.
#[must_use]
pub fn is_input_event(event_type: EventType) -> bool {
    matches!(
        event_type,
        EventType::UserConfirmResult
            | EventType::ExternalExecutionResult
            | EventType::UserInterrupt
    )
}
