//! Word (`.docx`): the body in document order.
//!
//! - Adjacent paragraphs are joined with `\n` into one text section (empty
//!   paragraphs are skipped; a paragraph's text is all its `w:t` runs,
//!   text boxes included, trimmed).
//! - Tables become Markdown (or JSON) text merged into the running section,
//!   or sections of their own with `separate_table`. Cell paragraphs are
//!   joined with `\n`, `w:br` is a line break, a cell spanning `n` grid
//!   columns is followed by `n - 1` empty cells; nested tables are skipped.
//! - Images (`a:blip` and VML `v:imagedata` referencing `word/media/*`)
//!   end the running section and become data sections
//!   `{"media_type": ...}` (with `include_image`, the default).
//!
//! Text sections carry empty metadata, as in AgentScope.

use super::archive::Archive;
use super::table::{self, TableFormat};
use super::xml::{XmlEvent, local, prefixed_attr};
use super::{Parser, Sections, check_buffer, media};
use crate::error::Result;
use crate::limits::ParseLimits;
use crate::section::{Metadata, Section};

/// Options of [`WordParser`] (AgentScope's names and defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordOptions {
    /// Emit embedded images as data sections (default `true`).
    pub include_image: bool,
    /// Give each table its own section (default `false`).
    pub separate_table: bool,
    /// How tables are written (default Markdown).
    pub table_format: TableFormat,
}

impl Default for WordOptions {
    fn default() -> Self {
        Self {
            include_image: true,
            separate_table: false,
            table_format: TableFormat::Markdown,
        }
    }
}

/// Reads `.docx` files.
#[derive(Debug, Clone, Default)]
pub struct WordParser {
    options: WordOptions,
    limits: ParseLimits,
}

impl WordParser {
    /// A parser with `options` and default limits.
    #[must_use]
    pub fn new(options: WordOptions) -> Self {
        Self {
            options,
            limits: ParseLimits::default(),
        }
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ParseLimits) -> Self {
        self.limits = limits;
        self
    }
}

const FORMAT: &str = "DOCX";

impl Parser for WordParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[".docx"]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        let mut archive = Archive::open(bytes, filename, FORMAT, self.limits)?;
        let part = archive.main_part("word/document.xml")?;
        let rels = archive.relationships(&part)?;
        let text = archive.read_text_required(&part)?;
        let mut walker = Walker {
            options: self.options,
            out: Sections::new(filename, self.limits),
            buffer: Vec::new(),
        };
        let mut xml = archive.xml(&text, &part);
        xml.expect_root("document")?;
        loop {
            match xml.next()? {
                XmlEvent::Start(e) => match local(&e).as_slice() {
                    b"p" => {
                        let para = read_paragraph(&mut xml)?;
                        walker.paragraph(&para, &rels, &mut archive)?;
                    }
                    b"tbl" => {
                        let rows = read_table(&mut xml)?;
                        walker.table(&rows)?;
                    }
                    b"Fallback" => xml.skip_element()?,
                    _ => {}
                },
                XmlEvent::Eof => break,
                _ => {}
            }
        }
        walker.flush()?;
        Ok(walker.out.into_vec())
    }
}

/// The text and image references of one paragraph.
#[derive(Debug, Default)]
struct Paragraph {
    text: String,
    images: Vec<String>,
}

/// Builds sections from paragraphs and tables.
struct Walker<'a> {
    options: WordOptions,
    out: Sections<'a>,
    buffer: Vec<String>,
}

impl Walker<'_> {
    fn flush(&mut self) -> Result<()> {
        if !self.buffer.is_empty() {
            let text = self.buffer.join("\n");
            self.buffer.clear();
            self.out.push_text(text, Metadata::new())?;
        }
        Ok(())
    }

    fn push(&mut self, text: String) -> Result<()> {
        self.buffer.push(text);
        check_buffer(&self.out.limits(), &self.buffer)
    }

    fn paragraph(
        &mut self,
        para: &Paragraph,
        rels: &std::collections::HashMap<String, super::archive::Rel>,
        archive: &mut Archive<'_>,
    ) -> Result<()> {
        let text = para.text.trim();
        if !text.is_empty() {
            self.push(text.to_owned())?;
        }
        if !self.options.include_image || para.images.is_empty() {
            return Ok(());
        }
        self.flush()?;
        for id in &para.images {
            let Some(rel) = rels.get(id) else { continue };
            let Some(data) = archive.read(&rel.target)? else {
                continue;
            };
            let media_type = media::embedded_image_type(&data, &rel.target);
            self.out.push_image(&data, media_type, Metadata::new())?;
        }
        Ok(())
    }

    fn table(&mut self, rows: &[Vec<String>]) -> Result<()> {
        let rendered = table::render(rows, self.options.table_format);
        if rendered.is_empty() {
            return Ok(());
        }
        if self.options.separate_table {
            self.flush()?;
            self.out.push_text(rendered, Metadata::new())
        } else {
            self.push(rendered)
        }
    }
}

