//! The chat model classes and embedding families this crate knows.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CredentialType, Error, ModelCard, Result};

/// A chat model implementation, named by its `model_class` wire value.
///
/// One credential type can drive several classes (OpenAI has Chat
/// Completions and Responses); each class has one base parameter schema and
/// one set of shipped model cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ModelClass {
    /// `anthropic_chat`: Anthropic Messages API.
    #[serde(rename = "anthropic_chat")]
    AnthropicChat,
    /// `dashscope_chat`: DashScope (OpenAI-compatible mode).
    #[serde(rename = "dashscope_chat")]
    DashScopeChat,
    /// `deepseek_chat`: DeepSeek chat completions.
    #[serde(rename = "deepseek_chat")]
    DeepSeekChat,
    /// `gemini_chat`: Google Gemini.
    #[serde(rename = "gemini_chat")]
    GeminiChat,
    /// `minimax_chat`: MiniMax through its Anthropic-compatible API.
    #[serde(rename = "minimax_chat")]
    MiniMaxChat,
    /// `moonshot_chat`: Moonshot AI (Kimi).
    #[serde(rename = "moonshot_chat")]
    MoonshotChat,
    /// `ollama_chat`: an Ollama server.
    #[serde(rename = "ollama_chat")]
    OllamaChat,
    /// `openai_chat`: OpenAI Chat Completions.
    #[serde(rename = "openai_chat")]
    OpenAiChat,
    /// `openai_response`: OpenAI Responses API.
    #[serde(rename = "openai_response")]
    OpenAiResponse,
    /// `xai_chat`: xAI Grok.
    #[serde(rename = "xai_chat")]
    XaiChat,
    /// `volcengine_chat`: Volcengine Ark (Doubao).
    #[serde(rename = "volcengine_chat")]
    VolcengineChat,
}

impl ModelClass {
    /// Every class, grouped by credential type in registration order.
    pub const ALL: [Self; 11] = [
        Self::AnthropicChat,
        Self::DashScopeChat,
        Self::DeepSeekChat,
        Self::GeminiChat,
        Self::MiniMaxChat,
        Self::MoonshotChat,
        Self::OllamaChat,
        Self::OpenAiChat,
        Self::OpenAiResponse,
        Self::XaiChat,
        Self::VolcengineChat,
    ];

    /// The `model_class` wire value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AnthropicChat => "anthropic_chat",
            Self::DashScopeChat => "dashscope_chat",
            Self::DeepSeekChat => "deepseek_chat",
            Self::GeminiChat => "gemini_chat",
            Self::MiniMaxChat => "minimax_chat",
            Self::MoonshotChat => "moonshot_chat",
            Self::OllamaChat => "ollama_chat",
            Self::OpenAiChat => "openai_chat",
            Self::OpenAiResponse => "openai_response",
            Self::XaiChat => "xai_chat",
            Self::VolcengineChat => "volcengine_chat",
        }
    }

    /// The credential type this class authenticates with.
    pub const fn credential_type(self) -> CredentialType {
        match self {
            Self::AnthropicChat => CredentialType::Anthropic,
            Self::DashScopeChat => CredentialType::DashScope,
            Self::DeepSeekChat => CredentialType::DeepSeek,
            Self::GeminiChat => CredentialType::Gemini,
            Self::MiniMaxChat => CredentialType::MiniMax,
            Self::MoonshotChat => CredentialType::Moonshot,
            Self::OllamaChat => CredentialType::Ollama,
            Self::OpenAiChat | Self::OpenAiResponse => CredentialType::OpenAi,
            Self::XaiChat => CredentialType::Xai,
            Self::VolcengineChat => CredentialType::Volcengine,
        }
    }

    /// The class's base parameter schema, before any card's overrides: a
    /// JSON Schema object (`type`, `properties`, `required`).
    pub fn parameter_schema(self) -> Value {
        crate::params::base_schema(self)
    }

    /// The shipped model cards of this class, sorted by name.
    ///
    /// # Errors
    /// [`Error::InvalidCardYaml`] or [`Error::InvalidCard`] if a shipped card
    /// file is broken (the crate's tests load every file, so a release never
    /// does this).
    pub fn list_models(self) -> Result<Vec<ModelCard>> {
        crate::card::shipped_cards(self)
    }

    /// The context window of the shipped card named `model` (a `provider/`
    /// prefix is ignored), or `None` for a model without a card.
    #[must_use]
    pub fn context_size_of(self, model: &str) -> Option<u64> {
        let bare = model.rsplit('/').next().unwrap_or(model);
        crate::card::with_shipped_cards(self, |cards| {
            cards
                .iter()
                .find(|c| c.name == model || c.name == bare)
                .map(|c| c.context_size.get())
        })
        .ok()
        .flatten()
    }
}

impl fmt::Display for ModelClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ModelClass {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|class| class.as_str() == name)
            .ok_or_else(|| Error::UnknownModelClass {
                name: name.to_owned(),
            })
    }
}

/// An embedding model implementation that a credential type can drive.
///
/// AgentScope's embedding cards carry no `model_class`, so these names are
/// Oxiscope's own; they identify the family within this workspace only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EmbeddingFamily {
    /// OpenAI embeddings (`openai_embedding`).
    OpenAi,
    /// DashScope text and multimodal embeddings (`dashscope_embedding`).
    DashScope,
    /// Gemini embeddings (`gemini_embedding`).
    Gemini,
    /// Ollama embeddings (`ollama_embedding`).
    Ollama,
}

impl EmbeddingFamily {
    /// The family's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai_embedding",
            Self::DashScope => "dashscope_embedding",
            Self::Gemini => "gemini_embedding",
            Self::Ollama => "ollama_embedding",
        }
    }
}

impl fmt::Display for EmbeddingFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
