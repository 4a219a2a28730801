//! Retry policy: when to try again, and how long to wait first.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How often, and with which delays, a failed request is tried again.
///
/// Attempt `n` (1-based) that fails with a retryable error is followed, if `n <
/// max_attempts`, by a wait of `base_delay * 2^(n-1)` capped at `max_delay`, with random
/// jitter taking off up to half of it. When the server sent `Retry-After` (seconds or an
/// HTTP date) or `retry-after-ms`, that delay is used instead, also capped at `max_delay`.
///
/// Only the phase before a response body starts is retried: connection failures, timeouts
/// waiting for headers, and retryable statuses (408, 409, 429, 5xx but 501 and 505, or
/// whatever the server's `x-should-retry` header says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Total attempts, the first one included; `1` means no retry. `0` counts as `1`.
    pub max_attempts: u32,
    /// The delay before the first retry, doubled for each later one.
    pub base_delay: Duration,
    /// The longest wait before any retry, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Four attempts, 500 ms base delay, 30 s cap.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    #[must_use]
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Sets the total number of attempts.
    #[must_use]
    pub fn with_max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// Sets the delay before the first retry.
    #[must_use]
    pub fn with_base_delay(mut self, base_delay: Duration) -> Self {
        self.base_delay = base_delay;
        self
    }

    /// Sets the longest wait before a retry.
    #[must_use]
    pub fn with_max_delay(mut self, max_delay: Duration) -> Self {
        self.max_delay = max_delay;
        self
    }

    /// Whether another attempt may follow attempt number `attempt` (1-based).
    #[must_use]
    pub fn allows_retry_after_attempt(&self, attempt: u32) -> bool {
        attempt < self.max_attempts
    }

    /// The wait after failed attempt number `attempt` (1-based): the server's
    /// `retry_after` if given, else exponential backoff with jitter; capped at `max_delay`.
    #[must_use]
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_delay);
        }
        let backoff = self.backoff(attempt);
        // Jitter: keep between half and all of the backoff, so clients spread out.
        let half = backoff / 2;
        half + half.mul_f64(random_fraction())
    }

    /// The backoff before jitter: `base_delay * 2^(attempt-1)`, capped at `max_delay`.
    #[must_use]
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.base_delay
            .saturating_mul(1 << doublings)
            .min(self.max_delay)
    }
}

/// A random number in `[0, 1)`, from the standard library's randomly keyed hasher.
fn random_fraction() -> f64 {
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    // 53 random bits fill an f64 mantissa exactly.
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The delay a response asks for: `retry-after-ms` (milliseconds), else `Retry-After`
/// (delay-seconds or an HTTP date, a date in the past meaning zero).
#[must_use]
pub fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let millis = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
    if millis.is_some() {
        return millis;
    }
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        // Not allowed by RFC 9110, but some servers send fractions.
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy::default()
            .with_base_delay(Duration::from_millis(100))
            .with_max_delay(Duration::from_millis(500));
        let steps: Vec<_> = (1..=5).map(|n| policy.backoff(n).as_millis()).collect();
        assert_eq!(steps, [100, 200, 400, 500, 500]);
        assert_eq!(policy.backoff(u32::MAX), Duration::from_millis(500));
    }

    #[test]
    fn jittered_delay_stays_between_half_and_full_backoff() {
        let policy = RetryPolicy::default().with_base_delay(Duration::from_millis(1000));
        for attempt in 1..=4 {
            let full = policy.backoff(attempt);
            for _ in 0..50 {
                let delay = policy.delay(attempt, None);
                assert!(delay >= full / 2 && delay <= full, "{delay:?} vs {full:?}");
            }
        }
    }

    #[test]
    fn retry_after_wins_over_backoff_but_is_capped() {
        let policy = RetryPolicy::default().with_max_delay(Duration::from_secs(10));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(99))),
            Duration::from_secs(10)
        );
        assert_eq!(policy.delay(3, Some(Duration::ZERO)), Duration::ZERO);
    }

    #[test]
    fn attempts_are_counted_from_one() {
        let policy = RetryPolicy::default().with_max_attempts(2);
        assert!(policy.allows_retry_after_attempt(1));
        assert!(!policy.allows_retry_after_attempt(2));
        assert!(!RetryPolicy::none().allows_retry_after_attempt(1));
    }

    #[test]
    fn retry_after_seconds_and_milliseconds_are_parsed() {
        let now = SystemTime::now();
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "7")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "1.5")]), now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after(
                &headers(&[("retry-after", "7"), ("retry-after-ms", "250")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn retry_after_http_date_is_relative_to_now() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let later = headers(&[("retry-after", "Sun, 06 Nov 1994 08:50:07 GMT")]);
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = headers(&[("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT")]);
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
    }

    #[test]
    fn garbage_retry_after_is_ignored() {
        let now = SystemTime::now();
        for bad in ["soon", "-1", "NaN", "inf", "1e400", ""] {
            assert_eq!(
                parse_retry_after(&headers(&[("retry-after", bad)]), now),
                None,
                "{bad}"
            );
        }
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after-ms", "-5")]), now),
            None
        );
        assert_eq!(parse_retry_after(&HeaderMap::new(), now), None);
    }
}
