use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, HintBlock, MediaBlock, Msg, RichContent,
    Role, TextBlock, ToolCallBlock, ToolResultBlock, ToolResultState, UrlSource,
};
use pretty_assertions::assert_eq;

use super::media::sha256_hex;
use super::{FileOffloader, OffloadError, Offloader};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot really an image, but bytes all the same \x00\xff";
const WAV: &[u8] = b"RIFF....WAVEfmt some audio";

fn b64_block(bytes: &[u8], media_type: &str) -> DataBlock {
    DataBlock::new(DataSource::Base64(Base64Source {
        data: STANDARD.encode(bytes),
        media_type: media_type.to_owned(),
    }))
}

fn url_block(url: &str, media_type: &str) -> DataBlock {
    DataBlock::new(DataSource::Url(UrlSource::new(url, media_type).unwrap()))
}

fn data_file(root: &Path, bytes: &[u8], ext: &str) -> PathBuf {
    root.join("data")
        .join(format!("{}.{ext}", sha256_hex(bytes)))
}

fn file_url(path: &Path) -> String {
    url::Url::from_file_path(path).unwrap().into()
}

/// Every file under `dir`, recursively, as paths relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().to_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn read_msgs(path: &str) -> Vec<Msg> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `data` with its base64 source replaced by a file URL for `bytes`.
fn pointed(mut data: DataBlock, root: &Path, bytes: &[u8], ext: &str) -> DataBlock {
    let media_type = data.source.media_type().to_owned();
    data.source = DataSource::Url(UrlSource {
        url: file_url(&data_file(root, bytes, ext)),
        media_type,
    });
    data
}

#[tokio::test]
async fn context_round_trips_with_base64_data_moved_to_data_files() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let root = offloader.root().to_owned();

    let image = b64_block(PNG, "image/png").with_name("chart.png");
    let remote = url_block("https://example.com/cat.jpg", "image/jpeg");
    let user = Msg::user(
        "alice",
        vec![
            ContentBlock::Text(TextBlock::new("look at this")),
            ContentBlock::Data(image.clone()),
            ContentBlock::Data(remote.clone()),
        ],
    )
    .unwrap();
    let audio = b64_block(WAV, "audio/wav");
    let result = ToolResultBlock::new(
        "call_1",
        "Read",
        vec![
            MediaBlock::Text(TextBlock::new("here is the recording")),
            MediaBlock::Data(audio.clone()),
        ],
        ToolResultState::Success,
    );
    let hint_image = b64_block(PNG, "image/png");
    let hint = HintBlock::new(vec![MediaBlock::Data(hint_image.clone())], None);
    let assistant = Msg::assistant(
        "Friday",
        vec![
            ContentBlock::ToolCall(ToolCallBlock::new("call_1", "Read", "{}")),
            ContentBlock::ToolResult(result.clone()),
            ContentBlock::Hint(hint.clone()),
        ],
    )
    .unwrap();
    let plain = Msg::from_text("system", Role::System, "be brief");
    let msgs = vec![user.clone(), assistant.clone(), plain.clone()];

    let path = offloader.offload_context("s1", &msgs).await.unwrap();
    assert_eq!(PathBuf::from(&path), root.join("sessions/s1/context.jsonl"));
    assert!(Path::new(&path).is_absolute());

    // What the lines should say: every base64 source now points at a file.
    let mut want_user = user;
    want_user.content[1] = ContentBlock::Data(pointed(image, &root, PNG, "png"));
    let mut want_assistant = assistant;
    let mut want_result = result;
    if let RichContent::Blocks(blocks) = &mut want_result.output {
        blocks[1] = MediaBlock::Data(pointed(audio, &root, WAV, "wav"));
    }
    want_assistant.content[1] = ContentBlock::ToolResult(want_result);
    let mut want_hint = hint;
    want_hint.hint = RichContent::Blocks(vec![MediaBlock::Data(pointed(
        hint_image, &root, PNG, "png",
    ))]);
    want_assistant.content[2] = ContentBlock::Hint(want_hint);

    assert_eq!(read_msgs(&path), vec![want_user, want_assistant, plain]);

    // The bytes are in data/, once per distinct payload; the jsonl holds no base64.
    assert_eq!(std::fs::read(data_file(&root, PNG, "png")).unwrap(), PNG);
    assert_eq!(std::fs::read(data_file(&root, WAV, "wav")).unwrap(), WAV);
    let jsonl = std::fs::read_to_string(&path).unwrap();
    assert!(!jsonl.contains(&STANDARD.encode(PNG)), "{jsonl}");
    assert_eq!(
        files_under(&root),
        vec![
            data_file(Path::new(""), PNG, "png"),
            data_file(Path::new(""), WAV, "wav"),
            PathBuf::from("sessions/s1/context.jsonl"),
        ]
    );
}

