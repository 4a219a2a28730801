//! Responses API server-sent events -> [`ModelDelta`]s.
//!
//! The API streams typed events: output items (`reasoning`, `message`,
//! `function_call`) are announced by `response.output_item.added`, grow by
//! their own delta events, and are closed by `response.output_item.done`
//! with the whole item. The stream ends with `response.completed`,
//! `response.incomplete` (a token limit) or `response.failed`.

use std::collections::{HashMap, HashSet, VecDeque};

use futures_util::stream::{self, Stream, StreamExt};
use oxiscope_http::{SseEvent, SseStream};
use oxiscope_model::{ChatUsage, DeltaStream, ModelDelta, ModelError};
use serde_json::{Map, Value};

use super::error;
use super::format::{ENCRYPTED_CONTENT, REASONING_ITEM_ID};

/// A function call being streamed.
#[derive(Debug)]
struct Call {
    index: usize,
    /// Whether argument fragments arrived.
    streamed: bool,
}

/// A reasoning item being streamed.
#[derive(Debug, Default)]
struct Reasoning {
    /// Whether summary (or reasoning) text arrived.
    streamed: bool,
    /// The summary part the last text belonged to.
    part: Option<u64>,
}

/// Decodes one call's events, keeping what each output item is.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    calls: HashMap<String, Call>,
    reasoning: HashMap<String, Reasoning>,
    /// Message items whose text arrived as deltas.
    texts: HashSet<String>,
    usage: Option<ChatUsage>,
    finished: bool,
}

