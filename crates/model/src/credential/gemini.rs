//! Google Gemini.

use serde::{Deserialize, Serialize};

use super::common::{common_builders, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

/// Connection settings for the Gemini API; `type` is `gemini_credential`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeminiCredential {
    /// Id of the stored credential; generated when absent.
    #[serde(default = "new_id")]
    pub id: String,
    /// Display name; empty by default.
    #[serde(default)]
    pub name: String,
    #[serde(rename = "type", default)]
    tag: TypeTag<Self>,
    /// The API key.
    pub api_key: Secret,
}

impl TypeName for GeminiCredential {
    const TYPE: &'static str = "gemini_credential";
}

impl GeminiCredential {
    /// A credential with a fresh id and the given key.
    pub fn new(api_key: impl Into<Secret>) -> Self {
        Self {
            id: new_id(),
            name: String::new(),
            tag: TypeTag::default(),
            api_key: api_key.into(),
        }
    }
}

common_builders!(GeminiCredential);

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: GeminiCredential::TYPE,
    title: "Gemini API",
    description: "Key for Google's Gemini API.",
    fields: &[FieldSpec {
        name: "api_key",
        title: "Api Key",
        description: "Secret key issued by Google AI Studio.",
        kind: FieldKind::Secret,
    }],
};
