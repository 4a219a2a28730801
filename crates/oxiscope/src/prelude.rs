//! The names most programs use, in one import: `use oxiscope::prelude::*;`.
//!
//! Building an agent ([`Agent`], [`AgentState`], [`ReplyInput`]), its
//! messages and events ([`Msg`], [`AgentEvent`]), models ([`DynChatModel`],
//! [`chat_model_from_env`]), tools
//! ([`Toolkit`], [`FunctionTool`], [`Tool`]), permissions
//! ([`PermissionContext`], [`PermissionMode`], [`PermissionRule`]),
//! middleware ([`Middleware`]), pipelines ([`PipelineProtocol`],
//! [`GoalPipeline`]), and [`StreamExt`] for reading a reply stream.

pub use futures_util::StreamExt;
pub use oxiscope_agent::pipeline::{CancellationToken, GoalPipeline, PipelineProtocol};
pub use oxiscope_agent::{
    Agent, AgentBuilder, AgentError, AgentState, Awaiting, Middleware, ReplyInput, ReplyStream,
};
pub use oxiscope_message::{
    AgentEvent, ConfirmResult, ContentBlock, Msg, ReplyFinishedReason, Role, UserConfirmResultEvent,
};
pub use oxiscope_model::{ChatModel, DynChatModel};
pub use oxiscope_permission::{
    PermissionBehavior, PermissionContext, PermissionMode, PermissionRule,
};
pub use oxiscope_tool::{FunctionTool, Tool, ToolCallContext, Toolkit};

pub use crate::chat_model_from_env;
pub use crate::render::{ConsoleRenderer, RenderOptions};
