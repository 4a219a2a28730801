//! `DashScopeTtsModel` against a fake DashScope server: the native request,
//! base64 PCM events reassembled in order across awkward chunk boundaries,
//! usage, cut and garbage streams, error events and the endpoint policy.

use oxiscope_model::{
    Credential, DashScopeCredential, ModelError, TtsEvent, TtsModel, TtsOptions, TtsUsage,
};
use oxiscope_providers::tts::DashScopeTtsModel;
use oxiscope_providers::{Endpoints, TtsModelConfig, tts_model_with};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::tts_support::{assert_ends_in_error, audio_and_last, b64, drain, http};

const PATH: &str = "/api/v1/services/aigc/multimodal-generation/generation";

fn model(server: &FakeServer) -> DashScopeTtsModel {
    DashScopeTtsModel::with_client(http(), "sk-ds", "qwen3-tts-flash")
        .with_base_url(server.url("/api/v1"))
}

fn event(id: usize, data: &Value) -> String {
    format!("id:{id}\nevent:result\n:HTTP_STATUS/200\ndata:{data}\n\n")
}

fn audio_event(id: usize, pcm: &[u8]) -> String {
    event(
        id,
        &json!({"output": {"finish_reason": "null", "audio": {"data": b64(pcm), "id": "audio_1", "expires_at": 1}},
                "usage": {"input_tokens": 12, "output_tokens": id * 10, "characters": 0}, "request_id": "r1"}),
    )
}

fn final_event(id: usize) -> String {
    event(
        id,
        &json!({"output": {"finish_reason": "stop", "audio": {"data": "", "url": "https://x/a.wav", "id": "audio_1"}},
                "usage": {"input_tokens": 12, "output_tokens": 35, "characters": 0}, "request_id": "r1"}),
    )
}

fn full_body() -> String {
    [
        audio_event(1, &[1, 2, 3, 4]),
        audio_event(2, &[5, 6]),
        audio_event(3, &[7, 8, 9, 10]),
        final_event(4),
    ]
    .concat()
}

#[tokio::test]
async fn the_request_is_dashscopes_and_pcm_arrives_in_order_across_cut_chunks() {
    let server = FakeServer::start().await.unwrap();
    server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body_in_chunks(full_body(), 7),
    );
    let model = model(&server)
        .with_voice("Serena")
        .with_language_type("Chinese");
    let text = "你好, \"world\"";
    let items = drain(
        model
            .synthesize(text, &TtsOptions::default())
            .await
            .unwrap(),
    )
    .await;
    let (audio, last) = audio_and_last(&items);
    assert_eq!(audio, (1..=10).collect::<Vec<u8>>());
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
    assert_eq!((*input_tokens, *output_tokens), (12, 35));
    let Ok(TtsEvent::Audio(first)) = &items[0] else {
        panic!("{items:?}")
    };
    assert_eq!(
        (first.media_type.as_str(), first.sample_rate),
        ("audio/pcm", Some(24_000))
    );
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", PATH)
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-ds"));
    assert_eq!(request.header("x-dashscope-sse"), Some("enable"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(
        request.body_text(),
        r#"{"model":"qwen3-tts-flash","input":{"text":"你好, \"world\"","voice":"Serena","language_type":"Chinese"}}"#
    );
}

#[tokio::test]
async fn every_cut_of_the_stream_is_a_typed_error_never_a_panic() {
    let body = full_body();
    let complete_at = body.len();
    let server = FakeServer::start().await.unwrap();
    let model = model(&server);
    // Every cut short of the final event's closing blank line.
    for cut in (0..complete_at - 2).step_by(13) {
        for end in [BodyEnd::Complete, BodyEnd::Abort] {
            server.push(ScriptedResponse::sse([body[..cut].to_owned()]).with_end(end));
            let items = drain(
                model
                    .synthesize("hi", &TtsOptions::default())
                    .await
                    .unwrap(),
            )
            .await;
            let err = assert_ends_in_error(&items);
            assert!(
                matches!(err, ModelError::Stream { .. }),
                "cut at {cut}: {err:?}"
            );
        }
    }
}

#[tokio::test]
async fn garbage_events_are_stream_errors() {
    let server = FakeServer::start().await.unwrap();
    let model = model(&server);
    let bodies = [
        "data:{not json\n\n".to_owned(),
        "data:[1,2]\n\n".to_owned(),
        event(1, &json!({"output": {"audio": {"data": "@@@"}}})),
        event(1, &json!({"usage": {}})),
    ];
    for body in bodies {
        server.push(ScriptedResponse::sse([body]));
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
async fn error_events_and_error_statuses_are_provider_errors() {
    let server = FakeServer::start().await.unwrap();
    let model = model(&server);
    server.push(ScriptedResponse::sse([
        audio_event(1, &[1, 2]),
        "id:2\nevent:error\n:HTTP_STATUS/429\ndata:{\"code\":\"Throttling.RateQuota\",\"message\":\"Requests rate limit exceeded\",\"request_id\":\"r2\"}\n\n".to_owned(),
    ]));
    let items = drain(
        model
            .synthesize("hi", &TtsOptions::default())
            .await
            .unwrap(),
    )
    .await;
    assert!(matches!(items[0], Ok(TtsEvent::Audio(_))));
    let err = assert_ends_in_error(&items);
    let ModelError::Provider {
        status,
        code,
        request_id,
        ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*status, code.as_deref(), request_id.as_deref()),
        (429, Some("Throttling.RateQuota"), Some("r2"))
    );

    server.push(
        ScriptedResponse::new(400)
            .with_header("content-type", "text/event-stream")
            .with_body("id:1\nevent:error\n:HTTP_STATUS/400\ndata:{\"code\":\"InvalidParameter\",\"message\":\"Voice 'Nobody' is not supported\",\"request_id\":\"r3\"}\n\n"),
    );
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
        (
            400,
            Some("InvalidParameter"),
            "Voice 'Nobody' is not supported"
        )
    );
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn the_credentials_compatible_endpoint_maps_to_the_native_api_and_public_only_refuses_it() {
    let server = FakeServer::start().await.unwrap();
    server.push(ScriptedResponse::sse([
        audio_event(1, &[9]),
        final_event(2),
    ]));
    let credential = Credential::from(
        DashScopeCredential::new("sk-cred").with_base_url(server.url("/compatible-mode/v1")),
    );
    let config = TtsModelConfig::new("qwen3-tts-flash").with_parameter("voice", "Ethan");
    let guarded = tts_model_with(&credential, &config, Endpoints::PublicOnly).unwrap();
    let err = guarded
        .synthesize("hi", &TtsOptions::default())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, ModelError::InvalidRequest { .. }), "{err:?}");
    assert_eq!(server.request_count(), 0);

    let open = tts_model_with(&credential, &config, Endpoints::Any).unwrap();
    let whole = open
        .synthesize_whole("hi", &TtsOptions::default())
        .await
        .unwrap();
    assert_eq!(whole.audio, vec![9]);
    let request = &server.requests()[0];
    assert_eq!(request.path, PATH);
    assert_eq!(request.header("authorization"), Some("Bearer sk-cred"));
    assert_eq!(request.body_json().unwrap()["input"]["voice"], "Ethan");
}
