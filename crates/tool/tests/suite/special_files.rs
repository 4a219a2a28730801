//! The local backend on paths that are not plain files: devices, FIFOs,
//! files that lie about their size, and files bigger than the cap.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oxiscope_message::ToolResultState;
use oxiscope_tool::{ExecBackend, LocalBackend, SessionState};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{builtin_toolkit, ctx, expect, run};

/// Longest a refusal may take; a hang fails the test after it.
const DEADLINE: Duration = Duration::from_secs(10);

/// Runs `future` to completion within [`DEADLINE`], on a runtime that is
/// shut down without waiting for stuck blocking threads, so a regression
/// that hangs fails instead of hanging the test binary.
fn within<F: Future>(future: F) -> F::Output {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(async { tokio::time::timeout(DEADLINE, future).await });
    runtime.shutdown_background();
    result.unwrap_or_else(|_| panic!("still running after {DEADLINE:?}"))
}

/// A FIFO with no writer and no reader, in a fresh directory.
fn fifo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    (dir, path)
}

#[track_caller]
fn assert_refused(result: io::Result<impl std::fmt::Debug>, kind: io::ErrorKind, text: &str) {
    let err = result.unwrap_err();
    assert_eq!(err.kind(), kind, "{err}");
    assert_eq!(err.to_string(), text);
}

#[test]
fn reading_a_device_is_refused_not_read_without_end() {
    let backend = LocalBackend::new();
    let read = within(backend.read(Path::new("/dev/zero"), 1024));
    assert_refused(
        read,
        io::ErrorKind::InvalidInput,
        "/dev/zero is not a regular file (a character device)",
    );
    // `metadata` still works for any path.
    let meta = within(backend.metadata(Path::new("/dev/zero"))).unwrap();
    assert!(!meta.is_dir);
}

#[test]
fn reading_a_fifo_is_refused_without_waiting_for_a_writer() {
    let (_dir, pipe) = fifo();
    let read = within(LocalBackend::new().read(&pipe, 1024));
    assert_refused(
        read,
        io::ErrorKind::InvalidInput,
        &format!("{} is not a regular file (a FIFO)", pipe.display()),
    );
}

#[test]
fn writing_a_fifo_or_a_device_is_refused_without_waiting_for_a_reader() {
    let (_dir, pipe) = fifo();
    let backend = LocalBackend::new();
    assert_refused(
        within(backend.write(&pipe, b"data")),
        io::ErrorKind::InvalidInput,
        &format!("{} is not a regular file (a FIFO)", pipe.display()),
    );
    assert_refused(
        within(backend.write(Path::new("/dev/null"), b"data")),
        io::ErrorKind::InvalidInput,
        "/dev/null is not a regular file (a character device)",
    );
}

#[test]
fn the_read_tool_explains_that_a_device_or_fifo_is_not_a_file() {
    let (dir, pipe) = fifo();
    let toolkit = builtin_toolkit(dir.path());
    let session = SessionState::default();
    for (path, kind) in [
        (pipe.display().to_string(), "a FIFO"),
        ("/dev/zero".to_owned(), "a character device"),
    ] {
        let response = within(run(
            &toolkit,
            "Read",
            json!({"file_path": path}),
            ctx(dir.path(), &session),
        ));
        let text = expect(&response, ToolResultState::Error);
        assert_eq!(
            text,
            format!("Error reading file: {path} is not a regular file ({kind})")
        );
    }
}

#[test]
fn a_file_bigger_than_the_cap_is_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    std::fs::write(&path, vec![b'x'; 100]).unwrap();
    let backend = LocalBackend::new();
    assert_eq!(within(backend.read(&path, 100)).unwrap().len(), 100);
    assert_refused(
        within(backend.read(&path, 99)),
        io::ErrorKind::FileTooLarge,
        &format!(
            "{} is 100 bytes, more than the limit of 99 bytes",
            path.display()
        ),
    );
}

#[test]
fn a_file_that_reports_no_size_is_still_capped() {
    // `/proc` files report a length of 0 whatever they hold.
    let status = Path::new("/proc/self/status");
    let backend = LocalBackend::new();
    assert!(!within(backend.read(status, 1 << 20)).unwrap().is_empty());
    assert_refused(
        within(backend.read(status, 16)),
        io::ErrorKind::FileTooLarge,
        "/proc/self/status holds more than the limit of 16 bytes",
    );
}
