//! Oxiscope, an agent framework wire-compatible with AgentScope 2.0: the
//! one dependency a Rust program that builds agents needs.
//!
//! Every part of the framework is re-exported here under a short module
//! name, and [`prelude`] brings in the names most programs use. The
//! `oxiscope` binary built from the same package is the command line
//! (`oxiscope chat`, `oxiscope serve`); this library does not need it.
//!
//! | module | what it holds | feature |
//! |---|---|---|
//! | [`message`] | `Msg`, content blocks, `AgentEvent`, usage | always |
//! | [`model`] | the `ChatModel` traits, credentials, model cards, structured output | always |
//! | [`providers`] | the chat models of each wire family (OpenAI, Anthropic, Gemini, Ollama, ...) | `openai`, `anthropic`, ... |
//! | [`permission`] | permission modes, rules and the decision engine | always |
//! | [`tool`] | the `Tool` trait, `Toolkit`, typed function tools, the built-in tools | always |
//! | [`agent`] | `Agent`, its state, middleware, pipelines | always |
//! | `mcp` | MCP servers' tools | `mcp` |
//! | `workspace` | workspaces, sandboxes, `equip` | `workspace` |
//! | `rag` | parsers, chunkers, vector stores, `KnowledgeBase`, RAG middleware | `rag` |
//! | `memory` | long-term memory middleware | `memory` |
//! | `a2a` | remote agents over A2A | `a2a` |
//! | [`render`] | the console renderer: any event stream as terminal text | always |
//! | `console` | `launch_console`: the console's input loop over any agent or pipeline | `console` |
//! | [`tape`] | record a run, replay it offline, find where two runs differ | always |
//! | `eval` | evaluation suites: tasks run `k` times, graded, reported | `eval` |
//! | `session`, `storage`, `server` | the agent service | `server` |
//!
//! The default features give everything, the command line included. A
//! program that wants a lean dependency tree takes
//! `default-features = false` and names the parts it uses, for example
//! `features = ["openai", "mcp"]`.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use oxiscope::prelude::*;
//! # use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A real program builds its model with `oxiscope::providers`
//! // (`chat_model_from_env()` reads the usual variables, e.g. OPENAI_API_KEY).
//! # let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([ScriptedTurn::text("Hello!")]));
//! let agent = Agent::builder("Friday", model).system_prompt("Be brief.").build()?;
//! let reply = agent.reply(Msg::user("alice", "Hi")?).await?;
//! assert_eq!(reply.text(""), "Hello!");
//! # Ok(())
//! # }
//! ```
//!
//! The `examples/` folder of the package shows one feature each: tools,
//! MCP servers, permissions, saving and resuming, structured output, RAG,
//! memory, pipelines, A2A, middleware and streaming.

#![deny(missing_docs)]

pub use oxiscope_agent as agent;
pub use oxiscope_message as message;
pub use oxiscope_model as model;
pub use oxiscope_permission as permission;
pub use oxiscope_providers as providers;
pub use oxiscope_tool as tool;

#[cfg(feature = "a2a")]
pub use oxiscope_a2a as a2a;
#[cfg(feature = "mcp")]
pub use oxiscope_mcp as mcp;
#[cfg(feature = "memory")]
pub use oxiscope_memory as memory;
#[cfg(feature = "rag")]
pub use oxiscope_rag as rag;
#[cfg(feature = "server")]
pub use oxiscope_server as server;
#[cfg(feature = "server")]
pub use oxiscope_session as session;
#[cfg(feature = "server")]
pub use oxiscope_storage as storage;
#[cfg(feature = "workspace")]
pub use oxiscope_workspace as workspace;

#[cfg(feature = "console")]
pub mod console;
mod env_model;
#[cfg(feature = "eval")]
pub mod eval;
pub mod prelude;
pub mod render;
pub mod tape;

pub use env_model::{EnvModelError, chat_model_from_env, chat_model_from_vars};
