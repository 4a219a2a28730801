//! The README's runnable command blocks, run against the built binary so
//! the README cannot drift from it.
//!
//! A block is runnable when its fence's info string has the word
//! `runnable` after the language (` ```sh runnable `; GitHub still renders
//! it as `sh`): it needs no network, no key and no server. Each block runs
//! under `sh -e` in a fresh directory, with `oxiscope` meaning this build's
//! binary and the configuration and data directories inside that
//! directory, and must exit with status 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

const README: &str = include_str!("../../../README.md");

/// The fewest runnable blocks the README has: losing the marker by
/// accident fails the test.
const AT_LEAST: usize = 3;

/// One fenced block: the line its fence opens on and its text.
struct Block {
    line: usize,
    text: String,
}

/// The blocks whose fence's info string has the word `runnable`.
fn runnable_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                let runnable = info.split_whitespace().skip(1).any(|w| w == "runnable");
                open = Some((index + 1, runnable, String::new()));
            }
            (Some((start, runnable, text)), Some(_)) => {
                if *runnable {
                    blocks.push(Block {
                        line: *start,
                        text: std::mem::take(text),
                    });
                }
                open = None;
            }
            (Some((_, _, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md: a fenced block is never closed");
    blocks
}

#[test]
fn every_runnable_readme_block_exits_zero() {
    let blocks = runnable_blocks(README);
    assert!(
        blocks.len() >= AT_LEAST,
        "README.md has {} `runnable` blocks, expected at least {AT_LEAST}",
        blocks.len()
    );
    for block in blocks {
        let dir = tempfile::tempdir().unwrap();
        let script = format!(
            "set -e\noxiscope() {{ \"$OXISCOPE_BIN\" \"$@\"; }}\n{}",
            block.text
        );
        let output = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("OXISCOPE_BIN", env!("CARGO_BIN_EXE_oxiscope"))
            .env("OXISCOPE_CONFIG_DIR", dir.path().join("config"))
            .env("OXISCOPE_DATA_DIR", dir.path().join("data"))
            .env("HOME", dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "README.md block at line {} failed ({}):\n{}\n--- stdout\n{}\n--- stderr\n{}",
            block.line,
            output.status,
            block.text,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn only_blocks_marked_runnable_are_found() {
    let markdown = "```sh\nno\n```\n\n```sh runnable\nyes\n```\n```text\nno\n```\n";
    let blocks = runnable_blocks(markdown);
    assert_eq!(blocks.len(), 1);
    assert_eq!((blocks[0].line, blocks[0].text.as_str()), (5, "yes\n"));
}
