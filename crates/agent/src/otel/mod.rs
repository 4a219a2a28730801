//! Tracing of agent runs with OpenTelemetry's span model and GenAI
//! semantic conventions, without the OpenTelemetry SDK.
//!
//! | name | what |
//! |---|---|
//! | [`TracingMiddleware`] | makes the spans: one per reply, model call and tool call |
//! | [`SpanData`], [`SpanContext`], [`TraceId`], [`SpanId`] | the span model |
//! | [`SpanExporter`] | where finished spans go; [`InMemoryExporter`] keeps them |
//! | [`encode_export_request`] | spans as an OTLP/JSON `ExportTraceServiceRequest` |
//!
//! The transport (OTLP over HTTP) lives with the service, which owns the
//! HTTP client.

mod exporter;
mod middleware;
mod otlp_json;
mod span;
mod watch;

pub use exporter::{InMemoryExporter, SpanExporter};
pub use middleware::TracingMiddleware;
pub use otlp_json::{SCOPE_NAME, encode_export_request};
pub use span::{
    AttrValue, Attributes, MAX_ATTRIBUTE_LEN, MAX_LIST_ITEMS, MAX_SPAN_NAME_LEN, SpanContext,
    SpanData, SpanEvent, SpanId, SpanKind, SpanStatus, TraceId, now_unix_nano,
};
