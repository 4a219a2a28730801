//! Tracing: the spans `TracingMiddleware` makes for replies, model calls
//! and tool calls, and their OTLP/JSON encoding.

use std::sync::Arc;

use oxiscope_agent::otel::{
    AttrValue, InMemoryExporter, SpanContext, SpanData, SpanEvent, SpanId, SpanKind, SpanStatus,
    TraceId, TracingMiddleware, encode_export_request,
};
use oxiscope_agent::{Agent, AgentState};
use oxiscope_message::{
    ExternalExecutionResultEvent, PermissionBehavior, PermissionRule, ToolResultBlock,
    ToolResultState,
};
use oxiscope_model::{DynChatModel, ModelError};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::FunctionTool;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::*;

fn traced_agent(
    model: &Arc<ScriptedModel>,
    state: AgentState,
    tracing: TracingMiddleware,
) -> Agent {
    let Ok(mut toolkit) = Arc::try_unwrap(toolkit()) else {
        panic!("a fresh toolkit is not shared")
    };
    toolkit
        .register(
            FunctionTool::new("flaky", |_: Target| async move {
                Err::<String, _>("disk on fire")
            })
            .with_description("Always fails."),
        )
        .unwrap();
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday.")
        .toolkit(Arc::new(toolkit))
        .workdir(std::env::temp_dir())
        .state(state)
        .middleware(tracing)
        .build()
        .unwrap()
}

fn allow(state: &mut AgentState, tool: &str) {
    state.permission_context.add_rule(PermissionRule::new(
        tool,
        None,
        PermissionBehavior::Allow,
        "session",
    ));
}

fn tracing(exporter: &InMemoryExporter) -> TracingMiddleware {
    TracingMiddleware::new(Arc::new(exporter.clone()))
        .with_provider("openai")
        .with_model("gpt-test")
        .with_conversation_id("session-1")
        .with_attribute("enduser.id", "user-1")
}

fn str_attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a str> {
    match span.attribute(key) {
        Some(AttrValue::Str(s)) => Some(s),
        _ => None,
    }
}

fn int_attr(span: &SpanData, key: &str) -> Option<i64> {
    match span.attribute(key) {
        Some(AttrValue::Int(i)) => Some(*i),
        _ => None,
    }
}

fn names(spans: &[SpanData]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

#[tokio::test]
async fn a_reply_with_a_tool_call_makes_a_span_tree_with_genai_attributes() {
    let exporter = InMemoryExporter::new();
    let parent = SpanContext::new_root();
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"city": "Paris"}"#).with_usage(10, 4),
        ScriptedTurn::text("Sunny in Paris.").with_usage(20, 5),
    ]);
    let agent = traced_agent(
        &model,
        state_allowing_weather(),
        tracing(&exporter).with_parent(parent),
    );
    let events = collect(agent.reply_stream(user("weather?"))).await;
    assert_eq!(types(&events).last(), Some(&"REPLY_END"));

    let spans = exporter.spans();
    assert_eq!(
        names(&spans),
        [
            "chat gpt-test",
            "execute_tool get_weather",
            "chat gpt-test",
            "invoke_agent Friday"
        ]
    );
    let reply = &spans[3];
    assert_eq!(reply.context.trace_id, parent.trace_id);
    assert_eq!(reply.parent_span_id, Some(parent.span_id));
    for child in &spans[..3] {
        assert_eq!(child.context.trace_id, parent.trace_id);
        assert_eq!(child.parent_span_id, Some(reply.context.span_id));
        assert!(child.start_unix_nano >= reply.start_unix_nano);
        assert!(child.end_unix_nano <= reply.end_unix_nano);
        assert_eq!(str_attr(child, "gen_ai.conversation.id"), Some("session-1"));
        assert_eq!(str_attr(child, "enduser.id"), Some("user-1"));
        assert_eq!(str_attr(child, "gen_ai.provider.name"), Some("openai"));
    }
    let ids: std::collections::HashSet<_> = spans.iter().map(|s| s.context.span_id).collect();
    assert_eq!(ids.len(), 4, "span ids are unique");

    assert_eq!(
        str_attr(reply, "gen_ai.operation.name"),
        Some("invoke_agent")
    );
    assert_eq!(str_attr(reply, "gen_ai.agent.name"), Some("Friday"));
    assert_eq!(int_attr(reply, "gen_ai.usage.input_tokens"), Some(30));
    assert_eq!(int_attr(reply, "gen_ai.usage.output_tokens"), Some(9));
    assert_eq!(
        str_attr(reply, "oxiscope.reply.finished_reason"),
        Some("completed")
    );
    assert_eq!(reply.status, SpanStatus::Unset);
    assert_eq!(reply.kind, SpanKind::Internal);

    let (first, tool, second) = (&spans[0], &spans[1], &spans[2]);
    assert_eq!(first.kind, SpanKind::Client);
    assert_eq!(str_attr(first, "gen_ai.operation.name"), Some("chat"));
    assert_eq!(str_attr(first, "gen_ai.request.model"), Some("gpt-test"));
    assert_eq!(str_attr(first, "gen_ai.system"), Some("openai"));
    assert_eq!(int_attr(first, "gen_ai.usage.input_tokens"), Some(10));
    assert_eq!(int_attr(first, "gen_ai.usage.output_tokens"), Some(4));
    assert_eq!(
        first.attribute("gen_ai.response.finish_reasons"),
        Some(&AttrValue::StrList(vec!["tool_calls".into()]))
    );
    assert_eq!(
        second.attribute("gen_ai.response.finish_reasons"),
        Some(&AttrValue::StrList(vec!["stop".into()]))
    );
    assert_eq!(int_attr(second, "gen_ai.usage.input_tokens"), Some(20));

    assert_eq!(
        str_attr(tool, "gen_ai.operation.name"),
        Some("execute_tool")
    );
    assert_eq!(str_attr(tool, "gen_ai.tool.name"), Some("get_weather"));
    assert_eq!(str_attr(tool, "gen_ai.tool.call.id"), Some("c1"));
    assert_eq!(str_attr(tool, "oxiscope.tool.state"), Some("success"));
    assert_eq!(tool.status, SpanStatus::Unset);

    // Content stays out unless asked for.
    for span in &spans {
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        ] {
            assert_eq!(span.attribute(key), None, "{} has {key}", span.name);
        }
    }
}

