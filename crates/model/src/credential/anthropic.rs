//! Anthropic (Claude).

use super::common::{credential_struct, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

credential_struct! {
    /// Connection settings for Anthropic's Messages API; `type` is
    /// `anthropic_credential`.
    pub struct AnthropicCredential = "anthropic_credential" {
        /// The API key.
        pub api_key: Secret,
        /// Endpoint to use instead of Anthropic's own, if any.
        #[serde(default)]
        pub base_url: Option<String>,
    }
}

impl AnthropicCredential {
    /// A credential with a fresh id and the given key.
    pub fn new(api_key: impl Into<Secret>) -> Self {
        Self {
            id: new_id(),
            name: String::new(),
            tag: TypeTag::default(),
            api_key: api_key.into(),
            base_url: None,
        }
    }

    /// Points the credential at another Anthropic-compatible endpoint.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: AnthropicCredential::TYPE,
    title: "Anthropic API",
    description: "Key and endpoint for Anthropic's Claude API.",
    fields: &[
        FieldSpec {
            name: "api_key",
            title: "Api Key",
            description: "Secret key issued by Anthropic.",
            kind: FieldKind::Secret,
        },
        FieldSpec {
            name: "base_url",
            title: "Base Url",
            description: "Another endpoint for the Messages API; empty means Anthropic itself.",
            kind: FieldKind::OptionalString,
        },
    ],
};
