//! `Edit`: exact string replacement in a file that was read first.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::diff::unified_diff;
use super::file_state::{Writer, check_fresh, record_write, to_crlf, uses_crlf};
use super::file_tool::file_tool;
use crate::chunk::ToolChunk;
use crate::tool::ToolCallContext;

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
    if args.old_string.is_empty() {
        return Err(ToolChunk::error(
            "Error: old_string must not be empty. Use the Write tool to populate an empty file.",
        ));
    }
    let path = ctx.resolve(&args.file_path);
    let shown = path.display().to_string();
    let backend = ctx.backend.as_ref();
    let meta = backend.metadata(&path).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolChunk::error(format!("Error: File not found: {shown}")),
        _ => ToolChunk::error(format!("Error reading file: {e}")),
    })?;
    if meta.is_dir {
        return Err(ToolChunk::error(format!(
            "Error: Path is a directory, not a file: {shown}"
        )));
    }
    if args.old_string == args.new_string {
        return Err(ToolChunk::error(
            "Error: old_string and new_string are identical. No changes to make.",
        ));
    }
    let text = check_fresh(backend, &ctx.session, &path, meta.modified, Writer::Edit).await?;
    let (old, new) = if uses_crlf(&text) && !args.old_string.contains('\r') {
        (to_crlf(&args.old_string), to_crlf(&args.new_string))
    } else {
        (args.old_string, args.new_string)
    };
    let count = text.matches(old.as_str()).count();
    if count == 0 {
        return Err(ToolChunk::error(format!(
            "Error: old_string not found in {shown}"
        )));
    }
    if count > 1 && !args.replace_all {
        return Err(ToolChunk::error(format!(
            "Error: old_string appears {count} times in {shown}. Set replace_all=true to \
             replace all occurrences, or make old_string more specific."
        )));
    }
    let updated = if args.replace_all {
        text.replace(old.as_str(), &new)
    } else {
        text.replacen(old.as_str(), &new, 1)
    };
    backend
        .write(&path, updated.as_bytes())
        .await
        .map_err(|e| ToolChunk::error(format!("Error writing file: {e}")))?;
    record_write(backend, &ctx.session, &path, &updated).await;
    let replaced = if args.replace_all {
        format!("all {count} occurrences")
    } else {
        "1 occurrence".to_owned()
    };
    let diff = unified_diff(
        &text,
        &updated,
        &format!("a/{shown}"),
        &format!("b/{shown}"),
    );
    Ok(
        ToolChunk::text(format!("Successfully replaced {replaced} in {shown}"))
            .with_metadata("diff", diff)
            .with_metadata("file_path", shown)
            .with_metadata("occurrences", count),
    )
}
