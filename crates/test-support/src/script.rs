//! Scripted responses: what the fake server answers.

use std::time::Duration;

use bytes::Bytes;

/// One response the fake server will give: status, headers and body.
#[derive(Debug, Clone)]
pub struct ScriptedResponse {
    /// The status code.
    pub status: u16,
    /// Headers, in order; names are case-insensitive.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: ScriptedBody,
    /// A wait before the response headers are sent.
    pub delay: Duration,
}

/// A scripted body.
#[derive(Debug, Clone)]
pub enum ScriptedBody {
    /// The whole body at once, with a `Content-Length`.
    Whole(Bytes),
    /// The body in chunks (chunked transfer encoding), each after its delay, then the end.
    Chunks {
        /// The chunks in order.
        chunks: Vec<Chunk>,
        /// How the body ends.
        end: BodyEnd,
    },
}

/// One chunk of a streamed body.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// A wait before the chunk is sent.
    pub delay: Duration,
    /// The bytes.
    pub bytes: Bytes,
}

/// How a streamed body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyEnd {
    /// With the final zero-length chunk: a complete body.
    Complete,
    /// The connection is cut without the final chunk: the client sees a broken body.
    Abort,
    /// The server stops sending but keeps the connection open (for idle timeouts).
    Stall,
}

impl ScriptedResponse {
    /// A response with `status`, no headers and an empty body.
    #[must_use]
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: ScriptedBody::Whole(Bytes::new()),
            delay: Duration::ZERO,
        }
    }

    /// A response with a JSON body and `content-type: application/json`.
    #[must_use]
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        Self::new(status)
            .with_header("content-type", "application/json")
            .with_body(value.to_string())
    }

    /// A response with a plain-text body.
    #[must_use]
    pub fn text(status: u16, text: impl Into<String>) -> Self {
        Self::new(status)
            .with_header("content-type", "text/plain")
            .with_body(text.into())
    }

    /// A 200 `text/event-stream` response streaming `chunks` (raw SSE bytes) without
    /// delays, then ending cleanly.
    #[must_use]
    pub fn sse<I, B>(chunks: I) -> Self
    where
        I: IntoIterator<Item = B>,
        B: Into<Bytes>,
    {
        Self::new(200)
            .with_header("content-type", "text/event-stream")
            .with_chunks(chunks)
    }

    /// Frames one server-sent event: an optional `event:` line, one `data:` line per line
    /// of `data`, and the blank line that ends it.
    ///
    /// ```
    /// use oxiscope_test_support::ScriptedResponse;
    ///
    /// assert_eq!(ScriptedResponse::sse_frame(None, "[DONE]"), "data: [DONE]\n\n");
    /// assert_eq!(
    ///     ScriptedResponse::sse_frame(Some("ping"), "a\nb"),
    ///     "event: ping\ndata: a\ndata: b\n\n"
    /// );
    /// ```
    #[must_use]
    pub fn sse_frame(event: Option<&str>, data: &str) -> String {
        let mut frame = String::with_capacity(data.len() + 16);
        if let Some(event) = event {
            frame.push_str("event: ");
            frame.push_str(event);
            frame.push('\n');
        }
        for line in data.split('\n') {
            frame.push_str("data: ");
            frame.push_str(line);
            frame.push('\n');
        }
        frame.push('\n');
        frame
    }

    /// Adds a header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets a whole body.
    #[must_use]
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = ScriptedBody::Whole(body.into());
        self
    }

    /// Sets a streamed body of `chunks` without delays, ending cleanly.
    #[must_use]
    pub fn with_chunks<I, B>(mut self, chunks: I) -> Self
    where
        I: IntoIterator<Item = B>,
        B: Into<Bytes>,
    {
        let chunks = chunks.into_iter().map(|b| Chunk {
            delay: Duration::ZERO,
            bytes: b.into(),
        });
        self.body = ScriptedBody::Chunks {
            chunks: chunks.collect(),
            end: BodyEnd::Complete,
        };
        self
    }

    /// Sets a streamed body made of `body` cut every `chunk_size` bytes (at least one),
    /// ending cleanly. Handy for replaying a recorded fixture with awkward chunk
    /// boundaries (inside a line, inside a UTF-8 character).
    #[must_use]
    pub fn with_body_in_chunks(self, body: impl Into<Bytes>, chunk_size: usize) -> Self {
        let body: Bytes = body.into();
        let size = chunk_size.max(1);
        let chunks = (0..body.len())
            .step_by(size)
            .map(|at| body.slice(at..(at + size).min(body.len())));
        self.with_chunks(chunks.collect::<Vec<_>>())
    }

    /// Appends one chunk sent after `delay`, turning a whole body into a streamed one.
    #[must_use]
    pub fn with_chunk_after(mut self, delay: Duration, bytes: impl Into<Bytes>) -> Self {
        let chunk = Chunk {
            delay,
            bytes: bytes.into(),
        };
        match &mut self.body {
            ScriptedBody::Chunks { chunks, .. } => chunks.push(chunk),
            ScriptedBody::Whole(whole) => {
                let mut chunks = Vec::new();
                if !whole.is_empty() {
                    chunks.push(Chunk {
                        delay: Duration::ZERO,
                        bytes: whole.clone(),
                    });
                }
                chunks.push(chunk);
                self.body = ScriptedBody::Chunks {
                    chunks,
                    end: BodyEnd::Complete,
                };
            }
        }
        self
    }

    /// Sets how a streamed body ends (a whole body becomes one chunk).
    #[must_use]
    pub fn with_end(mut self, end: BodyEnd) -> Self {
        if let ScriptedBody::Whole(whole) = &self.body {
            let chunks = if whole.is_empty() {
                Vec::new()
            } else {
                vec![Chunk {
                    delay: Duration::ZERO,
                    bytes: whole.clone(),
                }]
            };
            self.body = ScriptedBody::Chunks { chunks, end };
        } else if let ScriptedBody::Chunks { end: current, .. } = &mut self.body {
            *current = end;
        }
        self
    }

    /// Waits `delay` before sending the response headers.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}
