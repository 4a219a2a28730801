use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;

/// One SSE frame of a response object.
fn frame(value: &Value) -> String {
    format!("data: {value}\r\n\r\n")
}

/// A recorded-style stream: thoughts with a signature, text, a signed
/// function call and a plain one, usage, the finish reason.
fn recorded() -> String {
    [
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Let me think", "thought": true}]}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 14, "thoughtsTokenCount": 4},
            "modelVersion": "gemini-2.5-flash", "responseId": "r1"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": " hard.", "thought": true, "thoughtSignature": "c2lnLXQ="}]}, "index": 0}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Hello, "}, {"text": "world"}]}, "index": 0}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
             "thoughtSignature": "c2lnLWY="},
            {"functionCall": {"id": "fc_2", "name": "Glob", "args": {"pattern": "*.rs"}}}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 20,
                "totalTokenCount": 34, "thoughtsTokenCount": 4, "cachedContentTokenCount": 3}}),
    ]
    .iter()
    .map(frame)
    .collect()
}

#[test]
fn a_recorded_stream_decodes_to_thinking_text_signed_calls_and_usage() {
    let (deltas, error) = decode_bytes(recorded().as_bytes());
    assert_eq!(error, None);
    let mut kinds = Vec::new();
    let mut generated_id = String::new();
    for delta in &deltas {
        match delta {
            ModelDelta::Thinking(t) => kinds.push(format!("thinking {t}")),
            ModelDelta::Text(t) => kinds.push(format!("text {t}")),
            ModelDelta::ThinkingMeta(m) => {
                for (k, v) in m {
                    let k = match k.strip_prefix(CALL_SIGNATURE_PREFIX) {
                        Some(id) => {
                            generated_id = id.to_owned();
                            "call signature"
                        }
                        None => k.as_str(),
                    };
                    kinds.push(format!("meta {k}={}", v.as_str().unwrap()));
                }
            }
            ModelDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => kinds.push(format!(
                "call {index} {} {} {arguments}",
                if id.as_deref() == Some(generated_id.as_str()) {
                    "generated"
                } else {
                    id.as_deref().unwrap()
                },
                name.as_deref().unwrap()
            )),
            ModelDelta::Usage(u) => kinds.push(format!(
                "usage {} {} {}",
                u.input_tokens, u.output_tokens, u.cache_input_tokens
            )),
            ModelDelta::Data { .. } => kinds.push("data".into()),
        }
    }
    assert_eq!(
        kinds,
        vec![
            "thinking Let me think",
            "usage 10 4 0",
            "thinking  hard.",
            "meta thought_signature=c2lnLXQ=",
            "text Hello, ",
            "text world",
            "meta call signature=c2lnLWY=",
            "call 0 generated get_weather {\"city\":\"Paris\"}",
            "call 1 fc_2 Glob {\"pattern\":\"*.rs\"}",
            "usage 10 24 3",
        ]
    );
    assert!(generated_id.starts_with("call_"), "{generated_id}");
}

#[test]
fn refusals_blocked_prompts_and_error_objects_are_provider_errors() {
    let mut decoder = Decoder::default();
    let safety = json!({"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]});
    let err = decoder.response(&safety).unwrap_err();
    assert!(!err.is_retryable(), "{err:?}");
    assert!(matches!(&err, ModelError::Provider { code: Some(c), .. } if c == "SAFETY"));

    let malformed = json!({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL"}]});
    assert!(decoder.response(&malformed).unwrap_err().is_retryable());

    let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}});
    let err = decoder.response(&blocked).unwrap_err();
    assert!(
        matches!(&err, ModelError::Provider { status: 400, code: Some(c), .. } if c == "PROHIBITED_CONTENT")
    );

    let error = json!({"error": {"code": 429, "message": "slow", "status": "RESOURCE_EXHAUSTED"}});
    assert!(matches!(
        decoder.response(&error).unwrap_err(),
        ModelError::Provider { status: 429, .. }
    ));
    assert!(matches!(
        decoder.response(&json!([1])).unwrap_err(),
        ModelError::Stream { .. }
    ));
    assert!(matches!(
        decoder
            .response(
                &json!({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]})
            )
            .unwrap_err(),
        ModelError::Stream { .. }
    ));
}

#[test]
fn max_tokens_ends_the_reply_and_a_stream_without_finish_reason_is_cut() {
    let done = frame(
        &json!({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "MAX_TOKENS"}]}),
    );
    assert_eq!(decode_bytes(done.as_bytes()).1, None);
    let cut = frame(&json!({"candidates": [{"content": {"parts": [{"text": "a"}]}}]}));
    let (deltas, error) = decode_bytes(cut.as_bytes());
    assert_eq!(deltas, vec![ModelDelta::Text("a".into())]);
    assert!(
        matches!(error, Some(ModelError::Stream { .. })),
        "{error:?}"
    );
}

#[test]
fn inline_data_in_the_answer_is_a_data_delta() {
    let body = json!({"candidates": [{"content": {"parts": [
        {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}]}, "finishReason": "STOP"}]});
    assert_eq!(
        whole(&body).unwrap(),
        vec![ModelDelta::Data {
            media_type: "image/png".into(),
            data: "iVBOR".into()
        }]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any prefix of a recorded stream, with any bytes spliced in, decodes
    /// to deltas and at most one error, never a panic.
    #[test]
    fn cut_and_corrupted_streams_never_panic(
        cut in 0usize..2000,
        at in 0usize..2000,
        garbage in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut body = recorded().into_bytes();
        body.truncate(cut.min(body.len()));
        let at = at.min(body.len());
        body.splice(at..at, garbage);
        let (deltas, error) = decode_bytes(&body);
        // A stream cut before its last event never passes as complete.
        if cut + 5 <= recorded().len() {
            prop_assert!(error.is_some() || deltas.len() < 10, "{deltas:?}");
        }
    }

    /// Arbitrary JSON values never panic the response decoder.
    #[test]
    fn arbitrary_json_never_panics(text in "[\\[\\]{}\":,a-zA-Z0-9 ]{0,200}") {
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            let _ = Decoder::default().response(&value);
        }
    }
}

#[test]
fn every_prefix_of_the_recorded_stream_is_either_complete_or_an_error() {
    let body = recorded();
    // The last event is whole once its closing brace arrived ("}\r\n\r\n").
    for cut in 0..=body.len() - 5 {
        let (_, error) = decode_bytes(&body.as_bytes()[..cut]);
        assert!(
            error.is_some(),
            "a prefix of {cut} bytes passed as complete"
        );
    }
    assert_eq!(decode_bytes(body.as_bytes()).1, None);
}
