//! `Glob`: file names matching a pattern, newest first.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::file_tool::file_tool;
use super::{INTERRUPTED_TEXT, non_negative};
use crate::backend::GlobRequest;
use crate::chunk::ToolChunk;
use crate::tool::ToolCallContext;

/// Results shown when `head_limit` is not given.
const DEFAULT_LIMIT: usize = 250;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string",
                "description": "Glob such as `**/*.rs` or `src/*.{ts,tsx}`."},
            "path": {"type": "string",
                "description": "Directory to search in; the working directory when omitted."},
            "head_limit": {"type": "integer", "minimum": 0,
                "description": "Show at most this many paths (default 250, 0 for all)."},
            "offset": {"type": "integer", "minimum": 0, "default": 0,
                "description": "Skip this many paths first, to page through results."}
        },
        "required": ["pattern"]
    })
});

const DESCRIPTION: &str = "Find files by name with a glob pattern (`**/*.rs`, \
`src/**/mod.{rs,ts}`), matched against paths relative to the search directory. Files ignored \
by .gitignore and hidden files are skipped. Results are absolute paths, most recently \
modified first. Use Grep to search inside files.";

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    head_limit: Option<i64>,
    offset: i64,
}

file_tool! {
    /// Lists files matching a glob, respecting ignore files.
    pub struct Glob;
    /// A Glob tool judging paths relative to `env`.
    fn new;
    description: DESCRIPTION,
    schema: SCHEMA,
    flags: { read_only, concurrency_safe },
    args: Args,
    run: glob,
}

async fn glob(args: Args, ctx: &ToolCallContext) -> Result<ToolChunk, ToolChunk> {
    let head_limit = args
        .head_limit
        .map(|n| non_negative("head_limit", n))
        .transpose()?;
    let offset = non_negative("offset", args.offset)?;
    let root = args
        .path
        .as_deref()
        .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve(p));
    if !ctx.backend.metadata(&root).await.is_ok_and(|m| m.is_dir) {
        return Err(ToolChunk::error(format!(
            "Directory not found: {}",
            root.display()
        )));
    }
    let request = GlobRequest {
        pattern: args.pattern.clone(),
        root,
    };
    let found = tokio::select! {
        found = ctx.backend.glob(request) => found,
        () = ctx.cancel.cancelled() => {
            return Err(ToolChunk::error(INTERRUPTED_TEXT)
                .with_state(oxiscope_message::ToolResultState::Interrupted));
        }
    };
    let found = found.map_err(|e| ToolChunk::error(format!("Glob failed: {e}")))?;
    let total = found.len();
    let paths: Vec<String> = found.iter().map(|m| m.path.display().to_string()).collect();
    let text = if total == 0 {
        format!("No files found matching pattern: {}", args.pattern)
    } else {
        page_text(&paths, head_limit, offset)
    };
    Ok(ToolChunk::text(text).with_metadata("num_files", total))
}

/// One page of `items` (`head_limit` 0: all of them) in AgentScope's words:
/// the items one a line, then a pagination note when more follow. A page
/// past the end says so instead of being empty.
fn page_text(items: &[String], head_limit: Option<usize>, offset: usize) -> String {
    let limit = head_limit.unwrap_or(DEFAULT_LIMIT);
    let rest = items.get(offset..).unwrap_or_default();
    if rest.is_empty() {
        return format!(
            "No files at offset {offset} ({} found in total).",
            items.len()
        );
    }
    if limit == 0 || rest.len() <= limit {
        return rest.join("\n");
    }
    let mut text = rest[..limit].join("\n");
    text.push_str(&pagination_note(limit, offset));
    text
}

/// `[Showing results with pagination = limit: N, offset: M]` after a blank
/// line (the offset only when not zero).
pub(super) fn pagination_note(limit: usize, offset: usize) -> String {
    let mut note = format!("\n\n[Showing results with pagination = limit: {limit}");
    if offset > 0 {
        note.push_str(&format!(", offset: {offset}"));
    }
    note.push(']');
    note
}
