use std::io::Write as _;

use super::ASSETS;

/// The most JS and CSS a first visit may transfer, gzipped (#32).
const BUDGET: usize = 300 * 1024;

fn gzipped(bytes: &[u8]) -> usize {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap().len()
}

#[test]
fn the_scripts_and_styles_fit_the_transfer_budget_gzipped() {
    let code = ASSETS
        .iter()
        .filter(|(_, kind, _)| kind.starts_with("text/javascript") || kind.starts_with("text/css"));
    let sizes: Vec<(&str, usize)> = code
        .map(|&(name, _, bytes)| (name, gzipped(bytes)))
        .collect();
    let total: usize = sizes.iter().map(|(_, n)| n).sum();
    assert!(
        total <= BUDGET,
        "{total} bytes gzipped, over the {BUDGET}-byte budget: {sizes:?}"
    );
    // Every file of the folder is served (a new module not listed here
    // would be a 404 in the browser).
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/ui");
    for entry in walk(std::path::Path::new(dir)) {
        let name = entry
            .strip_prefix(dir)
            .unwrap()
            .to_str()
            .unwrap()
            .trim_start_matches('/');
        let served = name.ends_with(".html")
            || name.ends_with(".LICENSE")
            || ASSETS.iter().any(|(asset, _, _)| *asset == name);
        assert!(served, "ui/{name} is not in ASSETS");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
