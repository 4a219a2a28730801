//! OTLP/HTTP trace export: [`OtlpExporter`] queues the agents' spans and
//! posts them, JSON-encoded, to a collector's `/v1/traces` in batches.
//!
//! The queue is bounded: a span that arrives while it is full is dropped
//! and counted ([`OtlpExporter::dropped`]); the agent never waits on the
//! collector. A failed post is logged and its batch dropped (counted as
//! well). [`OtlpExporter::shutdown`] sends what is still queued.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_agent::otel::{
    AttrValue, Attributes, SpanContext, SpanData, SpanExporter, SpanKind, TracingMiddleware,
    encode_export_request,
};
use oxiscope_http::{HttpClient, RetryPolicy};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Where and how spans are exported.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpConfig {
    /// The full traces URL (`http://collector:4318/v1/traces`).
    pub traces_endpoint: String,
    /// Extra request headers (an API key for a hosted collector).
    pub headers: Vec<(String, String)>,
    /// `service.name` of the resource.
    pub service_name: String,
    /// Spans held at most while waiting to be sent.
    pub max_queue: usize,
    /// Spans sent at most per request.
    pub max_batch: usize,
    /// Time between sends of a partial batch.
    pub interval: Duration,
}

impl OtlpConfig {
    /// Export to the collector at `endpoint` (its base URL; spans go to
    /// `{endpoint}/v1/traces`), with the default limits.
    #[must_use]
    pub fn new(endpoint: &str) -> Self {
        Self::with_traces_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
    }

    fn with_traces_endpoint(traces_endpoint: String) -> Self {
        Self {
            traces_endpoint,
            headers: Vec::new(),
            service_name: "oxiscope".to_owned(),
            max_queue: 2048,
            max_batch: 512,
            interval: Duration::from_secs(2),
        }
    }

    /// The configuration the standard variables give, the `endpoint` flag
    /// first: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL), plus
    /// `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values percent-decoded)
    /// and `OTEL_SERVICE_NAME`. `None` when no endpoint is set.
    #[must_use]
    pub fn from_env(endpoint: Option<&str>) -> Option<Self> {
        Self::from_vars(endpoint, |name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables with `var`.
    #[must_use]
    pub fn from_vars(endpoint: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let mut config = match endpoint.filter(|e| !e.is_empty()) {
            Some(base) => Self::new(base),
            None => match set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
                Some(full) => Self::with_traces_endpoint(full.trim().to_owned()),
                None => Self::new(set("OTEL_EXPORTER_OTLP_ENDPOINT")?.trim()),
            },
        };
        if let Some(headers) = set("OTEL_EXPORTER_OTLP_HEADERS") {
            config.headers = parse_headers(&headers);
        }
        if let Some(name) = set("OTEL_SERVICE_NAME") {
            config.service_name = name.trim().to_owned();
        }
        Some(config)
    }
}

/// `k=v,k2=v2` (W3C baggage style, percent-encoded values); malformed
/// entries are skipped.
fn parse_headers(raw: &str) -> Vec<(String, String)> {
    raw.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_owned(), percent_decode(v.trim())))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A batching OTLP/HTTP (JSON) span exporter. Cheap to share: hand it to
/// the service as `Arc<dyn SpanExporter>`.
#[derive(Debug)]
pub struct OtlpExporter {
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug)]
struct Shared {
    config: OtlpConfig,
    resource: Attributes,
    client: HttpClient,
    queue: Mutex<VecDeque<SpanData>>,
    wake: Notify,
    closed: AtomicBool,
    dropped: AtomicU64,
    sent: AtomicU64,
    /// Serialises sends, so a flush and the worker never post the same
    /// moment's spans out of order.
    sending: tokio::sync::Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl OtlpExporter {
    /// Starts the exporter and its background sender (on the current
    /// Tokio runtime).
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn start(config: OtlpConfig) -> Result<Arc<Self>, oxiscope_http::Error> {
        let resource = vec![
            (
                "service.name".to_owned(),
                AttrValue::from(config.service_name.as_str()),
            ),
            (
                "service.version".to_owned(),
                env!("CARGO_PKG_VERSION").into(),
            ),
            ("telemetry.sdk.name".to_owned(), "oxiscope".into()),
            ("telemetry.sdk.language".to_owned(), "rust".into()),
        ];
        let shared = Arc::new(Shared {
            config,
            resource,
            // One retry, briefly: a collector that is down must not hold
            // the queue (or the server's shutdown) for long.
            client: HttpClient::shared()?.with_retry_policy(
                RetryPolicy::default()
                    .with_max_attempts(2)
                    .with_max_delay(Duration::from_secs(2)),
            ),
            queue: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            sending: tokio::sync::Mutex::new(()),
        });
        let worker = tokio::spawn(run(Arc::clone(&shared)));
        Ok(Arc::new(Self {
            shared,
            worker: Mutex::new(Some(worker)),
        }))
    }

    /// Spans dropped: the queue was full, or the collector refused them.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Spans the collector accepted.
    #[must_use]
    pub fn sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Relaxed)
    }

    /// Stops the background sender after it sent everything queued; spans
    /// exported later are dropped.
    pub async fn shutdown(&self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.wake.notify_one();
        let worker = lock(&self.worker).take();
        if let Some(worker) = worker
            && let Err(e) = worker.await
        {
            tracing::warn!(error = %e, "the OTLP exporter stopped abnormally");
        }
        // Anything that raced in before `closed` was seen.
        self.shared.send_pending().await;
    }
}

