//! Data blocks as content parts: inlining local files, downloading remote
//! media where the vendor needs it, saving what the vendor cannot take.

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use oxiscope_message::{DataBlock, DataSource};
use oxiscope_model::ModelError;
use serde_json::{Value, json};

use super::OpenAiChatFormatter;

/// The bytes of a data block, or where they are.
enum Resolved {
    /// Base64 payload.
    Inline(String),
    /// A URL to pass on as is.
    Remote(String),
}

impl OpenAiChatFormatter {
    /// Whether the vendor accepts `media_type` (`image/png` matches
    /// `image/*`).
    pub(super) fn supports(&self, media_type: &str) -> bool {
        self.media_types
            .iter()
            .any(|pattern| match pattern.strip_suffix("/*") {
                Some(major) => media_type
                    .split_once('/')
                    .is_some_and(|(m, _)| m.eq_ignore_ascii_case(major)),
                None => pattern.eq_ignore_ascii_case(media_type),
            })
    }

    /// The content part for `block`, or `None` when the vendor does not take
    /// its media type.
    pub(super) async fn media_part(&self, block: &DataBlock) -> Result<Option<Value>, ModelError> {
        let media_type = block.source.media_type();
        if !self.supports(media_type) {
            return Ok(None);
        }
        let part = match major_type(media_type) {
            "image" => json!({
                "type": "image_url",
                "image_url": {"url": self.url_of(block, self.quirks.fetch_remote).await?},
            }),
            "video" => json!({
                "type": "video_url",
                "video_url": {"url": self.url_of(block, self.quirks.fetch_remote).await?},
            }),
            "audio" => json!({
                "type": "input_audio",
                "input_audio": {
                    "data": self.base64_of(block).await?,
                    "format": audio_format(media_type),
                },
            }),
            _ => json!({
                "type": "file",
                "file": {
                    "filename": file_name(block),
                    "file_data": data_uri(media_type, &self.base64_of(block).await?),
                },
            }),
        };
        Ok(Some(part))
    }

    /// A URL for the block: a data URI for inline and local data, the
    /// remote URL itself unless `fetch` asks for it to be downloaded.
    async fn url_of(&self, block: &DataBlock, fetch: bool) -> Result<String, ModelError> {
        let media_type = block.source.media_type();
        match self.resolve(block, fetch).await? {
            Resolved::Inline(b64) => Ok(data_uri(media_type, &b64)),
            Resolved::Remote(url) => Ok(url),
        }
    }

    /// The block's bytes in base64, downloading remote data.
    async fn base64_of(&self, block: &DataBlock) -> Result<String, ModelError> {
        match self.resolve(block, true).await? {
            Resolved::Inline(b64) => Ok(b64),
            // `resolve` with fetching on never leaves a remote URL, except
            // for schemes it cannot read, which the vendor cannot either.
            Resolved::Remote(url) => Err(invalid(format!("cannot read media from {url}"))),
        }
    }

    async fn resolve(&self, block: &DataBlock, fetch: bool) -> Result<Resolved, ModelError> {
        let url = match &block.source {
            DataSource::Base64(src) => return Ok(Resolved::Inline(src.data.clone())),
            DataSource::Url(src) => src.url.as_str(),
        };
        if let Some(rest) = url.strip_prefix("data:") {
            return match rest.split_once(";base64,") {
                Some((_, b64)) if fetch => Ok(Resolved::Inline(b64.to_owned())),
                _ => Ok(Resolved::Remote(url.to_owned())),
            };
        }
        let remote = url.starts_with("http://") || url.starts_with("https://");
        if url.starts_with("file:") || (remote && fetch) {
            let bytes = self.media.fetch(url).await?;
            return Ok(Resolved::Inline(BASE64.encode(bytes)));
        }
        Ok(Resolved::Remote(url.to_owned()))
    }

    /// Saves inline data the vendor cannot take to the scratch directory and
    /// returns the file's path. The name is derived from the block id, so
    /// formatting the same history twice gives the same payload.
    pub(super) async fn save_locally(&self, block: &DataBlock) -> Result<PathBuf, ModelError> {
        let DataSource::Base64(src) = &block.source else {
            return Err(invalid("only inline data is saved locally".to_owned()));
        };
        let bytes = BASE64
            .decode(src.data.as_bytes())
            .map_err(|e| invalid(format!("data block {} is not valid base64: {e}", block.id)))?;
        let stem: String = block
            .id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = self
            .scratch_dir
            .join(format!("{stem}.{}", extension(&src.media_type)));
        tokio::fs::create_dir_all(&self.scratch_dir)
            .await
            .map_err(|e| invalid(format!("cannot create {}: {e}", self.scratch_dir.display())))?;
        tokio::fs::write(&path, bytes)
            .await
            .map_err(|e| invalid(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }
}

/// `image` for `image/png`.
pub(super) fn major_type(media_type: &str) -> &str {
    media_type.split_once('/').map_or(media_type, |(m, _)| m)
}

fn data_uri(media_type: &str, b64: &str) -> String {
    format!("data:{media_type};base64,{b64}")
}

/// The `format` of an `input_audio` part: `wav`, `mp3`, ...
fn audio_format(media_type: &str) -> &str {
    match media_type.split_once('/').map_or("", |(_, s)| s) {
        "mpeg" | "mp3" => "mp3",
        "x-wav" | "wave" | "wav" | "vnd.wave" => "wav",
        other => other,
    }
}

fn extension(media_type: &str) -> &str {
    match media_type.split_once('/').map_or("", |(_, s)| s) {
        "jpeg" => "jpg",
        "mpeg" => "mp3",
        "svg+xml" => "svg",
        "" => "bin",
        other => other,
    }
}

fn file_name(block: &DataBlock) -> String {
    block
        .name
        .clone()
        .unwrap_or_else(|| format!("{}.{}", block.id, extension(block.source.media_type())))
}

fn invalid(message: String) -> ModelError {
    ModelError::InvalidRequest { message }
}
