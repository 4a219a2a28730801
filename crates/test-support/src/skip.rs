//! [`skip`]: how a test that needs a missing server (bubblewrap, the npm
//! MCP servers) steps aside.

use std::io::Write as _;

/// Fails the test in CI (`CI=true`, where `.ci/run` installs what tests
/// need); elsewhere says loudly that it skips, straight to the process's
/// stderr (the harness's capture cannot hide it), and records it for
/// `.ci/run`'s summary: a line `test name: why` appended to the file that
/// `OXISCOPE_TEST_SKIPS` names, when set.
///
/// # Panics
/// In CI, always: a skip there is a failure.
#[allow(clippy::panic)]
pub fn skip(why: &str) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI must run this test: {why}");
    }
    let _ = writeln!(std::io::stderr(), "\n!!! SKIPPED: {why}\n");
    let Some(path) = std::env::var_os("OXISCOPE_TEST_SKIPS") else {
        return;
    };
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let line = format!("{test}: {why}").replace('\n', " ");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}
