//! [`Provider`]: the providers a user can name, each a credential type and
//! a chat model class, with the environment variables its vendor's SDKs
//! read and a default model. The console's `--provider` list, its help
//! and its errors come from this table, and its models are built through
//! [`chat_model_with`], so a provider that is listed can always chat.

use std::fmt;
use std::sync::Arc;

use oxiscope_model::{
    AnthropicCredential, Credential, CredentialType, DashScopeCredential, DeepSeekCredential,
    DynChatModel, GeminiCredential, MiniMaxCredential, ModelClass, ModelError, MoonshotCredential,
    OllamaCredential, OpenAiCredential, VolcengineCredential, XaiCredential,
};

use crate::{MediaPolicy, ModelConfig, chat_model_with};

/// A provider a user can name: a credential type and a chat model class,
/// the variables holding its key and endpoint, and its default model.
///
/// ```
/// use oxiscope_model::{CredentialType, ModelClass};
/// use oxiscope_providers::{ModelConfig, Provider};
///
/// let gemini = Provider::find("Gemini").ok_or("not listed")?;
/// assert_eq!(gemini.model_class, ModelClass::GeminiChat);
/// assert_eq!(gemini.credential_type(), CredentialType::Gemini);
/// assert_eq!(gemini.key_vars, ["GOOGLE_API_KEY", "GEMINI_API_KEY"]);
///
/// let config = ModelConfig::new(gemini.default_model.ok_or("no default")?);
/// let model = gemini.chat_model(Some("g-key"), None, &config, &Default::default())?;
/// assert_eq!(model.model_name(), "gemini-2.5-flash");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Provider {
    /// The name users give (`--provider openai-responses`): lower case,
    /// unique.
    pub name: &'static str,
    /// What it is, for help texts.
    pub label: &'static str,
    /// The chat model class its models are (which fixes the credential
    /// type).
    pub model_class: ModelClass,
    /// The variables holding the API key, looked up in this order (as the
    /// vendor's own SDKs do); empty when the provider takes no key from the
    /// environment.
    pub key_vars: &'static [&'static str],
    /// The variable holding the endpoint, when the vendor's SDK reads one.
    pub url_var: Option<&'static str>,
    /// Whether calls need an API key.
    pub needs_key: bool,
    /// Whether there is no endpoint to fall back on (a self-hosted server).
    pub needs_base_url: bool,
    /// The model used when none is named: a current, tool-capable one
    /// from the class's model cards.
    pub default_model: Option<&'static str>,
}

/// Every provider, in the order one is picked when none is named: the
/// first whose key (or, without a key, whose endpoint variable) is set.
const PROVIDERS: [Provider; 12] = [
    Provider {
        name: "openai",
        label: "OpenAI, Chat Completions API",
        model_class: ModelClass::OpenAiChat,
        key_vars: &["OPENAI_API_KEY"],
        url_var: Some("OPENAI_BASE_URL"),
        needs_key: true,
        needs_base_url: false,
        default_model: Some("gpt-4.1-mini"),
    },
    Provider {
        name: "openai-responses",
        label: "OpenAI, Responses API",
        model_class: ModelClass::OpenAiResponse,
        key_vars: &["OPENAI_API_KEY"],
        url_var: Some("OPENAI_BASE_URL"),
        needs_key: true,
        needs_base_url: false,
        default_model: Some("gpt-4.1-mini"),
    },
    Provider {
        name: "anthropic",
        label: "Anthropic, Messages API",
        model_class: ModelClass::AnthropicChat,
        key_vars: &["ANTHROPIC_API_KEY"],
        url_var: Some("ANTHROPIC_BASE_URL"),
        needs_key: true,
        needs_base_url: false,
        default_model: Some("claude-sonnet-4-5"),
    },
    Provider {
        name: "ollama",
        label: "a local Ollama server",
        model_class: ModelClass::OllamaChat,
        key_vars: &[],
        url_var: Some("OLLAMA_HOST"),
        needs_key: false,
        needs_base_url: false,
        default_model: Some("qwen3"),
    },
    Provider {
        name: "deepseek",
        label: "DeepSeek",
        model_class: ModelClass::DeepSeekChat,
        key_vars: &["DEEPSEEK_API_KEY"],
        url_var: None,
        needs_key: true,
        needs_base_url: false,
        default_model: Some("deepseek-v4-flash"),
    },
    Provider {
        name: "moonshot",
        label: "Moonshot AI (Kimi)",
        model_class: ModelClass::MoonshotChat,
        key_vars: &["MOONSHOT_API_KEY"],
        url_var: None,
        needs_key: true,
        needs_base_url: false,
        default_model: Some("kimi-k2.6"),
    },
    Provider {
        name: "xai",
        label: "xAI (Grok)",
        model_class: ModelClass::XaiChat,
        key_vars: &["XAI_API_KEY"],
        url_var: None,
        needs_key: true,
        needs_base_url: false,
        default_model: Some("grok-4.3"),
    },
    Provider {
        name: "volcengine",
        label: "Volcengine Ark (Doubao)",
        model_class: ModelClass::VolcengineChat,
        key_vars: &["ARK_API_KEY"],
        url_var: None,
        needs_key: true,
        needs_base_url: false,
        default_model: Some("doubao-seed-2-1-lite-260915"),
    },
    Provider {
        name: "dashscope",
        label: "Alibaba DashScope (Qwen), OpenAI-compatible mode",
        model_class: ModelClass::DashScopeChat,
        key_vars: &["DASHSCOPE_API_KEY"],
        url_var: None,
        needs_key: true,
        needs_base_url: false,
        default_model: Some("qwen-plus"),
    },
    Provider {
        name: "gemini",
        label: "Google Gemini API",
        model_class: ModelClass::GeminiChat,
        key_vars: &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
        url_var: Some("GOOGLE_GEMINI_BASE_URL"),
        needs_key: true,
        needs_base_url: false,
        default_model: Some("gemini-2.5-flash"),
    },
    Provider {
        name: "minimax",
        label: "MiniMax, Anthropic-compatible API",
        model_class: ModelClass::MiniMaxChat,
        key_vars: &["MINIMAX_API_KEY"],
        url_var: None,
        needs_key: true,
        needs_base_url: false,
        default_model: Some("MiniMax-M2.7"),
    },
    Provider {
        name: "vllm",
        label: "a vLLM (or other OpenAI-compatible) server",
        model_class: ModelClass::OpenAiChat,
        key_vars: &[],
        url_var: None,
        needs_key: false,
        needs_base_url: true,
        default_model: None,
    },
];

