//! Plain text, Markdown, CSV, reStructuredText, JSON, XML and YAML: the
//! whole file as one text section.
//!
//! The bytes must be UTF-8: invalid UTF-8 is an [`Error::InvalidUtf8`]
//! (as AgentScope raises on a decoding failure), never silently replaced.

use super::{Parser, Sections};
use crate::error::{Error, Result};
use crate::limits::ParseLimits;
use crate::section::{Metadata, Section};

/// Reads a text file as one section with empty metadata.
#[derive(Debug, Clone, Default)]
pub struct TextParser {
    limits: ParseLimits,
}

impl TextParser {
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

impl Parser for TextParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &[
            "text/plain",
            "text/markdown",
            "text/csv",
            "text/x-rst",
            "application/json",
            "application/xml",
            "application/x-yaml",
        ]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[
            ".csv",
            ".json",
            ".markdown",
            ".md",
            ".rst",
            ".txt",
            ".xml",
            ".yaml",
            ".yml",
        ]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        self.limits.check_input(bytes)?;
        let text = std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
            filename: filename.to_owned(),
            valid_up_to: e.valid_up_to(),
        })?;
        let mut out = Sections::new(filename, self.limits);
        out.push_text(text.to_owned(), Metadata::new())?;
        Ok(out.into_vec())
    }
}
