//! PowerPoint (`.pptx`): slide by slide in presentation order, the order of
//! `p:sldIdLst` in `ppt/presentation.xml` (not the slide file names).
//!
//! Within a slide, shapes are visited in document order (shapes inside
//! groups included):
//! - text frames add their non-empty paragraphs (trimmed, joined with
//!   `\n`; `a:br` is a line break) to the running text section;
//! - tables are rendered as Markdown (or JSON) into the running section,
//!   or as sections of their own with `separate_table`;
//! - pictures end the running section and become data sections
//!   `{"slide": n, "media_type": ...}` (with `include_image`, the default).
//!
//! Every text section carries `{"slide": n}` from 1. `slide_prefix`
//! (default `<slide index={index}>`) opens a slide's first text section and
//! `slide_suffix` (default `</slide>`) closes its last one, as AgentScope
//! writes them.

use std::collections::HashMap;

use super::archive::{Archive, Rel};
use super::table::{self, TableFormat};
use super::xml::{Xml, XmlEvent, local, prefixed_attr};
use super::{Parser, Sections, check_buffer, media};
use crate::error::Result;
use crate::limits::ParseLimits;
use crate::section::{Section, meta};

/// Options of [`PptParser`] (AgentScope's names and defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PptOptions {
    /// Emit pictures as data sections (default `true`).
    pub include_image: bool,
    /// Give each table its own section (default `false`).
    pub separate_table: bool,
    /// How tables are written (default Markdown).
    pub table_format: TableFormat,
    /// Opens each slide's text; `{index}` is the slide number (default
    /// `<slide index={index}>`; `None` for nothing).
    pub slide_prefix: Option<String>,
    /// Closes each slide's text (default `</slide>`; `None` for nothing).
    pub slide_suffix: Option<String>,
}

impl Default for PptOptions {
    fn default() -> Self {
        Self {
            include_image: true,
            separate_table: false,
            table_format: TableFormat::Markdown,
            slide_prefix: Some("<slide index={index}>".into()),
            slide_suffix: Some("</slide>".into()),
        }
    }
}

/// Reads `.pptx` decks.
#[derive(Debug, Clone, Default)]
pub struct PptParser {
    options: PptOptions,
    limits: ParseLimits,
}

impl PptParser {
    /// A parser with `options` and default limits.
    #[must_use]
    pub fn new(options: PptOptions) -> Self {
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

const FORMAT: &str = "PPTX";

impl Parser for PptParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &["application/vnd.openxmlformats-officedocument.presentationml.presentation"]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[".pptx"]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        let mut archive = Archive::open(bytes, filename, FORMAT, self.limits)?;
        let presentation = archive.main_part("ppt/presentation.xml")?;
        let rels = archive.relationships(&presentation)?;
        let slide_ids = read_slide_ids(&mut archive, &presentation)?;
        let mut out = Sections::new(filename, self.limits);
        let mut number = 0u32;
        for id in slide_ids {
            let Some(rel) = rels.get(&id) else { continue };
            let Some(text) = archive.read_text(&rel.target)? else {
                continue;
            };
            number += 1;
            let slide_rels = archive.relationships(&rel.target)?;
            let shapes = read_shapes(&mut archive.xml(&text, &rel.target))?;
            self.emit_slide(number, shapes, &slide_rels, &mut archive, &mut out)?;
        }
        Ok(out.into_vec())
    }
}

impl PptParser {
    fn emit_slide(
        &self,
        number: u32,
        shapes: Vec<Shape>,
        rels: &HashMap<String, Rel>,
        archive: &mut Archive<'_>,
        out: &mut Sections<'_>,
    ) -> Result<()> {
        let limits = out.limits();
        let mut buffer: Vec<String> = Vec::new();
        let flush = |buffer: &mut Vec<String>, out: &mut Sections<'_>| -> Result<()> {
            if !buffer.is_empty() {
                out.push_text(buffer.join("\n"), meta("slide", number))?;
                buffer.clear();
            }
            Ok(())
        };
        if let Some(prefix) = &self.options.slide_prefix {
            buffer.push(prefix.replace("{index}", &number.to_string()));
        }
        for shape in shapes {
            match shape {
                Shape::Text(paragraphs) => {
                    if !paragraphs.is_empty() {
                        buffer.push(paragraphs.join("\n"));
                    }
                }
                Shape::Table(rows) => {
                    let rendered = table::render(&rows, self.options.table_format);
                    if rendered.is_empty() {
                        continue;
                    }
                    if self.options.separate_table {
                        flush(&mut buffer, out)?;
                        out.push_text(rendered, meta("slide", number))?;
                    } else {
                        buffer.push(rendered);
                    }
                }
                Shape::Picture(id) => {
                    if !self.options.include_image {
                        continue;
                    }
                    let Some(rel) = rels.get(&id) else { continue };
                    let Some(data) = archive.read(&rel.target)? else {
                        continue;
                    };
                    flush(&mut buffer, out)?;
                    let media_type = media::embedded_image_type(&data, &rel.target);
                    out.push_image(&data, media_type, meta("slide", number))?;
                }
            }
            check_buffer(&limits, &buffer)?;
        }
        if let Some(suffix) = &self.options.slide_suffix {
            buffer.push(suffix.clone());
        }
        flush(&mut buffer, out)
    }
}

