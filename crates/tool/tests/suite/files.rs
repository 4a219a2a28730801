//! Read, Write and Edit: numbering, images, bad files, read-before-write,
//! line endings.

use std::fs::{File, FileTimes};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use oxiscope_message::{DataSource, MediaBlock, ToolResultState};
use oxiscope_tool::{LocalBackend, SessionState, ToolCallContext, ToolResponse, Toolkit};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{builtin_toolkit, ctx, expect, run};

struct Env {
    dir: tempfile::TempDir,
    toolkit: Toolkit,
    session: SessionState,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let toolkit = builtin_toolkit(dir.path());
        Self {
            dir,
            toolkit,
            session: SessionState::default(),
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn ctx(&self) -> ToolCallContext {
        ctx(self.dir.path(), &self.session)
    }

    async fn call(&self, tool: &str, input: Value) -> ToolResponse {
        run(&self.toolkit, tool, input, self.ctx()).await
    }

    async fn read(&self, name: &str) -> ToolResponse {
        self.call("Read", json!({"file_path": self.path(name)}))
            .await
    }
}

fn set_mtime(path: &str, secs_ago: u64) {
    let time = SystemTime::now() - Duration::from_secs(secs_ago);
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_times(FileTimes::new().set_modified(time))
        .unwrap();
}

#[tokio::test]
async fn read_numbers_lines_and_pages_with_offset_and_limit() {
    let env = Env::new();
    let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(env.path("a.txt"), lines).unwrap();
    let all = env.read("a.txt").await;
    let text = expect(&all, ToolResultState::Success);
    assert!(
        text.starts_with("     1\tline 1\n     2\tline 2\n"),
        "{text}"
    );
    assert_eq!(all.metadata["total_lines"], json!(10));

    let page = env
        .call(
            "Read",
            json!({"file_path": env.path("a.txt"), "offset": "4", "limit": 2}),
        )
        .await;
    let text = expect(&page, ToolResultState::Success);
    assert!(
        text.starts_with("     4\tline 4\n     5\tline 5\n"),
        "{text}"
    );
    assert!(
        text.contains("Showing lines 4-5 of 10. Use offset=6"),
        "{text}"
    );

    let past = env
        .call(
            "Read",
            json!({"file_path": env.path("a.txt"), "offset": 11}),
        )
        .await;
    assert!(expect(&past, ToolResultState::Error).contains("past the end"));
}

#[tokio::test]
async fn read_records_path_mtime_and_lines_in_the_session_cache() {
    let env = Env::new();
    std::fs::write(env.path("r.md"), "line 1\nline 2\n").unwrap();
    let relative = env.call("Read", json!({"file_path": "r.md"})).await;
    expect(&relative, ToolResultState::Success);
    let cache = env
        .session
        .tool_context()
        .lock()
        .await
        .read_file_cache
        .clone();
    assert_eq!(cache.len(), 1);
    assert_eq!(cache[0].file_path, env.path("r.md"));
    assert_eq!(cache[0].lines, ["line 1\n", "line 2\n"]);
    assert!(cache[0].updated_at > 1.0e9);
    assert!((cache[0].bytes - 14.0 / 1024.0).abs() < 1e-12);
}

#[tokio::test]
async fn read_refuses_missing_directories_binary_and_huge_files() {
    let env = Env::new();
    let missing = env.read("nope.txt").await;
    assert!(expect(&missing, ToolResultState::Error).contains("does not exist"));

    std::fs::create_dir(env.path("sub")).unwrap();
    let dir = env.read("sub").await;
    assert!(expect(&dir, ToolResultState::Error).contains("is a directory"));

    std::fs::write(env.path("bin.dat"), [0x7f, b'E', b'L', b'F', 0, 0, 1]).unwrap();
    let binary = env.read("bin.dat").await;
    assert!(expect(&binary, ToolResultState::Error).contains("binary"));

    File::create(env.path("huge.log"))
        .unwrap()
        .set_len(11 * 1024 * 1024)
        .unwrap();
    let huge = env.read("huge.log").await;
    assert!(expect(&huge, ToolResultState::Error).contains("more than the"));

    std::fs::write(env.path("doc.pdf"), "%PDF-1.4").unwrap();
    let pdf = env.read("doc.pdf").await;
    assert!(expect(&pdf, ToolResultState::Error).contains("not a readable PDF"));

    std::fs::write(env.path("empty.txt"), "").unwrap();
    let empty = env.read("empty.txt").await;
    assert!(expect(&empty, ToolResultState::Success).contains("is empty"));
}

const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, b'I', b'H', b'D', b'R',
];

