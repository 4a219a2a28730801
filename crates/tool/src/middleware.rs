//! Onion hooks around tool calls: [`ToolMiddleware`] and [`Next`].

use std::fmt;
use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::Value;

use crate::chunk::{ToolChunk, ToolResponse};
use crate::tool::{Tool, ToolCallContext, ToolStream};

/// One tool call on its way through the middleware chain.
#[derive(Debug, Clone)]
pub struct ToolInvocation {
    /// The tool being called.
    pub tool: Arc<dyn Tool>,
    /// The validated arguments (a middleware may rewrite them).
    pub input: Value,
    /// The call context.
    pub ctx: ToolCallContext,
}

/// A hook around every tool call of a toolkit.
///
/// Middleware forms an onion: the first one registered is the outermost,
/// it sees the call first and the chunks last. A middleware may change the
/// invocation, skip the tool by returning its own stream, or map the
/// chunks. Streaming and non-streaming tools look the same here (a
/// non-streaming tool yields one chunk); use [`collect`] to get the whole
/// response.
pub trait ToolMiddleware: Send + Sync + fmt::Debug {
    /// Handles `call`; `next.run(call)` continues down the chain.
    fn call(&self, call: ToolInvocation, next: Next) -> ToolStream;
}

/// The rest of the middleware chain, ending in the tool itself.
#[derive(Debug, Clone)]
pub struct Next {
    chain: Arc<[Arc<dyn ToolMiddleware>]>,
    index: usize,
}

impl Next {
    pub(crate) fn new(chain: Arc<[Arc<dyn ToolMiddleware>]>) -> Self {
        Self { chain, index: 0 }
    }

    /// Passes `call` to the next middleware, or to the tool after the last.
    #[must_use]
    pub fn run(self, call: ToolInvocation) -> ToolStream {
        match self.chain.get(self.index).cloned() {
            Some(middleware) => {
                let next = Self {
                    chain: self.chain,
                    index: self.index + 1,
                };
                middleware.call(call, next)
            }
            None => call.tool.call(call.input, call.ctx),
        }
    }
}

/// Adds up a tool stream into one response.
///
/// # Cancel safety
///
/// Dropping the future drops the stream (and abandons the call).
pub async fn collect(mut stream: ToolStream) -> ToolResponse {
    let mut response = ToolResponse::new();
    while let Some(chunk) = stream.next().await {
        let last = chunk.is_last;
        response.append_chunk(chunk);
        if last {
            break;
        }
    }
    response
}

/// A response as a stream of one final chunk, for middleware that works on
/// whole responses.
#[must_use]
pub fn replay(response: ToolResponse) -> ToolStream {
    let state = match response.state {
        oxiscope_message::ToolResultState::Running => oxiscope_message::ToolResultState::Success,
        other => other,
    };
    let mut chunk = ToolChunk::new(response.content, state);
    chunk.metadata = response.metadata;
    crate::tool::once(chunk)
}
