//! How an Oxiscope agent acts on the world: the [`Tool`] trait, the
//! [`ToolChunk`]s a call streams, the shared [`Toolkit`] (tool groups,
//! `reset_tools`, skills, middleware, argument repair, [`ToolSource`]s
//! whose tools change while the toolkit is shared), tools from typed
//! Rust functions ([`FunctionTool`]) and the built-in tools (`Bash`,
//! `Read`, `Write`, `Edit`, `Glob`, `Grep`, the task tools) over an
//! [`ExecBackend`].
//!
//! This crate does not decide whether a call may run — that is
//! `oxiscope-permission`, which the tools answer through their permission
//! hooks ([`Toolkit::decide`]) — and it does not drive the conversation;
//! the agent loop calls [`Toolkit::call`] and turns chunks into events.
//! Per-session state (active groups, the read cache, tasks) lives in the
//! agent state as [`ToolContext`] and [`TasksContext`]; a call reaches it
//! through the [`SessionState`] handle in its [`ToolCallContext`].
//!
//! # Example
//!
//! ```
//! use oxiscope_tool::{FunctionTool, ToolCallContext, Toolkit, ToolContext, collect};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// Add two numbers.
//! #[derive(Deserialize, JsonSchema)]
//! struct Add {
//!     /// The first number.
//!     a: i64,
//!     /// The second number.
//!     b: i64,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let mut toolkit = Toolkit::new();
//! toolkit.register(FunctionTool::new("add", |x: Add| async move { (x.a + x.b).to_string() }))?;
//! assert_eq!(toolkit.schemas(&ToolContext::default())[0].function.name, "add");
//!
//! // "2" is repaired to 2 before the function sees it.
//! let ctx = ToolCallContext::local(std::env::temp_dir());
//! let response = collect(toolkit.call("add", r#"{"a": "2", "b": 3}"#, ctx).await).await;
//! assert_eq!(response.text(), "5");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
// Error tool results travel as `ToolChunk`s, once per call on a cold path;
// boxing them would only add noise.
#![allow(clippy::result_large_err)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod args;
mod backend;
mod builtin;
mod chunk;
mod error;
mod function;
mod middleware;
pub mod offload;
mod skill;
mod state;
mod tool;
mod toolkit;

pub use backend::{
    ExecBackend, ExecOutput, ExecRequest, FileMeta, GlobMatch, GlobRequest, GrepMode, GrepOpened,
    GrepOutput, GrepRequest, LocalBackend, pass_data_fd, run_process, search_glob, search_grep,
};
pub use builtin::{
    Bash, Edit, Glob, Grep, Read, TaskCreate, TaskGet, TaskList, TaskUpdate, Write, builtin_tools,
};
pub use chunk::{ToolChunk, ToolResponse};
pub use error::{Error, Result};
pub use function::{FunctionTool, IntoToolChunk};
pub use middleware::{Next, ToolInvocation, ToolMiddleware, collect, replay};
pub use offload::{FileOffloader, OffloadError, OffloadFs, Offloader};
pub use skill::{Skill, SkillLoader};
pub use state::{ReadCacheEntry, SessionState, Task, TaskState, TasksContext, ToolContext};
pub use tool::{AsPolicy, Tool, ToolCallContext, ToolFlags, ToolStream};
pub use toolkit::{
    BASIC_GROUP, DynamicTools, RESET_TOOLS, ToolGroup, ToolSet, ToolSource, Toolkit,
};
