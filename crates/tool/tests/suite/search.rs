//! Glob and Grep on a small tree, and on links that lead out of it.

use std::fs::{File, FileTimes};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use oxiscope_message::ToolResultState;
use oxiscope_permission::PathEnv;
use oxiscope_tool::builtin_tools;
use oxiscope_tool::{
    ExecBackend, GlobRequest, GrepMode, GrepRequest, LocalBackend, SessionState, ToolResponse,
    search_glob, search_grep,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{builtin_toolkit, ctx, expect, run};

fn write(root: &Path, rel: &str, text: &str, secs_ago: u64) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let time = SystemTime::now() - Duration::from_secs(secs_ago);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_times(FileTimes::new().set_modified(time))
        .unwrap();
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "target/\n*.log\n", 500);
    write(
        root,
        "src/lib.rs",
        "pub mod a;\nfn Alpha() {}\n// TODO: more\n",
        300,
    );
    write(
        root,
        "src/a.rs",
        "fn alpha() {\n    beta();\n}\nfn beta() {}\n",
        100,
    );
    write(root, "src/deep/b.rs", "const X: u8 = 1;\n", 200);
    write(root, "README.md", "# Demo\nalpha and beta\n", 400);
    write(root, "target/out.rs", "fn alpha() {}\n", 10);
    write(root, "debug.log", "alpha\n", 10);
    write(root, ".hidden/h.rs", "fn alpha() {}\n", 10);
    dir
}

async fn call(dir: &Path, tool: &str, input: Value) -> ToolResponse {
    let toolkit = builtin_toolkit(dir);
    run(&toolkit, tool, input, ctx(dir, &SessionState::default())).await
}

fn rel(dir: &Path, text: &str) -> Vec<String> {
    let prefix = format!("{}/", dir.display());
    text.lines().map(|l| l.replace(&prefix, "")).collect()
}

#[tokio::test]
async fn glob_lists_newest_first_and_respects_gitignore() {
    let dir = tree();
    let response = call(dir.path(), "Glob", json!({"pattern": "**/*.rs"})).await;
    let text = expect(&response, ToolResultState::Success);
    assert_eq!(
        rel(dir.path(), &text),
        ["src/a.rs", "src/deep/b.rs", "src/lib.rs"]
    );
    assert_eq!(response.metadata["num_files"], json!(3));
}

#[tokio::test]
async fn glob_matches_relative_to_the_path_and_pages() {
    let dir = tree();
    let top = call(
        dir.path(),
        "Glob",
        json!({"pattern": "*.rs", "path": "src"}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&top, ToolResultState::Success)),
        ["src/a.rs", "src/lib.rs"]
    );
    let page = call(
        dir.path(),
        "Glob",
        json!({"pattern": "**/*.rs", "head_limit": 1, "offset": 1}),
    )
    .await;
    let text = expect(&page, ToolResultState::Success);
    // AgentScope's note, after a blank line, when more results follow.
    assert_eq!(
        rel(dir.path(), &text),
        [
            "src/deep/b.rs",
            "",
            "[Showing results with pagination = limit: 1, offset: 1]"
        ]
    );
    let first = call(
        dir.path(),
        "Glob",
        json!({"pattern": "**/*.rs", "head_limit": 2}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&first, ToolResultState::Success)),
        [
            "src/a.rs",
            "src/deep/b.rs",
            "",
            "[Showing results with pagination = limit: 2]"
        ]
    );
    // The last page has no note; a page past the end says so.
    let last = call(
        dir.path(),
        "Glob",
        json!({"pattern": "**/*.rs", "head_limit": 2, "offset": 2}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&last, ToolResultState::Success)),
        ["src/lib.rs"]
    );
    let past = call(
        dir.path(),
        "Glob",
        json!({"pattern": "**/*.rs", "offset": 5}),
    )
    .await;
    assert_eq!(
        expect(&past, ToolResultState::Success),
        "No files at offset 5 (3 found in total)."
    );
    let absolute = format!("{}/src/**/*.rs", dir.path().display());
    let abs = call(dir.path(), "Glob", json!({"pattern": absolute})).await;
    assert_eq!(
        rel(dir.path(), &expect(&abs, ToolResultState::Success)).len(),
        3
    );
}

