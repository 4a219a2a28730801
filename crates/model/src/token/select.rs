//! Choosing a token counter for a model.

use std::str::FromStr;

use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

use super::approx::ApproxCounter;
use super::bpe::{BpeCounter, BpeEncoding};
use super::counter::TokenCounter;
use crate::model_class::ModelClass;

/// The token counter for a model class (`"openai_chat"`) or a model name
/// (`"gpt-4.1"`, `"openai/gpt-4o-mini"`, `"claude-sonnet-4-5"`).
///
/// - OpenAI model names get their real encoding (`o200k_base` for GPT-4o,
///   GPT-4.1, GPT-5 and the o-series; `cl100k_base` for GPT-4 and GPT-3.5);
///   a `provider/` prefix and a fine-tune `ft:` prefix are ignored.
/// - The `openai_chat` and `openai_response` classes get `o200k_base`, the
///   encoding of every current OpenAI chat model.
/// - Everything else (other classes, unknown names, older completion-only
///   encodings) gets the [`ApproxCounter`] estimate.
///
/// Never fails: an unknown model is estimated, not refused.
///
/// ```
/// use oxiscope_model::{TokenCounter, counter_for};
///
/// let gpt = counter_for("gpt-4o");
/// assert_eq!(gpt.count_text("hello world"), 2);
/// let claude = counter_for("claude-sonnet-4-5");
/// assert_eq!(claude.count_text("abcdefgh"), 2);
/// ```
#[must_use]
pub fn counter_for(model_class_or_name: &str) -> Box<dyn TokenCounter> {
    match encoding_for(model_class_or_name) {
        Some(encoding) => Box::new(BpeCounter::new(encoding)),
        None => Box::new(ApproxCounter::new()),
    }
}

fn encoding_for(model: &str) -> Option<BpeEncoding> {
    let model = model.trim();
    if let Ok(class) = ModelClass::from_str(model) {
        return match class {
            ModelClass::OpenAiChat | ModelClass::OpenAiResponse => Some(BpeEncoding::O200kBase),
            _ => None,
        };
    }
    let name = model.rsplit('/').next().unwrap_or(model);
    match get_tokenizer(&name.to_ascii_lowercase())? {
        Tokenizer::O200kBase | Tokenizer::O200kHarmony => Some(BpeEncoding::O200kBase),
        Tokenizer::Cl100kBase => Some(BpeEncoding::Cl100kBase),
        Tokenizer::P50kBase | Tokenizer::R50kBase | Tokenizer::P50kEdit | Tokenizer::Gpt2 => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_names_and_classes_get_their_encoding() {
        for (model, want) in [
            ("gpt-4o", Some(BpeEncoding::O200kBase)),
            ("gpt-4.1-mini", Some(BpeEncoding::O200kBase)),
            ("gpt-5", Some(BpeEncoding::O200kBase)),
            ("o3-mini", Some(BpeEncoding::O200kBase)),
            ("openai/gpt-4o-mini", Some(BpeEncoding::O200kBase)),
            ("GPT-4o", Some(BpeEncoding::O200kBase)),
            (
                "ft:gpt-4o-mini-2024-07-18:org::abc",
                Some(BpeEncoding::O200kBase),
            ),
            ("gpt-4", Some(BpeEncoding::Cl100kBase)),
            ("gpt-3.5-turbo", Some(BpeEncoding::Cl100kBase)),
            ("openai_chat", Some(BpeEncoding::O200kBase)),
            ("openai_response", Some(BpeEncoding::O200kBase)),
            ("anthropic_chat", None),
            ("claude-sonnet-4-5", None),
            ("qwen-plus", None),
            ("", None),
        ] {
            assert_eq!(encoding_for(model), want, "{model}");
        }
    }

    #[test]
    fn unknown_models_are_estimated() {
        let c = counter_for("some-local-model");
        assert_eq!(c.count_text("abcdefgh"), 2);
        assert_eq!(format!("{c:?}"), format!("{:?}", ApproxCounter::new()));
    }
}
