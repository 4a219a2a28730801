//! Agent events: what a reply streams, and the input events that resume it.
//!
//! Each event serialises as AgentScope's: `id`, `created_at`, `metadata`,
//! then the `type` tag (UPPER_SNAKE_CASE), then its own fields, every field
//! present. Parsing fills a missing id / time / metadata, ignores unknown
//! fields, rejects an unknown or lowercase tag, and rejects a data delta that
//! carries both or neither of `data` and `url`.

use serde::de::{self, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::block::{MediaBlock, RichContent, ToolCallBlock, ToolResultBlock, ToolResultState};
use crate::id::Id;
use crate::msg::Role;
use crate::permission::PermissionRule;
use crate::reply::{ErrorInfo, FinishedReason, ReplyFinishedReason};
use crate::stamp::{self, Stamp};

/// The user's answer for one tool call that asked for confirmation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfirmResult {
    /// Whether the call may run.
    pub confirmed: bool,
    /// The call; its `input` may have been edited by the user.
    pub tool_call: ToolCallBlock,
    /// Rules the user accepted; they join the permission context.
    #[serde(default)]
    pub rules: Option<Vec<PermissionRule>>,
}

macro_rules! events {
    ($(
        $(#[$doc:meta])*
        $variant:ident($name:ident) = $tag:literal {
            $( $(#[$fattr:meta])* $field:ident : $fty:ty ),* $(,)?
        }
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Deserialize)]
            pub struct $name {
                /// The event id.
                #[serde(default = "Id::random")]
                pub id: Id,
                /// When the event was emitted.
                #[serde(default = "Stamp::now")]
                pub created_at: Stamp,
                /// Free-form metadata.
                #[serde(default)]
                pub metadata: Map<String, Value>,
                $( $(#[$fattr])* pub $field: $fty, )*
            }

            impl $name {
                /// The wire tag of this event.
                pub const TYPE: &'static str = $tag;

                /// The event with a fresh id, emitted now, without metadata.
                #[allow(clippy::too_many_arguments)]
                pub fn new($($field: $fty),*) -> Self {
                    Self {
                        id: Id::random(),
                        created_at: Stamp::now(),
                        metadata: Map::new(),
                        $($field,)*
                    }
                }
            }

            impl Serialize for $name {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    let fields = [$(stringify!($field)),*];
                    let mut st = s.serialize_struct(stringify!($name), 4 + fields.len())?;
                    st.serialize_field("id", &self.id)?;
                    st.serialize_field("created_at", &self.created_at)?;
                    st.serialize_field("metadata", &self.metadata)?;
                    st.serialize_field("type", $tag)?;
                    $( st.serialize_field(stringify!($field), &self.$field)?; )*
                    st.end()
                }
            }

            impl From<$name> for AgentEvent {
                fn from(e: $name) -> Self {
                    Self::$variant(e)
                }
            }
        )*

        /// Every event a reply streams, and the input events that resume a
        /// paused reply (`USER_CONFIRM_RESULT`, `EXTERNAL_EXECUTION_RESULT`,
        /// `USER_INTERRUPT`).
        #[derive(Debug, Clone, PartialEq)]
        pub enum AgentEvent {
            $( $(#[$doc])* $variant($name), )*
        }

        /// The `type` tag of an event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum EventType {
            $( $(#[$doc])* #[serde(rename = $tag)] $variant, )*
        }

        impl EventType {
            /// Every event type, in AgentScope's order.
            pub const ALL: &'static [EventType] = &[$(EventType::$variant),*];

            /// The wire tag, e.g. `TEXT_BLOCK_DELTA`.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $tag, )*
                }
            }
        }

        #[derive(Deserialize)]
        #[serde(tag = "type")]
        enum RawEvent {
            $( #[serde(rename = $tag)] $variant($name), )*
        }

        impl Serialize for AgentEvent {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Self::$variant(e) => e.serialize(s), )*
                }
            }
        }

        impl<'de> Deserialize<'de> for AgentEvent {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let event = match RawEvent::deserialize(d)? {
                    $( RawEvent::$variant(e) => Self::$variant(e), )*
                };
                event.validate().map_err(de::Error::custom)?;
                Ok(event)
            }
        }

        impl AgentEvent {
            /// The event's type tag.
            #[must_use]
            pub fn event_type(&self) -> EventType {
                match self {
                    $( Self::$variant(_) => EventType::$variant, )*
                }
            }

            /// The event id.
            #[must_use]
            pub fn id(&self) -> &str {
                match self {
                    $( Self::$variant(e) => &e.id, )*
                }
            }

            /// When the event was emitted.
            #[must_use]
            pub fn created_at(&self) -> &Stamp {
                match self {
                    $( Self::$variant(e) => &e.created_at, )*
                }
            }

            /// The event's metadata.
            #[must_use]
            pub fn metadata(&self) -> &Map<String, Value> {
                match self {
                    $( Self::$variant(e) => &e.metadata, )*
                }
            }
        }
    };
}

