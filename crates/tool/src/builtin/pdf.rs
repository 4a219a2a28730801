//! PDF text for `Read`: the pages picked by `pages`, extracted off the async
//! runtime, each under a `--- Page N/TOTAL ---` header as AgentScope writes
//! it.
//!
//! `offset` and `limit` count lines of plain text files and do not apply
//! here; a PDF is paged with `pages` instead.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use lopdf::{Document, LoadOptions};

use super::file_state::MAX_TEXT_BYTES;
use super::pyrepr::py_str;
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

/// Why a PDF's pages cannot be shown, in AgentScope's words.
enum Problem {
    /// The file is not a PDF Read can open.
    Unreadable(String),
    /// More than [`MAX_PAGES_WITHOUT_RANGE`] pages and no `pages`.
    NeedsRange { total: u32 },
    /// `pages` starts before 1, past its end or past the last page.
    InvalidRange { total: u32 },
    /// `pages` spans more than [`MAX_PAGES_PER_CALL`] existing pages.
    TooMany { count: u32 },
}

impl Problem {
    fn message(&self, pages: Option<&str>) -> String {
        match self {
            Self::Unreadable(why) => format!("Error reading PDF: {why}"),
            Self::NeedsRange { total } => format!(
                "Error: PDF has {total} pages, more than {MAX_PAGES_WITHOUT_RANGE}. You must \
                 provide the pages parameter (e.g. \"1-5\") to read specific pages, max \
                 {MAX_PAGES_PER_CALL} pages per request."
            ),
            Self::InvalidRange { total } => format!(
                "Error: Invalid pages {}. PDF has {total} page(s).",
                py_str(pages.unwrap_or_default())
            ),
            Self::TooMany { count } => format!(
                "Error: Requested {count} pages, at most {MAX_PAGES_PER_CALL} pages can be read \
                 per request."
            ),
        }
    }
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
    let range = match pages {
        Some(text) => Some(parse_pages(text).ok_or_else(|| {
            ToolChunk::error(format!(
                "Error: Invalid pages {}. Expected a page number or range like \"3\" or \"1-5\".",
                py_str(text)
            ))
        })?),
        None => None,
    };
    let bytes = ctx
        .backend
        .read(path, MAX_TEXT_BYTES)
        .await
        .map_err(|e| ToolChunk::error(format!("Error reading PDF: {e}")))?;
    let job = tokio::task::spawn_blocking(move || extract(&bytes, range));
    let extracted = match tokio::time::timeout(EXTRACT_TIMEOUT, job).await {
        Err(_) => {
            return Err(ToolChunk::error(format!(
                "Error reading PDF: extracting its text took more than {} seconds.",
                EXTRACT_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(_)) => {
            return Err(ToolChunk::error(
                "Error reading PDF: the PDF reader failed on this file.",
            ));
        }
        Ok(Ok(result)) => result.map_err(|p| ToolChunk::error(p.message(pages)))?,
    };
    render(&shown, &extracted, max_output_bytes)
}

/// `"3"` or `"2-5"` (spaces allowed around the parts) as a first and last
/// page; `None` for anything else. The numbers are checked against the
/// document later.
fn parse_pages(text: &str) -> Option<(u32, u32)> {
    let number = |s: &str| {
        let s = s.trim();
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().unwrap_or(u32::MAX))
    };
    match text.split_once('-') {
        Some((a, b)) => Some((number(a)?, number(b)?)),
        None => number(text).map(|n| (n, n)),
    }
}

/// Loads the document and extracts the text of the chosen pages.
fn extract(bytes: &[u8], range: Option<(u32, u32)>) -> Result<Extracted, Problem> {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_DECOMPRESSED_BYTES),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(bytes, options)
        .map_err(|e| Problem::Unreadable(format!("it is not a readable PDF ({e}).")))?;
    if doc.trailer.has(b"Encrypt") && doc.encryption_state.is_none() {
        return Err(Problem::Unreadable(
            "the PDF is encrypted and needs a password, which Read cannot give.".into(),
        ));
    }
    let ids = doc.get_pages();
    let total = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    if total == 0 {
        return Err(Problem::Unreadable(
            "the PDF has no pages that can be read; it may be damaged.".into(),
        ));
    }
    let (first, last) = match range {
        None if total > MAX_PAGES_WITHOUT_RANGE => return Err(Problem::NeedsRange { total }),
        None => (1, total),
        Some((first, last)) if first < 1 || first > last || first > total => {
            return Err(Problem::InvalidRange { total });
        }
        Some((first, last)) => (first, last.min(total)),
    };
    if last - first + 1 > MAX_PAGES_PER_CALL {
        return Err(Problem::TooMany {
            count: last - first + 1,
        });
    }
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
        return Err(ToolChunk::error(format!(
            "Error: {shown}: no pages were chosen."
        )));
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
        // AgentScope shows the empty pages; saying why helps more.
        return Err(ToolChunk::error(format!(
            "Error: {shown} has no extractable text on {span} of {total} ({detail})."
        )));
    }
    // AgentScope's layout: `--- Page n/total ---` over each page's text,
    // pages apart by a blank line.
    let mut out = String::new();
    let mut shown_end = first - 1;
    let mut partial = None;
    for (n, page) in &doc.pages {
        let text = match page {
            PageText::Text(text) => text.clone(),
            PageText::Empty => String::new(),
            PageText::Failed(e) => format!("(cannot extract the text of page {n}: {e})"),
        };
        let separator = if out.is_empty() { "" } else { "\n\n" };
        let block = format!("{separator}--- Page {n}/{total} ---\n{text}");
        if out.len() + block.len() > max_output_bytes {
            if out.is_empty() {
                let mut end = max_output_bytes.min(block.len());
                while !block.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&block[..end]);
                shown_end = *n;
                partial = Some(*n);
            }
            break;
        }
        out.push_str(&block);
        shown_end = *n;
    }
    // Only our byte cap cuts short of the chosen pages (AgentScope has
    // none), so only then is the cut announced.
    if partial.is_some() || shown_end < last {
        let _ = write!(out, "\n\n[Output cut at {max_output_bytes} bytes: ");
        match partial {
            Some(n) => {
                let _ = write!(out, "page {n} is shown in part.");
            }
            None => {
                let _ = write!(out, "showing pages {first}-{shown_end} of {total}.");
            }
        }
        if shown_end < last {
            let _ = write!(out, " Use pages=\"{}-{last}\" to read on.", shown_end + 1);
        }
        out.push(']');
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
    fn pages_are_a_number_or_a_range() {
        assert_eq!(parse_pages("3"), Some((3, 3)));
        assert_eq!(parse_pages(" 2 - 5 "), Some((2, 5)));
        assert_eq!(parse_pages("1-21"), Some((1, 21)));
        // Checked against the document later.
        assert_eq!(parse_pages("0"), Some((0, 0)));
        assert_eq!(parse_pages("5-2"), Some((5, 2)));
        assert_eq!(parse_pages("99999999999"), Some((u32::MAX, u32::MAX)));
        for bad in ["a-b", "", "1-", "-3", "1-2-3", "+1", "1.5"] {
            assert_eq!(parse_pages(bad), None, "{bad:?}");
        }
    }
}
