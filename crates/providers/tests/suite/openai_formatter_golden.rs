//! Every chat and multi-agent formatter of the OpenAI family reproduces
//! AgentScope 2.0.11's payload for every reference history.
//!
//! Normalisations, all on the inputs or on values that cannot be
//! reproduced:
//! - the `file://` image of `multimodal_user` points at a file that only
//!   existed where the reference was made: the 1×1 PNG from the history is
//!   written to a temporary file and the URL rewritten to it (every expected
//!   output holds the file inlined as a data URI, so they are unchanged);
//! - Moonshot downloads remote images; the reference stubbed the download to
//!   return the same 1×1 PNG (`remote_fetches_stubbed`), here a local fake
//!   server serves it and the history's `https://example.com/cat.png` is
//!   rewritten to the server's URL for the Moonshot cases only;
//! - DeepSeek saves tool-result media it cannot take to a file: AgentScope
//!   picks a random temporary name, we derive the name from the data block
//!   id (stable payloads keep prefix caches warm). The path in that one
//!   message is compared as `<path>`, and the saved file is checked to hold
//!   the PNG.

use std::path::PathBuf;

use base64::Engine as _;
use oxiscope_message::Msg;
use oxiscope_model::Formatter;
use oxiscope_providers::openai_chat::{OpenAiChatFormatter, Vendor};
use oxiscope_test_support::{FakeServer, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::Value;

const LOCAL_IMAGE_URL: &str = "file:///tmp/wire-scratch/img/local.png";
const REMOTE_IMAGE_URL: &str = "https://example.com/cat.png";
const SAVED_PREFIX: &str = "saved locally at: ";

/// Parses `formatter/<name>.json` of the reference data.
fn read(name: &str) -> Value {
    oxiscope_test_support::fixtures::load(&format!("formatter/{name}.json"))
}

/// The 1×1 PNG of the histories.
fn png_base64(histories: &Value) -> String {
    histories["multimodal_user"][1]["content"][1]["source"]["data"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxiscope-golden-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

/// Replaces the path after "saved locally at: " with `<path>`, returning the
/// paths found.
fn mask_saved_paths(value: &mut Value) -> Vec<String> {
    let mut found = Vec::new();
    if let Value::Array(msgs) = value {
        for msg in msgs {
            if let Some(Value::String(content)) = msg.get_mut("content")
                && let Some(at) = content.find(SAVED_PREFIX)
            {
                let start = at + SAVED_PREFIX.len();
                let end = content[start..].find(".</system-reminder>").unwrap() + start;
                found.push(content[start..end].to_owned());
                content.replace_range(start..end, "<path>");
            }
        }
    }
    found
}

const FORMATTERS: &[(&str, Vendor, bool)] = &[
    ("OpenAIChatFormatter", Vendor::OpenAi, false),
    ("OpenAIMultiAgentFormatter", Vendor::OpenAi, true),
    ("DeepSeekChatFormatter", Vendor::DeepSeek, false),
    ("DeepSeekMultiAgentFormatter", Vendor::DeepSeek, true),
    ("MoonshotChatFormatter", Vendor::Moonshot, false),
    ("MoonshotMultiAgentFormatter", Vendor::Moonshot, true),
    ("VolcengineChatFormatter", Vendor::Volcengine, false),
    ("VolcengineMultiAgentFormatter", Vendor::Volcengine, true),
    ("DashScopeChatFormatter", Vendor::DashScope, false),
    ("DashScopeMultiAgentFormatter", Vendor::DashScope, true),
];

#[tokio::test]
async fn every_openai_family_formatter_matches_the_reference_payloads() {
    let mut histories = read("histories");
    let png = png_base64(&histories);
    let png_bytes = base64::engine::general_purpose::STANDARD
        .decode(&png)
        .unwrap();

    let images = scratch("img");
    let local = images.join("local.png");
    std::fs::write(&local, &png_bytes).unwrap();
    rewrite(
        &mut histories,
        LOCAL_IMAGE_URL,
        &format!("file://{}", local.display()),
    );

    let server = FakeServer::start().await.unwrap();
    let cat_url = server.url("/cat.png");

    let mut checked = 0;
    for &(file, vendor, multi) in FORMATTERS {
        let reference = read(file);
        let saved = scratch(file);
        let formatter = if multi {
            OpenAiChatFormatter::multi_agent(vendor)
        } else {
            OpenAiChatFormatter::chat(vendor)
        }
        .with_scratch_dir(&saved);

        let supported: Vec<String> =
            serde_json::from_value(reference["supported_input_media_types"].clone()).unwrap();
        assert_eq!(formatter.supported_input_media_types(), supported, "{file}");

        for case in reference["cases"].as_array().unwrap() {
            let name = case["history"].as_str().unwrap();
            let mut history = histories[name].clone();
            if case.get("remote_fetches_stubbed").is_some() {
                rewrite(&mut history, REMOTE_IMAGE_URL, &cat_url);
                server.push_for(
                    "/cat.png",
                    ScriptedResponse::new(200)
                        .with_header("content-type", "image/png")
                        .with_body(png_bytes.clone()),
                );
            }
            let msgs: Vec<Msg> = serde_json::from_value(history).unwrap();
            let mut actual = Value::Array(formatter.format(&msgs).await.unwrap());
            let mut expected = case["output"].clone();

            let expected_saved = mask_saved_paths(&mut expected);
            let actual_saved = mask_saved_paths(&mut actual);
            assert_eq!(actual_saved.len(), expected_saved.len(), "{file} / {name}");
            for path in &actual_saved {
                assert_eq!(std::fs::read(path).unwrap(), png_bytes, "{file} / {name}");
            }

            assert_eq!(actual, expected, "{file} / {name}");
            checked += 1;
        }
    }
    assert_eq!(checked, 60);
    // Moonshot fetched the remote image once per variant.
    let fetched = server
        .requests()
        .iter()
        .filter(|r| r.path == "/cat.png")
        .count();
    assert_eq!(fetched, 2);
}
