//! `oxiscope permission check` end to end.

use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::Value;

fn oxiscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxiscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn check(args: &[&str]) -> (Value, String) {
    let mut all = vec!["permission", "check"];
    all.extend_from_slice(args);
    let out = oxiscope(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "one JSON object on one line: {stdout}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.lines().count(),
        1,
        "one line of explanation: {stderr}"
    );
    (serde_json::from_str(&stdout).unwrap(), stderr)
}

#[test]
fn prints_the_decision_in_agentscope_shape() {
    let (decision, explanation) =
        check(&["--mode", "default", "Bash", r#"{"command":"git status"}"#]);
    let keys: Vec<&str> = decision
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "behavior",
            "message",
            "decision_reason",
            "updated_input",
            "suggested_rules",
            "bypass_immune"
        ]
    );
    assert_eq!(decision["behavior"], "allow");
    assert!(explanation.starts_with("Bash: ALLOW"), "{explanation}");
}

#[test]
fn rules_from_flags_are_applied() {
    let allow = [
        "--allow",
        "Bash(git commit:*)",
        "--deny",
        "Bash(git push:*)",
    ];
    let run = |command: &str| {
        let input = serde_json::json!({ "command": command }).to_string();
        let mut args = allow.to_vec();
        args.extend(["Bash", input.as_str()]);
        check(&args).0["behavior"].as_str().unwrap().to_owned()
    };
    assert_eq!(run("git commit -m wip"), "allow");
    assert_eq!(run("git push origin main"), "deny");
    assert_eq!(run("git commit -m wip && curl x | sh"), "ask");
    assert_eq!(run("npm publish"), "ask");
}

#[test]
fn safety_asks_explain_themselves_and_dont_ask_denies() {
    let (decision, explanation) = check(&[
        "--mode",
        "accept-edits",
        "--allow",
        "Bash",
        "Bash",
        r#"{"command":"rm -rf /"}"#,
    ]);
    assert_eq!(decision["behavior"], "ask");
    assert_eq!(decision["bypass_immune"], true);
    assert!(explanation.contains("safety check"), "{explanation}");
    let (decision, _) = check(&["--mode", "dont_ask", "Bash", r#"{"command":"cat .env"}"#]);
    assert_eq!(decision["behavior"], "deny");
}

#[test]
fn file_tools_and_working_directories() {
    let (decision, _) = check(&[
        "--mode",
        "accept-edits",
        "--workdir",
        "/srv/shared",
        "Write",
        r#"{"file_path":"/srv/shared/notes.md","content":"x"}"#,
    ]);
    assert_eq!(decision["behavior"], "allow");
    let (decision, explanation) = check(&[
        "--mode",
        "default",
        "Write",
        r#"{"file_path":"/srv/other/notes.md"}"#,
    ]);
    assert_eq!(decision["behavior"], "ask");
    assert!(
        explanation.contains("--allow 'Write(/srv/other/**)'"),
        "{explanation}"
    );
    let (decision, _) = check(&[
        "--deny",
        "Write(**/.env)",
        "--mode",
        "bypass",
        "Write",
        r#"{"file_path":"a/.env"}"#,
    ]);
    assert_eq!(decision["behavior"], "deny");
}

#[test]
fn unknown_tools_are_decided_by_rules_and_mode() {
    let input = r#"{"repo":"x"}"#;
    assert_eq!(check(&["deploy", input]).0["behavior"], "ask");
    assert_eq!(
        check(&["--allow", "deploy", "deploy", input]).0["behavior"],
        "allow"
    );
    assert_eq!(
        check(&["--allow", r#"deploy({"repo": "x"})"#, "deploy", input]).0["behavior"],
        "allow"
    );
    assert_eq!(
        check(&["--allow", r#"deploy({"repo":"y"})"#, "deploy", input]).0["behavior"],
        "ask"
    );
    assert_eq!(
        check(&["--mode", "explore", "--allow", "deploy", "deploy", input]).0["behavior"],
        "deny"
    );
}

#[test]
fn bad_arguments_fail_with_a_message() {
    for args in [
        vec!["permission", "check", "--mode", "yolo", "Bash", "{}"],
        vec!["permission", "check", "--allow", "Bash(", "Bash", "{}"],
        vec!["permission", "check", "Bash", "not json"],
        vec!["permission", "check", "Bash", "[1]"],
    ] {
        let out = oxiscope(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn safety_asks_suggest_no_allow_rules() {
    let (decision, explanation) = check(&["Bash", r#"{"command":"rm -rf /"}"#]);
    assert_eq!(
        (&decision["behavior"], &decision["bypass_immune"]),
        (&Value::from("ask"), &Value::from(true))
    );
    assert_eq!(decision["suggested_rules"], serde_json::json!([]));
    assert!(!explanation.contains("--allow"), "{explanation}");
}

#[test]
fn a_plain_ask_suggests_the_command_prefix() {
    let (decision, explanation) = check(&["Bash", r#"{"command":"touch made_by_agent.txt"}"#]);
    assert_eq!(decision["behavior"], "ask");
    assert_eq!(decision["suggested_rules"][0]["rule_content"], "touch:*");
    assert!(
        explanation.contains("--allow 'Bash(touch:*)'"),
        "{explanation}"
    );
}
