//! The providers `oxiscope chat` can talk to, their environment variables
//! and defaults, and building the chat model.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::Context as _;
use oxiscope_model::{
    AnthropicCredential, Credential, DashScopeCredential, DeepSeekCredential, DynChatModel,
    MoonshotCredential, OllamaCredential, OpenAiCredential, VolcengineCredential, XaiCredential,
};
use oxiscope_providers::anthropic::DEFAULT_MAX_TOKENS;
use oxiscope_providers::{ModelConfig, chat_model};

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
        let mut config = ModelConfig::new(self.model.clone());
        if self.provider == Provider::Anthropic {
            // The console has always capped Claude's replies at this; the
            // factory alone would take the model card's output size.
            config = config.with_parameter("max_tokens", DEFAULT_MAX_TOKENS);
        }
        chat_model(&self.credential(), &config)
            .with_context(|| format!("cannot set up {}", self.provider))
    }

    /// Where requests go: the configured endpoint, else the provider's.
    pub(crate) fn endpoint(&self) -> String {
        self.credential().base_url()
    }

    /// The credential of the provider's type holding the key and endpoint
    /// (vLLM is an OpenAI credential with its base URL; an xAI host with a
    /// scheme is taken as the whole base URL).
    fn credential(&self) -> Credential {
        let key = self.api_key.clone().unwrap_or_default();
        let url = self.base_url.clone();
        match self.provider {
            Provider::OpenAi | Provider::Vllm => {
                let c = OpenAiCredential::new(key);
                with_url(c, url, OpenAiCredential::with_base_url).into()
            }
            Provider::Anthropic => {
                let c = AnthropicCredential::new(key);
                with_url(c, url, AnthropicCredential::with_base_url).into()
            }
            Provider::Ollama => {
                let c = OllamaCredential::new();
                with_url(c, url, OllamaCredential::with_host).into()
            }
            Provider::DeepSeek => {
                let c = DeepSeekCredential::new(key);
                with_url(c, url, DeepSeekCredential::with_base_url).into()
            }
            Provider::Moonshot => {
                let c = MoonshotCredential::new(key);
                with_url(c, url, MoonshotCredential::with_base_url).into()
            }
            Provider::Volcengine => {
                let c = VolcengineCredential::new(key);
                with_url(c, url, VolcengineCredential::with_base_url).into()
            }
            Provider::DashScope => {
                let c = DashScopeCredential::new(key);
                with_url(c, url, DashScopeCredential::with_base_url).into()
            }
            Provider::Xai => {
                let c = XaiCredential::new(key);
                with_url(c, url, XaiCredential::with_api_host).into()
            }
        }
    }
}

/// `credential` with its endpoint set to `url`, when there is one.
fn with_url<C>(credential: C, url: Option<String>, set: fn(C, String) -> C) -> C {
    match url {
        Some(url) => set(credential, url),
        None => credential,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn settings(provider: Provider) -> ModelSettings {
        ModelSettings {
            provider,
            model: "some-model".to_owned(),
            base_url: Some("http://127.0.0.1:9/v1".to_owned()),
            api_key: Some("sk-test".to_owned()),
        }
    }

    #[test]
    fn each_provider_is_a_credential_of_its_type_with_the_key_and_endpoint() {
        for provider in Provider::ALL {
            let credential = settings(provider).credential();
            let kind = match provider {
                Provider::Vllm => "openai",
                other => other.as_str(),
            };
            assert_eq!(
                credential.credential_type().as_str(),
                format!("{kind}_credential")
            );
            let endpoint = match &credential {
                Credential::Xai(c) => c.api_host.clone(),
                other => other.base_url(),
            };
            assert_eq!(endpoint, "http://127.0.0.1:9/v1", "{provider}");
            let key = credential
                .secrets()
                .first()
                .map(|(_, s)| s.expose().to_owned());
            let expected = (provider != Provider::Ollama).then(|| "sk-test".to_owned());
            assert_eq!(key, expected, "{provider}");
        }
    }

    #[tokio::test]
    async fn every_provider_builds_its_model_without_calling_it() {
        for provider in Provider::ALL {
            let model = settings(provider).build().unwrap();
            assert_eq!(model.model_name(), "some-model");
        }
    }
}
