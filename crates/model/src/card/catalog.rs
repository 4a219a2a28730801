//! The card files shipped inside the crate, parsed once on first use.

use std::sync::OnceLock;

use serde::Deserialize;

use super::CardSpec;
use crate::{Error, ModelCard, ModelClass, Result};

/// One shipped file: the cards of one model class.
#[derive(Deserialize)]
struct CardFile {
    model_class: String,
    cards: Vec<CardSpec>,
}

/// The file name and text of `class`'s shipped cards.
fn shipped_file(class: ModelClass) -> (&'static str, &'static str) {
    macro_rules! card_file {
        ($name:literal) => {
            ($name, include_str!(concat!("../../cards/", $name)))
        };
    }
    match class {
        ModelClass::AnthropicChat => card_file!("anthropic_chat.yaml"),
        ModelClass::DashScopeChat => card_file!("dashscope_chat.yaml"),
        ModelClass::DeepSeekChat => card_file!("deepseek_chat.yaml"),
        ModelClass::GeminiChat => card_file!("gemini_chat.yaml"),
        ModelClass::MiniMaxChat => card_file!("minimax_chat.yaml"),
        ModelClass::MoonshotChat => card_file!("moonshot_chat.yaml"),
        ModelClass::OllamaChat => card_file!("ollama_chat.yaml"),
        ModelClass::OpenAiChat => card_file!("openai_chat.yaml"),
        ModelClass::OpenAiResponse => card_file!("openai_response.yaml"),
        ModelClass::XaiChat => card_file!("xai_chat.yaml"),
        ModelClass::VolcengineChat => card_file!("volcengine_chat.yaml"),
    }
}

/// Parses a card file of `class` and builds its cards, sorted by name.
fn load(class: ModelClass, origin: &str, yaml: &str) -> Result<Vec<ModelCard>> {
    let file: CardFile = serde_yaml_ng::from_str(yaml).map_err(|err| Error::InvalidCardYaml {
        origin: origin.to_owned(),
        message: err.to_string(),
    })?;
    if file.model_class != class.as_str() {
        return Err(Error::InvalidCardYaml {
            origin: origin.to_owned(),
            message: format!(
                "the file declares model_class `{}`, expected `{class}`",
                file.model_class
            ),
        });
    }
    let base = class.parameter_schema();
    let mut cards = file
        .cards
        .into_iter()
        .map(|spec| spec.into_card(class.as_str(), &base))
        .collect::<Result<Vec<_>>>()?;
    cards.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cards)
}

/// The shipped cards of `class`, sorted by name; parsed on first use.
pub(crate) fn shipped_cards(class: ModelClass) -> Result<Vec<ModelCard>> {
    with_shipped_cards(class, <[ModelCard]>::to_vec)
}

/// Calls `f` with the shipped cards of `class`, parsed once per process and
/// not copied.
pub(crate) fn with_shipped_cards<R>(
    class: ModelClass,
    f: impl FnOnce(&[ModelCard]) -> R,
) -> Result<R> {
    static CACHE: [OnceLock<Result<Vec<ModelCard>>>; ModelClass::ALL.len()] =
        [const { OnceLock::new() }; ModelClass::ALL.len()];
    let parse = || {
        let (origin, yaml) = shipped_file(class);
        load(class, origin, yaml)
    };
    // `ALL` lists the classes in declaration order, so the discriminant is
    // the slot; a class missing from `ALL` is parsed on every call instead.
    match CACHE.get(class as usize) {
        Some(slot) => match slot.get_or_init(parse) {
            Ok(cards) => Ok(f(cards)),
            Err(e) => Err(e.clone()),
        },
        None => parse().map(|cards| f(&cards)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_its_own_cache_slot() {
        for (slot, class) in ModelClass::ALL.into_iter().enumerate() {
            assert_eq!(class as usize, slot, "{class}");
            let cards = shipped_cards(class).unwrap();
            assert!(cards.iter().all(|card| card.model_class == class.as_str()));
        }
    }

    #[test]
    fn a_file_for_another_class_is_rejected() {
        let (_, yaml) = shipped_file(ModelClass::GeminiChat);
        let err = load(ModelClass::OllamaChat, "gemini_chat.yaml", yaml).unwrap_err();
        assert!(matches!(err, Error::InvalidCardYaml { .. }), "{err}");
    }

    #[test]
    fn broken_yaml_is_a_typed_error() {
        let err = load(ModelClass::OllamaChat, "broken.yaml", "model_class: [").unwrap_err();
        assert!(
            matches!(err, Error::InvalidCardYaml { ref origin, .. } if origin == "broken.yaml")
        );
        let zero = "model_class: ollama_chat\ncards:\n  - {name: x, label: X, status: active, \
                    context_size: 0, output_size: 1}\n";
        assert!(matches!(
            load(ModelClass::OllamaChat, "zero.yaml", zero),
            Err(Error::InvalidCardYaml { .. })
        ));
    }
}
