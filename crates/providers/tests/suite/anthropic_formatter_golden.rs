//! The Anthropic chat and multi-agent formatters reproduce AgentScope
//! 2.0.11's payload for every reference history (whole-value equality).
//!
//! Normalisations, on the inputs only:
//! - the `file://` image of `multimodal_user` points at a file that only
//!   existed where the reference was made: the 1×1 PNG from the history is
//!   written to a temporary file and the URL rewritten to it;
//! - the remote `https://example.com/cat.png` was stubbed to return that
//!   same PNG when the reference was made (`remote_fetches_stubbed`): here a
//!   local fake server serves it and the URL is rewritten to the server's,
//!   so the download really happens (the test checks the server saw it).
//!
//! The Ollama golden test shares these helpers.

use base64::Engine as _;
use oxiscope_message::Msg;
use oxiscope_model::Formatter;
use oxiscope_providers::anthropic::{AnthropicChatFormatter, AnthropicMultiAgentFormatter};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::Value;

const LOCAL_IMAGE_URL: &str = "file:///tmp/wire-scratch/img/local.png";
const REMOTE_IMAGE_URL: &str = "https://example.com/cat.png";

/// Parses `formatter/<name>.json` of the reference data.
pub(crate) fn read(name: &str) -> Value {
    oxiscope_test_support::fixtures::load(&format!("formatter/{name}.json"))
}

/// Replaces every string equal to `from` in `value` with `to`.
fn rewrite(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s == from => *s = to.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| rewrite(v, from, to)),
        _ => {}
    }
}

/// The reference histories with their image URLs pointing at a local file
/// and a local server that serve the reference PNG.
pub(crate) struct Golden {
    pub(crate) histories: Value,
    pub(crate) server: FakeServer,
    png: Vec<u8>,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Golden {
    pub(crate) async fn new(label: &str) -> Self {
        let mut histories = read("histories");
        let png_b64 = histories["multimodal_user"][1]["content"][1]["source"]["data"]
            .as_str()
            .unwrap()
            .to_owned();
        let png = base64::engine::general_purpose::STANDARD
            .decode(&png_b64)
            .unwrap();
        let dir =
            std::env::temp_dir().join(format!("oxiscope-{label}-golden-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let local = dir.join("local.png");
        std::fs::write(&local, &png).unwrap();
        let server = FakeServer::start().await.unwrap();
        rewrite(
            &mut histories,
            LOCAL_IMAGE_URL,
            &format!("file://{}", local.display()),
        );
        rewrite(&mut histories, REMOTE_IMAGE_URL, &server.url("/cat.png"));
        Self {
            histories,
            server,
            png,
            _dir: TempDir(dir),
        }
    }

    /// Checks every case of the reference file `name` against `formatter`,
    /// serving the remote image once for each case that fetched it.
    pub(crate) async fn check(&self, name: &str, formatter: &dyn Formatter) {
        let reference = read(name);
        let cases = reference["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 6, "{name}: six reference histories");
        assert_eq!(
            reference["supported_input_media_types"],
            serde_json::json!(formatter.supported_input_media_types()),
            "{name}: accepted media types"
        );
        for case in cases {
            let history = case["history"].as_str().unwrap();
            let msgs: Vec<Msg> = serde_json::from_value(self.histories[history].clone()).unwrap();
            let fetches = case
                .get("remote_fetches_stubbed")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let before = self.server.request_count();
            for _ in 0..fetches {
                self.server.push_for(
                    "/cat.png",
                    ScriptedResponse::new(200)
                        .with_header("content-type", "image/png")
                        .with_body(self.png.clone()),
                );
            }
            let output = formatter.format(&msgs).await.unwrap();
            assert_eq!(Value::Array(output), case["output"], "{name} / {history}");
            assert_eq!(
                self.server.request_count() - before,
                fetches,
                "{name} / {history}: remote images downloaded"
            );
        }
    }
}

#[tokio::test]
async fn anthropic_chat_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("anthropic-chat").await;
    let formatter = AnthropicChatFormatter::new();
    golden.check("AnthropicChatFormatter", &formatter).await;
}

#[tokio::test]
async fn anthropic_multi_agent_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("anthropic-multi").await;
    let formatter = AnthropicMultiAgentFormatter::new();
    golden
        .check("AnthropicMultiAgentFormatter", &formatter)
        .await;
}
