//! [`TracingMiddleware`]: spans for replies, model calls and tool calls,
//! named and attributed after OpenTelemetry's GenAI conventions.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use oxiscope_message::ToolResultState;
use oxiscope_model::{ChatStream, ModelError};
use oxiscope_tool::ToolStream;
use serde_json::Value;

use super::exporter::SpanExporter;
use super::span::{AttrValue, SpanContext, SpanData, SpanKind};
use super::watch::{ModelWatch, ReplyWatch, ToolWatch, model_error_type};
use crate::agent::ReplyInput;
use crate::middleware::{
    ActingCall, ActingNext, EventStream, Middleware, ModelCall, ModelNext, ReplyCall, ReplyNext,
};

/// Traces an agent: one `invoke_agent {name}` span per reply, with a
/// `chat {model}` child per model call and an `execute_tool {tool}` child
/// per tool call, exported to a [`SpanExporter`].
///
/// Spans carry the GenAI semantic-convention attributes
/// (`gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`,
/// `gen_ai.usage.*`, `gen_ai.response.finish_reasons`, `gen_ai.tool.*`,
/// `gen_ai.conversation.id`); message content, tool arguments and results
/// only with [`with_content`](Self::with_content). A failed model call or
/// tool call, and a reply ending in error, get an error status.
///
/// Results of tools executed outside the agent (a resumed reply's external
/// execution results) get compensating `execute_tool` spans, so they show
/// in the trace too.
///
/// Built without an exporter ([`disabled`](Self::disabled)), every hook
/// passes straight through: no span is made, no attribute computed.
///
/// The agent runs one reply at a time; the model and tool spans hang under
/// the reply span that is running.
///
/// The `with_*` settings apply while the middleware is unshared: set them
/// all before cloning it or handing it to an agent.
#[derive(Debug, Clone, Default)]
pub struct TracingMiddleware {
    inner: Option<Arc<Tracer>>,
}

#[derive(Debug)]
pub(super) struct Tracer {
    pub(super) exporter: Arc<dyn SpanExporter>,
    pub(super) provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) agent_name: Option<String>,
    pub(super) conversation_id: Option<String>,
    pub(super) content: bool,
    /// Set on every span this tracer makes.
    pub(super) common: Vec<(String, AttrValue)>,
    /// Where the reply spans hang: the run span, else the given parent.
    pub(super) parent: Option<SpanContext>,
    /// The run span, ended and exported when the tracer is dropped.
    pub(super) run: Mutex<Option<SpanData>>,
    /// The reply span running now.
    pub(super) current: Mutex<Option<SpanContext>>,
}

impl TracingMiddleware {
    /// A middleware that traces nothing and costs nothing.
    #[must_use]
    pub fn disabled() -> Self {
        Self { inner: None }
    }

    /// A middleware that exports its spans to `exporter`.
    #[must_use]
    pub fn new(exporter: Arc<dyn SpanExporter>) -> Self {
        Self {
            inner: Some(Arc::new(Tracer {
                exporter,
                provider: None,
                model: None,
                agent_name: None,
                conversation_id: None,
                content: false,
                common: Vec::new(),
                parent: None,
                run: Mutex::new(None),
                current: Mutex::new(None),
            })),
        }
    }

