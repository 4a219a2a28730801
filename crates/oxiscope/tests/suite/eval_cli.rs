//! `oxiscope eval SUITE` against a fake OpenAI server, then from its tapes
//! with no model configured; and its HTML report in a real headless
//! Chromium.

use oxiscope::eval::{EvalOptions, run_suite};
use serde_json::Value;

use super::chat_env::{ChatEnv, run, stderr, stdout, text};
use super::eval::{SUITE, models, suite_in};
use super::webdriver::Browser;

/// A suite of one task over the fake server.
fn suite(env: &ChatEnv, k: usize) -> std::path::PathBuf {
    let yaml = format!(
        "k: {k}\nconcurrency: 1\nagent:\n  model: {{provider: openai, model: gpt-fake, base_url: '{}/v1'}}\n\
         tasks:\n- id: capital\n  prompt: What is the capital of France?\n  graders: [{{exact: Paris}}]\n",
        env.server.base_url()
    );
    let path = env.work().join("smoke.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

#[test]
fn eval_runs_a_suite_against_a_model_then_from_its_tapes_without_one() {
    let env = ChatEnv::new();
    let path = suite(&env, 2);
    env.answer(&text("Paris"));
    env.answer(&text("Paris"));
    let mut cmd = env.bare(&["eval", path.to_str().unwrap(), "--out", "out"]);
    cmd.env("OPENAI_API_KEY", "sk-test");
    let out = run(cmd);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let table = stdout(&out);
    assert!(table.starts_with("task "), "{table}");
    let capital = table.lines().find(|l| l.starts_with("capital")).unwrap();
    let cells: Vec<&str> = capital.split_whitespace().collect();
    // task, passed, rate, pass@1, pass@2, tokens in, tokens out, s/run
    // (no cost: the suite gives no price).
    assert_eq!(
        &cells[..7],
        ["capital", "2/2", "100%", "100%", "100%", "40", "10"],
        "{table}"
    );
    assert_eq!(env.requests().len(), 2);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(env.work().join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(json["total"]["pass_rate"], 1.0);
    assert_eq!(json["tasks"][0]["runs"][1]["tape"], "tapes/capital/1.jsonl");
    assert!(env.work().join("out/report.html").is_file());

    // Offline: no key, no server answers left; the tapes answer.
    let out = run(env.bare(&[
        "eval",
        path.to_str().unwrap(),
        "--replay",
        "out",
        "--out",
        "again",
        "--json",
    ]));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (json["mode"].as_str(), json["total"]["passed"].as_u64()),
        (Some("replay"), Some(2))
    );
    assert_eq!(env.requests().len(), 2);
}

#[test]
fn eval_exits_1_below_the_pass_rate_asked_for_and_2_on_a_bad_suite() {
    let env = ChatEnv::new();
    let path = suite(&env, 1);
    env.answer(&text("Lyon"));
    let mut cmd = env.bare(&["eval", path.to_str().unwrap(), "--min-pass-rate", "0.5"]);
    cmd.env("OPENAI_API_KEY", "sk-test");
    let out = run(cmd);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("exact \"Paris\": the answer is \"Lyon\""));

    std::fs::write(
        &path,
        "tasks: [{id: t, prompt: p, graders: [{regex: '('}]}]",
    )
    .unwrap();
    let out = run(env.bare(&["eval", path.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid suite: task t: regex"),
        "{}",
        stderr(&out)
    );

    // No model configured: one clear error before anything runs.
    std::fs::write(&path, "tasks: [{id: t, prompt: p, graders: [{exact: x}]}]").unwrap();
    let out = run(env.bare(&["eval", path.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no model provider is configured"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_report_renders_its_table_in_chromium_without_console_errors() {
    let dir = tempfile::tempdir().unwrap();
    let suite = suite_in(dir.path(), SUITE);
    let out = dir.path().join("out");
    let report = run_suite(&suite, &EvalOptions::live(models()).with_out_dir(&out))
        .await
        .unwrap();
    report.write(&out).unwrap();
    let Some(b) = Browser::start().await else {
        return;
    };
    b.goto(&format!("file://{}", out.join("report.html").display()))
        .await;
    b.find("#figures").await;
    let rows = b.texts("#figures tbody tr").await;
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(rows[0].starts_with("capital2/540%40%90%100%"), "{rows:?}");
    assert!(rows[3].starts_with("total"), "{rows:?}");
    let headers = b.texts("#figures thead th").await;
    assert_eq!(
        headers,
        [
            "task",
            "passed",
            "pass rate",
            "pass@1",
            "pass@3",
            "pass@5",
            "tokens in",
            "tokens out",
            "cost",
            "s/run"
        ]
    );
    assert_eq!(b.texts("#runs tbody tr").await.len(), 15);
    assert_eq!(b.texts("#runs td.fail").await.len(), 4);
    // Each run links its tape, which is there.
    let links = b
        .js(
            "return [...document.querySelectorAll('#runs a')].map(a => a.href);",
            serde_json::json!([]),
        )
        .await;
    let links: Vec<String> = serde_json::from_value(links).unwrap();
    assert_eq!(links.len(), 15);
    for link in &links {
        let path = link.strip_prefix("file://").unwrap();
        assert!(std::path::Path::new(path).is_file(), "{link}");
    }
    // The layout holds: the table is laid out, wider than its header.
    let width = b
        .js(
            "return document.querySelector('#figures').getBoundingClientRect().width;",
            serde_json::json!([]),
        )
        .await;
    assert!(width.as_f64().unwrap() > 300.0, "{width}");
    b.screenshot("eval-report").await;
    let errors = b.console_errors().await;
    assert_eq!(errors, Vec::<Value>::new());

    // The check can fail: a page whose image is missing logs an error.
    std::fs::write(
        out.join("broken.html"),
        "<!DOCTYPE html><img src=\"missing.png\">",
    )
    .unwrap();
    b.goto(&format!("file://{}", out.join("broken.html").display()))
        .await;
    b.find("img").await;
    let started = std::time::Instant::now();
    let mut errors = Vec::new();
    while errors.is_empty() && started.elapsed() < std::time::Duration::from_secs(10) {
        errors = b.console_errors().await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!errors.is_empty(), "a missing image logged nothing");
    b.quit().await;
}
