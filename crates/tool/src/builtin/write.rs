//! `Write`: create or overwrite a file, never blindly.

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
            "file_path": {"type": "string", "description": "Absolute path of the file to write."},
            "content": {"type": "string", "description": "The complete new content of the file."}
        },
        "required": ["file_path", "content"]
    })
});

const DESCRIPTION: &str = "Write a file, replacing it completely if it exists. An existing \
file must have been read with Read in this session first, and must not have changed since. \
Prefer Edit for changes to existing files; use Write for new files or full rewrites. Missing \
parent directories are created. A file with Windows line endings keeps them.";

#[derive(Deserialize)]
struct Args {
    file_path: String,
    content: String,
}

file_tool! {
    /// Creates or overwrites one file, enforcing read-before-write.
    pub struct Write;
    /// A Write tool judging paths relative to `env`.
    fn new;
    description: DESCRIPTION,
    schema: SCHEMA,
    flags: { state_injected },
    args: Args,
    run: write,
}

async fn write(args: Args, ctx: &ToolCallContext) -> Result<ToolChunk, ToolChunk> {
    let path = ctx.resolve(&args.file_path);
    let shown = path.display().to_string();
    let backend = ctx.backend.as_ref();
    let previous = match backend.metadata(&path).await {
        Ok(meta) if meta.is_dir => {
            return Err(ToolChunk::error(format!(
                "Error: Path is a directory, not a file: {shown}"
            )));
        }
        Ok(meta) => {
            Some(check_fresh(backend, &ctx.session, &path, meta.modified, Writer::Write).await?)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolChunk::error(format!("Error writing file: {e}"))),
    };
    let content = match &previous {
        Some(old) if uses_crlf(old) && !uses_crlf(&args.content) => to_crlf(&args.content),
        _ => args.content,
    };
    backend
        .write(&path, content.as_bytes())
        .await
        .map_err(|e| ToolChunk::error(format!("Error writing file: {e}")))?;
    record_write(backend, &ctx.session, &path, &content).await;
    let lines = content.lines().count();
    let from = match previous {
        Some(_) => format!("a/{shown}"),
        None => "/dev/null".to_owned(),
    };
    let diff = unified_diff(
        previous.as_deref().unwrap_or_default(),
        &content,
        &from,
        &format!("b/{shown}"),
    );
    Ok(ToolChunk::text(format!(
        "The file {shown} has been written successfully ({lines} lines)."
    ))
    .with_metadata("diff", diff)
    .with_metadata("file_path", shown)
    .with_metadata("occurrences", 1)
    .with_metadata("created", previous.is_none()))
}
