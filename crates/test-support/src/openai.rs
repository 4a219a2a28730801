//! A fake OpenAI Chat Completions server: streamed and whole responses built
//! from a high-level script, and the API's error bodies.
//!
//! The chunks follow the public API reference: a first chunk with
//! `role: assistant` and empty content, one chunk per increment with
//! `usage: null`, a chunk with an empty delta and the `finish_reason`, with
//! `stream_options.include_usage` a last chunk with no choices and the
//! usage, then `data: [DONE]`.
//!
//! ```
//! use oxiscope_test_support::OpenAiScript;
//!
//! let script = OpenAiScript::new()
//!     .text("Hel")
//!     .text("lo")
//!     .finish("stop")
//!     .usage(12, 2, 0);
//! let body = script.body();
//! assert!(body.starts_with("data: {"));
//! assert!(body.ends_with("data: [DONE]\n\n"));
//! ```

use std::time::Duration;

use serde_json::{Value, json};

use crate::{BodyEnd, Chunk, ScriptedBody, ScriptedResponse};

/// The request id the error helpers send in `x-request-id`.
pub const OPENAI_REQUEST_ID: &str = "req_fake_0001";

/// One step of a scripted response.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Text(String),
    Reasoning(String),
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    Finish(String),
    Usage {
        prompt: u64,
        completion: u64,
        cached: u64,
    },
    /// A raw `data:` payload, for malformed chunks.
    Raw(String),
}

/// A scripted Chat Completions response, streamed ([`OpenAiScript::response`])
/// or whole ([`OpenAiScript::completion`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiScript {
    model: String,
    steps: Vec<Step>,
    done: bool,
}

impl Default for OpenAiScript {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiScript {
    /// An empty script for model `gpt-4.1-mini`, ending with `[DONE]`.
    #[must_use]
    pub fn new() -> Self {
        Self {
            model: "gpt-4.1-mini".to_owned(),
            steps: Vec::new(),
            done: true,
        }
    }

    /// Sets the model the chunks name.
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// A content delta.
    #[must_use]
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.steps.push(Step::Text(text.into()));
        self
    }

    /// A `reasoning_content` delta (DeepSeek, Qwen, vLLM).
    #[must_use]
    pub fn reasoning(mut self, text: impl Into<String>) -> Self {
        self.steps.push(Step::Reasoning(text.into()));
        self
    }

    /// The first fragment of tool call `index`: its id and name, no
    /// arguments yet.
    #[must_use]
    pub fn tool_call(
        mut self,
        index: usize,
        id: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        self.steps.push(Step::ToolCall {
            index,
            id: Some(id.into()),
            name: Some(name.into()),
            arguments: String::new(),
        });
        self
    }

    /// A fragment of the arguments of tool call `index`.
    #[must_use]
    pub fn tool_args(mut self, index: usize, arguments: impl Into<String>) -> Self {
        self.steps.push(Step::ToolCall {
            index,
            id: None,
            name: None,
            arguments: arguments.into(),
        });
        self
    }

    /// The chunk with the `finish_reason` (`stop`, `tool_calls`, `length`).
    #[must_use]
    pub fn finish(mut self, reason: impl Into<String>) -> Self {
        self.steps.push(Step::Finish(reason.into()));
        self
    }

