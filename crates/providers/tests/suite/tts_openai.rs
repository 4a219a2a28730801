//! `OpenAiTtsModel` against a fake OpenAI server: the request, chunked
//! audio reassembled in order, the SSE stream format, cut bodies,
//! retries, errors and the endpoint policy.

use std::time::{Duration, Instant};

use oxiscope_model::{
    Credential, ModelError, OpenAiCredential, TtsEvent, TtsModel, TtsOptions, TtsUsage,
};
use oxiscope_providers::tts::{OpenAiStreamFormat, OpenAiTtsModel};
use oxiscope_providers::{Endpoints, TtsModelConfig, tts_model, tts_model_with};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse, openai_rate_limited};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::tts_support::{
    assert_ends_in_error, audio_and_last, b64, drain, http, http_honouring_retry_after,
};

fn model(server: &FakeServer) -> OpenAiTtsModel {
    OpenAiTtsModel::with_client(http(), "sk-test", "gpt-4o-mini-tts")
        .with_base_url(server.url("/v1/"))
}

fn audio_body(chunks: &[&'static [u8]]) -> ScriptedResponse {
    ScriptedResponse::new(200)
        .with_header("content-type", "audio/mpeg")
        .with_chunks(chunks.iter().copied())
}

#[tokio::test]
async fn the_request_is_openais_and_chunks_arrive_in_order() {
    let server = FakeServer::start().await.unwrap();
    server.push(audio_body(&[b"ID3", b"\x00\x01\x02", b"tail"]));
    let credential = Credential::from(
        OpenAiCredential::new("sk-cred")
            .with_organization("org-7")
            .with_base_url(server.url("/v1")),
    );
    let config = TtsModelConfig::new("gpt-4o-mini-tts")
        .with_parameter("voice", "coral")
        .with_parameter("instructions", "cheerful");
    let model = tts_model(&credential, &config).unwrap();
    let options = TtsOptions::default().with_voice("sage");
    let items = drain(
        model
            .synthesize("Hello, \"world\"!", &options)
            .await
            .unwrap(),
    )
    .await;
    let (audio, last) = audio_and_last(&items);
    assert_eq!(audio, b"ID3\x00\x01\x02tail".to_vec());
    assert_eq!(last, Some(&Ok(TtsEvent::Done { usage: None })));
    let Ok(TtsEvent::Audio(first)) = &items[0] else {
        panic!("{items:?}")
    };
    assert_eq!(
        (first.media_type.as_str(), first.sample_rate),
        ("audio/mpeg", None)
    );
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/audio/speech")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-cred"));
    assert_eq!(request.header("openai-organization"), Some("org-7"));
    assert_eq!(
        request.body_text(),
        r#"{"model":"gpt-4o-mini-tts","voice":"sage","input":"Hello, \"world\"!","response_format":"mp3","instructions":"cheerful"}"#
    );
}

#[tokio::test]
async fn pcm_is_24_khz_and_the_whole_answer_plays_as_wav() {
    let server = FakeServer::start().await.unwrap();
    server.push(audio_body(&[&[1, 0, 2, 0], &[3, 0]]));
    let model = model(&server).with_response_format("pcm").unwrap();
    let whole = model
        .synthesize_whole("hi", &TtsOptions::default())
        .await
        .unwrap();
    assert_eq!(whole.audio, vec![1, 0, 2, 0, 3, 0]);
    assert_eq!(
        (whole.media_type.as_str(), whole.sample_rate),
        ("audio/pcm", Some(24_000))
    );
    let (wav, media) = whole.into_playable();
    assert_eq!(media, "audio/wav");
    assert_eq!(&wav[..4], b"RIFF");
    assert_eq!(wav.len(), 44 + 6);
    assert_eq!(
        server.requests()[0].body_json().unwrap()["response_format"],
        "pcm"
    );
    assert!(model.with_response_format("ogg").is_err());
}

