//! [`SessionSpec`]: a session's stored config, as the engine reads and
//! writes it.

use oxiscope_storage::SessionRecord;
use serde_json::{Map, Value, json};

use super::{Parsed, as_map, object, text};
use crate::api::ChatModelConfig;
use crate::knowledge::SessionKnowledgeConfig;

const WORKSPACE_ID: &str = "workspace_id";
const NAME: &str = "name";
const NAMING: &str = "naming";
const CWD: &str = "cwd";
const TTS: &str = "tts_model_config";
const REALTIME: &str = "realtime_model_config";
const KNOWLEDGE: &str = "knowledge_config";
const ORIGIN: &str = "origin";
const SCHEDULE_ID: &str = "schedule_id";

/// A session's `origin` of kind `kind` (`"team"`, `"schedule"`, ...),
/// without details.
#[must_use]
pub fn origin_of(kind: &str) -> Map<String, Value> {
    let mut origin = Map::new();
    origin.insert("type".into(), kind.into());
    origin
}

/// The `origin` of the sessions schedule `schedule_id` opens.
#[must_use]
pub fn schedule_origin(schedule_id: &str) -> Map<String, Value> {
    let mut origin = origin_of("schedule");
    origin.insert(SCHEDULE_ID.into(), schedule_id.into());
    origin
}

/// Which of a session's chat models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSlot {
    /// `chat_model_config`: the model that answers.
    Chat,
    /// `fallback_chat_model_config`: tried when the first fails.
    Fallback,
}

impl ModelSlot {
    /// The config key, as errors name it.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Self::Chat => "chat_model_config",
            Self::Fallback => "fallback_chat_model_config",
        }
    }
}

/// What a session's config says: its workspace, name and whether the
/// server may still name it, its working directory, its models and
/// knowledge, where it came from. Unknown keys are kept.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    raw: Map<String, Value>,
    workspace_id: Option<String>,
    name: Option<String>,
    naming_auto: bool,
    cwd: Option<String>,
    chat_model: Parsed<ChatModelConfig>,
    fallback_model: Parsed<ChatModelConfig>,
    knowledge: Parsed<SessionKnowledgeConfig>,
}

impl SessionSpec {
    /// The view of `session`'s config.
    #[must_use]
    pub fn of(session: &SessionRecord) -> Self {
        Self::parse(&session.config)
    }

    /// The view of a stored session config.
    #[must_use]
    pub fn parse(config: &Value) -> Self {
        Self::from_map(as_map(config))
    }

