use oxiscope_tool::LocalBackend;
use serde_json::json;

use super::*;
use crate::eval::suite::Suite;

/// The graders of a one-task suite written as YAML.
fn graders(yaml: &str) -> Vec<Grader> {
    let suite = Suite::from_yaml(
        &format!("tasks:\n- id: t\n  prompt: p\n  graders:\n{yaml}"),
        ".",
    )
    .unwrap();
    suite.tasks[0].graders.clone()
}

fn answer(text: &str) -> Answer {
    Answer {
        text: text.to_owned(),
        structured: None,
    }
}

/// Whether each of `graders` passes `answer` in `dir`.
async fn verdicts(graders: &[Grader], answer: &Answer, dir: &Path) -> Vec<bool> {
    let mut out = Vec::new();
    for grader in graders {
        out.push(
            grade(grader, answer, &LocalBackend::default(), dir)
                .await
                .passed,
        );
    }
    out
}

#[tokio::test]
async fn exact_and_regex_pass_the_right_answer_and_fail_a_wrong_one() {
    let dir = tempfile::tempdir().unwrap();
    let gs = graders("  - exact: Paris\n  - regex: '(?i)\\bparis\\b'\n");
    assert_eq!(
        verdicts(&gs, &answer(" Paris\n"), dir.path()).await,
        [true, true]
    );
    assert_eq!(
        verdicts(&gs, &answer("paris!"), dir.path()).await,
        [false, true]
    );
    assert_eq!(
        verdicts(&gs, &answer("Lyon"), dir.path()).await,
        [false, false]
    );
    let detail = grade(
        &gs[0],
        &answer("Lyon"),
        &LocalBackend::default(),
        dir.path(),
    )
    .await
    .detail;
    assert_eq!(detail, "the answer is \"Lyon\"");
}

#[tokio::test]
async fn json_schema_reads_the_structured_output_or_the_text_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let gs = graders(
        "  - json_schema: {type: object, required: [city], properties: {city: {type: string}}}\n",
    );
    let structured = Answer {
        text: "Here it is.".to_owned(),
        structured: Some(json!({"city": "Paris"})),
    };
    assert_eq!(verdicts(&gs, &structured, dir.path()).await, [true]);
    let fenced = answer("```json\n{\"city\": \"Paris\"}\n```");
    assert_eq!(verdicts(&gs, &fenced, dir.path()).await, [true]);
    assert_eq!(
        verdicts(&gs, &answer("{\"city\": 3}"), dir.path()).await,
        [false]
    );
    let wrong = Answer {
        text: "{\"city\": \"Paris\"}".to_owned(),
        structured: Some(json!({"town": "Paris"})),
    };
    assert_eq!(verdicts(&gs, &wrong, dir.path()).await, [false]);
    let not_json = grade(
        &gs[0],
        &answer("Paris"),
        &LocalBackend::default(),
        dir.path(),
    )
    .await;
    assert!(!not_json.passed && not_json.detail.starts_with("the answer is not JSON"));
}

#[tokio::test]
async fn file_graders_check_existence_contents_and_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/a.txt"), "hello world\n").unwrap();
    let gs = graders(
        "  - file: {path: out/a.txt}\n\
         \x20 - file: {path: out/a.txt, contains: world}\n\
         \x20 - file: {path: out/a.txt, equals: hello world}\n\
         \x20 - file: {path: gone.txt, exists: false}\n",
    );
    assert_eq!(verdicts(&gs, &answer(""), dir.path()).await, [true; 4]);
    let gs = graders(
        "  - file: {path: gone.txt}\n\
         \x20 - file: {path: out/a.txt, contains: moon}\n\
         \x20 - file: {path: out/a.txt, equals: hello}\n\
         \x20 - file: {path: out/a.txt, exists: false}\n\
         \x20 - file: {path: out}\n",
    );
    assert_eq!(verdicts(&gs, &answer(""), dir.path()).await, [false; 5]);
}

#[tokio::test]
async fn a_file_grader_never_reads_outside_the_workspace() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret"), "s3cret").unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // A grader built in code, past the suite's checks.
    let grader = Grader::File(FileCheck {
        path: "../secret".to_owned(),
        exists: true,
        contains: Some("s3cret".to_owned()),
        equals: None,
    });
    let verdict = grade(&grader, &answer(""), &LocalBackend::default(), &ws).await;
    assert!(!verdict.passed, "{verdict:?}");
    assert!(verdict.detail.contains("unsafe path"), "{verdict:?}");
}

#[tokio::test]
async fn a_command_passes_on_its_exit_status_in_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    let gs = graders(
        "  - command: {run: 'test -f a.txt'}\n\
         \x20 - command: {run: 'exit 3', exit: 3}\n\
         \x20 - command: {run: 'test -f b.txt'}\n\
         \x20 - command: {run: 'echo oops; exit 1'}\n\
         \x20 - command: {run: 'sleep 5', timeout_secs: 1}\n",
    );
    assert_eq!(
        verdicts(&gs, &answer(""), dir.path()).await,
        [true, true, false, false, false]
    );
    let failed = grade(&gs[3], &answer(""), &LocalBackend::default(), dir.path()).await;
    assert!(
        failed.detail.contains("exit status 1") && failed.detail.contains("oops"),
        "{failed:?}"
    );
}
