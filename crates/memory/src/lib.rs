//! Long-term memory for Oxiscope agents: [`AgenticMemoryMiddleware`],
//! memories the agent keeps itself as Markdown files.
//!
//! # How it works
//! The memory lives in a directory (`<workdir>/Memory` by default): one
//! Markdown file per memory, starting with front matter
//!
//! ```text
//! ---
//! name: User profile
//! description: When answering the user, read this for their location and answer style
//! type: user            # user | feedback | project | reference
//! ---
//! Lives in Hangzhou; prefers concise answers.
//! ```
//!
//! and an index, `MEMORY.md`, with one line per file
//! (`- [User profile](user_profile.md) — location and answer style`).
//! The agent writes both with the built-in `Write` / `Edit` tools and reads
//! them with `Read`; the middleware tells it how in the system prompt.
//!
//! - **Index in the system prompt**: every reply loads `MEMORY.md` (created
//!   empty when missing) and the system prompt gets the memory
//!   instructions plus the index, cut to `memory_max_lines` lines and
//!   `memory_max_tokens` tokens with a note saying how to read the rest.
//! - **Selected memories as hints** (modes `static_control` and `both`):
//!   when a reply starts with messages, a task lists the memory files
//!   (front matter only, newest first, at most `retrieval_max_files`) and
//!   asks the middleware's chat model which ones help with the input (a
//!   forced tool call answering `{"selected_files": [...]}`). The chosen
//!   files (at most `retrieval_max_selected`, each cut to
//!   `retrieval_max_tokens_per_md`) are injected once as a hint block
//!   before the first reasoning step that starts after the task finished;
//!   `retrieval_wait` lets the first step wait for it. A failed call or an
//!   answer that cannot be read injects nothing; names the model invents
//!   are dropped.
//! - **`memory_search` tool** (modes `agent_control` and `both`): offered
//!   through `list_tools`, a word search over the memory files.
//!
//! Files are read through an [`ExecBackend`](oxiscope_tool::ExecBackend):
//! by default the local file system confined to the memory directory (a
//! symbolic link leading out is refused); a workspace's backend can be
//! given instead. Every path is also checked to lie inside the directory.
//! Files without front matter, larger than `max_file_bytes`, not UTF-8 or
//! unreachable are skipped with a warning; nothing here fails a reply.
//!
//! ReMe and Mem0, AgentScope's other long-term memories, are not
//! provided: both are Python libraries (ReMe runs in-process, Mem0 needs
//! its own vector store and extraction stack), so there is nothing to
//! embed in a Rust process; the agentic memory needs nothing but files.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use oxiscope_memory::{AgenticMemoryMiddleware, MemoryMode, Parameters};
//! use oxiscope_model::DynChatModel;
//! use oxiscope_test_support::ScriptedModel;
//!
//! let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([]));
//! let dir = tempfile::tempdir()?;
//! let memory = AgenticMemoryMiddleware::builder(dir.path(), model)
//!     .parameters(Parameters { mode: MemoryMode::StaticControl, ..Parameters::default() })
//!     .build()?;
//! assert_eq!(memory.memory_dir(), dir.path().join("Memory"));
//! // Then: Agent::builder(..).middleware(memory) with the Read/Write/Edit tools.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod error;
mod frontmatter;
mod middleware;
mod params;
mod prompts;
mod search;
mod select;
mod store;
mod text;

pub use error::{Error, Result};
pub use frontmatter::{FrontMatter, FrontMatterError, parse_front_matter};
pub use middleware::{AgenticMemoryMiddleware, AgenticMemoryMiddlewareBuilder, DEFAULT_MEMORY_DIR};
pub use params::{MemoryMode, Parameters};
pub use prompts::{
    DEFAULT_MEMORY_INSTRUCTIONS, DEFAULT_RETRIEVAL_INSTRUCTIONS, EMPTY_INDEX, HINT_TEMPLATE,
    INDEX_CUT_NOTE, SEARCH_NUDGE,
};
pub use search::{MEMORY_SEARCH_TOOL, NOTHING_FOUND};
pub use store::{MEMORY_INDEX, MemoryFile};
