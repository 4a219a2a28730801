//! A2A responses to agent events: parts become text / data blocks, the
//! payload decides which task the content belongs to and how the reply
//! ends.
//!
//! - `Message`: its parts become content; a direct answer, so the task id
//!   is cleared.
//! - `TaskArtifactUpdateEvent`: the artifact's parts become content; with
//!   `append` the first text part flows into the artifact's open text block,
//!   `lastChunk` closes it.
//! - `TaskStatusUpdateEvent`: the status message's parts become content; the
//!   state decides the finished reason and whether the task id is kept.
//! - `Task`: a snapshot: every artifact not yet streamed in this reply, then
//!   the status message (unless already shown).
//!
//! Consecutive text parts of one payload flow into one block. Every
//! block-end event carries `metadata["a2a"]`: the `task_id`, `artifact_id`
//! and `message_id` the block came from (those that apply).

use std::collections::HashSet;

use oxiscope_message::{
    AgentEvent, DataBlockDeltaEvent, DataBlockEndEvent, DataBlockStartEvent, TextBlockDeltaEvent,
    TextBlockEndEvent, TextBlockStartEvent, normalize_url, stamp,
};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::wire::{Artifact, Message, Part, PartContent, Payload, TaskState, TaskStatus};

/// The media type of a data part that names none.
const DEFAULT_MEDIA_TYPE: &str = "application/octet-stream";

/// The remote identifiers a reply learned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ids {
    pub(crate) context_id: Option<String>,
    pub(crate) task_id: Option<String>,
    pub(crate) task_state: Option<TaskState>,
}

/// What the last payload said about the end of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// No payload yet.
    Nothing,
    /// A direct message answered.
    Message,
    /// A task is in this state.
    Status(TaskState),
}

/// An open text block.
#[derive(Debug)]
struct Open {
    block_id: String,
    artifact_id: Option<String>,
    origin: Map<String, Value>,
}

/// Turns the payloads of one reply into events.
#[derive(Debug)]
pub(crate) struct Translator {
    reply_id: String,
    open: Vec<Open>,
    seen_artifacts: HashSet<String>,
    shown_messages: HashSet<String>,
    ids: Ids,
    ending: Ending,
    status_text: Option<String>,
}

/// `{"a2a": {...}}` with the non-empty identifiers.
fn origin(
    task_id: &str,
    artifact_id: Option<&str>,
    message_id: Option<&str>,
) -> Map<String, Value> {
    let mut a2a = Map::new();
    for (key, value) in [
        ("task_id", Some(task_id)),
        ("artifact_id", artifact_id),
        ("message_id", message_id),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            a2a.insert(key.to_owned(), Value::String(v.to_owned()));
        }
    }
    let mut meta = Map::new();
    meta.insert("a2a".to_owned(), Value::Object(a2a));
    meta
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

impl Translator {
    pub(crate) fn new(reply_id: impl Into<String>, ids: Ids) -> Self {
        Self {
            reply_id: reply_id.into(),
            open: Vec::new(),
            seen_artifacts: HashSet::new(),
            shown_messages: HashSet::new(),
            ids,
            ending: Ending::Nothing,
            status_text: None,
        }
    }

    /// Replaces the identifiers (the state changed outside the stream).
    pub(crate) fn set_ids(&mut self, ids: Ids) {
        self.ids = ids;
    }

    /// The identifiers as of the last payload.
    pub(crate) fn ids(&self) -> &Ids {
        &self.ids
    }

    /// What the last payload said about the end of the reply.
    pub(crate) fn ending(&self) -> Ending {
        self.ending
    }

    /// The text of the last status message, if any.
    pub(crate) fn status_text(&self) -> Option<&str> {
        self.status_text.as_deref()
    }

    /// Translates one payload, appending its events to `out`.
    ///
    /// # Errors
    /// [`Error::UnsupportedPart`] for a part that is not text, raw bytes or
    /// a URL; [`Error::Protocol`] for an invalid URL part. Blocks opened
    /// before the error stay open until [`Translator::finish`].
    pub(crate) fn apply(&mut self, payload: Payload, out: &mut Vec<AgentEvent>) -> Result<()> {
        match payload {
            Payload::Message(m) => {
                self.learn_context(&m.context_id);
                self.ids.task_id = None;
                self.ids.task_state = None;
                self.ending = Ending::Message;
                self.message(&m, out)?;
            }
            Payload::StatusUpdate(u) => {
                self.learn(&u.context_id, &u.task_id, Some(u.status.state));
                self.ending = Ending::Status(u.status.state);
                self.status(&u.status, out)?;
            }
            Payload::ArtifactUpdate(u) => {
                self.learn(&u.context_id, &u.task_id, None);
                self.artifact(&u.artifact, u.append, u.last_chunk, out)?;
            }
            Payload::Task(t) => {
                self.learn(&t.context_id, &t.id, Some(t.status.state));
                self.ending = Ending::Status(t.status.state);
                for a in &t.artifacts {
                    if !self.seen_artifacts.contains(&a.artifact_id) {
                        self.artifact(a, false, true, out)?;
                    }
                }
                self.status(&t.status, out)?;
            }
        }
        Ok(())
    }

    /// Closes every open block.
    pub(crate) fn finish(&mut self, out: &mut Vec<AgentEvent>) {
        for open in std::mem::take(&mut self.open) {
            out.push(self.end_text(open));
        }
    }

    fn learn_context(&mut self, context_id: &str) {
        if let Some(c) = non_empty(context_id) {
            self.ids.context_id = Some(c);
        }
    }

