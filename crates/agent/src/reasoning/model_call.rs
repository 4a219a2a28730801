//! The core of a reasoning step: the model call, its retries and the
//! fallback model.
//!
//! # Retry policy
//! This is the one retry layer of a reasoning step's model call. A call
//! that fails before its stream starts with a retryable error (connection
//! failure, 408, 409, 429, 5xx; see
//! [`ModelError::is_retryable`](oxiscope_model::ModelError::is_retryable))
//! is tried again up to [`ModelConfig::max_retries`](crate::ModelConfig)
//! times, waiting first: the provider's `Retry-After` when it sent one,
//! else [`RETRY_BASE_DELAY`] doubled per failed attempt, with jitter
//! taking off up to half of it; every wait is capped at
//! [`RETRY_MAX_DELAY`] and ends early when the reply is interrupted. A call
//! that still fails, or fails with an error that retrying cannot fix, goes
//! to the fallback model (with the same budget), then the step fails. A
//! failure after the stream started is not retried: output already
//! reached the reply. Model clients given to an agent should therefore not
//! retry themselves (an HTTP client built with
//! `RetryPolicy::none()`), or each of their retries multiplies this budget.
//!
//! Every attempt is reported: `MODEL_CALL_START`, and for a failed attempt
//! a `MODEL_CALL_END` with finished reason `interrupted` and no tokens.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use oxiscope_message::{AgentEvent, FinishedReason, ModelCallEndEvent, ModelCallStartEvent, Msg};
use oxiscope_model::{ModelError, ToolSchema};
use tokio_util::sync::CancellationToken;

use super::room::Room;
use super::{StepEnd, StepItem, StepStream, translate::translate};
use crate::agent::Inner;
use crate::error::AgentError;
use crate::middleware::{ModelCall, ModelNext, ReasoningCall, ReasoningCore};

/// The wait before the first retry of a model call (doubled for each
/// later one).
pub const RETRY_BASE_DELAY: Duration = Duration::from_millis(500);

/// The longest wait before a retry, the provider's `Retry-After` included.
pub const RETRY_MAX_DELAY: Duration = Duration::from_secs(30);

/// The model call of one reasoning step.
pub(crate) struct ModelStep<'a> {
    pub(crate) inner: &'a Inner,
    pub(crate) messages: &'a [Msg],
    pub(crate) tools: &'a [ToolSchema],
    pub(crate) reply_id: String,
    pub(crate) cancel: CancellationToken,
    /// What the reply may still take (each call starts from it).
    pub(crate) room: Room,
}

impl ReasoningCore for ModelStep<'_> {
    fn run(&self, call: ReasoningCall) -> BoxFuture<'_, StepStream> {
        Box::pin(async move {
            let mut prefix: Vec<StepItem> = Vec::new();
            let models = std::iter::once(&self.inner.model).chain(self.inner.fallback_model.iter());
            let mut last_error: Option<ModelError> = None;
            'models: for model in models {
                let attempts = self.inner.model_config.max_retries.saturating_add(1);
                for attempt in 1..=attempts {
                    let name = model.model_name().to_owned();
                    let start: AgentEvent =
                        ModelCallStartEvent::new(self.reply_id.clone(), name).into();
                    prefix.push(StepItem::Event(start));
                    let request = ModelCall {
                        messages: Cow::Borrowed(self.messages),
                        tools: Cow::Borrowed(self.tools),
                        tool_choice: call.tool_choice.clone(),
                        cancel: self.cancel.child_token(),
                    };
                    let next = ModelNext::new(&self.inner.middlewares, model.as_ref());
                    let error = match next.run(request).await {
                        Ok(stream) => {
                            let body = translate(stream, self.reply_id.clone(), self.room.clone());
                            return futures_util::stream::iter(prefix).chain(body).boxed();
                        }
                        Err(e) => e,
                    };
                    // The call never started: close it for the stream.
                    let end = ModelCallEndEvent::new(
                        self.reply_id.clone(),
                        0,
                        0,
                        0,
                        0,
                        FinishedReason::Interrupted,
                    );
                    prefix.push(StepItem::Event(end.into()));
                    let retry = error.is_retryable() && attempt < attempts;
                    let wait = retry_delay(attempt, &error);
                    if retry {
                        tracing::warn!(
                            "retrying in {wait:.1?} (attempt {attempt} of {attempts} failed): {error}"
                        );
                    } else {
                        tracing::warn!(error = %error, attempt, "model call failed");
                    }
                    last_error = Some(error);
                    if !retry {
                        continue 'models;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = self.cancel.cancelled() => break 'models,
                    }
                }
            }
            let error = last_error.map_or_else(
                || AgentError::Internal("no model to call".to_owned()),
                AgentError::Model,
            );
            prefix.push(StepItem::End(StepEnd::failed(error)));
            futures_util::stream::iter(prefix).boxed()
        })
    }
}

/// The wait after failed attempt `attempt` (1-based): the provider's
/// `Retry-After`, else exponential backoff with jitter; capped.
pub(crate) fn retry_delay(attempt: u32, error: &ModelError) -> Duration {
    if let ModelError::Provider {
        retry_after: Some(wait),
        ..
    } = error
    {
        return (*wait).min(RETRY_MAX_DELAY);
    }
    let doublings = attempt.saturating_sub(1).min(16);
    let backoff = RETRY_BASE_DELAY
        .saturating_mul(1 << doublings)
        .min(RETRY_MAX_DELAY);
    let half = backoff / 2;
    half + half.mul_f64(random_fraction())
}

/// A number in `[0, 1)` from the standard library's randomly keyed hasher.
fn random_fraction() -> f64 {
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    // 53 random bits fill an f64 mantissa exactly.
    #[allow(clippy::cast_precision_loss)]
    let fraction = (bits >> 11) as f64 / (1u64 << 53) as f64;
    fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(status: u16, retry_after: Option<Duration>) -> ModelError {
        ModelError::Provider {
            provider: "p".to_owned(),
            status,
            code: None,
            message: "m".to_owned(),
            request_id: None,
            retry_after,
        }
    }

    #[test]
    fn the_delay_honours_retry_after_within_the_cap() {
        let e = provider(429, Some(Duration::from_secs(3)));
        assert_eq!(retry_delay(1, &e), Duration::from_secs(3));
        let e = provider(429, Some(Duration::from_secs(3600)));
        assert_eq!(retry_delay(1, &e), RETRY_MAX_DELAY);
    }

    #[test]
    fn the_delay_backs_off_exponentially_with_jitter() {
        let e = provider(503, None);
        for attempt in 1..=8u32 {
            let full = RETRY_BASE_DELAY
                .saturating_mul(1 << (attempt - 1))
                .min(RETRY_MAX_DELAY);
            let d = retry_delay(attempt, &e);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }
}