#[tokio::test]
async fn later_calls_append_after_earlier_ones() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let first = Msg::from_text("a", Role::User, "one");
    let second = Msg::from_text("b", Role::Assistant, "two");
    let third = Msg::from_text("a", Role::User, "three");
    let p1 = offloader
        .offload_context("s", std::slice::from_ref(&first))
        .await
        .unwrap();
    let p2 = offloader
        .offload_context("s", &[second.clone(), third.clone()])
        .await
        .unwrap();
    assert_eq!(p1, p2);
    assert_eq!(read_msgs(&p1), vec![first, second, third]);

    // An empty batch still yields a readable (unchanged) file.
    let p3 = offloader.offload_context("s", &[]).await.unwrap();
    assert_eq!(read_msgs(&p3).len(), 3);
}

#[tokio::test]
async fn a_cut_short_last_line_does_not_swallow_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let path = offloader.context_path("s").unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"name\": \"trunc").unwrap();
    let msg = Msg::from_text("a", Role::User, "whole");
    offloader
        .offload_context("s", std::slice::from_ref(&msg))
        .await
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(serde_json::from_str::<Msg>(lines[1]).unwrap(), msg);
}

#[tokio::test]
async fn equal_payloads_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let a = offloader
        .offload_data_block("s1", &b64_block(PNG, "image/png"))
        .await
        .unwrap();
    // Same bytes, different block (id, name) and another session.
    let b = offloader
        .offload_data_block("s2", &b64_block(PNG, "image/png").with_name("again.png"))
        .await
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(PathBuf::from(&a), data_file(offloader.root(), PNG, "png"));
    assert_eq!(std::fs::read(&a).unwrap(), PNG);

    // In a context too: two images of the same bytes, one file.
    let msg = Msg::user(
        "u",
        vec![
            ContentBlock::Data(b64_block(PNG, "image/png")),
            ContentBlock::Data(b64_block(PNG, "image/png")),
        ],
    )
    .unwrap();
    offloader.offload_context("s1", &[msg]).await.unwrap();
    let data: Vec<_> = std::fs::read_dir(offloader.root().join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(data.len(), 1, "{data:?}");

    // Unknown media types get `.bin`.
    let bin = offloader
        .offload_data_block("s1", &b64_block(b"blob", "application/x-mystery"))
        .await
        .unwrap();
    assert!(bin.ends_with(".bin"), "{bin}");
}

#[tokio::test]
async fn url_blocks_are_referenced_not_downloaded() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let block = url_block("https://example.com/a.png", "image/png");
    let reference = offloader.offload_data_block("s", &block).await.unwrap();
    assert_eq!(reference, "https://example.com/a.png");
    assert!(files_under(dir.path()).is_empty());
}

#[tokio::test]
async fn invalid_base64_is_an_error_alone_and_kept_inline_in_a_context() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let broken = DataBlock::new(DataSource::Base64(Base64Source {
        data: "this is not base64!!".to_owned(),
        media_type: "image/png".to_owned(),
    }));
    let err = offloader
        .offload_data_block("s", &broken)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, OffloadError::InvalidBase64 { block_id, .. } if *block_id == broken.id),
        "{err:?}"
    );

    let msg = Msg::user("u", vec![ContentBlock::Data(broken)]).unwrap();
    let path = offloader
        .offload_context("s", std::slice::from_ref(&msg))
        .await
        .unwrap();
    assert_eq!(read_msgs(&path), vec![msg]);
    assert!(!dir.path().join("data").exists());
}

