//! [`EmbeddingModelCard`]: what the frontend learns about one embedding
//! model, and the cards shipped for each embedding family.

use std::num::{NonZeroU32, NonZeroU64};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::tag::{TypeName, TypeTag};
use crate::{CredentialType, EmbeddingFamily, Error, ModelStatus, Result};

/// The output type of an embedding model: dense vectors.
pub const EMBEDDING_OUTPUT_TYPE: &str = "application/x-embedding";

/// An embedding model's card, in AgentScope's wire shape
/// (`type: "embedding_model"`).
///
/// Unlike a chat [`ModelCard`](crate::ModelCard) it has no output size;
/// `dimensions` is the default vector size, `supported_dimensions` the
/// sizes a Matryoshka-style model can be cut to (`None`: fixed at
/// `dimensions`), and `context_size` the most input tokens of one text, when
/// known. The shipped cards come from [`EmbeddingFamily::list_models`] or
/// [`CredentialType::list_embedding_models`].
///
/// ```
/// use oxiscope_model::{CredentialType, EmbeddingModelCard};
///
/// let cards = CredentialType::OpenAi.list_embedding_models()?;
/// let small = cards.iter().find(|c| c.name == "text-embedding-3-small").ok_or("shipped")?;
/// assert_eq!(small.dimensions.get(), 1536);
/// let wire = serde_json::to_value(small)?;
/// assert_eq!(wire["type"], "embedding_model");
/// assert_eq!(wire["output_types"], serde_json::json!(["application/x-embedding"]));
/// assert!(CredentialType::Anthropic.list_embedding_models()?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingModelCard {
    #[serde(rename = "type", default)]
    tag: TypeTag<Self>,
    /// Name of the model in API calls.
    pub name: String,
    /// Name shown to people.
    pub label: String,
    /// Lifecycle status; `active` by default.
    #[serde(default = "active")]
    pub status: ModelStatus,
    /// MIME types the model accepts; `["text/plain"]` by default.
    #[serde(default = "text_only")]
    pub input_types: Vec<String>,
    /// MIME types the model produces; `["application/x-embedding"]` by
    /// default.
    #[serde(default = "embedding_only")]
    pub output_types: Vec<String>,
    /// Default size of the vectors.
    pub dimensions: NonZeroU32,
    /// The only sizes the model can produce; `None` when it is fixed at
    /// `dimensions`.
    #[serde(default)]
    pub supported_dimensions: Option<Vec<u32>>,
    /// Most input tokens per text, when known.
    #[serde(default)]
    pub context_size: Option<NonZeroU64>,
    /// JSON Schema of the parameters a user may set.
    #[serde(default)]
    pub parameter_schema: Map<String, Value>,
    /// The card's raw parameter overrides.
    #[serde(default)]
    pub parameter_overrides: Map<String, Value>,
}

impl TypeName for EmbeddingModelCard {
    const TYPE: &'static str = "embedding_model";
}

fn active() -> ModelStatus {
    ModelStatus::Active
}

fn text_only() -> Vec<String> {
    vec!["text/plain".to_owned()]
}

fn embedding_only() -> Vec<String> {
    vec![EMBEDDING_OUTPUT_TYPE.to_owned()]
}

impl EmbeddingModelCard {
    /// Whether the model can produce vectors of `dimensions` values.
    #[must_use]
    pub fn supports_dimensions(&self, dimensions: NonZeroU32) -> bool {
        match &self.supported_dimensions {
            Some(sizes) => sizes.contains(&dimensions.get()),
            None => dimensions == self.dimensions,
        }
    }