/// The Gemini API version a base URL without one gets, as Google's SDKs
/// add it.
const GEMINI_API_VERSION: &str = "v1beta";

impl Provider {
    /// Every provider, in the order one is inferred from the environment.
    pub fn all() -> &'static [Self] {
        &PROVIDERS
    }

    /// The provider named `name` (case and surrounding spaces ignored).
    pub fn find(name: &str) -> Option<&'static Self> {
        let wanted = name.trim();
        PROVIDERS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(wanted))
    }

    /// The providers' names, comma-separated, for error messages.
    pub fn names() -> String {
        let names: Vec<&str> = PROVIDERS.iter().map(|p| p.name).collect();
        names.join(", ")
    }

    /// The credential type its calls authenticate with.
    pub const fn credential_type(&self) -> CredentialType {
        self.model_class.credential_type()
    }

    /// Whether this build serves its model class (the family's feature of
    /// this crate is on); [`chat_model`](Self::chat_model) refuses one it
    /// does not, naming the feature.
    // With every feature on, each arm is `true`: no `matches!` then.
    #[allow(clippy::match_like_matches_macro)]
    pub const fn served(&self) -> bool {
        match self.model_class {
            ModelClass::AnthropicChat => cfg!(feature = "anthropic"),
            ModelClass::MiniMaxChat => cfg!(feature = "minimax"),
            ModelClass::OllamaChat => cfg!(feature = "ollama"),
            ModelClass::GeminiChat => cfg!(feature = "gemini"),
            ModelClass::OpenAiResponse => cfg!(feature = "openai_response"),
            ModelClass::OpenAiChat
            | ModelClass::DeepSeekChat
            | ModelClass::MoonshotChat
            | ModelClass::XaiChat
            | ModelClass::VolcengineChat
            | ModelClass::DashScopeChat => cfg!(feature = "openai"),
            _ => false,
        }
    }

    /// The API key in the environment `env` reads: the first of
    /// [`key_vars`](Self::key_vars) that is set and not blank.
    pub fn key_from_env(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        self.key_vars
            .iter()
            .find_map(|var| env(var).filter(|v| !v.trim().is_empty()))
    }

    /// How a missing key is named in messages: `OPENAI_API_KEY`, or
    /// `GOOGLE_API_KEY or GEMINI_API_KEY`.
    pub fn key_vars_text(&self) -> String {
        self.key_vars.join(" or ")
    }

    /// A credential of its type holding `api_key` and pointing at
    /// `base_url` (the type's default endpoint when `None`). A Gemini
    /// credential has no endpoint field: [`chat_model`](Self::chat_model)
    /// applies the base URL to the model instead. An xAI base URL with a
    /// scheme names the whole endpoint.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] for a credential type this version
    /// cannot build.
    pub fn credential(
        &self,
        api_key: Option<&str>,
        base_url: Option<&str>,
    ) -> Result<Credential, ModelError> {
        let key = api_key.unwrap_or_default().to_owned();
        let url = base_url.map(str::to_owned);
        let credential = match self.credential_type() {
            CredentialType::OpenAi => with_url(
                OpenAiCredential::new(key),
                url,
                OpenAiCredential::with_base_url,
            )
            .into(),
            CredentialType::Anthropic => with_url(
                AnthropicCredential::new(key),
                url,
                AnthropicCredential::with_base_url,
            )
            .into(),
            CredentialType::Ollama => {
                with_url(OllamaCredential::new(), url, OllamaCredential::with_host).into()
            }
            CredentialType::DeepSeek => with_url(
                DeepSeekCredential::new(key),
                url,
                DeepSeekCredential::with_base_url,
            )
            .into(),
            CredentialType::Moonshot => with_url(
                MoonshotCredential::new(key),
                url,
                MoonshotCredential::with_base_url,
            )
            .into(),
            CredentialType::Volcengine => with_url(
                VolcengineCredential::new(key),
                url,
                VolcengineCredential::with_base_url,
            )
            .into(),
            CredentialType::DashScope => with_url(
                DashScopeCredential::new(key),
                url,
                DashScopeCredential::with_base_url,
            )
            .into(),
            CredentialType::Xai => {
                with_url(XaiCredential::new(key), url, XaiCredential::with_api_host).into()
            }
            CredentialType::MiniMax => with_url(
                MiniMaxCredential::new(key),
                url,
                MiniMaxCredential::with_base_url,
            )
            .into(),
            CredentialType::Gemini => GeminiCredential::new(key).into(),
            other => {
                return Err(ModelError::InvalidRequest {
                    message: format!("provider {}: cannot build a {other}", self.name),
                });
            }
        };
        Ok(credential)
    }

    /// Where requests go with `base_url` (the provider's default endpoint
    /// when `None`). A Gemini base URL without an API version
    /// (`http://proxy:8080`, as `GOOGLE_GEMINI_BASE_URL` is written for
    /// Google's SDKs) gets `/v1beta`.
    pub fn endpoint(&self, base_url: Option<&str>) -> String {
        if self.model_class == ModelClass::GeminiChat {
            let base = base_url.unwrap_or(CredentialType::Gemini.default_base_url());
            return gemini_endpoint(base);
        }
        match self.credential(None, base_url) {
            Ok(credential) => match (&credential, base_url) {
                (Credential::Xai(_), Some(url)) if url.contains("://") => url.to_owned(),
                _ => credential.base_url(),
            },
            Err(_) => base_url.unwrap_or_default().to_owned(),
        }
    }

    /// Its chat model named by `config`, called with `api_key` at
    /// `base_url`, through [`chat_model_with`]; `config`'s class may be
    /// empty (this provider's is used). Nothing is sent.
    ///
    /// # Errors
    /// [`ModelError::InvalidRequest`] when `config` names another class,
    /// and as [`chat_model_with`] (a class this build does not serve, a
    /// parameter of the wrong type).
    pub fn chat_model(
        &self,
        api_key: Option<&str>,
        base_url: Option<&str>,
        config: &ModelConfig,
        media: &MediaPolicy,
    ) -> Result<Arc<dyn DynChatModel>, ModelError> {
        if !config.model_class.is_empty() && config.model_class != self.model_class.as_str() {
            return Err(ModelError::InvalidRequest {
                message: format!(
                    "provider {} serves {}, not {}",
                    self.name, self.model_class, config.model_class
                ),
            });
        }
        let config = config.clone().with_model_class(self.model_class.as_str());
        let credential = self.credential(api_key, base_url)?;
        match base_url {
            Some(url) if self.model_class == ModelClass::GeminiChat => {
                crate::factory::gemini(&credential, &config, media, Some(&gemini_endpoint(url)))
            }
            _ => chat_model_with(&credential, &config, media),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// `credential` with its endpoint set to `url`, when there is one.
fn with_url<C>(credential: C, url: Option<String>, set: fn(C, String) -> C) -> C {
    match url {
        Some(url) => set(credential, url),
        None => credential,
    }
}

/// A Gemini base URL with its API version: kept when its last path
/// segment is one (`v1`, `v1beta`, `v1alpha`), else `/v1beta` added.
fn gemini_endpoint(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    let last = after_scheme
        .split_once('/')
        .and_then(|(_, path)| path.rsplit('/').next())
        .unwrap_or_default();
    let versioned = last.starts_with("v1") && last.bytes().all(|b| b.is_ascii_alphanumeric());
    if versioned {
        base.to_owned()
    } else {
        format!("{base}/{GEMINI_API_VERSION}")
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_gemini_base_url_gets_the_api_version_unless_it_has_one() {
        let cases = [
            ("http://127.0.0.1:9", "http://127.0.0.1:9/v1beta"),
            ("http://127.0.0.1:9/", "http://127.0.0.1:9/v1beta"),
            ("https://proxy/gemini", "https://proxy/gemini/v1beta"),
            ("https://proxy/v1beta/", "https://proxy/v1beta"),
            ("https://proxy/v1", "https://proxy/v1"),
            ("https://proxy/v1alpha", "https://proxy/v1alpha"),
            ("https://v1beta", "https://v1beta/v1beta"),
        ];
        for (base, endpoint) in cases {
            assert_eq!(gemini_endpoint(base), endpoint, "{base}");
        }
    }

    #[test]
    fn names_are_unique_and_lower_case() {
        let mut names: Vec<&str> = Provider::all().iter().map(|p| p.name).collect();
        assert!(names.iter().all(|n| *n == n.to_ascii_lowercase()));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Provider::all().len());
    }
}
