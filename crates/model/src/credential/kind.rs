//! The registry of credential types.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::schema::SchemaSpec;
use super::{
    anthropic, dashscope, deepseek, gemini, minimax, moonshot, ollama, openai, volcengine, xai,
};
use crate::{EmbeddingFamily, Error, ModelCard, ModelClass, Result};

/// A registered credential type, named by its `type` wire value
/// (`"openai_credential"`, ...).
///
/// This is the registry the service needs: the JSON Schema of each type for
/// `GET /credential/schemas`, the chat model classes and embedding family a
/// credential drives, its default endpoint, and its model cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum CredentialType {
    /// `anthropic_credential`
    #[serde(rename = "anthropic_credential")]
    Anthropic,
    /// `dashscope_credential`
    #[serde(rename = "dashscope_credential")]
    DashScope,
    /// `deepseek_credential`
    #[serde(rename = "deepseek_credential")]
    DeepSeek,
    /// `gemini_credential`
    #[serde(rename = "gemini_credential")]
    Gemini,
    /// `minimax_credential`
    #[serde(rename = "minimax_credential")]
    MiniMax,
    /// `moonshot_credential`
    #[serde(rename = "moonshot_credential")]
    Moonshot,
    /// `ollama_credential`
    #[serde(rename = "ollama_credential")]
    Ollama,
    /// `openai_credential`
    #[serde(rename = "openai_credential")]
    OpenAi,
    /// `xai_credential`
    #[serde(rename = "xai_credential")]
    Xai,
    /// `volcengine_credential`
    #[serde(rename = "volcengine_credential")]
    Volcengine,
}

impl CredentialType {
    /// Every type, in the order AgentScope registers (and lists) them.
    pub const ALL: [Self; 10] = [
        Self::Anthropic,
        Self::DashScope,
        Self::DeepSeek,
        Self::Gemini,
        Self::MiniMax,
        Self::Moonshot,
        Self::Ollama,
        Self::OpenAi,
        Self::Xai,
        Self::Volcengine,
    ];

    /// The `type` wire value.
    pub const fn as_str(self) -> &'static str {
        self.spec().type_name
    }

    /// The human-readable title of the type (the schema's `title`).
    pub const fn title(self) -> &'static str {
        self.spec().title
    }

    const fn spec(self) -> SchemaSpec {
        match self {
            Self::Anthropic => anthropic::SCHEMA,
            Self::DashScope => dashscope::SCHEMA,
            Self::DeepSeek => deepseek::SCHEMA,
            Self::Gemini => gemini::SCHEMA,
            Self::MiniMax => minimax::SCHEMA,
            Self::Moonshot => moonshot::SCHEMA,
            Self::Ollama => ollama::SCHEMA,
            Self::OpenAi => openai::SCHEMA,
            Self::Xai => xai::SCHEMA,
            Self::Volcengine => volcengine::SCHEMA,
        }
    }

    /// The JSON Schema of this type's payload, for rendering a credential form.
    pub fn json_schema(self) -> Value {
        self.spec().to_json()
    }

    /// The schemas of all types, in registration order: the body of
    /// `GET /credential/schemas`.
    pub fn all_json_schemas() -> Vec<Value> {
        Self::ALL.into_iter().map(Self::json_schema).collect()
    }

    /// The chat model classes a credential of this type drives.
    pub const fn chat_model_classes(self) -> &'static [ModelClass] {
        match self {
            Self::Anthropic => &[ModelClass::AnthropicChat],
            Self::DashScope => &[ModelClass::DashScopeChat],
            Self::DeepSeek => &[ModelClass::DeepSeekChat],
            Self::Gemini => &[ModelClass::GeminiChat],
            Self::MiniMax => &[ModelClass::MiniMaxChat],
            Self::Moonshot => &[ModelClass::MoonshotChat],
            Self::Ollama => &[ModelClass::OllamaChat],
            Self::OpenAi => &[ModelClass::OpenAiChat, ModelClass::OpenAiResponse],
            Self::Xai => &[ModelClass::XaiChat],
            Self::Volcengine => &[ModelClass::VolcengineChat],
        }
    }

    /// The embedding family a credential of this type drives, if any.
    pub const fn embedding_family(self) -> Option<EmbeddingFamily> {
        match self {
            Self::OpenAi => Some(EmbeddingFamily::OpenAi),
            Self::DashScope => Some(EmbeddingFamily::DashScope),
            Self::Gemini => Some(EmbeddingFamily::Gemini),
            Self::Ollama => Some(EmbeddingFamily::Ollama),
            Self::Anthropic
            | Self::DeepSeek
            | Self::MiniMax
            | Self::Moonshot
            | Self::Xai
            | Self::Volcengine => None,
        }
    }

    /// Where requests go when a credential of this type names no endpoint:
    /// the default of its endpoint field, or the provider's public API when
    /// that field defaults to `null`.
    pub const fn default_base_url(self) -> &'static str {
        match self {
            Self::Anthropic => "https://api.anthropic.com",
            Self::DashScope => super::DashScopeCredential::DEFAULT_BASE_URL,
            Self::DeepSeek => super::DeepSeekCredential::DEFAULT_BASE_URL,
            Self::Gemini => "https://generativelanguage.googleapis.com",
            Self::MiniMax => super::MiniMaxCredential::DEFAULT_BASE_URL,
            Self::Moonshot => super::MoonshotCredential::DEFAULT_BASE_URL,
            Self::Ollama => super::OllamaCredential::DEFAULT_HOST,
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Xai => "https://api.x.ai",
            Self::Volcengine => super::VolcengineCredential::DEFAULT_BASE_URL,
        }
    }

    /// The model cards of every chat class of this type, sorted by name
    /// (cards of the same name keep the order of
    /// [`chat_model_classes`](Self::chat_model_classes)).
    ///
    /// # Errors
    /// As [`ModelClass::list_models`].
    pub fn list_models(self) -> Result<Vec<ModelCard>> {
        let mut cards = Vec::new();
        for class in self.chat_model_classes() {
            cards.extend(class.list_models()?);
        }
        cards.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(cards)
    }
}

impl fmt::Display for CredentialType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CredentialType {
    type Err = Error;

    fn from_str(type_name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == type_name)
            .ok_or_else(|| Error::UnknownCredentialType {
                type_name: type_name.to_owned(),
            })
    }
}