#[tokio::test]
async fn glob_reports_no_files_bad_patterns_and_missing_directories() {
    let dir = tree();
    let none = call(dir.path(), "Glob", json!({"pattern": "**/*.py"})).await;
    assert_eq!(
        expect(&none, ToolResultState::Success),
        "No files found matching pattern: **/*.py"
    );
    let bad = call(dir.path(), "Glob", json!({"pattern": "src/[a"})).await;
    assert!(expect(&bad, ToolResultState::Error).contains("invalid glob"));
    let missing = call(
        dir.path(),
        "Glob",
        json!({"pattern": "*", "path": "nowhere"}),
    )
    .await;
    assert_eq!(
        expect(&missing, ToolResultState::Error),
        format!("Directory not found: {}/nowhere", dir.path().display())
    );
    let file = call(
        dir.path(),
        "Glob",
        json!({"pattern": "*", "path": "README.md"}),
    )
    .await;
    assert_eq!(
        expect(&file, ToolResultState::Error),
        format!("Directory not found: {}/README.md", dir.path().display())
    );
    for (name, input) in [
        ("head_limit", json!({"head_limit": -1, "offset": 0})),
        ("offset", json!({"head_limit": 5, "offset": -3})),
    ] {
        // The toolkit's schema check refuses these first; a direct call
        // (no toolkit) gets AgentScope's own check.
        for tool in builtin_tools(&PathEnv::new(dir.path(), None))
            .into_iter()
            .filter(|t| ["Glob", "Grep"].contains(&t.name()))
        {
            let call_ctx = ctx(dir.path(), &SessionState::default());
            // Every argument given, as the toolkit would have filled them in.
            let mut input = input.clone();
            let defaults = json!({"pattern": "*", "output_mode": "files_with_matches", "n": true,
                "i": false, "case_insensitive": false, "multiline": false});
            input
                .as_object_mut()
                .unwrap()
                .extend(defaults.as_object().unwrap().clone());
            let negative = oxiscope_tool::collect(tool.call(input, call_ctx)).await;
            let tool = tool.name();
            assert_eq!(
                expect(&negative, ToolResultState::Error),
                format!("Error: {name} must be non-negative."),
                "{tool}"
            );
        }
    }
}

#[tokio::test]
async fn grep_lists_matching_files_by_default() {
    let dir = tree();
    let response = call(dir.path(), "Grep", json!({"pattern": "alpha"})).await;
    let text = expect(&response, ToolResultState::Success);
    assert_eq!(rel(dir.path(), &text), ["README.md", "src/a.rs"]);
}

#[tokio::test]
async fn grep_content_mode_shows_numbered_lines_and_context() {
    let dir = tree();
    let input = json!({"pattern": "beta\\(\\)", "output_mode": "content", "-B": 1, "glob": "*.rs"});
    let response = call(dir.path(), "Grep", input).await;
    let text = expect(&response, ToolResultState::Success);
    assert_eq!(
        rel(dir.path(), &text),
        [
            "src/a.rs-1-fn alpha() {",
            "src/a.rs:2:    beta();",
            "src/a.rs-3-}",
            "src/a.rs:4:fn beta() {}"
        ]
    );
    let plain = call(
        dir.path(),
        "Grep",
        json!({"pattern": "TODO", "output_mode": "content", "n": false}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&plain, ToolResultState::Success)),
        ["src/lib.rs:// TODO: more"]
    );
}

