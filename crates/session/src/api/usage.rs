//! Usage bodies: Oxiscope extensions (AgentScope has no usage fields).

use oxiscope_storage::UsageCounts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Tokens and calls, as providers reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsageView {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache (where reported).
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (where reported).
    pub cache_write_tokens: u64,
    /// `input_tokens + output_tokens`: what the token quota counts.
    pub total_tokens: u64,
    /// Model calls.
    pub model_calls: u64,
    /// Replies (runs) counted.
    pub runs: u64,
}

impl From<&UsageCounts> for UsageView {
    fn from(c: &UsageCounts) -> Self {
        Self {
            input_tokens: c.input_tokens,
            output_tokens: c.output_tokens,
            cache_read_tokens: c.cache_read_tokens,
            cache_write_tokens: c.cache_write_tokens,
            total_tokens: c.total_tokens(),
            model_calls: c.model_calls,
            runs: c.runs,
        }
    }
}

/// `GET /usage` answer: the caller's usage, deleted sessions included.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UsageResponse {
    /// Everything the caller ever spent.
    pub total: UsageView,
    /// The quota's window: `total`, `day` or `month` (UTC).
    pub window: String,
    /// What the caller spent in that window.
    pub window_usage: UsageView,
    /// The operator's token quota for the window; `null`: none.
    pub token_quota: Option<u64>,
    /// Tokens left in the window; `null` without a quota.
    pub remaining_tokens: Option<u64>,
}
