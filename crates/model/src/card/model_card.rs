//! [`ModelCard`]: what the frontend learns about one chat model.

use std::num::NonZeroU64;

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::merge::THINKING_OUTPUT_TYPE;
use crate::tag::{TypeName, TypeTag};

/// Lifecycle status of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelStatus {
    /// Offered and supported.
    Active,
    /// Still served, but scheduled to go away (see `deprecated_at`).
    Deprecated,
    /// No longer served by the provider.
    Sunset,
}

/// A chat model's card, in AgentScope's wire shape (`type: "chat_model"`).
///
/// Cards drive model pickers and parameter forms: which inputs a model
/// accepts (MIME types), what it can output (`application/x-thinking` means
/// it can return its reasoning), its context and output limits, and the JSON
/// Schema of the parameters it takes. Cards shipped with the crate come from
/// [`CredentialType::list_models`](crate::CredentialType::list_models) or
/// [`ModelClass::list_models`](crate::ModelClass::list_models); other cards
/// are built from YAML with [`ModelCard::from_yaml`] or
/// [`CardSpec::into_card`](crate::CardSpec::into_card), or read from JSON as
/// they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCard {
    #[serde(rename = "type", default)]
    tag: TypeTag<Self>,
    /// The implementation that serves the model (`openai_chat`, ...); empty
    /// when unknown.
    #[serde(default)]
    pub model_class: String,
    /// Name of the model in API calls.
    pub name: String,
    /// Name shown to people.
    pub label: String,
    /// Lifecycle status.
    pub status: ModelStatus,
    /// When the model is (or was) deprecated; naive ISO 8601 on the wire.
    #[serde(default, with = "super::datetime")]
    pub deprecated_at: Option<NaiveDateTime>,
    /// MIME types the model accepts; `["text/plain"]` by default.
    #[serde(default = "text_only")]
    pub input_types: Vec<String>,
    /// MIME types the model produces; `["text/plain"]` by default.
    #[serde(default = "text_only")]
    pub output_types: Vec<String>,
    /// Context window, in tokens.
    pub context_size: NonZeroU64,
    /// Most tokens one reply may have.
    pub output_size: NonZeroU64,
    /// JSON Schema of the parameters the model takes: the class's base schema
    /// merged with this card's overrides (see
    /// [`merge_parameter_schema`](crate::merge_parameter_schema)).
    pub parameter_schema: Map<String, Value>,
    /// The card's raw overrides, before merging.
    #[serde(default, alias = "parameter_overrides")]
    pub parameters_overrides: Map<String, Value>,
}

impl TypeName for ModelCard {
    const TYPE: &'static str = "chat_model";
}

pub(crate) fn text_only() -> Vec<String> {
    vec!["text/plain".to_owned()]
}

impl ModelCard {
    /// Assembles a card from its parts; `parameter_schema` is taken as given.
    pub(crate) fn from_parts(
        model_class: String,
        spec: super::CardSpec,
        parameter_schema: Map<String, Value>,
    ) -> Self {
        Self {
            tag: TypeTag::default(),
            model_class,
            name: spec.name,
            label: spec.label,
            status: spec.status,
            deprecated_at: spec.deprecated_at,
            input_types: spec.input_types,
            output_types: spec.output_types,
            context_size: spec.context_size,
            output_size: spec.output_size,
            parameter_schema,
            parameters_overrides: spec.parameters_overrides,
        }
    }

    /// Whether the model can return its reasoning
    /// (`application/x-thinking` is among its output types).
    pub fn has_thinking(&self) -> bool {
        self.output_types.iter().any(|t| t == THINKING_OUTPUT_TYPE)
    }

    /// Whether the model accepts input of the given MIME type.
    pub fn accepts(&self, mime_type: &str) -> bool {
        self.input_types.iter().any(|t| t == mime_type)
    }
}