#[tokio::test]
async fn grep_counts_ignores_case_and_filters_by_type() {
    let dir = tree();
    let count = call(
        dir.path(),
        "Grep",
        json!({"pattern": "alpha", "output_mode": "count", "i": true}),
    )
    .await;
    let text = expect(&count, ToolResultState::Success);
    let lines = rel(dir.path(), &text);
    // `path:count` lines only, as ripgrep's `-c` prints them.
    assert_eq!(lines, ["README.md:1", "src/a.rs:1", "src/lib.rs:1"]);

    let typed = call(
        dir.path(),
        "Grep",
        json!({"pattern": "alpha", "type": "md"}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&typed, ToolResultState::Success)),
        ["README.md"]
    );
    let bad_type = call(
        dir.path(),
        "Grep",
        json!({"pattern": "a", "type": "nosuchtype"}),
    )
    .await;
    assert!(expect(&bad_type, ToolResultState::Error).contains("nosuchtype"));
}

#[tokio::test]
async fn grep_multiline_matches_across_lines() {
    let dir = tree();
    let single = call(
        dir.path(),
        "Grep",
        json!({"pattern": "alpha\\(\\) \\{.*beta"}),
    )
    .await;
    assert_eq!(
        expect(&single, ToolResultState::Success),
        "No matches found for pattern: alpha\\(\\) \\{.*beta"
    );
    let multi = call(
        dir.path(),
        "Grep",
        json!({"pattern": "alpha\\(\\) \\{.*beta", "multiline": true}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&multi, ToolResultState::Success)),
        ["src/a.rs"]
    );
}

#[tokio::test]
async fn grep_caps_results_and_reports_bad_regexes() {
    let dir = tempfile::tempdir().unwrap();
    let many: String = (0..50).map(|i| format!("hit {i}\n")).collect();
    write(dir.path(), "many.txt", &many, 0);
    let capped = call(
        dir.path(),
        "Grep",
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 5}),
    )
    .await;
    let text = expect(&capped, ToolResultState::Success);
    let hits: Vec<String> = (0..5)
        .map(|i| format!("many.txt:{}:hit {i}", i + 1))
        .collect();
    assert_eq!(
        rel(dir.path(), &text),
        [
            hits.as_slice(),
            &[
                "".to_owned(),
                "[Showing results with pagination = limit: 5]".to_owned()
            ]
        ]
        .concat()
    );
    assert_eq!(capped.metadata["truncated"], json!(true));
    let page = call(
        dir.path(),
        "Grep",
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 5, "offset": 45}),
    )
    .await;
    let text = expect(&page, ToolResultState::Success);
    // Exactly the last five: no note.
    assert_eq!(rel(dir.path(), &text).len(), 5, "{text}");
    assert!(text.ends_with("many.txt:50:hit 49"), "{text}");
    assert_eq!(page.metadata["truncated"], json!(false));
    let past = call(
        dir.path(),
        "Grep",
        json!({"pattern": "hit", "output_mode": "content", "offset": 60}),
    )
    .await;
    assert_eq!(
        expect(&past, ToolResultState::Success),
        "No entries at offset 60."
    );
    let bad = call(dir.path(), "Grep", json!({"pattern": "(unclosed"})).await;
    assert!(expect(&bad, ToolResultState::Error).contains("invalid regex"));
}

#[tokio::test]
async fn grep_skips_binary_files_and_searches_a_single_file() {
    let dir = tree();
    write(dir.path(), "blob.bin", "alpha\0\0binary", 0);
    let response = call(dir.path(), "Grep", json!({"pattern": "alpha", "path": "."})).await;
    assert!(!expect(&response, ToolResultState::Success).contains("blob.bin"));
    let one = call(
        dir.path(),
        "Grep",
        json!({"pattern": "beta", "path": "README.md"}),
    )
    .await;
    assert_eq!(
        rel(dir.path(), &expect(&one, ToolResultState::Success)),
        ["README.md"]
    );
}

