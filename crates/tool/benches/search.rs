//! Grep and Glob on a large tree (this repository's `crates/` sources —
//! `.rs`, `.toml`, `.md`, no `target/` — copied 20 times, about 10k files
//! and 50 MB), against running `rg` as a process when it is installed.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

use divan::{Bencher, black_box};
use oxiscope_tool::{ExecBackend, GlobRequest, GrepMode, GrepRequest, LocalBackend};

const COPIES: usize = 20;
const PATTERN: &str = r"fn [a-z_]+_tests?\(";

fn main() {
    divan::main();
}

fn copy_sources(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name();
        if entry.file_type().unwrap().is_dir() {
            if name != "target" {
                copy_sources(&path, &to.join(&name));
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "toml" || e == "md")
        {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

static TREE: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = tempfile::tempdir().unwrap();
    for i in 0..COPIES {
        copy_sources(&crates, &dir.path().join(format!("copy{i}")));
    }
    dir
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> =
    LazyLock::new(|| tokio::runtime::Builder::new_multi_thread().build().unwrap());

fn root() -> PathBuf {
    TREE.path().to_path_buf()
}

fn has_rg() -> bool {
    Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn grep_request(mode: GrepMode) -> GrepRequest {
    GrepRequest {
        pattern: PATTERN.to_owned(),
        root: root(),
        mode,
        glob: None,
        file_type: None,
        before: 0,
        after: 0,
        line_numbers: true,
        case_insensitive: false,
        multiline: false,
        max_entries: usize::MAX,
    }
}

fn grep(mode: GrepMode) -> usize {
    let out = RUNTIME
        .block_on(LocalBackend::new().grep(grep_request(mode)))
        .unwrap();
    out.entries.len()
}

fn rg(args: &[&str]) -> usize {
    let out = Command::new("rg").args(args).arg(root()).output().unwrap();
    out.stdout.iter().filter(|b| **b == b'\n').count()
}

#[divan::bench(sample_count = 10)]
fn grep_files_with_matches(bencher: Bencher<'_, '_>) {
    LazyLock::force(&TREE);
    bencher.bench(|| black_box(grep(GrepMode::FilesWithMatches)));
}

#[divan::bench(sample_count = 10)]
fn rg_process_files_with_matches(bencher: Bencher<'_, '_>) {
    if !has_rg() {
        eprintln!("rg is not installed; skipping");
        return;
    }
    assert_eq!(
        rg(&["-l", "--no-require-git", PATTERN]),
        grep(GrepMode::FilesWithMatches)
    );
    bencher.bench(|| black_box(rg(&["-l", "--no-require-git", PATTERN])));
}

#[divan::bench(sample_count = 10)]
fn grep_content(bencher: Bencher<'_, '_>) {
    LazyLock::force(&TREE);
    bencher.bench(|| black_box(grep(GrepMode::Content)));
}

#[divan::bench(sample_count = 10)]
fn rg_process_content(bencher: Bencher<'_, '_>) {
    if !has_rg() {
        eprintln!("rg is not installed; skipping");
        return;
    }
    assert_eq!(
        rg(&["-n", "--no-require-git", PATTERN]),
        grep(GrepMode::Content)
    );
    bencher.bench(|| black_box(rg(&["-n", "--no-require-git", PATTERN])));
}

fn glob() -> usize {
    let request = GlobRequest {
        pattern: "**/*.rs".to_owned(),
        root: root(),
    };
    RUNTIME
        .block_on(LocalBackend::new().glob(request))
        .unwrap()
        .len()
}

#[divan::bench(sample_count = 10)]
fn glob_rs_files(bencher: Bencher<'_, '_>) {
    LazyLock::force(&TREE);
    bencher.bench(|| black_box(glob()));
}

#[divan::bench(sample_count = 10)]
fn rg_process_files_glob(bencher: Bencher<'_, '_>) {
    if !has_rg() {
        eprintln!("rg is not installed; skipping");
        return;
    }
    let args = ["--files", "--no-require-git", "-g", "*.rs"];
    assert_eq!(rg(&args), glob());
    bencher.bench(|| black_box(rg(&args)));
}
