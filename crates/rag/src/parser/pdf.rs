//! PDF: one text section per page, `{"page": n}` counted from 1, its text
//! trimmed of leading and trailing white space.
//!
//! A page whose text cannot be extracted (images only, unknown font
//! encodings) still yields a section, with empty text, so pages and
//! sections stay one to one. Decompressed streams are bounded by
//! [`ParseLimits::max_decompressed_bytes`].

use lopdf::{Document, LoadOptions};

use super::{Parser, Sections};
use crate::error::{Error, Result};
use crate::limits::ParseLimits;
use crate::section::{Section, meta};

/// Reads a PDF page by page.
#[derive(Debug, Clone, Default)]
pub struct PdfParser {
    limits: ParseLimits,
}

impl PdfParser {
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

impl Parser for PdfParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &["application/pdf"]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[".pdf"]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        self.limits.check_input(bytes)?;
        let budget = usize::try_from(self.limits.max_decompressed_bytes).unwrap_or(usize::MAX);
        let options = LoadOptions {
            max_decompressed_size: Some(budget),
            ..LoadOptions::default()
        };
        let doc = Document::load_mem_with_options(bytes, options)
            .map_err(|e| Error::malformed(filename, "PDF", e))?;
        if doc.trailer.has(b"Encrypt") && doc.encryption_state.is_none() {
            return Err(Error::Encrypted {
                filename: filename.to_owned(),
            });
        }
        let pages = doc.get_pages();
        if pages.is_empty() {
            return Err(Error::malformed(
                filename,
                "PDF",
                "it has no readable pages",
            ));
        }
        self.limits.check_section_count(pages.len())?;
        let mut out = Sections::new(filename, self.limits);
        for &number in pages.keys() {
            let mut text = String::new();
            for part in doc
                .extract_text_chunks_with_limit(&[number], budget)
                .into_iter()
                .flatten()
            {
                text.push_str(&part);
                self.limits.check_text(&text)?;
            }
            out.push_text(text.trim().to_owned(), meta("page", number))?;
        }
        Ok(out.into_vec())
    }
}
