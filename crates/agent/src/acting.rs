//! Acting: the permission check and execution of a round's tool calls.

use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use oxiscope_message::{
    AgentEvent, PermissionBehavior, RequireExternalExecutionEvent, RequireUserConfirmEvent,
    RichContent, ToolCallBlock, ToolCallState, ToolResultEndEvent, ToolResultStartEvent,
    ToolResultState, ToolResultTextDeltaEvent,
};
use oxiscope_permission::decide;
use oxiscope_tool::{AsPolicy, SessionState, Tool, ToolCallContext, ToolChunk};
use serde_json::Value;

use crate::error::AgentError;
use crate::hitl::output_events;
use crate::middleware::{ActingCall, ActingNext};
use crate::running::Run;
use crate::state::{AgentState, pending_calls};

/// What the permission check made of one call.
enum Verdict {
    Run(Arc<dyn Tool>, Value),
    Fail(ToolResultState, String),
    Ask(Vec<oxiscope_message::PermissionRule>, bool),
    External,
    /// A valid structured output: recorded, and the reply can end.
    Structured(serde_json::Map<String, Value>),
    /// Covered by a rule suggested for an earlier call of this batch: not
    /// asked now; decided again once that call is answered.
    Defer,
    /// The agent asks to compress its context (always allowed).
    Compress(Option<String>),
}

/// Runs the permission check on every runnable call of the reply, executes
/// the allowed ones (consecutive concurrency-safe calls together, the others
/// one by one, results in call order), and parks the reply on the calls that
/// need the user or an external executor.
///
/// # Errors
/// [`AgentError::Internal`] if the reply's events stop fitting the message.
pub(crate) async fn act(run: &mut Run<'_>, state: &mut AgentState) -> Result<(), AgentError> {
    let calls: Vec<ToolCallBlock> = pending_calls(run.reply())
        .into_iter()
        .filter(|c| matches!(c.state, ToolCallState::Pending | ToolCallState::Allowed))
        .cloned()
        .collect();
    let reply_id = run.reply_id();
    let mut asked: Vec<ToolCallBlock> = Vec::new();
    let mut asked_rules: Vec<oxiscope_message::PermissionRule> = Vec::new();
    let mut external: Vec<ToolCallBlock> = Vec::new();
    let mut batch: Vec<(ToolCallBlock, Arc<dyn Tool>, Value)> = Vec::new();
    let session = SessionState::new(state.tool_context.clone(), state.tasks_context.clone());

    for call in calls {
        match verdict(run, state, &call, &asked_rules) {
            Verdict::Run(tool, input) => {
                let safe = tool.flags().concurrency_safe;
                if !safe || batch.iter().any(|(_, t, _)| !t.flags().concurrency_safe) {
                    execute(run, &session, std::mem::take(&mut batch)).await?;
                }
                batch.push((call, tool, input));
                if !safe {
                    execute(run, &session, std::mem::take(&mut batch)).await?;
                }
            }
            Verdict::Fail(result_state, text) => {
                execute(run, &session, std::mem::take(&mut batch)).await?;
                close_with(run, &reply_id, &call, result_state, &text).await?;
            }
            Verdict::Ask(rules, safety) => {
                if !safety {
                    asked_rules.extend(rules.iter().cloned());
                }
                let mut c = call;
                c.state = ToolCallState::Asking;
                c.suggested_rules = rules;
                asked.push(c);
            }
            Verdict::External => {
                let mut c = call;
                c.state = ToolCallState::Submitted;
                external.push(c);
            }
            Verdict::Defer => {}
            Verdict::Compress(instructions) => {
                execute(run, &session, std::mem::take(&mut batch)).await?;
                let (result_state, text) = compress_by_tool(run, state, instructions).await?;
                close_with(run, &reply_id, &call, result_state, &text).await?;
            }
            Verdict::Structured(value) => {
                execute(run, &session, std::mem::take(&mut batch)).await?;
                let text = crate::structured::DONE_TEXT;
                close_with(run, &reply_id, &call, ToolResultState::Success, text).await?;
                run.reply().structured_output = Some(Box::new(value.clone()));
                state.reply_context.structured_output = Some(value);
            }
        }
        if run.cancel.is_cancelled() {
            break;
        }
    }
    execute(run, &session, batch).await?;
    let (tool_context, tasks_context) = session.snapshot().await;
    state.tool_context = tool_context;
    state.tasks_context = tasks_context;

    if !external.is_empty() {
        for call in &external {
            let start =
                ToolResultStartEvent::new(reply_id.clone(), call.id.to_string(), call.name.clone());
            run.emit(start.into()).await?;
        }
        run.emit(RequireExternalExecutionEvent::new(reply_id.clone(), external).into())
            .await?;
    }
    if !asked.is_empty() {
        run.emit(RequireUserConfirmEvent::new(reply_id, asked).into())
            .await?;
    }
    Ok(())
}

