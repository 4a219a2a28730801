//! The parameter schema of each chat model class, before card overrides.
//!
//! Types, defaults and limits follow what each provider's API accepts as a
//! whole; a model card narrows them for one model (see `card::merge`).

use serde_json::Value;

use super::spec::{
    Bounds, flag, max_tokens, object, optional_choice, optional_flag, optional_integer,
    optional_number, optional_string,
};
use crate::ModelClass;

const MAX_TOKENS: &str = "Upper limit on the number of tokens the model may generate in one reply.";
const THINKING: &str = "Ask the model to reason step by step before it answers.";
const THINKING_BUDGET: &str = "Most tokens the model may spend on reasoning before answering.";
const TEMPERATURE: &str =
    "Sampling randomness: low values keep answers focused, high values vary them.";
const TOP_P: &str = "Nucleus sampling: draw only from the most likely tokens whose \
                     probabilities add up to this share.";
const TOP_K: &str = "Draw each token from only this many of the most likely candidates.";
const PARALLEL_TOOLS: &str = "Let the model request several tool calls in one turn.";
const VOICE: &str =
    "Speaker for spoken replies on models that can answer with audio; leave empty for text only.";
const EFFORT: &str =
    "How much reasoning the model does before it answers; which levels exist depends on the model.";
const OPENAI_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];

fn temperature(high: i64) -> Value {
    optional_number("Temperature", TEMPERATURE, Bounds::closed(0, high))
}

fn top_p() -> Value {
    optional_number("Top P", TOP_P, Bounds::positive_up_to(1))
}

fn thinking() -> Value {
    flag("Thinking", THINKING, false)
}

fn thinking_budget() -> Value {
    optional_integer("Thinking Budget", THINKING_BUDGET, Bounds::POSITIVE)
}

fn effort(levels: &[&str]) -> Value {
    optional_choice("Reasoning Effort", EFFORT, levels)
}

/// The base parameter schema of `class`: a JSON Schema object whose
/// `properties` list every parameter the class's API takes.
pub(crate) fn base_schema(class: ModelClass) -> Value {
    match class {
        ModelClass::AnthropicChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("thinking_budget", thinking_budget()),
            (
                "thinking_mode",
                optional_choice(
                    "Thinking Mode",
                    "How Claude decides to think: `adaptive` leaves depth to the model, \
                     `enabled` uses a fixed budget, `disabled` turns thinking off. \
                     When set, it wins over the Thinking switch.",
                    &["adaptive", "enabled", "disabled"],
                ),
            ),
            (
                "thinking_display",
                optional_choice(
                    "Thinking Display",
                    "Whether reasoning comes back as a readable summary or is left out \
                     of the reply.",
                    &["summarized", "omitted"],
                ),
            ),
            (
                "reasoning_effort",
                effort(&["low", "medium", "high", "xhigh", "max"]),
            ),
        ]),
        ModelClass::DashScopeChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("thinking_budget", thinking_budget()),
            (
                "temperature",
                optional_number("Temperature", TEMPERATURE, Bounds::half_open(0, 2)),
            ),
            ("top_p", top_p()),
            (
                "top_k",
                optional_integer("Top K", TOP_K, Bounds::positive_up_to(100)),
            ),
            (
                "parallel_tool_calls",
                flag("Parallel Tool Calls", PARALLEL_TOOLS, true),
            ),
            ("voice", optional_string("Voice", VOICE)),
        ]),
        ModelClass::DeepSeekChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("reasoning_effort", effort(&["high", "max"])),
            ("temperature", temperature(2)),
            ("top_p", top_p()),
        ]),
        ModelClass::GeminiChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("thinking_budget", thinking_budget()),
            ("temperature", temperature(2)),
            ("top_p", top_p()),
        ]),
        ModelClass::MiniMaxChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
        ]),
        ModelClass::MoonshotChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("reasoning_effort", effort(&["low", "high", "max"])),
            ("temperature", temperature(1)),
            ("top_p", top_p()),
        ]),
        ModelClass::OllamaChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("temperature", temperature(2)),
        ]),
        ModelClass::OpenAiChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("reasoning_effort", effort(OPENAI_EFFORTS)),
            ("temperature", temperature(2)),
            ("top_p", top_p()),
            (
                "parallel_tool_calls",
                flag("Parallel Tool Calls", PARALLEL_TOOLS, true),
            ),
            ("voice", optional_string("Voice", VOICE)),
        ]),
        ModelClass::OpenAiResponse => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("reasoning_effort", effort(OPENAI_EFFORTS)),
            ("temperature", temperature(2)),
        ]),
        ModelClass::XaiChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            ("thinking_enable", thinking()),
            ("reasoning_effort", effort(&["low", "medium", "high"])),
            ("temperature", temperature(2)),
            ("top_p", top_p()),
        ]),
        ModelClass::VolcengineChat => object(vec![
            ("max_tokens", max_tokens(MAX_TOKENS)),
            (
                "thinking_enable",
                optional_flag(
                    "Thinking",
                    "Turn reasoning on or off; leave empty to let the service decide.",
                ),
            ),
            (
                "reasoning_effort",
                effort(&["minimal", "low", "medium", "high"]),
            ),
            ("temperature", temperature(2)),
            ("top_p", top_p()),
        ]),
    }
}
