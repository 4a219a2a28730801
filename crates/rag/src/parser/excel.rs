//! Excel (`.xlsx`): each sheet's cells as a table, read straight from the
//! workbook's XML (no spreadsheet engine).
//!
//! - The first row of a sheet's used range is the header; a sheet with no
//!   row below it is skipped (as pandas sees it: an empty frame).
//! - The used range spans from the first to the last non-empty row and
//!   column; cells in between that are empty render empty.
//! - Values are written as stored: shared and inline strings, numbers as
//!   their stored digits, booleans `TRUE` / `FALSE`, errors as `#DIV/0!`,
//!   formulas by their cached value. Dates stay serial numbers (number
//!   formats are not applied).
//! - Markdown: `Sheet: name` (with `include_sheet_names`), then a pipe
//!   table with `|` escaped; cell coordinates `[B3] ` with
//!   `include_cell_coordinates`. JSON: `Sheet: name`, the marker line, one
//!   JSON array (or `{"A1": ...}` object) per row.
//! - `separate_sheet`: one section per sheet, `{"sheet": name}`; otherwise
//!   all sheets in one section with empty metadata, images after it.
//! - `include_image` (default off): pictures anchored on a sheet, in anchor
//!   row order, as data sections `{"sheet": name, "media_type": ...}`.
//!
//! Legacy `.xls` (BIFF) files are not read.

use std::collections::{BTreeMap, HashMap};

use super::archive::{Archive, split_dir};
use super::table::{JSON_TABLE_MARKER, TableFormat};
use super::xml::{XmlEvent, attr, local, prefixed_attr};
use super::{Parser, Sections, media};
use crate::error::{Error, Result};
use crate::limits::ParseLimits;
use crate::section::{Metadata, Section, meta};

/// Options of [`ExcelParser`] (AgentScope's names and defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExcelOptions {
    /// Write `Sheet: name` before each table (default `true`).
    pub include_sheet_names: bool,
    /// Prefix each cell with its coordinate, e.g. `[A1]` (default `false`).
    pub include_cell_coordinates: bool,
    /// Emit anchored pictures as data sections (default `false`).
    pub include_image: bool,
    /// One section per sheet with `{"sheet": name}` (default `false`).
    pub separate_sheet: bool,
    /// How tables are written (default Markdown).
    pub table_format: TableFormat,
}

impl Default for ExcelOptions {
    fn default() -> Self {
        Self {
            include_sheet_names: true,
            include_cell_coordinates: false,
            include_image: false,
            separate_sheet: false,
            table_format: TableFormat::Markdown,
        }
    }
}

/// Reads `.xlsx` workbooks.
#[derive(Debug, Clone, Default)]
pub struct ExcelParser {
    options: ExcelOptions,
    limits: ParseLimits,
}

