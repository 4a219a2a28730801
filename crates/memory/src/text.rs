//! Size limits on text: tokens estimated as AgentScope does (four bytes of
//! UTF-8 per token), cuts on character boundaries.

/// The bytes `tokens` tokens are estimated to take.
pub(crate) fn token_bytes(tokens: usize) -> usize {
    tokens.saturating_mul(4)
}

/// The longest prefix of `text` within `max_bytes`, cut on a character
/// boundary.
pub(crate) fn cut_to_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to at most `max_tokens` estimated tokens.
pub(crate) fn cut_to_tokens(text: &str, max_tokens: usize) -> &str {
    cut_to_bytes(text, token_bytes(max_tokens))
}

/// An index cut to its limits: the kept text and how many lines were
/// kept and left out (0 left out when it fits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut<'a> {
    pub(crate) kept: &'a str,
    pub(crate) kept_lines: usize,
    pub(crate) omitted_lines: usize,
}

/// `text` cut to at most `max_lines` lines and `max_tokens` tokens; a cut
/// by size falls back to the last whole line (or mid-line when the first
/// line alone is too long).
pub(crate) fn cut_lines(text: &str, max_lines: usize, max_tokens: usize) -> Cut<'_> {
    let total = text.lines().count();
    let mut kept = match text.match_indices('\n').nth(max_lines.saturating_sub(1)) {
        Some((at, _)) if max_lines > 0 => &text[..at],
        _ if max_lines == 0 => "",
        _ => text,
    };
    let by_size = cut_to_tokens(kept, max_tokens);
    if by_size.len() < kept.len() {
        kept = match by_size.rfind('\n') {
            Some(at) => &by_size[..at],
            None => by_size,
        };
    }
    let kept_lines = if kept.is_empty() {
        0
    } else {
        kept.lines().count()
    };
    Cut {
        kept,
        kept_lines,
        omitted_lines: total.saturating_sub(kept_lines),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_respect_character_boundaries() {
        assert_eq!(cut_to_bytes("héllo", 2), "h");
        assert_eq!(cut_to_bytes("héllo", 3), "hé");
        assert_eq!(cut_to_bytes("abc", 10), "abc");
        assert_eq!(cut_to_tokens("abcdefghij", 2), "abcdefgh");
    }

    #[test]
    fn an_index_is_cut_by_lines_and_by_size() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(
            cut_lines(text, 2, 100),
            Cut {
                kept: "a\nb",
                kept_lines: 2,
                omitted_lines: 2
            }
        );
        assert_eq!(cut_lines(text, 10, 100).omitted_lines, 0);
        assert_eq!(cut_lines(text, 10, 100).kept, text);
        // 5 bytes allowed: "a\nb\nc" cut back to the last whole line.
        let long = "aaaa\nbbbb\ncccc";
        let cut = cut_lines(long, 10, 2);
        assert_eq!(cut.kept, "aaaa");
        assert_eq!((cut.kept_lines, cut.omitted_lines), (1, 2));
        // One over-long line is cut inside it.
        assert_eq!(cut_lines("abcdefghijkl", 10, 1).kept, "abcd");
    }
}
