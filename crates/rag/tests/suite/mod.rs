mod agent;
mod chunking;
mod formats;
mod hostile;
mod knowledge;
mod office;
mod stores;
mod support;

use std::path::PathBuf;

/// The bytes of a committed fixture.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}