impl SpanExporter for OtlpExporter {
    fn export(&self, mut span: SpanData) {
        // Spans of the agent are capped when they end; this holds for any
        // span handed over, however it was built.
        span.cap();
        let shared = &self.shared;
        if shared.closed.load(Ordering::Acquire) {
            shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let len = {
            let mut queue = lock(&shared.queue);
            if queue.len() >= shared.config.max_queue {
                drop(queue);
                let dropped = shared.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if dropped.is_power_of_two() {
                    tracing::warn!(dropped, "the span queue is full; dropping spans");
                }
                return;
            }
            queue.push_back(span);
            queue.len()
        };
        if len >= shared.config.max_batch {
            shared.wake.notify_one();
        }
    }

    fn flush(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.send_pending())
    }
}

/// The background sender: a batch when one is full or the interval passed,
/// until closed.
async fn run(shared: Arc<Shared>) {
    loop {
        tokio::select! {
            () = shared.wake.notified() => {}
            () = tokio::time::sleep(shared.config.interval) => {}
        }
        shared.send_pending().await;
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
    }
}

impl Shared {
    /// Sends everything queued, a batch at a time.
    async fn send_pending(&self) {
        let _sending = self.sending.lock().await;
        loop {
            let batch: Vec<SpanData> = {
                let mut queue = lock(&self.queue);
                let n = queue.len().min(self.config.max_batch.max(1));
                queue.drain(..n).collect()
            };
            if batch.is_empty() {
                return;
            }
            self.send(&batch).await;
        }
    }

    async fn send(&self, batch: &[SpanData]) {
        let body = encode_export_request(&self.resource, batch);
        let body = match serde_json::to_vec(&body) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!(error = %e, "cannot encode spans");
                return;
            }
        };
        let mut request = self
            .client
            .post(&self.config.traces_endpoint)
            .header("content-type", "application/json")
            .timeout(Duration::from_secs(10))
            .body(body);
        for (k, v) in &self.config.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let count = u64::try_from(batch.len()).unwrap_or(u64::MAX);
        match self.client.send(request).await {
            Ok(_) => {
                self.sent.fetch_add(count, Ordering::Relaxed);
            }
            Err(e) => {
                self.dropped.fetch_add(count, Ordering::Relaxed);
                tracing::warn!(error = %e, spans = count, endpoint = %self.config.traces_endpoint, "exporting spans failed");
            }
        }
    }
}

/// The tracing middleware of a session's agent: a run span (a new trace,
/// one per built agent, so one per chat request or inbox run) with the
/// session's ids, under which the replies, model calls and tool calls hang.
/// The run's trace id is logged in the caller's span (the HTTP request's,
/// with its request id) to tie logs to the trace.
pub fn session_tracing(
    exporter: Arc<dyn SpanExporter>,
    session: &oxiscope_storage::SessionRecord,
    provider: Option<&str>,
    agent_name: &str,
    model_name: &str,
    parent: Option<SpanContext>,
) -> TracingMiddleware {
    let mut middleware = TracingMiddleware::new(exporter)
        .with_agent_name(agent_name)
        .with_model(model_name)
        .with_conversation_id(session.id.as_str())
        .with_attribute("gen_ai.agent.id", session.agent_id.as_str())
        .with_attribute("enduser.id", session.user_id.as_str());
    if let Some(provider) = provider {
        middleware = middleware.with_provider(provider);
    }
    // Under the chat request's span when a request started the run; the
    // root of its own trace otherwise (a queued input served later).
    let kind = match parent {
        Some(parent) => {
            middleware = middleware.with_parent(parent);
            SpanKind::Internal
        }
        None => SpanKind::Server,
    };
    let middleware = middleware.with_run_span("session_run", kind);
    if let Some(run) = middleware.parent() {
        tracing::info!(trace_id = %run.trace_id, span_id = %run.span_id, session_id = %session.id, "tracing the run");
    }
    middleware
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_flag_wins_then_the_traces_variable_then_the_base_variable() {
        let all = [
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:4318/custom"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:4318/"),
        ];
        let flag = OtlpConfig::from_vars(Some("http://f:4318/"), vars(&all)).unwrap();
        assert_eq!(flag.traces_endpoint, "http://f:4318/v1/traces");
        let traces = OtlpConfig::from_vars(None, vars(&all)).unwrap();
        assert_eq!(traces.traces_endpoint, "http://t:4318/custom");
        let base = OtlpConfig::from_vars(None, vars(&all[1..])).unwrap();
        assert_eq!(base.traces_endpoint, "http://b:4318/v1/traces");
        assert_eq!(OtlpConfig::from_vars(None, vars(&[])), None);
        assert_eq!(
            OtlpConfig::from_vars(None, vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])),
            None
        );
    }

    #[test]
    fn headers_and_service_name_come_from_the_standard_variables() {
        let config = OtlpConfig::from_vars(
            Some("http://c:4318"),
            vars(&[
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "api-key=a%20b%3D, x-tenant = t1 ,broken,=novalue,bad=%zz",
                ),
                ("OTEL_SERVICE_NAME", "agents-prod"),
            ]),
        )
        .unwrap();
        assert_eq!(
            config.headers,
            [
                ("api-key".to_owned(), "a b=".to_owned()),
                ("x-tenant".to_owned(), "t1".to_owned()),
                ("bad".to_owned(), "%zz".to_owned()),
            ]
        );
        assert_eq!(config.service_name, "agents-prod");
    }
}
