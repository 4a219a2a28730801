//! `oxiscope::eval` over scripted models with known answers: the pass
//! rates and pass@k it must give, the tapes it writes, the same suite run
//! from those tapes offline, and a planted change it must catch.

use std::sync::Arc;

use oxiscope::eval::{EvalOptions, EvalReport, ModelRole, Models, Suite, run_suite};
use oxiscope::model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Three tasks of five runs: a question answered right in runs 0 and 1
/// only; a fixture's file read and a file written with the Write tool,
/// checked by file graders and a command; a structured answer checked by its schema and by a
/// judge that fails run 4.
pub(crate) const SUITE: &str = r#"
name: known-answers
k: 5
pass_at: [1, 3, 5]
concurrency: 3
agent:
  system_prompt: You answer briefly.
  tools: [Read, Write, Bash]
  model: {provider: openai, model: gpt-scripted, price: {input: 1.0, output: 2.0}}
tasks:
  - id: capital
    prompt: What is the capital of France?
    graders: [{exact: Paris}]
  - id: write
    prompt: Write hello into out.txt.
    workspace: fixture
    graders:
      - file: {path: out.txt, contains: hello}
      - file: {path: notes/keep.txt, equals: kept}
      - command: {run: "grep -q hello out.txt && test -f notes/keep.txt"}
  - id: city
    prompt: Which city is the Louvre in?
    output_schema: {type: object, required: [city], properties: {city: {type: string}}}
    graders:
      - json_schema: {type: object, required: [city], properties: {city: {const: Paris}}}
      - judge: {rubric: The answer names Paris.}
"#;

/// The suite in `dir`, with its fixture.
pub(crate) fn suite_in(dir: &std::path::Path, yaml: &str) -> Suite {
    std::fs::create_dir_all(dir.join("fixture/notes")).unwrap();
    std::fs::write(dir.join("fixture/notes/keep.txt"), "kept\n").unwrap();
    let path = dir.join("suite.yaml");
    std::fs::write(&path, yaml).unwrap();
    Suite::load(&path).unwrap()
}

fn structured(id: &str, value: &serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::tool_call(id, "GenerateStructuredOutput", value.to_string()).with_usage(10, 2)
}

