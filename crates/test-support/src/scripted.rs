//! A chat model that plays scripted answers in-process, for tests of code
//! that drives a [`ChatModel`] (agents, structured output, middleware).
//!
//! Each call takes the next [`ScriptedTurn`] from the script. A turn is a
//! list of [`ModelDelta`]s, streamed through [`oxiscope_model::accumulate`]
//! so the chunks look exactly like a real provider's; or an error that fails
//! the call before it starts; and it may end with an error mid-stream or
//! stop sending and hang (for cancellation tests). Every request is recorded.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use oxiscope_message::Msg;
use oxiscope_model::{
    ChatModel, ChatRequest, ChatStream, ChatUsage, DeltaStream, ModelDelta, ModelError, ToolChoice,
    ToolSchema,
};
use tokio_util::sync::CancellationToken;

/// The model name used when none is set; the reference streams use it too.
pub const SCRIPTED_MODEL_NAME: &str = "scripted-model";

/// One scripted answer of a [`ScriptedModel`]: what one call returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedTurn {
    kind: TurnKind,
}

#[derive(Debug, Clone, PartialEq)]
enum TurnKind {
    /// The call fails before it starts.
    Fail(ModelError),
    /// The call streams these deltas, then ends as `end` says.
    Stream {
        deltas: Vec<ModelDelta>,
        end: TurnEnd,
        next_tool_index: usize,
    },
}

/// How a streamed turn ends.
#[derive(Debug, Clone, PartialEq)]
enum TurnEnd {
    /// Normally: the accumulator emits the final chunk.
    Complete,
    /// With an error item after `after` chunks (deltas, after splitting).
    FailAfter { after: usize, error: ModelError },
    /// The stream stops sending after `after` chunks and never ends.
    HangAfter { after: usize },
}

impl ScriptedTurn {
    /// A turn that streams exactly these deltas.
    #[must_use]
    pub fn deltas(deltas: Vec<ModelDelta>) -> Self {
        let next_tool_index = deltas
            .iter()
            .filter_map(|d| match d {
                ModelDelta::ToolCall { index, .. } => Some(index + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Self {
            kind: TurnKind::Stream {
                deltas,
                end: TurnEnd::Complete,
                next_tool_index,
            },
        }
    }

    /// A text answer.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::deltas(vec![ModelDelta::Text(text.into())])
    }

    /// An answer that calls one tool with `args_json` as its arguments
    /// (kept verbatim, so it may be invalid JSON on purpose).
    #[must_use]
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        args_json: impl Into<String>,
    ) -> Self {
        Self::deltas(Vec::new()).and_tool_call(id, name, args_json)
    }

    /// A call that fails before streaming: [`ChatModel::call`] returns
    /// `error`.
    #[must_use]
    pub fn error(error: ModelError) -> Self {
        Self {
            kind: TurnKind::Fail(error),
        }
    }

    /// Appends answer text.
    #[must_use]
    pub fn and_text(self, text: impl Into<String>) -> Self {
        self.push(ModelDelta::Text(text.into()))
    }

    /// Appends another tool call, at the next provider index.
    #[must_use]
    pub fn and_tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        args_json: impl Into<String>,
    ) -> Self {
        if let TurnKind::Stream {
            deltas,
            next_tool_index,
            ..
        } = &mut self.kind
        {
            deltas.push(ModelDelta::ToolCall {
                index: *next_tool_index,
                id: Some(id.into()),
                name: Some(name.into()),
                arguments: args_json.into(),
            });
            *next_tool_index += 1;
        }
        self
    }

    /// Puts a thinking block before everything else.
    #[must_use]
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Self {
        if let TurnKind::Stream { deltas, .. } = &mut self.kind {
            deltas.insert(0, ModelDelta::Thinking(thinking.into()));
        }
        self
    }

    /// Reports this usage at the end of the stream, as providers do.
    #[must_use]
    pub fn with_usage(self, input_tokens: u64, output_tokens: u64) -> Self {
        self.push(ModelDelta::Usage(ChatUsage::tokens(
            input_tokens,
            output_tokens,
        )))
    }

    /// Ends the stream with `error` as an item after `after` chunks (counted
    /// after text splitting), instead of the final chunk.
    #[must_use]
    pub fn fail_after(mut self, after: usize, error: ModelError) -> Self {
        if let TurnKind::Stream { end, .. } = &mut self.kind {
            *end = TurnEnd::FailAfter { after, error };
        }
        self
    }

