//! Bounds that keep parsing hostile files cheap.

use crate::error::{Error, Result};

/// Resource limits applied by every parser.
///
/// Sizes in archives are never taken from the archive's headers: each entry
/// is read through a bounded reader, and all entries of one file share one
/// decompression budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    /// Largest input, in bytes (default 64 MiB).
    pub max_input_bytes: usize,
    /// Largest total of decompressed bytes read from all entries of one
    /// archive, or from all streams of one PDF (default 256 MiB).
    pub max_decompressed_bytes: u64,
    /// Most entries an archive may declare (default 10 000).
    pub max_entries: usize,
    /// Most sections one file may yield (default 10 000).
    pub max_sections: usize,
    /// Most text bytes in one section (default 16 MiB).
    pub max_section_bytes: usize,
    /// Deepest element nesting in an XML part (default 256).
    pub max_xml_depth: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        Self {
            max_input_bytes: 64 * 1024 * 1024,
            max_decompressed_bytes: 256 * 1024 * 1024,
            max_entries: 10_000,
            max_sections: 10_000,
            max_section_bytes: 16 * 1024 * 1024,
            max_xml_depth: 256,
        }
    }
}

impl ParseLimits {
    /// Checks the input size.
    pub(crate) fn check_input(&self, bytes: &[u8]) -> Result<()> {
        if bytes.len() > self.max_input_bytes {
            return Err(Error::InputTooLarge {
                size: bytes.len(),
                limit: self.max_input_bytes,
            });
        }
        Ok(())
    }

    /// Checks one section's text size.
    pub(crate) fn check_text(&self, text: &str) -> Result<()> {
        if text.len() > self.max_section_bytes {
            return Err(Error::SectionTooLarge {
                limit: self.max_section_bytes,
            });
        }
        Ok(())
    }

    /// Checks that one more section fits.
    pub(crate) fn check_section_count(&self, count: usize) -> Result<()> {
        if count > self.max_sections {
            return Err(Error::TooManySections {
                limit: self.max_sections,
            });
        }
        Ok(())
    }
}
