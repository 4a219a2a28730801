//! `Grep`: regex search of file contents on ripgrep's crates.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::file_tool::file_tool;
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
    head_limit: Option<usize>,
    offset: usize,
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

async fn grep(args: Args, ctx: &ToolCallContext) -> ToolChunk {
    let mode = match args.output_mode.as_str() {
        "content" => GrepMode::Content,
        "count" => GrepMode::Count,
        _ => GrepMode::FilesWithMatches,
    };
    let around = args.around.or(args.context).unwrap_or(0);
    let limit = match args.head_limit {
        None => DEFAULT_LIMIT,
        Some(0) => HARD_LIMIT,
        Some(n) => n.min(HARD_LIMIT),
    };
    let root = args
        .path
        .as_deref()
        .map_or_else(|| ctx.cwd.clone(), |p| ctx.resolve(p));
    let request = GrepRequest {
        pattern: args.pattern,
        root,
        mode,
        glob: args.glob,
        file_type: args.file_type,
        before: args.before.unwrap_or(around),
        after: args.after.unwrap_or(around),
        line_numbers: args.n,
        case_insensitive: args.i || args.case_insensitive,
        multiline: args.multiline,
        max_entries: args.offset.saturating_add(limit),
    };
    let result = tokio::select! {
        result = ctx.backend.grep(request) => result,
        () = ctx.cancel.cancelled() => {
            return ToolChunk::error("Search interrupted.")
                .with_state(oxiscope_message::ToolResultState::Interrupted);
        }
    };
    let out = match result {
        Ok(out) => out,
        Err(e) => return ToolChunk::error(format!("Grep failed: {e}")),
    };
    let page: Vec<&String> = out.entries.iter().skip(args.offset).take(limit).collect();
    let mut text = if out.entries.is_empty() {
        "No matches found".to_owned()
    } else if page.is_empty() {
        format!("No entries at offset {}.", args.offset)
    } else {
        page.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    if mode == GrepMode::Count && !out.entries.is_empty() {
        text.push_str(&format!(
            "\n\nFound {} matching lines in {} files.",
            out.matches, out.files
        ));
    }
    if out.truncated {
        text.push_str(&format!(
            "\n(Results cut after {} entries. Use offset={} or a narrower search for more.)",
            args.offset + page.len(),
            args.offset + page.len()
        ));
    }
    ToolChunk::text(text)
        .with_metadata("num_files", out.files)
        .with_metadata("truncated", out.truncated)
}