events! {
    /// A reply began.
    ReplyStart(ReplyStartEvent) = "REPLY_START" {
        /// The session the reply belongs to.
        session_id: String,
        /// The reply id (the id of the reply message).
        reply_id: String,
        /// The agent's name.
        name: String,
        /// The role of the reply message.
        #[serde(default = "assistant_role")]
        role: Role,
    }
    /// A reply ended; exactly one per reply.
    ReplyEnd(ReplyEndEvent) = "REPLY_END" {
        /// The session the reply belongs to.
        session_id: String,
        /// The reply id.
        reply_id: String,
        /// Why the reply ended.
        #[serde(default)]
        finished_reason: ReplyFinishedReason,
        /// What went wrong, for an error ending.
        #[serde(default)]
        error: Option<ErrorInfo>,
    }
    /// A model call began.
    ModelCallStart(ModelCallStartEvent) = "MODEL_CALL_START" {
        /// The reply id.
        reply_id: String,
        /// The model called.
        model_name: String,
    }
    /// A model call ended, with its token usage.
    ModelCallEnd(ModelCallEndEvent) = "MODEL_CALL_END" {
        /// The reply id.
        reply_id: String,
        /// Prompt tokens.
        input_tokens: u64,
        /// Completion tokens.
        output_tokens: u64,
        /// Prompt tokens read from the provider's cache.
        #[serde(default)]
        cache_input_tokens: u64,
        /// Prompt tokens written to the provider's cache.
        #[serde(default)]
        cache_creation_input_tokens: u64,
        /// Whether the call completed or was interrupted.
        #[serde(default)]
        finished_reason: FinishedReason,
    }
    /// A text block opened.
    TextBlockStart(TextBlockStartEvent) = "TEXT_BLOCK_START" {
        /// The reply id.
        reply_id: String,
        /// The new block's id.
        block_id: String,
    }
    /// Text was appended to a text block.
    TextBlockDelta(TextBlockDeltaEvent) = "TEXT_BLOCK_DELTA" {
        /// The reply id.
        reply_id: String,
        /// The block id.
        block_id: String,
        /// The appended text.
        delta: String,
    }
    /// A text block closed; `text`, when set, replaces what streamed (e.g.
    /// the part a voice interface actually spoke before an interruption).
    TextBlockEnd(TextBlockEndEvent) = "TEXT_BLOCK_END" {
        /// The reply id.
        reply_id: String,
        /// The block id.
        block_id: String,
        /// The block's final text, when it differs from the deltas.
        #[serde(default)]
        text: Option<String>,
    }
    /// A data block (audio, image, ...) opened.
    DataBlockStart(DataBlockStartEvent) = "DATA_BLOCK_START" {
        /// The reply id.
        reply_id: String,
        /// The new block's id.
        block_id: String,
        /// The MIME type.
        media_type: String,
        /// An optional file name.
        #[serde(default)]
        name: Option<String>,
    }
    /// Data was appended to a data block: base64 `data`, or a `url`.
    DataBlockDelta(DataBlockDeltaEvent) = "DATA_BLOCK_DELTA" {
        /// The reply id.
        reply_id: String,
        /// The block id.
        block_id: String,
        /// The MIME type.
        media_type: String,
        /// A base64 chunk (exclusive with `url`).
        #[serde(default)]
        data: Option<String>,
        /// A URL (exclusive with `data`).
        #[serde(default)]
        url: Option<String>,
    }
    /// A data block closed.
    DataBlockEnd(DataBlockEndEvent) = "DATA_BLOCK_END" {
        /// The reply id.
        reply_id: String,
        /// The block id.
        block_id: String,
    }
    /// A thinking block opened.
    ThinkingBlockStart(ThinkingBlockStartEvent) = "THINKING_BLOCK_START" {
        /// The reply id.
        reply_id: String,
        /// The new block's id.
        block_id: String,
    }
    /// Reasoning text was appended to a thinking block.
    ThinkingBlockDelta(ThinkingBlockDeltaEvent) = "THINKING_BLOCK_DELTA" {
        /// The reply id.
        reply_id: String,
        /// The block id.
        block_id: String,
        /// The appended text.
        delta: String,
    }
    /// A thinking block closed.
    ThinkingBlockEnd(ThinkingBlockEndEvent) = "THINKING_BLOCK_END" {
        /// The reply id.
        reply_id: String,
        /// The block id.
        block_id: String,
    }
    /// A hint was injected into the context.
    HintBlock(HintBlockEvent) = "HINT_BLOCK" {
        /// The reply id.
        reply_id: String,
        /// The hint block's id.
        block_id: String,
        /// Who sent it.
        #[serde(default)]
        source: Option<String>,
        /// The hint payload.
        hint: RichContent,
    }
    /// A tool call opened.
    ToolCallStart(ToolCallStartEvent) = "TOOL_CALL_START" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
        /// The tool name.
        tool_call_name: String,
    }
    /// A fragment of a tool call's JSON arguments.
    ToolCallDelta(ToolCallDeltaEvent) = "TOOL_CALL_DELTA" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
        /// The appended fragment.
        delta: String,
    }
    /// A tool call's arguments are complete.
    ToolCallEnd(ToolCallEndEvent) = "TOOL_CALL_END" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
    }
    /// A tool result opened (the tool started running).
    ToolResultStart(ToolResultStartEvent) = "TOOL_RESULT_START" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
        /// The tool name.
        tool_call_name: String,
    }
    /// Text output of a running tool.
    ToolResultTextDelta(ToolResultTextDeltaEvent) = "TOOL_RESULT_TEXT_DELTA" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
        /// The appended text.
        delta: String,
    }
    /// Binary output of a running tool: base64 `data`, or a `url`.
    ToolResultDataDelta(ToolResultDataDeltaEvent) = "TOOL_RESULT_DATA_DELTA" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
        /// The id of the data block in the output.
        #[serde(default = "stamp::new_id")]
        block_id: String,
        /// The MIME type.
        media_type: String,
        /// A base64 chunk (exclusive with `url`).
        #[serde(default)]
        data: Option<String>,
        /// A URL (exclusive with `data`).
        #[serde(default)]
        url: Option<String>,
    }
    /// A tool result is complete.
    ToolResultEnd(ToolResultEndEvent) = "TOOL_RESULT_END" {
        /// The reply id.
        reply_id: String,
        /// The call id.
        tool_call_id: String,
        /// How the call ended.
        state: ToolResultState,
    }
    /// Deprecated: the reply hit `max_iters` (the reply end says so too).
    ExceedMaxIters(ExceedMaxItersEvent) = "EXCEED_MAX_ITERS" {
        /// The reply id.
        reply_id: String,
        /// The agent's name.
        name: String,
    }
    /// The reply paused: these tool calls need the user's confirmation.
    RequireUserConfirm(RequireUserConfirmEvent) = "REQUIRE_USER_CONFIRM" {
        /// The reply id.
        reply_id: String,
        /// The calls, with their suggested rules.
        tool_calls: Vec<ToolCallBlock>,
    }
    /// The reply paused: these tool calls run outside the agent.
    RequireExternalExecution(RequireExternalExecutionEvent) = "REQUIRE_EXTERNAL_EXECUTION" {
        /// The reply id.
        reply_id: String,
        /// The calls to execute.
        tool_calls: Vec<ToolCallBlock>,
    }
    /// Input: the user's answers to a confirmation request.
    UserConfirmResult(UserConfirmResultEvent) = "USER_CONFIRM_RESULT" {
        /// The reply id of the paused reply.
        reply_id: String,
        /// One answer per asked call (possibly only some of them).
        confirm_results: Vec<ConfirmResult>,
    }
    /// Input: the user interrupts the reply.
    UserInterrupt(UserInterruptEvent) = "USER_INTERRUPT" {
        /// The reply id.
        reply_id: String,
    }
    /// Input: results of externally executed tool calls.
    ExternalExecutionResult(ExternalExecutionResultEvent) = "EXTERNAL_EXECUTION_RESULT" {
        /// The reply id of the paused reply.
        reply_id: String,
        /// The results.
        execution_results: Vec<ToolResultBlock>,
    }
    /// An application-defined signal (task progress, team changes, ...).
    Custom(CustomEvent) = "CUSTOM" {
        /// The signal name.
        name: String,
        /// Its payload.
        #[serde(default)]
        value: Map<String, Value>,
    }
}

