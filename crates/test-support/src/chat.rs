//! Small helpers for tests that call a chat model.

// Test helpers fail loudly.
#![allow(clippy::expect_used)]

use futures_util::StreamExt;
use oxiscope_message::Msg;
use oxiscope_model::{ChatRequest, ChatResponse, ChatStream, ModelError};

/// The conversation most provider tests send: a system prompt and a greeting.
///
/// # Panics
/// Never: both messages are valid.
#[must_use]
pub fn conversation() -> Vec<Msg> {
    vec![
        Msg::system("system", "You are Friday.").expect("a valid system message"),
        Msg::user("user", "Hi!").expect("a valid user message"),
    ]
}

/// A request with `msgs`, no tools and no tool choice.
#[must_use]
pub fn request(msgs: &[Msg]) -> ChatRequest<'_> {
    ChatRequest {
        messages: msgs,
        tools: &[],
        tool_choice: None,
    }
}

/// Every item of a stream: the chunks, then the error that ended it.
///
/// # Panics
/// When an item follows an error: an error must be the last item.
pub async fn drain(mut stream: ChatStream) -> (Vec<ChatResponse>, Option<ModelError>) {
    let mut chunks = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => chunks.push(chunk),
            Err(e) => {
                assert!(stream.next().await.is_none(), "an error is the last item");
                return (chunks, Some(e));
            }
        }
    }
    (chunks, None)
}
