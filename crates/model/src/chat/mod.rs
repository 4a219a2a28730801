//! Chat models: the trait, requests, streamed responses and their
//! accumulation.

mod accumulate;
mod error;
mod formatter;
mod model;
mod response;

pub use accumulate::{ModelDelta, ResponseAccumulator};
pub use error::ModelError;
pub use formatter::Formatter;
pub use model::{ChatModel, ChatRequest, ChatStream, DeltaStream, DynChatModel, accumulate};
pub use response::{
    ChatResponse, ChatUsage, FunctionSchema, ToolChoice, ToolChoiceMode, ToolSchema,
};
