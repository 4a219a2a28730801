//! xAI (Grok).

use serde::{Deserialize, Serialize};

use super::common::{common_builders, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

/// Connection settings for the xAI API; `type` is `xai_credential`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XaiCredential {
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
    /// Host name of the API, without a scheme; [`XaiCredential::DEFAULT_API_HOST`]
    /// by default.
    #[serde(default = "default_api_host")]
    pub api_host: String,
}

impl TypeName for XaiCredential {
    const TYPE: &'static str = "xai_credential";
}

impl XaiCredential {
    /// The host used when the payload names none.
    pub const DEFAULT_API_HOST: &'static str = "api.x.ai";

    /// A credential with a fresh id, the given key and the default host.
    pub fn new(api_key: impl Into<Secret>) -> Self {
        Self {
            id: new_id(),
            name: String::new(),
            tag: TypeTag::default(),
            api_key: api_key.into(),
            api_host: default_api_host(),
        }
    }

    /// Points the credential at another host (no scheme).
    #[must_use]
    pub fn with_api_host(mut self, api_host: impl Into<String>) -> Self {
        self.api_host = api_host.into();
        self
    }
}

common_builders!(XaiCredential);

fn default_api_host() -> String {
    XaiCredential::DEFAULT_API_HOST.to_owned()
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: XaiCredential::TYPE,
    title: "xAI API",
    description: "Key and host for xAI's Grok API.",
    fields: &[
        FieldSpec {
            name: "api_key",
            title: "Api Key",
            description: "Secret key issued by xAI.",
            kind: FieldKind::Secret,
        },
        FieldSpec {
            name: "api_host",
            title: "API Host",
            description: "Host name of the API without a scheme; change it for a compatible \
                          or self-hosted server.",
            kind: FieldKind::String {
                default: XaiCredential::DEFAULT_API_HOST,
            },
        },
    ],
};