#[tokio::test]
async fn the_sse_format_streams_deltas_then_usage() {
    let server = FakeServer::start().await.unwrap();
    let frame = |v: serde_json::Value| ScriptedResponse::sse_frame(None, &v.to_string());
    server.push(ScriptedResponse::sse([
        frame(json!({"type": "speech.audio.delta", "audio": b64(b"abc")})),
        frame(json!({"type": "speech.audio.delta", "audio": b64(b"def")})),
        frame(json!({"type": "speech.audio.done", "usage": {"input_tokens": 4, "output_tokens": 9, "total_tokens": 13}})),
    ]));
    let model = model(&server).with_stream_format(OpenAiStreamFormat::Sse);
    let items = drain(
        model
            .synthesize("hi", &TtsOptions::default())
            .await
            .unwrap(),
    )
    .await;
    let (audio, last) = audio_and_last(&items);
    assert_eq!(audio, b"abcdef".to_vec());
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
    assert_eq!((*input_tokens, *output_tokens), (4, 9));
    assert_eq!(
        server.requests()[0].body_json().unwrap()["stream_format"],
        "sse"
    );

    // Cut before speech.audio.done, and garbage base64: typed errors.
    server.push(ScriptedResponse::sse([frame(
        json!({"type": "speech.audio.delta", "audio": b64(b"abc")}),
    )]));
    server.push(ScriptedResponse::sse([frame(
        json!({"type": "speech.audio.delta", "audio": "%%%not base64"}),
    )]));
    for _ in 0..2 {
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
}

#[tokio::test]
async fn a_cut_body_ends_with_a_stream_error_and_no_done() {
    let server = FakeServer::start().await.unwrap();
    server.push(audio_body(&[b"part-1", b"part-2"]).with_end(BodyEnd::Abort));
    let items = drain(
        model(&server)
            .synthesize("hi", &TtsOptions::default())
            .await
            .unwrap(),
    )
    .await;
    let err = assert_ends_in_error(&items);
    assert!(matches!(err, ModelError::Stream { .. }), "{err:?}");
    let (audio, _) = audio_and_last(&items);
    assert!(b"part-1part-2".starts_with(&audio), "{audio:?}");
}

#[tokio::test]
async fn a_rate_limit_waits_for_retry_after_and_an_auth_error_is_typed() {
    let server = FakeServer::start().await.unwrap();
    server.push(openai_rate_limited(1));
    server.push(audio_body(&[b"ok"]));
    let model = model(&server).with_http_client(http_honouring_retry_after());
    let started = Instant::now();
    let whole = model
        .synthesize_whole("hi", &TtsOptions::default())
        .await
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(whole.audio, b"ok".to_vec());
    assert_eq!(server.request_count(), 2);
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );

    server.push(ScriptedResponse::json(
        401,
        &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    ));
    let err = model
        .synthesize("hi", &TtsOptions::default())
        .await
        .err()
        .unwrap();
    let ModelError::Provider {
        status,
        code,
        message,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*status, code.as_deref(), message.as_str()),
        (401, Some("invalid_api_key"), "Incorrect API key provided")
    );
}

#[tokio::test]
async fn public_only_refuses_a_loopback_endpoint_and_empty_text_sends_nothing() {
    let server = FakeServer::start().await.unwrap();
    let credential = Credential::from(OpenAiCredential::new("k").with_base_url(server.url("/v1")));
    let guarded = tts_model_with(
        &credential,
        &TtsModelConfig::new("tts-1"),
        Endpoints::PublicOnly,
    )
    .unwrap();
    let err = guarded
        .synthesize("hi", &TtsOptions::default())
        .await
        .err()
        .unwrap();
    let ModelError::InvalidRequest { message } = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("public addresses"), "{message}");
    let items = drain(
        guarded
            .synthesize("", &TtsOptions::default())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(items, vec![Ok(TtsEvent::Done { usage: None })]);
    assert_eq!(server.request_count(), 0);
}
