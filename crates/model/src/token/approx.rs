//! A character-based token estimate for models without a known tokenizer.

use super::counter::{DATA_BLOCK_TOKENS, TokenCounter};

/// Estimates tokens from characters, for families whose tokenizer is not
/// shipped here (Anthropic, Gemini, Qwen, DeepSeek, local models, ...).
///
/// # Heuristic
/// Text is weighed per character by its UTF-8 length, in quarter tokens,
/// then rounded up:
/// - 1 byte (ASCII): 1/4 token, about 4 characters of English or code;
/// - 2 bytes (accented Latin, Greek, Cyrillic, Arabic, Hebrew, ...): 1/2;
/// - 3 or 4 bytes (CJK, kana, hangul, Indic and Thai scripts, typographic
///   punctuation, emoji): 1 token.
///
/// Any non-empty text costs at least one token, and every message at least
/// its framing ([`MESSAGE_OVERHEAD`](super::MESSAGE_OVERHEAD)), which acts
/// as the per-message floor. The estimate leans high on purpose: context
/// management should compress a little early rather than overflow. Data
/// blocks cost a flat [`DATA_BLOCK_TOKENS`] unless set otherwise.
///
/// ```
/// use oxiscope_model::{ApproxCounter, TokenCounter};
///
/// let c = ApproxCounter::new();
/// assert_eq!(c.count_text("abcdefgh"), 2);
/// assert_eq!(c.count_text("日本"), 2);
/// assert_eq!(c.count_text(""), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApproxCounter {
    data_block_tokens: usize,
}

impl Default for ApproxCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl ApproxCounter {
    /// The estimate with the default data-block cost.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            data_block_tokens: DATA_BLOCK_TOKENS,
        }
    }

    /// Sets the flat cost of one data block.
    #[must_use]
    pub const fn with_data_block_tokens(mut self, tokens: usize) -> Self {
        self.data_block_tokens = tokens;
        self
    }
}

impl TokenCounter for ApproxCounter {
    fn count_text(&self, text: &str) -> usize {
        let mut quarters = 0usize;
        for b in text.bytes() {
            // One weight per character, read from its lead byte;
            // continuation bytes (0b10xx_xxxx) weigh nothing.
            quarters += match b {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xFF => 4,
                _ => 0,
            };
        }
        quarters.div_ceil(4)
    }

    fn data_block_tokens(&self) -> usize {
        self.data_block_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_costs_a_quarter_per_char_rounded_up() {
        let c = ApproxCounter::new();
        assert_eq!(c.count_text("a"), 1);
        assert_eq!(c.count_text("abcd"), 1);
        assert_eq!(c.count_text("abcde"), 2);
        assert_eq!(c.count_text(&"x".repeat(400)), 100);
    }

    #[test]
    fn wide_scripts_cost_more_than_ascii() {
        let c = ApproxCounter::new();
        assert_eq!(c.count_text("привет"), 3, "six Cyrillic letters at 1/2");
        assert_eq!(c.count_text("你好世界"), 4, "CJK at one token each");
        assert_eq!(c.count_text("🍌"), 1);
        assert_eq!(c.count_text("é"), 1);
    }

    #[test]
    fn the_data_block_cost_is_configurable() {
        let c = ApproxCounter::new().with_data_block_tokens(85);
        assert_eq!(c.data_block_tokens(), 85);
        assert_eq!(ApproxCounter::new().data_block_tokens(), DATA_BLOCK_TOKENS);
    }
}
