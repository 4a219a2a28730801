//! MiniMax (through its Anthropic-compatible API).

use serde::{Deserialize, Serialize};

use super::common::{common_builders, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

/// Connection settings for MiniMax (through its Anthropic-compatible API);
/// `type` is `minimax_credential`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MiniMaxCredential {
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
    /// Endpoint of the API; [`MiniMaxCredential::DEFAULT_BASE_URL`] by default.
    #[serde(default = "default_base_url")]
    pub base_url: String,
}

impl TypeName for MiniMaxCredential {
    const TYPE: &'static str = "minimax_credential";
}

impl MiniMaxCredential {
    /// The endpoint used when the payload names none.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.minimax.io/anthropic";

    /// A credential with a fresh id, the given key and the default endpoint.
    pub fn new(api_key: impl Into<Secret>) -> Self {
        Self {
            id: new_id(),
            name: String::new(),
            tag: TypeTag::default(),
            api_key: api_key.into(),
            base_url: default_base_url(),
        }
    }

    /// Points the credential at another endpoint.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }
}

common_builders!(MiniMaxCredential);

fn default_base_url() -> String {
    MiniMaxCredential::DEFAULT_BASE_URL.to_owned()
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: MiniMaxCredential::TYPE,
    title: "MiniMaxCredential",
    description: "Key and endpoint for MiniMax's Anthropic-compatible API.",
    fields: &[
        FieldSpec {
            name: "api_key",
            title: "Api Key",
            description: "Secret key issued by MiniMax.",
            kind: FieldKind::Secret,
        },
        FieldSpec {
            name: "base_url",
            title: "Base Url",
            description: "Endpoint of MiniMax's Anthropic-compatible API \
                          (the mainland China service has its own host).",
            kind: FieldKind::String {
                default: MiniMaxCredential::DEFAULT_BASE_URL,
            },
        },
    ],
};
