//! Parsers: raw file bytes to [`Section`]s, one per natural boundary of the
//! format.
//!
//! | parser | media types | sections |
//! |---|---|---|
//! | [`TextParser`] | `text/plain`, `text/markdown`, `text/csv`, `text/x-rst`, `application/json`, `application/xml`, `application/x-yaml` | the whole file |
//! | [`HtmlParser`] | `text/html` | the visible text, block structure kept |
//! | [`PdfParser`] | `application/pdf` | one per page, `{"page": n}` from 1 |
//! | [`WordParser`] | docx | runs of paragraphs (and tables); images apart |
//! | [`ExcelParser`] | xlsx | all sheets, or one per sheet with `{"sheet": name}` |
//! | [`PptParser`] | pptx | per slide, `{"slide": n}` from 1; images apart |
//! | [`ImageParser`] | `image/png`, `jpeg`, `gif`, `bmp`, `webp` | one data section |
//!
//! Where this differs from AgentScope's parsers, on purpose:
//! - `text/html` goes to [`HtmlParser`] (visible text) instead of being
//!   read raw by the text parser;
//! - legacy `.xls` (`application/vnd.ms-excel`) is not read; Excel values
//!   are written as stored (`12`, `2.5`, `TRUE`) rather than as pandas
//!   prints them, empty header cells stay empty, and the table starts at
//!   the first non-empty row and column;
//! - bytes that are no known image are an error, not `image/jpeg`;
//! - PDF page text is trimmed; Word and PowerPoint skip the `mc:Fallback`
//!   copy of alternate content (no doubled text boxes), PowerPoint reads
//!   shapes inside groups and writes `a:br` as `\n`.
//!
//! Parsing is CPU-bound and synchronous: async callers run it on a blocking
//! thread (`tokio::task::spawn_blocking`). Every parser applies
//! [`ParseLimits`]; bad or hostile input ends in a typed [`crate::Error`],
//! never a panic.

mod archive;
mod excel;
mod html;
mod image;
mod media;
mod pdf;
mod ppt;
mod table;
mod text;
mod word;
mod xml;

use std::sync::Arc;

use oxiscope_message::{Base64Source, DataBlock, DataSource};

pub use excel::{ExcelOptions, ExcelParser};
pub use html::HtmlParser;
pub use image::ImageParser;
pub use pdf::PdfParser;
pub use ppt::{PptOptions, PptParser};
pub use table::TableFormat;
pub use text::TextParser;
pub use word::{WordOptions, WordParser};

use crate::error::{Error, Result};
use crate::limits::ParseLimits;
use crate::section::{Metadata, Section};

/// Turns the bytes of one file format into sections.
pub trait Parser: Send + Sync + std::fmt::Debug {
    /// The IANA media types this parser reads.
    fn supported_media_types(&self) -> &'static [&'static str];

    /// The file extensions (with the dot) offered for upload.
    fn supported_extensions(&self) -> &'static [&'static str];

    /// Parses `bytes`; `filename` becomes every section's `source`.
    ///
    /// # Errors
    /// A typed [`Error`] when the file is damaged, not of this format, or
    /// over a [`ParseLimits`] limit.
    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>>;
}

/// Picks a parser by media type or file extension.
#[derive(Debug, Clone)]
pub struct ParserRegistry {
    parsers: Vec<Arc<dyn Parser>>,
}

impl Default for ParserRegistry {
    /// Every built-in parser with default options and limits.
    fn default() -> Self {
        Self::with_limits(ParseLimits::default())
    }
}

impl ParserRegistry {
    /// A registry with no parser.
    #[must_use]
    pub fn empty() -> Self {
        Self {
            parsers: Vec::new(),
        }
    }

    /// Every built-in parser with default options and `limits`.
    #[must_use]
    pub fn with_limits(limits: ParseLimits) -> Self {
        let mut r = Self::empty();
        r.register(Arc::new(TextParser::new().with_limits(limits)));
        r.register(Arc::new(HtmlParser::new().with_limits(limits)));
        r.register(Arc::new(PdfParser::new().with_limits(limits)));
        r.register(Arc::new(
            WordParser::new(WordOptions::default()).with_limits(limits),
        ));
        r.register(Arc::new(
            ExcelParser::new(ExcelOptions::default()).with_limits(limits),
        ));
        r.register(Arc::new(
            PptParser::new(PptOptions::default()).with_limits(limits),
        ));
        r.register(Arc::new(ImageParser::new().with_limits(limits)));
        r
    }

