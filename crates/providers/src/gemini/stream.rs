//! Gemini responses -> [`ModelDelta`]s: the server-sent events of
//! `streamGenerateContent?alt=sse`, each a whole `GenerateContentResponse`
//! carrying the next parts, and the one response of `generateContent`.

use std::collections::VecDeque;

use futures_util::stream::{self, StreamExt};
use oxiscope_http::{BodyStream, SseStream};
use oxiscope_message::{Stamper, SystemStamper};
use oxiscope_model::{ChatUsage, DeltaStream, ModelDelta, ModelError};
use serde_json::{Map, Value};

use super::error;
use super::format::{CALL_SIGNATURE_PREFIX, THOUGHT_SIGNATURE_KEY};

/// Decodes the responses of one call, numbering its function calls and
/// remembering whether a candidate finished.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    calls: usize,
    finished: bool,
}

/// `obj[camel]`, or `obj[snake]` (the API writes camelCase; proxies may
/// not).
fn field<'a>(obj: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel).or_else(|| obj.get(snake))
}

fn str_field<'a>(obj: &'a Value, camel: &str, snake: &str) -> Option<&'a str> {
    field(obj, camel, snake).and_then(Value::as_str)
}

impl Decoder {
    /// Whether a candidate reported its `finishReason`.
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// The deltas of one response object.
    ///
    /// # Errors
    /// [`ModelError::Stream`] for a response that is not an object or a
    /// function call without a name; [`ModelError::Provider`] for an
    /// `error` object, a blocked prompt, or a candidate stopped for safety,
    /// recitation or a malformed function call.
    pub(crate) fn response(&mut self, data: &Value) -> Result<Vec<ModelDelta>, ModelError> {
        if !data.is_object() {
            return Err(stream_error("a response that is not a JSON object"));
        }
        if let Some(err) = data.get("error") {
            return Err(error::from_event(err));
        }
        let mut out = Vec::new();
        let candidate = data
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        match candidate {
            Some(candidate) => self.candidate(candidate, &mut out)?,
            None => {
                if let Some(reason) = field(data, "promptFeedback", "prompt_feedback")
                    .and_then(|f| str_field(f, "blockReason", "block_reason"))
                {
                    return Err(error::stopped(reason, "Gemini blocked the prompt"));
                }
            }
        }
        if let Some(usage) = field(data, "usageMetadata", "usage_metadata") {
            out.extend(usage_of(usage).map(ModelDelta::Usage));
        }
        Ok(out)
    }

    fn candidate(
        &mut self,
        candidate: &Value,
        out: &mut Vec<ModelDelta>,
    ) -> Result<(), ModelError> {
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            self.part(part, out)?;
        }
        let reason = str_field(candidate, "finishReason", "finish_reason").unwrap_or_default();
        match reason {
            "" => {}
            "SAFETY"
            | "RECITATION"
            | "LANGUAGE"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "MALFORMED_FUNCTION_CALL"
            | "UNEXPECTED_TOOL_CALL"
            | "TOO_MANY_TOOL_CALLS" => {
                return Err(error::stopped(reason, "Gemini stopped the reply"));
            }
            // STOP, MAX_TOKENS, and reasons added later end the reply.
            _ => self.finished = true,
        }
        Ok(())
    }

    fn part(&mut self, part: &Value, out: &mut Vec<ModelDelta>) -> Result<(), ModelError> {
        let signature =
            str_field(part, "thoughtSignature", "thought_signature").filter(|s| !s.is_empty());
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(call) = field(part, "functionCall", "function_call") {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| stream_error("a functionCall without a name"))?;
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|i| !i.is_empty())
                .map_or_else(|| format!("call_{}", SystemStamper.new_id()), str::to_owned);
            let arguments = match call.get("args") {
                Some(args @ Value::Object(_)) => args.to_string(),
                None | Some(Value::Null) => "{}".to_owned(),
                // Kept verbatim: the agent reports arguments that are not
                // an object to the model.
                Some(other) => other.to_string(),
            };
            if let Some(signature) = signature {
                out.push(meta(&format!("{CALL_SIGNATURE_PREFIX}{id}"), signature));
            }
            out.push(ModelDelta::ToolCall {
                index: self.calls,
                id: Some(id),
                name: Some(name.to_owned()),
                arguments,
            });
            self.calls += 1;
            return Ok(());
        }
        if let Some(data) = field(part, "inlineData", "inline_data") {
            let media_type = str_field(data, "mimeType", "mime_type").unwrap_or_default();
            let bytes = data.get("data").and_then(Value::as_str).unwrap_or_default();
            if !media_type.is_empty() && !bytes.is_empty() {
                out.push(ModelDelta::Data {
                    media_type: media_type.to_owned(),
                    data: bytes.to_owned(),
                });
            }
            return Ok(());
        }
        let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
        if thought {
            if !text.is_empty() {
                out.push(ModelDelta::Thinking(text.to_owned()));
            }
            if let Some(signature) = signature {
                out.push(meta(THOUGHT_SIGNATURE_KEY, signature));
            }
        } else if !text.is_empty() {
            out.push(ModelDelta::Text(text.to_owned()));
        }
        Ok(())
    }
}