#[tokio::test]
async fn content_is_recorded_only_when_enabled() {
    let exporter = InMemoryExporter::new();
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", r#"{"city": "Oslo"}"#),
        ScriptedTurn::text("Cold in Oslo."),
    ]);
    let agent = traced_agent(
        &model,
        state_allowing_weather(),
        tracing(&exporter).with_content(true),
    );
    let _ = collect(agent.reply_stream(user("weather in Oslo?"))).await;
    let spans = exporter.spans();
    let tool = &spans[1];
    assert_eq!(
        str_attr(tool, "gen_ai.tool.call.arguments"),
        Some(r#"{"city":"Oslo"}"#)
    );
    assert_eq!(
        str_attr(tool, "gen_ai.tool.call.result"),
        Some("Oslo: 21 degrees celsius, sunny")
    );
    let chat = &spans[0];
    assert!(
        str_attr(chat, "gen_ai.input.messages")
            .unwrap()
            .contains("weather in Oslo?")
    );
    let reply = &spans[3];
    assert!(
        str_attr(reply, "gen_ai.input.messages")
            .unwrap()
            .contains("weather in Oslo?")
    );
    assert!(
        str_attr(reply, "gen_ai.output.messages")
            .unwrap()
            .contains("Cold in Oslo.")
    );
}

