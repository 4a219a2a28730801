//! A fake Ollama server: builders for the newline-delimited JSON replies of
//! `POST /api/chat`, written from Ollama's public API reference, to script a
//! [`FakeServer`](crate::FakeServer) with.
//!
//! ```
//! use oxiscope_test_support::ollama::OllamaStream;
//!
//! let reply = OllamaStream::new("llama3.2").content("Hel").content("lo").done(10, 2);
//! assert_eq!(reply.body().lines().count(), 3);
//! ```

use serde_json::{Value, json};

use crate::ScriptedResponse;

/// A scripted NDJSON reply, line by line. Nothing checks the order, so
/// broken streams can be scripted too.
#[derive(Debug, Clone)]
pub struct OllamaStream {
    model: String,
    lines: Vec<String>,
}

impl OllamaStream {
    /// An empty reply for `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            lines: Vec::new(),
        }
    }

    fn chunk(mut self, message: &Value) -> Self {
        let line = json!({
            "model": self.model,
            "created_at": "2025-01-01T12:00:00.000000Z",
            "message": message,
            "done": false,
        });
        self.lines.push(line.to_string());
        self
    }

    /// A chunk of answer text.
    #[must_use]
    pub fn content(self, text: &str) -> Self {
        self.chunk(&json!({"role": "assistant", "content": text}))
    }

    /// A chunk of reasoning text.
    #[must_use]
    pub fn thinking(self, text: &str) -> Self {
        self.chunk(&json!({"role": "assistant", "content": "", "thinking": text}))
    }

    /// A chunk with whole tool calls, each `(name, arguments object)`.
    #[must_use]
    pub fn tool_calls(self, calls: &[(&str, Value)]) -> Self {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(name, args)| json!({"function": {"name": name, "arguments": args}}))
            .collect();
        self.chunk(&json!({"role": "assistant", "content": "", "tool_calls": calls}))
    }

    /// The final line: `done: true` with the token counts.
    #[must_use]
    pub fn done(mut self, prompt_eval_count: u64, eval_count: u64) -> Self {
        let line = json!({
            "model": self.model,
            "created_at": "2025-01-01T12:00:01.000000Z",
            "message": {"role": "assistant", "content": ""},
            "done": true,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "load_duration": 1000,
            "prompt_eval_count": prompt_eval_count,
            "prompt_eval_duration": 1000,
            "eval_count": eval_count,
            "eval_duration": 1000,
        });
        self.lines.push(line.to_string());
        self
    }

    /// An `{"error": ...}` line, as Ollama sends mid-stream.
    #[must_use]
    pub fn error(mut self, message: &str) -> Self {
        self.lines.push(json!({"error": message}).to_string());
        self
    }

    /// A line as it is (for malformed lines).
    #[must_use]
    pub fn raw(mut self, line: &str) -> Self {
        self.lines.push(line.to_owned());
        self
    }

    /// The NDJSON text of the lines so far.
    #[must_use]
    pub fn body(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// A 200 `application/x-ndjson` response sending one chunk per line.
    #[must_use]
    pub fn into_response(self) -> ScriptedResponse {
        let chunks: Vec<String> = self.lines.iter().map(|l| format!("{l}\n")).collect();
        ScriptedResponse::new(200)
            .with_header("content-type", "application/x-ndjson")
            .with_chunks(chunks)
    }
}

/// An Ollama error response: `{"error": message}`.
#[must_use]
pub fn error_response(status: u16, message: &str) -> ScriptedResponse {
    ScriptedResponse::json(status, &json!({"error": message}))
}
