//! Decisions per second over 10,000 mixed Bash commands.
//!
//! The corpus is built deterministically from the AgentScope reference
//! commands plus variations (arguments, compounds, redirections, quoting),
//! and every command is decided in `default` mode with a few rules.

use oxiscope_permission::{
    BashPolicy, PathEnv, PermissionBehavior, PermissionContext, PermissionMode, decide, parse_rule,
};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn base_commands() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/agentscope-2.0.11/permission/bash_corpus.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let corpus: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    corpus["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r["command"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// 10,000 commands: the reference commands, then variations of them.
fn corpus() -> Vec<Value> {
    let base = base_commands();
    let suffixes = [
        "",
        " -v",
        " src/lib.rs",
        " | wc -l",
        " > out.txt",
        " && git status",
    ];
    let prefixes = ["", "LANG=C ", "cd src && ", "(", "echo start; "];
    let mut out = Vec::with_capacity(10_000);
    let mut i = 0usize;
    while out.len() < 10_000 && !base.is_empty() {
        let cmd = &base[i % base.len()];
        let prefix = prefixes[(i / base.len()) % prefixes.len()];
        let suffix = suffixes[(i / (base.len() * prefixes.len())) % suffixes.len()];
        let close = if prefix == "(" { ")" } else { "" };
        out.push(json!({ "command": format!("{prefix}{cmd}{suffix}{close}") }));
        i += 1;
    }
    out
}

fn context() -> PermissionContext {
    let mut ctx = PermissionContext::new(PermissionMode::Default);
    ctx.add_working_directory("/tmp/wire-scratch/shared-wd", "session");
    for (rule, behavior) in [
        ("Bash(git commit:*)", PermissionBehavior::Allow),
        ("Bash(npm run *)", PermissionBehavior::Allow),
        ("Bash(git push:*)", PermissionBehavior::Deny),
        ("Bash(rm -rf *)", PermissionBehavior::Deny),
        ("Bash(docker:*)", PermissionBehavior::Ask),
    ] {
        if let Ok(rule) = parse_rule(rule, behavior, "bench") {
            ctx.add_rule(rule);
        }
    }
    ctx
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn decide_10k_commands(bencher: divan::Bencher<'_, '_>) {
    let inputs = corpus();
    let ctx = context();
    let follow = std::env::var_os("BENCH_LEXICAL").is_none();
    let policy = BashPolicy::new(
        PathEnv::new(
            "/tmp/wire-scratch/proj",
            Some(std::path::PathBuf::from("/root")),
        )
        .with_symlinks_followed(follow),
    );
    bencher
        .counter(divan::counter::ItemsCount::new(inputs.len()))
        .bench_local(|| {
            let mut allowed = 0usize;
            for input in &inputs {
                if decide(&policy, input, &ctx).is_allowed() {
                    allowed += 1;
                }
            }
            divan::black_box(allowed)
        });
}