fn verdict(
    run: &Run<'_>,
    state: &AgentState,
    call: &ToolCallBlock,
    asked_rules: &[oxiscope_message::PermissionRule],
) -> Verdict {
    let not_found = || {
        Verdict::Fail(
            ToolResultState::Error,
            format!(
                "ToolNotFoundError: The tool named '{}' doesn't exist.",
                call.name
            ),
        )
    };
    // A tool a middleware took away (see `Middleware::list_tools`) does not
    // run, unless a middleware put its own tool of that name in its place.
    if run.tools.is_removed(&call.name) {
        return not_found();
    }
    if call.name == crate::structured::TOOL_NAME
        && let Some(schema) = &state.reply_context.structured_schema
    {
        return match crate::structured::validate(schema, &call.input) {
            Ok(value) => Verdict::Structured(value),
            Err(problem) => Verdict::Fail(ToolResultState::Error, problem),
        };
    }
    if call.name == crate::context::COMPRESS_TOOL && run.inner.context.compression_tool_enabled {
        let input: Value = serde_json::from_str(&call.input).unwrap_or(Value::Null);
        let instructions = input
            .get("instructions")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned);
        return Verdict::Compress(instructions);
    }
    // A middleware's tool (see `Middleware::list_tools`) comes first.
    let (tool, input) = if let Some(tool) = run.tools.added(&call.name) {
        match run.tools.prepare_added(&call.name, &call.input) {
            Some(Ok(input)) => (Arc::clone(tool), input),
            Some(Err(problem)) => return Verdict::Fail(ToolResultState::Error, problem),
            None => return not_found(),
        }
    } else {
        let toolkit = &run.inner.toolkit;
        let input = match toolkit.prepare(&call.name, &call.input, &state.tool_context) {
            Ok(input) => input,
            Err(chunk) => return Verdict::Fail(ToolResultState::Error, chunk_text(&chunk)),
        };
        let Some(tool) = toolkit.tool(&call.name) else {
            return not_found();
        };
        (tool, input)
    };
    if tool.flags().external {
        return Verdict::External;
    }
    if call.state == ToolCallState::Allowed {
        return Verdict::Run(tool, input);
    }
    let decision = decide(&AsPolicy(tool.as_ref()), &input, &state.permission_context);
    let decision = run.inner.middlewares.iter().fold(decision, |d, m| {
        m.on_check_permission(call, &input, &state.permission_context, d)
    });
    match decision.behavior {
        PermissionBehavior::Allow | PermissionBehavior::Passthrough => Verdict::Run(tool, input),
        PermissionBehavior::Deny => {
            let reason = decision
                .decision_reason
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            Verdict::Fail(
                ToolResultState::Denied,
                format!(
                    "<system-reminder>{}{reason}</system-reminder>",
                    decision.message
                ),
            )
        }
        PermissionBehavior::Ask => {
            let covered = !decision.bypass_immune
                && asked_rules.iter().any(|r| {
                    r.tool_name == call.name
                        && (r.rule_content.is_none()
                            || tool.match_rule(r, &input, &state.permission_context))
                });
            if covered {
                Verdict::Defer
            } else {
                Verdict::Ask(
                    decision.suggested_rules.unwrap_or_default(),
                    decision.bypass_immune,
                )
            }
        }
    }
}

/// The `CompressContext` tool: compresses once the prompt is within the
/// buffer before the threshold. A failed summary changes nothing and is
/// reported to the model as an error result.
async fn compress_by_tool(
    run: &mut Run<'_>,
    state: &mut AgentState,
    instructions: Option<String>,
) -> Result<(ToolResultState, String), AgentError> {
    let mut config = Arc::clone(&run.inner.context);
    Arc::make_mut(&mut config).compression_fallback_to_truncation = false;
    let ratio = (config.trigger_ratio - config.context_buffer_ratio).max(0.0);
    let request = crate::context::CompressRequest {
        config,
        instructions,
        ratio,
    };
    Ok(match run.compress(state, request).await {
        Ok(o) if o.compressed => (
            ToolResultState::Success,
            format!(
                "The context was compressed: {} messages were summarised; the prompt went from \
                 about {} to {} tokens.",
                o.messages, o.tokens_before, o.tokens_after
            ),
        ),
        Ok(o) => (
            ToolResultState::Success,
            format!(
                "Nothing was compressed: the prompt holds about {} tokens, below the {} tokens \
                 from which compression helps.",
                o.tokens_before, o.threshold
            ),
        ),
        Err(AgentError::Context(e)) => (
            ToolResultState::Error,
            format!("The context could not be compressed and is unchanged: {e}"),
        ),
        Err(other) => return Err(other),
    })
}

