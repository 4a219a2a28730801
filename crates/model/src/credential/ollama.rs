//! Ollama (local or self-hosted models).

use super::common::{credential_struct, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::tag::{TypeName, TypeTag};

credential_struct! {
    /// Connection settings for an Ollama server; `type` is `ollama_credential`.
    ///
    /// Ollama needs no key, so this credential has no secret field.
    pub struct OllamaCredential = "ollama_credential" {
        /// URL of the server; `None` means [`OllamaCredential::DEFAULT_HOST`].
        #[serde(default)]
        pub host: Option<String>,
    }
}

impl OllamaCredential {
    /// The server used when the credential names none.
    pub const DEFAULT_HOST: &'static str = "http://localhost:11434";

    /// A credential with a fresh id for the default local server.
    pub fn new() -> Self {
        Self {
            id: new_id(),
            name: String::new(),
            tag: TypeTag::default(),
            host: None,
        }
    }

    /// Points the credential at a server.
    #[must_use]
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }
}

impl Default for OllamaCredential {
    fn default() -> Self {
        Self::new()
    }
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: OllamaCredential::TYPE,
    title: "Ollama API",
    description: "Where to reach an Ollama server; no key is needed.",
    fields: &[FieldSpec {
        name: "host",
        title: "Host",
        description: "URL of the Ollama server; empty means http://localhost:11434.",
        kind: FieldKind::OptionalString,
    }],
};
