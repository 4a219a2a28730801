//! `oxiscope replay TAPE`: a tape recorded by the library, replayed by the
//! binary with an agent rebuilt from the tape, and compared with `--diff`.

use std::process::Command;
use std::sync::Arc;

use oxiscope::prelude::*;
use oxiscope::tape::TapeRecorder;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use schemars::JsonSchema;
use serde::Deserialize;

/// Look up a word.
#[derive(Deserialize, JsonSchema)]
struct Lookup {
    /// The word.
    word: String,
}

/// A recorded run: a tool call (allowed), then an answer.
fn record(dir: &std::path::Path) -> std::path::PathBuf {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let model: Arc<dyn DynChatModel> = Arc::new(ScriptedModel::new([
        ScriptedTurn::tool_call("c1", "lookup", r#"{"word": "tape"}"#),
        ScriptedTurn::text("A tape records a run."),
    ]));
    let mut toolkit = Toolkit::new();
    toolkit
        .register(
            FunctionTool::new("lookup", |l: Lookup| async move {
                format!("{}: a strip", l.word)
            })
            .with_permission(PermissionBehavior::Allow),
        )
        .unwrap();
    let recorder = TapeRecorder::new();
    let agent = Agent::builder("Librarian", model)
        .system_prompt("You look words up.")
        .toolkit(Arc::new(toolkit))
        .middleware(recorder.clone())
        .build()
        .unwrap();
    rt.block_on(agent.reply(Msg::user("user", "What is a tape?").unwrap()))
        .unwrap();
    let path = dir.join("run.jsonl");
    recorder.tape().save(&path).unwrap();
    path
}

fn oxiscope(args: &[&std::path::Path]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oxiscope"))
        .arg("replay")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap(), format!("{stdout}{stderr}"))
}

#[test]
fn a_recorded_tape_replays_offline_and_matches() {
    let dir = tempfile::tempdir().unwrap();
    let tape = record(dir.path());
    let (code, out) = oxiscope(&[&tape]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("replayed 2 model calls"), "{out}");
    assert!(out.ends_with("the run matches the tape\n"), "{out}");
}

#[test]
fn a_planted_change_is_reported_at_its_step_by_replay_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let tape = record(dir.path());
    let text = std::fs::read_to_string(&tape).unwrap();
    let planted = dir.path().join("planted.jsonl");
    // Planted in the events only: the consumer saw another text than the
    // model's recorded answer gives.
    let planted_text: String = text
        .lines()
        .map(|line| {
            if line.starts_with(r#"{"kind":"event""#) {
                line.replace("A tape records a run.", "A tape is sticky.")
            } else {
                line.to_owned()
            }
        })
        .map(|line| line + "\n")
        .collect();
    assert_ne!(planted_text, text);
    std::fs::write(&planted, planted_text).unwrap();

    let (code, out) = oxiscope(&[&planted]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the runs differ at event "), "{out}");
    assert!(
        out.contains("A tape is sticky.") && out.contains("A tape records a run."),
        "{out}"
    );

    let (code, out) = oxiscope(&[&tape, std::path::Path::new("--diff"), &planted]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the runs differ at event "), "{out}");
    let (code, out) = oxiscope(&[&tape, std::path::Path::new("--diff"), &tape]);
    assert_eq!((code, out.as_str()), (0, "the tapes agree\n"));
}

#[test]
fn a_file_that_is_no_tape_is_an_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, "{\"kind\": \"input\"}\nnot json\n").unwrap();
    let (code, out) = oxiscope(&[&path]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("line 2 of the tape"), "{out}");
}

#[test]
fn a_live_run_against_the_model_the_environment_names_matches_or_names_its_difference() {
    use super::chat_env::{ChatEnv, run, text};
    use oxiscope_test_support::OpenAiScript;

    let env = ChatEnv::new();
    let tape = record(env.work().as_path());
    // Another model: its own call ids, chunks and token counts.
    let lookup = OpenAiScript::new()
        .tool_call(0, "call_live_1", "lookup")
        .tool_args(0, r#"{"word": "tape"}"#)
        .finish("tool_calls")
        .usage(31, 7, 0);
    let live = || {
        let mut cmd = env.bare(&["replay", tape.to_str().unwrap(), "--live"]);
        cmd.env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", format!("{}/v1", env.server.base_url()));
        let out = run(cmd);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap(), text)
    };
    env.answer(&lookup);
    env.answer(&text("A tape records a run."));
    let (code, out) = live();
    assert_eq!((code, out.as_str()), (0, "the live run matches the tape\n"));

    env.answer(&lookup);
    env.answer(&text("A tape is sticky."));
    let (code, out) = live();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("the runs differ at model response 1"),
        "{out}"
    );
    assert!(
        out.contains("A tape is sticky.") && out.contains("A tape records a run."),
        "{out}"
    );
    assert_eq!(env.requests().len(), 4);
}
