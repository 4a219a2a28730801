//! [`TapeRecorder`]: the middleware that records a run.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use oxiscope_agent::{
    ActingCall, ActingNext, EventStream, Middleware, ModelCall, ModelNext, ReplyCall, ReplyInput,
    ReplyNext,
};
use oxiscope_model::{ChatResponse, ChatStream, ModelError};
use oxiscope_tool::{ToolChunk, ToolStream};

use super::normalize::{aliased, redacted};
use super::{Tape, TapeEntry};

/// Records every reply of the agent it is added to (as its first
/// middleware, so it sees what the model and the consumer see); clone it
/// to keep a handle, and take the tape with [`tape`](Self::tape).
///
/// ```
/// use std::sync::Arc;
/// use oxiscope::prelude::*;
/// use oxiscope::tape::TapeRecorder;
/// # use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hi!")]));
/// let recorder = TapeRecorder::new().with_secret("hunter2");
/// let agent = Agent::builder("Friday", model).middleware(recorder.clone()).build()?;
/// agent.reply(Msg::user("user", "My password is hunter2.")?).await?;
/// let jsonl = recorder.tape().to_jsonl();
/// assert!(jsonl.contains("[REDACTED]") && !jsonl.contains("hunter2"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct TapeRecorder {
    state: Arc<Mutex<State>>,
    secrets: Arc<Vec<String>>,
    aliases: Arc<Vec<(String, String)>>,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<TapeEntry>,
    model_calls: usize,
}

impl TapeRecorder {
    /// A recorder with an empty tape.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Also redacts `secret` wherever it appears (keys, passwords).
    #[must_use]
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.secrets).push(secret.into());
        self
    }

    /// Writes `placeholder` wherever `text` appears, for a run in a place
    /// of its own (a temporary directory): tapes of runs in different
    /// places then compare equal, and a [`TapeReplayer`](super::TapeReplayer)
    /// given the same alias puts its own place back.
    #[must_use]
    pub fn with_alias(mut self, text: impl Into<String>, placeholder: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.aliases).push((text.into(), placeholder.into()));
        self
    }

    /// What was recorded so far, with its secrets redacted and its aliases
    /// applied (done here, not while the run goes, which only keeps the
    /// entries).
    #[must_use]
    pub fn tape(&self) -> Tape {
        let entries = self.lock().entries.clone();
        Tape {
            entries: entries.into_iter().map(|e| self.redacted(e)).collect(),
        }
    }

    /// `entry` with the secrets redacted and the aliases applied.
    fn redacted(&self, entry: TapeEntry) -> TapeEntry {
        match serde_json::to_value(&entry) {
            Ok(value) => {
                let value = redacted(aliased(value, &self.aliases), &self.secrets);
                serde_json::from_value(value).unwrap_or(entry)
            }
            Err(_) => entry,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `entry` (redacted when the tape is taken).
    fn push(&self, entry: TapeEntry) {
        self.lock().entries.push(entry);
    }
}

impl Middleware for TapeRecorder {
    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        self.push(input_entry(&call.input));
        let recorder = self.clone();
        Box::pin(next.run(call).map(move |event| {
            recorder.push(TapeEntry::Event {
                event: event.clone(),
            });
            event
        }))
    }

    fn on_model_call<'a>(
        &'a self,
        call: ModelCall<'a>,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        let number = {
            let mut state = self.lock();
            state.model_calls += 1;
            state.model_calls - 1
        };
        self.push(TapeEntry::ModelRequest {
            call: number,
            messages: call.messages.to_vec(),
            tools: call.tools.to_vec(),
        });
        Box::pin(async move {
            match next.run(call).await {
                Ok(stream) => Ok(self.record_response(number, stream)),
                Err(error) => {
                    self.push(TapeEntry::ModelResponse {
                        call: number,
                        chunks: Vec::new(),
                        error: Some(error.to_string()),
                    });
                    Err(error)
                }
            }
        })
    }

    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        Box::pin(async move {
            let (call_id, name, input) = (
                call.call.id.to_string(),
                call.call.name.clone(),
                call.input.clone(),
            );
            let stream = next.run(call).await;
            let recorder = self.clone();
            tapped(stream, move |chunks| {
                recorder.push(TapeEntry::ToolResult {
                    call_id,
                    name,
                    input,
                    chunks,
                });
            })
        })
    }
}

impl TapeRecorder {
    /// `stream`, recording its chunks (and the error ending it) as the
    /// response of call `number` when it ends.
    fn record_response(&self, number: usize, stream: ChatStream) -> ChatStream {
        let recorder = self.clone();
        Box::pin(futures_util::stream::unfold(
            (stream, Vec::<ChatResponse>::new(), Some(recorder)),
            move |(mut stream, mut chunks, recorder)| async move {
                let recorder = recorder?;
                match stream.next().await {
                    Some(Ok(chunk)) => {
                        chunks.push(chunk.clone());
                        if chunk.is_last {
                            // The consumer may stop reading at the last chunk.
                            recorder.push(TapeEntry::ModelResponse {
                                call: number,
                                chunks: std::mem::take(&mut chunks),
                                error: None,
                            });
                            return Some((Ok(chunk), (stream, chunks, None)));
                        }
                        Some((Ok(chunk), (stream, chunks, Some(recorder))))
                    }
                    Some(Err(error)) => {
                        recorder.push(TapeEntry::ModelResponse {
                            call: number,
                            chunks: std::mem::take(&mut chunks),
                            error: Some(error.to_string()),
                        });
                        // An error is the last item.
                        Some((Err(error), (stream, chunks, None)))
                    }
                    None => {
                        recorder.push(TapeEntry::ModelResponse {
                            call: number,
                            chunks,
                            error: None,
                        });
                        None
                    }
                }
            },
        ))
    }
}

/// The entry of a reply's input.
pub(super) fn input_entry(input: &ReplyInput) -> TapeEntry {
    let (messages, event) = match input {
        ReplyInput::Msgs(messages) => (messages.clone(), None),
        ReplyInput::Confirm(e) => (Vec::new(), Some(e.clone().into())),
        ReplyInput::External(e) => (Vec::new(), Some(e.clone().into())),
        ReplyInput::Interrupt(e) => (Vec::new(), Some(e.clone().into())),
        ReplyInput::Continue => (Vec::new(), None),
    };
    TapeEntry::Input { messages, event }
}

/// `stream`, handing what it streamed to `ended` when it ends.
pub(super) fn tapped(
    stream: ToolStream,
    ended: impl FnOnce(Vec<ToolChunk>) + Send + 'static,
) -> ToolStream {
    let recorded: BoxStream<'static, ToolChunk> = Box::pin(futures_util::stream::unfold(
        (stream, Vec::new(), Some(ended)),
        |(mut stream, mut chunks, ended)| async move {
            let ended = ended?;
            match stream.next().await {
                Some(chunk) => {
                    chunks.push(chunk.clone());
                    Some((chunk, (stream, chunks, Some(ended))))
                }
                None => {
                    ended(chunks);
                    None
                }
            }
        },
    ));
    recorded
}
