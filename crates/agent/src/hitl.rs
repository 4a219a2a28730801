//! Resuming a parked reply: confirmations, external results, interrupts.

use oxiscope_message::{
    AgentEvent, ContentBlock, DataSource, ExternalExecutionResultEvent, Id, MediaBlock, Msg,
    RichContent, ToolResultDataDeltaEvent, ToolResultEndEvent, ToolResultStartEvent,
    ToolResultState, ToolResultTextDeltaEvent, UserConfirmResultEvent,
};

use crate::emit::Emitter;
use crate::error::AgentError;
use crate::state::{AgentState, pending_calls};

fn reply_mut(state: &mut AgentState) -> Result<&mut Msg, AgentError> {
    let index = state
        .reply_index()
        .ok_or_else(|| AgentError::Internal("the parked reply is not in the context".to_owned()))?;
    Ok(&mut state.context[index])
}

/// The text a denied call's result gives the model.
pub(crate) fn denied_text(tool: &str) -> String {
    format!("<system-reminder>The user did not allow this call of \"{tool}\".</system-reminder>")
}

/// Checks the user's answers against the parked reply.
///
/// # Errors
/// [`AgentError::InvalidInput`] when an answer names a call that is not
/// waiting for confirmation.
pub(crate) fn check_confirm(
    state: &AgentState,
    event: &UserConfirmResultEvent,
) -> Result<(), AgentError> {
    let asking: Vec<Id> = state
        .reply_msg()
        .map(|m| {
            pending_calls(m)
                .iter()
                .filter(|c| c.state == oxiscope_message::ToolCallState::Asking)
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(bad) = event
        .confirm_results
        .iter()
        .find(|r| !asking.contains(&r.tool_call.id))
    {
        return Err(AgentError::InvalidInput(format!(
            "tool call {:?} is not waiting for confirmation",
            bad.tool_call.id
        )));
    }
    Ok(())
}

/// Applies the user's answers (checked by [`check_confirm`]): accepted
/// rules join the permission context, confirmed calls become `allowed`
/// (with the user's edited input), denied calls get a `denied` result.
/// Calls without an answer stay asking.
///
/// # Errors
/// [`AgentError::Internal`] when the events do not fit the parked reply.
pub(crate) async fn apply_confirm(
    state: &mut AgentState,
    event: &UserConfirmResultEvent,
    em: &mut Emitter,
) -> Result<(), AgentError> {
    for answer in event.confirm_results.iter().filter(|r| r.confirmed) {
        for rule in answer.rules.iter().flatten() {
            state.permission_context.add_rule(rule.clone());
        }
    }
    let reply_id = event.reply_id.clone();
    let input = AgentEvent::UserConfirmResult(event.clone());
    crate::emit::apply_event(reply_mut(state)?, &input)
        .map_err(|e| AgentError::Internal(e.to_string()))?;
    for answer in event.confirm_results.iter().filter(|r| !r.confirmed) {
        let call = &answer.tool_call;
        let text = denied_text(&call.name);
        let events: [AgentEvent; 3] = [
            ToolResultStartEvent::new(reply_id.clone(), call.id.to_string(), call.name.clone())
                .into(),
            ToolResultTextDeltaEvent::new(reply_id.clone(), call.id.to_string(), text).into(),
            ToolResultEndEvent::new(
                reply_id.clone(),
                call.id.to_string(),
                ToolResultState::Denied,
            )
            .into(),
        ];
        for e in events {
            em.emit(reply_mut(state)?, e).await?;
        }
    }
    Ok(())
}

/// Checks external results against the parked reply.
///
/// # Errors
/// [`AgentError::InvalidInput`] when a result names a call that was not
/// handed out.
pub(crate) fn check_external(
    state: &AgentState,
    event: &ExternalExecutionResultEvent,
) -> Result<(), AgentError> {
    let submitted: Vec<Id> = state
        .reply_msg()
        .map(|m| {
            pending_calls(m)
                .iter()
                .filter(|c| c.state == oxiscope_message::ToolCallState::Submitted)
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(bad) = event
        .execution_results
        .iter()
        .find(|r| !submitted.contains(&r.id))
    {
        return Err(AgentError::InvalidInput(format!(
            "tool call {:?} is not waiting for an external result",
            bad.id
        )));
    }
    Ok(())
}

/// Applies external results (checked by [`check_external`]) to the calls
/// handed out: each result's output is streamed into the result block
/// opened when the reply parked.
///
/// # Errors
/// [`AgentError::Internal`] when the events do not fit the parked reply.
pub(crate) async fn apply_external(
    state: &mut AgentState,
    event: &ExternalExecutionResultEvent,
    em: &mut Emitter,
) -> Result<(), AgentError> {
    let reply_id = event.reply_id.clone();
    for result in &event.execution_results {
        let started = state
            .reply_msg()
            .is_some_and(|m| m.tool_results().any(|r| r.id == result.id));
        if !started {
            let start = ToolResultStartEvent::new(
                reply_id.clone(),
                result.id.to_string(),
                result.name.clone(),
            );
            em.emit(reply_mut(state)?, start.into()).await?;
        }
        for event in output_events(&reply_id, &result.id, &result.output) {
            em.emit(reply_mut(state)?, event).await?;
        }
        let state_of = match result.state {
            ToolResultState::Running => ToolResultState::Success,
            other => other,
        };
        let end = ToolResultEndEvent::new(reply_id.clone(), result.id.to_string(), state_of);
        em.emit(reply_mut(state)?, end.into()).await?;
    }
    Ok(())
}

/// The delta events that stream `output` into a result block.
pub(crate) fn output_events(
    reply_id: &str,
    call_id: &str,
    output: &RichContent,
) -> Vec<AgentEvent> {
    let text = |t: &str| -> AgentEvent {
        ToolResultTextDeltaEvent::new(reply_id.to_owned(), call_id.to_owned(), t.to_owned()).into()
    };
    match output {
        RichContent::Text(t) if t.is_empty() => Vec::new(),
        RichContent::Text(t) => vec![text(t)],
        RichContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                MediaBlock::Text(t) => text(&t.text),
                MediaBlock::Data(d) => {
                    let (media_type, data, url) = match &d.source {
                        DataSource::Base64(s) => (s.media_type.clone(), Some(s.data.clone()), None),
                        DataSource::Url(s) => (s.media_type.clone(), None, Some(s.url.clone())),
                    };
                    ToolResultDataDeltaEvent::new(
                        reply_id.to_owned(),
                        call_id.to_owned(),
                        d.id.to_string(),
                        media_type,
                        data,
                        url,
                    )
                    .into()
                }
            })
            .collect(),
    }
}

/// Whether a block is a finished result of call `id`.
#[allow(dead_code)]
pub(crate) fn has_result(msg: &Msg, id: &str) -> bool {
    msg.content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolResult(r) if r.id == id && r.finished_at.is_some()))
}