fn assistant_role() -> Role {
    Role::Assistant
}

fn check_data_or_url(data: Option<&String>, url: Option<&String>) -> Result<(), &'static str> {
    match (data, url) {
        (Some(_), None) | (None, Some(_)) => Ok(()),
        (Some(_), Some(_)) => Err("a data delta carries either `data` or `url`, not both"),
        (None, None) => Err("a data delta needs `data` or `url`"),
    }
}

impl AgentEvent {
    /// How the reply ends, when this event ends its stream: `REPLY_END`,
    /// or the `REQUIRE_*` event a parked reply stops on; `None` for every
    /// other event.
    #[must_use]
    pub fn reply_outcome(&self) -> Option<crate::ReplyOutcome> {
        use crate::ReplyOutcome;
        match self {
            Self::ReplyEnd(end) => Some(ReplyOutcome::Finished(end.finished_reason)),
            Self::RequireUserConfirm(_) => Some(ReplyOutcome::AwaitingConfirmation),
            Self::RequireExternalExecution(_) => Some(ReplyOutcome::AwaitingExternal),
            _ => None,
        }
    }

    /// The event as the ending of its reply stream, with what it carries
    /// (`REPLY_END`, or the `REQUIRE_*` event a parked reply stops on);
    /// `None` for every other event. Its [`ReplyEnding::outcome`] is
    /// [`AgentEvent::reply_outcome`].
    #[must_use]
    pub fn into_ending(self) -> Option<crate::ReplyEnding> {
        use crate::ReplyEnding;
        match self {
            Self::ReplyEnd(end) => Some(ReplyEnding::Finished(end)),
            Self::RequireUserConfirm(event) => Some(ReplyEnding::Confirm(event)),
            Self::RequireExternalExecution(event) => Some(ReplyEnding::External(event)),
            _ => None,
        }
    }