    /// Whether the vector size can be chosen (the model has
    /// `supported_dimensions`).
    #[must_use]
    pub fn has_variable_dimensions(&self) -> bool {
        self.supported_dimensions.is_some()
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
    #[serde(default = "text_only")]
    input_types: Vec<String>,
    #[serde(default = "embedding_only")]
    output_types: Vec<String>,
    dimensions: NonZeroU32,
    #[serde(default)]
    supported_dimensions: Option<Vec<u32>>,
    #[serde(default)]
    context_size: Option<NonZeroU64>,
    #[serde(default)]
    parameter_overrides: Map<String, Value>,
}

#[derive(Deserialize)]
struct CardFile {
    family: String,
    cards: Vec<CardSpec>,
}

/// The parameter schema of a card: the family's parameters (none of the
/// shipped families has user-settable ones, as in AgentScope) with the
/// card's overrides applied: `null` or `{hidden: true}` removes a
/// parameter, an object is merged into an existing one.
fn parameter_schema(overrides: &Map<String, Value>) -> Map<String, Value> {
    let mut properties = Map::new();
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
    let schema = json!({"type": "object", "properties": properties, "required": []});
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl CardSpec {
    fn into_card(self) -> Result<EmbeddingModelCard> {
        if self.name.trim().is_empty() {
            return Err(Error::InvalidCard {
                card: self.name,
                reason: "the name is empty".to_owned(),
            });
        }
        if let Some(sizes) = &self.supported_dimensions
            && !sizes.contains(&self.dimensions.get())
        {
            return Err(Error::InvalidCard {
                card: self.name,
                reason: format!(
                    "the default dimensions {} are not among the supported ones",
                    self.dimensions
                ),
            });
        }
        Ok(EmbeddingModelCard {
            tag: TypeTag::default(),
            parameter_schema: parameter_schema(&self.parameter_overrides),
            name: self.name,
            label: self.label,
            status: self.status,
            input_types: self.input_types,
            output_types: self.output_types,
            dimensions: self.dimensions,
            supported_dimensions: self.supported_dimensions,
            context_size: self.context_size,
            parameter_overrides: self.parameter_overrides,
        })
    }
}

/// The shipped card files: family, file name, text. Ollama has none: it
/// serves whatever models its host pulled.
const SHIPPED: &[(EmbeddingFamily, &str, &str)] = &[
    (
        EmbeddingFamily::OpenAi,
        "openai_embedding.yaml",
        include_str!("cards/openai_embedding.yaml"),
    ),
    (
        EmbeddingFamily::Gemini,
        "gemini_embedding.yaml",
        include_str!("cards/gemini_embedding.yaml"),
    ),
    (
        EmbeddingFamily::DashScope,
        "dashscope_embedding.yaml",
        include_str!("cards/dashscope_embedding.yaml"),
    ),
];

/// The families whose parsed cards are kept.
const FAMILIES: [EmbeddingFamily; 4] = [
    EmbeddingFamily::OpenAi,
    EmbeddingFamily::DashScope,
    EmbeddingFamily::Gemini,
    EmbeddingFamily::Ollama,
];

/// The shipped card file of `family`, if it has one.
fn shipped_file(family: EmbeddingFamily) -> Option<(&'static str, &'static str)> {
    SHIPPED
        .iter()
        .find(|(f, _, _)| *f == family)
        .map(|(_, name, text)| (*name, *text))
}

fn load(family: EmbeddingFamily) -> Result<Vec<EmbeddingModelCard>> {
    let Some((origin, yaml)) = shipped_file(family) else {
        return Ok(Vec::new());
    };
    let file: CardFile = serde_yaml_ng::from_str(yaml).map_err(|err| Error::InvalidCardYaml {
        origin: origin.to_owned(),
        message: err.to_string(),
    })?;
    if file.family != family.as_str() {
        return Err(Error::InvalidCardYaml {
            origin: origin.to_owned(),
            message: format!(
                "the file declares family `{}`, expected `{family}`",
                file.family
            ),
        });
    }
    let mut cards = file
        .cards
        .into_iter()
        .map(CardSpec::into_card)
        .collect::<Result<Vec<_>>>()?;
    cards.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cards)
}

impl EmbeddingFamily {
    /// The shipped embedding model cards of this family, sorted by name
    /// (none for Ollama, whose models are whatever its host has pulled).
    ///
    /// # Errors
    /// [`Error::InvalidCardYaml`] or [`Error::InvalidCard`] if a shipped
    /// card file is broken (the crate's tests load every file).
    pub fn list_models(self) -> Result<Vec<EmbeddingModelCard>> {
        static CACHE: [OnceLock<Result<Vec<EmbeddingModelCard>>>; FAMILIES.len()] =
            [const { OnceLock::new() }; FAMILIES.len()];
        let slot = FAMILIES.iter().position(|f| *f == self);
        match slot.and_then(|i| CACHE.get(i)) {
            Some(slot) => slot.get_or_init(|| load(self)).clone(),
            None => load(self),
        }
    }