    /// Adds `parser`; it wins over parsers registered before it for the
    /// media types and extensions it shares with them.
    pub fn register(&mut self, parser: Arc<dyn Parser>) {
        self.parsers.push(parser);
    }

    /// The parser for `media_type` (parameters such as `; charset=` and
    /// letter case ignored).
    #[must_use]
    pub fn for_media_type(&self, media_type: &str) -> Option<&dyn Parser> {
        let essence = media_type.split(';').next().unwrap_or_default().trim();
        self.parsers
            .iter()
            .rev()
            .find(|p| {
                p.supported_media_types()
                    .iter()
                    .any(|m| m.eq_ignore_ascii_case(essence))
            })
            .map(AsRef::as_ref)
    }

    /// The parser for the extension of `filename`.
    #[must_use]
    pub fn for_filename(&self, filename: &str) -> Option<&dyn Parser> {
        let ext = media::extension(filename)?;
        self.parsers
            .iter()
            .rev()
            .find(|p| {
                p.supported_extensions()
                    .iter()
                    .any(|e| e.trim_start_matches('.').eq_ignore_ascii_case(&ext))
            })
            .map(AsRef::as_ref)
    }

    /// Every media type some parser reads.
    #[must_use]
    pub fn media_types(&self) -> Vec<&'static str> {
        let mut all: Vec<_> = self
            .parsers
            .iter()
            .flat_map(|p| p.supported_media_types().iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Parses `bytes` with the parser for `media_type` when given, else the
    /// one for the extension of `filename`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when no parser fits; else the parser's error.
    pub fn parse(
        &self,
        bytes: &[u8],
        filename: &str,
        media_type: Option<&str>,
    ) -> Result<Vec<Section>> {
        let parser = match media_type {
            Some(m) => self
                .for_media_type(m)
                .ok_or_else(|| Error::Unsupported { what: m.to_owned() })?,
            None => self
                .for_filename(filename)
                .ok_or_else(|| Error::Unsupported {
                    what: filename.to_owned(),
                })?,
        };
        parser.parse(bytes, filename)
    }
}

/// Collects sections under the section-count and text-size limits.
#[derive(Debug)]
pub(crate) struct Sections<'a> {
    out: Vec<Section>,
    limits: ParseLimits,
    filename: &'a str,
}

impl<'a> Sections<'a> {
    pub(crate) fn new(filename: &'a str, limits: ParseLimits) -> Self {
        Self {
            out: Vec::new(),
            limits,
            filename,
        }
    }

    pub(crate) fn limits(&self) -> ParseLimits {
        self.limits
    }

    pub(crate) fn push_text(&mut self, text: String, metadata: Metadata) -> Result<()> {
        self.limits.check_text(&text)?;
        self.limits.check_section_count(self.out.len() + 1)?;
        self.out.push(Section::text(text, self.filename, metadata));
        Ok(())
    }

    /// Adds an image section; `metadata` gets its `media_type`.
    pub(crate) fn push_image(
        &mut self,
        data: &[u8],
        media_type: &str,
        mut metadata: Metadata,
    ) -> Result<()> {
        self.limits.check_section_count(self.out.len() + 1)?;
        metadata.insert("media_type".into(), media_type.into());
        let block = image_block(data, media_type, self.filename);
        self.out.push(Section::data(block, self.filename, metadata));
        Ok(())
    }

    pub(crate) fn into_vec(self) -> Vec<Section> {
        self.out
    }
}

/// A base64 data block named `filename`.
pub(crate) fn image_block(data: &[u8], media_type: &str, filename: &str) -> DataBlock {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(data);
    DataBlock::new(DataSource::Base64(Base64Source {
        data: encoded,
        media_type: media_type.to_owned(),
    }))
    .with_name(filename)
}

/// Checks a growing text buffer against the section limit.
pub(crate) fn check_buffer(limits: &ParseLimits, parts: &[String]) -> Result<()> {
    let total: usize = parts.iter().map(|p| p.len() + 1).sum();
    if total > limits.max_section_bytes {
        return Err(Error::SectionTooLarge {
            limit: limits.max_section_bytes,
        });
    }
    Ok(())
}
