//! Unified diffs of a file's change, for the `diff` metadata of Write and
//! Edit results (AgentScope's web UI draws them; the model never sees
//! them).
//!
//! The output has the shape Python's `difflib.unified_diff` gives with
//! three lines of context: `--- from` / `+++ to` headers, `@@ -a,b +c,d @@`
//! hunks, lines with their own endings (a missing last line ending is
//! noted as `diff` does, where `difflib` would run two lines together).
//! Lines are compared after the
//! common head and tail are set aside; a middle too large for the exact
//! comparison is shown as removed and added whole.

use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Largest middle (old lines × new lines) compared exactly.
const MAX_CELLS: usize = 4_000_000;

/// One run of lines: `Equal` in both texts, else removed from the old and
/// added in the new text. Ranges are line indices `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Op {
    equal: bool,
    old: (usize, usize),
    new: (usize, usize),
}

/// The unified diff from `old` to `new` (empty when they are equal).
pub(super) fn unified_diff(old: &str, new: &str, from: &str, to: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_ops(&a, &b);
    let mut out = String::new();
    for hunk in hunks(&ops) {
        if out.is_empty() {
            let _ = write!(out, "--- {from}\n+++ {to}\n");
        }
        let (first, last) = (hunk[0], hunk[hunk.len() - 1]);
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(first.old.0, last.old.1),
            range(first.new.0, last.new.1)
        );
        for op in hunk {
            if op.equal {
                push_lines(&mut out, ' ', &a[op.old.0..op.old.1]);
            } else {
                push_lines(&mut out, '-', &a[op.old.0..op.old.1]);
                push_lines(&mut out, '+', &b[op.new.0..op.new.1]);
            }
        }
    }
    out
}

/// Each line after its mark; a last line without an ending gets one and
/// the usual `\ No newline at end of file` note, so the diff stays
/// readable line by line.
fn push_lines(out: &mut String, mark: char, lines: &[&str]) {
    for line in lines {
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// `start,length` of a hunk side, 1-based (`difflib`'s spelling: a single
/// line is just its number, an empty side names the line before it).
fn range(start: usize, end: usize) -> String {
    match end - start {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        length => format!("{},{length}", start + 1),
    }
}

/// The runs that turn `a` into `b`.
fn diff_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut pairs = Vec::new();
    if a_mid.len().saturating_mul(b_mid.len()) <= MAX_CELLS {
        pairs = common_lines(a_mid, b_mid);
    }
    // Matched line pairs of the whole texts, with a sentinel at the end.
    let mut matched: Vec<(usize, usize)> = (0..head).map(|i| (i, i)).collect();
    matched.extend(pairs.into_iter().map(|(i, j)| (i + head, j + head)));
    matched.extend((0..tail).map(|k| (a.len() - tail + k, b.len() - tail + k)));
    let mut ops: Vec<Op> = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (x, y) in matched.into_iter().chain([(a.len(), b.len())]) {
        if x > i || y > j {
            ops.push(Op {
                equal: false,
                old: (i, x),
                new: (j, y),
            });
        }
        if x < a.len() {
            match ops.last_mut() {
                Some(op) if op.equal => {
                    op.old.1 += 1;
                    op.new.1 += 1;
                }
                _ => ops.push(Op {
                    equal: true,
                    old: (x, x + 1),
                    new: (y, y + 1),
                }),
            }
        }
        (i, j) = (x + 1, y + 1);
    }
    ops
}

/// A longest common subsequence of `a` and `b` as index pairs, in order.
fn common_lines(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let width = b.len() + 1;
    // lengths[i * width + j]: the LCS length of a[i..] and b[j..].
    let mut lengths = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lengths[i * width + j] = if a[i] == b[j] {
                lengths[(i + 1) * width + j + 1] + 1
            } else {
                lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// The runs grouped into hunks: each change with up to [`CONTEXT`] equal
/// lines around it, changes closer than twice that sharing a hunk.
fn hunks(ops: &[Op]) -> Vec<Vec<Op>> {
    let mut groups: Vec<Vec<Op>> = Vec::new();
    let mut current: Vec<Op> = Vec::new();
    let last = ops.len().saturating_sub(1);
    for (index, op) in ops.iter().enumerate() {
        if !op.equal {
            current.push(*op);
            continue;
        }
        let len = op.old.1 - op.old.0;
        let leading = current.is_empty();
        let trailing = index == last;
        if leading && trailing {
            break;
        }
        if leading {
            let keep = len.min(CONTEXT);
            current.push(shrink(op, len - keep, 0));
        } else if trailing {
            current.push(shrink(op, 0, len - len.min(CONTEXT)));
        } else if len > 2 * CONTEXT {
            current.push(shrink(op, 0, len - CONTEXT));
            groups.push(std::mem::take(&mut current));
            current.push(shrink(op, len - CONTEXT, 0));
        } else {
            current.push(*op);
        }
    }
    if current.iter().any(|op| !op.equal) {
        groups.push(current);
    }
    groups
}

/// `op` without `front` lines at its start and `back` at its end.
fn shrink(op: &Op, front: usize, back: usize) -> Op {
    Op {
        equal: op.equal,
        old: (op.old.0 + front, op.old.1 - back),
        new: (op.new.0 + front, op.new.1 - back),
    }
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