/// The usage of a `usageMetadata` object: output counts the answer, the
/// thoughts and tool-use prompts (total minus prompt), as billed.
fn usage_of(usage: &Value) -> Option<ChatUsage> {
    let count = |camel: &str, snake: &str| field(usage, camel, snake).and_then(Value::as_u64);
    let input = count("promptTokenCount", "prompt_token_count");
    let total = count("totalTokenCount", "total_token_count");
    let candidates = count("candidatesTokenCount", "candidates_token_count");
    let thoughts = count("thoughtsTokenCount", "thoughts_token_count");
    if input.is_none() && total.is_none() && candidates.is_none() {
        return None;
    }
    let input = input.unwrap_or(0);
    let output = match total {
        Some(total) => total.saturating_sub(input),
        None => candidates
            .unwrap_or(0)
            .saturating_add(thoughts.unwrap_or(0)),
    };
    let mut chat = ChatUsage::tokens(input, output);
    chat.cache_input_tokens =
        count("cachedContentTokenCount", "cached_content_token_count").unwrap_or(0);
    if let Some(thoughts) = thoughts {
        let mut metadata = Map::new();
        metadata.insert("reasoning_tokens".into(), thoughts.into());
        chat.metadata = Some(metadata);
    }
    Some(chat)
}

fn meta(key: &str, value: &str) -> ModelDelta {
    let mut map = Map::new();
    map.insert(key.to_owned(), value.into());
    ModelDelta::ThinkingMeta(map)
}

fn stream_error(what: &str) -> ModelError {
    ModelError::Stream {
        message: format!("Gemini sent {what}"),
    }
}

/// The deltas of a whole `generateContent` response.
///
/// # Errors
/// As [`Decoder::response`].
pub(crate) fn whole(body: &Value) -> Result<Vec<ModelDelta>, ModelError> {
    Decoder::default().response(body)
}

struct State {
    events: SseStream<BodyStream>,
    decoder: Decoder,
    pending: VecDeque<ModelDelta>,
    done: bool,
}

/// The deltas of a streamed call. The stream has no closing event: it ends
/// well when the body ends after a candidate's `finishReason`. Ending
/// before, a broken body, a malformed event or an error object is a last
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
                None if st.decoder.finished() => {
                    st.done = true;
                    continue;
                }
                None => Err(stream_error(
                    "no finishReason before the stream ended (cut short)",
                )),
                Some(Err(e)) => Err(error::from_http(e)),
                Some(Ok(event)) if event.data.trim().is_empty() => continue,
                Some(Ok(event)) => match serde_json::from_str::<Value>(&event.data) {
                    Ok(data) => st.decoder.response(&data),
                    Err(e) => Err(ModelError::Stream {
                        message: format!("Gemini sent a malformed event: {e}"),
                    }),
                },
            };
            match item {
                Ok(deltas) => st.pending.extend(deltas),
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            }
        }
    })
    .boxed()
}

/// Feeds `body` (a recorded or cut stream) through the SSE decoder and the
/// response decoder, as a call would, collecting every delta and the error
/// that ends it. For tests of the parser on arbitrary bytes.
#[cfg(test)]
pub(crate) fn decode_bytes(body: &[u8]) -> (Vec<ModelDelta>, Option<ModelError>) {
    let mut sse = oxiscope_http::SseDecoder::new();
    let mut decoder = Decoder::default();
    let mut out = Vec::new();
    if let Err(e) = sse.feed(body) {
        return (out, Some(error::from_http(e)));
    }
    sse.finish();
    while let Some(event) = sse.next_event() {
        if event.data.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(&event.data).map_err(|e| ModelError::Stream {
            message: e.to_string(),
        });
        match parsed.and_then(|data| decoder.response(&data)) {
            Ok(deltas) => out.extend(deltas),
            Err(e) => return (out, Some(e)),
        }
    }
    if decoder.finished() {
        (out, None)
    } else {
        (out, Some(stream_error("no finishReason")))
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