/// Closes a call with a result made of one text.
async fn close_with(
    run: &mut Run<'_>,
    reply_id: &str,
    call: &ToolCallBlock,
    result_state: ToolResultState,
    text: &str,
) -> Result<(), AgentError> {
    let r = reply_id.to_owned();
    run.emit(ToolResultStartEvent::new(r.clone(), call.id.to_string(), call.name.clone()).into())
        .await?;
    run.emit(ToolResultTextDeltaEvent::new(r.clone(), call.id.to_string(), text.to_owned()).into())
        .await?;
    run.emit(ToolResultEndEvent::new(r, call.id.to_string(), result_state).into())
        .await
}

/// Runs a batch of allowed calls together, streaming their chunks as
/// result events; results are opened in call order.
async fn execute(
    run: &mut Run<'_>,
    session: &SessionState,
    batch: Vec<(ToolCallBlock, Arc<dyn Tool>, Value)>,
) -> Result<(), AgentError> {
    if batch.is_empty() {
        return Ok(());
    }
    let reply_id = run.reply_id();
    let mut streams = Vec::with_capacity(batch.len());
    let mut states = Vec::with_capacity(batch.len());
    for (index, (call, _, input)) in batch.into_iter().enumerate() {
        let start =
            ToolResultStartEvent::new(reply_id.clone(), call.id.to_string(), call.name.clone());
        run.emit(start.into()).await?;
        let ctx = run
            .inner
            .tool_context(run.cancel.child_token())
            .with_session(session.clone())
            .with_call_id(call.id.clone());
        let acting = ActingCall {
            call: call.clone(),
            input,
            ctx,
        };
        let chunks = ActingNext::new(&run.inner.middlewares, &run.inner.toolkit, &run.tools)
            .run(acting)
            .await;
        streams.push(chunks.map(move |chunk| (index, chunk)).boxed());
        states.push((call.id, ToolResultState::Running, false));
    }
    let mut merged = stream::select_all(streams);
    loop {
        let next = tokio::select! {
            biased;
            () = run.cancel.cancelled() => None,
            item = merged.next() => item,
        };
        let Some((index, chunk)) = next else { break };
        let (call_id, result_state, done) = &mut states[index];
        if *done {
            continue;
        }
        for event in chunk_events(&reply_id, call_id, &chunk) {
            run.emit(event).await?;
        }
        // An error, once seen, stays.
        if *result_state != ToolResultState::Error {
            *result_state = chunk.state;
        }
        if chunk.is_last {
            *done = true;
            let end_state = settle(*result_state);
            run.emit(
                ToolResultEndEvent::new(reply_id.clone(), call_id.to_string(), end_state).into(),
            )
            .await?;
            keep_metadata(run, call_id, &chunk);
        }
    }
    if run.cancel.is_cancelled() {
        // The interrupted ending closes the calls still running.
        return Ok(());
    }
    for (call_id, result_state, done) in states {
        if !done {
            let end = ToolResultEndEvent::new(
                reply_id.clone(),
                call_id.to_string(),
                settle(result_state),
            );
            run.emit(end.into()).await?;
        }
    }
    Ok(())
}

/// A stream that ended while "running" finished normally.
fn settle(state: ToolResultState) -> ToolResultState {
    match state {
        ToolResultState::Running => ToolResultState::Success,
        other => other,
    }
}

fn chunk_text(chunk: &ToolChunk) -> String {
    RichContent::Blocks(chunk.content.clone()).text("")
}

fn chunk_events(reply_id: &str, call_id: &str, chunk: &ToolChunk) -> Vec<AgentEvent> {
    output_events(
        reply_id,
        call_id,
        &RichContent::Blocks(chunk.content.clone()),
    )
}

/// Tool metadata (exit codes, paths) is not carried by events; it is kept
/// on the result block in the state.
fn keep_metadata(run: &mut Run<'_>, call_id: &str, chunk: &ToolChunk) {
    if chunk.metadata.is_empty() {
        return;
    }
    for block in run.reply().content.iter_mut().rev() {
        if let oxiscope_message::ContentBlock::ToolResult(r) = block
            && r.id == call_id
        {
            r.metadata.extend(chunk.metadata.clone());
            break;
        }
    }
}

impl crate::agent::Inner {
    /// The context of a tool call of this agent.
    pub(crate) fn tool_context(
        &self,
        cancel: tokio_util::sync::CancellationToken,
    ) -> ToolCallContext {
        let mut ctx =
            ToolCallContext::local(self.workdir.clone()).with_backend(Arc::clone(&self.backend));
        ctx.cancel = cancel;
        ctx
    }
}