    /// Stops sending after `after` chunks and never ends: only cancelling
    /// the token (or dropping the stream) finishes the call.
    #[must_use]
    pub fn hang_after(mut self, after: usize) -> Self {
        if let TurnKind::Stream { end, .. } = &mut self.kind {
            *end = TurnEnd::HangAfter { after };
        }
        self
    }

    fn push(mut self, delta: ModelDelta) -> Self {
        if let TurnKind::Stream { deltas, .. } = &mut self.kind {
            deltas.push(delta);
        }
        self
    }
}

/// One request a [`ScriptedModel`] received, owned, for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedChatRequest {
    /// The conversation sent.
    pub messages: Vec<Msg>,
    /// The tools offered.
    pub tools: Vec<ToolSchema>,
    /// The tool choice, when one was given.
    pub tool_choice: Option<ToolChoice>,
}

/// A [`ChatModel`] that answers from a script, in order, and records every
/// request.
///
/// When the script is exhausted a call fails with
/// [`ModelError::InvalidRequest`] whose message says so; it never panics.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use futures_util::StreamExt;
/// use oxiscope_model::{ChatModel, ChatRequest};
/// use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
/// use tokio_util::sync::CancellationToken;
///
/// let model = ScriptedModel::new([ScriptedTurn::text("Hello there").with_usage(5, 2)])
///     .with_chunk_chars(5);
/// let request = ChatRequest { messages: &[], tools: &[], tool_choice: None };
/// let chunks: Vec<_> = model.call(request, CancellationToken::new()).await?.collect().await;
/// assert_eq!(chunks.len(), 4, "three text chunks, then the final one");
/// assert_eq!(model.requests().len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    script: Mutex<VecDeque<ScriptedTurn>>,
    requests: Mutex<Vec<RecordedChatRequest>>,
    chunk_chars: Option<usize>,
    chunk_delay: Option<Duration>,
    context_size: Option<u64>,
}

impl ScriptedModel {
    /// A model that plays `turns` in order, named [`SCRIPTED_MODEL_NAME`].
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        Self {
            name: SCRIPTED_MODEL_NAME.to_owned(),
            script: Mutex::new(turns.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            chunk_chars: None,
            chunk_delay: None,
            context_size: None,
        }
    }

    /// Sets the context window reported by [`ChatModel::context_size`].
    #[must_use]
    pub fn with_context_size(mut self, tokens: u64) -> Self {
        self.context_size = Some(tokens);
        self
    }

    /// Sets the name reported by [`ChatModel::model_name`].
    #[must_use]
    pub fn with_model_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Splits text, thinking and tool-argument deltas into pieces of at most
    /// `chars` characters (0 is treated as 1), as a provider streams them.
    #[must_use]
    pub fn with_chunk_chars(mut self, chars: usize) -> Self {
        self.chunk_chars = Some(chars.max(1));
        self
    }

    /// Waits `delay` before every chunk (use with `tokio::time::pause`).
    #[must_use]
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = Some(delay);
        self
    }

    /// Adds a turn at the end of the script.
    pub fn push(&self, turn: ScriptedTurn) {
        lock(&self.script).push_back(turn);
    }

    /// How many scripted turns are left.
    #[must_use]
    pub fn remaining(&self) -> usize {
        lock(&self.script).len()
    }

    /// Every request received so far, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedChatRequest> {
        lock(&self.requests).clone()
    }

    fn start(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<ChatStream, ModelError> {
        let call_number = {
            let mut requests = lock(&self.requests);
            requests.push(RecordedChatRequest {
                messages: request.messages.to_vec(),
                tools: request.tools.to_vec(),
                tool_choice: request.tool_choice.cloned(),
            });
            requests.len()
        };
        let turn = lock(&self.script)
            .pop_front()
            .ok_or_else(|| ModelError::InvalidRequest {
                message: format!(
                    "the scripted model has no answer left for call #{call_number}: \
                     the script is exhausted"
                ),
            })?;
        match turn.kind {
            TurnKind::Fail(error) => Err(error),
            TurnKind::Stream { deltas, end, .. } => {
                let steps = steps(deltas, &end, self.chunk_chars);
                Ok(oxiscope_model::accumulate(
                    play(steps, self.chunk_delay),
                    cancel,
                ))
            }
        }
    }
}

impl ChatModel for ScriptedModel {
    fn model_name(&self) -> &str {
        &self.name
    }

    fn context_size(&self) -> Option<u64> {
        self.context_size
    }

    fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> impl Future<Output = Result<ChatStream, ModelError>> + Send {
        std::future::ready(self.start(request, cancel))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the delta stream does next.
enum Step {
    Delta(ModelDelta),
    Fail(ModelError),
    Hang,
}

fn steps(deltas: Vec<ModelDelta>, end: &TurnEnd, chunk_chars: Option<usize>) -> Vec<Step> {
    let mut steps: Vec<Step> = deltas
        .into_iter()
        .flat_map(|d| split(d, chunk_chars))
        .map(Step::Delta)
        .collect();
    match end {
        TurnEnd::Complete => {}
        TurnEnd::FailAfter { after, error } => {
            steps.truncate(*after);
            steps.push(Step::Fail(error.clone()));
        }
        TurnEnd::HangAfter { after } => {
            steps.truncate(*after);
            steps.push(Step::Hang);
        }
    }
    steps
}

fn play(steps: Vec<Step>, delay: Option<Duration>) -> DeltaStream {
    stream::unfold(steps.into_iter(), move |mut rest| async move {
        let step = rest.next()?;
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        match step {
            Step::Delta(delta) => Some((Ok(delta), rest)),
            Step::Fail(error) => Some((Err(error), rest)),
            Step::Hang => {
                std::future::pending::<()>().await;
                None
            }
        }
    })
    .boxed()
}

/// Splits one delta into pieces of at most `chars` characters; only the
/// first piece of a tool call carries its id and name.
fn split(delta: ModelDelta, chars: Option<usize>) -> Vec<ModelDelta> {
    let Some(chars) = chars else {
        return vec![delta];
    };
    match delta {
        ModelDelta::Text(t) => pieces(&t, chars).map(ModelDelta::Text).collect(),
        ModelDelta::Thinking(t) => pieces(&t, chars).map(ModelDelta::Thinking).collect(),
        ModelDelta::ToolCall {
            index,
            id,
            name,
            arguments,
        } => {
            let mut head = Some((id, name));
            let mut out: Vec<ModelDelta> = pieces(&arguments, chars)
                .map(|arguments| {
                    let (id, name) = head.take().unwrap_or((None, None));
                    ModelDelta::ToolCall {
                        index,
                        id,
                        name,
                        arguments,
                    }
                })
                .collect();
            if let Some((id, name)) = head {
                // Empty arguments: still announce the call.
                out.push(ModelDelta::ToolCall {
                    index,
                    id,
                    name,
                    arguments: String::new(),
                });
            }
            out
        }
        other => vec![other],
    }
}

fn pieces(text: &str, chars: usize) -> impl Iterator<Item = String> + '_ {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .nth(chars)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiscope_message::{ContentBlock, FinishedReason, Msg};
    use oxiscope_model::ChatResponse;
    use pretty_assertions::assert_eq;

    const NO_REQUEST: ChatRequest<'static> = ChatRequest {
        messages: &[],
        tools: &[],
        tool_choice: None,
    };

    async fn run(model: &ScriptedModel) -> Vec<Result<ChatResponse, ModelError>> {
        let stream = model.call(NO_REQUEST, CancellationToken::new()).await;
        stream.unwrap().collect().await
    }