    /// The shipped card named `model` (a `models/` prefix is ignored), if
    /// any.
    #[must_use]
    pub fn card(self, model: &str) -> Option<EmbeddingModelCard> {
        let bare = model.strip_prefix("models/").unwrap_or(model);
        self.list_models()
            .ok()?
            .into_iter()
            .find(|c| c.name == model || c.name == bare)
    }
}

impl CredentialType {
    /// The embedding model cards of this type's embedding family, sorted by
    /// name; empty for a type without embedding models (as AgentScope's
    /// `GET /embedding-model/?provider=` answers).
    ///
    /// # Errors
    /// As [`EmbeddingFamily::list_models`].
    pub fn list_embedding_models(self) -> Result<Vec<EmbeddingModelCard>> {
        self.embedding_family()
            .map_or_else(|| Ok(Vec::new()), EmbeddingFamily::list_models)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_shipped_file_loads_and_matches_agentscope_counts() {
        let counts: Vec<(EmbeddingFamily, usize)> = FAMILIES
            .into_iter()
            .map(|f| (f, f.list_models().unwrap().len()))
            .collect();
        assert_eq!(
            counts,
            vec![
                (EmbeddingFamily::OpenAi, 2),
                (EmbeddingFamily::DashScope, 7),
                (EmbeddingFamily::Gemini, 2),
                (EmbeddingFamily::Ollama, 0),
            ]
        );
    }

    #[test]
    fn a_card_serialises_in_agentscope_field_order_with_its_defaults() {
        let card = EmbeddingFamily::DashScope
            .card("text-embedding-v4")
            .unwrap();
        let wire = serde_json::to_string(&card).unwrap();
        assert_eq!(
            wire,
            r#"{"type":"embedding_model","name":"text-embedding-v4","label":"Text Embedding v4","status":"active","input_types":["text/plain"],"output_types":["application/x-embedding"],"dimensions":1024,"supported_dimensions":[2048,1536,1024,768,512,256,128,64],"context_size":8192,"parameter_schema":{"type":"object","properties":{},"required":[]},"parameter_overrides":{}}"#
        );
        let back: EmbeddingModelCard = serde_json::from_str(&wire).unwrap();
        assert_eq!(back, card);
        let fixed = EmbeddingFamily::DashScope
            .card("multimodal-embedding-v1")
            .unwrap();
        let fixed_wire = serde_json::to_value(&fixed).unwrap();
        assert_eq!(fixed_wire["supported_dimensions"], Value::Null);
    }

    #[test]
    fn minimal_cards_take_agentscope_defaults_and_other_types_are_refused() {
        let card: EmbeddingModelCard =
            serde_json::from_value(json!({"name": "m", "label": "M", "dimensions": 8})).unwrap();
        assert_eq!(card.status, ModelStatus::Active);
        assert_eq!(card.input_types, vec!["text/plain"]);
        assert_eq!(card.output_types, vec![EMBEDDING_OUTPUT_TYPE]);
        assert!(
            serde_json::from_value::<EmbeddingModelCard>(
                json!({"type": "chat_model", "name": "m", "label": "M", "dimensions": 8})
            )
            .is_err()
        );
        assert!(
            serde_json::from_value::<EmbeddingModelCard>(
                json!({"name": "m", "label": "M", "dimensions": 0})
            )
            .is_err()
        );
    }

    #[test]
    fn supported_dimensions_decide_what_a_model_can_produce() {
        let card = EmbeddingFamily::OpenAi
            .card("text-embedding-3-small")
            .unwrap();
        let d = |n| NonZeroU32::new(n).unwrap();
        assert!(card.supports_dimensions(d(512)));
        assert!(!card.supports_dimensions(d(3072)));
        let fixed = EmbeddingFamily::DashScope
            .card("multimodal-embedding-v1")
            .unwrap();
        assert!(fixed.supports_dimensions(d(1024)));
        assert!(!fixed.supports_dimensions(d(512)));
        assert!(
            EmbeddingFamily::Gemini
                .card("models/gemini-embedding-001")
                .is_some()
        );
        assert!(EmbeddingFamily::Ollama.card("nomic-embed-text").is_none());
    }

    #[test]
    fn hidden_and_removed_overrides_leave_no_parameter() {
        let mut overrides = Map::new();
        overrides.insert("dimensions".into(), Value::Null);
        overrides.insert("task_type".into(), json!({"hidden": true}));
        let schema = parameter_schema(&overrides);
        assert_eq!(
            Value::Object(schema),
            json!({"type": "object", "properties": {}, "required": []})
        );
    }
}
