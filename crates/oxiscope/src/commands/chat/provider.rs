//! The providers `oxiscope chat` can talk to, from the registry of
//! `oxiscope-providers` ([`Provider`]): parsing a name, picking one from
//! the environment, and building the chat model.

use std::sync::Arc;

use anyhow::Context as _;
use clap::builder::{PossibleValue, PossibleValuesParser};
use oxiscope_model::{DynChatModel, ModelClass};
use oxiscope_providers::anthropic::DEFAULT_MAX_TOKENS;
use oxiscope_providers::{MediaPolicy, ModelConfig, Provider};

/// The provider named `name` (case and surrounding spaces ignored).
///
/// # Errors
/// A message listing every name, when none matches.
pub(crate) fn parse_provider(name: &str) -> Result<&'static Provider, String> {
    let provider = Provider::find(name).ok_or_else(|| {
        format!(
            "unknown provider {name:?}: expected one of {}",
            Provider::names()
        )
    })?;
    if !provider.served() {
        return Err(format!(
            "provider {provider} ({}) is left out of this build",
            provider.model_class
        ));
    }
    Ok(provider)
}

/// The first provider (in the registry's order) whose key is in the
/// environment, or, for one that takes no key, whose endpoint variable
/// is (`OLLAMA_HOST`).
pub(crate) fn infer_provider(env: &dyn Fn(&str) -> Option<String>) -> Option<&'static Provider> {
    Provider::all().iter().filter(|p| p.served()).find(|p| {
        match (p.key_vars.is_empty(), p.url_var) {
            (false, _) => p.key_from_env(env).is_some(),
            (true, Some(var)) if !p.needs_base_url => env(var).is_some(),
            (true, _) => false,
        }
    })
}

/// The values `--provider` takes, each with what it is and its key.
pub(crate) fn provider_values() -> PossibleValuesParser {
    PossibleValuesParser::new(Provider::all().iter().filter(|p| p.served()).map(|p| {
        let key = if p.key_vars.is_empty() {
            String::new()
        } else {
            format!(" ({})", p.key_vars_text())
        };
        PossibleValue::new(p.name).help(format!("{}{key}", p.label))
    }))
}

/// The help of `--base-url`: the variables it is read from.
pub(crate) fn base_url_help() -> String {
    let mut vars = vec!["OXISCOPE_BASE_URL"];
    for var in Provider::all().iter().filter_map(|p| p.url_var) {
        if !vars.contains(&var) {
            vars.push(var);
        }
    }
    format!(
        "Endpoint [env: {}; default: the provider's]",
        vars.join(", ")
    )
}

/// The help of `--api-key`: the variables it is read from.
pub(crate) fn api_key_help() -> String {
    format!("API key [env: {}]", key_vars().join(", "))
}

/// `OXISCOPE_API_KEY`, then every provider's key variable, once each.
pub(crate) fn key_vars() -> Vec<&'static str> {
    let mut vars = vec!["OXISCOPE_API_KEY"];
    for var in Provider::all().iter().flat_map(|p| p.key_vars) {
        if !vars.contains(var) {
            vars.push(var);
        }
    }
    vars
}

/// Everything needed to reach a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelSettings {
    pub(crate) provider: &'static Provider,
    pub(crate) model: String,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
}

impl ModelSettings {
    /// The chat model these settings describe.
    pub(crate) fn build(&self) -> anyhow::Result<Arc<dyn DynChatModel>> {
        let mut config = ModelConfig::new(self.model.clone());
        if self.provider.model_class == ModelClass::AnthropicChat {
            // The console has always capped Claude's replies at this; the
            // factory alone would take the model card's output size.
            config = config.with_parameter("max_tokens", DEFAULT_MAX_TOKENS);
        }
        self.provider
            .chat_model(
                self.api_key.as_deref(),
                self.base_url.as_deref(),
                &config,
                &MediaPolicy::default(),
            )
            .with_context(|| format!("cannot set up {}", self.provider))
    }

