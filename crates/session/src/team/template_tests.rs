use oxiscope_permission::PermissionMode;
use serde_json::json;

use super::*;

#[test]
fn placeholders_are_filled_once_and_values_are_not_reread() {
    let team = TeamData {
        name: "crew".into(),
        description: "ship {member_name}".into(),
        ..TeamData::default()
    };
    let templates = TeamTemplates::default();
    let prompt = templates
        .get("default")
        .unwrap()
        .render(&team, "w1", "tester", "Boss");
    assert!(prompt.starts_with("You are w1, a member of the team 'crew' led by Boss."));
    assert!(prompt.contains("The team's purpose: ship {member_name}"));
    assert!(prompt.contains("Your role: tester"));
    assert!(!templates.has_choice());
}

#[test]
fn a_directory_adds_templates_and_may_replace_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let explorer = json!({
        "type": "explorer",
        "description": "read-only",
        "system_prompt_template": "{member_name} explores for {leader_name} {unknown}",
        "permission_context": {"mode": "explore"},
        "override_leader_mode": true,
    });
    std::fs::write(dir.path().join("explorer.json"), explorer.to_string()).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a template").unwrap();
    std::fs::write(
        dir.path().join("default.json"),
        json!({"type": "default", "description": "d", "system_prompt_template": "plain"})
            .to_string(),
    )
    .unwrap();
    let templates = TeamTemplates::load_dir(dir.path()).unwrap();
    assert_eq!(templates.kinds(), ["default", "explorer"]);
    assert!(templates.has_choice());
    let team = TeamData::default();
    assert_eq!(
        templates
            .get("default")
            .unwrap()
            .render(&team, "a", "b", "c"),
        "plain"
    );
    let explorer = templates.get("explorer").unwrap();
    assert_eq!(
        explorer.render(&team, "w", "d", "L"),
        "w explores for L {unknown}"
    );

    let mut leader = PermissionContext::new(PermissionMode::AcceptEdits);
    leader.add_working_directory("/data", "user");
    let merged = explorer.permissions(&leader);
    assert_eq!(
        merged.mode,
        PermissionMode::Explore,
        "the template pins its mode"
    );
    assert!(merged.working_directories.contains_key("/data"));
    let inherited = templates.get("default").unwrap().permissions(&leader);
    assert_eq!(inherited.mode, PermissionMode::AcceptEdits);
}

#[test]
fn a_pinned_mode_never_gives_a_worker_more_trust_than_its_leader() {
    let dir = tempfile::tempdir().unwrap();
    let pinned = |kind: &str, mode: &str| {
        json!({"type": kind, "description": "d", "system_prompt_template": "p",
               "permission_context": {"mode": mode}, "override_leader_mode": true})
        .to_string()
    };
    std::fs::write(dir.path().join("b.json"), pinned("free", "bypass")).unwrap();
    std::fs::write(dir.path().join("e.json"), pinned("editor", "accept_edits")).unwrap();
    let templates = TeamTemplates::load_dir(dir.path()).unwrap();
    let (free, editor) = (
        templates.get("free").unwrap(),
        templates.get("editor").unwrap(),
    );
    for (leader, template, expected) in [
        (PermissionMode::Default, free, PermissionMode::Default),
        (PermissionMode::Bypass, free, PermissionMode::Bypass),
        (PermissionMode::Explore, editor, PermissionMode::Explore),
        (PermissionMode::Default, editor, PermissionMode::Default),
        (PermissionMode::DontAsk, editor, PermissionMode::AcceptEdits),
    ] {
        let merged = template.permissions(&PermissionContext::new(leader));
        assert_eq!(merged.mode, expected, "leader {leader:?}");
    }
}

#[test]
fn bad_template_directories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let one = json!({"type": "x", "description": "d", "system_prompt_template": "p"});
    std::fs::write(dir.path().join("a.json"), one.to_string()).unwrap();
    std::fs::write(dir.path().join("b.json"), one.to_string()).unwrap();
    assert!(matches!(
        TeamTemplates::load_dir(dir.path()),
        Err(TemplateError::Duplicate { .. })
    ));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), "{").unwrap();
    assert!(matches!(
        TeamTemplates::load_dir(dir.path()),
        Err(TemplateError::Invalid { .. })
    ));

    let dir = tempfile::tempdir().unwrap();
    let empty = json!({"type": " ", "description": "d", "system_prompt_template": "p"});
    std::fs::write(dir.path().join("a.json"), empty.to_string()).unwrap();
    assert!(matches!(
        TeamTemplates::load_dir(dir.path()),
        Err(TemplateError::Empty { field: "type", .. })
    ));

    assert!(matches!(
        TeamTemplates::load_dir(&dir.path().join("missing")),
        Err(TemplateError::Io { .. })
    ));
}

#[test]
fn a_worker_keeps_the_leaders_deny_and_ask_rules_whatever_the_template_says() {
    use oxiscope_message::{PermissionBehavior, PermissionRule};
    let dir = tempfile::tempdir().unwrap();
    let own = json!({"type": "own", "description": "d", "system_prompt_template": "p",
                     "extend_leader_permission_rules": false});
    std::fs::write(dir.path().join("own.json"), own.to_string()).unwrap();
    let templates = TeamTemplates::load_dir(dir.path()).unwrap();
    let mut leader = PermissionContext::new(PermissionMode::AcceptEdits);
    for (tool, behavior) in [
        ("Bash", PermissionBehavior::Deny),
        ("Write", PermissionBehavior::Ask),
        ("Read", PermissionBehavior::Allow),
    ] {
        leader.add_rule(PermissionRule::new(tool, None, behavior, "user"));
    }
    let worker = templates.get("own").unwrap().permissions(&leader);
    assert_eq!(worker.deny_rules, leader.deny_rules);
    assert_eq!(worker.ask_rules, leader.ask_rules);
    assert!(worker.allow_rules.is_empty(), "{:?}", worker.allow_rules);
    let inherits = templates.get("default").unwrap().permissions(&leader);
    assert_eq!(inherits.allow_rules, leader.allow_rules);
}
