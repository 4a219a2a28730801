//! `Edit`: exact string replacement in a file that was read first.

use std::fmt::Write as _;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::file_state::{check_fresh, record_write, to_crlf, uses_crlf};
use super::file_tool::file_tool;
use crate::chunk::ToolChunk;
use crate::tool::ToolCallContext;

/// Lines of context shown around the first change.
const SNIPPET_CONTEXT: usize = 3;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute path of the file to edit."},
            "old_string": {"type": "string", "minLength": 1,
                "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "default": false,
                "description": "Replace every occurrence instead of exactly one."}
        },
        "required": ["file_path", "old_string", "new_string"]
    })
});

const DESCRIPTION: &str = "Replace exact text in a file. The file must have been read with \
Read in this session and not changed since. `old_string` must appear exactly once unless \
`replace_all` is true; include enough surrounding lines to make it unique. Copy the text \
exactly, without the line-number prefix Read adds. Line endings of the file are kept.";

#[derive(Deserialize)]
struct Args {
    file_path: String,
    old_string: String,
    new_string: String,
    replace_all: bool,
}

file_tool! {
    /// Replaces text in one file, enforcing read-before-write.
    pub struct Edit;
    /// An Edit tool judging paths relative to `env`.
    fn new;
    description: DESCRIPTION,
    schema: SCHEMA,
    flags: { state_injected },
    args: Args,
    run: edit,
}

async fn edit(args: Args, ctx: &ToolCallContext) -> Result<ToolChunk, ToolChunk> {
    let path = ctx.resolve(&args.file_path);
    let shown = path.display().to_string();
    let backend = ctx.backend.as_ref();
    let meta = backend.metadata(&path).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolChunk::error(format!(
            "File does not exist: {shown}. Use Write to create a new file."
        )),
        _ => ToolChunk::error(format!("Cannot edit {shown}: {e}")),
    })?;
    if meta.is_dir {
        return Err(ToolChunk::error(format!("{shown} is a directory.")));
    }
    let text = check_fresh(backend, &ctx.session, &path, meta.modified).await?;
    if args.old_string == args.new_string {
        return Err(ToolChunk::error(
            "old_string and new_string are identical; there is nothing to change.",
        ));
    }
    let (old, new) = if uses_crlf(&text) && !args.old_string.contains('\r') {
        (to_crlf(&args.old_string), to_crlf(&args.new_string))
    } else {
        (args.old_string, args.new_string)
    };
    let count = text.matches(old.as_str()).count();
    if count == 0 {
        return Err(ToolChunk::error(format!(
            "old_string was not found in {shown}. Check whitespace and indentation, and \
             read the file again if it may have changed."
        )));
    }
    if count > 1 && !args.replace_all {
        return Err(ToolChunk::error(format!(
            "old_string appears {count} times in {shown}. Add surrounding lines to make it \
             unique, or set replace_all to true to change every occurrence."
        )));
    }
    let first = text.find(old.as_str()).unwrap_or(0);
    let updated = if args.replace_all {
        text.replace(old.as_str(), &new)
    } else {
        text.replacen(old.as_str(), &new, 1)
    };
    backend
        .write(&path, updated.as_bytes())
        .await
        .map_err(|e| ToolChunk::error(format!("Cannot write {shown}: {e}")))?;
    record_write(backend, &ctx.session, &path, &updated).await;

    let mut out = format!(
        "Edited {shown}: replaced {count} occurrence{}.\n",
        if count == 1 { "" } else { "s" }
    );
    out.push_str(&snippet(&updated, first, new.len()));
    Ok(ToolChunk::text(out)
        .with_metadata("file_path", shown)
        .with_metadata("replacements", count))
}

/// The changed region (from byte `start`, `len` bytes long) with a few
/// lines around it, numbered like Read's output.
fn snippet(text: &str, start: usize, len: usize) -> String {
    let first_line = text[..start.min(text.len())].matches('\n').count();
    let end = (start + len).min(text.len());
    let last_line = first_line + text.get(start..end).map_or(0, |s| s.matches('\n').count());
    let from = first_line.saturating_sub(SNIPPET_CONTEXT);
    let to = last_line + SNIPPET_CONTEXT;
    let mut out = String::new();
    for (i, line) in text.lines().enumerate().skip(from).take(to - from + 1) {
        let _ = writeln!(out, "{:>6}\t{}", i + 1, line.trim_end_matches('\r'));
    }
    out
}
