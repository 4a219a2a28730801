//! The A2A 1.0 JSON shapes this client reads and writes (the protocol's
//! protobuf messages in their JSON mapping: camelCase fields, enum names such
//! as `TASK_STATE_COMPLETED`, bytes as base64, default values omitted).
//!
//! Parsing is lenient where the protocol allows: unknown fields are ignored,
//! missing fields take their default, and the A2A 0.3 spellings of task
//! states (`input-required`) are read too.

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The state of a remote task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// No state given.
    Unspecified,
    /// Accepted, not started.
    Submitted,
    /// Running.
    Working,
    /// Finished.
    Completed,
    /// Failed.
    Failed,
    /// Cancelled.
    Canceled,
    /// Waiting for the user's input.
    InputRequired,
    /// Refused by the agent.
    Rejected,
    /// Waiting for authorisation.
    AuthRequired,
    /// A state this client does not know.
    Unknown,
}

impl TaskState {
    const NAMES: [(Self, &'static str, &'static str); 9] = [
        (Self::Unspecified, "TASK_STATE_UNSPECIFIED", "unknown"),
        (Self::Submitted, "TASK_STATE_SUBMITTED", "submitted"),
        (Self::Working, "TASK_STATE_WORKING", "working"),
        (Self::Completed, "TASK_STATE_COMPLETED", "completed"),
        (Self::Failed, "TASK_STATE_FAILED", "failed"),
        (Self::Canceled, "TASK_STATE_CANCELED", "canceled"),
        (
            Self::InputRequired,
            "TASK_STATE_INPUT_REQUIRED",
            "input-required",
        ),
        (Self::Rejected, "TASK_STATE_REJECTED", "rejected"),
        (
            Self::AuthRequired,
            "TASK_STATE_AUTH_REQUIRED",
            "auth-required",
        ),
    ];

    /// The protocol's name, e.g. `TASK_STATE_COMPLETED`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(s, _, _)| *s == self)
            .map_or("TASK_STATE_UNKNOWN", |(_, name, _)| name)
    }

    /// Reads a protocol name (1.0 or 0.3 spelling); anything else is
    /// [`TaskState::Unknown`].
    #[must_use]
    pub fn parse(name: &str) -> Self {
        Self::NAMES
            .iter()
            .find(|(_, v1, v03)| *v1 == name || *v03 == name)
            .map_or(Self::Unknown, |(s, _, _)| *s)
    }

    /// Whether the task is over (completed, failed, cancelled, rejected).
    #[must_use]
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Whether the remote agent waits for the user (input or auth required).
    #[must_use]
    pub fn awaits_user(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = Self::NAMES
            .iter()
            .find(|(s, _, _)| s == self)
            .map_or("unknown", |(_, _, short)| short);
        f.write_str(short)
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => Self::parse(&s),
            Value::Number(n) => match n.as_u64() {
                Some(i) => usize::try_from(i)
                    .ok()
                    .and_then(|i| Self::NAMES.get(i))
                    .map_or(Self::Unknown, |(s, _, _)| *s),
                None => Self::Unknown,
            },
            Value::Null => Self::Unspecified,
            _ => Self::Unknown,
        })
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A piece of content: exactly one of `text`, `raw` (base64), `url`, `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Part {
    /// Text content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Inline bytes, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A URL to the content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured JSON content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// The part's metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// A file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

/// What a [`Part`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartContent<'a> {
    /// Text.
    Text(&'a str),
    /// Base64 bytes.
    Raw(&'a str),
    /// A URL.
    Url(&'a str),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// The part's content.
    ///
    /// # Errors
    /// [`Error::UnsupportedPart`] for a data part, an empty part, or a part
    /// that holds more than one content.
    pub fn content(&self) -> Result<PartContent<'_>> {
        let set = [
            self.text.is_some(),
            self.raw.is_some(),
            self.url.is_some(),
            self.data.is_some(),
        ];
        let kind = |k: &str| Error::UnsupportedPart { kind: k.to_owned() };
        match set.iter().filter(|b| **b).count() {
            0 => return Err(kind("an empty part")),
            1 => {}
            _ => return Err(kind("a part with several contents")),
        }
        if let Some(t) = &self.text {
            Ok(PartContent::Text(t))
        } else if let Some(r) = &self.raw {
            Ok(PartContent::Raw(r))
        } else if let Some(u) = &self.url {
            Ok(PartContent::Url(u))
        } else {
            Err(kind("a structured data part"))
        }
    }
}

/// A message between the user and the remote agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Message {
    /// The message id.
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    /// The task it belongs to.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// `ROLE_USER` or `ROLE_AGENT`.
    pub role: String,
    /// The content.
    pub parts: Vec<Part>,
    /// The message's metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// An output of a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Artifact {
    /// The artifact id.
    pub artifact_id: String,
    /// A name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The content.
    pub parts: Vec<Part>,
}

/// The status of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    #[serde(default = "unspecified")]
    pub state: TaskState,
    /// A message from the agent about the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

fn unspecified() -> TaskState {
    TaskState::Unspecified
}

impl Default for TaskStatus {
    fn default() -> Self {
        Self {
            state: TaskState::Unspecified,
            message: None,
        }
    }
}

/// A unit of work on the remote side (its history is not read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Task {
    /// The task id.
    pub id: String,
    /// The conversation.
    pub context_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// The outputs so far.
    pub artifacts: Vec<Artifact>,
}

/// A task's status changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StatusUpdate {
    /// The task.
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
}

/// A chunk of an artifact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ArtifactUpdate {
    /// The task.
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The chunk.
    pub artifact: Artifact,
    /// Whether the parts extend what the artifact already holds.
    #[serde(skip_serializing_if = "is_false")]
    pub append: bool,
    /// Whether this is the artifact's last chunk.
    #[serde(skip_serializing_if = "is_false")]
    pub last_chunk: bool,
}

/// One response of the remote agent: a streamed event, or the whole answer
/// of a non-streaming send.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Payload {
    /// A task snapshot.
    Task(Task),
    /// A direct answer.
    Message(Message),
    /// A status change.
    StatusUpdate(StatusUpdate),
    /// An artifact chunk.
    ArtifactUpdate(ArtifactUpdate),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPayload {
    #[serde(default)]
    task: Option<Task>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    status_update: Option<StatusUpdate>,
    #[serde(default)]
    artifact_update: Option<ArtifactUpdate>,
}

impl Payload {
    /// Reads a `StreamResponse` / `SendMessageResponse` result object.
    ///
    /// # Errors
    /// [`Error::Protocol`] unless it holds exactly one payload.
    pub fn from_value(value: Value) -> Result<Self> {
        let raw: RawPayload = serde_json::from_value(value)
            .map_err(|e| Error::Protocol(format!("bad response payload: {e}")))?;
        let mut found = Vec::with_capacity(1);
        found.extend(raw.task.map(Self::Task));
        found.extend(raw.message.map(Self::Message));
        found.extend(raw.status_update.map(Self::StatusUpdate));
        found.extend(raw.artifact_update.map(Self::ArtifactUpdate));
        match (found.pop(), found.is_empty()) {
            (Some(p), true) => Ok(p),
            (Some(_), false) => Err(Error::Protocol(
                "a response holds more than one payload".to_owned(),
            )),
            (None, _) => Err(Error::Protocol(
                "a response holds no task, message, status or artifact update".to_owned(),
            )),
        }
    }
}
