//! `oxiscope serve --sandbox`: each tier starts the server where it works
//! and says which at start; a tier that cannot work stops it.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_oxiscope");

/// What `oxiscope serve --sandbox TIER` printed up to "listening on" (or
/// its exit), and whether it got there.
fn start(tier: &str, extra: &[&str]) -> (Vec<String>, bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--dev-auth",
            "--sandbox",
            tier,
        ])
        .args(extra)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .env_remove("OXISCOPE_SECRET_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    let mut listening = false;
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        listening = line.contains("listening on ");
        seen.push(line);
        if listening {
            break;
        }
    }
    let _ = child.kill();
    child.wait().unwrap();
    (seen, listening)
}

fn said(seen: &[String], what: &str) -> bool {
    seen.iter().any(|l| l.contains(what))
}

#[test]
fn landlock_is_used_when_asked_and_its_abi_said() {
    let (seen, listening) = start("landlock", &[]);
    if !listening && said(&seen, "not a working Landlock launcher") {
        oxiscope_test_support::skip(&format!("no Landlock here: {seen:?}"));
        return;
    }
    assert!(listening, "{seen:#?}");
    assert!(
        said(&seen, "sandbox: Landlock + seccomp (Landlock ABI "),
        "{seen:#?}"
    );
}

#[test]
fn auto_takes_bubblewrap_where_it_works_else_landlock() {
    let (seen, listening) = start("auto", &[]);
    assert!(listening, "{seen:#?}");
    assert!(
        said(
            &seen,
            "sandbox: bubblewrap (one warm sandbox per workspace)"
        ) || said(&seen, "sandbox: Landlock + seccomp"),
        "{seen:#?}"
    );
    // With a bubblewrap that cannot run, auto falls back to Landlock.
    let (seen, listening) = start("auto", &["--bwrap", "/nonexistent/bwrap"]);
    if !listening && said(&seen, "not a working Landlock launcher") {
        oxiscope_test_support::skip(&format!("no Landlock here: {seen:?}"));
        return;
    }
    assert!(listening, "{seen:#?}");
    assert!(said(&seen, "sandbox: Landlock + seccomp"), "{seen:#?}");
}

#[test]
fn a_forced_tier_that_cannot_work_stops_the_server() {
    let (seen, listening) = start("bwrap", &["--bwrap", "/nonexistent/bwrap"]);
    assert!(!listening, "{seen:#?}");
    assert!(said(&seen, "--sandbox bwrap"), "{seen:#?}");
}

#[test]
fn none_runs_unconfined_and_says_so() {
    let (seen, listening) = start("none", &[]);
    assert!(listening, "{seen:#?}");
    assert!(said(&seen, "UNCONFINED"), "{seen:#?}");
}
