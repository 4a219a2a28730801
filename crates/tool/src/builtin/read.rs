//! `Read`: line-numbered text, images as data blocks, PDF text by page.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::LazyLock;

use base64::Engine;
use oxiscope_message::{Base64Source, DataBlock, DataSource};
use serde::Deserialize;
use serde_json::{Value, json};

use super::file_state::{MAX_TEXT_BYTES, decode_text, split_lines};
use super::file_tool::file_tool;
use super::pdf::read_pdf;
use crate::chunk::ToolChunk;
use crate::state::ReadCacheEntry;
use crate::tool::ToolCallContext;

/// Longest line shown, in characters.
const MAX_LINE_CHARS: usize = 2_000;
/// Largest text output, in bytes; later lines are left for another call.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Largest image sent to the model, in bytes.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "description": "Arguments of the Read tool.",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute path of the file to read."},
            "offset": {"default": 1, "minimum": 1, "type": "integer",
                "description": "First line to show (1-based)."},
            "limit": {"default": 2000, "maximum": 2000, "minimum": 1, "type": "integer",
                "description": "How many lines to show at most."},
            "pages": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null,
                "description": "Page range of a PDF, such as \"1-3\"."}
        },
        "required": ["file_path"],
        "type": "object"
    })
});

const DESCRIPTION: &str = "Read a file from the file system. Text comes back with line \
numbers (`     N\\tline`), starting at `offset` and showing at most `limit` lines; use them \
to page through long files. Lines longer than 2000 characters are cut. Images (PNG, JPEG, \
GIF, WebP) come back as images when the model can see them. PDFs come back as text, page \
by page under `--- Page N/TOTAL ---` headers; `pages` (such as \"1-5\", at most 20 pages) \
picks the pages and is required for PDFs over 10 pages, while `offset` and `limit` apply only \
to text files. Reading a file is required before changing it with Write or Edit.";

#[derive(Deserialize)]
struct Args {
    file_path: String,
    offset: usize,
    limit: usize,
    #[serde(default)]
    pages: Option<String>,
}

file_tool! {
    /// Reads text files (and images) and records them in the read cache.
    pub struct Read;
    /// A Read tool judging paths relative to `env`.
    fn new;
    description: DESCRIPTION,
    schema: SCHEMA,
    flags: { read_only, concurrency_safe, state_injected },
    args: Args,
    run: read,
}

fn image_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

async fn read(args: Args, ctx: &ToolCallContext) -> Result<ToolChunk, ToolChunk> {
    let path = ctx.resolve(&args.file_path);
    let shown = path.display().to_string();
    let meta = ctx
        .backend
        .metadata(&path)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                ToolChunk::error(format!("Error: File does not exist: {shown}"))
            }
            _ => ToolChunk::error(format!("Error reading file: {e}")),
        })?;
    if meta.is_dir {
        return Err(ToolChunk::error(format!(
            "Error: Path is a directory, not a file: {shown}"
        )));
    }
    if let Some(media) = image_type(&path) {
        return read_image(&path, media, ctx).await;
    }
    let is_pdf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pdf"));
    if is_pdf {
        return read_pdf(&path, args.pages.as_deref(), MAX_OUTPUT_BYTES, ctx).await;
    }
    if args.pages.is_some() {
        return Err(ToolChunk::error(format!(
            "Error: {shown} is not a PDF: `pages` applies only to PDF files. Use offset and limit."
        )));
    }
    if meta.len > MAX_TEXT_BYTES {
        return Err(ToolChunk::error(format!(
            "Error: {shown} is {} bytes, more than the {MAX_TEXT_BYTES} bytes Read handles. \
             Search it with Grep or show parts of it with `head`/`tail` through Bash.",
            meta.len
        )));
    }
    let bytes = ctx
        .backend
        .read(&path, MAX_TEXT_BYTES)
        .await
        .map_err(|e| ToolChunk::error(format!("Error reading file: {e}")))?;
    let text = decode_text(&path, &bytes)?;
    let lines = split_lines(&text);
    if lines.is_empty() {
        record(ctx, &shown, Vec::new(), meta.modified).await;
        // AgentScope answers an empty text, which some model APIs refuse.
        return Ok(ToolChunk::text(format!("{shown} exists but is empty.")));
    }
    let start = args.offset.max(1) - 1;
    if start >= lines.len() {
        // AgentScope answers an empty text.
        return Err(ToolChunk::error(format!(
            "Error: {shown} has {} lines; offset {} is past the end.",
            lines.len(),
            args.offset
        )));
    }
    let end = (start + args.limit.max(1)).min(lines.len());
    let mut numbered = Vec::with_capacity(end - start);
    let mut size = 0;
    let mut shown_end = start;
    for (i, line) in lines[start..end].iter().enumerate() {
        let entry = numbered_line(start + i + 1, line);
        size += entry.len() + 1;
        if size > MAX_OUTPUT_BYTES && i > 0 {
            break;
        }
        numbered.push(entry);
        shown_end = start + i + 1;
    }
    let mut out = numbered.join("\n");
    if shown_end < end {
        // Only our byte cap cuts short of `limit` (AgentScope has none), so
        // only then is the cut announced.
        let _ = write!(
            out,
            "\n\n[Output cut at {MAX_OUTPUT_BYTES} bytes: showing lines {}-{shown_end} of {}. \
             Use offset={} to read on.]",
            start + 1,
            lines.len(),
            shown_end + 1
        );
    }
    record(ctx, &shown, lines[start..shown_end].to_vec(), meta.modified).await;
    Ok(ToolChunk::text(out)
        .with_metadata("file_path", shown)
        .with_metadata("total_lines", lines.len())
        .with_metadata("start_line", start + 1)
        .with_metadata("end_line", shown_end))
}

/// `     N\tline` as AgentScope numbers lines: the number right-aligned in
/// six columns, the line without its ending, cut at [`MAX_LINE_CHARS`]
/// characters with `[truncated]` after the cut.
fn numbered_line(number: usize, line: &str) -> String {
    let body = line.trim_end_matches(['\n', '\r']);
    match body.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{number:>6}\t{}[truncated]", &body[..cut]),
        None => format!("{number:>6}\t{body}"),
    }
}

async fn record(ctx: &ToolCallContext, path: &str, lines: Vec<String>, modified: f64) {
    let entry = ReadCacheEntry::new(path, lines, modified);
    ctx.session.tool_context().lock().await.record_read(entry);
}

async fn read_image(
    path: &Path,
    media: &str,
    ctx: &ToolCallContext,
) -> Result<ToolChunk, ToolChunk> {
    let shown = path.display().to_string();
    if !ctx.accepts(media) {
        let images: Vec<String> = ctx
            .accepted_media
            .iter()
            .filter(|m| m.starts_with("image/"))
            .map(|m| {
                if m.ends_with('/') {
                    format!("{m}*")
                } else {
                    m.clone()
                }
            })
            .collect();
        let images = if images.is_empty() {
            "none".to_owned()
        } else {
            images.join(", ")
        };
        return Err(ToolChunk::error(format!(
            "Error: Unsupported image type {media}, only {images} are supported."
        )));
    }
    let bytes = ctx
        .backend
        .read(path, MAX_IMAGE_BYTES)
        .await
        .map_err(|e| ToolChunk::error(format!("Error reading file: {e}")))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let source = DataSource::Base64(Base64Source {
        data,
        media_type: media.to_owned(),
    });
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(ToolChunk::data(DataBlock::new(source).with_name(name)).with_metadata("file_path", shown))
}