    fn delta_text(chunk: &ChatResponse) -> String {
        match &chunk.content[..] {
            [ContentBlock::Text(t)] => t.text.clone(),
            [ContentBlock::Thinking(t)] => t.thinking.clone(),
            [ContentBlock::ToolCall(c)] => c.input.clone(),
            other => format!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn text_is_split_into_chunks_of_n_chars_then_one_final_chunk() {
        let model = ScriptedModel::new([ScriptedTurn::text("héllo wörld").with_usage(7, 3)])
            .with_chunk_chars(4);
        let chunks: Vec<ChatResponse> = run(&model).await.into_iter().map(Result::unwrap).collect();
        let deltas: Vec<String> = chunks[..chunks.len() - 1].iter().map(delta_text).collect();
        assert_eq!(deltas, ["héll", "o wö", "rld"]);
        let last = chunks.last().unwrap();
        assert!(last.is_last);
        assert_eq!(last.finished_reason, FinishedReason::Completed);
        assert_eq!(delta_text(last), "héllo wörld");
        let usage = last.usage.as_ref().unwrap();
        assert_eq!((usage.input_tokens, usage.output_tokens), (7, 3));
    }

    #[tokio::test]
    async fn tool_call_arguments_are_split_and_only_the_first_piece_names_the_call() {
        let model = ScriptedModel::new([ScriptedTurn::text("ok")
            .and_tool_call("call_1", "Read", r#"{"path":"a"}"#)
            .and_tool_call("call_2", "Glob", "{}")])
        .with_chunk_chars(5);
        let chunks: Vec<ChatResponse> = run(&model).await.into_iter().map(Result::unwrap).collect();
        let last = chunks.last().unwrap();
        let calls: Vec<(String, String, String)> = last
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolCall(c) => {
                    Some((c.id.to_string(), c.name.clone(), c.input.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("call_1".into(), "Read".into(), r#"{"path":"a"}"#.into()),
                ("call_2".into(), "Glob".into(), "{}".into()),
            ]
        );
        // "ok" + 3 pieces of the first call's arguments + 1 of the second + final.
        assert_eq!(chunks.len(), 6);
    }

    #[tokio::test]
    async fn thinking_comes_first_and_turns_play_in_order() {
        let model = ScriptedModel::new([
            ScriptedTurn::text("answer").with_thinking("hmm"),
            ScriptedTurn::text("second"),
        ]);
        let first = run(&model).await;
        let kinds: Vec<&str> = first
            .last()
            .unwrap()
            .as_ref()
            .unwrap()
            .content
            .iter()
            .map(|b| b.kind().as_str())
            .collect();
        assert_eq!(kinds, ["thinking", "text"]);
        let second = run(&model).await;
        assert_eq!(delta_text(second[0].as_ref().unwrap()), "second");
        assert_eq!(model.remaining(), 0);
    }

    #[tokio::test]
    async fn an_exhausted_script_is_a_typed_error_not_a_panic() {
        let model = ScriptedModel::new([]);
        let Err(err) = model.call(NO_REQUEST, CancellationToken::new()).await else {
            panic!("expected an error");
        };
        assert!(
            matches!(&err, ModelError::InvalidRequest { message } if message.contains("exhausted"))
        );
        assert!(!err.is_retryable());
    }

    #[tokio::test]
    async fn a_scripted_error_fails_the_call_and_a_mid_stream_error_ends_the_stream() {
        let refused = ModelError::Connection {
            message: "refused".into(),
        };
        let cut = ModelError::Stream {
            message: "cut".into(),
        };
        let model = ScriptedModel::new([
            ScriptedTurn::error(refused.clone()),
            ScriptedTurn::text("abcdef").fail_after(2, cut.clone()),
        ])
        .with_chunk_chars(2);
        let Err(err) = model.call(NO_REQUEST, CancellationToken::new()).await else {
            panic!("expected an error");
        };
        assert_eq!(err, refused);
        let items = run(&model).await;
        assert_eq!(items.len(), 3);
        assert_eq!(delta_text(items[1].as_ref().unwrap()), "cd");
        assert_eq!(items[2].as_ref().unwrap_err(), &cut);
    }

    #[tokio::test]
    async fn a_hanging_stream_ends_interrupted_when_cancelled() {
        let model = ScriptedModel::new([ScriptedTurn::text("abcdef").hang_after(1)])
            .with_chunk_chars(3)
            .with_chunk_delay(Duration::from_millis(1));
        let cancel = CancellationToken::new();
        let mut stream = model.call(NO_REQUEST, cancel.clone()).await.unwrap();
        let first = stream.next().await.unwrap().unwrap();
        assert_eq!(delta_text(&first), "abc");
        cancel.cancel();
        let last = stream.next().await.unwrap().unwrap();
        assert!(last.is_last);
        assert_eq!(last.finished_reason, FinishedReason::Interrupted);
        assert_eq!(delta_text(&last), "abc");
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn every_request_is_recorded_with_its_tools_and_tool_choice() {
        let model = ScriptedModel::new([ScriptedTurn::text("a")]).with_model_name("m1");
        let msgs = [Msg::user("user", "hi").unwrap()];
        let tools = [ToolSchema::function("t", "d", serde_json::json!({}))];
        let choice = ToolChoice::tool("t");
        let request = ChatRequest {
            messages: &msgs,
            tools: &tools,
            tool_choice: Some(&choice),
        };
        drop(model.call(request, CancellationToken::new()).await.unwrap());
        assert_eq!(ChatModel::model_name(&model), "m1");
        assert_eq!(
            model.requests(),
            [RecordedChatRequest {
                messages: msgs.to_vec(),
                tools: tools.to_vec(),
                tool_choice: Some(choice),
            }]
        );
    }

    #[test]
    fn pieces_respect_char_boundaries() {
        let got: Vec<String> = pieces("日本語テキスト", 3).collect();
        assert_eq!(got, ["日本語", "テキス", "ト"]);
        assert_eq!(pieces("", 3).count(), 0);
    }
}
