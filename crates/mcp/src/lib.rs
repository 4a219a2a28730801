//! The MCP client of Oxiscope, on the official `rmcp` crate: servers
//! reached over stdio (a child process) or streamable HTTP, their
//! connections supervised, their tools usable as Oxiscope [`Tool`]s.
//!
//! - [`McpClient`] is one server: stateful (one session, explicit
//!   [`connect`](McpClient::connect) / [`close`](McpClient::close), lazy
//!   start, restart of a dead server on the next use with bounded retries)
//!   or stateless (streamable HTTP, a session per request). Every step has
//!   a timeout ([`Timeouts`]); failures are typed [`Error`]s and `tracing`
//!   warnings. A `notifications/tools/list_changed` is counted
//!   ([`McpClient::tools_changed`]) and makes the next
//!   [`list_tools`](McpClient::list_tools) ask the server again.
//! - [`McpTool`] is one of its tools, named `mcp__{server}__{tool}`, with
//!   the server's input schema; `readOnlyHint` makes it read-only for the
//!   permission engine. Results become text and data blocks; a failure of
//!   any kind becomes an error tool result the model reads.
//! - [`register_mcp`] puts several servers' tools into a [`Toolkit`] (in
//!   `basic` or a tool group), listing them in parallel and skipping, with
//!   a warning, a server whose first listing fails. Each server becomes an
//!   [`McpToolSource`], a dynamic tool source of the toolkit: when a
//!   stateful client's server sends `notifications/tools/list_changed`, the
//!   notification handler spawns a background task that lists the tools
//!   again and swaps the source's snapshot, so the (shared, immutable)
//!   toolkit shows the new list on its next `schemas()` or call — nothing
//!   blocks or waits for the listing. A re-listing that fails withdraws that
//!   server's tools only, with a warning, until a later listing (the next
//!   announced change, [`McpToolSource::refresh`], or the retry started by
//!   a later read once its backoff passed) succeeds. The enable /
//!   disable filters apply to every listing. Stateless clients cannot hear
//!   announcements between requests; call `refresh` for them.
//!
//! This crate does not decide whether a call may run (that is
//! `oxiscope-permission`, through the [`Tool`] hooks) and keeps nothing
//! between processes.
//!
//! # Example
//!
//! ```no_run
//! use oxiscope_mcp::{McpClient, McpConfig, register_mcp};
//! use oxiscope_tool::{BASIC_GROUP, ToolCallContext, Toolkit, collect};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let files = McpClient::builder(
//!     "files",
//!     McpConfig::stdio("mcp-server-filesystem", ["/my/project"]),
//! )
//! .disable_tools(["write_file"])
//! .build()?;
//! files.connect().await?;
//!
//! let mut toolkit = Toolkit::new();
//! let report = register_mcp(&mut toolkit, &[files.clone()], BASIC_GROUP).await;
//! assert!(report.failed.is_empty());
//!
//! let ctx = ToolCallContext::local("/my/project");
//! let stream = toolkit
//!     .call("mcp__files__list_directory", r#"{"path": "."}"#, ctx)
//!     .await;
//! println!("{}", collect(stream).await.text());
//! files.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! [`Tool`]: oxiscope_tool::Tool
//! [`Toolkit`]: oxiscope_tool::Toolkit
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod client;
mod config;
mod convert;
mod error;
mod headers;
mod tool;
mod toolkit;
mod transport;

pub use client::{McpClient, McpClientBuilder};
pub use config::{HttpConfig, McpConfig, RestartPolicy, StdioConfig, Timeouts};
pub use error::{Error, Result};
pub use tool::{McpTool, tool_name};
pub use toolkit::{McpRegistration, McpToolSource, register_mcp};