    /// Where requests go: the configured endpoint, else the provider's.
    pub(crate) fn endpoint(&self) -> String {
        self.provider.endpoint(self.base_url.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use clap::builder::TypedValueParser as _;
    use oxiscope_model::{Credential, CredentialType};
    use pretty_assertions::assert_eq;

    use super::*;

    fn settings(provider: &'static Provider) -> ModelSettings {
        ModelSettings {
            provider,
            model: "some-model".to_owned(),
            base_url: Some("http://127.0.0.1:9/v1".to_owned()),
            api_key: Some("sk-test".to_owned()),
        }
    }

    #[test]
    fn the_names_of_today_and_the_new_ones_are_accepted() {
        let names = [
            "openai",
            "openai-responses",
            "anthropic",
            "ollama",
            "deepseek",
            "moonshot",
            "xai",
            "volcengine",
            "dashscope",
            "gemini",
            "minimax",
            "vllm",
        ];
        let all: Vec<&str> = Provider::all().iter().map(|p| p.name).collect();
        assert_eq!(all, names);
        for name in names {
            assert_eq!(parse_provider(&name.to_uppercase()).unwrap().name, name);
        }
        let error = parse_provider("gpt").unwrap_err();
        assert!(error.contains("openai-responses, anthropic"), "{error}");
        assert!(error.contains("gemini, minimax, vllm"), "{error}");
    }

    #[test]
    fn each_provider_is_a_credential_of_its_type_with_the_key_and_endpoint() {
        for provider in Provider::all() {
            let s = settings(provider);
            let credential = provider
                .credential(s.api_key.as_deref(), s.base_url.as_deref())
                .unwrap();
            let kind = match provider.name {
                "vllm" | "openai-responses" => "openai",
                other => other,
            };
            assert_eq!(
                credential.credential_type().as_str(),
                format!("{kind}_credential")
            );
            let endpoint = match &credential {
                Credential::Xai(c) => c.api_host.clone(),
                Credential::Gemini(_) => s.endpoint(),
                other => other.base_url(),
            };
            assert_eq!(endpoint, "http://127.0.0.1:9/v1", "{provider}");
            let key = credential
                .secrets()
                .first()
                .map(|(_, s)| s.expose().to_owned());
            let expected = (provider.credential_type() != CredentialType::Ollama)
                .then(|| "sk-test".to_owned());
            assert_eq!(key, expected, "{provider}");
        }
    }

    #[tokio::test]
    async fn every_provider_builds_its_model_without_calling_it() {
        for provider in Provider::all() {
            let model = settings(provider).build().unwrap();
            assert_eq!(model.model_name(), "some-model");
        }
    }

    #[test]
    fn the_flag_values_and_helps_come_from_the_registry() {
        let values: Vec<String> = provider_values()
            .possible_values()
            .unwrap()
            .map(|v| v.get_name().to_owned())
            .collect();
        let names: Vec<&str> = Provider::all().iter().map(|p| p.name).collect();
        assert_eq!(values, names);
        let gemini = provider_values()
            .possible_values()
            .unwrap()
            .find(|v| v.get_name() == "gemini")
            .and_then(|v| v.get_help().map(ToString::to_string));
        assert_eq!(
            gemini.as_deref(),
            Some("Google Gemini API (GOOGLE_API_KEY or GEMINI_API_KEY)")
        );
        assert!(base_url_help().contains("GOOGLE_GEMINI_BASE_URL"));
        assert!(api_key_help().contains("MINIMAX_API_KEY"));
    }

    #[test]
    fn the_readme_lists_exactly_the_registry_providers() {
        let readme = include_str!("../../../../../README.md");
        let line = readme
            .lines()
            .find(|l| l.starts_with("provider = \"openai\""))
            .expect("the README's config example names the provider");
        let listed: Vec<&str> = line
            .split_once('#')
            .map(|(_, list)| list.split(',').map(str::trim).collect())
            .unwrap_or_default();
        let names: Vec<&str> = Provider::all().iter().map(|p| p.name).collect();
        assert_eq!(listed, names);

        // The table: one row per provider, in order, saying what the
        // registry says.
        let rows: Vec<Vec<&str>> = readme
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| l.split('|').map(str::trim).collect())
            .filter(|cells: &Vec<&str>| cells.len() == 7 && cells[1] != "`--provider`")
            .collect();
        let row_names: Vec<&str> = rows.iter().map(|r| r[1].trim_matches('`')).collect();
        assert_eq!(row_names, names);
        for (row, provider) in rows.iter().zip(Provider::all()) {
            let (label, key, url, model) = (row[2], row[3], row[4], row[5]);
            assert_eq!(label, provider.label, "{provider}");
            let keys: Vec<String> = provider.key_vars.iter().map(|v| format!("`{v}`")).collect();
            match (keys.is_empty(), provider.needs_key) {
                (true, false) => assert!(key == "none" || key == "optional", "{provider}: {key}"),
                _ => assert!(key.starts_with(&keys.join(" or ")), "{provider}: {key}"),
            }
            match provider.url_var {
                Some(var) => assert_eq!(url, format!("`{var}`"), "{provider}"),
                None if provider.needs_base_url => assert!(url.contains("--base-url")),
                None => assert_eq!(url, "", "{provider}"),
            }
            match provider.default_model {
                Some(default) => assert_eq!(model, format!("`{default}`"), "{provider}"),
                None => assert!(model.contains("--model"), "{provider}"),
            }
        }
    }
}
