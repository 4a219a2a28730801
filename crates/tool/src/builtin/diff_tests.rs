//! Expected outputs are what Python's `difflib.unified_diff(..., n=3)`
//! prints for the same texts.

use super::unified_diff;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("l{i}\n")).collect()
}

#[test]
fn equal_texts_have_no_diff() {
    assert_eq!(unified_diff("a\nb\n", "a\nb\n", "a/f", "b/f"), "");
    assert_eq!(unified_diff("", "", "a/f", "b/f"), "");
}

#[test]
fn one_changed_line_gets_three_lines_of_context() {
    let old = numbered(20);
    let new = old.replace("l10\n", "X\n");
    assert_eq!(
        unified_diff(&old, &new, "a/f", "b/f"),
        "--- a/f\n+++ b/f\n@@ -7,7 +7,7 @@\n l7\n l8\n l9\n-l10\n+X\n l11\n l12\n l13\n"
    );
}

#[test]
fn a_new_file_is_all_added() {
    assert_eq!(
        unified_diff("", "a\nb\n", "/dev/null", "b/f"),
        "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    );
    assert_eq!(
        unified_diff("a\nb\n", "", "a/f", "b/f"),
        "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    );
}

#[test]
fn distant_changes_are_separate_hunks_and_close_ones_share_one() {
    let old = numbered(20);
    let far = old.replace("l2\n", "X\n").replace("l18\n", "Y\n");
    assert_eq!(
        unified_diff(&old, &far, "a/f", "b/f"),
        "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n l1\n-l2\n+X\n l3\n l4\n l5\n\
         @@ -15,6 +15,6 @@\n l15\n l16\n l17\n-l18\n+Y\n l19\n l20\n"
    );
    let near = old.replace("l5\n", "X\n").replace("l10\n", "Y\n");
    assert_eq!(
        unified_diff(&old, &near, "a/f", "b/f"),
        "--- a/f\n+++ b/f\n@@ -2,12 +2,12 @@\n l2\n l3\n l4\n-l5\n+X\n l6\n l7\n l8\n l9\n\
         -l10\n+Y\n l11\n l12\n l13\n"
    );
}

#[test]
fn a_removed_line_in_between_keeps_its_neighbours_as_context() {
    assert_eq!(
        unified_diff("a\nb\nc\n", "a\nc\n", "a/f", "b/f"),
        "--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"
    );
}

#[test]
fn a_missing_final_line_ending_is_noted() {
    assert_eq!(
        unified_diff("a\nb", "a\nc", "a/f", "b/f"),
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n\
         +c\n\\ No newline at end of file\n"
    );
}

#[test]
fn a_middle_too_large_to_compare_is_replaced_whole() {
    // 2001 × 2001 lines in the middle exceed the exact comparison.
    let old: String = (0..2001).map(|i| format!("o{i}\n")).collect();
    let new: String = (0..2001).map(|i| format!("n{i}\n")).collect();
    let diff = unified_diff(
        &format!("h\n{old}t\n"),
        &format!("h\n{new}t\n"),
        "a/f",
        "b/f",
    );
    assert!(
        diff.starts_with("--- a/f\n+++ b/f\n@@ -1,2003 +1,2003 @@\n h\n-o0\n"),
        "{}",
        &diff[..80]
    );
    assert_eq!(diff.matches("\n-").count(), 2001);
    assert_eq!(diff.matches("\n+").count(), 2001 + 1);
}