    /// The reply this event belongs to (`None` for [`CustomEvent`]).
    #[must_use]
    pub fn reply_id(&self) -> Option<&str> {
        macro_rules! with_reply_id {
            ($($v:ident),*) => {
                match self {
                    $( Self::$v(e) => Some(&e.reply_id), )*
                    Self::Custom(_) => None,
                }
            };
        }
        with_reply_id!(
            ReplyStart,
            ReplyEnd,
            ModelCallStart,
            ModelCallEnd,
            TextBlockStart,
            TextBlockDelta,
            TextBlockEnd,
            DataBlockStart,
            DataBlockDelta,
            DataBlockEnd,
            ThinkingBlockStart,
            ThinkingBlockDelta,
            ThinkingBlockEnd,
            HintBlock,
            ToolCallStart,
            ToolCallDelta,
            ToolCallEnd,
            ToolResultStart,
            ToolResultTextDelta,
            ToolResultDataDelta,
            ToolResultEnd,
            ExceedMaxIters,
            RequireUserConfirm,
            RequireExternalExecution,
            UserConfirmResult,
            UserInterrupt,
            ExternalExecutionResult
        )
    }

    /// Checks the rules serde alone cannot express (data / url exclusivity).
    ///
    /// # Errors
    /// A message saying what is wrong.
    pub fn validate(&self) -> Result<(), &'static str> {
        match self {
            Self::DataBlockDelta(e) => check_data_or_url(e.data.as_ref(), e.url.as_ref()),
            Self::ToolResultDataDelta(e) => check_data_or_url(e.data.as_ref(), e.url.as_ref()),
            _ => Ok(()),
        }
    }
}

