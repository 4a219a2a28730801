//! Anthropic server-sent events -> [`ModelDelta`]s.

use std::collections::{HashSet, VecDeque};

use futures_util::stream::{self, StreamExt};
use oxiscope_http::{BodyStream, SseEvent, SseStream};
use oxiscope_model::{ChatUsage, DeltaStream, ModelDelta, ModelError};
use serde_json::{Map, Value};

use super::error;

/// The thinking-block field that carries a `redacted_thinking` block's data.
pub(crate) const REDACTED_KEY: &str = "redacted_data";

/// Decodes one call's events, keeping the usage and what each content block
/// index is.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    usage: Option<ChatUsage>,
    /// Indexes of the `tool_use` blocks, which argument fragments must name.
    tool_blocks: HashSet<u64>,
    finished: bool,
}

impl Decoder {
    /// Whether `message_stop` arrived.
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// The deltas of one event.
    ///
    /// # Errors
    /// [`ModelError::Stream`] for malformed events, [`ModelError::Provider`]
    /// for an `error` event.
    pub(crate) fn event(&mut self, event: &SseEvent) -> Result<Vec<ModelDelta>, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| malformed(event, &e))?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                let usage = data
                    .pointer("/message/usage")
                    .ok_or_else(|| missing(event, "usage"))?;
                self.merge_usage(usage);
                out.extend(self.usage.clone().map(ModelDelta::Usage));
                // A non-streamed shape can carry content already.
                if let Some(Value::Array(blocks)) = data.pointer("/message/content") {
                    for (index, block) in blocks.iter().enumerate() {
                        self.block(index as u64, block, true, &mut out)?;
                    }
                }
            }
            "content_block_start" => {
                let index = index(event, &data)?;
                let block = data
                    .get("content_block")
                    .ok_or_else(|| missing(event, "content_block"))?;
                self.block(index, block, false, &mut out)?;
            }
            "content_block_delta" => {
                let index = index(event, &data)?;
                let delta = data.get("delta").ok_or_else(|| missing(event, "delta"))?;
                out.extend(self.delta(event, index, delta)?);
            }
            "message_delta" => {
                if let Some(usage) = data.get("usage") {
                    self.merge_usage(usage);
                    out.extend(self.usage.clone().map(ModelDelta::Usage));
                }
            }
            "message_stop" => self.finished = true,
            "content_block_stop" | "ping" => {}
            "error" => {
                let err = data.get("error").ok_or_else(|| missing(event, "error"))?;
                return Err(error::from_event(err));
            }
            // New event types are ignored, as the API asks of clients.
            _ => {}
        }
        Ok(out)
    }

    /// A content block, at its start (streamed) or whole (`complete`).
    pub(crate) fn block(
        &mut self,
        index: u64,
        block: &Value,
        complete: bool,
        out: &mut Vec<ModelDelta>,
    ) -> Result<(), ModelError> {
        let str_field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        match str_field("type") {
            "text" => push_nonempty(out, ModelDelta::Text(str_field("text").to_owned())),
            "thinking" => {
                push_nonempty(out, ModelDelta::Thinking(str_field("thinking").to_owned()));
                if let Some(signature) = block.get("signature").and_then(Value::as_str)
                    && !signature.is_empty()
                {
                    out.push(meta("signature", signature));
                }
            }
            "redacted_thinking" => out.push(meta(REDACTED_KEY, str_field("data"))),
            "tool_use" | "server_tool_use" => {
                let id = str_field("id").to_owned();
                let name = str_field("name").to_owned();
                if id.is_empty() || name.is_empty() {
                    return Err(ModelError::Stream {
                        message: format!("tool_use block {index} without an id or a name"),
                    });
                }
                // Streamed input arrives as fragments; a whole block has it
                // as an object already.
                let arguments = match block.get("input") {
                    Some(input) if complete => input.to_string(),
                    Some(Value::Object(o)) if !o.is_empty() => Value::Object(o.clone()).to_string(),
                    _ => String::new(),
                };
                self.tool_blocks.insert(index);
                out.push(ModelDelta::ToolCall {
                    index: to_usize(index),
                    id: Some(id),
                    name: Some(name),
                    arguments,
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// The delta of a `content_block_delta`, `None` for kinds that carry
    /// nothing kept (citations, future kinds).
    fn delta(
        &self,
        event: &SseEvent,
        index: u64,
        delta: &Value,
    ) -> Result<Option<ModelDelta>, ModelError> {
        let field = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| missing(event, key))
        };
        match delta
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "text_delta" => Ok(Some(ModelDelta::Text(field("text")?))),
            "thinking_delta" => Ok(Some(ModelDelta::Thinking(field("thinking")?))),
            "signature_delta" => Ok(Some(meta("signature", &field("signature")?))),
            "input_json_delta" => {
                if !self.tool_blocks.contains(&index) {
                    return Err(ModelError::Stream {
                        message: format!(
                            "input_json_delta for block {index}, which is not a tool_use"
                        ),
                    });
                }
                Ok(Some(ModelDelta::ToolCall {
                    index: to_usize(index),
                    id: None,
                    name: None,
                    arguments: field("partial_json")?,
                }))
            }
            _ => Ok(None),
        }
    }

    /// Merges a usage object; later counts win, missing ones are kept.
    pub(crate) fn merge_usage(&mut self, usage: &Value) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        let current = self.usage.get_or_insert_with(|| ChatUsage::tokens(0, 0));
        if let Some(n) = count("input_tokens") {
            current.input_tokens = n;
        }
        if let Some(n) = count("output_tokens") {
            current.output_tokens = n;
        }
        if let Some(n) = count("cache_read_input_tokens") {
            current.cache_input_tokens = n;
        }
        if let Some(n) = count("cache_creation_input_tokens") {
            current.cache_creation_input_tokens = n;
        }
    }

    /// The usage so far.
    pub(crate) fn usage(&self) -> Option<ChatUsage> {
        self.usage.clone()
    }
}

