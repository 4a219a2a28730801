use super::*;
use crate::shell::ast::Expansion;

fn words(script: &Script) -> Vec<Vec<String>> {
    script
        .commands
        .iter()
        .map(|c| c.values().map(str::to_owned).collect())
        .collect()
}

fn ok(src: &str) -> Script {
    match parse(src) {
        Ok(script) => script,
        Err(e) => panic!("{src:?} failed to parse: {e}"),
    }
}

#[test]
fn splits_every_list_operator_and_newline() {
    let script = ok("ls && pwd || echo a; cat x | wc -l\nrm -rf / & sleep 1");
    assert_eq!(
        words(&script),
        vec![
            vec!["ls"],
            vec!["pwd"],
            vec!["echo", "a"],
            vec!["cat", "x"],
            vec!["wc", "-l"],
            vec!["rm", "-rf", "/"],
            vec!["sleep", "1"],
        ]
    );
    assert!(script.commands[4].piped_input);
    assert!(script.hazards.is_empty());
}

#[test]
fn quotes_and_escapes_are_removed() {
    let script = ok(r#"echo 'a && b' "c $HOME" d\ e $'x\ty'"#);
    assert_eq!(
        words(&script),
        vec![vec!["echo", "a && b", "c $HOME", "d e", "x\ty"]]
    );
    assert_eq!(
        script.commands[0].words[2].expansions,
        vec![Expansion::Variable]
    );
}

#[test]
fn subshells_and_groups_are_split() {
    let script = ok("(cd /tmp && ls) ; { echo a; rm b; } > out");
    assert_eq!(
        words(&script),
        vec![
            vec!["cd", "/tmp"],
            vec!["ls"],
            vec!["echo", "a"],
            vec!["rm", "b"],
            vec![]
        ]
    );
    assert_eq!(script.commands[4].redirects[0].target.value, "out");
}

#[test]
fn substitutions_are_hazards_and_their_commands_are_collected() {
    let script = ok("ls $(rm -rf /) `date` <(ls a)");
    assert!(script.hazards.contains(&Hazard::CommandSubstitution));
    assert!(script.hazards.contains(&Hazard::ProcessSubstitution));
    let all = words(&script);
    assert!(all.contains(&vec!["rm".to_owned(), "-rf".to_owned(), "/".to_owned()]));
    assert!(all.contains(&vec!["date".to_owned()]));
    assert!(
        script
            .commands
            .iter()
            .any(|c| c.nested && c.values().next() == Some("rm"))
    );
}

#[test]
fn redirections_are_parsed_with_descriptors() {
    let script = ok("cmd 2>&1 >out.txt 2> err <in &>>both");
    let ops: Vec<_> = script.commands[0]
        .redirects
        .iter()
        .map(|r| (r.fd, r.op))
        .collect();
    assert_eq!(
        ops,
        vec![
            (Some(2), RedirectOp::Duplicate),
            (None, RedirectOp::Write),
            (Some(2), RedirectOp::Write),
            (None, RedirectOp::Read),
            (None, RedirectOp::AppendBoth),
        ]
    );
    assert_eq!(words(&script), vec![vec!["cmd"]]);
}

#[test]
fn heredoc_bodies_are_skipped_and_checked() {
    let script = ok("cat <<EOF > x\nhello $(whoami)\nEOF\nls");
    assert_eq!(words(&script), vec![vec!["cat"], vec!["ls"]]);
    assert!(script.hazards.contains(&Hazard::CommandSubstitution));
    let quoted = ok("cat <<'EOF'\n$(whoami)\nEOF");
    assert!(quoted.hazards.is_empty());
    assert!(parse("cat <<EOF\nno end").is_err());
}

#[test]
fn assignments_and_comments() {
    let script = ok("FOO=1 BAR+=x ls -la # list $(rm)");
    assert_eq!(script.commands[0].assignments.len(), 2);
    assert_eq!(words(&script), vec![vec!["ls", "-la"]]);
    assert!(script.hazards.is_empty());
}

#[test]
fn control_flow_is_a_hazard_but_inner_commands_are_kept() {
    let script = ok("if [ -f x ]; then rm x; fi");
    assert_eq!(
        script.hazards,
        vec![Hazard::ControlFlow("if"), Hazard::TestCommand]
    );
    assert_eq!(
        words(&script),
        vec![vec!["[", "-f", "x", "]"], vec!["rm", "x"]]
    );
    let script = ok("for f in *.txt; do cat $f; done");
    assert_eq!(words(&script), vec![vec!["cat", "$f"]]);
    let script = ok("case $x in a) echo a;; esac");
    assert_eq!(script.hazards, vec![Hazard::ControlFlow("case")]);
    let script = ok("f() { rm -rf /; }; f");
    assert!(script.hazards.contains(&Hazard::FunctionDefinition));
    assert!(words(&script).contains(&vec!["rm".to_owned(), "-rf".to_owned(), "/".to_owned()]));
    let script = ok("[[ -f x && -d y ]] && echo yes");
    assert_eq!(script.hazards, vec![Hazard::TestCommand]);
}

#[test]
fn dynamic_command_names_and_parameter_expansions_are_hazards() {
    assert!(
        ok("$CMD -rf /")
            .hazards
            .contains(&Hazard::DynamicCommandName)
    );
    assert!(
        ok("echo ${HOME:-/tmp}")
            .hazards
            .contains(&Hazard::ParameterExpansion)
    );
    assert!(ok("echo ${HOME}").hazards.is_empty());
    assert!(ok("echo $((1+2))").hazards.contains(&Hazard::Arithmetic));
    assert!(
        ok("rm {a,/etc/x}")
            .hazards
            .contains(&Hazard::BraceExpansion)
    );
    assert!(ok("find . -exec rm {} \\;").hazards.is_empty());
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    for bad in [
        "echo '", "echo \"", "(ls", "ls)", "{ ls", "echo `x", "echo $(x", "ls >", "a ( b", ";;",
    ] {
        assert!(parse(bad).is_err(), "{bad:?} should not parse");
    }
    let deep = "( ".repeat(200) + "ls" + &")".repeat(200);
    assert!(parse(&deep).is_err());
}

#[test]
fn empty_input_has_no_commands() {
    assert_eq!(ok("").commands.len(), 0);
    assert_eq!(ok("   \n  ").commands.len(), 0);
}
