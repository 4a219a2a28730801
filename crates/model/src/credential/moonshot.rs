//! Moonshot AI (Kimi).

use serde::{Deserialize, Serialize};

use super::common::{common_builders, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

/// Connection settings for Moonshot AI (Kimi); `type` is `moonshot_credential`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoonshotCredential {
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
    /// Endpoint of the API; [`MoonshotCredential::DEFAULT_BASE_URL`] by default.
    #[serde(default = "default_base_url")]
    pub base_url: String,
}

impl TypeName for MoonshotCredential {
    const TYPE: &'static str = "moonshot_credential";
}

impl MoonshotCredential {
    /// The endpoint used when the payload names none.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.moonshot.cn/v1";

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

common_builders!(MoonshotCredential);

fn default_base_url() -> String {
    MoonshotCredential::DEFAULT_BASE_URL.to_owned()
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: MoonshotCredential::TYPE,
    title: "Moonshot API",
    description: "Key and endpoint for Moonshot AI's API.",
    fields: &[
        FieldSpec {
            name: "api_key",
            title: "Api Key",
            description: "Secret key issued by Moonshot AI.",
            kind: FieldKind::Secret,
        },
        FieldSpec {
            name: "base_url",
            title: "Base Url",
            description: "Endpoint of the Moonshot AI API.",
            kind: FieldKind::String {
                default: MoonshotCredential::DEFAULT_BASE_URL,
            },
        },
    ],
};
