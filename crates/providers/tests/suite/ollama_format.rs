//! Ollama formatter cases beyond the reference histories: several tool
//! results with images, media it cannot read, broken tool arguments.

use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, MediaBlock, Msg, RichContent, TextBlock,
    ToolCallBlock, ToolResultBlock, ToolResultState,
};
use oxiscope_model::Formatter;
use oxiscope_providers::ollama::OllamaChatFormatter;
use pretty_assertions::assert_eq;
use serde_json::json;

fn image(id: &str, data: &str, media_type: &str) -> MediaBlock {
    let mut block = DataBlock::new(DataSource::Base64(Base64Source {
        data: data.into(),
        media_type: media_type.into(),
    }));
    block.id = id.into();
    MediaBlock::Data(block)
}

fn result(id: &str, output: Vec<MediaBlock>) -> ContentBlock {
    ToolResultBlock::new(
        id,
        "shot",
        RichContent::Blocks(output),
        ToolResultState::Success,
    )
    .into()
}

#[tokio::test]
async fn images_of_several_results_follow_all_tool_messages_in_one_user_message() {
    let blocks = vec![
        ToolCallBlock::new("a", "shot", "{\"n\": 1}").into(),
        ToolCallBlock::new("b", "shot", "not json").into(),
        result("a", vec![image("img_a", "AAAA", "image/png")]),
        result(
            "b",
            vec![
                MediaBlock::Text(TextBlock::new("clip:")),
                image("vid_b", "BBBB", "video/mp4"),
                image("img_b", "CCCC", "image/jpeg"),
            ],
        ),
    ];
    let out = OllamaChatFormatter::new()
        .format(&[Msg::assistant("Friday", blocks).unwrap()])
        .await
        .unwrap();
    assert_eq!(out.len(), 4);
    assert_eq!(
        out[0]["tool_calls"],
        json!([
            {"function": {"name": "shot", "arguments": {"n": 1}}},
            {"function": {"name": "shot", "arguments": {}}},
        ])
    );
    assert_eq!(out[1]["role"], "tool");
    assert!(out[1]["content"].as_str().unwrap().contains("[img_a]"));
    let second = out[2]["content"].as_str().unwrap();
    assert!(second.starts_with("clip:\n"), "{second}");
    assert!(
        second.contains("video/mp4") && second.contains("[vid_b]"),
        "{second}"
    );
    assert!(second.contains("[img_b]"), "{second}");
    assert_eq!(
        out[3],
        json!({
            "role": "user",
            "content": "<system-reminder>The multimodal data and their identifiers are listed as follows:\n- img_a (image file): \n- img_b (image file): \n</system-reminder>",
            "images": ["AAAA", "CCCC"],
        })
    );
}

#[tokio::test]
async fn an_assistant_message_of_only_thinking_is_left_out() {
    let blocks = vec![oxiscope_message::ThinkingBlock::new("hmm").into()];
    let out = OllamaChatFormatter::new()
        .format(&[Msg::assistant("Friday", blocks).unwrap()])
        .await
        .unwrap();
    assert!(out.is_empty(), "{out:?}");
}
