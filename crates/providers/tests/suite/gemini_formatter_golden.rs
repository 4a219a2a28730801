//! The Gemini chat and multi-agent formatters reproduce AgentScope 2.0.11's
//! payload for every reference history (whole-value equality), with the
//! input normalisations described in `anthropic_formatter_golden`.

use oxiscope_message::{ContentBlock, HintBlock, Msg, TextBlock, ToolCallBlock};
use oxiscope_model::Formatter;
use oxiscope_providers::gemini::{GeminiChatFormatter, GeminiMultiAgentFormatter};
use serde_json::json;

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

/// Gemini refuses empty text parts: none goes out, and a turn left with no
/// part is left out.
#[tokio::test]
async fn empty_text_never_goes_out() {
    let reply: Vec<ContentBlock> = vec![
        TextBlock::new("").into(),
        ToolCallBlock::new("a", "Bash", "{}").into(),
        HintBlock::new("", None).into(),
        TextBlock::new("").into(),
    ];
    let msgs = [
        Msg::user("user", "").unwrap(),
        Msg::user("user", "go").unwrap(),
        Msg::assistant("Friday", reply).unwrap(),
    ];
    let out = GeminiChatFormatter::new().format(&msgs).await.unwrap();
    assert_eq!(
        out,
        vec![
            json!({"role": "user", "parts": [{"text": "go"}]}),
            json!({"role": "model", "parts": [
                {"function_call": {"id": "a", "name": "Bash", "args": {}}},
            ]}),
        ]
    );
}