#[tokio::test]
async fn images_are_data_blocks_only_when_the_model_accepts_them() {
    let env = Env::new();
    std::fs::write(env.path("pixel.png"), PNG).unwrap();
    let refused = env.read("pixel.png").await;
    assert!(expect(&refused, ToolResultState::Error).contains("does not accept images"));

    let ctx = env.ctx().with_accepted_media(["image/".to_owned()]);
    let image = run(
        &env.toolkit,
        "Read",
        json!({"file_path": env.path("pixel.png")}),
        ctx,
    )
    .await;
    assert_eq!(image.state, ToolResultState::Success);
    let MediaBlock::Data(block) = &image.content[0] else {
        panic!("not a data block")
    };
    assert_eq!(block.name.as_deref(), Some("pixel.png"));
    let DataSource::Base64(source) = &block.source else {
        panic!("not base64")
    };
    assert_eq!(source.media_type, "image/png");
    assert_eq!(source.data, "iVBORw0KGgoAAAANSUhEUg==");
}

#[tokio::test]
async fn write_creates_new_files_with_their_directories() {
    let env = Env::new();
    let path = env.path("new/dir/f.txt");
    let response = env
        .call("Write", json!({"file_path": path, "content": "a\nb\n"}))
        .await;
    assert!(expect(&response, ToolResultState::Success).contains("Created"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
    assert_eq!(response.metadata["created"], json!(true));
}

#[tokio::test]
async fn write_and_edit_refuse_an_existing_file_that_was_not_read() {
    let env = Env::new();
    std::fs::write(env.path("keep.txt"), "precious\n").unwrap();
    let write = env
        .call(
            "Write",
            json!({"file_path": env.path("keep.txt"), "content": "x"}),
        )
        .await;
    assert!(expect(&write, ToolResultState::Error).contains("has not been read"));
    let edit = env
        .call(
            "Edit",
            json!({"file_path": env.path("keep.txt"), "old_string": "precious", "new_string": "x"}),
        )
        .await;
    assert!(expect(&edit, ToolResultState::Error).contains("has not been read"));
    assert_eq!(
        std::fs::read_to_string(env.path("keep.txt")).unwrap(),
        "precious\n"
    );
}

#[tokio::test]
async fn write_refuses_a_file_changed_since_it_was_read() {
    let env = Env::new();
    let path = env.path("c.txt");
    std::fs::write(&path, "v1\n").unwrap();
    set_mtime(&path, 100);
    expect(&env.read("c.txt").await, ToolResultState::Success);
    std::fs::write(&path, "v2 from the user\n").unwrap();
    let response = env
        .call("Write", json!({"file_path": path, "content": "v3\n"}))
        .await;
    assert!(expect(&response, ToolResultState::Error).contains("changed since it was last read"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "v2 from the user\n"
    );

    // Touching without changing the content is not a change.
    expect(&env.read("c.txt").await, ToolResultState::Success);
    set_mtime(&path, 50);
    let ok = env
        .call("Write", json!({"file_path": path, "content": "v3\n"}))
        .await;
    assert!(expect(&ok, ToolResultState::Success).contains("Overwrote"));
}

#[tokio::test]
async fn write_keeps_windows_line_endings() {
    let env = Env::new();
    let path = env.path("w.txt");
    std::fs::write(&path, "a\r\nb\r\n").unwrap();
    env.read("w.txt").await;
    let response = env
        .call("Write", json!({"file_path": path, "content": "x\ny\n"}))
        .await;
    expect(&response, ToolResultState::Success);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x\r\ny\r\n");
}

async fn edit(env: &Env, name: &str, old: &str, new: &str, all: bool) -> ToolResponse {
    let input = json!({"file_path": env.path(name), "old_string": old, "new_string": new, "replace_all": all});
    env.call("Edit", input).await
}

#[tokio::test]
async fn edit_needs_a_unique_match_unless_replace_all() {
    let env = Env::new();
    let path = env.path("e.rs");
    std::fs::write(&path, "let a = 1;\nlet b = 1;\nlet c = 2;\n").unwrap();
    env.read("e.rs").await;

    let ambiguous = edit(&env, "e.rs", "= 1", "= 9", false).await;
    assert!(expect(&ambiguous, ToolResultState::Error).contains("appears 2 times"));
    let missing = edit(&env, "e.rs", "let d", "x", false).await;
    assert!(expect(&missing, ToolResultState::Error).contains("was not found"));
    let same = edit(&env, "e.rs", "let c", "let c", false).await;
    assert!(expect(&same, ToolResultState::Error).contains("identical"));

    let one = edit(&env, "e.rs", "let c = 2;", "let c = 3;", false).await;
    let text = expect(&one, ToolResultState::Success);
    assert!(
        text.contains("replaced 1 occurrence.") && text.contains("     3\tlet c = 3;"),
        "{text}"
    );
    // The edit refreshed the cache, so a second edit needs no new Read.
    let all = edit(&env, "e.rs", "= 1", "= 9", true).await;
    assert!(expect(&all, ToolResultState::Success).contains("replaced 2 occurrences"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "let a = 9;\nlet b = 9;\nlet c = 3;\n"
    );
    assert_eq!(all.metadata["replacements"], json!(2));
}

#[tokio::test]
async fn edit_keeps_windows_line_endings_and_refuses_missing_files() {
    let env = Env::new();
    let path = env.path("crlf.txt");
    std::fs::write(&path, "one\r\ntwo\r\nthree\r\n").unwrap();
    env.read("crlf.txt").await;
    let response = edit(&env, "crlf.txt", "one\ntwo", "1\n2\n2b", false).await;
    expect(&response, ToolResultState::Success);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "1\r\n2\r\n2b\r\nthree\r\n"
    );

    let missing = edit(&env, "ghost.txt", "a", "b", false).await;
    assert!(expect(&missing, ToolResultState::Error).contains("Use Write"));
    let empty = edit(&env, "crlf.txt", "", "b", false).await;
    assert!(expect(&empty, ToolResultState::Error).contains("old_string"));
}

#[tokio::test]
async fn a_confined_backend_refuses_paths_outside_its_roots() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "s\n").unwrap();
    let backend = Arc::new(LocalBackend::new().with_roots([env.dir.path().to_path_buf()]));
    let confined = env.ctx().with_backend(backend);
    let input = json!({"file_path": secret.display().to_string()});
    let read = run(&env.toolkit, "Read", input, confined.clone()).await;
    assert!(expect(&read, ToolResultState::Error).contains("outside the directories"));
    let sneaky = json!({"file_path": format!("{}/../{}", env.dir.path().display(), "x.txt")});
    let write = run(
        &env.toolkit,
        "Write",
        json!({"file_path": sneaky["file_path"], "content": "x"}),
        confined.clone(),
    )
    .await;
    assert!(expect(&write, ToolResultState::Error).contains("outside the directories"));
    // A symbolic link inside the root that leads outside is refused too.
    std::os::unix::fs::symlink(outside.path(), env.dir.path().join("link")).unwrap();
    let linked = json!({"file_path": format!("{}/link/secret.txt", env.dir.path().display())});
    let read = run(&env.toolkit, "Read", linked, confined.clone()).await;
    assert!(expect(&read, ToolResultState::Error).contains("outside the directories"));
    let inside = json!({"file_path": "new/inside.txt", "content": "ok"});
    expect(
        &run(&env.toolkit, "Write", inside, confined).await,
        ToolResultState::Success,
    );
}

#[test]
fn file_tool_permissions_come_from_the_permission_engine() {
    let env = Env::new();
    let perm =
        oxiscope_permission::PermissionContext::new(oxiscope_permission::PermissionMode::Default);
    let read = env.toolkit.tool("Read").unwrap();
    assert!(read.check_read_only(&json!({"file_path": env.path("a.txt")})));
    assert!(
        !env.toolkit
            .tool("Write")
            .unwrap()
            .check_read_only(&json!({"file_path": env.path("a")}))
    );
    let decision = env.toolkit.decide(
        "Write",
        &json!({"file_path": "/home/u/.bashrc", "content": ""}),
        &perm,
    );
    let decision = decision.unwrap();
    assert_eq!(decision.behavior, oxiscope_message::PermissionBehavior::Ask);
    assert!(decision.bypass_immune);
    assert!(Path::new(&env.path("a")).is_absolute());
}
