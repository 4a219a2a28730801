//! [`Credential`]: a credential of any registered type.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    AnthropicCredential, CredentialType, DashScopeCredential, DeepSeekCredential, GeminiCredential,
    MiniMaxCredential, MoonshotCredential, OllamaCredential, OpenAiCredential,
    VolcengineCredential, XaiCredential,
};
use crate::{Error, ModelCard, Result, Secret};

/// A credential of any registered type, told apart by its `type` field.
///
/// Serialising gives the public view: every secret is written as
/// `"**********"`, exactly like AgentScope's API responses, so
/// `serde_json::to_string(&credential)` is safe to log or return. The real
/// values are only written by [`Credential::to_storage_json`]. Deserialising
/// reads real values from either view's shape.
///
/// ```
/// use oxiscope_model::{Credential, CredentialType};
///
/// let stored = serde_json::json!({
///     "id": "7c0d0f5e6a2b4f0c9d8e7f6a5b4c3d2e",
///     "type": "anthropic_credential",
///     "api_key": "sk-ant-real",
/// });
/// let credential = Credential::from_json_value(stored)?;
/// assert_eq!(credential.credential_type(), CredentialType::Anthropic);
///
/// let public = serde_json::to_value(&credential)?;
/// assert_eq!(public["api_key"], "**********");
/// assert_eq!(public["name"], "");
///
/// let storage = credential.to_storage_json()?;
/// assert_eq!(storage["api_key"], "sk-ant-real");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Credential {
    /// `anthropic_credential`
    Anthropic(AnthropicCredential),
    /// `dashscope_credential`
    DashScope(DashScopeCredential),
    /// `deepseek_credential`
    DeepSeek(DeepSeekCredential),
    /// `gemini_credential`
    Gemini(GeminiCredential),
    /// `minimax_credential`
    MiniMax(MiniMaxCredential),
    /// `moonshot_credential`
    Moonshot(MoonshotCredential),
    /// `ollama_credential`
    Ollama(OllamaCredential),
    /// `openai_credential`
    OpenAi(OpenAiCredential),
    /// `xai_credential`
    Xai(XaiCredential),
    /// `volcengine_credential`
    Volcengine(VolcengineCredential),
}

impl Credential {
    /// Reads a credential of any registered type from its JSON object.
    ///
    /// Missing `id` gets a fresh one, missing `name` is empty, missing
    /// endpoint fields take their defaults and unknown fields are ignored.
    ///
    /// # Errors
    /// [`Error::MissingCredentialType`] without a string `type`,
    /// [`Error::UnknownCredentialType`] for an unregistered one, and
    /// [`Error::InvalidCredential`] when the fields do not fit the type.
    pub fn from_json_value(value: Value) -> Result<Self> {
        let kind: CredentialType = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or(Error::MissingCredentialType)?
            .parse()?;
        let invalid = |err: serde_json::Error| Error::InvalidCredential {
            type_name: kind.as_str().to_owned(),
            message: err.to_string(),
        };
        let credential = match kind {
            CredentialType::Anthropic => Self::Anthropic(from_value(value).map_err(invalid)?),
            CredentialType::DashScope => Self::DashScope(from_value(value).map_err(invalid)?),
            CredentialType::DeepSeek => Self::DeepSeek(from_value(value).map_err(invalid)?),
            CredentialType::Gemini => Self::Gemini(from_value(value).map_err(invalid)?),
            CredentialType::MiniMax => Self::MiniMax(from_value(value).map_err(invalid)?),
            CredentialType::Moonshot => Self::Moonshot(from_value(value).map_err(invalid)?),
            CredentialType::Ollama => Self::Ollama(from_value(value).map_err(invalid)?),
            CredentialType::OpenAi => Self::OpenAi(from_value(value).map_err(invalid)?),
            CredentialType::Xai => Self::Xai(from_value(value).map_err(invalid)?),
            CredentialType::Volcengine => Self::Volcengine(from_value(value).map_err(invalid)?),
        };
        Ok(credential)
    }

    /// The storage view: the same JSON as the public view, but with every
    /// secret written out in full. Use it only to persist the credential
    /// (encrypted at rest); never send it to a client.
    ///
    /// # Errors
    /// [`Error::InvalidCredential`] if serialisation fails, which the
    /// credential types never make it do.
    pub fn to_storage_json(&self) -> Result<Value> {
        let mut value = serde_json::to_value(self).map_err(|err| Error::InvalidCredential {
            type_name: self.credential_type().as_str().to_owned(),
            message: err.to_string(),
        })?;
        if let Value::Object(fields) = &mut value {
            for (field, secret) in self.secrets() {
                fields.insert(field.to_owned(), Value::from(secret.expose()));
            }
        }
        Ok(value)
    }