fn push_nonempty(out: &mut Vec<ModelDelta>, delta: ModelDelta) {
    match &delta {
        ModelDelta::Text(t) | ModelDelta::Thinking(t) if t.is_empty() => {}
        _ => out.push(delta),
    }
}

fn meta(key: &str, value: &str) -> ModelDelta {
    let mut map = Map::new();
    map.insert(key.to_owned(), value.into());
    ModelDelta::ThinkingMeta(map)
}

fn to_usize(index: u64) -> usize {
    usize::try_from(index).unwrap_or(usize::MAX)
}

fn index(event: &SseEvent, data: &Value) -> Result<u64, ModelError> {
    data.get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| missing(event, "index"))
}

fn malformed(event: &SseEvent, err: &serde_json::Error) -> ModelError {
    ModelError::Stream {
        message: format!("malformed `{}` event: {err}", event.event_type()),
    }
}

fn missing(event: &SseEvent, field: &str) -> ModelError {
    ModelError::Stream {
        message: format!("`{}` event without `{field}`", event.event_type()),
    }
}

struct State {
    events: SseStream<BodyStream>,
    decoder: Decoder,
    pending: VecDeque<ModelDelta>,
    done: bool,
}

/// The deltas of a streamed call. Ends after `message_stop`; ending before
/// it, a broken body, a malformed event or an `error` event is a last
/// error item.
pub(crate) fn deltas(events: SseStream<BodyStream>) -> DeltaStream {
    let state = State {
        events,
        decoder: Decoder::default(),
        pending: VecDeque::new(),
        done: false,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            if let Some(delta) = st.pending.pop_front() {
                return Some((Ok(delta), st));
            }
            if st.done {
                return None;
            }
            let item = match st.events.next().await {
                None => Err(ModelError::Stream {
                    message: "the stream ended before `message_stop`".to_owned(),
                }),
                Some(Err(e)) => Err(error::from_http(e)),
                Some(Ok(event)) => st.decoder.event(&event),
            };
            match item {
                Ok(deltas) => {
                    st.pending
                        .extend(deltas.into_iter().filter(|d| !is_empty_text(d)));
                    st.done = st.decoder.finished();
                }
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            }
        }
    })
    .boxed()
}

fn is_empty_text(delta: &ModelDelta) -> bool {
    matches!(delta, ModelDelta::Text(t) | ModelDelta::Thinking(t) if t.is_empty())
}
