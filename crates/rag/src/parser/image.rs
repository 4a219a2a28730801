//! Images: the whole file as one data section (base64), its media type
//! sniffed from the bytes and recorded in the metadata.

use super::{Parser, Sections, media};
use crate::error::{Error, Result};
use crate::limits::ParseLimits;
use crate::section::{Metadata, Section};

/// Wraps an image file in one data section, `{"media_type": ...}`.
///
/// Bytes that are not a PNG, JPEG, GIF, BMP or WebP image are an
/// [`Error::Malformed`] (AgentScope would label them `image/jpeg`).
#[derive(Debug, Clone, Default)]
pub struct ImageParser {
    limits: ParseLimits,
}

impl ImageParser {
    /// A parser with default limits.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ParseLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl Parser for ImageParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &[
            "image/png",
            "image/jpeg",
            "image/gif",
            "image/bmp",
            "image/webp",
        ]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[".bmp", ".gif", ".jpeg", ".jpg", ".png", ".webp"]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        self.limits.check_input(bytes)?;
        let media_type = media::sniff_image(bytes).ok_or_else(|| {
            Error::malformed(filename, "image", "not a PNG, JPEG, GIF, BMP or WebP image")
        })?;
        let mut out = Sections::new(filename, self.limits);
        out.push_image(bytes, media_type, Metadata::new())?;
        Ok(out.into_vec())
    }
}