    fn from_map(raw: Map<String, Value>) -> Self {
        Self {
            workspace_id: text(&raw, WORKSPACE_ID),
            name: text(&raw, NAME),
            naming_auto: object(&raw, NAMING)
                .and_then(|n| n.get("auto"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            cwd: text(&raw, CWD),
            chat_model: Parsed::of(raw.get(ModelSlot::Chat.key())),
            fallback_model: Parsed::of(raw.get(ModelSlot::Fallback.key())),
            knowledge: Parsed::of(raw.get(KNOWLEDGE)),
            raw,
        }
    }

    /// The config of a new session in `workspace_id`: named `name`, or
    /// `placeholder` until its first reply names it; no working
    /// directory, no models, no knowledge (each key present, `null`, as
    /// AgentScope stores them).
    #[must_use]
    pub fn new(
        workspace_id: &str,
        name: Option<String>,
        placeholder: impl FnOnce() -> String,
    ) -> Self {
        let auto = name.is_none();
        let mut raw = Map::new();
        raw.insert(WORKSPACE_ID.into(), workspace_id.into());
        raw.insert(NAME.into(), name.unwrap_or_else(placeholder).into());
        raw.insert(NAMING.into(), json!({ "auto": auto }));
        raw.insert(CWD.into(), Value::Null);
        for key in [
            ModelSlot::Chat.key(),
            ModelSlot::Fallback.key(),
            TTS,
            REALTIME,
            KNOWLEDGE,
        ] {
            raw.insert(key.into(), Value::Null);
        }
        Self::from_map(raw)
    }

    /// `workspace_id`, when the config names one.
    #[must_use]
    pub fn workspace_id(&self) -> Option<&str> {
        self.workspace_id.as_deref()
    }

    /// `name`.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether the session's name is still the server's to set.
    #[must_use]
    pub fn naming_auto(&self) -> bool {
        self.naming_auto
    }

    /// The working directory, relative to the workspace (`None`: its root).
    #[must_use]
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// The model config in `slot`.
    #[must_use]
    pub fn model(&self, slot: ModelSlot) -> &Parsed<ChatModelConfig> {
        match slot {
            ModelSlot::Chat => &self.chat_model,
            ModelSlot::Fallback => &self.fallback_model,
        }
    }

    /// The stored value in `slot` when it is set (for copying it as is).
    #[must_use]
    pub fn model_value(&self, slot: ModelSlot) -> Option<&Value> {
        self.raw.get(slot.key()).filter(|v| !v.is_null())
    }

    /// The provider family of the chat model (`openai` for an
    /// `openai_credential`), when one is configured.
    #[must_use]
    pub fn provider(&self) -> Option<&str> {
        self.chat_model
            .ok()
            .map(|c| c.kind.trim_end_matches("_credential"))
    }

    /// `knowledge_config`.
    #[must_use]
    pub fn knowledge(&self) -> &Parsed<SessionKnowledgeConfig> {
        &self.knowledge
    }

    /// `origin`: who opened the session (`{"type": "schedule", ...}`);
    /// `None` for the user's own.
    #[must_use]
    pub fn origin(&self) -> Option<&Map<String, Value>> {
        object(&self.raw, ORIGIN)
    }

    /// The schedule that opened the session, if one did.
    #[must_use]
    pub fn schedule_id(&self) -> Option<&str> {
        self.origin()
            .and_then(|o| o.get(SCHEDULE_ID))
            .and_then(Value::as_str)
    }

    /// Names the session `name`, for good: the server no longer renames it.
    pub fn set_name(&mut self, name: String) {
        self.set(NAME, name.into());
        self.set(NAMING, json!({ "auto": false }));
    }

    /// Moves the session into `workspace_id`.
    pub fn set_workspace_id(&mut self, workspace_id: &str) {
        self.set(WORKSPACE_ID, workspace_id.into());
    }

    /// Sets the working directory (`None`: the workspace's root).
    pub fn set_cwd(&mut self, cwd: Option<String>) {
        self.set(CWD, cwd.map_or(Value::Null, Value::from));
    }

    /// Sets the model in `slot`.
    pub fn set_model(&mut self, slot: ModelSlot, config: &ChatModelConfig) {
        self.set(slot.key(), json!(config));
    }

    /// Sets the model in `slot` to a stored value, as it was stored.
    pub fn set_model_value(&mut self, slot: ModelSlot, value: Value) {
        self.set(slot.key(), value);
    }

    /// Sets `tts_model_config`.
    pub fn set_tts(&mut self, value: Value) {
        self.set(TTS, value);
    }

    /// Sets `realtime_model_config`.
    pub fn set_realtime(&mut self, value: Value) {
        self.set(REALTIME, value);
    }

    /// Sets `knowledge_config`.
    pub fn set_knowledge(&mut self, value: Value) {
        self.set(KNOWLEDGE, value);
    }

    /// Sets `origin`.
    pub fn set_origin(&mut self, origin: Map<String, Value>) {
        self.set(ORIGIN, Value::Object(origin));
    }

    fn set(&mut self, key: &str, value: Value) {
        let mut raw = std::mem::take(&mut self.raw);
        raw.insert(key.to_owned(), value);
        *self = Self::from_map(raw);
    }

    /// The stored config, as it is now.
    #[must_use]
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    /// The document to store.
    #[must_use]
    pub fn to_value(&self) -> Value {
        Value::Object(self.raw.clone())
    }
}