/// A tree whose links lead out of it: `real.txt` holds "needle"; `to_root`
/// links to `/`, `to_outside` to a directory outside the tree and
/// `secret.txt` to a file there, both holding "needle" too.
fn linked_tree() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(dir.path(), "real.txt", "needle\n", 0);
    write(outside.path(), "secret.txt", "needle\n", 0);
    write(outside.path(), "sub/deep.txt", "needle\n", 0);
    std::os::unix::fs::symlink("/", dir.path().join("to_root")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("to_outside")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("secret.txt"),
    )
    .unwrap();
    (dir, outside)
}

fn grep_request(root: &Path) -> GrepRequest {
    GrepRequest {
        pattern: "needle|root".to_owned(),
        root: root.to_path_buf(),
        mode: GrepMode::FilesWithMatches,
        glob: None,
        file_type: None,
        before: 0,
        after: 0,
        line_numbers: false,
        case_insensitive: false,
        multiline: false,
        max_entries: 1_000,
    }
}

#[test]
fn grep_and_glob_never_follow_links_below_the_root() {
    let (dir, _outside) = linked_tree();
    let real = dir.path().join("real.txt");
    let found = search_grep(&grep_request(dir.path())).unwrap();
    assert_eq!(found.entries, [real.display().to_string()]);
    let content = search_grep(&GrepRequest {
        mode: GrepMode::Content,
        ..grep_request(dir.path())
    })
    .unwrap();
    assert_eq!(content.entries, [format!("{}:needle", real.display())]);

    for pattern in ["**/*", "**/*.txt", "to_outside/*", "to_root/etc/*"] {
        let listed = search_glob(&GlobRequest {
            pattern: pattern.to_owned(),
            root: dir.path().to_path_buf(),
        })
        .unwrap();
        let paths: Vec<_> = listed.into_iter().map(|m| m.path).collect();
        let want = if pattern.starts_with("**") {
            vec![real.clone()]
        } else {
            vec![]
        };
        assert_eq!(paths, want, "pattern {pattern}");
    }
}

#[test]
fn an_explicit_root_is_followed_when_it_is_a_link() {
    let (dir, _outside) = linked_tree();
    // Named as the root, a link is followed like a path given to `rg`...
    let file = search_grep(&grep_request(&dir.path().join("secret.txt"))).unwrap();
    assert_eq!(file.files, 1);
    let tree = search_grep(&grep_request(&dir.path().join("to_outside"))).unwrap();
    assert_eq!(tree.files, 2);
    let listed = search_glob(&GlobRequest {
        pattern: "*.txt".to_owned(),
        root: dir.path().join("to_outside"),
    })
    .unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].path.ends_with("to_outside/secret.txt"));
}

#[tokio::test]
async fn a_confined_backend_checks_where_a_linked_root_or_absolute_pattern_leads() {
    let (dir, outside) = linked_tree();
    let backend = LocalBackend::new().with_roots([dir.path().to_path_buf()]);
    for root in ["secret.txt", "to_outside", "to_root"] {
        let err = backend
            .grep(grep_request(&dir.path().join(root)))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{root}");
        let err = backend
            .glob(GlobRequest {
                pattern: "*".to_owned(),
                root: dir.path().join(root),
            })
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{root}");
    }
    // An absolute pattern is walked from its own directory, so that is
    // what is checked, not `root`.
    let escape = GlobRequest {
        pattern: format!("{}/**/*.txt", outside.path().display()),
        root: dir.path().to_path_buf(),
    };
    let err = backend.glob(escape).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    let inside = GlobRequest {
        pattern: format!("{}/*.txt", dir.path().display()),
        root: outside.path().to_path_buf(),
    };
    let found = backend.glob(inside).await.unwrap();
    assert_eq!(found.len(), 1);

    // Through the Grep tool with a confined backend, the link is refused.
    let toolkit = builtin_toolkit(dir.path());
    let call_ctx = ctx(dir.path(), &SessionState::default()).with_backend(Arc::new(backend));
    let response = run(
        &toolkit,
        "Grep",
        json!({"pattern": "needle", "path": "secret.txt"}),
        call_ctx,
    )
    .await;
    assert!(expect(&response, ToolResultState::Error).contains("outside the directories"));
}