impl Decoder {
    /// Whether a final event (`response.completed` or `response.incomplete`)
    /// arrived.
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// The deltas of one event.
    ///
    /// # Errors
    /// [`ModelError::Stream`] for malformed events, [`ModelError::Provider`]
    /// for `error` and `response.failed`.
    pub(crate) fn event(&mut self, event: &SseEvent) -> Result<Vec<ModelDelta>, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| ModelError::Stream {
            message: format!("malformed `{}` event: {e}", event.event_type()),
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default()
            .to_owned();
        let mut out = Vec::new();
        let field = |key: &str| str_field(&kind, &data, key);
        match kind.as_str() {
            "response.output_text.delta" | "response.refusal.delta" => {
                let item = data.get("item_id").and_then(Value::as_str);
                self.texts.insert(item.unwrap_or_default().to_owned());
                push_text(&mut out, ModelDelta::Text(field("delta")?.to_owned()));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let item = data
                    .get("item_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let part = data
                    .get("summary_index")
                    .or_else(|| data.get("content_index"))
                    .and_then(Value::as_u64);
                let state = self.reasoning.entry(item).or_default();
                if state.streamed && part.is_some() && part != state.part {
                    out.push(ModelDelta::Thinking("\n\n".to_owned()));
                }
                state.streamed = true;
                state.part = part;
                push_text(&mut out, ModelDelta::Thinking(field("delta")?.to_owned()));
            }
            "response.function_call_arguments.delta" => {
                let item = field("item_id")?;
                let delta = field("delta")?.to_owned();
                let Some(call) = self.calls.get_mut(item) else {
                    return Err(ModelError::Stream {
                        message: format!(
                            "function_call_arguments.delta for item {item}, which is not a \
                             function call"
                        ),
                    });
                };
                call.streamed = true;
                out.push(ModelDelta::ToolCall {
                    index: call.index,
                    id: None,
                    name: None,
                    arguments: delta,
                });
            }
            "response.output_item.added" => {
                let item = data.get("item").ok_or_else(|| missing(&kind, "item"))?;
                self.item_added(output_index(&data), item, &mut out)?;
            }
            "response.output_item.done" => {
                let item = data.get("item").ok_or_else(|| missing(&kind, "item"))?;
                self.item_done(output_index(&data), item, &mut out)?;
            }
            "response.completed" | "response.incomplete" => {
                if let Some(usage) = data.pointer("/response/usage") {
                    self.merge_usage(usage);
                }
                out.extend(self.usage.clone().map(ModelDelta::Usage));
                self.finished = true;
            }
            "response.failed" => {
                let failure = data
                    .pointer("/response/error")
                    .filter(|e| e.is_object())
                    .ok_or_else(|| missing(&kind, "response.error"))?;
                return Err(error::from_event(failure));
            }
            "error" => {
                let failure = data.get("error").filter(|e| e.is_object()).unwrap_or(&data);
                return Err(error::from_event(failure));
            }
            // Lifecycle and `.done` events repeat what the deltas said; new
            // event types are ignored.
            _ => {}
        }
        Ok(out)
    }

    /// An output item starts: a function call is announced with its id and
    /// name (and any arguments already there).
    fn item_added(
        &mut self,
        index: usize,
        item: &Value,
        out: &mut Vec<ModelDelta>,
    ) -> Result<(), ModelError> {
        if item.get("type").and_then(Value::as_str) == Some("function_call") {
            let (id, call_id, name) = call_names(item)?;
            let arguments = item
                .get("arguments")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            self.calls.insert(
                id,
                Call {
                    index,
                    streamed: !arguments.is_empty(),
                },
            );
            out.push(ModelDelta::ToolCall {
                index,
                id: Some(call_id),
                name: Some(name),
                arguments,
            });
        }
        Ok(())
    }

    /// An output item is complete: what did not arrive as deltas comes from
    /// the whole item (servers that send only whole items, and non-streamed
    /// responses), and a reasoning item leaves its id and encrypted content
    /// on its thinking block.
    pub(crate) fn item_done(
        &mut self,
        index: usize,
        item: &Value,
        out: &mut Vec<ModelDelta>,
    ) -> Result<(), ModelError> {
        let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
        match item.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message" => {
                if self.texts.contains(id) {
                    return Ok(());
                }
                let Some(Value::Array(parts)) = item.get("content") else {
                    return Ok(());
                };
                for part in parts {
                    let text = match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => part.get("text"),
                        Some("refusal") => part.get("refusal"),
                        _ => None,
                    };
                    if let Some(text) = text.and_then(Value::as_str) {
                        push_text(out, ModelDelta::Text(text.to_owned()));
                    }
                }
            }
            "function_call" => {
                let arguments = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match self.calls.get_mut(id) {
                    Some(call) if call.streamed => {}
                    Some(call) => {
                        call.streamed = true;
                        out.push(ModelDelta::ToolCall {
                            index: call.index,
                            id: None,
                            name: None,
                            arguments: arguments.to_owned(),
                        });
                    }
                    None => {
                        let (id, call_id, name) = call_names(item)?;
                        self.calls.insert(
                            id,
                            Call {
                                index,
                                streamed: true,
                            },
                        );
                        out.push(ModelDelta::ToolCall {
                            index,
                            id: Some(call_id),
                            name: Some(name),
                            arguments: arguments.to_owned(),
                        });
                    }
                }
            }
            "reasoning" => self.reasoning_done(id, item, out),
            _ => {}
        }
        Ok(())
    }

    fn reasoning_done(&mut self, id: &str, item: &Value, out: &mut Vec<ModelDelta>) {
        let streamed = self.reasoning.get(id).is_some_and(|r| r.streamed);
        let encrypted = item
            .get(ENCRYPTED_CONTENT)
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty());
        if !streamed {
            let summary: Vec<&str> = ["summary", "content"]
                .iter()
                .filter_map(|key| item.get(*key).and_then(Value::as_array))
                .flatten()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .filter(|t| !t.is_empty())
                .collect();
            // An empty delta still opens a thinking block of its own, for
            // the metadata below to land on; an item with nothing at all
            // leaves no block.
            if !summary.is_empty() || !id.is_empty() || encrypted.is_some() {
                out.push(ModelDelta::Thinking(summary.join("\n\n")));
            }
        }
        let mut meta = Map::new();
        if !id.is_empty() {
            meta.insert(REASONING_ITEM_ID.to_owned(), id.into());
        }
        if let Some(encrypted) = encrypted {
            meta.insert(ENCRYPTED_CONTENT.to_owned(), encrypted.into());
        }
        if !meta.is_empty() {
            out.push(ModelDelta::ThinkingMeta(meta));
        }
        self.reasoning.entry(id.to_owned()).or_default().streamed = true;
    }

    /// Reads a `usage` object; later counts win.
    pub(crate) fn merge_usage(&mut self, usage: &Value) {
        let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64);
        let current = self.usage.get_or_insert_with(|| ChatUsage::tokens(0, 0));
        if let Some(n) = count("/input_tokens") {
            current.input_tokens = n;
        }
        if let Some(n) = count("/output_tokens") {
            current.output_tokens = n;
        }
        if let Some(n) = count("/input_tokens_details/cached_tokens") {
            current.cache_input_tokens = n;
        }
    }

    /// The usage so far.
    pub(crate) fn usage(&self) -> Option<ChatUsage> {
        self.usage.clone()
    }
}

