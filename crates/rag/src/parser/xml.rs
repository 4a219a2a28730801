//! A pull reader over one XML part that enforces the depth limit and
//! merges text and entity references into plain text events.

use quick_xml::Reader;
use quick_xml::escape::{resolve_predefined_entity, unescape};
use quick_xml::events::{BytesStart, Event};

use crate::error::{Error, Result};

/// One event of an XML part.
#[derive(Debug)]
pub(crate) enum XmlEvent<'a> {
    /// An opening tag.
    Start(BytesStart<'a>),
    /// A self-closing tag.
    Empty(BytesStart<'a>),
    /// A closing tag, by local name.
    End(Vec<u8>),
    /// Text (entities resolved).
    Text(String),
    /// The end of the part.
    Eof,
}

/// The reader.
#[derive(Debug)]
pub(crate) struct Xml<'a> {
    reader: Reader<&'a [u8]>,
    depth: usize,
    limit: usize,
    part: String,
    filename: String,
    format: &'static str,
}

impl<'a> Xml<'a> {
    pub(crate) fn new(
        text: &'a str,
        part: &str,
        filename: &str,
        format: &'static str,
        limit: usize,
    ) -> Self {
        Self {
            reader: Reader::from_str(text),
            depth: 0,
            limit,
            part: part.to_owned(),
            filename: filename.to_owned(),
            format,
        }
    }

    /// The number of open elements.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The next event.
    pub(crate) fn next(&mut self) -> Result<XmlEvent<'a>> {
        loop {
            let event = self.reader.read_event().map_err(|e| {
                Error::malformed(&self.filename, self.format, format!("{}: {e}", self.part))
            })?;
            return Ok(match event {
                Event::Start(e) => {
                    self.depth += 1;
                    if self.depth > self.limit {
                        return Err(Error::XmlTooDeep {
                            part: self.part.clone(),
                            limit: self.limit,
                        });
                    }
                    XmlEvent::Start(e)
                }
                Event::Empty(e) => XmlEvent::Empty(e),
                Event::End(e) => {
                    self.depth = self.depth.saturating_sub(1);
                    XmlEvent::End(e.local_name().as_ref().as_bytes().to_vec())
                }
                Event::Text(t) => XmlEvent::Text(t.xml10_content().into_owned()),
                Event::CData(t) => XmlEvent::Text(t.into_inner().into_owned()),
                Event::GeneralRef(r) => {
                    let resolved = match r.resolve_char_ref() {
                        Ok(Some(c)) => c.to_string(),
                        _ => {
                            let name = r.xml10_content();
                            resolve_predefined_entity(&name)
                                .map_or_else(|| format!("&{name};"), str::to_owned)
                        }
                    };
                    XmlEvent::Text(resolved)
                }
                Event::Eof => XmlEvent::Eof,
                Event::Decl(_) | Event::PI(_) | Event::DocType(_) | Event::Comment(_) => continue,
            });
        }
    }

    /// Reads up to the root element and checks its local name, so that a
    /// container of another kind (a `.docx` handed to the Excel parser) is
    /// refused instead of read as empty.
    pub(crate) fn expect_root(&mut self, name: &str) -> Result<()> {
        loop {
            match self.next()? {
                XmlEvent::Start(e) | XmlEvent::Empty(e) => {
                    if local(&e) == name.as_bytes() {
                        return Ok(());
                    }
                    break;
                }
                XmlEvent::Eof => break,
                _ => {}
            }
        }
        Err(Error::malformed(
            &self.filename,
            self.format,
            format!("`{}` is not a `{name}` part", self.part),
        ))
    }

    /// Skips the rest of the element just opened (its children and end tag).
    pub(crate) fn skip_element(&mut self) -> Result<()> {
        let target = self.depth.saturating_sub(1);
        while self.depth > target {
            if let XmlEvent::Eof = self.next()? {
                break;
            }
        }
        Ok(())
    }
}

/// The value of the attribute whose local name is `local` (prefix ignored),
/// entities resolved.
pub(crate) fn attr(e: &BytesStart<'_>, local: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref().as_bytes() == local).then(|| unescaped(&a.value))
    })
}

/// The value of a prefixed attribute with local name `local` (such as
/// `r:id` or `r:embed`), ignoring the unprefixed attribute of that name.
pub(crate) fn prefixed_attr(e: &BytesStart<'_>, local: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.prefix().is_some() && a.key.local_name().as_ref().as_bytes() == local)
            .then(|| unescaped(&a.value))
    })
}

fn unescaped(raw: &str) -> String {
    unescape(raw).map_or_else(|_| raw.to_owned(), std::borrow::Cow::into_owned)
}

/// The local name of a tag.
pub(crate) fn local(e: &BytesStart<'_>) -> Vec<u8> {
    e.local_name().as_ref().as_bytes().to_vec()
}
