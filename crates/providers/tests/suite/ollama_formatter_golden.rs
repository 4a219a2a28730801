//! The Ollama chat and multi-agent formatters reproduce AgentScope 2.0.11's
//! payload for every reference history (whole-value equality), with the
//! input normalisations described in `anthropic_formatter_golden`.

use oxiscope_providers::ollama::{OllamaChatFormatter, OllamaMultiAgentFormatter};

use super::anthropic_formatter_golden::Golden;

#[tokio::test]
async fn ollama_chat_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("ollama-chat").await;
    golden
        .check("OllamaChatFormatter", &OllamaChatFormatter::new())
        .await;
}

#[tokio::test]
async fn ollama_multi_agent_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("ollama-multi").await;
    golden
        .check(
            "OllamaMultiAgentFormatter",
            &OllamaMultiAgentFormatter::new(),
        )
        .await;
}
