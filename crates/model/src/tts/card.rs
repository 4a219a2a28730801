//! [`TtsModelCard`]: what the frontend learns about one TTS model, and the
//! cards shipped for each TTS model class.

use std::sync::OnceLock;

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::TtsModelClass;
use crate::tag::{TypeName, TypeTag};
use crate::{CredentialType, Error, ModelStatus, Result};

/// A TTS model's card, in AgentScope's wire shape (`type: "tts_model"`).
///
/// `realtime` says whether the model takes its text incrementally. The
/// card's `voices` are not a field of their own: they become the `enum`
/// (and the first one the `default`) of the `voice` parameter in
/// `parameter_schema`, so the frontend renders a voice picker. The raw
/// overrides are in `parameters_overrides` (AgentScope's spelling, unlike
/// the chat and embedding cards' `parameter_overrides`).
///
/// ```
/// use oxiscope_model::CredentialType;
///
/// let cards = CredentialType::DashScope.list_tts_models()?;
/// let names: Vec<&str> = cards.iter().map(|c| c.name.as_str()).collect();
/// assert_eq!(
///     names,
///     ["qwen3-tts-flash", "qwen3-tts-flash-realtime", "cosyvoice-v3-flash", "cosyvoice-v3-plus"]
/// );
/// let wire = serde_json::to_value(&cards[0])?;
/// assert_eq!(wire["type"], "tts_model");
/// assert_eq!(wire["parameter_schema"]["properties"]["voice"]["default"], "Cherry");
/// assert!(CredentialType::Anthropic.list_tts_models()?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TtsModelCard {
    #[serde(rename = "type", default)]
    tag: TypeTag<Self>,
    /// Name of the model in API calls.
    pub name: String,
    /// Name shown to people.
    pub label: String,
    /// Lifecycle status; `active` by default.
    #[serde(default = "active")]
    pub status: ModelStatus,
    /// When the model is (or was) deprecated; naive ISO 8601 on the wire.
    #[serde(default, with = "crate::card::datetime")]
    pub deprecated_at: Option<NaiveDateTime>,
    /// MIME types the model accepts; `["text/plain"]` by default.
    #[serde(default = "text_only")]
    pub input_types: Vec<String>,
    /// MIME types the model can produce; `["audio/wav"]` by default.
    #[serde(default = "wav_only")]
    pub output_types: Vec<String>,
    /// Whether the model takes its text incrementally (streaming input).
    #[serde(default)]
    pub realtime: bool,
    /// JSON Schema of the parameters a user may set.
    pub parameter_schema: Map<String, Value>,
    /// The card's raw parameter overrides.
    pub parameters_overrides: Map<String, Value>,
}

impl TypeName for TtsModelCard {
    const TYPE: &'static str = "tts_model";
}

fn active() -> ModelStatus {
    ModelStatus::Active
}

fn text_only() -> Vec<String> {
    vec!["text/plain".to_owned()]
}

fn wav_only() -> Vec<String> {
    vec!["audio/wav".to_owned()]
}

