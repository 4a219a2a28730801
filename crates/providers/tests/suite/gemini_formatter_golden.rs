//! The Gemini chat and multi-agent formatters reproduce AgentScope 2.0.11's
//! payload for every reference history (whole-value equality), with the
//! input normalisations described in `anthropic_formatter_golden`.

use oxiscope_providers::gemini::{GeminiChatFormatter, GeminiMultiAgentFormatter};

use super::anthropic_formatter_golden::Golden;

#[tokio::test]
async fn gemini_chat_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("gemini-chat").await;
    golden
        .check("GeminiChatFormatter", &GeminiChatFormatter::new())
        .await;
}

#[tokio::test]
async fn gemini_multi_agent_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("gemini-multi").await;
    golden
        .check(
            "GeminiMultiAgentFormatter",
            &GeminiMultiAgentFormatter::new(),
        )
        .await;
}
