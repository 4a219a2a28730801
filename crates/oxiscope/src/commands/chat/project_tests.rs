use pretty_assertions::assert_eq;

use super::*;

fn rules(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| (*t).to_owned()).collect()
}

#[test]
fn an_empty_file_gets_a_permissions_table() {
    let out = with_allow("", &rules(&["Bash(touch:*)"])).unwrap();
    assert_eq!(out, "[permissions]\nallow = [\"Bash(touch:*)\"]\n");
}

#[test]
fn a_file_without_permissions_keeps_its_text_and_gets_the_table_at_the_end() {
    let text = "# my notes\nmodel = \"x\" # why\n";
    let out = with_allow(text, &rules(&["Read"])).unwrap();
    assert_eq!(
        out,
        "# my notes\nmodel = \"x\" # why\n\n[permissions]\nallow = [\"Read\"]\n"
    );
}

#[test]
fn an_allow_list_is_extended_in_place_and_comments_around_it_stay() {
    let text = "# top\n[permissions]\n# mine\nallow = [\"Read\"] # kept\ndeny = [\"Bash(rm:*)\"]\n\n[other]\nx = 1 # too\n";
    let out = with_allow(text, &rules(&["Read", "Bash(ls:*)"])).unwrap();
    assert_eq!(
        out,
        "# top\n[permissions]\n# mine\nallow = [\"Read\", \"Bash(ls:*)\"] # kept\ndeny = [\"Bash(rm:*)\"]\n\n[other]\nx = 1 # too\n"
    );
}

#[test]
fn a_permissions_table_without_allow_gets_it_after_its_header() {
    let text = "[permissions] # rules\ndeny = [\"Bash(rm:*)\"]\n";
    let out = with_allow(text, &rules(&["Bash(ls:*)"])).unwrap();
    assert_eq!(
        out,
        "[permissions] # rules\nallow = [\"Bash(ls:*)\"]\ndeny = [\"Bash(rm:*)\"]\n"
    );
    let last = with_allow("[permissions]", &rules(&["Read"])).unwrap();
    assert_eq!(last, "[permissions]\nallow = [\"Read\"]\n");
}

#[test]
fn a_rule_already_there_changes_nothing() {
    let text = "[permissions]\nallow = [ \"Read\" ]  # as typed\n";
    assert_eq!(with_allow(text, &rules(&["Read"])).unwrap(), text);
}

#[test]
fn quotes_and_backslashes_in_a_rule_read_back_as_written() {
    let rule = r#"Bash(echo "a\b":*)"#;
    let out = with_allow("", &rules(&[rule])).unwrap();
    let back: ProjectFile = toml::from_str(&out).unwrap();
    assert_eq!(back.permissions.allow, rules(&[rule]));
}

#[test]
fn an_inline_permissions_table_is_refused_with_the_rule_to_add() {
    let err = with_allow("permissions = { deny = [] }\n", &rules(&["Read"])).unwrap_err();
    assert!(err.to_string().contains("allow = [\"Read\"]"), "{err}");
}

#[test]
fn rules_saved_in_a_directory_are_loaded_from_it() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load(dir.path()).unwrap(), RuleLists::default());
    let path = add_allow(dir.path(), &rules(&["Bash(touch:*)"])).unwrap();
    assert_eq!(path, dir.path().join(".oxiscope/settings.toml"));
    add_allow(dir.path(), &rules(&["Read"])).unwrap();
    assert_eq!(
        load(dir.path()).unwrap().allow,
        rules(&["Bash(touch:*)", "Read"])
    );
}