impl ExcelParser {
    /// A parser with `options` and default limits.
    #[must_use]
    pub fn new(options: ExcelOptions) -> Self {
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

const FORMAT: &str = "XLSX";

/// An image's bytes and media type.
type Picture = (Vec<u8>, &'static str);

/// A sheet's non-empty cells by (row, column), both from 0.
type Cells = BTreeMap<(u32, u32), String>;

impl Parser for ExcelParser {
    fn supported_media_types(&self) -> &'static [&'static str] {
        &["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"]
    }

    fn supported_extensions(&self) -> &'static [&'static str] {
        &[".xlsx"]
    }

    fn parse(&self, bytes: &[u8], filename: &str) -> Result<Vec<Section>> {
        let mut archive = Archive::open(bytes, filename, FORMAT, self.limits)?;
        let workbook = archive.main_part("xl/workbook.xml")?;
        let rels = archive.relationships(&workbook)?;
        let sheets = read_sheet_list(&mut archive, &workbook)?;
        let shared_part = rels
            .values()
            .find(|r| r.kind == "sharedStrings")
            .map_or_else(
                || format!("{}sharedStrings.xml", split_dir(&workbook).0),
                |r| r.target.clone(),
            );
        let shared = read_shared_strings(&mut archive, &shared_part)?;

        // Per sheet: its name, its table text, its pictures.
        let mut parsed: Vec<(String, Option<String>, Vec<Picture>)> = Vec::new();
        for (name, rel_id) in sheets {
            let Some(part) = rels.get(&rel_id).map(|r| r.target.clone()) else {
                continue;
            };
            let cells = read_cells(&mut archive, &part, &shared)?;
            let text = self.render(&name, &cells)?;
            let images = if self.options.include_image {
                read_sheet_images(&mut archive, &part)?
            } else {
                Vec::new()
            };
            parsed.push((name, text, images));
        }

        let mut out = Sections::new(filename, self.limits);
        if !self.options.separate_sheet {
            let texts: Vec<&str> = parsed.iter().filter_map(|(_, t, _)| t.as_deref()).collect();
            if !texts.is_empty() {
                out.push_text(texts.join("\n"), Metadata::new())?;
            }
        }
        for (name, text, images) in parsed {
            if self.options.separate_sheet
                && let Some(text) = text
            {
                out.push_text(text, meta("sheet", name.clone()))?;
            }
            for (data, media_type) in images {
                out.push_image(&data, media_type, meta("sheet", name.clone()))?;
            }
        }
        Ok(out.into_vec())
    }
}

impl ExcelParser {
    /// The sheet as text, or `None` when it has no data row.
    fn render(&self, name: &str, cells: &Cells) -> Result<Option<String>> {
        let Some(((first_row, _), _)) = cells.first_key_value() else {
            return Ok(None);
        };
        let first_row = *first_row;
        let last_row = cells.keys().map(|k| k.0).max().unwrap_or(first_row);
        let first_col = cells.keys().map(|k| k.1).min().unwrap_or(0);
        let last_col = cells.keys().map(|k| k.1).max().unwrap_or(0);
        if last_row == first_row {
            return Ok(None);
        }
        let rows = u64::from(last_row - first_row) + 1;
        let cols = u64::from(last_col - first_col) + 1;
        // Every rendered cell costs at least three bytes ("|  "): a sparse
        // sheet whose grid could not fit one section is refused up front.
        let limit = self.limits.max_section_bytes;
        if rows.saturating_mul(cols).saturating_mul(3) > u64::try_from(limit).unwrap_or(u64::MAX) {
            return Err(Error::SectionTooLarge { limit });
        }
        let coords = self.options.include_cell_coordinates;
        let cell = |r: u32, c: u32| -> String { cells.get(&(r, c)).cloned().unwrap_or_default() };
        let mut lines = Vec::new();
        if self.options.include_sheet_names {
            lines.push(format!("Sheet: {name}"));
        }
        match self.options.table_format {
            TableFormat::Markdown => {
                for r in first_row..=last_row {
                    let row: Vec<String> = (first_col..=last_col)
                        .map(|c| {
                            let text = cell(r, c).replace('|', "\\|");
                            if coords {
                                format!("[{}] {text}", coordinate(r, c))
                            } else {
                                text
                            }
                        })
                        .collect();
                    lines.push(format!("| {} |", row.join(" | ")));
                    if r == first_row {
                        let sep = vec!["---"; row.len()];
                        lines.push(format!("| {} |", sep.join(" | ")));
                    }
                }
                let mut text = lines.join("\n");
                text.push('\n');
                Ok(Some(text))
            }
            TableFormat::Json => {
                lines.push(JSON_TABLE_MARKER.to_owned());
                for r in first_row..=last_row {
                    let line = if coords {
                        let obj: serde_json::Map<String, serde_json::Value> = (first_col
                            ..=last_col)
                            .map(|c| (coordinate(r, c), cell(r, c).into()))
                            .collect();
                        serde_json::Value::Object(obj).to_string()
                    } else {
                        let row: Vec<String> = (first_col..=last_col).map(|c| cell(r, c)).collect();
                        serde_json::to_string(&row).unwrap_or_default()
                    };
                    lines.push(line);
                }
                Ok(Some(lines.join("\n")))
            }
        }
    }
}

/// `A1`-style name of the 0-based cell (`row`, `col`).
fn coordinate(row: u32, col: u32) -> String {
    let mut letters = Vec::new();
    let mut n = col + 1;
    while n > 0 {
        n -= 1;
        letters.push(char::from(b'A' + u8::try_from(n % 26).unwrap_or(0)));
        n /= 26;
    }
    letters.reverse();
    format!("{}{}", letters.into_iter().collect::<String>(), row + 1)
}

/// The 0-based (row, column) of an `A1`-style reference.
fn parse_reference(reference: &str) -> Option<(u32, u32)> {
    let split = reference.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = reference.split_at(split);
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let mut col: u32 = 0;
    for b in letters.bytes() {
        if !b.is_ascii_alphabetic() {
            return None;
        }
        col = col * 26 + u32::from(b.to_ascii_uppercase() - b'A' + 1);
    }
    let row: u32 = digits.parse().ok()?;
    Some((row.checked_sub(1)?, col - 1))
}

/// The sheets of the workbook in order: (name, relationship id).
fn read_sheet_list(archive: &mut Archive<'_>, workbook: &str) -> Result<Vec<(String, String)>> {
    let text = archive.read_text_required(workbook)?;
    let mut xml = archive.xml(&text, workbook);
    xml.expect_root("workbook")?;
    let mut sheets = Vec::new();
    loop {
        match xml.next()? {
            XmlEvent::Start(e) | XmlEvent::Empty(e) if local(&e) == b"sheet" => {
                if let (Some(name), Some(id)) = (attr(&e, b"name"), prefixed_attr(&e, b"id")) {
                    sheets.push((name, id));
                }
            }
            XmlEvent::Eof => return Ok(sheets),
            _ => {}
        }
    }
}

/// The shared string table (empty when the workbook has none).
fn read_shared_strings(archive: &mut Archive<'_>, part: &str) -> Result<Vec<String>> {
    let Some(text) = archive.read_text(part)? else {
        return Ok(Vec::new());
    };
    let mut xml = archive.xml(&text, part);
    let mut strings = Vec::new();
    let mut current: Option<String> = None;
    let mut in_text = false;
    let mut in_phonetic = false;
    loop {
        match xml.next()? {
            XmlEvent::Start(e) => match local(&e).as_slice() {
                b"si" => current = Some(String::new()),
                b"t" => in_text = !in_phonetic,
                b"rPh" => in_phonetic = true,
                _ => {}
            },
            XmlEvent::Empty(e) if local(&e) == b"si" => strings.push(String::new()),
            XmlEvent::Text(t) if in_text => {
                if let Some(s) = current.as_mut() {
                    s.push_str(&t);
                }
            }
            XmlEvent::End(name) => match name.as_slice() {
                b"t" => in_text = false,
                b"rPh" => in_phonetic = false,
                b"si" => strings.extend(current.take()),
                _ => {}
            },
            XmlEvent::Eof => return Ok(strings),
            _ => {}
        }
    }
}

/// The non-empty cells of a worksheet part.
fn read_cells(archive: &mut Archive<'_>, part: &str, shared: &[String]) -> Result<Cells> {
    let Some(text) = archive.read_text(part)? else {
        return Ok(Cells::new());
    };
    let mut xml = archive.xml(&text, part);
    let mut cells = Cells::new();
    let mut row: u32 = 0;
    let mut next_col: u32 = 0;
    // The open cell: position, type, value text.
    let mut cell: Option<((u32, u32), String, String)> = None;
    let mut in_value = false;
    loop {
        match xml.next()? {
            XmlEvent::Start(e) | XmlEvent::Empty(e) if local(&e) == b"row" => {
                row = attr(&e, b"r")
                    .and_then(|r| r.parse::<u32>().ok())
                    .and_then(|r| r.checked_sub(1))
                    .unwrap_or(row);
                next_col = 0;
            }
            XmlEvent::Start(e) if local(&e) == b"c" => {
                let pos = attr(&e, b"r")
                    .and_then(|r| parse_reference(&r))
                    .unwrap_or((row, next_col));
                next_col = pos.1.saturating_add(1);
                cell = Some((pos, attr(&e, b"t").unwrap_or_default(), String::new()));
            }
            XmlEvent::Empty(e) if local(&e) == b"c" => {
                let pos = attr(&e, b"r")
                    .and_then(|r| parse_reference(&r))
                    .unwrap_or((row, next_col));
                next_col = pos.1.saturating_add(1);
            }
            XmlEvent::Start(e) if matches!(local(&e).as_slice(), b"v" | b"t") => in_value = true,
            XmlEvent::Start(e) if local(&e) == b"rPh" => xml.skip_element()?,
            XmlEvent::Text(t) if in_value => {
                if let Some(c) = cell.as_mut() {
                    c.2.push_str(&t);
                }
            }
            XmlEvent::End(name) => match name.as_slice() {
                b"v" | b"t" => in_value = false,
                b"c" => {
                    if let Some((pos, kind, raw)) = cell.take() {
                        let value = cell_value(&kind, &raw, shared);
                        let value = value.trim().replace("\r\n", "\n").replace('\r', "\n");
                        if !value.is_empty() {
                            cells.insert(pos, value);
                        }
                    }
                }
                _ => {}
            },
            XmlEvent::Eof => return Ok(cells),
            _ => {}
        }
    }
}

/// The display text of a cell of type `kind` holding `raw`.
fn cell_value(kind: &str, raw: &str, shared: &[String]) -> String {
    match kind {
        "s" => raw
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|i| shared.get(i))
            .cloned()
            .unwrap_or_default(),
        "b" => if raw.trim() == "1" { "TRUE" } else { "FALSE" }.to_owned(),
        _ => raw.to_owned(),
    }
}

