//! The `input` of `POST /chat/`: a message, messages, a confirmation, an
//! external result, or nothing; and reading it back from the inbox.

use oxiscope_agent::ReplyInput;
use oxiscope_message::{
    ContentBlock, DataSource, ExternalExecutionResultEvent, MediaBlock, Msg, RichContent,
    UserConfirmResultEvent,
};
use oxiscope_storage::SessionRecord;
use serde_json::Value;

use crate::Engine;
use crate::error::shape_error;
use crate::error::{SessionError, SessionResult};

/// What a chat run starts from.
#[derive(Debug, Clone)]
pub enum ChatInput {
    /// New messages.
    Msgs(Vec<Msg>),
    /// Answers to the parked confirmation.
    Confirm(UserConfirmResultEvent),
    /// Results for the parked external calls.
    External(ExternalExecutionResultEvent),
    /// Nothing: continue from the state.
    Continue,
}

impl ChatInput {
    /// The reply id a resume names.
    pub fn resume_reply_id(&self) -> Option<&str> {
        match self {
            Self::Confirm(e) => Some(&e.reply_id),
            Self::External(e) => Some(&e.reply_id),
            Self::Msgs(_) | Self::Continue => None,
        }
    }
}

impl ChatInput {
    /// The URLs the data blocks of its messages and tool results name.
    fn media_urls(&self) -> Vec<String> {
        fn of_output(output: &RichContent, urls: &mut Vec<String>) {
            if let RichContent::Blocks(blocks) = output {
                for block in blocks {
                    if let MediaBlock::Data(data) = block
                        && let DataSource::Url(src) = &data.source
                    {
                        urls.push(src.url.clone());
                    }
                }
            }
        }
        let mut urls = Vec::new();
        match self {
            Self::Msgs(msgs) => {
                for block in msgs.iter().flat_map(|m| &m.content) {
                    match block {
                        ContentBlock::Data(data) => {
                            if let DataSource::Url(src) = &data.source {
                                urls.push(src.url.clone());
                            }
                        }
                        ContentBlock::ToolResult(result) => of_output(&result.output, &mut urls),
                        _ => {}
                    }
                }
            }
            Self::External(event) => {
                for result in &event.execution_results {
                    of_output(&result.output, &mut urls);
                }
            }
            Self::Confirm(_) | Self::Continue => {}
        }
        urls
    }
}

/// Refuses input naming media the session's models may not read (a file
/// outside the session's workspace, a download when the operator turned
/// them off): kept, such a block would fail every later reply of the
/// session, so it is refused before anything is stored.
///
/// # Errors
/// 422 naming the first refused URL and the reason.
pub async fn check_media(
    state: &Engine,
    session: &SessionRecord,
    input: &ChatInput,
) -> SessionResult<()> {
    let urls = input.media_urls();
    if urls.is_empty() {
        return Ok(());
    }
    let policy = super::build::session_media_policy(state, session)?;
    let checked = urls.clone();
    let mut refused = tokio::task::spawn_blocking(move || {
        checked
            .into_iter()
            .find_map(|url| policy.check_url(&url).err().map(|why| (url, why)))
    })
    .await
    .map_err(|e| SessionError::Internal(format!("checking media: {e}")))?;
    // Downloads go to public addresses only: one at a private address
    // would fail at every later reply of the session.
    if refused.is_none() {
        for url in urls.iter().filter(|u| u.starts_with("http")) {
            if let Some(kind) = super::address::non_public(url).await {
                refused = Some((
                    url.clone(),
                    format!("it is at {kind}; media is downloaded from public addresses only"),
                ));
                break;
            }
        }
    }
    match refused {
        None => Ok(()),
        Some((url, why)) => Err(SessionError::Fields(vec![serde_json::json!({
            "type": "value_error",
            "loc": ["body", "input"],
            "msg": format!("cannot use media from {url}: {why}"),
            "input": url,
        })])),
    }
}

impl From<ChatInput> for ReplyInput {
    fn from(input: ChatInput) -> Self {
        match input {
            ChatInput::Msgs(m) => Self::Msgs(m),
            ChatInput::Confirm(e) => e.into(),
            ChatInput::External(e) => e.into(),
            ChatInput::Continue => Self::Continue,
        }
    }
}

/// Takes the session's oldest queued input that still parses; `None` when
/// the inbox is empty (inputs that no longer parse are dropped).
pub async fn next_queued(state: &Engine, session_id: &str) -> Option<ReplyInput> {
    loop {
        let raw = match state.bus().pop_inbox(session_id).await {
            Ok(Some(raw)) => raw,
            Ok(None) => return None,
            Err(e) => {
                tracing::error!(session_id, error = %e, "reading the inbox failed");
                return None;
            }
        };
        match crate::inbox::Queued::from_value(raw) {
            Ok(queued) => {
                tracing::debug!(session_id, origin = ?queued.origin, "serving a queued input");
                return Some(queued.input.into());
            }
            Err(e) => tracing::warn!(session_id, error = %e, "dropping a malformed queued input"),
        }
    }
}

/// Reads `input`; a 422 at `body.input` when it is none of the accepted
/// shapes, or a message breaks its role's rules.
pub fn parse_input(input: Option<Value>) -> SessionResult<ChatInput> {
    let Some(value) = input else {
        return Ok(ChatInput::Continue);
    };
    let loc = ["body", "input"];
    let parsed = match &value {
        Value::Null => return Ok(ChatInput::Continue),
        Value::Array(_) => serde_json::from_value::<Vec<Msg>>(value.clone()).map(ChatInput::Msgs),
        Value::Object(map) => match map.get("type").and_then(Value::as_str) {
            Some(UserConfirmResultEvent::TYPE) => {
                serde_json::from_value(value.clone()).map(ChatInput::Confirm)
            }
            Some(ExternalExecutionResultEvent::TYPE) => {
                serde_json::from_value(value.clone()).map(ChatInput::External)
            }
            Some(other) if map.get("role").is_none() => {
                return Err(SessionError::Fields(vec![serde_json::json!({
                    "type": "value_error",
                    "loc": loc,
                    "msg": format!("{other} is not an accepted input event"),
                    "input": value,
                })]));
            }
            _ => serde_json::from_value::<Msg>(value.clone()).map(|m| ChatInput::Msgs(vec![m])),
        },
        _ => {
            return Err(SessionError::Fields(vec![serde_json::json!({
                "type": "model_type",
                "loc": loc,
                "msg": "Input should be a message, a list of messages or an input event",
                "input": value,
            })]));
        }
    };
    let input = parsed.map_err(|e| shape_error(&loc, &e, &value))?;
    if let ChatInput::Msgs(msgs) = &input {
        for m in msgs {
            m.validate().map_err(|e| {
                SessionError::Fields(vec![serde_json::json!({
                    "type": "value_error",
                    "loc": loc,
                    "msg": e.to_string(),
                    "input": value,
                })])
            })?;
        }
    }
    Ok(input)
}
