//! The MiniMax chat and multi-agent formatters reproduce AgentScope
//! 2.0.11's payload for every reference history (whole-value equality),
//! with the normalisations of the Anthropic golden test; and videos, which
//! MiniMax reads and Claude does not, go out as `video` blocks.

use oxiscope_message::{Base64Source, DataBlock, DataSource, Msg, TextBlock, UrlSource};
use oxiscope_model::Formatter;
use oxiscope_providers::minimax::{MiniMaxChatFormatter, MiniMaxMultiAgentFormatter};
use oxiscope_providers::{MediaPolicy, RemoteMedia};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::anthropic_formatter_golden::Golden;

#[tokio::test]
async fn minimax_chat_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("minimax-chat").await;
    golden
        .check("MiniMaxChatFormatter", &MiniMaxChatFormatter::new())
        .await;
}

#[tokio::test]
async fn minimax_multi_agent_formatter_matches_the_reference_for_every_history() {
    let golden = Golden::new("minimax-multi").await;
    golden
        .check(
            "MiniMaxMultiAgentFormatter",
            &MiniMaxMultiAgentFormatter::new(),
        )
        .await;
}

fn b64(data: &str, media_type: &str) -> DataBlock {
    let mut block = DataBlock::new(DataSource::Base64(Base64Source {
        data: data.into(),
        media_type: media_type.into(),
    }));
    block.id = format!("blk_{}", media_type.replace('/', "_")).into();
    block
}

#[tokio::test]
async fn videos_are_video_blocks_and_pdfs_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let clip = tmp.path().join("clip.mp4");
    std::fs::write(&clip, b"\x00\x00\x00\x18ftypmp42").unwrap();
    let url = url::Url::from_file_path(&clip).unwrap().to_string();
    let file_video = DataBlock::new(DataSource::Url(UrlSource::new(&url, "video/mp4").unwrap()));
    let msg = Msg::user(
        "user",
        vec![
            TextBlock::new("Describe.").into(),
            b64("AAAA", "video/webm").into(),
            file_video.into(),
            b64("JVBERi0=", "application/pdf").into(),
        ],
    )
    .unwrap();
    let out = MiniMaxChatFormatter::new().format(&[msg]).await.unwrap();
    let content = &out[0]["content"];
    assert_eq!(
        content[1],
        json!({"type": "video", "source": {"type": "base64", "media_type": "video/webm", "data": "AAAA"}})
    );
    assert_eq!(
        content[2],
        json!({"type": "video", "source": {
            "type": "base64", "media_type": "video/mp4", "data": "AAAAGGZ0eXBtcDQy"
        }})
    );
    assert_eq!(content[3]["type"], "text");
    let note = content[3]["text"].as_str().unwrap();
    assert!(note.contains("application/pdf"), "{note}");
}

#[tokio::test]
async fn the_multi_agent_formatter_folds_speakers_with_their_videos() {
    let alice = Msg::user(
        "Alice",
        vec![
            TextBlock::new("Look at this.").into(),
            b64("AAAA", "video/mp4").into(),
        ],
    )
    .unwrap();
    let bob = Msg::user("Bob", "Nice.").unwrap();
    let out = MiniMaxMultiAgentFormatter::new()
        .with_history_prompt("History:\n")
        .format(&[alice, bob])
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![json!({"role": "user", "content": [
            {"type": "text", "text": "History:\n<history>\n"},
            {"type": "video", "source": {"type": "base64", "media_type": "video/mp4", "data": "AAAA"}},
            {"type": "text", "text": "Alice: Look at this.\nBob: Nice.\n</history>"},
        ]})]
    );
}

#[tokio::test]
async fn a_video_outside_the_allowed_files_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let secret = tmp.path().join("secret.mp4");
    std::fs::write(&secret, b"secret").unwrap();
    let policy = MediaPolicy {
        file_roots: Some(vec![workspace]),
        remote: RemoteMedia::Deny,
        ..MediaPolicy::default()
    };
    let url = url::Url::from_file_path(&secret).unwrap().to_string();
    let video = DataBlock::new(DataSource::Url(UrlSource::new(&url, "video/mp4").unwrap()));
    let msg = Msg::user("user", vec![video.into()]).unwrap();
    let err = MiniMaxChatFormatter::new()
        .with_media_policy(policy)
        .format(&[msg])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("outside the directories"), "{err}");
}
