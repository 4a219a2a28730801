//! Ollama NDJSON lines -> [`ModelDelta`]s, and HTTP errors -> [`ModelError`].

use std::collections::VecDeque;

use futures_util::stream::{self, BoxStream, StreamExt};
use oxiscope_model::{ChatUsage, DeltaStream, ModelDelta, ModelError};
use serde_json::Value;

/// The provider name in errors.
const PROVIDER: &str = "ollama";

/// Decodes one call's lines; tool calls come whole and are numbered in
/// arrival order.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    calls: usize,
    done: bool,
}

impl Decoder {
    /// The deltas of one line (or of a whole non-streamed reply).
    ///
    /// # Errors
    /// [`ModelError::Provider`] for an `error` line, [`ModelError::Stream`]
    /// for a line that is not a chat chunk.
    pub(crate) fn line(&mut self, line: &Value) -> Result<Vec<ModelDelta>, ModelError> {
        if let Some(error) = line.get("error") {
            let message = error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(ModelError::Provider {
                provider: PROVIDER.to_owned(),
                status: 500,
                code: None,
                message,
                request_id: None,
                retry_after: None,
            });
        }
        if line.get("message").is_none() && line.get("done").is_none() {
            return Err(ModelError::Stream {
                message: "an Ollama line without `message` or `done`".to_owned(),
            });
        }
        let mut out = Vec::new();
        if let Some(message) = line.get("message") {
            let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or_default();
            if !text("thinking").is_empty() {
                out.push(ModelDelta::Thinking(text("thinking").to_owned()));
            }
            if !text("content").is_empty() {
                out.push(ModelDelta::Text(text("content").to_owned()));
            }
            if let Some(Value::Array(calls)) = message.get("tool_calls") {
                for call in calls {
                    out.push(self.tool_call(call)?);
                }
            }
        }
        if line.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            let count = |key: &str| line.get(key).and_then(Value::as_u64).unwrap_or(0);
            out.push(ModelDelta::Usage(ChatUsage::tokens(
                count("prompt_eval_count"),
                count("eval_count"),
            )));
        }
        Ok(out)
    }

    fn tool_call(&mut self, call: &Value) -> Result<ModelDelta, ModelError> {
        let function = call.get("function").ok_or_else(|| ModelError::Stream {
            message: "an Ollama tool call without `function`".to_owned(),
        })?;
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| ModelError::Stream {
                message: "an Ollama tool call without a name".to_owned(),
            })?;
        // Arguments come as an object; a string is passed on as it is.
        let arguments = match function.get("arguments") {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let index = self.calls;
        self.calls += 1;
        Ok(ModelDelta::ToolCall {
            index,
            id: call.get("id").and_then(Value::as_str).map(str::to_owned),
            name: Some(name.to_owned()),
            arguments,
        })
    }

    /// Whether the `done: true` line arrived.
    pub(crate) fn done(&self) -> bool {
        self.done
    }
}

/// An HTTP failure of a call, with Ollama's `{"error": ...}` body read.
pub(crate) fn from_http(err: oxiscope_http::Error) -> ModelError {
    crate::common::model::from_http(err, PROVIDER, |body| {
        let message = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| body.to_owned());
        (None, message)
    })
}

type Lines = BoxStream<'static, Result<Value, oxiscope_http::Error>>;

struct State {
    lines: Lines,
    decoder: Decoder,
    pending: VecDeque<ModelDelta>,
    finished: bool,
}

/// The deltas of a streamed call. Ends after the `done: true` line; ending
/// before it, a broken body, a malformed line or an `error` line is a last
/// error item.
pub(crate) fn deltas(lines: Lines) -> DeltaStream {
    let state = State {
        lines,
        decoder: Decoder::default(),
        pending: VecDeque::new(),
        finished: false,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            if let Some(delta) = st.pending.pop_front() {
                return Some((Ok(delta), st));
            }
            if st.finished {
                return None;
            }
            let item = match st.lines.next().await {
                None => Err(ModelError::Stream {
                    message: "the stream ended before the `done` line".to_owned(),
                }),
                Some(Err(e)) => Err(from_http(e)),
                Some(Ok(line)) => st.decoder.line(&line),
            };
            match item {
                Ok(deltas) => {
                    st.pending.extend(deltas);
                    st.finished = st.decoder.done();
                }
                Err(e) => {
                    st.finished = true;
                    return Some((Err(e), st));
                }
            }
        }
    })
    .boxed()
}