/// `(item id, call id, name)` of a function call item.
fn call_names(item: &Value) -> Result<(String, String, String), ModelError> {
    let get = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
    let (id, call_id, name) = (get("id"), get("call_id"), get("name"));
    if call_id.is_empty() || name.is_empty() {
        return Err(ModelError::Stream {
            message: "a function_call item without a call_id or a name".to_owned(),
        });
    }
    // Some servers leave the item id out; the call id names it then.
    let id = if id.is_empty() { call_id } else { id };
    Ok((id.to_owned(), call_id.to_owned(), name.to_owned()))
}

fn output_index(data: &Value) -> usize {
    data.get("output_index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(usize::MAX)
}

fn str_field<'a>(kind: &str, data: &'a Value, key: &str) -> Result<&'a str, ModelError> {
    data.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| missing(kind, key))
}

fn missing(kind: &str, field: &str) -> ModelError {
    ModelError::Stream {
        message: format!("`{kind}` event without `{field}`"),
    }
}

fn push_text(out: &mut Vec<ModelDelta>, delta: ModelDelta) {
    match &delta {
        ModelDelta::Text(t) | ModelDelta::Thinking(t) if t.is_empty() => {}
        _ => out.push(delta),
    }
}

/// The deltas of a whole (non-streamed) `response` object, usage last.
///
/// # Errors
/// [`ModelError::Stream`] when the body is not a response,
/// [`ModelError::Provider`] when it failed.
pub(crate) fn whole(body: &Value) -> Result<Vec<ModelDelta>, ModelError> {
    if body.get("status").and_then(Value::as_str) == Some("failed")
        && let Some(failure) = body.get("error").filter(|e| e.is_object())
    {
        return Err(error::from_event(failure));
    }
    let Some(Value::Array(items)) = body.get("output") else {
        return Err(ModelError::Stream {
            message: "the response is not a Responses API object: no `output` list".to_owned(),
        });
    };
    let mut decoder = Decoder::default();
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        decoder.item_done(index, item, &mut out)?;
    }
    if let Some(usage) = body.get("usage") {
        decoder.merge_usage(usage);
    }
    out.extend(decoder.usage().map(ModelDelta::Usage));
    Ok(out)
}

/// Decodes a raw Responses API SSE body into increments: the decoder the
/// model uses, exposed for replaying recorded bodies. `bytes` may be cut
/// anywhere.
///
/// # Contract
/// The stream ends cleanly only after `response.completed` or
/// `response.incomplete`. A body that ends before, a transport failure or a
/// malformed event ends it with one [`ModelError::Stream`] item; an `error`
/// or `response.failed` event with one [`ModelError::Provider`] item.
///
/// # Cancel safety
/// Dropping the stream drops `bytes`.
pub fn decode_sse_stream<S, B>(bytes: S) -> DeltaStream
where
    S: Stream<Item = Result<B, oxiscope_http::Error>> + Send + Unpin + 'static,
    B: AsRef<[u8]>,
{
    deltas(SseStream::new(bytes))
}

struct State<E> {
    events: E,
    decoder: Decoder,
    pending: VecDeque<ModelDelta>,
    done: bool,
}

/// The deltas of framed events.
pub(crate) fn deltas<E>(events: E) -> DeltaStream
where
    E: Stream<Item = Result<SseEvent, oxiscope_http::Error>> + Send + Unpin + 'static,
{
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
                    message: "the stream ended before `response.completed`".to_owned(),
                }),
                Some(Err(e)) => Err(ModelError::Stream {
                    message: e.to_string(),
                }),
                Some(Ok(event)) => st.decoder.event(&event),
            };
            match item {
                Ok(deltas) => {
                    st.pending.extend(deltas);
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
