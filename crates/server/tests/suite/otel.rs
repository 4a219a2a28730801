//! Tracing of the service's runs: the spans a chat makes, and their
//! export over OTLP/HTTP (JSON) to a real receiver that parses them with
//! the official protobuf definitions (`tests/otlp_receiver.py`).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use oxiscope_agent::otel::{
    AttrValue, InMemoryExporter, SpanContext, SpanData, SpanExporter, SpanKind, SpanStatus,
};
use oxiscope_server::{AuthMode, OtlpConfig, OtlpExporter};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, text_answer};

fn str_attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a str> {
    match span.attribute(key) {
        Some(AttrValue::Str(s)) => Some(s),
        _ => None,
    }
}

/// Waits for the span `name` (the run span ends when the run's task lets
/// the agent go, a moment after the status turns idle).
async fn wait_for_span(exporter: &InMemoryExporter, name: &str) -> Vec<SpanData> {
    for _ in 0..500 {
        let spans = exporter.spans();
        if spans.iter().any(|s| s.name == name) {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no {name} span: {:?}", exporter.spans());
}

/// Sends `text` as a chat of `s` with `traceparent`, once its run ends:
/// the spans of that request.
async fn chat_with_traceparent(
    h: &Harness,
    s: &super::common::Setup,
    exporter: &InMemoryExporter,
    traceparent: &str,
    text: &str,
) -> Vec<SpanData> {
    let _ = exporter.take();
    h.fake.push(text_answer("Hello"));
    let body = json!({"agent_id": s.agent_id, "session_id": s.session_id, "input": user_msg(text)});
    let res = h
        .http
        .post(format!("{}/chat/", h.base))
        .header("x-user-id", "u")
        .header("traceparent", traceparent)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(h.wait_not_running("u", s).await, "idle");
    wait_for_span(exporter, "session_run").await
}

#[tokio::test]
async fn a_chat_run_is_traced_with_the_session_and_user() {
    let exporter = InMemoryExporter::new();
    let sink: Arc<dyn SpanExporter> = Arc::new(exporter.clone());
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| c.with_span_exporter(sink)).await;
    let s = h.setup("u").await;
    h.fake.push(text_answer("Hello"));
    let (code, body) = h.chat("u", &s, user_msg("Hi")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let spans = wait_for_span(&exporter, "session_run").await;
    let names: Vec<_> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "POST /chat/",
            "chat gpt-4.1",
            "invoke_agent Friday",
            "session_run"
        ]
    );
    let (request, chat, reply, run) = (&spans[0], &spans[1], &spans[2], &spans[3]);
    // The HTTP request's span is the run's parent.
    assert_eq!(request.kind, SpanKind::Server);
    assert_eq!(request.parent_span_id, None);
    assert_eq!(run.kind, SpanKind::Internal);
    assert_eq!(run.parent_span_id, Some(request.context.span_id));
    assert_eq!(reply.parent_span_id, Some(run.context.span_id));
    assert_eq!(chat.parent_span_id, Some(reply.context.span_id));
    for span in &spans {
        assert_eq!(span.context.trace_id, run.context.trace_id);
        assert_eq!(
            str_attr(span, "gen_ai.conversation.id"),
            Some(s.session_id.as_str())
        );
        assert_eq!(str_attr(span, "enduser.id"), Some("u"));
        assert_eq!(str_attr(span, "gen_ai.agent.id"), Some(s.agent_id.as_str()));
    }
    // The provider is known from the run on (the request names none).
    for span in &spans[1..] {
        assert_eq!(str_attr(span, "gen_ai.provider.name"), Some("openai"));
    }
    assert_eq!(str_attr(chat, "gen_ai.request.model"), Some("gpt-4.1"));
    assert_eq!(
        chat.attribute("gen_ai.usage.input_tokens"),
        Some(&AttrValue::Int(10))
    );
    assert_eq!(
        chat.attribute("gen_ai.usage.output_tokens"),
        Some(&AttrValue::Int(2))
    );
    assert_eq!(
        reply.attribute("gen_ai.usage.input_tokens"),
        Some(&AttrValue::Int(10))
    );
    assert_eq!(str_attr(reply, "gen_ai.agent.name"), Some("Friday"));
    // The tenant's text is not recorded.
    for span in &spans {
        assert!(span.attribute("gen_ai.input.messages").is_none());
    }

    // A second chat is a new run: a new trace.
    h.fake.push(text_answer("Again"));
    let _ = exporter.take();
    let (code, _) = h.chat("u", &s, user_msg("More")).await;
    assert_eq!(code, 200);
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let again = wait_for_span(&exporter, "session_run").await;
    assert_ne!(again[0].context.trace_id, run.context.trace_id);
}