    /// Whether spans are made at all.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    fn edit(mut self, f: impl FnOnce(&mut Tracer)) -> Self {
        if let Some(inner) = self.inner.as_mut().and_then(Arc::get_mut) {
            f(inner);
        }
        self
    }

    /// The model provider (`gen_ai.provider.name`, also as the older
    /// `gen_ai.system`), e.g. `openai`, `anthropic`.
    #[must_use]
    pub fn with_provider(self, provider: impl Into<String>) -> Self {
        let provider = provider.into();
        self.edit(|t| t.provider = Some(provider))
    }

    /// The model requested (`gen_ai.request.model`, and the name of the
    /// `chat {model}` spans).
    #[must_use]
    pub fn with_model(self, model: impl Into<String>) -> Self {
        let model = model.into();
        self.edit(|t| t.model = Some(model))
    }

    /// The agent's name (`gen_ai.agent.name`); by default the name the
    /// reply reports.
    #[must_use]
    pub fn with_agent_name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.edit(|t| t.agent_name = Some(name))
    }

    /// The conversation (`gen_ai.conversation.id`); by default the
    /// reply's session id.
    #[must_use]
    pub fn with_conversation_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|t| t.conversation_id = Some(id))
    }

    /// Records message content, tool arguments and tool results
    /// (`gen_ai.input.messages`, `gen_ai.output.messages`,
    /// `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by
    /// default: they carry users' data.
    #[must_use]
    pub fn with_content(self, on: bool) -> Self {
        self.edit(|t| t.content = on)
    }

    /// An attribute set on every span (a user id, a deployment name).
    #[must_use]
    pub fn with_attribute(self, key: impl Into<String>, value: impl Into<AttrValue>) -> Self {
        let (key, value) = (key.into(), value.into());
        self.edit(|t| t.common.push((key, value)))
    }

    /// Hangs the reply spans under `parent` (a span of the caller's, such
    /// as the HTTP request that started the run) instead of starting a new
    /// trace per reply.
    #[must_use]
    pub fn with_parent(self, parent: SpanContext) -> Self {
        self.edit(|t| t.parent = Some(parent))
    }

    /// Opens a span `name` now, under the parent if one was given, that
    /// covers this middleware's life: the reply spans hang under it, and
    /// it ends and is exported when the middleware (the agent) is dropped.
    /// Call after [`with_parent`](Self::with_parent) and the attributes.
    #[must_use]
    pub fn with_run_span(self, name: impl Into<String>, kind: SpanKind) -> Self {
        let name = name.into();
        self.edit(|t| {
            let mut span = SpanData::start(name, kind, t.parent);
            t.stamp(&mut span);
            t.parent = Some(span.context);
            *lock(&t.run) = Some(span);
        })
    }

    /// The span replies hang under, when there is one.
    #[must_use]
    pub fn parent(&self) -> Option<SpanContext> {
        self.inner.as_ref().and_then(|t| t.parent)
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Tracer {
    /// Sets the attributes every span carries.
    fn stamp(&self, span: &mut SpanData) {
        if let Some(provider) = &self.provider {
            span.set("gen_ai.provider.name", provider.as_str());
            span.set("gen_ai.system", provider.as_str());
        }
        if let Some(id) = &self.conversation_id {
            span.set("gen_ai.conversation.id", id.as_str());
        }
        for (k, v) in &self.common {
            span.set(k, v.clone());
        }
    }

    fn start(&self, name: String, kind: SpanKind, operation: &str) -> SpanData {
        let parent = (*lock(&self.current)).or(self.parent);
        let mut span = SpanData::start(name, kind, parent);
        span.set("gen_ai.operation.name", operation);
        self.stamp(&mut span);
        span
    }

    pub(super) fn finish(&self, mut span: SpanData) {
        span.end();
        self.exporter.export(span);
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        if let Some(span) = lock(&self.run).take() {
            self.finish(span);
        }
    }
}

/// A JSON rendering for content attributes.
pub(super) fn to_json_string(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The name serde gives a unit enum value (`"error"`, `"completed"`).
pub(super) fn serde_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        _ => "unknown".to_owned(),
    }
}

