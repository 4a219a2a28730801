//! `GeminiTtsModel` against a fake Gemini server: the streamed and whole
//! requests, inline PCM parts in order, usage, cut streams, refusals,
//! error events and a rate limit retried after `Retry-After`.

use std::time::{Duration, Instant};

use oxiscope_model::{ModelError, TtsEvent, TtsModel, TtsOptions, TtsUsage};
use oxiscope_providers::tts::GeminiTtsModel;
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::tts_support::{
    assert_ends_in_error, audio_and_last, b64, drain, http, http_honouring_retry_after,
};

const MODEL: &str = "gemini-2.5-flash-preview-tts";

fn model(server: &FakeServer) -> GeminiTtsModel {
    GeminiTtsModel::with_client(http(), "g-key", format!("models/{MODEL}"))
        .with_base_url(server.url("/v1beta"))
}

fn part(pcm: &[u8]) -> Value {
    json!({"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": b64(pcm)}})
}

fn response(parts: &[Value], finish: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    json!({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 40, "totalTokenCount": 47}, "modelVersion": MODEL})
}

fn frame(value: &Value) -> String {
    ScriptedResponse::sse_frame(None, &value.to_string())
}

#[tokio::test]
async fn a_streamed_call_sends_the_speech_config_and_joins_inline_pcm_in_order() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse([
        frame(&response(&[part(&[1, 2]), part(&[3])], None)),
        frame(&response(&[part(&[4, 5])], Some("STOP"))),
    ]));
    let options = TtsOptions::default().with_voice("Puck");
    let items = drain(model(&server).synthesize("Say hi", &options).await.unwrap()).await;
    let (audio, last) = audio_and_last(&items);
    assert_eq!(audio, vec![1, 2, 3, 4, 5]);
    let Some(Ok(TtsEvent::Done {
        usage:
            Some(TtsUsage {
                input_tokens,
                output_tokens,
                ..
            }),
    })) = last
    else {
        panic!("{items:?}")
    };
    assert_eq!((*input_tokens, *output_tokens), (7, 40));
    let Ok(TtsEvent::Audio(first)) = &items[0] else {
        panic!("{items:?}")
    };
    assert_eq!(
        (first.media_type.as_str(), first.sample_rate),
        ("audio/pcm", Some(24_000))
    );
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        format!("/v1beta/models/{MODEL}:streamGenerateContent")
    );
    assert_eq!(request.query.as_deref(), Some("alt=sse"));
    assert_eq!(request.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(
        request.body_json().unwrap(),
        json!({
            "contents": [{"role": "user", "parts": [{"text": "Say hi"}]}],
            "generationConfig": {
                "responseModalities": ["AUDIO"],
                "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}},
            },
        })
    );
}

#[tokio::test]
async fn a_whole_call_uses_generate_content_with_the_default_voice() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::json(
        200,
        &response(&[part(&[8, 9])], Some("STOP")),
    ));
    let whole = model(&server)
        .with_stream(false)
        .synthesize_whole("hi", &TtsOptions::default())
        .await
        .unwrap();
    assert_eq!(whole.audio, vec![8, 9]);
    assert_eq!(whole.usage.map(|u| u.output_tokens), Some(40));
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        format!("/v1beta/models/{MODEL}:generateContent")
    );
    assert_eq!(
        request.body_json().unwrap()["generationConfig"]["speechConfig"]["voiceConfig"]["prebuiltVoiceConfig"]
            ["voiceName"],
        "Kore"
    );
}

#[tokio::test]
async fn cut_streams_refusals_and_error_events_are_typed_errors() {
    let server = FakeServer::start().await.unwrap();
    let model = model(&server);
    // No finishReason before the end, then a broken connection.
    server.push(ScriptedResponse::sse([frame(&response(
        &[part(&[1])],
        None,
    ))]));
    server.push(
        ScriptedResponse::sse([frame(&response(&[part(&[1])], None))]).with_end(BodyEnd::Abort),
    );
    server.push(ScriptedResponse::sse([
        "data: {\"candidates\": [{\"content\": \n\n",
    ]));
    for _ in 0..3 {
        let items = drain(
            model
                .synthesize("hi", &TtsOptions::default())
                .await
                .unwrap(),
        )
        .await;
        let err = assert_ends_in_error(&items);
        assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
    }
    server.push(ScriptedResponse::sse([frame(&response(
        &[],
        Some("SAFETY"),
    ))]));
    server.push(ScriptedResponse::sse([frame(
        &json!({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}),
    )]));
    let expected = [(400, "SAFETY"), (503, "UNAVAILABLE")];
    for (want_status, want_code) in expected {
        let items = drain(
            model
                .synthesize("hi", &TtsOptions::default())
                .await
                .unwrap(),
        )
        .await;
        let err = assert_ends_in_error(&items);
        let ModelError::Provider { status, code, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!((*status, code.as_deref()), (want_status, Some(want_code)));
    }
    let bad =
        GeminiTtsModel::with_client(http(), "k", "../etc").with_base_url(server.url("/v1beta"));
    let err = bad
        .synthesize("hi", &TtsOptions::default())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, ModelError::InvalidRequest { .. }), "{err:?}");
    assert_eq!(server.request_count(), 5);
}

#[tokio::test]
async fn a_rate_limit_is_retried_after_retry_after() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::json(
            429,
            &json!({"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}),
        )
        .with_header("retry-after", "1"),
    );
    server.push(ScriptedResponse::sse([frame(&response(
        &[part(&[7])],
        Some("STOP"),
    ))]));
    let model = model(&server).with_http_client(http_honouring_retry_after());
    let started = Instant::now();
    let whole = model
        .synthesize_whole("hi", &TtsOptions::default())
        .await
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(whole.audio, vec![7]);
    assert_eq!(server.request_count(), 2);
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}
