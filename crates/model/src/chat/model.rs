//! The chat-model trait and the stream every implementation returns.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use futures_util::stream::{self, BoxStream, StreamExt};
use oxiscope_message::{FinishedReason, Msg};
use tokio_util::sync::CancellationToken;

use super::accumulate::{ModelDelta, ResponseAccumulator};
use super::error::ModelError;
use super::response::{ChatResponse, ToolChoice, ToolSchema};

/// A stream of response chunks: deltas, then exactly one `is_last` chunk
/// (unless an error item ends it).
pub type ChatStream = BoxStream<'static, Result<ChatResponse, ModelError>>;

/// A stream of decoded provider increments.
pub type DeltaStream = BoxStream<'static, Result<ModelDelta, ModelError>>;

/// What a model is asked.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// The conversation, system prompt first.
    pub messages: &'a [Msg],
    /// The tools the model may call.
    pub tools: &'a [ToolSchema],
    /// Which tools it may or must call.
    pub tool_choice: Option<&'a ToolChoice>,
}

/// A chat model: turns a conversation into a streamed answer.
///
/// # Contract
/// The returned stream yields delta chunks (`is_last == false`) carrying
/// only new content, then exactly one final chunk (`is_last == true`) with
/// the full content, the usage and the finish reason. A failure after the
/// stream began is an error item; a stream that ends without its final
/// chunk is a bug in the implementation. Invalid tool-call JSON from the
/// model is kept verbatim in the tool call's `input`.
///
/// # Cancel safety
/// Dropping the stream stops the call. To keep what arrived so far, cancel
/// the token passed to [`accumulate`]: the stream then ends with a final
/// chunk marked [`FinishedReason::Interrupted`].
pub trait ChatModel: Send + Sync + Debug {
    /// The model's name, as reported in `MODEL_CALL_START`.
    fn model_name(&self) -> &str;

    /// The model's context window in tokens, when known (from its model
    /// card); the agent's context management compresses against it.
    fn context_size(&self) -> Option<u64> {
        None
    }

    /// Starts a call.
    ///
    /// # Errors
    /// A [`ModelError`] when the call cannot start (authentication, a
    /// rejected request, no connection).
    fn call(
        &self,
        request: ChatRequest<'_>,
        cancel: CancellationToken,
    ) -> impl Future<Output = Result<ChatStream, ModelError>> + Send;
}

/// The object-safe twin of [`ChatModel`], implemented for every chat model,
/// for holding models as `Arc<dyn DynChatModel>`.
pub trait DynChatModel: Send + Sync + Debug {
    /// See [`ChatModel::model_name`].
    fn model_name(&self) -> &str;

    /// See [`ChatModel::context_size`].
    fn context_size(&self) -> Option<u64>;

    /// See [`ChatModel::call`].
    fn call_boxed<'a>(
        &'a self,
        request: ChatRequest<'a>,
        cancel: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = Result<ChatStream, ModelError>> + Send + 'a>>;
}

impl<T: ChatModel> DynChatModel for T {
    fn model_name(&self) -> &str {
        ChatModel::model_name(self)
    }

    fn context_size(&self) -> Option<u64> {
        ChatModel::context_size(self)
    }

    fn call_boxed<'a>(
        &'a self,
        request: ChatRequest<'a>,
        cancel: CancellationToken,
    ) -> Pin<Box<dyn Future<Output = Result<ChatStream, ModelError>> + Send + 'a>> {
        Box::pin(self.call(request, cancel))
    }
}

struct Driver {
    deltas: DeltaStream,
    acc: Option<ResponseAccumulator>,
    cancel: CancellationToken,
}

/// Turns decoded increments into a [`ChatStream`]: one chunk per content
/// delta, then the final accumulated chunk. When `cancel` fires, reading
/// stops and the final chunk (marked interrupted) holds what arrived so far.
/// An error item ends the stream without a final chunk.
pub fn accumulate(deltas: DeltaStream, cancel: CancellationToken) -> ChatStream {
    let driver = Driver {
        deltas,
        acc: Some(ResponseAccumulator::new()),
        cancel,
    };
    stream::unfold(driver, |mut d| async move {
        loop {
            let acc = d.acc.as_mut()?;
            let next = tokio::select! {
                biased;
                () = d.cancel.cancelled() => None,
                item = d.deltas.next() => Some(item),
            };
            match next {
                None => {
                    let acc = d.acc.take()?;
                    return Some((Ok(acc.finish(FinishedReason::Interrupted)), d));
                }
                Some(None) => {
                    let acc = d.acc.take()?;
                    return Some((Ok(acc.finish(FinishedReason::Completed)), d));
                }
                Some(Some(Err(e))) => {
                    d.acc = None;
                    return Some((Err(e), d));
                }
                Some(Some(Ok(delta))) => {
                    if let Some(chunk) = acc.push(delta) {
                        return Some((Ok(chunk), d));
                    }
                }
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use oxiscope_message::ContentBlock;

    fn text(s: &str) -> Result<ModelDelta, ModelError> {
        Ok(ModelDelta::Text(s.to_owned()))
    }

    #[tokio::test]
    async fn a_finished_stream_ends_with_one_complete_last_chunk() {
        let deltas = stream::iter(vec![text("a"), text("b")]).boxed();
        let chunks: Vec<_> = accumulate(deltas, CancellationToken::new()).collect().await;
        assert_eq!(chunks.len(), 3);
        let last = chunks[2].as_ref().unwrap();
        assert!(last.is_last);
        assert_eq!(last.finished_reason, FinishedReason::Completed);
        let ContentBlock::Text(t) = &last.content[0] else {
            panic!()
        };
        assert_eq!(t.text, "ab");
    }

    #[tokio::test]
    async fn cancelling_yields_what_arrived_marked_interrupted() {
        let cancel = CancellationToken::new();
        let deltas = stream::iter(vec![text("partial")])
            .chain(stream::pending())
            .boxed();
        let mut s = accumulate(deltas, cancel.clone());
        let first = s.next().await.unwrap().unwrap();
        assert!(!first.is_last);
        cancel.cancel();
        let last = s.next().await.unwrap().unwrap();
        assert!(last.is_last);
        assert_eq!(last.finished_reason, FinishedReason::Interrupted);
        let ContentBlock::Text(t) = &last.content[0] else {
            panic!()
        };
        assert_eq!(t.text, "partial");
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn an_error_item_ends_the_stream_without_a_last_chunk() {
        let err = ModelError::Stream {
            message: "cut".into(),
        };
        let deltas = stream::iter(vec![text("a"), Err(err.clone())]).boxed();
        let items: Vec<_> = accumulate(deltas, CancellationToken::new()).collect().await;
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].as_ref().unwrap_err(), &err);
    }
}
