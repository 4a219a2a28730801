//! HTML: the visible text as one section, block structure kept.
//!
//! A small single-pass tag scanner written for this job, chosen over an
//! HTML5 tree builder (`html5ever`/`scraper` pull in a large dependency
//! tree) and over an XML reader (real HTML is not well-formed: void
//! elements, unquoted attributes, stray `<`). It runs in linear time and
//! its output is never longer than its input. What it does:
//! - drops comments, doctypes and the contents of `script`, `style`,
//!   `noscript`, `template`, `svg`, `iframe` and `object`;
//! - ends paragraphs at block elements (`p`, `div`, `section`, `li`,
//!   `table`, `tr`, ...), breaks lines at `br`;
//! - writes headings as Markdown (`# `, `## `, ...), list items as `- `,
//!   table cells of a row separated by ` | `;
//! - collapses white space outside `pre`, keeps it inside;
//! - decodes numeric character references and the common named entities
//!   (unknown ones stay as written).
//!
//! The bytes must be UTF-8 ([`Error::InvalidUtf8`] otherwise).

use super::{Parser, Sections};
use crate::error::{Error, Result};
use crate::limits::ParseLimits;
use crate::section::{Metadata, Section};

/// Extracts the visible text of an HTML page into one section.
#[derive(Debug, Clone, Default)]
pub struct HtmlParser {
    limits: ParseLimits,
}

impl HtmlParser {
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

impl Parser for HtmlParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &["text/html", "application/xhtml+xml"]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[".htm", ".html", ".xhtml"]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        self.limits.check_input(bytes)?;
        let html = std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
            filename: filename.to_owned(),
            valid_up_to: e.valid_up_to(),
        })?;
        let mut out = Sections::new(filename, self.limits);
        out.push_text(html_to_text(html), Metadata::new())?;
        Ok(out.into_vec())
    }
}

/// Elements whose content is never shown.
const HIDDEN: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "object",
];

/// Elements that start and end a paragraph.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "head",
    "header",
    "hr",
    "html",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "title",
    "ul",
];

/// The visible text of `html`.
pub(crate) fn html_to_text(html: &str) -> String {
    let mut out = Writer::default();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            out.text(rest);
            break;
        };
        out.text(&rest[..lt]);
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |i| &after[i + 3..]);
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            rest = rest.find('>').map_or("", |i| &rest[i + 1..]);
            continue;
        }
        let Some(tag) = Tag::scan(rest) else {
            out.text("<");
            rest = &rest[1..];
            continue;
        };
        rest = &rest[tag.len..];
        if !tag.end && !tag.self_closing && HIDDEN.contains(&tag.name.as_str()) {
            rest = skip_raw_text(rest, &tag.name);
            continue;
        }
        out.tag(&tag);
    }
    out.finish()
}

/// The rest of `html` after the end tag of the raw-text element `name`.
fn skip_raw_text<'a>(html: &'a str, name: &str) -> &'a str {
    let closing = format!("</{name}");
    let lower = html.to_ascii_lowercase();
    match lower.find(&closing) {
        Some(i) => html[i..].find('>').map_or("", |j| &html[i + j + 1..]),
        None => "",
    }
}

/// A scanned tag.
#[derive(Debug)]
struct Tag {
    name: String,
    end: bool,
    self_closing: bool,
    /// Bytes the tag spans, `<` to `>`.
    len: usize,
}

impl Tag {
    /// The tag at the start of `s` (which starts with `<`), if it is one.
    fn scan(s: &str) -> Option<Self> {
        let bytes = s.as_bytes();
        let mut i = 1;
        let end = bytes.get(1) == Some(&b'/');
        if end {
            i += 1;
        }
        let name_start = i;
        if !bytes.get(i)?.is_ascii_alphabetic() {
            return None;
        }
        while bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'-')
        {
            i += 1;
        }
        let name = s[name_start..i].to_ascii_lowercase();
        let mut quote = None;
        while let Some(&b) = bytes.get(i) {
            match (quote, b) {
                (Some(q), _) if b == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(b),
                (None, b'>') => {
                    let self_closing = i > 0 && bytes[i - 1] == b'/';
                    return Some(Self {
                        name,
                        end,
                        self_closing,
                        len: i + 1,
                    });
                }
                (None, _) => {}
            }
            i += 1;
        }
        // An unterminated tag runs to the end of the input.
        Some(Self {
            name,
            end,
            self_closing: false,
            len: s.len(),
        })
    }
}

