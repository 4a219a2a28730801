//! Alibaba Cloud DashScope (Qwen and hosted third-party models).

use serde::{Deserialize, Serialize};

use super::common::{common_builders, new_id};
use super::schema::{FieldKind, FieldSpec, SchemaSpec};
use crate::Secret;
use crate::tag::{TypeName, TypeTag};

/// Connection settings for Alibaba Cloud DashScope (Qwen and hosted third-party models);
/// `type` is `dashscope_credential`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DashScopeCredential {
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
    /// Endpoint of the API; [`DashScopeCredential::DEFAULT_BASE_URL`] by default.
    #[serde(default = "default_base_url")]
    pub base_url: String,
}

impl TypeName for DashScopeCredential {
    const TYPE: &'static str = "dashscope_credential";
}

impl DashScopeCredential {
    /// The endpoint used when the payload names none.
    pub const DEFAULT_BASE_URL: &'static str = "https://dashscope.aliyuncs.com/compatible-mode/v1";

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

common_builders!(DashScopeCredential);

fn default_base_url() -> String {
    DashScopeCredential::DEFAULT_BASE_URL.to_owned()
}

pub(super) const SCHEMA: SchemaSpec = SchemaSpec {
    type_name: DashScopeCredential::TYPE,
    title: "DashScope API",
    description: "Key and endpoint for Alibaba Cloud Model Studio (DashScope).",
    fields: &[
        FieldSpec {
            name: "api_key",
            title: "API Key",
            description: "Secret key issued by DashScope.",
            kind: FieldKind::Secret,
        },
        FieldSpec {
            name: "base_url",
            title: "API Base URL",
            description: "Endpoint of DashScope's OpenAI-compatible mode.",
            kind: FieldKind::String {
                default: DashScopeCredential::DEFAULT_BASE_URL,
            },
        },
    ],
};
