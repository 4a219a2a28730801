//! PDF text for `Read`: the pages picked by `pages`, extracted off the async
//! runtime, each under a `--- page N ---` header.
//!
//! `offset` and `limit` count lines of plain text files and do not apply
//! here; a PDF is paged with `pages` instead.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use lopdf::{Document, LoadOptions};

use super::file_state::MAX_TEXT_BYTES;
use crate::chunk::ToolChunk;
use crate::tool::ToolCallContext;

/// Most pages one call shows.
const MAX_PAGES_PER_CALL: u32 = 20;
/// Longest PDF read whole when `pages` is not given.
const MAX_PAGES_WITHOUT_RANGE: u32 = 10;
/// Largest size one stream may decompress to, in bytes.
const MAX_DECOMPRESSED_BYTES: usize = 64 * 1024 * 1024;
/// Longest wait for the extraction.
const EXTRACT_TIMEOUT: Duration = Duration::from_secs(60);

/// The text of one page.
enum PageText {
    Text(String),
    Empty,
    Failed(String),
}

/// What the extraction found: the page count and the chosen pages in order.
struct Extracted {
    total: u32,
    pages: Vec<(u32, PageText)>,
}

/// Reads the PDF at `path` and shows the text of the chosen pages, at most
/// `max_output_bytes` of it.
pub(super) async fn read_pdf(
    path: &Path,
    pages: Option<&str>,
    max_output_bytes: usize,
    ctx: &ToolCallContext,
) -> Result<ToolChunk, ToolChunk> {
    let shown = path.display().to_string();
    let range = pages
        .map(parse_pages)
        .transpose()
        .map_err(|e| ToolChunk::error(format!("Invalid pages {pages:?} for {shown}: {e}")))?;
    let bytes = ctx
        .backend
        .read(path, MAX_TEXT_BYTES)
        .await
        .map_err(|e| ToolChunk::error(format!("Cannot read {shown}: {e}")))?;
    let job = tokio::task::spawn_blocking(move || extract(&bytes, range));
    let extracted = match tokio::time::timeout(EXTRACT_TIMEOUT, job).await {
        Err(_) => {
            return Err(ToolChunk::error(format!(
                "Cannot read {shown}: extracting its text took more than {} seconds.",
                EXTRACT_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(_)) => {
            return Err(ToolChunk::error(format!(
                "Cannot read {shown}: the PDF reader failed on this file."
            )));
        }
        Ok(Ok(result)) => {
            result.map_err(|e| ToolChunk::error(format!("Cannot read {shown}: {e}")))?
        }
    };
    render(&shown, &extracted, max_output_bytes)
}

/// `"3"` or `"2-5"` as a first and last page, at most
/// [`MAX_PAGES_PER_CALL`] pages.
fn parse_pages(text: &str) -> Result<(u32, u32), String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("{:?} is not a page number (pages count from 1)", s.trim()))
    };
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if last < first {
        return Err(format!(
            "the range ends at page {last}, before page {first}"
        ));
    }
    if last - first >= MAX_PAGES_PER_CALL {
        return Err(format!(
            "at most {MAX_PAGES_PER_CALL} pages per call, such as \"{first}-{}\"",
            first + MAX_PAGES_PER_CALL - 1
        ));
    }
    Ok((first, last))
}

/// Loads the document and extracts the text of the chosen pages.
fn extract(bytes: &[u8], range: Option<(u32, u32)>) -> Result<Extracted, String> {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_DECOMPRESSED_BYTES),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(bytes, options)
        .map_err(|e| format!("it is not a readable PDF ({e})."))?;
    if doc.trailer.has(b"Encrypt") && doc.encryption_state.is_none() {
        return Err("the PDF is encrypted and needs a password, which Read cannot give.".into());
    }
    let ids = doc.get_pages();
    let total = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    if total == 0 {
        return Err("the PDF has no pages that can be read; it may be damaged.".into());
    }
    let (first, last) = match range {
        Some((first, _)) if first > total => {
            return Err(format!(
                "the PDF has {total} pages; page {first} is past the end."
            ));
        }
        Some((first, last)) => (first, last.min(total)),
        None if total > MAX_PAGES_WITHOUT_RANGE => {
            return Err(format!(
                "the PDF has {total} pages, more than the {MAX_PAGES_WITHOUT_RANGE} read without \
                 `pages`. Give a range such as pages=\"1-{}\" (at most {MAX_PAGES_PER_CALL} pages \
                 per call).",
                MAX_PAGES_PER_CALL.min(total)
            ));
        }
        None => (1, total),
    };
    let pages = (first..=last).map(|n| (n, page_text(&doc, n))).collect();
    Ok(Extracted { total, pages })
}