    /// The usage chunk (no choices), as sent last with `include_usage`.
    #[must_use]
    pub fn usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        self.steps.push(Step::Usage {
            prompt,
            completion,
            cached,
        });
        self
    }

    /// A raw `data:` payload sent as is (for malformed chunks).
    #[must_use]
    pub fn raw(mut self, data: impl Into<String>) -> Self {
        self.steps.push(Step::Raw(data.into()));
        self
    }

    /// Leaves out the final `data: [DONE]`.
    #[must_use]
    pub fn without_done(mut self) -> Self {
        self.done = false;
        self
    }

    fn chunk(&self, choices: &Value, usage: &Value) -> String {
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self.model,
            "system_fingerprint": "fp_fake",
            "choices": choices,
            "usage": usage,
        })
        .to_string()
    }

    fn delta(&self, delta: &Value, finish: Option<&str>) -> String {
        let choice =
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]);
        self.chunk(&choice, &Value::Null)
    }

    /// The `data:` payloads in order: the role chunk, one per step, and
    /// `[DONE]` unless left out.
    #[must_use]
    pub fn payloads(&self) -> Vec<String> {
        let mut out = vec![self.delta(&json!({"role": "assistant", "content": ""}), None)];
        for step in &self.steps {
            out.push(match step {
                Step::Text(t) => self.delta(&json!({"content": t}), None),
                Step::Reasoning(t) => self.delta(&json!({"reasoning_content": t}), None),
                Step::ToolCall {
                    index,
                    id,
                    name,
                    arguments,
                } => {
                    let call = match (id, name) {
                        (Some(id), Some(name)) => json!({
                            "index": index, "id": id, "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }),
                        _ => json!({"index": index, "function": {"arguments": arguments}}),
                    };
                    self.delta(&json!({"tool_calls": [call]}), None)
                }
                Step::Finish(reason) => self.delta(&json!({}), Some(reason)),
                Step::Usage {
                    prompt,
                    completion,
                    cached,
                } => self.chunk(&json!([]), &usage_json(*prompt, *completion, *cached)),
                Step::Raw(raw) => raw.clone(),
            });
        }
        if self.done {
            out.push("[DONE]".to_owned());
        }
        out
    }

    /// The SSE events, each `data: ...\n\n`.
    #[must_use]
    pub fn events(&self) -> Vec<String> {
        self.payloads()
            .into_iter()
            .map(|p| format!("data: {p}\n\n"))
            .collect()
    }

    /// The whole SSE body.
    #[must_use]
    pub fn body(&self) -> String {
        self.events().concat()
    }

    /// A 200 `text/event-stream` response sending one event per chunk.
    #[must_use]
    pub fn response(&self) -> ScriptedResponse {
        ScriptedResponse::sse(self.events())
    }

    /// Like [`response`](Self::response), with `delay` before each event
    /// after the first `immediate` ones.
    #[must_use]
    pub fn response_paced(&self, immediate: usize, delay: Duration) -> ScriptedResponse {
        let chunks = self
            .events()
            .into_iter()
            .enumerate()
            .map(|(i, e)| Chunk {
                delay: if i < immediate { Duration::ZERO } else { delay },
                bytes: e.into(),
            })
            .collect();
        let mut response = ScriptedResponse::sse(Vec::<String>::new());
        response.body = ScriptedBody::Chunks {
            chunks,
            end: BodyEnd::Complete,
        };
        response
    }

    /// A response that sends the first `events` events, then cuts the
    /// connection.
    #[must_use]
    pub fn response_cut_after(&self, events: usize) -> ScriptedResponse {
        let sent: Vec<String> = self.events().into_iter().take(events).collect();
        ScriptedResponse::sse(sent).with_end(BodyEnd::Abort)
    }

    /// The same answer as one `chat.completion` JSON object (the response to
    /// a request without `stream`).
    #[must_use]
    pub fn completion_json(&self) -> Value {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut calls: Vec<(usize, Value)> = Vec::new();
        let mut finish = Value::Null;
        let mut usage = Value::Null;
        for step in &self.steps {
            match step {
                Step::Text(t) => content.push_str(t),
                Step::Reasoning(t) => reasoning.push_str(t),
                Step::ToolCall {
                    index,
                    id,
                    name,
                    arguments,
                } => {
                    if let (Some(id), Some(name)) = (id, name) {
                        calls.push((
                            *index,
                            json!({
                                "id": id, "type": "function",
                                "function": {"name": name, "arguments": arguments},
                            }),
                        ));
                    } else if let Some((_, call)) = calls.iter_mut().find(|(i, _)| i == index)
                        && let Some(Value::String(args)) = call.pointer_mut("/function/arguments")
                    {
                        args.push_str(arguments);
                    }
                }
                Step::Finish(reason) => finish = Value::String(reason.clone()),
                Step::Usage {
                    prompt,
                    completion,
                    cached,
                } => usage = usage_json(*prompt, *completion, *cached),
                Step::Raw(_) => {}
            }
        }
        let mut message = json!({"role": "assistant", "content": content, "refusal": null});
        if !reasoning.is_empty() {
            message["reasoning_content"] = Value::String(reasoning);
        }
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls.into_iter().map(|(_, c)| c).collect());
        }
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": usage,
        })
    }

    /// A 200 JSON response with [`completion_json`](Self::completion_json).
    #[must_use]
    pub fn completion(&self) -> ScriptedResponse {
        ScriptedResponse::json(200, &self.completion_json())
    }
}

fn usage_json(prompt: u64, completion: u64, cached: u64) -> Value {
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    })
}

/// An OpenAI error response: `{"error": {message, type, param, code}}` with
/// `x-request-id: `[`OPENAI_REQUEST_ID`].
#[must_use]
pub fn openai_error(
    status: u16,
    kind: &str,
    code: Option<&str>,
    message: &str,
) -> ScriptedResponse {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    ScriptedResponse::json(status, &body).with_header("x-request-id", OPENAI_REQUEST_ID)
}

/// 401 for a wrong API key.
#[must_use]
pub fn openai_invalid_api_key() -> ScriptedResponse {
    openai_error(
        401,
        "invalid_request_error",
        Some("invalid_api_key"),
        "Incorrect API key provided: sk-wrong. You can find your API key at your account page.",
    )
}

/// 429 for a rate limit, asking to retry after `retry_after_secs`.
#[must_use]
pub fn openai_rate_limited(retry_after_secs: u64) -> ScriptedResponse {
    openai_error(
        429,
        "requests",
        Some("rate_limit_exceeded"),
        "Rate limit reached for requests per minute. Please try again shortly.",
    )
    .with_header("retry-after", retry_after_secs.to_string())
}