impl TtsModelCard {
    /// The voices the card offers (the `enum` of its `voice` parameter),
    /// the default one first.
    #[must_use]
    pub fn voices(&self) -> Vec<&str> {
        self.parameter_schema
            .get("properties")
            .and_then(|p| p.get("voice"))
            .and_then(|v| v.get("enum"))
            .and_then(Value::as_array)
            .map(|voices| voices.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A card as a shipped YAML file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CardSpec {
    name: String,
    label: String,
    #[serde(default = "active")]
    status: ModelStatus,
    #[serde(default, with = "crate::card::datetime")]
    deprecated_at: Option<NaiveDateTime>,
    #[serde(default = "text_only")]
    input_types: Vec<String>,
    #[serde(default = "wav_only")]
    output_types: Vec<String>,
    #[serde(default)]
    realtime: bool,
    #[serde(default)]
    voices: Vec<String>,
    #[serde(default)]
    parameter_overrides: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CardFile {
    class: String,
    cards: Vec<CardSpec>,
}

/// The parameter schema of a card: the class's parameters, the card's
/// voices as the `enum` (and first one as the `default`) of `voice`, then
/// the overrides: `null` or `{hidden: true}` removes a parameter, another
/// object is merged into an existing one.
fn parameter_schema(
    class: TtsModelClass,
    voices: &[String],
    overrides: &Map<String, Value>,
) -> Map<String, Value> {
    let mut properties = class.parameter_properties();
    if let (Some(first), Some(Value::Object(voice))) = (voices.first(), properties.get_mut("voice"))
    {
        voice.insert("default".to_owned(), Value::String(first.clone()));
        voice.insert("enum".to_owned(), json!(voices));
    }
    for (name, change) in overrides {
        match change {
            Value::Object(o) if o.get("hidden") != Some(&Value::Bool(true)) => {
                if let Some(Value::Object(existing)) = properties.get_mut(name) {
                    existing.extend(o.clone());
                }
            }
            _ => {
                properties.remove(name);
            }
        }
    }
    let mut schema = Map::new();
    schema.insert("type".to_owned(), "object".into());
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), Value::Array(Vec::new()));
    schema
}

impl CardSpec {
    fn into_card(self, class: TtsModelClass) -> Result<TtsModelCard> {
        if self.name.trim().is_empty() {
            return Err(Error::InvalidCard {
                card: self.name,
                reason: "the name is empty".to_owned(),
            });
        }
        if self.realtime != class.realtime() {
            return Err(Error::InvalidCard {
                card: self.name,
                reason: format!(
                    "realtime is {}, but the class {class} is {}realtime",
                    self.realtime,
                    if class.realtime() { "" } else { "not " }
                ),
            });
        }
        Ok(TtsModelCard {
            tag: TypeTag::default(),
            parameter_schema: parameter_schema(class, &self.voices, &self.parameter_overrides),
            name: self.name,
            label: self.label,
            status: self.status,
            deprecated_at: self.deprecated_at,
            input_types: self.input_types,
            output_types: self.output_types,
            realtime: self.realtime,
            parameters_overrides: self.parameter_overrides,
        })
    }
}

/// The shipped card file of `class`: file name and text.
const fn shipped_file(class: TtsModelClass) -> (&'static str, &'static str) {
    match class {
        TtsModelClass::OpenAi => ("openai_tts.yaml", include_str!("cards/openai_tts.yaml")),
        TtsModelClass::Gemini => ("gemini_tts.yaml", include_str!("cards/gemini_tts.yaml")),
        TtsModelClass::DashScope => (
            "dashscope_tts.yaml",
            include_str!("cards/dashscope_tts.yaml"),
        ),
        TtsModelClass::DashScopeRealtime => (
            "dashscope_realtime_tts.yaml",
            include_str!("cards/dashscope_realtime_tts.yaml"),
        ),
        TtsModelClass::DashScopeCosyVoice => (
            "dashscope_cosyvoice_tts.yaml",
            include_str!("cards/dashscope_cosyvoice_tts.yaml"),
        ),
    }
}

fn load(class: TtsModelClass) -> Result<Vec<TtsModelCard>> {
    let (origin, yaml) = shipped_file(class);
    let file: CardFile = serde_yaml_ng::from_str(yaml).map_err(|err| Error::InvalidCardYaml {
        origin: origin.to_owned(),
        message: err.to_string(),
    })?;
    if file.class != class.as_str() {
        return Err(Error::InvalidCardYaml {
            origin: origin.to_owned(),
            message: format!(
                "the file declares class `{}`, expected `{class}`",
                file.class
            ),
        });
    }
    let mut cards = file
        .cards
        .into_iter()
        .map(|spec| spec.into_card(class))
        .collect::<Result<Vec<_>>>()?;
    cards.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cards)
}

impl TtsModelClass {
    /// The shipped cards of this class, sorted by name.
    ///
    /// # Errors
    /// [`Error::InvalidCardYaml`] or [`Error::InvalidCard`] if a shipped
    /// card file is broken (the crate's tests load every file).
    pub fn list_models(self) -> Result<Vec<TtsModelCard>> {
        static CACHE: [OnceLock<Result<Vec<TtsModelCard>>>; TtsModelClass::ALL.len()] =
            [const { OnceLock::new() }; TtsModelClass::ALL.len()];
        let slot = Self::ALL.iter().position(|c| *c == self);
        match slot.and_then(|i| CACHE.get(i)) {
            Some(slot) => slot.get_or_init(|| load(self)).clone(),
            None => load(self),
        }
    }

    /// The shipped card named `model`, if any (a `models/` prefix is
    /// ignored).
    #[must_use]
    pub fn card(self, model: &str) -> Option<TtsModelCard> {
        let bare = model.strip_prefix("models/").unwrap_or(model);
        self.list_models()
            .ok()?
            .into_iter()
            .find(|c| c.name == bare)
    }
}

impl CredentialType {
    /// The TTS model cards of every TTS class of this type, class by class
    /// in [`tts_model_classes`](Self::tts_model_classes) order and by name
    /// within a class; empty for a type without TTS models (as AgentScope's
    /// `GET /tts-model/?provider=` answers).
    ///
    /// # Errors
    /// As [`TtsModelClass::list_models`].
    pub fn list_tts_models(self) -> Result<Vec<TtsModelCard>> {
        let mut cards = Vec::new();
        for class in self.tts_model_classes() {
            cards.extend(class.list_models()?);
        }
        Ok(cards)
    }

    /// The TTS class that serves `model` for this type: the class whose
    /// cards list it, else the type's first class (as AgentScope resolves
    /// it); `None` for a type without TTS models.
    #[must_use]
    pub fn tts_model_class(self, model: &str) -> Option<TtsModelClass> {
        let classes = self.tts_model_classes();
        classes
            .iter()
            .copied()
            .find(|class| class.card(model).is_some())
            .or_else(|| classes.first().copied())
    }
}

#[cfg(test)]
#[path = "card_tests.rs"]
mod tests;