impl Middleware for TracingMiddleware {
    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        let Some(tracer) = &self.inner else {
            return next.run(call);
        };
        let name = tracer.agent_name.as_deref().unwrap_or("agent");
        let mut span = tracer.start(
            format!("invoke_agent {name}"),
            SpanKind::Internal,
            "invoke_agent",
        );
        if let Some(name) = &tracer.agent_name {
            span.set("gen_ai.agent.name", name.as_str());
        }
        if let Some(model) = &tracer.model {
            span.set("gen_ai.request.model", model.as_str());
        }
        match &call.input {
            ReplyInput::Msgs(msgs) if tracer.content => {
                span.set("gen_ai.input.messages", to_json_string(msgs));
            }
            ReplyInput::Confirm(_) => span.set("oxiscope.reply.resumed_with", "confirmation"),
            ReplyInput::External(event) => {
                span.set("oxiscope.reply.resumed_with", "external_execution");
                for result in &event.execution_results {
                    let mut tool = SpanData::start(
                        format!("execute_tool {}", result.name),
                        SpanKind::Internal,
                        Some(span.context),
                    );
                    tool.set("gen_ai.operation.name", "execute_tool");
                    tracer.stamp(&mut tool);
                    tool.set("gen_ai.tool.name", result.name.as_str());
                    tool.set("gen_ai.tool.call.id", result.id.as_str());
                    tool.set("gen_ai.tool.type", "function");
                    tool.set("oxiscope.tool.external", true);
                    tool.set("oxiscope.tool.state", serde_name(&result.state));
                    if tracer.content {
                        tool.set("gen_ai.tool.call.result", to_json_string(&result.output));
                    }
                    if result.state == ToolResultState::Error {
                        tool.fail("tool_error", "the external execution failed");
                    }
                    tracer.finish(tool);
                }
            }
            ReplyInput::Interrupt(_) => span.set("oxiscope.reply.resumed_with", "interrupt"),
            _ => {}
        }
        *lock(&tracer.current) = Some(span.context);
        let mut watch = ReplyWatch {
            tracer: Arc::clone(tracer),
            span: Some(span),
            input_tokens: 0,
            output_tokens: 0,
            text: String::new(),
        };
        Box::pin(next.run(call).map(move |event| {
            watch.observe(&event);
            event
        }))
    }

    fn on_model_call<'a>(
        &'a self,
        call: ModelCall<'a>,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        let Some(tracer) = &self.inner else {
            return next.run(call);
        };
        let tracer = Arc::clone(tracer);
        Box::pin(async move {
            let model = tracer.model.as_deref().unwrap_or("unknown");
            let mut span = tracer.start(format!("chat {model}"), SpanKind::Client, "chat");
            if let Some(model) = &tracer.model {
                span.set("gen_ai.request.model", model.as_str());
            }
            if tracer.content {
                span.set("gen_ai.input.messages", to_json_string(&call.messages));
            }
            match next.run(call).await {
                Err(e) => {
                    span.fail(model_error_type(&e), e.to_string());
                    tracer.finish(span);
                    Err(e)
                }
                Ok(stream) => {
                    let mut watch = ModelWatch {
                        tracer,
                        span: Some(span),
                    };
                    let stream: ChatStream = Box::pin(stream.map(move |item| {
                        watch.observe(&item);
                        item
                    }));
                    Ok(stream)
                }
            }
        })
    }

    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        let Some(tracer) = &self.inner else {
            return next.run(call);
        };
        let tracer = Arc::clone(tracer);
        Box::pin(async move {
            let name = call.call.name.clone();
            let mut span = tracer.start(
                format!("execute_tool {name}"),
                SpanKind::Internal,
                "execute_tool",
            );
            span.set("gen_ai.tool.name", name);
            span.set("gen_ai.tool.call.id", call.call.id.as_str());
            span.set("gen_ai.tool.type", "function");
            if tracer.content {
                span.set("gen_ai.tool.call.arguments", to_json_string(&call.input));
            }
            let stream = next.run(call).await;
            let mut watch = ToolWatch {
                tracer,
                span: Some(span),
                text: String::new(),
            };
            let stream: ToolStream = Box::pin(stream.map(move |chunk| {
                watch.observe(&chunk);
                chunk
            }));
            stream
        })
    }
}