    /// The credential's type.
    pub const fn credential_type(&self) -> CredentialType {
        match self {
            Self::Anthropic(_) => CredentialType::Anthropic,
            Self::DashScope(_) => CredentialType::DashScope,
            Self::DeepSeek(_) => CredentialType::DeepSeek,
            Self::Gemini(_) => CredentialType::Gemini,
            Self::MiniMax(_) => CredentialType::MiniMax,
            Self::Moonshot(_) => CredentialType::Moonshot,
            Self::Ollama(_) => CredentialType::Ollama,
            Self::OpenAi(_) => CredentialType::OpenAi,
            Self::Xai(_) => CredentialType::Xai,
            Self::Volcengine(_) => CredentialType::Volcengine,
        }
    }

    /// The credential's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Anthropic(c) => &c.id,
            Self::DashScope(c) => &c.id,
            Self::DeepSeek(c) => &c.id,
            Self::Gemini(c) => &c.id,
            Self::MiniMax(c) => &c.id,
            Self::Moonshot(c) => &c.id,
            Self::Ollama(c) => &c.id,
            Self::OpenAi(c) => &c.id,
            Self::Xai(c) => &c.id,
            Self::Volcengine(c) => &c.id,
        }
    }

    /// The credential's display name.
    pub fn name(&self) -> &str {
        match self {
            Self::Anthropic(c) => &c.name,
            Self::DashScope(c) => &c.name,
            Self::DeepSeek(c) => &c.name,
            Self::Gemini(c) => &c.name,
            Self::MiniMax(c) => &c.name,
            Self::Moonshot(c) => &c.name,
            Self::Ollama(c) => &c.name,
            Self::OpenAi(c) => &c.name,
            Self::Xai(c) => &c.name,
            Self::Volcengine(c) => &c.name,
        }
    }

    /// The secret fields, by wire name.
    pub fn secrets(&self) -> Vec<(&'static str, &Secret)> {
        let api_key = match self {
            Self::Anthropic(c) => &c.api_key,
            Self::DashScope(c) => &c.api_key,
            Self::DeepSeek(c) => &c.api_key,
            Self::Gemini(c) => &c.api_key,
            Self::MiniMax(c) => &c.api_key,
            Self::Moonshot(c) => &c.api_key,
            Self::OpenAi(c) => &c.api_key,
            Self::Xai(c) => &c.api_key,
            Self::Volcengine(c) => &c.api_key,
            Self::Ollama(_) => return Vec::new(),
        };
        vec![("api_key", api_key)]
    }

    /// The endpoint requests go to: the credential's own endpoint field, or
    /// [`CredentialType::default_base_url`] when it is unset. For xAI the
    /// host gets an `https://` scheme.
    pub fn base_url(&self) -> String {
        let own = match self {
            Self::Anthropic(c) => c.base_url.clone(),
            Self::OpenAi(c) => c.base_url.clone(),
            Self::Ollama(c) => c.host.clone(),
            Self::DashScope(c) => Some(c.base_url.clone()),
            Self::DeepSeek(c) => Some(c.base_url.clone()),
            Self::MiniMax(c) => Some(c.base_url.clone()),
            Self::Moonshot(c) => Some(c.base_url.clone()),
            Self::Volcengine(c) => Some(c.base_url.clone()),
            Self::Xai(c) => Some(format!("https://{}", c.api_host)),
            Self::Gemini(_) => None,
        };
        own.unwrap_or_else(|| self.credential_type().default_base_url().to_owned())
    }

    /// The model cards this credential can use; see
    /// [`CredentialType::list_models`].
    ///
    /// # Errors
    /// As [`CredentialType::list_models`].
    pub fn list_models(&self) -> Result<Vec<ModelCard>> {
        self.credential_type().list_models()
    }
}

fn from_value<T: de::DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    serde_json::from_value(value)
}

impl<'de> Deserialize<'de> for Credential {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_json_value(value).map_err(de::Error::custom)
    }
}

macro_rules! from_variant {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(
            impl From<$ty> for Credential {
                fn from(credential: $ty) -> Self {
                    Self::$variant(credential)
                }
            }
        )*
    };
}

from_variant!(
    Anthropic(AnthropicCredential),
    DashScope(DashScopeCredential),
    DeepSeek(DeepSeekCredential),
    Gemini(GeminiCredential),
    MiniMax(MiniMaxCredential),
    Moonshot(MoonshotCredential),
    Ollama(OllamaCredential),
    OpenAi(OpenAiCredential),
    Xai(XaiCredential),
    Volcengine(VolcengineCredential),
);
