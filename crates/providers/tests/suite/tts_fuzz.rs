//! Every TTS wire against garbage and mangled streams: random bytes
//! (invalid UTF-8 included), valid frames with bytes flipped, and cuts at
//! random points. Each call must end in `Done` or one typed error item,
//! never a panic or a hang.

use oxiscope_model::{TtsEvent, TtsModel, TtsOptions};
use oxiscope_providers::tts::{
    DashScopeTtsModel, GeminiTtsModel, OpenAiStreamFormat, OpenAiTtsModel,
};
use oxiscope_test_support::{BodyEnd, FakeServer, ScriptedResponse};
use serde_json::json;

use super::tts_support::{b64, drain, http};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A valid body of each wire.
fn valid_bodies() -> [(&'static str, String); 3] {
    let frame = |v: serde_json::Value| ScriptedResponse::sse_frame(None, &v.to_string());
    let openai = [
        frame(json!({"type": "speech.audio.delta", "audio": b64(b"abcdef")})),
        frame(
            json!({"type": "speech.audio.done", "usage": {"input_tokens": 1, "output_tokens": 2}}),
        ),
    ]
    .concat();
    let dashscope = [
        frame(json!({"output": {"finish_reason": "null", "audio": {"data": b64(&[1, 2, 3, 4])}}})),
        frame(json!({"output": {"finish_reason": "stop", "audio": {"data": ""}}, "usage": {"input_tokens": 1, "output_tokens": 2}})),
    ]
    .concat();
    let gemini = frame(json!({"candidates": [{"content": {"parts": [
        {"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": b64(&[5, 6])}}]},
        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1}}));
    [
        ("openai", openai),
        ("dashscope", dashscope),
        ("gemini", gemini),
    ]
}

fn mangle(rng: &mut Rng, body: &str) -> (Vec<u8>, BodyEnd) {
    let mut bytes = body.as_bytes().to_vec();
    match rng.below(3) {
        0 => {
            let len = rng.below(200);
            bytes = (0..len).map(|_| rng.next() as u8).collect();
        }
        1 => {
            for _ in 0..=rng.below(4) {
                let at = rng.below(bytes.len());
                if let Some(b) = bytes.get_mut(at) {
                    *b = rng.next() as u8;
                }
            }
        }
        _ => bytes.truncate(rng.below(bytes.len())),
    }
    let end = if rng.below(2) == 0 {
        BodyEnd::Complete
    } else {
        BodyEnd::Abort
    };
    (bytes, end)
}

#[tokio::test]
async fn mangled_streams_end_in_done_or_one_typed_error() {
    let server = FakeServer::start().await.unwrap();
    let openai = OpenAiTtsModel::with_client(http(), "k", "gpt-4o-mini-tts")
        .with_base_url(server.url("/v1"))
        .with_stream_format(OpenAiStreamFormat::Sse);
    let dashscope = DashScopeTtsModel::with_client(http(), "k", "qwen3-tts-flash")
        .with_base_url(server.url("/api/v1"));
    let gemini = GeminiTtsModel::with_client(http(), "k", "gemini-2.5-flash-preview-tts")
        .with_base_url(server.url("/v1beta"));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let options = TtsOptions::default();
    for round in 0..40 {
        for (wire, body) in valid_bodies() {
            let (bytes, end) = mangle(&mut rng, &body);
            server.push(ScriptedResponse::sse([bytes.clone()]).with_end(end));
            let stream = match wire {
                "openai" => openai.synthesize("hi", &options).await,
                "dashscope" => dashscope.synthesize("hi", &options).await,
                _ => gemini.synthesize("hi", &options).await,
            };
            let items = drain(stream.unwrap()).await;
            let endings = items
                .iter()
                .filter(|i| i.is_err() || matches!(i, Ok(TtsEvent::Done { .. })))
                .count();
            assert_eq!(
                endings,
                1,
                "{wire} round {round} body {:?}: {items:?}",
                String::from_utf8_lossy(&bytes)
            );
            assert!(
                matches!(items.last(), Some(Err(_) | Ok(TtsEvent::Done { .. }))),
                "{wire} round {round}: {items:?}"
            );
        }
    }
}
