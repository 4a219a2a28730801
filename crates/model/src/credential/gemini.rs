//! Google Gemini.

use super::common::{credential_struct, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

credential_struct! {
    /// Connection settings for the Gemini API; `type` is `gemini_credential`.
    pub struct GeminiCredential = "gemini_credential" {
        /// The API key.
        pub api_key: Secret,
    }
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
