//! The README's test command (`scripts/test`) ends with one line that
//! counts every skipped test and names what to install.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/test")
}

fn summary_of(skips: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skips.txt");
    std::fs::write(&file, skips).unwrap();
    let out = Command::new("bash")
        .arg(script())
        .arg("--summary")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_skip_is_counted_and_what_is_missing_is_named() {
    let line = summary_of(
        "suite::sandbox::a: no sandbox: `bwrap` was not found\n\
         suite::tenant::b: skipped (no sandbox: a test sandbox failed)\n\
         suite::mcp::c: the MCP test server is not installed (node on PATH: false)\n\
         suite::ui::d: chromium or chromedriver is missing\n",
    );
    assert!(
        line.starts_with("== test summary: 4 tests skipped: "),
        "{line}"
    );
    assert!(
        line.contains("2 for bubblewrap (apt-get install bubblewrap"),
        "{line}"
    );
    assert!(
        line.contains("1 for the MCP test servers (npm ci"),
        "{line}"
    );
    assert!(
        line.contains("1 for chromium and chromium-driver"),
        "{line}"
    );
}

#[test]
fn nothing_skipped_says_so() {
    assert_eq!(summary_of(""), "== test summary: nothing skipped\n");
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(
        readme.contains("```sh\nscripts/test\n```"),
        "the README names scripts/test"
    );
    assert!(
        ci.lines().any(|l| l.trim() == "scripts/test"),
        ".ci/run calls it"
    );
}
