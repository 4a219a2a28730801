//! Property tests: shell-like noise never panics the analyser, and nothing
//! containing a substitution or failing to parse is ever allowed outside
//! `bypass` (which skips safety asks by contract).

use oxiscope_permission::{
    BashPolicy, PermissionBehavior, PermissionMode, PermissionRule, ToolPolicy, decide, shell,
};
use proptest::prelude::*;
use serde_json::json;

use super::common::{reference_context, reference_env};

const PIECES: &[&str] = &[
    "ls",
    "rm",
    "-rf",
    "/",
    "x",
    "cat",
    ".env",
    "git",
    "status",
    "echo",
    "'q s'",
    "\"d $V\"",
    "$V",
    "${V}",
    "${V:-y}",
    "$(ls)",
    "`id`",
    "<(ls)",
    ">(cat)",
    "$((1+2))",
    ";",
    "&&",
    "||",
    "|",
    "|&",
    "&",
    "\n",
    "(",
    ")",
    "{",
    "}",
    ">",
    ">>",
    "<",
    "2>&1",
    "<<EOF\nbody\nEOF\n",
    "<<<",
    "#",
    "\\",
    "A=1",
    "~",
    "*",
    "{a,b}",
    "if",
    "then",
    "fi",
    "for",
    "do",
    "done",
    "case",
    "esac",
    "[[",
    "]]",
    "eval",
    "sudo",
    "\"",
    "'",
    "$",
    "`",
    "=",
    "\t",
    "é",
    "\u{0}",
];

fn shellish() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..14).prop_map(|parts| parts.join(" "))
}

/// An independent, simpler oracle: whether the command contains a
/// substitution the shell would perform (`$(`, a backtick, `<(`, `>(`)
/// outside single quotes and comments; process substitution only unquoted.
fn has_substitution(command: &str) -> bool {
    let chars: Vec<char> = command.chars().collect();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if single {
            single = c != '\'';
        } else if c == '\\' {
            i += 1;
        } else if c == '\'' && !double {
            single = true;
        } else if c == '"' {
            double = !double;
        } else if c == '#' && !double && (i == 0 || chars[i - 1].is_whitespace()) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '`'
            || (c == '$' && next == Some('('))
            || ((c == '<' || c == '>') && next == Some('(') && !double)
        {
            return true;
        }
        i += 1;
    }
    false
}

/// 384 cases by default (bounded for CI); `PROPTEST_CASES` raises it.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(384)
}

fn modes_with_rules() -> Vec<(PermissionMode, Vec<PermissionRule>)> {
    let everything = PermissionRule::new("Bash", None, PermissionBehavior::Allow, "test");
    let ls = PermissionRule::new(
        "Bash",
        Some("ls:*".into()),
        PermissionBehavior::Allow,
        "test",
    );
    let wild = PermissionRule::new("Bash", Some("*".into()), PermissionBehavior::Allow, "test");
    let mut out = Vec::new();
    for mode in PermissionMode::ALL {
        if mode == PermissionMode::Bypass {
            continue;
        }
        out.push((mode, vec![]));
        out.push((mode, vec![everything.clone(), ls.clone(), wild.clone()]));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn shell_noise_never_panics_and_substitutions_are_never_allowed(command in shellish()) {
        let policy = BashPolicy::new(reference_env());
        let input = json!({ "command": command });
        let parsed = shell::parse(&command);
        let read_only = policy.check_read_only(&input);
        if has_substitution(&command) || parsed.is_err() {
            prop_assert!(!read_only);
        }
        for (mode, rules) in modes_with_rules() {
            let mut ctx = reference_context(mode);
            for rule in rules {
                ctx.add_rule(rule);
            }
            let decision = decide(&policy, &input, &ctx);
            if has_substitution(&command) || parsed.is_err() {
                prop_assert_ne!(decision.behavior, PermissionBehavior::Allow, "{:?} in {}", command, mode);
            }
            if mode == PermissionMode::DontAsk {
                prop_assert_ne!(decision.behavior, PermissionBehavior::Ask);
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(command in any::<String>()) {
        let policy = BashPolicy::new(reference_env());
        let ctx = reference_context(PermissionMode::AcceptEdits);
        let _ = decide(&policy, &json!({ "command": command }), &ctx);
        let _ = policy.generate_suggestions(&json!({ "command": command }), &ctx);
    }
}