/// Builds the text with collapsed white space and pending breaks.
#[derive(Debug, Default)]
struct Writer {
    buf: String,
    pending_space: bool,
    pending_breaks: usize,
    in_pre: usize,
    cells_in_row: usize,
}

impl Writer {
    fn tag(&mut self, tag: &Tag) {
        let name = tag.name.as_str();
        match name {
            "br" => {
                self.buf.push('\n');
                self.pending_space = false;
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.paragraph();
                if !tag.end {
                    let level = usize::from(name.as_bytes()[1] - b'0');
                    self.marker(&format!("{} ", "#".repeat(level)));
                }
            }
            "li" => {
                self.line();
                if !tag.end {
                    self.marker("- ");
                }
            }
            "tr" => {
                self.line();
                self.cells_in_row = 0;
            }
            "td" | "th" if !tag.end => {
                if self.cells_in_row > 0 {
                    self.marker(" | ");
                }
                self.cells_in_row += 1;
            }
            _ if BLOCKS.contains(&name) => {
                self.paragraph();
                if name == "pre" {
                    if tag.end {
                        self.in_pre = self.in_pre.saturating_sub(1);
                    } else if !tag.self_closing {
                        self.in_pre += 1;
                    }
                }
            }
            _ => {}
        }
    }

    fn paragraph(&mut self) {
        self.pending_breaks = self.pending_breaks.max(2);
        self.pending_space = false;
    }

    fn line(&mut self) {
        self.pending_breaks = self.pending_breaks.max(1);
        self.pending_space = false;
    }

    fn flush(&mut self) {
        if self.pending_breaks > 0 && !self.buf.is_empty() {
            let trimmed = self.buf.trim_end_matches([' ', '\t']).len();
            self.buf.truncate(trimmed);
            let have = self.buf.len() - self.buf.trim_end_matches('\n').len();
            for _ in have..self.pending_breaks {
                self.buf.push('\n');
            }
        } else if self.pending_space && !self.buf.is_empty() && !self.buf.ends_with('\n') {
            self.buf.push(' ');
        }
        self.pending_breaks = 0;
        self.pending_space = false;
    }

    fn marker(&mut self, s: &str) {
        self.flush();
        self.buf.push_str(s);
    }

    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let decoded = decode_entities(raw);
        if self.in_pre > 0 {
            self.flush();
            self.buf.push_str(&decoded);
            return;
        }
        for word in decoded.split(|c: char| c.is_whitespace() && c != '\u{a0}') {
            if word.is_empty() {
                self.pending_space = true;
                continue;
            }
            self.flush();
            self.buf.push_str(word);
            self.pending_space = true;
        }
        if !decoded.ends_with(|c: char| c.is_whitespace() && c != '\u{a0}') {
            self.pending_space = false;
        }
    }

    fn finish(self) -> String {
        let lines: Vec<&str> = self.buf.lines().map(str::trim_end).collect();
        lines.join("\n").trim().replace('\u{a0}', " ")
    }
}

/// `raw` with character references decoded.
fn decode_entities(raw: &str) -> std::borrow::Cow<'_, str> {
    if !raw.contains('&') {
        return raw.into();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.bytes().take(34).position(|b| b == b';');
        match end.and_then(|e| entity(&rest[1..e]).map(|c| (e, c))) {
            Some((e, c)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// The character of the entity `name` (between `&` and `;`).
fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "hellip" => '…',
        "mdash" => '—',
        "ndash" => '–',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "deg" => '°',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "times" => '×',
        "divide" => '÷',
        "shy" => '\u{ad}',
        _ => return None,
    })
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
