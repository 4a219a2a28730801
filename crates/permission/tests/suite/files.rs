//! File-tool policies beyond the reference data.

use oxiscope_permission::{
    FilePolicy, FileTool, PermissionBehavior, PermissionMode, ToolPolicy, decide, parse_rule,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{outcome, reference_context, reference_env};

fn run(
    tool: FileTool,
    mode: PermissionMode,
    rules: &[(&str, PermissionBehavior)],
    path: &str,
) -> String {
    let mut ctx = reference_context(mode);
    for (text, behavior) in rules {
        ctx.add_rule(parse_rule(text, *behavior, "test").unwrap());
    }
    let policy = FilePolicy::new(tool, reference_env());
    outcome(&decide(
        &policy,
        &json!({ "file_path": path, "path": path }),
        &ctx,
    ))
}

const ALLOW: PermissionBehavior = PermissionBehavior::Allow;
const DENY: PermissionBehavior = PermissionBehavior::Deny;

#[test]
fn reading_secrets_is_a_safety_ask() {
    for path in [
        ".env",
        "/root/.ssh/id_ed25519",
        "~/.aws/credentials",
        "config/.env.local",
    ] {
        assert_eq!(
            run(
                FileTool::Read,
                PermissionMode::Default,
                &[("Read", ALLOW)],
                path
            ),
            "ask!"
        );
    }
    assert_eq!(
        run(FileTool::Grep, PermissionMode::Default, &[], "~/.ssh"),
        "ask!"
    );
    assert_eq!(
        run(FileTool::Read, PermissionMode::Default, &[], "src/main.rs"),
        "allow"
    );
}

#[test]
fn relative_patterns_are_anchored_at_the_working_directories() {
    let rules = [("Write(src/**)", ALLOW)];
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::Default,
            &rules,
            "src/a/b.rs"
        ),
        "allow"
    );
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::Default,
            &rules,
            "/tmp/wire-scratch/shared-wd/src/x"
        ),
        "allow"
    );
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::Default,
            &rules,
            "/elsewhere/src/x"
        ),
        "ask"
    );
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::Default,
            &rules,
            "src/../../x"
        ),
        "ask"
    );
}

#[test]
fn deny_rules_are_read_broadly() {
    let rules = [("Write(*.pem)", DENY)];
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::Bypass,
            &rules,
            "/elsewhere/key.pem"
        ),
        "deny"
    );
    let rules = [("Edit(config/*.json)", DENY)];
    assert_eq!(
        run(
            FileTool::Edit,
            PermissionMode::Bypass,
            &rules,
            "/any/config/a.json"
        ),
        "deny"
    );
    assert_eq!(
        run(
            FileTool::Edit,
            PermissionMode::Bypass,
            &rules,
            "config/sub/a.json"
        ),
        "deny"
    );
}

#[test]
fn accept_edits_allows_writes_inside_working_directories_only() {
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::AcceptEdits,
            &[],
            "src/x.rs"
        ),
        "allow"
    );
    assert_eq!(
        run(FileTool::Edit, PermissionMode::DontAsk, &[], "src/x.rs"),
        "allow"
    );
    assert_eq!(
        run(FileTool::Write, PermissionMode::AcceptEdits, &[], "../x.rs"),
        "ask"
    );
    assert_eq!(
        run(
            FileTool::Write,
            PermissionMode::AcceptEdits,
            &[],
            ".git/config"
        ),
        "ask!"
    );
    assert_eq!(
        run(FileTool::Write, PermissionMode::Explore, &[], "src/x.rs"),
        "deny"
    );
}

#[test]
fn suggestions_are_parent_folder_globs() {
    let ctx = reference_context(PermissionMode::Default);
    let suggest = |tool, path: &str| -> Vec<String> {
        FilePolicy::new(tool, reference_env())
            .generate_suggestions(&json!({ "file_path": path, "path": path }), &ctx)
            .into_iter()
            .filter_map(|r| r.rule_content)
            .collect()
    };
    assert_eq!(suggest(FileTool::Write, "src/main.py"), ["src/**"]);
    assert_eq!(suggest(FileTool::Write, "main.py"), ["**"]);
    assert_eq!(suggest(FileTool::Edit, "/etc/passwd"), ["/etc/**"]);
    assert_eq!(
        suggest(FileTool::Write, "docs/[draft]/a.md"),
        ["docs/[[]draft[]]/**"]
    );
    assert_eq!(suggest(FileTool::Glob, "src/docs"), ["src/docs/**"]);
    assert_eq!(suggest(FileTool::Write, ""), Vec::<String>::new());
    // A suggestion allows the call it was made for.
    let mut ctx = reference_context(PermissionMode::Default);
    let policy = FilePolicy::new(FileTool::Write, reference_env());
    let input = json!({ "file_path": "docs/[draft]/a.md" });
    for rule in policy.generate_suggestions(&input, &ctx) {
        ctx.add_rule(rule);
    }
    assert_eq!(outcome(&decide(&policy, &input, &ctx)), "allow");
}

#[test]
fn missing_paths_are_never_allowed() {
    let ctx = reference_context(PermissionMode::Default);
    for tool in [FileTool::Read, FileTool::Write, FileTool::Edit] {
        let policy = FilePolicy::new(tool, reference_env());
        assert_eq!(outcome(&decide(&policy, &json!({}), &ctx)), "ask");
        assert_eq!(
            outcome(&decide(&policy, &json!({ "file_path": 3 }), &ctx)),
            "ask"
        );
    }
}