impl HintBlockEvent {
    /// The hint's blocks, when it is not plain text.
    #[must_use]
    pub fn blocks(&self) -> Option<&[MediaBlock]> {
        match &self.hint {
            RichContent::Blocks(b) => Some(b),
            RichContent::Text(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn the_events_a_reply_ends_on_say_how_it_ended() {
        let event = |v: serde_json::Value| serde_json::from_value::<AgentEvent>(v).unwrap();
        let end = event(
            json!({"type": "REPLY_END", "session_id": "s", "reply_id": "r",
                               "finished_reason": "completed"}),
        );
        assert_eq!(
            end.reply_outcome(),
            Some(crate::ReplyOutcome::Finished(
                ReplyFinishedReason::Completed
            ))
        );
        assert!(end.reply_outcome().unwrap().is_completed());
        let interrupted = event(
            json!({"type": "REPLY_END", "session_id": "s", "reply_id": "r",
                                       "finished_reason": "interrupted"}),
        );
        assert!(!interrupted.reply_outcome().unwrap().is_completed());
        assert!(!interrupted.reply_outcome().unwrap().is_parked());
        let asks =
            event(json!({"type": "REQUIRE_USER_CONFIRM", "reply_id": "r", "tool_calls": []}));
        assert_eq!(
            asks.reply_outcome(),
            Some(crate::ReplyOutcome::AwaitingConfirmation)
        );
        assert!(asks.reply_outcome().unwrap().is_parked());
        let external =
            event(json!({"type": "REQUIRE_EXTERNAL_EXECUTION", "reply_id": "r", "tool_calls": []}));
        assert_eq!(
            external.reply_outcome(),
            Some(crate::ReplyOutcome::AwaitingExternal)
        );
        let delta = event(
            json!({"type": "TEXT_BLOCK_DELTA", "reply_id": "r", "block_id": "b",
                                 "delta": "x"}),
        );
        assert_eq!(delta.reply_outcome(), None);
    }

    #[test]
    fn events_serialise_base_fields_then_the_tag_then_their_own() {
        let mut e = TextBlockDeltaEvent::new("r".into(), "b".into(), "x".into());
        e.id = "i".into();
        e.created_at = "t".into();
        let s = serde_json::to_string(&AgentEvent::from(e)).unwrap();
        assert_eq!(
            s,
            r#"{"id":"i","created_at":"t","metadata":{},"type":"TEXT_BLOCK_DELTA","reply_id":"r","block_id":"b","delta":"x"}"#
        );
    }

    #[test]
    fn a_lowercase_tag_and_an_unknown_reason_are_rejected() {
        let lower = json!({"type": "reply_start", "session_id": "s", "reply_id": "r", "name": "a"});
        assert!(serde_json::from_value::<AgentEvent>(lower).is_err());
        let reason = json!({"type": "REPLY_END", "session_id": "s", "reply_id": "r",
                            "finished_reason": "done"});
        assert!(serde_json::from_value::<AgentEvent>(reason).is_err());
    }

    #[test]
    fn data_deltas_need_exactly_one_of_data_and_url() {
        let base = json!({"type": "DATA_BLOCK_DELTA", "reply_id": "r", "block_id": "b",
                          "media_type": "image/png"});
        assert!(serde_json::from_value::<AgentEvent>(base.clone()).is_err());
        let mut both = base.clone();
        both["data"] = json!("AAAA");
        both["url"] = json!("https://x/y.png");
        assert!(serde_json::from_value::<AgentEvent>(both).is_err());
        let mut one = base;
        one["url"] = json!("https://x/y.png");
        assert!(serde_json::from_value::<AgentEvent>(one).is_ok());
    }

    #[test]
    fn every_event_type_has_a_distinct_upper_snake_tag() {
        assert_eq!(EventType::ALL.len(), 28);
        let mut tags: Vec<_> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), 28);
        assert!(
            tags.iter()
                .all(|t| t.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        );
    }
}
