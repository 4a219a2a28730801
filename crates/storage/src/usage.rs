//! [`UsageCounts`]: tokens and calls added up per session and per user.

use serde::{Deserialize, Serialize};

/// Tokens spent and calls made, as added by runs. Every counter only
/// grows; additions saturate instead of wrapping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageCounts {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache (where it says).
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (where it says).
    pub cache_write_tokens: u64,
    /// Model calls.
    pub model_calls: u64,
    /// Runs (replies) that added to these counts.
    pub runs: u64,
}

impl UsageCounts {
    /// Input plus output tokens: what a token quota counts.
    #[must_use]
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Whether nothing was counted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Adds `other`, field by field (saturating).
    pub fn add(&mut self, other: &Self) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.model_calls = self.model_calls.saturating_add(other.model_calls);
        self.runs = self.runs.saturating_add(other.runs);
    }
}
