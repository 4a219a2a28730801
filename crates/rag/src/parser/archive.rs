//! Zip containers (docx, xlsx, pptx) read under a decompression budget.
//!
//! Entry sizes declared in the archive are never trusted: each entry is
//! read through `take(remaining budget + 1)`, and all entries of one file
//! draw from one budget, so a zip bomb stops at the limit with bounded
//! memory.

use std::collections::HashMap;
use std::io::{Cursor, Read};

use zip::ZipArchive;
use zip::result::ZipError;

use super::xml::{Xml, XmlEvent, attr};
use crate::error::{Error, Result};
use crate::limits::ParseLimits;

/// An opened Office container.
pub(crate) struct Archive<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    remaining: u64,
    pub(crate) limits: ParseLimits,
    pub(crate) filename: &'a str,
    pub(crate) format: &'static str,
}

impl std::fmt::Debug for Archive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("filename", &self.filename)
            .field("remaining", &self.remaining)
            .finish_non_exhaustive()
    }
}

impl<'a> Archive<'a> {
    /// Opens `bytes` as a zip archive.
    pub(crate) fn open(
        bytes: &'a [u8],
        filename: &'a str,
        format: &'static str,
        limits: ParseLimits,
    ) -> Result<Self> {
        limits.check_input(bytes)?;
        let zip = ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            Error::malformed(filename, format, format!("it is not a zip container ({e})"))
        })?;
        if zip.len() > limits.max_entries {
            return Err(Error::TooManyEntries {
                count: zip.len(),
                limit: limits.max_entries,
            });
        }
        Ok(Self {
            zip,
            remaining: limits.max_decompressed_bytes,
            limits,
            filename,
            format,
        })
    }

    /// The bytes of entry `name`, or `None` when there is no such entry.
    pub(crate) fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        let entry = match self.zip.by_name(name) {
            Ok(entry) => entry,
            Err(ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(Error::malformed(self.filename, self.format, e)),
        };
        let mut out = Vec::new();
        entry
            .take(self.remaining.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| {
                Error::malformed(self.filename, self.format, format!("entry `{name}`: {e}"))
            })?;
        let read = u64::try_from(out.len()).unwrap_or(u64::MAX);
        if read > self.remaining {
            return Err(Error::DecompressedTooLarge {
                limit: self.limits.max_decompressed_bytes,
            });
        }
        self.remaining -= read;
        Ok(Some(out))
    }

    /// The entry `name` as UTF-8 text; its absence is an error.
    pub(crate) fn read_text_required(&mut self, name: &str) -> Result<String> {
        self.read_text(name)?.ok_or_else(|| {
            Error::malformed(
                self.filename,
                self.format,
                format!("the part `{name}` is missing"),
            )
        })
    }

    /// The entry `name` as UTF-8 text, or `None` when absent.
    pub(crate) fn read_text(&mut self, name: &str) -> Result<Option<String>> {
        match self.read(name)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
                Error::malformed(self.filename, self.format, format!("`{name}` is not UTF-8"))
            }),
        }
    }

    /// An XML reader over `text`, for the part `part`.
    pub(crate) fn xml<'t>(&self, text: &'t str, part: &str) -> Xml<'t> {
        Xml::new(
            text,
            part,
            self.filename,
            self.format,
            self.limits.max_xml_depth,
        )
    }

    /// The relationships of `part` (from `dir/_rels/name.rels`), keyed by id;
    /// targets resolved to entry names. Empty when the part has none.
    pub(crate) fn relationships(&mut self, part: &str) -> Result<HashMap<String, Rel>> {
        let (dir, name) = split_dir(part);
        let rels_name = format!("{dir}_rels/{name}.rels");
        let Some(text) = self.read_text(&rels_name)? else {
            return Ok(HashMap::new());
        };
        let mut xml = self.xml(&text, &rels_name);
        let mut out = HashMap::new();
        loop {
            match xml.next()? {
                XmlEvent::Start(e) | XmlEvent::Empty(e)
                    if e.local_name().as_ref() == "Relationship" =>
                {
                    if attr(&e, b"TargetMode").as_deref() == Some("External") {
                        continue;
                    }
                    if let (Some(id), Some(target)) = (attr(&e, b"Id"), attr(&e, b"Target")) {
                        let kind = attr(&e, b"Type").unwrap_or_default();
                        let kind = kind.rsplit('/').next().unwrap_or_default().to_owned();
                        out.insert(
                            id,
                            Rel {
                                target: resolve(dir, &target),
                                kind,
                            },
                        );
                    }
                }
                XmlEvent::Eof => return Ok(out),
                _ => {}
            }
        }
    }

    /// The main part named by the package relationships (`_rels/.rels`),
    /// or `fallback`.
    pub(crate) fn main_part(&mut self, fallback: &str) -> Result<String> {
        let Some(text) = self.read_text("_rels/.rels")? else {
            return Ok(fallback.to_owned());
        };
        let mut xml = self.xml(&text, "_rels/.rels");
        loop {
            match xml.next()? {
                XmlEvent::Start(e) | XmlEvent::Empty(e)
                    if e.local_name().as_ref() == "Relationship"
                        && attr(&e, b"Type").is_some_and(|t| t.ends_with("/officeDocument")) =>
                {
                    if let Some(target) = attr(&e, b"Target") {
                        return Ok(resolve("", &target));
                    }
                }
                XmlEvent::Eof => return Ok(fallback.to_owned()),
                _ => {}
            }
        }
    }
}

/// One relationship of a part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rel {
    /// The entry name of the target.
    pub(crate) target: String,
    /// The last segment of the relationship type (`image`, `slide`, `drawing`, ...).
    pub(crate) kind: String,
}

/// `("word/", "document.xml")` for `"word/document.xml"`.
pub(crate) fn split_dir(part: &str) -> (&str, &str) {
    match part.rfind('/') {
        Some(i) => (&part[..=i], &part[i + 1..]),
        None => ("", part),
    }
}

/// The entry name of `target` relative to the directory `dir` (with its
/// trailing slash); `..` and `.` segments are folded, a leading `/` means
/// the package root.
pub(crate) fn resolve(dir: &str, target: &str) -> String {
    let joined = match target.strip_prefix('/') {
        Some(absolute) => absolute.to_owned(),
        None => format!("{dir}{target}"),
    };
    let mut parts: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_relative_to_the_part() {
        assert_eq!(
            resolve("ppt/slides/", "../media/image1.png"),
            "ppt/media/image1.png"
        );
        assert_eq!(resolve("word/", "media/a.png"), "word/media/a.png");
        assert_eq!(resolve("word/", "/word/media/a.png"), "word/media/a.png");
        assert_eq!(resolve("", "../../x"), "x");
        assert_eq!(
            split_dir("ppt/slides/slide1.xml"),
            ("ppt/slides/", "slide1.xml")
        );
    }
}