#[tokio::test]
async fn a_tool_result_is_written_whole_with_data_referenced_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let root = offloader.root().to_owned();
    let big = "line of output\n".repeat(10_000);
    let result = ToolResultBlock::new(
        "toolu_01",
        "Bash",
        vec![
            MediaBlock::Text(TextBlock::new(big.clone())),
            MediaBlock::Data(b64_block(PNG, "image/png").with_name("plot.png")),
            MediaBlock::Data(url_block("https://example.com/x.mp3", "audio/mpeg")),
            MediaBlock::Text(TextBlock::new("done")),
        ],
        ToolResultState::Success,
    );
    let path = offloader.offload_tool_result("s", &result).await.unwrap();
    assert_eq!(
        PathBuf::from(&path),
        root.join("sessions/s/tool_result-toolu_01.txt")
    );
    let png = data_file(&root, PNG, "png");
    let want = format!(
        "{big}\n[data block \"plot.png\": image/png, saved to {}]\n\
         [data block: audio/mpeg, at https://example.com/x.mp3]\ndone",
        png.display()
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
    assert_eq!(std::fs::read(&png).unwrap(), PNG);
    // No temporary files are left behind.
    assert_eq!(
        files_under(&root),
        vec![
            data_file(Path::new(""), PNG, "png"),
            PathBuf::from("sessions/s/tool_result-toolu_01.txt"),
        ]
    );

    // A plain-text result is written as it is, replacing the earlier file.
    let again = ToolResultBlock::new("toolu_01", "Bash", "short now", ToolResultState::Error);
    let path2 = offloader.offload_tool_result("s", &again).await.unwrap();
    assert_eq!(path2, path);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "short now");
}

#[tokio::test]
async fn undecodable_data_in_a_tool_result_is_kept_raw() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let raw = "%%% not base64 %%%";
    let result = ToolResultBlock::new(
        "c",
        "Read",
        vec![MediaBlock::Data(DataBlock::new(DataSource::Base64(
            Base64Source {
                data: raw.to_owned(),
                media_type: "image/png".to_owned(),
            },
        )))],
        ToolResultState::Success,
    );
    let path = offloader.offload_tool_result("s", &result).await.unwrap();
    let saved = data_file(offloader.root(), raw.as_bytes(), "b64");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!(
            "[data block: image/png, payload is not valid base64; raw payload saved to {}]",
            saved.display()
        )
    );
    assert_eq!(std::fs::read_to_string(saved).unwrap(), raw);
}

#[tokio::test]
async fn tool_call_ids_never_leave_the_session_directory_or_collide() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let session = offloader.root().join("sessions/s");
    let mut paths = Vec::new();
    for id in ["../../escape", "a/b", "a_b", "", "nul\0id"] {
        let result = ToolResultBlock::new(id, "t", id, ToolResultState::Success);
        let path = PathBuf::from(offloader.offload_tool_result("s", &result).await.unwrap());
        assert_eq!(path.parent().unwrap(), session, "{id:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), id);
        paths.push(path);
    }
    let mut unique = paths.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), paths.len(), "{paths:?}");
    assert_eq!(files_under(dir.path()).len(), paths.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_to_one_session_never_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let offloader: Arc<dyn Offloader> = Arc::new(FileOffloader::new(dir.path()));
    let tasks = 20;
    let per_task = 5;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let offloader = Arc::clone(&offloader);
        handles.push(tokio::spawn(async move {
            // Large lines make a torn write likely if appends were not serialised.
            let msgs: Vec<Msg> = (0..per_task)
                .map(|i| Msg::from_text("u", Role::User, format!("{t}:{i}:{}", "x".repeat(50_000))))
                .collect();
            offloader.offload_context("shared", &msgs).await.unwrap()
        }));
    }
    let mut paths = Vec::new();
    for handle in handles {
        paths.push(handle.await.unwrap());
    }
    paths.dedup();
    assert_eq!(paths.len(), 1);
    let msgs = read_msgs(&paths[0]);
    assert_eq!(msgs.len(), tasks * per_task);
    // Each task's batch is contiguous and in order.
    for batch in msgs.chunks(per_task) {
        let task = batch[0].text("").split(':').next().unwrap().to_owned();
        for (i, msg) in batch.iter().enumerate() {
            assert!(
                msg.text("").starts_with(&format!("{task}:{i}:")),
                "batch of task {task} was interleaved"
            );
        }
    }
    let mut tasks_seen: Vec<String> = msgs
        .chunks(per_task)
        .map(|b| b[0].text("").split(':').next().unwrap().to_owned())
        .collect();
    tasks_seen.sort();
    tasks_seen.dedup();
    assert_eq!(tasks_seen.len(), tasks);
}

