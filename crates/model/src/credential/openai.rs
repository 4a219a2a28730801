//! OpenAI (and OpenAI-compatible endpoints).

use super::common::{credential_struct, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

credential_struct! {
    /// Connection settings for the OpenAI API; `type` is `openai_credential`.
    pub struct OpenAiCredential = "openai_credential" {
        /// The API key.
        pub api_key: Secret,
        /// Organization id sent with every request, if any.
        #[serde(default)]
        pub organization: Option<String>,
        /// Endpoint to use instead of the public API (any OpenAI-compatible server).
        #[serde(default)]
        pub base_url: Option<String>,
    }
}

impl OpenAiCredential {
    /// A credential with a fresh id and the given key.
    pub fn new(api_key: impl Into<Secret>) -> Self {
        Self {
            id: new_id(),
            name: String::new(),
            tag: TypeTag::default(),
            api_key: api_key.into(),
            organization: None,
            base_url: None,
        }
    }

    /// Sets the organization id.
    #[must_use]
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    /// Points the credential at another OpenAI-compatible endpoint.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: OpenAiCredential::TYPE,
    title: "OpenAI API",
    description: "Key and endpoint for OpenAI's API.",
    fields: &[
        FieldSpec {
            name: "api_key",
            title: "Api Key",
            description: "Secret key issued by OpenAI.",
            kind: FieldKind::Secret,
        },
        FieldSpec {
            name: "organization",
            title: "Organization",
            description: "OpenAI organization to bill the requests to.",
            kind: FieldKind::OptionalString,
        },
        FieldSpec {
            name: "base_url",
            title: "Base Url",
            description: "Another endpoint that speaks the OpenAI API; empty means OpenAI itself.",
            kind: FieldKind::OptionalString,
        },
    ],
};
