//! `Glob`: file names matching a pattern, newest first.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::file_tool::file_tool;
use crate::backend::GlobRequest;
use crate::chunk::ToolChunk;
use crate::tool::ToolCallContext;

/// Results shown when `head_limit` is not given.
const DEFAULT_LIMIT: usize = 100;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string",
                "description": "Glob such as `**/*.rs` or `src/*.{ts,tsx}`."},
            "path": {"type": "string",
                "description": "Directory to search in; the working directory when omitted."},
            "head_limit": {"type": "integer", "minimum": 0,
                "description": "Show at most this many paths (default 100, 0 for all)."},
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
    head_limit: Option<usize>,
    offset: usize,
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

async fn glob(args: Args, ctx: &ToolCallContext) -> ToolChunk {
    let root = args
        .path
        .as_deref()
        .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve(p));
    let request = GlobRequest {
        pattern: args.pattern,
        root,
    };
    let found = tokio::select! {
        found = ctx.backend.glob(request) => found,
        () = ctx.cancel.cancelled() => {
            return ToolChunk::error("Search interrupted.")
                .with_state(oxiscope_message::ToolResultState::Interrupted);
        }
    };
    let found = match found {
        Ok(found) => found,
        Err(e) => return ToolChunk::error(format!("Glob failed: {e}")),
    };
    let total = found.len();
    let limit = match args.head_limit {
        None => DEFAULT_LIMIT,
        Some(0) => usize::MAX,
        Some(n) => n,
    };
    let page: Vec<String> = found
        .iter()
        .skip(args.offset)
        .take(limit)
        .map(|m| m.path.display().to_string())
        .collect();
    let mut text = if total == 0 {
        "No files found".to_owned()
    } else if page.is_empty() {
        format!(
            "No files at offset {} ({total} found in total).",
            args.offset
        )
    } else {
        page.join("\n")
    };
    if !page.is_empty() && args.offset + page.len() < total {
        text.push_str(&format!(
            "\n(Showing {}-{} of {total} files. Use offset={} for more.)",
            args.offset + 1,
            args.offset + page.len(),
            args.offset + page.len()
        ));
    }
    ToolChunk::text(text).with_metadata("num_files", total)
}
