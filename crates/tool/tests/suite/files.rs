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
    // AgentScope's layout: six-column numbers, a tab, no final newline.
    let expected: Vec<String> = (1..=10).map(|i| format!("{i:>6}\tline {i}")).collect();
    assert_eq!(text, expected.join("\n"));
    assert_eq!(all.metadata["total_lines"], json!(10));

    let page = env
        .call(
            "Read",
            json!({"file_path": env.path("a.txt"), "offset": "4", "limit": 2}),
        )
        .await;
    // Like AgentScope, the page is just its lines.
    assert_eq!(
        expect(&page, ToolResultState::Success),
        "     4\tline 4\n     5\tline 5"
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
    assert_eq!(
        expect(&missing, ToolResultState::Error),
        format!("Error: File does not exist: {}", env.path("nope.txt"))
    );

    std::fs::create_dir(env.path("sub")).unwrap();
    let dir = env.read("sub").await;
    assert_eq!(
        expect(&dir, ToolResultState::Error),
        format!(
            "Error: Path is a directory, not a file: {}",
            env.path("sub")
        )
    );

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
    assert_eq!(
        expect(&refused, ToolResultState::Error),
        "Error: Unsupported image type image/png, only none are supported."
    );
    let jpeg_only = env.ctx().with_accepted_media(["image/jpeg".to_owned()]);
    let input = json!({"file_path": env.path("pixel.png")});
    let refused = run(&env.toolkit, "Read", input, jpeg_only).await;
    assert_eq!(
        expect(&refused, ToolResultState::Error),
        "Error: Unsupported image type image/png, only image/jpeg are supported."
    );

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
    assert_eq!(
        expect(&response, ToolResultState::Success),
        format!("The file {path} has been written successfully (2 lines).")
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
    assert_eq!(response.metadata["created"], json!(true));
    // The diff AgentScope's web UI draws: a new file is all added.
    assert_eq!(
        response.metadata["diff"],
        format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,2 @@\n+a\n+b\n")
    );
    assert_eq!(response.metadata["file_path"], path.as_str());
    assert_eq!(response.metadata["occurrences"], json!(1));
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
    assert_eq!(
        expect(&write, ToolResultState::Error),
        format!(
            "Error: File {} exists but has not been read yet. You must read the file first \
             before writing to it.",
            env.path("keep.txt")
        )
    );
    let edit = env
        .call(
            "Edit",
            json!({"file_path": env.path("keep.txt"), "old_string": "precious", "new_string": "x"}),
        )
        .await;
    assert_eq!(
        expect(&edit, ToolResultState::Error),
        "Error: To edit a file, you must first read it using the Read tool."
    );
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
    assert_eq!(
        expect(&ok, ToolResultState::Success),
        format!("The file {path} has been written successfully (1 lines).")
    );
    assert_eq!(ok.metadata["created"], json!(false));
    assert_eq!(
        ok.metadata["diff"],
        format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-v2 from the user\n+v3\n")
    );
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
    assert_eq!(
        expect(&ambiguous, ToolResultState::Error),
        format!(
            "Error: old_string appears 2 times in {path}. Set replace_all=true to replace all \
             occurrences, or make old_string more specific."
        )
    );
    let missing = edit(&env, "e.rs", "let d", "x", false).await;
    assert_eq!(
        expect(&missing, ToolResultState::Error),
        format!("Error: old_string not found in {path}")
    );
    let same = edit(&env, "e.rs", "let c", "let c", false).await;
    assert_eq!(
        expect(&same, ToolResultState::Error),
        "Error: old_string and new_string are identical. No changes to make."
    );

    let one = edit(&env, "e.rs", "let c = 2;", "let c = 3;", false).await;
    assert_eq!(
        expect(&one, ToolResultState::Success),
        format!("Successfully replaced 1 occurrence in {path}")
    );
    assert_eq!(
        one.metadata["diff"],
        format!(
            "--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n let a = 1;\n let b = 1;\n\
             -let c = 2;\n+let c = 3;\n"
        )
    );
    assert_eq!(one.metadata["occurrences"], json!(1));
    // The edit refreshed the cache, so a second edit needs no new Read.
    let all = edit(&env, "e.rs", "= 1", "= 9", true).await;
    assert_eq!(
        expect(&all, ToolResultState::Success),
        format!("Successfully replaced all 2 occurrences in {path}")
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "let a = 9;\nlet b = 9;\nlet c = 3;\n"
    );
    assert_eq!(all.metadata["occurrences"], json!(2));
    assert_eq!(all.metadata["file_path"], path.as_str());
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
    assert_eq!(
        expect(&missing, ToolResultState::Error),
        format!("Error: File not found: {}", env.path("ghost.txt"))
    );
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

#[tokio::test]
async fn read_cuts_long_lines_as_agentscope_does() {
    let env = Env::new();
    let long = "é".repeat(2_500);
    std::fs::write(env.path("long.txt"), format!("short\n{long}\n")).unwrap();
    let text = expect(&env.read("long.txt").await, ToolResultState::Success);
    assert_eq!(
        text,
        format!("     1\tshort\n     2\t{}[truncated]", "é".repeat(2_000))
    );
}

#[tokio::test]
async fn read_announces_only_the_cut_its_byte_cap_makes() {
    let env = Env::new();
    // 2000 lines of 200 characters pass the 256 KiB output cap.
    let lines: String = (0..2_000)
        .map(|_| format!("{}\n", "x".repeat(200)))
        .collect();
    std::fs::write(env.path("wide.txt"), lines).unwrap();
    let response = env.read("wide.txt").await;
    let text = expect(&response, ToolResultState::Success);
    let (body, note) = text.rsplit_once("\n\n").unwrap();
    let shown = body.lines().count();
    assert!((1_000..2_000).contains(&shown), "{shown}");
    assert_eq!(
        note,
        format!(
            "[Output cut at 262144 bytes: showing lines 1-{shown} of 2000. Use offset={} to \
             read on.]",
            shown + 1
        )
    );
    assert_eq!(response.metadata["end_line"], json!(shown));
}
