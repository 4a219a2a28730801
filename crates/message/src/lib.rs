//! Messages, content blocks and agent events — the types every Oxiscope crate
//! speaks, wire-compatible with AgentScope 2.0.
//!
//! This crate owns serde shapes and the pure logic over them: [`Msg`] and its
//! [`ContentBlock`]s, every [`AgentEvent`], [`Msg::append_event`] (rebuilding
//! a reply message from its event stream), token [`Usage`], [`ErrorInfo`],
//! ids and timestamps, and the [`PermissionRule`] data type that tool calls
//! carry. It does no I/O and has no async code; the agent loop, models and
//! tools live in other crates.
//!
//! JSON follows AgentScope: every declared field is written (absent values
//! as `null`), keys in AgentScope's order, enum values lowercase except event
//! tags (`TEXT_BLOCK_DELTA`), ids as 32 hex digits, timestamps as naive local
//! ISO 8601.
//!
//! A saved conversation is mostly ids, timestamps and empty metadata, so
//! those are held compactly: an [`Id`] keeps a short string inline, a
//! [`Stamp`] holds a canonical timestamp as packed fields, and [`Metadata`]
//! is one null pointer while empty. Each reads and writes exactly the JSON
//! a `String` / `Map` would.
//!
//! # Example
//!
//! ```
//! use oxiscope_message::{AgentEvent, Msg, ReplyFinishedReason};
//!
//! // A user message, checked against its role's rules.
//! let question = Msg::user("alice", "What's in this repo?")?;
//! assert_eq!(question.text("\n"), "What's in this repo?");
//!
//! // Rebuild a reply from its streamed events.
//! let events: Vec<AgentEvent> = serde_json::from_str(r#"[
//!   {"type": "TEXT_BLOCK_START", "reply_id": "r1", "block_id": "b1"},
//!   {"type": "TEXT_BLOCK_DELTA", "reply_id": "r1", "block_id": "b1", "delta": "A Rust "},
//!   {"type": "TEXT_BLOCK_DELTA", "reply_id": "r1", "block_id": "b1", "delta": "workspace."},
//!   {"type": "TEXT_BLOCK_END", "reply_id": "r1", "block_id": "b1"},
//!   {"type": "REPLY_END", "session_id": "s1", "reply_id": "r1"}
//! ]"#)?;
//! let mut reply = Msg::reply("Friday", "r1");
//! for event in &events {
//!     reply.append_event(event)?;
//! }
//! assert_eq!(reply.text(""), "A Rust workspace.");
//! assert_eq!(reply.finished_reason, Some(ReplyFinishedReason::Completed));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod append;
mod block;
mod de;
mod ending;
mod error;
mod event;
mod id;
mod meta;
mod msg;
mod permission;
mod reply;
mod shape;
pub mod stamp;
mod strlike;

pub use append::{Appended, is_input_event};
pub use block::{
    Base64Source, BlockKind, ContentBlock, DataBlock, DataSource, HintBlock, InvalidUrl,
    MediaBlock, RichContent, TextBlock, ThinkingBlock, ToolCallBlock, ToolCallState,
    ToolResultBlock, ToolResultState, UrlSource, normalize_url,
};
pub use ending::ReplyEnding;
pub use error::{AppendError, MsgError};
pub use event::*;
pub use id::Id;
pub use meta::Metadata;
pub use msg::{Msg, MsgContent, Role};
pub use permission::{PermissionBehavior, PermissionRule};
pub use reply::{ErrorInfo, ErrorType, FinishedReason, ReplyFinishedReason, ReplyOutcome, Usage};
pub use shape::{PrintHasher, PrintState};
pub use stamp::{FixedStamper, Stamp, Stamper, SystemStamper};
