//! Incremental line splitting shared by the SSE and NDJSON readers.

/// Splits a byte stream into lines at CRLF, LF or CR, across chunk boundaries.
///
/// Every input byte is scanned once and copied at most once: lines that lie wholly inside
/// a chunk are handed out as slices of it; only a line that spans chunks is gathered in an
/// internal buffer. The buffer never holds a line terminator, so new bytes are the only
/// ones searched.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    /// The start of a line that continues in the next chunk.
    partial: Vec<u8>,
    /// The previous chunk ended in CR: a LF at the start of the next one belongs to it.
    skip_lf: bool,
    /// No line has been handed out yet (a leading byte-order mark is stripped from it).
    at_start: bool,
    /// The longest line accepted.
    max_line: usize,
}

/// A line longer than the limit was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineTooLong;

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl LineSplitter {
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            partial: Vec::new(),
            skip_lf: false,
            at_start: true,
            max_line,
        }
    }

    /// Feeds a chunk, calling `on_line` with each line it completes (without terminator).
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(&[u8]),
    ) -> Result<(), LineTooLong> {
        let mut rest = chunk;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        if !self.partial.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.append_partial(rest)?;
                return Ok(());
            };
            self.append_partial(&rest[..end])?;
            let line = std::mem::take(&mut self.partial);
            self.emit(&line, &mut on_line);
            // Keep the allocation for the next spanning line.
            self.partial = line;
            self.partial.clear();
            rest = self.after_terminator(rest, end);
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', rest) {
            self.emit(&rest[..end], &mut on_line);
            rest = self.after_terminator(rest, end);
        }
        self.append_partial(rest)
    }

    /// Ends the input: hands out a last line that had no terminator, if any.
    pub(crate) fn finish(&mut self, mut on_line: impl FnMut(&[u8])) {
        self.skip_lf = false;
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.emit(&line, &mut on_line);
        }
    }

    fn emit(&mut self, line: &[u8], on_line: &mut impl FnMut(&[u8])) {
        if self.at_start {
            self.at_start = false;
            on_line(line.strip_prefix(BOM).unwrap_or(line));
        } else {
            on_line(line);
        }
    }

    /// Skips the terminator at `rest[end]` (two bytes for CRLF) and returns what follows.
    fn after_terminator<'a>(&mut self, rest: &'a [u8], end: usize) -> &'a [u8] {
        let after = &rest[end + 1..];
        if rest[end] == b'\r' {
            match after.first() {
                Some(b'\n') => return &after[1..],
                None => self.skip_lf = true,
                Some(_) => {}
            }
        }
        after
    }

    fn append_partial(&mut self, bytes: &[u8]) -> Result<(), LineTooLong> {
        if self.partial.len() + bytes.len() > self.max_line {
            return Err(LineTooLong);
        }
        self.partial.extend_from_slice(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<String> {
        let mut splitter = LineSplitter::new(1 << 20);
        let mut lines = Vec::new();
        for chunk in chunks {
            splitter
                .feed(chunk, |l| {
                    lines.push(String::from_utf8_lossy(l).into_owned());
                })
                .unwrap();
        }
        splitter.finish(|l| lines.push(String::from_utf8_lossy(l).into_owned()));
        lines
    }

    #[test]
    fn splits_at_every_kind_of_line_ending() {
        assert_eq!(split(&[b"a\nb\r\nc\rd"]), ["a", "b", "c", "d"]);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        assert_eq!(split(&[b"a\r", b"\nb\r", b"", b"\n"]), ["a", "b"]);
    }

    #[test]
    fn cr_then_cr_is_an_empty_line() {
        assert_eq!(split(&[b"a\r", b"\rb"]), ["a", "", "b"]);
    }

    #[test]
    fn line_spanning_many_chunks_is_joined() {
        assert_eq!(split(&[b"ab", b"cd", b"e\nf", b"g"]), ["abcde", "fg"]);
    }

    #[test]
    fn leading_bom_is_stripped_once() {
        assert_eq!(
            split(&[b"\xEF\xBB", b"\xBFx\n\xEF\xBB\xBFy"]),
            ["x", "\u{feff}y"]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_split_gives_the_same_lines(
            input in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::any::<u8>(),
                    proptest::strategy::Just(b'\n'),
                    proptest::strategy::Just(b'\r'),
                ],
                0..200,
            ),
            cut_points in proptest::collection::vec(0usize..201, 0..10),
        ) {
            let mut cuts: Vec<usize> = cut_points.into_iter().map(|c| c.min(input.len())).collect();
            cuts.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([input.len()]) {
                chunks.push(&input[start..cut]);
                start = cut;
            }
            proptest::prop_assert_eq!(split(&chunks), split(&[&input]));
        }
    }

    #[test]
    fn over_long_line_is_refused() {
        let mut splitter = LineSplitter::new(4);
        assert_eq!(splitter.feed(b"abc", |_| {}), Ok(()));
        assert_eq!(splitter.feed(b"de", |_| {}), Err(LineTooLong));
    }
}