/// Each run's scripted model: the known answers.
pub(crate) fn models() -> Models {
    Models::new(|request| {
        let turns = match (request.role, request.task) {
            (ModelRole::Agent, "capital") => {
                let city = if request.run < 2 { "Paris" } else { "Lyon" };
                vec![ScriptedTurn::text(city).with_usage(10, 2)]
            }
            (ModelRole::Agent, "write") => vec![
                ScriptedTurn::tool_call("r1", "Read", r#"{"file_path": "notes/keep.txt"}"#)
                    .with_usage(10, 2),
                ScriptedTurn::tool_call(
                    "w1",
                    "Write",
                    r#"{"file_path": "out.txt", "content": "hello\n"}"#,
                )
                .with_usage(10, 2),
                ScriptedTurn::text("Done.").with_usage(10, 2),
            ],
            (ModelRole::Agent, _) => vec![
                structured("s1", &json!({"city": "Paris"})),
                ScriptedTurn::text("Paris.").with_usage(10, 2),
            ],
            (ModelRole::Judge, _) => {
                let pass = request.run != 4;
                vec![structured(
                    "j1",
                    &json!({"pass": pass, "reason": if pass { "it says Paris" } else { "too terse" }}),
                )]
            }
            (role, _) => panic!("no model for {role:?}"),
        };
        Ok(Arc::new(ScriptedModel::new(turns)) as Arc<dyn DynChatModel>)
    })
}

/// (task, passed, runs) of each task.
fn passes(report: &EvalReport) -> Vec<(String, usize, usize)> {
    report
        .tasks
        .iter()
        .map(|t| (t.id.clone(), t.figures.passed, t.figures.runs))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_answers_give_the_expected_pass_rates_pass_at_k_tokens_and_cost() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite_in(dir.path(), SUITE);
    let out = dir.path().join("out");
    let report = run_suite(&suite, &EvalOptions::live(models()).with_out_dir(&out))
        .await
        .unwrap();
    let failures: Vec<_> = report
        .tasks
        .iter()
        .flat_map(|t| &t.runs)
        .filter(|r| !r.passed)
        .map(|r| (r.task.clone(), r.run, r.error.clone(), r.grades.clone()))
        .collect();
    assert_eq!(
        passes(&report),
        [
            ("capital".to_owned(), 2, 5),
            ("write".to_owned(), 5, 5),
            ("city".to_owned(), 4, 5),
        ],
        "{failures:#?}"
    );
    let capital = &report.tasks[0].figures;
    assert!(close(capital.pass_rate, 0.4));
    assert!(close(capital.pass_at["pass@1"], 0.4));
    // 1 - C(3,3)/C(5,3) = 1 - 1/10.
    assert!(close(capital.pass_at["pass@3"], 0.9));
    assert!(close(capital.pass_at["pass@5"], 1.0));
    let city = &report.tasks[2].figures;
    assert!(close(city.pass_at["pass@1"], 0.8) && close(city.pass_at["pass@3"], 1.0));
    assert!(close(report.total.pass_rate, (0.4 + 1.0 + 0.8) / 3.0));
    assert!(close(
        report.total.pass_at["pass@3"],
        (0.9 + 1.0 + 1.0) / 3.0
    ));
    // Five runs of one 10 + 2 token call, at 1 and 2 per million.
    assert_eq!((capital.input_tokens, capital.output_tokens), (50, 10));
    assert!(close(capital.cost.unwrap(), 70.0 / 1e6));
    assert_eq!(report.tasks[1].figures.input_tokens, 150);
    let sum: u64 = report.tasks.iter().map(|t| t.figures.input_tokens).sum();
    assert_eq!(report.total.input_tokens, sum);

    // The failed runs say why.
    let lyon = &report.tasks[0].runs[2];
    assert_eq!(lyon.grades[0].detail, "the answer is \"Lyon\"");
    let judged = &report.tasks[2].runs[4].grades[1];
    assert_eq!(
        (judged.passed, judged.detail.as_str()),
        (false, "the judge says: too terse")
    );
    let table = report.table();
    assert!(
        table.contains("capital") && table.contains("FAILED capital run 2"),
        "{table}"
    );

    // Each run's tape, and each judge's, with the run's directory aliased.
    for task in ["capital", "write", "city"] {
        for run in 0..5 {
            let tape = out.join(format!("tapes/{task}/{run}.jsonl"));
            assert!(tape.is_file(), "{}", tape.display());
        }
    }
    assert!(out.join("tapes/city/4.judge1.jsonl").is_file());
    let tape = std::fs::read_to_string(out.join("tapes/write/0.jsonl")).unwrap();
    assert!(tape.contains("{run_dir}/ws"), "{tape}");
    assert!(!tape.contains("oxiscope-eval-"), "{tape}");
    assert_eq!(
        report.tasks[1].runs[0].tape.as_deref(),
        Some("tapes/write/0.jsonl")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_runs_again_from_its_tapes_offline_and_catches_a_planted_change() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite_in(dir.path(), SUITE);
    let out = dir.path().join("out");
    let live = run_suite(&suite, &EvalOptions::live(models()).with_out_dir(&out))
        .await
        .unwrap();

    // No model at all: every answer comes from the tapes, the tools run.
    let replayed = run_suite(&suite, &EvalOptions::replay(&out)).await.unwrap();
    assert_eq!(replayed.mode, "replay");
    assert_eq!(passes(&replayed), passes(&live));
    let diverged: Vec<_> = replayed
        .tasks
        .iter()
        .flat_map(|t| &t.runs)
        .filter_map(|r| r.divergence.clone())
        .collect();
    assert_eq!(diverged, Vec::<String>::new());
    assert_eq!(replayed.total.input_tokens, live.total.input_tokens);
    assert_eq!(
        replayed.tasks[1].runs[0].grades,
        live.tasks[1].runs[0].grades
    );

    // The agent's prompt changed since the tapes were made: every run
    // parts from its tape at its first model request, and fails.
    let changed = suite_in(
        dir.path(),
        &SUITE.replace("You answer briefly.", "You answer at length."),
    );
    let report = run_suite(&changed, &EvalOptions::replay(&out))
        .await
        .unwrap();
    assert_eq!(report.total.passed, 0);
    let first = report.tasks[0].runs[0].divergence.clone().unwrap();
    assert!(
        first.starts_with("the runs differ at model request 0"),
        "{first}"
    );
    assert!(first.contains("You answer at length."), "{first}");

    // A fixture that no longer holds what the runs read: the Read tool's
    // live result differs from the recorded one.
    std::fs::write(dir.path().join("fixture/notes/keep.txt"), "changed\n").unwrap();
    let report = run_suite(&suite, &EvalOptions::replay(&out)).await.unwrap();
    assert_eq!(report.tasks[1].figures.passed, 0);
    let read = report.tasks[1].runs[0].divergence.clone().unwrap();
    // Found at the call's recorded result or at the event that streams
    // it, whichever the replayer compares first: either names call r1.
    assert!(
        read.starts_with("the runs differ at tool call r1")
            || (read.starts_with("the runs differ at event")
                && read.contains(r#""tool_call_id":"r1""#)),
        "{read}"
    );
    assert!(read.contains("changed") && read.contains("kept"), "{read}");
    assert_eq!(report.tasks[0].figures.passed, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_without_tapes_a_hung_model_and_a_failing_model_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite_in(dir.path(), SUITE);
    let missing = run_suite(&suite, &EvalOptions::replay(dir.path().join("nothing")))
        .await
        .unwrap_err();
    assert!(
        missing.to_string().starts_with("no tapes of task capital"),
        "{missing}"
    );

    let yaml =
        "k: 2\ntasks:\n- id: slow\n  prompt: p\n  timeout_secs: 1\n  graders: [{regex: .}]\n";
    let suite = suite_in(dir.path(), yaml);
    let models = Models::new(|request| {
        let turn = if request.run == 0 {
            ScriptedTurn::text("never finished").hang_after(1)
        } else {
            ScriptedTurn::error(oxiscope::model::ModelError::InvalidRequest {
                message: "bad request".to_owned(),
            })
        };
        Ok(Arc::new(ScriptedModel::new([turn])) as Arc<dyn DynChatModel>)
    });
    let report = run_suite(&suite, &EvalOptions::live(models)).await.unwrap();
    let errors: Vec<_> = report.tasks[0]
        .runs
        .iter()
        .map(|r| (r.passed, r.error.clone().unwrap_or_default()))
        .collect();
    assert_eq!(errors[0], (false, "timed out after 1 s".to_owned()));
    assert!(
        !errors[1].0 && errors[1].1.contains("bad request"),
        "{errors:?}"
    );
    assert!(!report.all_passed());
}

#[test]
fn the_readme_suite_is_a_valid_suite() {
    let readme = include_str!("../../../../README.md");
    let start = readme.find("```yaml\nk: 5").unwrap() + "```yaml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let suite = Suite::from_yaml(&readme[start..end], ".").unwrap();
    let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["fizzbuzz", "capital", "extract"]);
    assert_eq!(suite.pass_at(), [1, 5]);
}
