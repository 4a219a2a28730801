//! [`CardSpec`]: a model card as written in YAML, before merging.

use std::num::NonZeroU64;

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::merge::merge_parameter_schema;
use super::model_card::text_only;
use crate::{Error, ModelCard, ModelClass, ModelStatus, Result};

/// A model card as a YAML file describes it: everything but the merged
/// `parameter_schema` and the `model_class`, which come from the class the
/// card belongs to.
///
/// AgentScope's card files spell the overrides `parameter_overrides`; the
/// wire field (and this crate's files) spell them `parameters_overrides`.
/// Both are read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardSpec {
    /// Name of the model in API calls.
    pub name: String,
    /// Name shown to people.
    pub label: String,
    /// Lifecycle status.
    pub status: ModelStatus,
    /// When the model is (or was) deprecated.
    #[serde(default, with = "super::datetime")]
    pub deprecated_at: Option<NaiveDateTime>,
    /// MIME types the model accepts.
    #[serde(default = "text_only")]
    pub input_types: Vec<String>,
    /// MIME types the model produces.
    #[serde(default = "text_only")]
    pub output_types: Vec<String>,
    /// Context window, in tokens.
    pub context_size: NonZeroU64,
    /// Most tokens one reply may have.
    pub output_size: NonZeroU64,
    /// Per-parameter changes to the class's base schema: an object to merge,
    /// `{hidden: true}` to hide, or `null` to remove.
    #[serde(default, alias = "parameter_overrides")]
    pub parameters_overrides: Map<String, Value>,
}

impl CardSpec {
    /// Builds the card: merges the overrides into `base_schema` (see
    /// [`merge_parameter_schema`]) and records `model_class`.
    ///
    /// # Errors
    /// [`Error::InvalidCard`] if the name is empty or an override is neither
    /// an object nor `null`.
    pub fn into_card(
        self,
        model_class: impl Into<String>,
        base_schema: &Value,
    ) -> Result<ModelCard> {
        if self.name.trim().is_empty() {
            return Err(Error::InvalidCard {
                card: self.name,
                reason: "the name is empty".into(),
            });
        }
        if let Some((parameter, _)) = self
            .parameters_overrides
            .iter()
            .find(|(_, v)| !(v.is_object() || v.is_null()))
        {
            return Err(Error::InvalidCard {
                card: self.name.clone(),
                reason: format!("the override of `{parameter}` is neither a mapping nor null"),
            });
        }
        let merged = merge_parameter_schema(
            base_schema,
            &self.parameters_overrides,
            &self.output_types,
            self.output_size.get(),
        );
        let parameter_schema = match merged {
            Value::Object(schema) => schema,
            _ => Map::new(),
        };
        Ok(ModelCard::from_parts(
            model_class.into(),
            self,
            parameter_schema,
        ))
    }
}

impl ModelCard {
    /// Reads one card written the way AgentScope's card files are (one YAML
    /// mapping per model) and builds it against `class`'s base schema.
    ///
    /// ```
    /// use oxiscope_model::{ModelCard, ModelClass};
    ///
    /// let card = ModelCard::from_yaml(
    ///     "name: my-model\nlabel: My Model\nstatus: active\n\
    ///      context_size: 128000\noutput_size: 4096\n\
    ///      parameter_overrides:\n  temperature: {maximum: 1}\n",
    ///     ModelClass::OpenAiChat,
    /// )?;
    /// let max_tokens = &card.parameter_schema["properties"]["max_tokens"];
    /// assert_eq!(max_tokens["maximum"], 4096);
    /// # Ok::<(), oxiscope_model::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCardYaml`] if the text is not a card, and the errors
    /// of [`CardSpec::into_card`].
    pub fn from_yaml(yaml: &str, class: ModelClass) -> Result<Self> {
        let spec: CardSpec =
            serde_yaml_ng::from_str(yaml).map_err(|err| Error::InvalidCardYaml {
                origin: "a model card".into(),
                message: err.to_string(),
            })?;
        spec.into_card(class.as_str(), &class.parameter_schema())
    }
}