/// Reads a `w:p` just opened: all `w:t` text below it and its images.
fn read_paragraph(xml: &mut super::xml::Xml<'_>) -> Result<Paragraph> {
    let depth = xml.depth();
    let mut para = Paragraph::default();
    let mut in_text = false;
    loop {
        match xml.next()? {
            XmlEvent::Start(e) if local(&e) == b"Fallback" => xml.skip_element()?,
            XmlEvent::Start(e) if local(&e) == b"t" => {
                in_text = e.name().prefix().is_none_or(|p| p.as_ref() != "a");
            }
            XmlEvent::Start(e) | XmlEvent::Empty(e) => match local(&e).as_slice() {
                b"blip" => para.images.extend(prefixed_attr(&e, b"embed")),
                b"imagedata" => para.images.extend(prefixed_attr(&e, b"id")),
                _ => {}
            },
            XmlEvent::Text(t) if in_text => para.text.push_str(&t),
            XmlEvent::End(name) => {
                if name == b"t" {
                    in_text = false;
                }
                if xml.depth() < depth {
                    return Ok(para);
                }
            }
            XmlEvent::Eof => return Ok(para),
            XmlEvent::Text(_) => {}
        }
    }
}

/// Reads a `w:tbl` just opened into rows of cell texts.
fn read_table(xml: &mut super::xml::Xml<'_>) -> Result<Vec<Vec<String>>> {
    let table = xml.depth();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cell: Option<(Vec<String>, usize)> = None;
    let mut para: Option<String> = None;
    let mut in_text = false;
    loop {
        let event = xml.next()?;
        let depth = xml.depth();
        match event {
            // A nested table: its text is not part of this cell.
            XmlEvent::Start(e) if local(&e) == b"tbl" => xml.skip_element()?,
            XmlEvent::Start(e) if local(&e) == b"t" => in_text = para.is_some(),
            XmlEvent::Start(e) | XmlEvent::Empty(e) => match local(&e).as_slice() {
                b"tr" if depth == table + 1 => rows.push(Vec::new()),
                b"tc" if depth == table + 2 => cell = Some((Vec::new(), 1)),
                b"p" if depth == table + 3 && cell.is_some() => para = Some(String::new()),
                b"br" | b"cr" => {
                    if let Some(p) = para.as_mut() {
                        p.push('\n');
                    }
                }
                b"gridSpan" => {
                    if let (Some(c), Some(v)) = (cell.as_mut(), super::xml::attr(&e, b"val")) {
                        c.1 = v.trim().parse::<usize>().unwrap_or(1).clamp(1, 1024);
                    }
                }
                _ => {}
            },
            XmlEvent::Text(t) if in_text => {
                if let Some(p) = para.as_mut() {
                    p.push_str(&t);
                }
            }
            XmlEvent::End(name) => match name.as_slice() {
                _ if depth < table => return Ok(rows),
                b"t" => in_text = false,
                b"p" if depth == table + 2 => {
                    if let (Some(p), Some(c)) = (para.take(), cell.as_mut())
                        && !p.is_empty()
                    {
                        c.0.push(p);
                    }
                }
                b"tc" if depth == table + 1 => {
                    if let (Some((paras, span)), Some(row)) = (cell.take(), rows.last_mut()) {
                        row.push(paras.join("\n"));
                        row.extend(std::iter::repeat_n(String::new(), span - 1));
                    }
                }
                _ => {}
            },
            XmlEvent::Eof => return Ok(rows),
            XmlEvent::Text(_) => {}
        }
    }
}
