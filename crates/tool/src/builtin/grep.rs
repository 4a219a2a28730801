//! `Grep`: regex search of file contents on ripgrep's crates.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::file_tool::file_tool;
use super::glob::pagination_note;
use super::{INTERRUPTED_TEXT, non_negative};
use crate::backend::{GrepMode, GrepRequest};
use crate::chunk::ToolChunk;
use crate::tool::ToolCallContext;

/// Entries shown when `head_limit` is not given.
const DEFAULT_LIMIT: usize = 250;
/// Entries collected at most when the model asks for everything.
const HARD_LIMIT: usize = 20_000;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression (ripgrep syntax)."},
            "path": {"type": "string",
                "description": "File or directory to search; the working directory when omitted."},
            "output_mode": {"type": "string",
                "enum": ["content", "files_with_matches", "count"],
                "default": "files_with_matches",
                "description": "`content`: matching lines; `files_with_matches`: file paths; \
                    `count`: matches per file."},
            "glob": {"type": "string", "description": "Only files matching this glob, e.g. `*.rs`."},
            "type": {"type": "string", "description": "Only files of this type, e.g. `rust`, `py`."},
            "-A": {"type": "integer", "description": "Lines of context after each match."},
            "-B": {"type": "integer", "description": "Lines of context before each match."},
            "-C": {"type": "integer", "description": "Lines of context around each match."},
            "context": {"type": "integer", "description": "Same as -C."},
            "n": {"type": "boolean", "default": true,
                "description": "Show line numbers in content mode."},
            "i": {"type": "boolean", "default": false, "description": "Ignore case."},
            "case_insensitive": {"type": "boolean", "default": false, "description": "Ignore case."},
            "multiline": {"type": "boolean", "default": false,
                "description": "Let a match span lines; `.` then matches newlines."},
            "head_limit": {"type": "integer", "minimum": 0,
                "description": "Show at most this many entries (default 250, 0 for all)."},
            "offset": {"type": "integer", "default": 0, "minimum": 0,
                "description": "Skip this many entries first, to page through results."}
        },
        "required": ["pattern"]
    })
});

const DESCRIPTION: &str = "Search file contents with a regular expression, like ripgrep. \
Always use this instead of running grep or rg through Bash. Filter files with `glob` or \
`type`; choose `output_mode` content (lines, with -A/-B/-C context and line numbers), \
files_with_matches (default) or count. Files ignored by .gitignore, hidden files and binary \
files are skipped. Escape regex metacharacters to search for them literally (`fn\\(`); set \
`multiline` for patterns that cross lines.";

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    output_mode: String,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, rename = "type")]
    file_type: Option<String>,
    #[serde(default, rename = "-A")]
    after: Option<usize>,
    #[serde(default, rename = "-B")]
    before: Option<usize>,
    #[serde(default, rename = "-C")]
    around: Option<usize>,
    #[serde(default)]
    context: Option<usize>,
    n: bool,
    i: bool,
    case_insensitive: bool,
    multiline: bool,
    #[serde(default)]
    head_limit: Option<i64>,
    offset: i64,
}

file_tool! {
    /// Searches file contents in-process.
    pub struct Grep;
    /// A Grep tool judging paths relative to `env`.
    fn new;
    description: DESCRIPTION,
    schema: SCHEMA,
    flags: { read_only, concurrency_safe },
    args: Args,
    run: grep,
}

async fn grep(args: Args, ctx: &ToolCallContext) -> Result<ToolChunk, ToolChunk> {
    let head_limit = args
        .head_limit
        .map(|n| non_negative("head_limit", n))
        .transpose()?;
    let offset = non_negative("offset", args.offset)?;
    let mode = match args.output_mode.as_str() {
        "content" => GrepMode::Content,
        "count" => GrepMode::Count,
        _ => GrepMode::FilesWithMatches,
    };
    let around = args.around.or(args.context).unwrap_or(0);
    let limit = match head_limit {
        None => DEFAULT_LIMIT,
        Some(0) => HARD_LIMIT,
        Some(n) => n.min(HARD_LIMIT),
    };
    let root = args
        .path
        .as_deref()
        .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve(p));
    let request = GrepRequest {
        pattern: args.pattern.clone(),
        root,
        mode,
        glob: args.glob,
        file_type: args.file_type,
        before: args.before.unwrap_or(around),
        after: args.after.unwrap_or(around),
        line_numbers: args.n,
        case_insensitive: args.i || args.case_insensitive,
        multiline: args.multiline,
        // One more than shown tells whether a further page exists.
        max_entries: offset.saturating_add(limit).saturating_add(1),
    };
    let result = tokio::select! {
        result = ctx.backend.grep(request) => result,
        () = ctx.cancel.cancelled() => {
            return Err(ToolChunk::error(INTERRUPTED_TEXT)
                .with_state(oxiscope_message::ToolResultState::Interrupted));
        }
    };
    let out = result.map_err(|e| ToolChunk::error(format!("Grep failed: {e}")))?;
    if out.entries.is_empty() {
        let text = format!("No matches found for pattern: {}", args.pattern);
        return Ok(ToolChunk::text(text).with_metadata("num_files", 0));
    }
    let rest = out.entries.get(offset..).unwrap_or_default();
    let more = rest.len() > limit || (out.truncated && rest.len() >= limit);
    let text = if rest.is_empty() {
        // AgentScope answers an empty text here.
        format!("No entries at offset {offset}.")
    } else if more {
        let mut text = rest[..limit.min(rest.len())].join("\n");
        // `head_limit: 0` means all: a cut at the hard cap is reported too.
        text.push_str(&pagination_note(limit, offset));
        text
    } else {
        rest.join("\n")
    };
    Ok(ToolChunk::text(text)
        .with_metadata("num_files", out.files)
        .with_metadata("truncated", more))
}
