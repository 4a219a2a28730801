//! Usage accounting and the user token quota: what a run spent is summed
//! from its events and added to the store after its commit; a chat is
//! refused while its user is at or over the operator's quota.
//!
//! The token counts come from the tenant's own model, so they are not
//! trusted as they are: each count of one call is capped at
//! [`MAX_CALL_TOKENS`], and the quota charges every model call at least
//! [`MIN_QUOTA_TOKENS_PER_CALL`] tokens (see [`charged_tokens`]), so a
//! model that reports no usage is still stopped.

use std::time::Instant;

use oxiscope_message::AgentEvent;
use oxiscope_storage::UsageCounts;

use crate::Engine;
use crate::QuotaWindow;
use crate::api::{UsageResponse, UsageView};
use crate::error::{SessionError, SessionResult};
use crate::metrics::{Outcome, RunCounts};

/// The most tokens of each kind one model call is counted for: far above
/// any real call (the largest context windows hold a few million tokens),
/// low enough that no sum of them wraps or saturates for ages.
pub const MAX_CALL_TOKENS: u64 = 10_000_000;

/// The fewest tokens the quota charges per model call, whatever the model
/// reports (a real call sends at least its system prompt).
pub const MIN_QUOTA_TOKENS_PER_CALL: u64 = 1_000;

/// What the user token quota counts of `used`: its input plus output
/// tokens, but never less than [`MIN_QUOTA_TOKENS_PER_CALL`] per model
/// call.
pub fn charged_tokens(used: &UsageCounts) -> u64 {
    used.total_tokens()
        .max(used.model_calls.saturating_mul(MIN_QUOTA_TOKENS_PER_CALL))
}

/// Today's date in UTC, the day usage is counted on.
pub fn today() -> chrono::NaiveDate {
    chrono::Utc::now().date_naive()
}

/// What one run (one reply) has spent so far, from its events.
#[derive(Debug)]
pub struct RunTally {
    /// Whether the reply's last event has been published.
    pub ended: bool,
    user_id: String,
    session_id: String,
    /// Whether the usage is in the store already.
    recorded: bool,
    started: Instant,
    counts: RunCounts,
    outcome: Option<Outcome>,
}

impl RunTally {
    /// A run of the user's session that starts now (counted in the
    /// metrics).
    pub fn start(state: &Engine, user_id: &str, session_id: &str) -> Self {
        state.metrics().run_started();
        Self {
            ended: false,
            user_id: user_id.to_owned(),
            session_id: session_id.to_owned(),
            recorded: false,
            started: Instant::now(),
            counts: RunCounts::default(),
            outcome: None,
        }
    }

    /// Counts an event of the run.
    pub fn observe(&mut self, event: &AgentEvent) {
        let c = &mut self.counts;
        match event {
            // Counted when it starts: a call whose stream breaks (or is
            // cut off for its size) has no end, but it was made.
            AgentEvent::ModelCallStart(_) => c.model_calls = c.model_calls.saturating_add(1),
            AgentEvent::ModelCallEnd(end) => {
                let add = |sum: u64, n: u64| sum.saturating_add(n.min(MAX_CALL_TOKENS));
                c.input_tokens = add(c.input_tokens, end.input_tokens);
                c.output_tokens = add(c.output_tokens, end.output_tokens);
                c.cache_read_tokens = add(c.cache_read_tokens, end.cache_input_tokens);
                c.cache_write_tokens = add(c.cache_write_tokens, end.cache_creation_input_tokens);
            }
            AgentEvent::ToolResultEnd(_) => c.tool_calls += 1,
            other => {
                if let Some(ends) = other.reply_outcome() {
                    self.outcome = Some(Outcome::from(ends));
                }
            }
        }
    }

    /// The store's counts of this run.
    fn usage(&self) -> UsageCounts {
        let c = &self.counts;
        UsageCounts {
            input_tokens: c.input_tokens,
            output_tokens: c.output_tokens,
            cache_read_tokens: c.cache_read_tokens,
            cache_write_tokens: c.cache_write_tokens,
            model_calls: c.model_calls,
            runs: 1,
        }
    }

    /// Adds what the run spent to the session's and the user's usage,
    /// once: called right after the reply's commit, before its last event
    /// is published, so a client that saw the end reads the new totals. A
    /// storage failure is logged; the reply stands.
    pub async fn record(&mut self, state: &Engine) {
        if self.recorded {
            return;
        }
        self.recorded = true;
        let day = today().format("%Y-%m-%d").to_string();
        let usage = self.usage();
        if let Err(e) = state
            .storage()
            .add_usage(&self.user_id, &self.session_id, &day, &usage)
            .await
        {
            tracing::error!(
                session_id = self.session_id,
                error = %e,
                "recording the run's usage failed"
            );
        }
    }

    /// Ends the run: records its usage if the run failed before doing so
    /// (the tokens were spent either way) and counts it in the metrics.
    /// `failed`: the service failed around the reply (storage, bus).
    pub async fn finish(mut self, state: &Engine, failed: bool) {
        self.record(state).await;
        let outcome = if failed {
            Outcome::Failed
        } else {
            self.outcome.unwrap_or(Outcome::Failed)
        };
        state
            .metrics()
            .run_finished(outcome, self.started.elapsed(), &self.counts);
    }
}

/// The user's tokens in the quota's window, and the quota.
async fn window_usage(state: &Engine, user_id: &str) -> SessionResult<(UsageCounts, QuotaWindow)> {
    let window = state.config().policy.user_token_quota_window;
    let since = window.since(today());
    let used = state
        .storage()
        .user_usage(user_id, since.as_deref())
        .await?;
    Ok((used, window))
}

/// `429` when the user has spent the operator's token quota, checked
/// before a chat calls any model.
///
/// # Errors
/// [`SessionError::Limit`] naming the quota; the store's failure.
pub async fn check_quota(state: &Engine, user_id: &str) -> SessionResult<()> {
    let Some(quota) = state.config().policy.user_token_quota else {
        return Ok(());
    };
    let (used, window) = window_usage(state, user_id).await?;
    let spent = charged_tokens(&used);
    if spent < quota {
        return Ok(());
    }
    state.metrics().quota_refused();
    let period = match window {
        QuotaWindow::Total => "in total",
        QuotaWindow::Day => "today (UTC)",
        QuotaWindow::Month => "this month (UTC)",
    };
    Err(SessionError::Limit(format!(
        "Token quota exceeded: {spent} of {quota} tokens used {period} (operator policy \
         user_token_quota, window {}).",
        window.as_str()
    )))
}

/// The caller's usage: all time, in the quota's window, and the quota.
///
/// # Errors
/// The store's failure.
pub async fn user_usage(state: &Engine, user_id: &str) -> SessionResult<UsageResponse> {
    let total = state.storage().user_usage(user_id, None).await?;
    let (window_used, window) = window_usage(state, user_id).await?;
    let quota = state.config().policy.user_token_quota;
    Ok(UsageResponse {
        total: UsageView::from(&total),
        window: window.as_str().to_owned(),
        window_usage: UsageView::from(&window_used),
        token_quota: quota,
        remaining_tokens: quota.map(|q| q.saturating_sub(charged_tokens(&window_used))),
    })
}
