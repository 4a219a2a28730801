//! Prometheus metrics: counters kept with atomics, written in the text
//! exposition format (version 0.0.4) by `Metrics::render`.
//! They count every tenant's activity: the service serves them on a
//! listener of their own, never the tenants'.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How a run ended, as the `outcome` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The reply completed.
    Completed,
    /// The reply was interrupted.
    Interrupted,
    /// The reply hit its iteration limit.
    MaxIters,
    /// The reply ended with an error.
    Error,
    /// The reply parked, awaiting a confirmation or external results.
    Awaiting,
    /// The service failed around the reply (storage, bus).
    Failed,
}

impl From<oxiscope_message::ReplyOutcome> for Outcome {
    fn from(ends: oxiscope_message::ReplyOutcome) -> Self {
        use oxiscope_message::{ReplyFinishedReason as R, ReplyOutcome as O};
        match ends {
            O::Finished(R::Completed) => Self::Completed,
            O::Finished(R::Interrupted) => Self::Interrupted,
            O::Finished(R::ExceedMaxIters) => Self::MaxIters,
            O::Finished(R::Error) => Self::Error,
            O::AwaitingConfirmation | O::AwaitingExternal => Self::Awaiting,
        }
    }
}

impl Outcome {
    const ALL: [Self; 6] = [
        Self::Completed,
        Self::Interrupted,
        Self::MaxIters,
        Self::Error,
        Self::Awaiting,
        Self::Failed,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Interrupted => "interrupted",
            Self::MaxIters => "exceed_max_iters",
            Self::Error => "error",
            Self::Awaiting => "awaiting",
            Self::Failed => "failed",
        }
    }
}

/// Upper bounds, in seconds, of the run latency histogram's buckets.
const LATENCY_BUCKETS: [f64; 11] = [
    0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

/// The service's counters. Cheap to update from any task.
#[derive(Debug, Default)]
pub struct Metrics {
    runs_started: AtomicU64,
    runs_finished: [AtomicU64; 6],
    model_calls: AtomicU64,
    tool_calls: AtomicU64,
    tokens: [AtomicU64; 4],
    quota_refusals: AtomicU64,
    latency_buckets: [AtomicU64; 11],
    latency_count: AtomicU64,
    latency_micros: AtomicU64,
}

/// What one run counted, added when it finishes.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunCounts {
    /// Model calls made.
    pub model_calls: u64,
    /// Tool calls made.
    pub tool_calls: u64,
    /// Input tokens the model read.
    pub input_tokens: u64,
    /// Output tokens it wrote.
    pub output_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write_tokens: u64,
}

/// Adds `by`, saturating: a counter fed by what tenants' models report
/// stops at `u64::MAX` instead of wrapping to a small number.
fn bump(counter: &AtomicU64, by: u64) {
    // The closure always returns `Some`: the update cannot fail.
    let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
        Some(n.saturating_add(by))
    });
}

impl Metrics {
    /// A run began.
    pub fn run_started(&self) {
        bump(&self.runs_started, 1);
    }

    /// A run ended after `took`, having counted `counts`.
    pub fn run_finished(&self, outcome: Outcome, took: Duration, counts: &RunCounts) {
        let slot = Outcome::ALL.iter().position(|o| *o == outcome).unwrap_or(0);
        bump(&self.runs_finished[slot], 1);
        bump(&self.model_calls, counts.model_calls);
        bump(&self.tool_calls, counts.tool_calls);
        let tokens = [
            counts.input_tokens,
            counts.output_tokens,
            counts.cache_read_tokens,
            counts.cache_write_tokens,
        ];
        for (counter, n) in self.tokens.iter().zip(tokens) {
            bump(counter, n);
        }
        let secs = took.as_secs_f64();
        for (bucket, bound) in self.latency_buckets.iter().zip(LATENCY_BUCKETS) {
            if secs <= bound {
                bump(bucket, 1);
            }
        }
        bump(&self.latency_count, 1);
        bump(
            &self.latency_micros,
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        );
    }

    /// A chat was refused for the user token quota.
    pub fn quota_refused(&self) {
        bump(&self.quota_refusals, 1);
    }