/// The text of page `n`, or why there is none.
fn page_text(doc: &Document, n: u32) -> PageText {
    let mut text = String::new();
    let mut failure = None;
    for chunk in doc.extract_text_chunks_with_limit(&[n], MAX_DECOMPRESSED_BYTES) {
        match chunk {
            Ok(part) => text.push_str(&part),
            Err(e) => {
                failure.get_or_insert_with(|| e.to_string());
            }
        }
    }
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let text = lines.join("\n");
    let text = text.trim_matches('\n');
    match failure {
        _ if !text.trim().is_empty() => PageText::Text(text.to_owned()),
        Some(e) => PageText::Failed(e),
        None => PageText::Empty,
    }
}

/// The pages under their headers, cut at `max_output_bytes`, or an error
/// when none of them has text.
fn render(shown: &str, doc: &Extracted, max_output_bytes: usize) -> Result<ToolChunk, ToolChunk> {
    let (Some((first, _)), Some((last, _))) = (doc.pages.first(), doc.pages.last()) else {
        return Err(ToolChunk::error(format!("{shown}: no pages were chosen.")));
    };
    let (first, last, total) = (*first, *last, doc.total);
    let span = if first == last {
        format!("page {first}")
    } else {
        format!("pages {first}-{last}")
    };
    if !doc
        .pages
        .iter()
        .any(|(_, p)| matches!(p, PageText::Text(_)))
    {
        let failures: Vec<String> = doc
            .pages
            .iter()
            .filter_map(|(n, p)| match p {
                PageText::Failed(e) => Some(format!("page {n}: {e}")),
                _ => None,
            })
            .collect();
        let detail = if failures.is_empty() {
            "the pages may be scanned images".to_owned()
        } else {
            failures.join("; ")
        };
        return Err(ToolChunk::error(format!(
            "{shown} has no extractable text on {span} of {total} ({detail})."
        )));
    }
    let mut out = String::new();
    let mut shown_end = first - 1;
    let mut cut = false;
    for (n, page) in &doc.pages {
        let block = match page {
            PageText::Text(text) => format!("--- page {n} ---\n{text}\n"),
            PageText::Empty => format!("--- page {n} ---\n(no extractable text on page {n})\n"),
            PageText::Failed(e) => {
                format!("--- page {n} ---\n(cannot extract the text of page {n}: {e})\n")
            }
        };
        if out.len() + block.len() > max_output_bytes {
            if out.is_empty() {
                let mut end = max_output_bytes.min(block.len());
                while !block.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&block[..end]);
                let _ = writeln!(out, "\n(Page {n} cut at {max_output_bytes} bytes.)");
                shown_end = *n;
            }
            cut = true;
            break;
        }
        out.push_str(&block);
        shown_end = *n;
    }
    if shown_end < total {
        let next = shown_end + 1;
        let next_last = (shown_end + MAX_PAGES_PER_CALL).min(total);
        let why = if cut { "Output is capped. " } else { "" };
        let _ = write!(
            out,
            "\n({why}Showing pages {first}-{shown_end} of {total}. Use pages=\"{next}-{next_last}\" \
             to read on.)"
        );
    }
    Ok(ToolChunk::text(out)
        .with_metadata("file_path", shown.to_owned())
        .with_metadata("total_pages", total)
        .with_metadata("start_page", first)
        .with_metadata("end_page", shown_end))
}

#[cfg(test)]
mod tests {
    use super::parse_pages;

    #[test]
    fn pages_are_a_number_or_a_short_range() {
        assert_eq!(parse_pages("3"), Ok((3, 3)));
        assert_eq!(parse_pages(" 2 - 5 "), Ok((2, 5)));
        assert_eq!(parse_pages("1-20"), Ok((1, 20)));
        assert!(parse_pages("1-21").is_err());
        assert!(parse_pages("0").is_err());
        assert!(parse_pages("5-2").is_err());
        assert!(parse_pages("a-b").is_err());
        assert!(parse_pages("").is_err());
    }
}