    fn learn(&mut self, context_id: &str, task_id: &str, state: Option<TaskState>) {
        self.learn_context(context_id);
        if let Some(t) = non_empty(task_id) {
            self.ids.task_id = Some(t);
        }
        if let Some(s) = state {
            self.ids.task_state = Some(s);
        }
    }

    fn task_id(&self) -> &str {
        self.ids.task_id.as_deref().unwrap_or_default()
    }

    fn message(&mut self, m: &Message, out: &mut Vec<AgentEvent>) -> Result<()> {
        self.shown_messages.insert(m.message_id.clone());
        let meta = origin(&m.task_id, None, Some(&m.message_id));
        self.parts(&m.parts, &meta, None, out)
    }

    fn status(&mut self, status: &TaskStatus, out: &mut Vec<AgentEvent>) -> Result<()> {
        let Some(m) = &status.message else {
            return Ok(());
        };
        if !m.message_id.is_empty() && self.shown_messages.contains(&m.message_id) {
            return Ok(());
        }
        let text: Vec<&str> = m.parts.iter().filter_map(|p| p.text.as_deref()).collect();
        self.status_text = Some(text.join("\n"));
        self.shown_messages.insert(m.message_id.clone());
        let meta = origin(self.task_id(), None, Some(&m.message_id));
        self.parts(&m.parts, &meta, None, out)
    }

    fn artifact(
        &mut self,
        a: &Artifact,
        append: bool,
        last_chunk: bool,
        out: &mut Vec<AgentEvent>,
    ) -> Result<()> {
        self.seen_artifacts.insert(a.artifact_id.clone());
        if !append {
            self.close_artifact(&a.artifact_id, out);
        }
        let meta = origin(self.task_id(), Some(&a.artifact_id), None);
        self.parts(&a.parts, &meta, Some(&a.artifact_id), out)?;
        if last_chunk {
            self.close_artifact(&a.artifact_id, out);
        }
        Ok(())
    }

    /// Emits `parts`. Text flows into the artifact's open text block (or,
    /// outside artifacts, into one block per run of text parts).
    fn parts(
        &mut self,
        parts: &[Part],
        meta: &Map<String, Value>,
        artifact_id: Option<&str>,
        out: &mut Vec<AgentEvent>,
    ) -> Result<()> {
        let mut current = artifact_id.and_then(|id| {
            self.open
                .iter()
                .find(|o| o.artifact_id.as_deref() == Some(id))
                .map(|o| o.block_id.clone())
        });
        for part in parts {
            match part.content()? {
                PartContent::Text(text) => {
                    let block_id = match current.take() {
                        Some(id) => id,
                        None => self.start_text(artifact_id, meta, out),
                    };
                    if !text.is_empty() {
                        out.push(
                            TextBlockDeltaEvent::new(
                                self.reply_id.clone(),
                                block_id.clone(),
                                text.to_owned(),
                            )
                            .into(),
                        );
                    }
                    current = Some(block_id);
                }
                PartContent::Raw(data) => {
                    self.close_block(current.take(), out);
                    self.data(part, Some(data.to_owned()), None, meta, out);
                }
                PartContent::Url(url) => {
                    let url = normalize_url(url)
                        .map_err(|e| Error::Protocol(format!("bad URL part: {e}")))?;
                    self.close_block(current.take(), out);
                    self.data(part, None, Some(url), meta, out);
                }
            }
        }
        if artifact_id.is_none() {
            self.close_block(current, out);
        }
        Ok(())
    }

    fn start_text(
        &mut self,
        artifact_id: Option<&str>,
        meta: &Map<String, Value>,
        out: &mut Vec<AgentEvent>,
    ) -> String {
        let block_id = stamp::new_id();
        out.push(TextBlockStartEvent::new(self.reply_id.clone(), block_id.clone()).into());
        self.open.push(Open {
            block_id: block_id.clone(),
            artifact_id: artifact_id.map(str::to_owned),
            origin: meta.clone(),
        });
        block_id
    }

    fn data(
        &self,
        part: &Part,
        data: Option<String>,
        url: Option<String>,
        meta: &Map<String, Value>,
        out: &mut Vec<AgentEvent>,
    ) {
        let media_type = part
            .media_type
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| DEFAULT_MEDIA_TYPE.to_owned());
        let block_id = stamp::new_id();
        let name = part.filename.clone().filter(|n| !n.is_empty());
        out.push(
            DataBlockStartEvent::new(
                self.reply_id.clone(),
                block_id.clone(),
                media_type.clone(),
                name,
            )
            .into(),
        );
        out.push(
            DataBlockDeltaEvent::new(
                self.reply_id.clone(),
                block_id.clone(),
                media_type,
                data,
                url,
            )
            .into(),
        );
        let mut end = DataBlockEndEvent::new(self.reply_id.clone(), block_id);
        end.metadata = meta.clone();
        out.push(end.into());
    }

    fn close_block(&mut self, block_id: Option<String>, out: &mut Vec<AgentEvent>) {
        let Some(id) = block_id else { return };
        if let Some(at) = self.open.iter().position(|o| o.block_id == id) {
            let open = self.open.remove(at);
            out.push(self.end_text(open));
        }
    }

    fn close_artifact(&mut self, artifact_id: &str, out: &mut Vec<AgentEvent>) {
        let (closing, keep): (Vec<Open>, Vec<Open>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|o| o.artifact_id.as_deref() == Some(artifact_id));
        self.open = keep;
        for open in closing {
            out.push(self.end_text(open));
        }
    }

    fn end_text(&self, open: Open) -> AgentEvent {
        let mut end = TextBlockEndEvent::new(self.reply_id.clone(), open.block_id, None);
        end.metadata = open.origin;
        end.into()
    }
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