/// The relationship ids of the slides, in presentation order.
fn read_slide_ids(archive: &mut Archive<'_>, part: &str) -> Result<Vec<String>> {
    let text = archive.read_text_required(part)?;
    let mut xml = archive.xml(&text, part);
    xml.expect_root("presentation")?;
    let mut ids = Vec::new();
    loop {
        match xml.next()? {
            XmlEvent::Start(e) | XmlEvent::Empty(e) if local(&e) == b"sldId" => {
                ids.extend(prefixed_attr(&e, b"id"));
            }
            XmlEvent::Eof => return Ok(ids),
            _ => {}
        }
    }
}

/// What a slide shape contributes.
#[derive(Debug)]
enum Shape {
    /// Non-empty trimmed paragraphs of a text frame.
    Text(Vec<String>),
    /// Table rows of cell texts.
    Table(Vec<Vec<String>>),
    /// A picture, by relationship id.
    Picture(String),
}

/// The shapes of a slide, in document order.
fn read_shapes(xml: &mut Xml<'_>) -> Result<Vec<Shape>> {
    let mut shapes = Vec::new();
    loop {
        match xml.next()? {
            XmlEvent::Start(e) => match local(&e).as_slice() {
                b"sp" => {
                    let paragraphs = read_paragraphs(xml)?;
                    let kept: Vec<String> = paragraphs
                        .into_iter()
                        .map(|p| p.trim().to_owned())
                        .filter(|p| !p.is_empty())
                        .collect();
                    shapes.push(Shape::Text(kept));
                }
                b"tbl" => shapes.push(Shape::Table(read_table(xml)?)),
                b"blip" => {
                    shapes.extend(prefixed_attr(&e, b"embed").map(Shape::Picture));
                    xml.skip_element()?;
                }
                b"Fallback" => xml.skip_element()?,
                _ => {}
            },
            XmlEvent::Empty(e) if local(&e) == b"blip" => {
                shapes.extend(prefixed_attr(&e, b"embed").map(Shape::Picture));
            }
            XmlEvent::Eof => return Ok(shapes),
            _ => {}
        }
    }
}

/// The paragraph texts (`a:p`) below the element just opened, until it
/// closes.
fn read_paragraphs(xml: &mut Xml<'_>) -> Result<Vec<String>> {
    let depth = xml.depth();
    let mut paragraphs = Vec::new();
    let mut current: Option<String> = None;
    let mut in_text = false;
    loop {
        match xml.next()? {
            XmlEvent::Start(e) => match local(&e).as_slice() {
                b"p" => current = Some(String::new()),
                b"t" => in_text = true,
                b"Fallback" => xml.skip_element()?,
                _ => {}
            },
            XmlEvent::Empty(e) => match local(&e).as_slice() {
                b"p" => paragraphs.push(String::new()),
                b"br" => {
                    if let Some(c) = current.as_mut() {
                        c.push('\n');
                    }
                }
                _ => {}
            },
            XmlEvent::Text(t) if in_text => {
                if let Some(c) = current.as_mut() {
                    c.push_str(&t);
                }
            }
            XmlEvent::End(name) => {
                match name.as_slice() {
                    b"t" => in_text = false,
                    b"p" => paragraphs.extend(current.take()),
                    _ => {}
                }
                if xml.depth() < depth {
                    return Ok(paragraphs);
                }
            }
            XmlEvent::Eof => return Ok(paragraphs),
            XmlEvent::Text(_) => {}
        }
    }
}

/// The rows of the `a:tbl` just opened; a cell's text is its paragraphs
/// joined with `\n`, trimmed.
fn read_table(xml: &mut Xml<'_>) -> Result<Vec<Vec<String>>> {
    let depth = xml.depth();
    let mut rows: Vec<Vec<String>> = Vec::new();
    loop {
        match xml.next()? {
            XmlEvent::Start(e) => match local(&e).as_slice() {
                b"tr" => rows.push(Vec::new()),
                b"tc" => {
                    let text = read_paragraphs(xml)?.join("\n").trim().to_owned();
                    if let Some(row) = rows.last_mut() {
                        row.push(text);
                    }
                }
                _ => {}
            },
            XmlEvent::Empty(e) if local(&e) == b"tc" => {
                if let Some(row) = rows.last_mut() {
                    row.push(String::new());
                }
            }
            XmlEvent::End(_) if xml.depth() < depth => return Ok(rows),
            XmlEvent::Eof => return Ok(rows),
            _ => {}
        }
    }
}