#[tokio::test]
async fn a_full_queue_drops_and_counts_spans() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // Nothing listens there: sends fail and count as dropped too.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut config = OtlpConfig::new(&url);
    config.max_queue = 3;
    config.interval = Duration::from_secs(3600);
    let exporter = OtlpExporter::start(config).unwrap();
    for i in 0..5 {
        exporter.export(SpanData::start(format!("s{i}"), SpanKind::Internal, None));
    }
    assert_eq!(exporter.dropped(), 2);
    exporter.shutdown().await;
    assert_eq!(exporter.sent(), 0);
    assert_eq!(exporter.dropped(), 5);
    // After shutdown, spans are refused (and counted).
    exporter.export(SpanData::start("late", SpanKind::Internal, None));
    assert_eq!(exporter.dropped(), 6);
}

/// The Python receiver, killed when dropped.
struct Receiver {
    child: Child,
    url: String,
    out: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// Starts it, or skips (returns `None`) without python3 and
    /// opentelemetry-proto.
    fn start() -> Option<Self> {
        let probe = Command::new("python3")
            .args(["-c", "import google.protobuf, opentelemetry.proto"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !probe.is_ok_and(|s| s.success()) {
            oxiscope_test_support::skip(
                "python3 with opentelemetry-proto is missing (pip install opentelemetry-proto)",
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("received.jsonl");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otlp_receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().expect("the receiver's port");
        Some(Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            out,
            _dir: dir,
        })
    }

    /// What it received: one entry per request.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn spans(&self) -> Vec<Value> {
        let received = self.received();
        for entry in &received {
            assert_eq!(entry["ok"], true, "the receiver refused a request: {entry}");
        }
        received
            .iter()
            .flat_map(|e| e["spans"].as_array().unwrap().clone())
            .collect()
    }
}

#[tokio::test]
async fn spans_reach_a_real_otlp_receiver_in_batches() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = OtlpConfig::from_vars(Some(&receiver.url), |name| match name {
        "OTEL_EXPORTER_OTLP_HEADERS" => Some("x-api-key=s%3Dcret".to_owned()),
        "OTEL_SERVICE_NAME" => Some("oxiscope-test".to_owned()),
        _ => None,
    })
    .unwrap();
    config.max_batch = 2;
    config.interval = Duration::from_secs(3600);
    let exporter = OtlpExporter::start(config).unwrap();

    let root = SpanContext::new_root();
    let mut parent = SpanData::start("invoke_agent Friday", SpanKind::Internal, Some(root));
    parent.set("gen_ai.usage.input_tokens", 9_007_199_254_740_993_u64);
    parent.set("ratio", 0.25);
    parent.set("gen_ai.response.finish_reasons", vec!["stop".to_owned()]);
    parent.set("external", true);
    parent.add_event("paused", vec![("why".to_owned(), "confirm".into())]);
    let mut children = Vec::new();
    for i in 0..4 {
        let mut child = SpanData::start(
            format!("execute_tool t{i}"),
            SpanKind::Client,
            Some(parent.context),
        );
        child.fail("tool_error", format!("boom {i} ✗"));
        child.end();
        children.push(child);
    }
    parent.end();
    for child in &children {
        exporter.export(child.clone());
    }
    exporter.export(parent.clone());
    exporter.shutdown().await;
    assert_eq!(exporter.sent(), 5);
    assert_eq!(exporter.dropped(), 0);

    let received = receiver.received();
    assert_eq!(received.len(), 3, "batches of 2: {received:?}");
    for entry in &received {
        assert_eq!(entry["headers"]["x-api-key"], "s=cret");
        assert_eq!(entry["resources"][0]["service.name"], "oxiscope-test");
        assert_eq!(entry["resources"][0]["telemetry.sdk.language"], "rust");
    }
    let spans = receiver.spans();
    assert_eq!(spans.len(), 5);
    let got = &spans[4];
    assert_eq!(
        got,
        &json!({
            "scope": "oxiscope",
            "trace_id": root.trace_id.to_string(),
            "span_id": parent.context.span_id.to_string(),
            "parent_span_id": root.span_id.to_string(),
            "name": "invoke_agent Friday",
            "kind": 1,
            "start": parent.start_unix_nano,
            "end": parent.end_unix_nano,
            "attributes": {
                "gen_ai.usage.input_tokens": 9_007_199_254_740_993_u64,
                "ratio": 0.25,
                "gen_ai.response.finish_reasons": ["stop"],
                "external": true,
            },
            "events": ["paused"],
            "status": { "code": 0, "message": "" },
        })
    );
    for (i, span) in spans[..4].iter().enumerate() {
        assert_eq!(span["name"], format!("execute_tool t{i}"));
        assert_eq!(span["kind"], 3);
        assert_eq!(span["parent_span_id"], parent.context.span_id.to_string());
        assert_eq!(
            span["status"],
            json!({"code": 2, "message": format!("boom {i} ✗")})
        );
        assert_eq!(span["attributes"]["error.type"], "tool_error");
    }
    assert!(matches!(children[0].status, SpanStatus::Error(_)));
}

#[tokio::test]
async fn a_traced_chat_is_exported_end_to_end() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = OtlpExporter::start(OtlpConfig::new(&receiver.url)).unwrap();
    let sink: Arc<dyn SpanExporter> = exporter.clone();
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| c.with_span_exporter(sink)).await;
    let s = h.setup("u").await;
    h.fake.push(text_answer("Hello"));
    let (code, body) = h.chat("u", &s, user_msg("Hi")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let mut spans = Vec::new();
    for _ in 0..500 {
        exporter.flush().await;
        spans = receiver.spans();
        if spans.iter().any(|s| s["name"] == "session_run") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    exporter.shutdown().await;
    let names: Vec<_> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "POST /chat/",
            "chat gpt-4.1",
            "invoke_agent Friday",
            "session_run"
        ]
    );
    let request = spans.remove(0);
    assert_eq!(request["parent_span_id"], "");
    assert_eq!(spans[2]["parent_span_id"], request["span_id"]);
    let trace = &request["trace_id"];
    for span in &spans {
        assert_eq!(&span["trace_id"], trace);
        assert_eq!(span["attributes"]["gen_ai.conversation.id"], s.session_id);
        assert_eq!(span["attributes"]["enduser.id"], "u");
    }
    assert_eq!(spans[0]["parent_span_id"], spans[1]["span_id"]);
    assert_eq!(spans[1]["parent_span_id"], spans[2]["span_id"]);
    assert_eq!(spans[0]["attributes"]["gen_ai.operation.name"], "chat");
    assert_eq!(spans[0]["attributes"]["gen_ai.usage.input_tokens"], 10);
    assert_eq!(
        spans[0]["attributes"]["gen_ai.response.finish_reasons"],
        json!(["stop"])
    );
}

