//! The A2A agent behind the pipeline interface, so it can stand where an
//! `Agent` stands.

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream;
use oxiscope_agent::ReplyInput;
use oxiscope_agent::pipeline::{
    CancellationToken, PipelineError, PipelineEvents, PipelineProtocol,
};
use serde_json::Value;

use crate::agent::A2AAgent;
use crate::error::Error;
use crate::state::A2AAgentState;

impl PipelineProtocol for A2AAgent {
    /// Messages (or no input: the observed ones) are sent as a reply. An
    /// interrupt is a no-op (nothing is ever parked: the stream is empty);
    /// a confirmation or external-execution result is answered by a reply
    /// that ends with an [`Error::InvalidInput`] error.
    fn reply_stream(&self, input: ReplyInput, cancel: CancellationToken) -> PipelineEvents {
        let input = match input {
            ReplyInput::Msgs(msgs) => Ok(msgs),
            ReplyInput::Continue => Ok(Vec::new()),
            ReplyInput::Interrupt(_) => return stream::empty().boxed(),
            ReplyInput::Confirm(_) | ReplyInput::External(_) => Err(Error::InvalidInput(
                "an A2A agent never waits for confirmations or external results".to_owned(),
            )),
        };
        self.start(input, cancel).boxed()
    }

    fn save_state(&self) -> BoxFuture<'_, Value> {
        Box::pin(async move {
            // Strings and options only: it always serialises.
            serde_json::to_value(self.state().await).unwrap_or(Value::Null)
        })
    }

    fn load_state(&self, state: Value) -> BoxFuture<'_, Result<(), PipelineError>> {
        Box::pin(async move {
            let state: A2AAgentState = serde_json::from_value(state)?;
            self.set_state(state).await;
            Ok(())
        })
    }
}
