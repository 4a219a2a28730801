//! Token counting over messages and tool schemas.

use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, HintBlock, Msg, TextBlock, ToolCallBlock,
    ToolResultBlock, ToolResultState,
};
use oxiscope_model::{
    ApproxCounter, BpeCounter, BpeEncoding, DATA_BLOCK_TOKENS, MESSAGE_OVERHEAD, NAME_OVERHEAD,
    REPLY_PRIMING, TOOL_CALL_OVERHEAD, TOOL_SCHEMA_OVERHEAD, TokenCounter, ToolSchema, counter_for,
};
use serde_json::json;

fn image(bytes: usize) -> ContentBlock {
    ContentBlock::Data(DataBlock::new(DataSource::Base64(Base64Source {
        data: "A".repeat(bytes),
        media_type: "image/png".into(),
    })))
}

fn o200k() -> BpeCounter {
    BpeCounter::new(BpeEncoding::O200kBase)
}

#[test]
fn a_user_message_costs_framing_role_name_and_text() {
    let c = o200k();
    let msg = Msg::user("user", "hello world").unwrap();
    // "user" is one token; "hello world" two.
    assert_eq!(c.count_text("user"), 1);
    let want = MESSAGE_OVERHEAD + 1 + (1 + NAME_OVERHEAD) + 2;
    assert_eq!(c.count_message(&msg), want);
    assert_eq!(
        c.count_messages(std::slice::from_ref(&msg)),
        REPLY_PRIMING + want
    );
}

#[test]
fn a_conversation_is_the_priming_plus_its_cacheable_messages() {
    let msgs = vec![
        Msg::system("system", "You are Friday, a helpful assistant.").unwrap(),
        Msg::user("user", "What's in this picture?").unwrap(),
        Msg::assistant("Friday", "A cat.").unwrap(),
    ];
    for counter in [
        counter_for("gpt-4.1"),
        counter_for("gpt-4"),
        counter_for("claude-opus-4"),
    ] {
        let per_message: usize = msgs.iter().map(|m| counter.count_message(m)).sum();
        assert_eq!(
            counter.count_messages(&msgs),
            REPLY_PRIMING + per_message,
            "{counter:?}"
        );
        assert_eq!(counter.count_messages(&[]), 0);
    }
}

#[test]
fn data_blocks_cost_a_flat_amount_whatever_their_size() {
    let small = Msg::user("u", vec![image(16)]).unwrap();
    let large = Msg::user("u", vec![image(4 << 20)]).unwrap();
    for counter in [counter_for("gpt-4o"), counter_for("qwen-max")] {
        let n = counter.count_message(&small);
        assert_eq!(n, counter.count_message(&large), "{counter:?}");
        assert!(n >= DATA_BLOCK_TOKENS, "{counter:?}: {n}");
        assert!(n < DATA_BLOCK_TOKENS + 20, "{counter:?}: {n}");
    }
    let cheap = ApproxCounter::new().with_data_block_tokens(85);
    assert_eq!(
        cheap.count_message(&small),
        cheap.count_message(&Msg::user("u", vec![]).unwrap()) + 85
    );
}

#[test]
fn tool_calls_results_and_hints_are_counted_with_their_framing() {
    let c = o200k();
    let empty = Msg::assistant("", vec![]).unwrap();
    let base = c.count_message(&empty);
    let with =
        |blocks: Vec<ContentBlock>| c.count_message(&Msg::assistant("", blocks).unwrap()) - base;
    let args = r#"{"city": "Paris"}"#;
    assert_eq!(
        with(vec![
            ToolCallBlock::new("call_1", "get_weather", args).into()
        ]),
        TOOL_CALL_OVERHEAD + c.count_text("get_weather") + c.count_text(args)
    );
    let result = ToolResultBlock::new(
        "call_1",
        "get_weather",
        vec![
            TextBlock::new("Sunny, 21 °C").into(),
            DataBlock::new(DataSource::Base64(Base64Source {
                data: "iVBORw0KGgo".repeat(1000),
                media_type: "image/png".into(),
            }))
            .into(),
        ],
        ToolResultState::Success,
    );
    assert_eq!(
        with(vec![result.into()]),
        TOOL_CALL_OVERHEAD
            + c.count_text("get_weather")
            + c.count_text("Sunny, 21 °C")
            + DATA_BLOCK_TOKENS
    );
    let hint = HintBlock::new("<system-reminder>be brief</system-reminder>", None);
    assert_eq!(
        with(vec![hint.into()]),
        c.count_text("<system-reminder>be brief</system-reminder>")
    );
}

#[test]
fn tool_schemas_cost_their_json_plus_framing() {
    let c = o200k();
    let small = ToolSchema::function("a", "", json!({"type": "object"}));
    let big = ToolSchema::function(
        "get_weather",
        "Get the current weather for a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}}),
    );
    let one = c.count_tools(std::slice::from_ref(&small));
    assert!(one > TOOL_SCHEMA_OVERHEAD);
    assert!(c.count_tools(std::slice::from_ref(&big)) > one + 15);
    let both = c.count_tools(&[small, big.clone()]);
    assert_eq!(both, one + c.count_tools(&[big]));
    assert_eq!(c.count_tools(&[]), 0);
}

#[test]
fn counters_are_shareable_trait_objects() {
    fn assert_send_sync<T: Send + Sync + ?Sized>() {}
    assert_send_sync::<dyn TokenCounter>();
    let counter: std::sync::Arc<dyn TokenCounter> = counter_for("openai_chat").into();
    let other = std::sync::Arc::clone(&counter);
    let n =
        std::thread::spawn(move || other.count_text("This is a test         with a lot of spaces"))
            .join()
            .unwrap();
    assert_eq!(n, 10);
}
