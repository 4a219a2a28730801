//! A fake Anthropic Messages server: builders for the streamed (SSE) and
//! whole replies of `POST /v1/messages`, written from the public API
//! reference, to script a [`FakeServer`](crate::FakeServer) with.
//!
//! ```
//! use oxiscope_test_support::anthropic::{AnthropicStream, Usage};
//!
//! let reply = AnthropicStream::new("claude-test")
//!     .message_start(Usage::input(12))
//!     .text(0, &["Hel", "lo"])
//!     .message_delta("end_turn", 2)
//!     .message_stop();
//! assert!(reply.body().contains("event: message_stop"));
//! let response = reply.into_response();
//! assert_eq!(response.status, 200);
//! ```

use serde_json::{Value, json};

use crate::ScriptedResponse;

/// Token counts of a `message_start` event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Uncached prompt tokens.
    pub input_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Prompt tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Output tokens so far (usually 1 at the start).
    pub output_tokens: u64,
}

impl Usage {
    /// Only input tokens.
    #[must_use]
    pub fn input(input_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens: 1,
            ..Self::default()
        }
    }

    /// With cache reads and writes.
    #[must_use]
    pub fn with_cache(mut self, read: u64, creation: u64) -> Self {
        self.cache_read_input_tokens = read;
        self.cache_creation_input_tokens = creation;
        self
    }

    fn to_json(self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
        })
    }
}

/// A scripted event stream, event by event, in the order the API sends
/// them. Nothing checks the order, so broken streams can be scripted too.
#[derive(Debug, Clone)]
pub struct AnthropicStream {
    model: String,
    events: Vec<(String, String)>,
}

impl AnthropicStream {
    /// An empty stream for `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            events: Vec::new(),
        }
    }

    /// A complete reply of one text block, split into `parts`.
    #[must_use]
    pub fn text_reply(model: &str, parts: &[&str], input: u64, output: u64) -> Self {
        Self::new(model)
            .message_start(Usage::input(input))
            .text(0, parts)
            .message_delta("end_turn", output)
            .message_stop()
    }

    /// Appends an event with `data` as its JSON payload.
    #[must_use]
    pub fn event(mut self, name: &str, data: &Value) -> Self {
        self.events.push((name.to_owned(), data.to_string()));
        self
    }

    /// Appends an event whose data is `raw` as it is (for malformed events).
    #[must_use]
    pub fn raw(mut self, name: &str, raw: &str) -> Self {
        self.events.push((name.to_owned(), raw.to_owned()));
        self
    }

    /// `message_start` with the usage.
    #[must_use]
    pub fn message_start(self, usage: Usage) -> Self {
        let data = json!({
            "type": "message_start",
            "message": {
                "id": "msg_fake_0001",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage.to_json(),
            }
        });
        self.event("message_start", &data)
    }

    /// `content_block_start` with a block.
    #[must_use]
    pub fn block_start(self, index: usize, block: &Value) -> Self {
        let data = json!({"type": "content_block_start", "index": index, "content_block": block});
        self.event("content_block_start", &data)
    }

    /// `content_block_delta` with a delta.
    #[must_use]
    pub fn block_delta(self, index: usize, delta: &Value) -> Self {
        let data = json!({"type": "content_block_delta", "index": index, "delta": delta});
        self.event("content_block_delta", &data)
    }

    /// `content_block_stop`.
    #[must_use]
    pub fn block_stop(self, index: usize) -> Self {
        self.event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    }

    /// A whole text block: start, one `text_delta` per part, stop.
    #[must_use]
    pub fn text(self, index: usize, parts: &[&str]) -> Self {
        let mut s = self.block_start(index, &json!({"type": "text", "text": ""}));
        for part in parts {
            s = s.block_delta(index, &json!({"type": "text_delta", "text": part}));
        }
        s.block_stop(index)
    }

    /// A whole thinking block: start, `thinking_delta`s, a `signature_delta`,
    /// stop.
    #[must_use]
    pub fn thinking(self, index: usize, parts: &[&str], signature: &str) -> Self {
        let start = json!({"type": "thinking", "thinking": "", "signature": ""});
        let mut s = self.block_start(index, &start);
        for part in parts {
            s = s.block_delta(index, &json!({"type": "thinking_delta", "thinking": part}));
        }
        s.block_delta(
            index,
            &json!({"type": "signature_delta", "signature": signature}),
        )
        .block_stop(index)
    }

    /// A `redacted_thinking` block (start and stop).
    #[must_use]
    pub fn redacted_thinking(self, index: usize, data: &str) -> Self {
        self.block_start(index, &json!({"type": "redacted_thinking", "data": data}))
            .block_stop(index)
    }

    /// The start of a `tool_use` block (its input follows as fragments).
    #[must_use]
    pub fn tool_use_start(self, index: usize, id: &str, name: &str) -> Self {
        self.block_start(
            index,
            &json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        )
    }

    /// An `input_json_delta` fragment of a `tool_use` block.
    #[must_use]
    pub fn input_json(self, index: usize, partial_json: &str) -> Self {
        self.block_delta(
            index,
            &json!({"type": "input_json_delta", "partial_json": partial_json}),
        )
    }

    /// `message_delta` with the stop reason and the output tokens.
    #[must_use]
    pub fn message_delta(self, stop_reason: &str, output_tokens: u64) -> Self {
        let data = json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens},
        });
        self.event("message_delta", &data)
    }

    /// `message_stop`.
    #[must_use]
    pub fn message_stop(self) -> Self {
        self.event("message_stop", &json!({"type": "message_stop"}))
    }

    /// `ping`.
    #[must_use]
    pub fn ping(self) -> Self {
        self.event("ping", &json!({"type": "ping"}))
    }

    /// An `error` event (`overloaded_error`, `api_error`, ...).
    #[must_use]
    pub fn error(self, kind: &str, message: &str) -> Self {
        let data = json!({"type": "error", "error": {"type": kind, "message": message}});
        self.event("error", &data)
    }

    /// The SSE text of the events so far.
    #[must_use]
    pub fn body(&self) -> String {
        self.frames().concat()
    }

    fn frames(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
            .collect()
    }

    /// A 200 `text/event-stream` response sending one chunk per event.
    #[must_use]
    pub fn into_response(self) -> ScriptedResponse {
        ScriptedResponse::sse(self.frames()).with_header("request-id", "req_fake_stream")
    }
}

/// A non-streamed reply: a `message` object with `content` blocks.
#[must_use]
pub fn message_response(
    model: &str,
    content: &Value,
    usage: Usage,
    output: u64,
) -> ScriptedResponse {
    let mut usage = usage.to_json();
    usage["output_tokens"] = output.into();
    let body = json!({
        "id": "msg_fake_0002",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": usage,
    });
    ScriptedResponse::json(200, &body).with_header("request-id", "req_fake_whole")
}

/// An API error response: `{"type": "error", "error": {"type", "message"}}`
/// with a `request-id` header.
#[must_use]
pub fn error_response(
    status: u16,
    kind: &str,
    message: &str,
    request_id: &str,
) -> ScriptedResponse {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    ScriptedResponse::json(status, &body).with_header("request-id", request_id)
}