    /// The text exposition of the counters and of `gauges`.
    pub(crate) fn render(&self, gauges: &Gauges) -> String {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = String::new();
        let mut counter = |name: &str, help: &str, samples: &[(&str, u64)]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        counter(
            "oxiscope_runs_started_total",
            "Chat runs (replies) started.",
            &[("", load(&self.runs_started))],
        );
        let finished: Vec<(String, u64)> = Outcome::ALL
            .iter()
            .zip(&self.runs_finished)
            .map(|(o, c)| (format!("{{outcome=\"{}\"}}", o.label()), load(c)))
            .collect();
        let finished: Vec<(&str, u64)> = finished.iter().map(|(l, v)| (l.as_str(), *v)).collect();
        counter(
            "oxiscope_runs_finished_total",
            "Chat runs finished, by outcome.",
            &finished,
        );
        counter(
            "oxiscope_model_calls_total",
            "Model calls made by finished runs.",
            &[("", load(&self.model_calls))],
        );
        counter(
            "oxiscope_tool_calls_total",
            "Tool results produced by finished runs.",
            &[("", load(&self.tool_calls))],
        );
        let kinds = ["input", "output", "cache_read", "cache_write"];
        let tokens: Vec<(String, u64)> = kinds
            .iter()
            .zip(&self.tokens)
            .map(|(k, c)| (format!("{{kind=\"{k}\"}}"), load(c)))
            .collect();
        let tokens: Vec<(&str, u64)> = tokens.iter().map(|(l, v)| (l.as_str(), *v)).collect();
        counter(
            "oxiscope_tokens_total",
            "Tokens reported by the providers for finished runs, by kind.",
            &tokens,
        );
        counter(
            "oxiscope_quota_refusals_total",
            "Chats refused because the user was over the token quota.",
            &[("", load(&self.quota_refusals))],
        );
        let name = "oxiscope_run_duration_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Wall time of finished chat runs.\n# TYPE {name} histogram"
        );
        for (bucket, bound) in self.latency_buckets.iter().zip(LATENCY_BUCKETS) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {}", load(bucket));
        }
        let count = load(&self.latency_count);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        #[allow(clippy::cast_precision_loss)]
        let sum = load(&self.latency_micros) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
        let mut gauge = |name: &str, help: &str, value: usize| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        };
        gauge(
            "oxiscope_active_runs",
            "Sessions with a run in progress in this process.",
            gauges.active_runs,
        );
        if let Some(bus) = &gauges.bus {
            gauge(
                "oxiscope_bus_sessions",
                "Sessions the message bus holds state for.",
                bus.sessions,
            );
            gauge(
                "oxiscope_bus_retained_events",
                "Events kept in replay logs.",
                bus.events,
            );
            gauge(
                "oxiscope_bus_retained_bytes",
                "Payload bytes of the events kept in replay logs.",
                bus.bytes,
            );
            gauge(
                "oxiscope_bus_queued_inputs",
                "Inputs waiting in session inboxes.",
                bus.inputs,
            );
            gauge(
                "oxiscope_bus_subscribers",
                "Attached stream subscribers.",
                bus.subscribers,
            );
        }
        out
    }
}

/// Values read at scrape time.
#[derive(Debug)]
pub(crate) struct Gauges {
    /// Runs this process is executing.
    pub(crate) active_runs: usize,
    /// What the message bus retains, when it can tell.
    pub(crate) bus: Option<oxiscope_storage::Retained>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_run_moves_its_counters_and_buckets() {
        let m = Metrics::default();
        m.run_started();
        let counts = RunCounts {
            model_calls: 2,
            tool_calls: 1,
            input_tokens: 30,
            output_tokens: 7,
            ..RunCounts::default()
        };
        m.run_finished(Outcome::Awaiting, Duration::from_millis(700), &counts);
        let text = m.render(&Gauges {
            active_runs: 3,
            bus: None,
        });
        for line in [
            "oxiscope_runs_started_total 1",
            "oxiscope_runs_finished_total{outcome=\"awaiting\"} 1",
            "oxiscope_runs_finished_total{outcome=\"completed\"} 0",
            "oxiscope_model_calls_total 2",
            "oxiscope_tokens_total{kind=\"input\"} 30",
            "oxiscope_run_duration_seconds_bucket{le=\"0.5\"} 0",
            "oxiscope_run_duration_seconds_bucket{le=\"1\"} 1",
            "oxiscope_run_duration_seconds_bucket{le=\"+Inf\"} 1",
            "oxiscope_run_duration_seconds_sum 0.7",
            "oxiscope_active_runs 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
        }
        assert!(!text.contains("oxiscope_bus_"));
    }

    #[test]
    fn token_counters_saturate_instead_of_wrapping() {
        let m = Metrics::default();
        let huge = RunCounts {
            model_calls: 1,
            input_tokens: u64::MAX - 1,
            ..RunCounts::default()
        };
        m.run_finished(Outcome::Completed, Duration::ZERO, &huge);
        m.run_finished(Outcome::Completed, Duration::ZERO, &huge);
        let text = m.render(&Gauges {
            active_runs: 0,
            bus: None,
        });
        let line = format!("oxiscope_tokens_total{{kind=\"input\"}} {}", u64::MAX);
        assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
        assert!(text.lines().any(|l| l == "oxiscope_model_calls_total 2"));
    }
}
