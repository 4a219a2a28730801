//! [`chat_model_from_env`]: the chat model the environment names, as
//! `oxiscope chat` picks one — for programs (and the examples) that run
//! against whichever provider the user has a key for.

use std::sync::Arc;

use oxiscope_model::{DynChatModel, ModelError};
use oxiscope_providers::{MediaPolicy, ModelConfig, Provider};

/// Why the environment names no usable chat model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvModelError {
    /// `OXISCOPE_PROVIDER` names no provider of the registry.
    #[error("unknown provider {name:?} in OXISCOPE_PROVIDER: expected one of {expected}")]
    UnknownProvider {
        /// The name given.
        name: String,
        /// Every name, comma-separated.
        expected: String,
    },
    /// The provider's wire family is not compiled in (its feature is off).
    #[error("provider {0} is left out of this build (turn on its feature of oxiscope)")]
    NotServed(&'static str),
    /// No provider was named and none has its key in the environment.
    #[error(
        "no model provider is configured: set OPENAI_API_KEY (or another provider's key), \
         or OXISCOPE_PROVIDER"
    )]
    NoProvider,
    /// The provider needs an endpoint and none is set.
    #[error("provider {0} needs an endpoint: set OXISCOPE_BASE_URL")]
    NoBaseUrl(&'static str),
    /// The provider needs a model name and has no default.
    #[error("provider {0} has no default model: set OXISCOPE_MODEL")]
    NoModel(&'static str),
    /// The provider's factory refused the settings.
    #[error("cannot set up provider {provider}: {source}")]
    Model {
        /// The provider's name.
        provider: &'static str,
        /// What the factory said.
        #[source]
        source: Box<ModelError>,
    },
}

/// The chat model the process environment names; see
/// [`chat_model_from_vars`] for the variables.
///
/// # Errors
/// As [`chat_model_from_vars`].
pub fn chat_model_from_env() -> Result<Arc<dyn DynChatModel>, EnvModelError> {
    chat_model_from_vars(&|name| std::env::var(name).ok())
}

/// The chat model the variables `env` reads name: the provider in
/// `OXISCOPE_PROVIDER`, else the first of [`Provider::all`] whose key
/// variable is set (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, ...); the model
/// in `OXISCOPE_MODEL`, else the provider's default; the endpoint in
/// `OXISCOPE_BASE_URL`, else the provider's own variable
/// (`OPENAI_BASE_URL`, ...), else its public endpoint; the key in
/// `OXISCOPE_API_KEY`, else the provider's variables. Nothing is sent.
///
/// ```
/// use std::collections::HashMap;
///
/// let vars = HashMap::from([
///     ("OPENAI_API_KEY", "sk-test"),
///     ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
/// ]);
/// let model = oxiscope::chat_model_from_vars(&|name| vars.get(name).map(|v| v.to_string()))?;
/// assert_eq!(model.model_name(), "gpt-4.1-mini");
///
/// let none = oxiscope::chat_model_from_vars(&|_| None);
/// assert!(matches!(none, Err(oxiscope::EnvModelError::NoProvider)));
/// # Ok::<(), oxiscope::EnvModelError>(())
/// ```
///
/// # Errors
/// [`EnvModelError`]: an unknown or left-out provider, none configured, a
/// missing endpoint or model name, or settings the factory refuses.
pub fn chat_model_from_vars(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn DynChatModel>, EnvModelError> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let provider = match var("OXISCOPE_PROVIDER") {
        Some(name) => Provider::find(&name).ok_or_else(|| EnvModelError::UnknownProvider {
            name,
            expected: Provider::names(),
        })?,
        None => infer(&var).ok_or(EnvModelError::NoProvider)?,
    };
    if !provider.served() {
        return Err(EnvModelError::NotServed(provider.name));
    }
    let base_url = var("OXISCOPE_BASE_URL").or_else(|| provider.url_var.and_then(var));
    if provider.needs_base_url && base_url.is_none() {
        return Err(EnvModelError::NoBaseUrl(provider.name));
    }
    let model = var("OXISCOPE_MODEL")
        .or_else(|| provider.default_model.map(str::to_owned))
        .ok_or(EnvModelError::NoModel(provider.name))?;
    let api_key = var("OXISCOPE_API_KEY").or_else(|| provider.key_from_env(&var));
    provider
        .chat_model(
            api_key.as_deref(),
            base_url.as_deref(),
            &ModelConfig::new(model),
            &MediaPolicy::default(),
        )
        .map_err(|source| EnvModelError::Model {
            provider: provider.name,
            source: Box::new(source),
        })
}

/// The first served provider whose key (or, for one without a key, whose
/// endpoint variable) is set.
fn infer(var: &dyn Fn(&str) -> Option<String>) -> Option<&'static Provider> {
    Provider::all().iter().filter(|p| p.served()).find(|p| {
        match (p.key_vars.is_empty(), p.url_var) {
            (false, _) => p.key_from_env(var).is_some(),
            (true, Some(name)) if !p.needs_base_url => var(name).is_some(),
            (true, _) => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Arc<dyn DynChatModel>, EnvModelError> {
        let vars: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        chat_model_from_vars(&|name| vars.get(name).cloned())
    }

    #[test]
    fn the_first_provider_with_a_key_is_picked_and_the_model_can_be_named() {
        let model = from(&[("ANTHROPIC_API_KEY", "k"), ("OXISCOPE_MODEL", "claude-x")]).unwrap();
        assert_eq!(model.model_name(), "claude-x");
    }

    #[test]
    fn a_named_provider_wins_and_an_unknown_one_is_a_typed_error() {
        let model = from(&[("OXISCOPE_PROVIDER", "ollama"), ("OPENAI_API_KEY", "k")]).unwrap();
        assert_eq!(model.model_name(), "qwen3");
        let unknown = from(&[("OXISCOPE_PROVIDER", "nope")]);
        assert!(
            matches!(&unknown, Err(EnvModelError::UnknownProvider { name, .. }) if name == "nope"),
            "{unknown:?}"
        );
    }

    #[test]
    fn a_provider_without_endpoint_or_default_model_says_what_to_set() {
        let no_url = from(&[("OXISCOPE_PROVIDER", "vllm")]);
        assert!(matches!(no_url, Err(EnvModelError::NoBaseUrl("vllm"))));
        let no_model = from(&[
            ("OXISCOPE_PROVIDER", "vllm"),
            ("OXISCOPE_BASE_URL", "http://h"),
        ]);
        assert!(matches!(no_model, Err(EnvModelError::NoModel("vllm"))));
        let blank = from(&[("OPENAI_API_KEY", "  ")]);
        assert!(matches!(blank, Err(EnvModelError::NoProvider)));
    }
}
