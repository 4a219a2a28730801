//! The providers `oxiscope chat` can talk to, their environment variables
//! and defaults, and building the chat model.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::Context as _;
use oxiscope_model::DynChatModel;
use oxiscope_providers::anthropic::AnthropicChatModel;
use oxiscope_providers::ollama::OllamaChatModel;
use oxiscope_providers::openai_chat::{OpenAiChatModel, Vendor};

/// A model provider: a wire family, or a vendor speaking OpenAI's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    OpenAi,
    Anthropic,
    Ollama,
    DeepSeek,
    Moonshot,
    Xai,
    Volcengine,
    DashScope,
    Vllm,
}

impl Provider {
    pub(crate) const ALL: [Self; 9] = [
        Self::OpenAi,
        Self::Anthropic,
        Self::Ollama,
        Self::DeepSeek,
        Self::Moonshot,
        Self::Xai,
        Self::Volcengine,
        Self::DashScope,
        Self::Vllm,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::DeepSeek => "deepseek",
            Self::Moonshot => "moonshot",
            Self::Xai => "xai",
            Self::Volcengine => "volcengine",
            Self::DashScope => "dashscope",
            Self::Vllm => "vllm",
        }
    }

    /// The variable holding the provider's API key.
    pub(crate) fn key_var(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("OPENAI_API_KEY"),
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::DeepSeek => Some("DEEPSEEK_API_KEY"),
            Self::Moonshot => Some("MOONSHOT_API_KEY"),
            Self::Xai => Some("XAI_API_KEY"),
            Self::Volcengine => Some("ARK_API_KEY"),
            Self::DashScope => Some("DASHSCOPE_API_KEY"),
            Self::Ollama | Self::Vllm => None,
        }
    }

    /// The variable holding the provider's endpoint.
    pub(crate) fn url_var(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("OPENAI_BASE_URL"),
            Self::Anthropic => Some("ANTHROPIC_BASE_URL"),
            Self::Ollama => Some("OLLAMA_HOST"),
            _ => None,
        }
    }

    /// Whether calls need an API key.
    pub(crate) fn needs_key(self) -> bool {
        !matches!(self, Self::Ollama | Self::Vllm)
    }

    /// The model used when none is configured.
    pub(crate) fn default_model(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("gpt-4.1-mini"),
            Self::Anthropic => Some("claude-sonnet-4-5"),
            Self::Ollama => Some("qwen3"),
            Self::DeepSeek => Some("deepseek-chat"),
            Self::DashScope => Some("qwen-plus"),
            Self::Moonshot | Self::Xai | Self::Volcengine | Self::Vllm => None,
        }
    }

    fn vendor(self) -> Option<Vendor> {
        match self {
            Self::OpenAi => Some(Vendor::OpenAi),
            Self::DeepSeek => Some(Vendor::DeepSeek),
            Self::Moonshot => Some(Vendor::Moonshot),
            Self::Xai => Some(Vendor::Xai),
            Self::Volcengine => Some(Vendor::Volcengine),
            Self::DashScope => Some(Vendor::DashScope),
            Self::Vllm => Some(Vendor::Vllm),
            Self::Anthropic | Self::Ollama => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let wanted = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.as_str()).collect();
                format!(
                    "unknown provider {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// Everything needed to reach a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelSettings {
    pub(crate) provider: Provider,
    pub(crate) model: String,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
}

impl ModelSettings {
    /// The chat model these settings describe.
    pub(crate) fn build(&self) -> anyhow::Result<Arc<dyn DynChatModel>> {
        let key = self.api_key.clone().unwrap_or_default();
        let model: Arc<dyn DynChatModel> = match self.provider {
            Provider::Anthropic => {
                let mut m = AnthropicChatModel::new(key, self.model.clone())?;
                if let Some(url) = &self.base_url {
                    m = m.with_base_url(url.clone());
                }
                Arc::new(m)
            }
            Provider::Ollama => {
                let mut m = OllamaChatModel::new(self.model.clone())?;
                if let Some(url) = &self.base_url {
                    m = m.with_host(url.clone());
                }
                Arc::new(m)
            }
            other => {
                let vendor = other.vendor().unwrap_or_default();
                let mut b = OpenAiChatModel::builder(self.model.clone())
                    .with_vendor(vendor)
                    .with_api_key(key);
                if let Some(url) = &self.base_url {
                    b = b.with_base_url(url.clone());
                }
                Arc::new(
                    b.build()
                        .with_context(|| format!("cannot set up {other}"))?,
                )
            }
        };
        Ok(model)
    }
}