#[tokio::test]
async fn a_failed_tool_call_gets_an_error_status() {
    let exporter = InMemoryExporter::new();
    let model = scripted(vec![
        ScriptedTurn::tool_call("c9", "flaky", r#"{"path": "x"}"#),
        ScriptedTurn::text("It failed."),
    ]);
    let mut state = AgentState::default();
    allow(&mut state, "flaky");
    let agent = traced_agent(&model, state, tracing(&exporter));
    let _ = collect(agent.reply_stream(user("try it"))).await;
    let spans = exporter.spans();
    assert_eq!(
        names(&spans),
        [
            "chat gpt-test",
            "execute_tool flaky",
            "chat gpt-test",
            "invoke_agent Friday"
        ]
    );
    let tool = &spans[1];
    assert_eq!(str_attr(tool, "oxiscope.tool.state"), Some("error"));
    assert_eq!(str_attr(tool, "error.type"), Some("tool_error"));
    let SpanStatus::Error(message) = &tool.status else {
        panic!("expected an error status, got {:?}", tool.status)
    };
    assert!(message.contains("disk on fire"), "{message}");
    // The reply itself went on and completed.
    assert_eq!(spans[3].status, SpanStatus::Unset);
}

#[tokio::test]
async fn a_failed_model_call_fails_its_span_and_the_reply_span() {
    let exporter = InMemoryExporter::new();
    let model = scripted(vec![ScriptedTurn::error(ModelError::Provider {
        provider: "openai".into(),
        status: 401,
        code: Some("invalid_api_key".into()),
        message: "bad key".into(),
        request_id: None,
        retry_after: None,
    })]);
    let agent = traced_agent(&model, AgentState::default(), tracing(&exporter));
    let _ = collect(agent.reply_stream(user("hi"))).await;
    let spans = exporter.spans();
    let chat: Vec<_> = spans.iter().filter(|s| s.name == "chat gpt-test").collect();
    assert!(!chat.is_empty());
    for span in chat {
        assert_eq!(str_attr(span, "error.type"), Some("provider_error"));
        assert!(matches!(&span.status, SpanStatus::Error(m) if m.contains("bad key")));
    }
    let reply = spans.last().unwrap();
    assert_eq!(reply.name, "invoke_agent Friday");
    assert_eq!(
        str_attr(reply, "oxiscope.reply.finished_reason"),
        Some("error")
    );
    assert_eq!(str_attr(reply, "error.type"), Some("authentication"));
    assert!(matches!(reply.status, SpanStatus::Error(_)));
}

#[tokio::test]
async fn external_results_get_compensating_tool_spans_in_the_resumed_reply() {
    let exporter = InMemoryExporter::new();
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "open_url", r#"{"path": "https://example.com"}"#),
        ScriptedTurn::text("Opened."),
    ]);
    let agent = traced_agent(&model, AgentState::default(), tracing(&exporter));
    let pause = collect(agent.reply_stream(user("open it"))).await;
    let Some(oxiscope_message::AgentEvent::RequireExternalExecution(req)) = pause.last() else {
        panic!("expected a pause, got {:?}", types(&pause))
    };
    let parked = exporter.take();
    let first_reply = parked.last().unwrap();
    assert_eq!(first_reply.name, "invoke_agent Friday");
    assert_eq!(
        first_reply.attribute("oxiscope.reply.awaiting_external_execution"),
        Some(&AttrValue::StrList(vec!["c1".into()]))
    );

    let result = ToolResultBlock::new("c1", "open_url", "Opened.", ToolResultState::Success);
    let _ = collect(agent.reply_stream(ExternalExecutionResultEvent::new(
        req.reply_id.clone(),
        vec![result],
    )))
    .await;
    let spans = exporter.spans();
    assert_eq!(
        names(&spans),
        [
            "execute_tool open_url",
            "chat gpt-test",
            "invoke_agent Friday"
        ]
    );
    let (tool, reply) = (&spans[0], &spans[2]);
    assert_eq!(tool.parent_span_id, Some(reply.context.span_id));
    assert_eq!(
        tool.attribute("oxiscope.tool.external"),
        Some(&AttrValue::Bool(true))
    );
    assert_eq!(str_attr(tool, "gen_ai.tool.call.id"), Some("c1"));
    assert_eq!(
        str_attr(reply, "oxiscope.reply.resumed_with"),
        Some("external_execution")
    );
}