#[tokio::test]
async fn a_callers_traceparent_parents_the_request_and_its_run_when_the_operator_trusts_it() {
    let exporter = InMemoryExporter::new();
    let sink: Arc<dyn SpanExporter> = Arc::new(exporter.clone());
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| {
        c.with_span_exporter(sink).with_trust_traceparent(true)
    })
    .await;
    let s = h.setup("u").await;
    let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let spans = chat_with_traceparent(&h, &s, &exporter, caller, "Hi").await;
    let request = spans.iter().find(|s| s.name == "POST /chat/").unwrap();
    let run = spans.iter().find(|s| s.name == "session_run").unwrap();
    let theirs = SpanContext::from_traceparent(caller).unwrap();
    assert_eq!(request.context.trace_id, theirs.trace_id);
    assert_eq!(request.parent_span_id, Some(theirs.span_id));
    assert_eq!(run.parent_span_id, Some(request.context.span_id));
    for span in &spans {
        assert_eq!(span.context.trace_id, theirs.trace_id);
    }
    assert_eq!(
        request.attribute("http.response.status_code"),
        Some(&AttrValue::Int(200))
    );

    // A garbled traceparent starts a new trace instead.
    let spans = chat_with_traceparent(&h, &s, &exporter, "00-zz-zz-01", "More").await;
    let request = spans.iter().find(|s| s.name == "POST /chat/").unwrap();
    assert_eq!(request.parent_span_id, None);
    assert_ne!(request.context.trace_id, theirs.trace_id);
}

/// A tenant's `traceparent` would put the server's spans (its user id
/// among them) into a trace of the tenant's choosing: by default it is
/// ignored and the request starts a trace of its own.
#[tokio::test]
async fn a_callers_traceparent_is_ignored_unless_the_operator_trusts_it() {
    let exporter = InMemoryExporter::new();
    let sink: Arc<dyn SpanExporter> = Arc::new(exporter.clone());
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| c.with_span_exporter(sink)).await;
    let s = h.setup("u").await;
    let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let spans = chat_with_traceparent(&h, &s, &exporter, caller, "Hi").await;
    let request = spans.iter().find(|s| s.name == "POST /chat/").unwrap();
    let theirs = SpanContext::from_traceparent(caller).unwrap();
    assert_eq!(request.parent_span_id, None);
    for span in &spans {
        assert_ne!(span.context.trace_id, theirs.trace_id);
    }
}

/// What a tenant sends lands in span attributes: however long, the
/// exported span keeps a bounded piece of it.
#[tokio::test]
async fn span_attributes_from_a_request_are_capped() {
    let exporter = InMemoryExporter::new();
    let sink: Arc<dyn SpanExporter> = Arc::new(exporter.clone());
    let h = Harness::start_custom(AuthMode::DevHeader, move |c| c.with_span_exporter(sink)).await;
    let s = h.setup("u").await;
    let huge = "é".repeat(200_000);
    let body = json!({"agent_id": huge, "session_id": s.session_id, "input": user_msg("Hi")});
    let res = h
        .http
        .post(format!("{}/chat/", h.base))
        .header("x-user-id", "u")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(res.status().is_client_error(), "{}", res.status());
    let spans = wait_for_span(&exporter, "POST /chat/").await;
    let request = spans.iter().find(|s| s.name == "POST /chat/").unwrap();
    let Some(AttrValue::Str(agent)) = request.attribute("gen_ai.agent.id") else {
        panic!("no agent id: {request:?}");
    };
    assert!(
        agent.len() <= oxiscope_agent::otel::MAX_ATTRIBUTE_LEN,
        "{} bytes",
        agent.len()
    );
    assert!(agent.starts_with("éé") && agent.ends_with('…'));
}
