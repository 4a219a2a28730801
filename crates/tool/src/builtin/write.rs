//! `Write`: create or overwrite a file, never blindly.

use std::sync::LazyLock;

use oxiscope_permission::{FilePolicy, FileTool, PathEnv};
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_state::{check_fresh, record_write, split_lines, to_crlf, uses_crlf};
use super::{delegate_permissions, parse};
use crate::chunk::ToolChunk;
use crate::tool::{Tool, ToolCallContext, ToolFlags, ToolStream, once_future};

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

/// Creates or overwrites one file, enforcing read-before-write.
#[derive(Debug, Clone)]
pub struct Write {
    policy: FilePolicy,
}

impl Write {
    /// A Write tool judging paths relative to `env`.
    #[must_use]
    pub fn new(env: PathEnv) -> Self {
        Self {
            policy: FilePolicy::new(FileTool::Write, env),
        }
    }
}

impl Tool for Write {
    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn flags(&self) -> ToolFlags {
        ToolFlags {
            state_injected: true,
            ..ToolFlags::default()
        }
    }

    delegate_permissions!();

    fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream {
        once_future(async move {
            match parse::<Args>("Write", input) {
                Ok(args) => write(args, &ctx).await.unwrap_or_else(|chunk| chunk),
                Err(chunk) => chunk,
            }
        })
    }
}

async fn write(args: Args, ctx: &ToolCallContext) -> Result<ToolChunk, ToolChunk> {
    let path = ctx.resolve(&args.file_path);
    let shown = path.display().to_string();
    let backend = ctx.backend.as_ref();
    let previous = match backend.metadata(&path).await {
        Ok(meta) if meta.is_dir => {
            return Err(ToolChunk::error(format!("{shown} is a directory.")));
        }
        Ok(meta) => Some(check_fresh(backend, &ctx.session, &path, meta.modified).await?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolChunk::error(format!("Cannot write {shown}: {e}"))),
    };
    let content = match &previous {
        Some(old) if uses_crlf(old) && !uses_crlf(&args.content) => to_crlf(&args.content),
        _ => args.content,
    };
    backend
        .write(&path, content.as_bytes())
        .await
        .map_err(|e| ToolChunk::error(format!("Cannot write {shown}: {e}")))?;
    record_write(backend, &ctx.session, &path, &content).await;
    let lines = split_lines(&content).len();
    let text = match &previous {
        None => format!("Created {shown} ({lines} lines, {} bytes).", content.len()),
        Some(old) => format!(
            "Overwrote {shown}: {} lines before, {lines} lines now ({} bytes).",
            split_lines(old).len(),
            content.len()
        ),
    };
    Ok(ToolChunk::text(text)
        .with_metadata("file_path", shown)
        .with_metadata("created", previous.is_none())
        .with_metadata("lines", lines))
}