#[tokio::test]
async fn bad_session_ids_are_rejected_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path().join("root"));
    let msg = Msg::user("u", vec![ContentBlock::Data(b64_block(PNG, "image/png"))]).unwrap();
    let result = ToolResultBlock::new("c", "t", "out", ToolResultState::Success);
    let block = b64_block(PNG, "image/png");
    let long = "x".repeat(201);
    for bad in ["", ".", "..", "../up", "a/b", "a\\b", "a\0b", long.as_str()] {
        let errors = [
            offloader
                .offload_context(bad, std::slice::from_ref(&msg))
                .await
                .unwrap_err(),
            offloader
                .offload_tool_result(bad, &result)
                .await
                .unwrap_err(),
            offloader.offload_data_block(bad, &block).await.unwrap_err(),
        ];
        for err in errors {
            assert!(
                matches!(&err, OffloadError::InvalidSessionId { id, .. } if id == bad),
                "{bad:?}: {err:?}"
            );
        }
    }
    assert!(files_under(dir.path()).is_empty());
    assert!(!dir.path().join("root").exists());
}

#[tokio::test]
async fn two_sessions_never_share_files() {
    let dir = tempfile::tempdir().unwrap();
    let offloader = FileOffloader::new(dir.path());
    let a = Msg::from_text("u", Role::User, "for a");
    let b = Msg::from_text("u", Role::User, "for b");
    let pa = offloader
        .offload_context("a", std::slice::from_ref(&a))
        .await
        .unwrap();
    let pb = offloader
        .offload_context("b", std::slice::from_ref(&b))
        .await
        .unwrap();
    assert_ne!(pa, pb);
    assert_eq!(read_msgs(&pa), vec![a]);
    assert_eq!(read_msgs(&pb), vec![b]);

    let ra = ToolResultBlock::new("same", "t", "result a", ToolResultState::Success);
    let rb = ToolResultBlock::new("same", "t", "result b", ToolResultState::Success);
    let ta = offloader.offload_tool_result("a", &ra).await.unwrap();
    let tb = offloader.offload_tool_result("b", &rb).await.unwrap();
    assert_ne!(ta, tb);
    assert_eq!(std::fs::read_to_string(ta).unwrap(), "result a");
    assert_eq!(std::fs::read_to_string(tb).unwrap(), "result b");
}

#[tokio::test]
async fn io_failures_are_typed_errors_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    // The root is a file, so no directory can be created under it.
    let root = dir.path().join("not-a-dir");
    std::fs::write(&root, "x").unwrap();
    let offloader = FileOffloader::new(&root);
    let err = offloader
        .offload_context("s", &[Msg::from_text("u", Role::User, "hi")])
        .await
        .unwrap_err();
    let OffloadError::Io { path, .. } = &err else {
        panic!("expected an I/O error, got {err:?}");
    };
    assert!(path.starts_with(&root), "{err}");
    assert!(err.to_string().contains("not-a-dir"), "{err}");
}

#[test]
fn a_relative_root_is_made_absolute() {
    let offloader = FileOffloader::new("relative/root");
    assert!(offloader.root().is_absolute());
    assert!(offloader.root().ends_with("relative/root"));
}