#[tokio::test]
async fn a_run_span_covers_the_agent_and_parents_its_replies() {
    let exporter = InMemoryExporter::new();
    let request = SpanContext::new_root();
    let model = scripted(vec![ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let agent = traced_agent(
        &model,
        AgentState::default(),
        tracing(&exporter)
            .with_parent(request)
            .with_run_span("session_run", SpanKind::Server),
    );
    let _ = collect(agent.reply_stream(user("a"))).await;
    let _ = collect(agent.reply_stream(user("b"))).await;
    assert_eq!(exporter.spans().len(), 4, "the run span is still open");
    drop(agent);
    let spans = exporter.spans();
    assert_eq!(spans.len(), 5);
    let run = spans.last().unwrap();
    assert_eq!(run.name, "session_run");
    assert_eq!(run.kind, SpanKind::Server);
    assert_eq!(run.parent_span_id, Some(request.span_id));
    let replies: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("invoke_agent"))
        .collect();
    assert_eq!(replies.len(), 2);
    for reply in replies {
        assert_eq!(reply.parent_span_id, Some(run.context.span_id));
        assert_eq!(reply.context.trace_id, request.trace_id);
    }
}

#[tokio::test]
async fn a_disabled_tracer_changes_nothing_and_exports_nothing() {
    let model = scripted(vec![ScriptedTurn::text("plain").with_usage(1, 1)]);
    let traced = traced_agent(&model, AgentState::default(), TracingMiddleware::disabled());
    assert!(!TracingMiddleware::disabled().is_enabled());
    let events = collect(traced.reply_stream(user("hi"))).await;
    let model = scripted(vec![ScriptedTurn::text("plain").with_usage(1, 1)]);
    let plain = agent(&model, AgentState::default());
    let baseline = collect(plain.reply_stream(user("hi"))).await;
    assert_eq!(types(&events), types(&baseline));
}

#[test]
fn spans_encode_as_otlp_json() {
    let trace_id = TraceId::from_hex("5b8efff798038103d269b633813fc60c").unwrap();
    let span = SpanData {
        context: SpanContext {
            trace_id,
            span_id: SpanId::from_hex("eee19b7ec3c1b174").unwrap(),
        },
        parent_span_id: SpanId::from_hex("eee19b7ec3c1b173"),
        name: "execute_tool flaky".into(),
        kind: SpanKind::Internal,
        start_unix_nano: 1_544_712_660_000_000_000,
        end_unix_nano: 1_544_712_661_000_000_000,
        attributes: vec![
            ("gen_ai.tool.name".into(), "flaky".into()),
            (
                "gen_ai.usage.input_tokens".into(),
                AttrValue::Int(9_007_199_254_740_993),
            ),
            ("ratio".into(), AttrValue::Double(0.5)),
            ("external".into(), AttrValue::Bool(false)),
            (
                "gen_ai.response.finish_reasons".into(),
                AttrValue::StrList(vec!["stop".into()]),
            ),
        ],
        status: SpanStatus::Error("disk on fire".into()),
        events: vec![SpanEvent {
            name: "retry".into(),
            time_unix_nano: 1_544_712_660_500_000_000,
            attributes: vec![("attempt".into(), AttrValue::Int(2))],
        }],
    };
    let root = SpanData {
        context: SpanContext {
            trace_id,
            span_id: SpanId::from_hex("eee19b7ec3c1b173").unwrap(),
        },
        parent_span_id: None,
        name: "invoke_agent Friday".into(),
        kind: SpanKind::Client,
        start_unix_nano: 1,
        end_unix_nano: 2,
        attributes: vec![],
        status: SpanStatus::Unset,
        events: vec![],
    };
    let resource = vec![("service.name".to_owned(), AttrValue::from("oxiscope"))];
    let body = encode_export_request(&resource, &[span, root]);
    assert_eq!(
        body,
        json!({
            "resourceSpans": [{
                "resource": {
                    "attributes": [{ "key": "service.name", "value": { "stringValue": "oxiscope" } }],
                },
                "scopeSpans": [{
                    "scope": { "name": "oxiscope", "version": env!("CARGO_PKG_VERSION") },
                    "spans": [
                        {
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "spanId": "eee19b7ec3c1b174",
                            "parentSpanId": "eee19b7ec3c1b173",
                            "name": "execute_tool flaky",
                            "kind": 1,
                            "startTimeUnixNano": "1544712660000000000",
                            "endTimeUnixNano": "1544712661000000000",
                            "attributes": [
                                { "key": "gen_ai.tool.name", "value": { "stringValue": "flaky" } },
                                { "key": "gen_ai.usage.input_tokens", "value": { "intValue": "9007199254740993" } },
                                { "key": "ratio", "value": { "doubleValue": 0.5 } },
                                { "key": "external", "value": { "boolValue": false } },
                                {
                                    "key": "gen_ai.response.finish_reasons",
                                    "value": { "arrayValue": { "values": [{ "stringValue": "stop" }] } },
                                },
                            ],
                            "events": [{
                                "timeUnixNano": "1544712660500000000",
                                "name": "retry",
                                "attributes": [{ "key": "attempt", "value": { "intValue": "2" } }],
                            }],
                            "status": { "code": 2, "message": "disk on fire" },
                        },
                        {
                            "traceId": "5b8efff798038103d269b633813fc60c",
                            "spanId": "eee19b7ec3c1b173",
                            "name": "invoke_agent Friday",
                            "kind": 3,
                            "startTimeUnixNano": "1",
                            "endTimeUnixNano": "2",
                            "attributes": [],
                            "status": {},
                        },
                    ],
                }],
            }],
        })
    );
}

#[test]
fn ids_are_random_hex_and_reject_bad_input() {
    let a = TraceId::random();
    let b = TraceId::random();
    assert_ne!(a, b);
    assert_eq!(a.to_string().len(), 32);
    assert_eq!(TraceId::from_hex(&a.to_string()), Some(a));
    assert_eq!(SpanId::random().to_string().len(), 16);
    assert_eq!(TraceId::from_hex("00000000000000000000000000000000"), None);
    assert_eq!(SpanId::from_hex("0000000000000000"), None);
    assert_eq!(SpanId::from_hex("xyz"), None);
    assert_eq!(SpanId::from_hex("eee19b7ec3c1b17g"), None);
    assert_eq!(SpanId::from_hex("ééé19b7ec3c1b1"), None);
}

#[test]
fn traceparent_headers_round_trip_and_bad_ones_are_refused() {
    let ctx = SpanContext::new_root();
    assert_eq!(SpanContext::from_traceparent(&ctx.traceparent()), Some(ctx));
    let parsed =
        SpanContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .unwrap();
    assert_eq!(
        parsed.trace_id.to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(parsed.span_id.to_string(), "00f067aa0ba902b7");
    for bad in [
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
    ] {
        assert_eq!(SpanContext::from_traceparent(bad), None, "{bad}");
    }
}

/// Every string a span keeps is bounded, whoever chose it: the user's
/// input, the model's text and tool names, an attribute of the caller's.
#[tokio::test]
async fn span_names_and_string_attributes_are_capped() {
    use oxiscope_agent::otel::{MAX_ATTRIBUTE_LEN, MAX_SPAN_NAME_LEN};
    let exporter = InMemoryExporter::new();
    let city = "t".repeat(20_000);
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "get_weather", format!(r#"{{"city": "{city}"}}"#)),
        ScriptedTurn::text("ø".repeat(50_000)),
    ]);
    let agent = traced_agent(
        &model,
        state_allowing_weather(),
        tracing(&exporter)
            .with_content(true)
            .with_attribute("tenant.note", "n".repeat(100_000)),
    );
    let _ = collect(agent.reply_stream(user(&"q".repeat(100_000)))).await;
    let spans = exporter.spans();
    assert!(spans.len() >= 3, "{spans:?}");
    let mut checked = 0;
    for span in &spans {
        assert!(span.name.len() <= MAX_SPAN_NAME_LEN, "{}", span.name.len());
        for (key, value) in &span.attributes {
            if let AttrValue::Str(s) = value {
                assert!(s.len() <= MAX_ATTRIBUTE_LEN, "{key}: {} bytes", s.len());
                checked += 1;
            }
        }
        if let SpanStatus::Error(description) = &span.status {
            assert!(description.len() <= MAX_ATTRIBUTE_LEN);
        }
    }
    assert!(checked > 0);
    let reply = spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent"))
        .unwrap();
    let note = str_attr(reply, "tenant.note").unwrap();
    assert!(note.starts_with("nnn") && note.ends_with('…'), "{note:.20}");
    let tool = spans
        .iter()
        .find(|s| s.name.starts_with("execute_tool"))
        .unwrap();
    assert!(
        str_attr(tool, "gen_ai.tool.call.arguments")
            .unwrap()
            .ends_with('…')
    );
}

#[test]
fn a_span_caps_what_is_written_to_its_fields_when_it_ends() {
    use oxiscope_agent::otel::{MAX_ATTRIBUTE_LEN, MAX_LIST_ITEMS, MAX_SPAN_NAME_LEN};
    let mut span = SpanData::start("x".repeat(10_000), SpanKind::Internal, None);
    span.attributes
        .push(("direct".to_owned(), AttrValue::Str("é".repeat(10_000))));
    span.set("list", vec!["l".repeat(10_000); 1000]);
    span.add_event(
        "e",
        vec![("detail".to_owned(), AttrValue::Str("d".repeat(100_000)))],
    );
    span.fail("tool_error", "f".repeat(100_000));
    span.end();
    assert_eq!(span.name.len(), MAX_SPAN_NAME_LEN);
    let Some(AttrValue::Str(direct)) = span.attribute("direct") else {
        panic!()
    };
    assert!(direct.len() <= MAX_ATTRIBUTE_LEN && direct.ends_with('…'));
    let Some(AttrValue::StrList(list)) = span.attribute("list") else {
        panic!()
    };
    assert_eq!(list.len(), MAX_LIST_ITEMS);
    assert!(list.iter().all(|l| l.len() <= MAX_ATTRIBUTE_LEN));
    let SpanStatus::Error(description) = &span.status else {
        panic!()
    };
    assert!(description.len() <= MAX_ATTRIBUTE_LEN);
    let Some((_, AttrValue::Str(detail))) = span.events[0].attributes.first() else {
        panic!()
    };
    assert!(detail.len() <= MAX_ATTRIBUTE_LEN);
}