/// The pictures anchored on the worksheet `part`, in anchor row order.
fn read_sheet_images(archive: &mut Archive<'_>, part: &str) -> Result<Vec<Picture>> {
    let rels = archive.relationships(part)?;
    let mut anchored: Vec<(u32, String)> = Vec::new();
    for drawing in rels.values().filter(|r| r.kind == "drawing") {
        let drawing_rels: HashMap<_, _> = archive.relationships(&drawing.target)?;
        let Some(text) = archive.read_text(&drawing.target)? else {
            continue;
        };
        let mut xml = archive.xml(&text, &drawing.target);
        let mut row = 0;
        let mut in_from_row = false;
        let mut in_from = false;
        loop {
            match xml.next()? {
                XmlEvent::Start(e) => match local(&e).as_slice() {
                    b"from" => in_from = true,
                    b"row" if in_from => in_from_row = true,
                    _ => {}
                },
                XmlEvent::Empty(e) if local(&e) == b"blip" => {
                    if let Some(rel) =
                        prefixed_attr(&e, b"embed").and_then(|id| drawing_rels.get(&id))
                    {
                        anchored.push((row, rel.target.clone()));
                    }
                }
                XmlEvent::Text(t) if in_from_row => row = t.trim().parse().unwrap_or(0),
                XmlEvent::End(name) => match name.as_slice() {
                    b"from" => in_from = false,
                    b"row" => in_from_row = false,
                    _ => {}
                },
                XmlEvent::Eof => break,
                _ => {}
            }
        }
    }
    anchored.sort_by_key(|(row, _)| *row);
    let mut out = Vec::new();
    for (_, target) in anchored {
        if let Some(data) = archive.read(&target)? {
            let media_type = media::embedded_image_type(&data, &target);
            out.push((data, media_type));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_coordinates_round_trip() {
        assert_eq!(parse_reference("A1"), Some((0, 0)));
        assert_eq!(parse_reference("AB12"), Some((11, 27)));
        assert_eq!(parse_reference("XFD1048576"), Some((1_048_575, 16_383)));
        assert_eq!(parse_reference("A0"), None);
        assert_eq!(parse_reference("ABCD1"), None);
        assert_eq!(coordinate(11, 27), "AB12");
        assert_eq!(coordinate(0, 25), "Z1");
    }
}
