//! Spans as an OTLP/JSON `ExportTraceServiceRequest`: OTLP's mapping of
//! its protobuf messages to JSON (camelCase fields, trace and span ids as
//! hex, 64-bit integers as decimal strings, enums as numbers).

use serde_json::{Map, Value, json};

use super::span::{AttrValue, Attributes, SpanData, SpanEvent, SpanKind, SpanStatus};

/// The instrumentation scope spans are reported under.
pub const SCOPE_NAME: &str = "oxiscope";

/// Encodes `spans` as the body of a `POST /v1/traces`, under one resource
/// (`resource`: `service.name` and friends) and the `oxiscope` scope.
#[must_use]
pub fn encode_export_request(resource: &Attributes, spans: &[SpanData]) -> Value {
    json!({
        "resourceSpans": [{
            "resource": { "attributes": encode_attributes(resource) },
            "scopeSpans": [{
                "scope": { "name": SCOPE_NAME, "version": env!("CARGO_PKG_VERSION") },
                "spans": spans.iter().map(encode_span).collect::<Vec<_>>(),
            }],
        }],
    })
}

fn encode_span(span: &SpanData) -> Value {
    let mut out = Map::new();
    out.insert("traceId".into(), span.context.trace_id.to_string().into());
    out.insert("spanId".into(), span.context.span_id.to_string().into());
    if let Some(parent) = span.parent_span_id {
        out.insert("parentSpanId".into(), parent.to_string().into());
    }
    out.insert("name".into(), span.name.clone().into());
    out.insert("kind".into(), kind_code(span.kind).into());
    out.insert(
        "startTimeUnixNano".into(),
        span.start_unix_nano.to_string().into(),
    );
    out.insert(
        "endTimeUnixNano".into(),
        span.end_unix_nano.to_string().into(),
    );
    out.insert("attributes".into(), encode_attributes(&span.attributes));
    if !span.events.is_empty() {
        out.insert(
            "events".into(),
            span.events.iter().map(encode_event).collect(),
        );
    }
    out.insert("status".into(), encode_status(&span.status));
    Value::Object(out)
}

fn encode_event(event: &SpanEvent) -> Value {
    json!({
        "timeUnixNano": event.time_unix_nano.to_string(),
        "name": event.name,
        "attributes": encode_attributes(&event.attributes),
    })
}

fn encode_status(status: &SpanStatus) -> Value {
    match status {
        SpanStatus::Unset => json!({}),
        SpanStatus::Ok => json!({ "code": 1 }),
        SpanStatus::Error(message) => json!({ "code": 2, "message": message }),
    }
}

/// OTLP's `SpanKind` numbers.
fn kind_code(kind: SpanKind) -> u8 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
    }
}

fn encode_attributes(attributes: &Attributes) -> Value {
    attributes
        .iter()
        .map(|(key, value)| json!({ "key": key, "value": encode_value(value) }))
        .collect()
}

fn encode_value(value: &AttrValue) -> Value {
    match value {
        AttrValue::Str(s) => json!({ "stringValue": s }),
        AttrValue::Int(i) => json!({ "intValue": i.to_string() }),
        AttrValue::Double(d) => json!({ "doubleValue": encode_double(*d) }),
        AttrValue::Bool(b) => json!({ "boolValue": b }),
        AttrValue::StrList(items) => json!({
            "arrayValue": {
                "values": items.iter().map(|s| json!({ "stringValue": s })).collect::<Vec<_>>(),
            },
        }),
    }
}

/// A finite double as a JSON number; the others as protobuf JSON spells them.
fn encode_double(d: f64) -> Value {
    if d.is_nan() {
        "NaN".into()
    } else if d.is_infinite() {
        if d > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        json!(d)
    }
}
