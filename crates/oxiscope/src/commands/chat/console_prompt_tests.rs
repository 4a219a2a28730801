use oxiscope_permission::{PermissionBehavior, PermissionRule};
use pretty_assertions::assert_eq;

use super::prompt_line;

#[test]
fn the_prompt_is_one_line_naming_the_rule_that_always_adds() {
    let rule = PermissionRule::new(
        "Bash",
        Some("touch:*".to_owned()),
        PermissionBehavior::Allow,
        "suggested",
    );
    assert_eq!(
        prompt_line("Bash(touch a.txt)", &[rule]),
        "Allow Bash(touch a.txt)?  [y] once  [a] always allow Bash(touch:*)  [N] deny: "
    );
    let bare = prompt_line("Bash(rm -rf /)", &[]);
    assert_eq!(
        bare,
        "Allow Bash(rm -rf /)?  [y] once  [a] allow (no rule to remember)  [N] deny: "
    );
    assert!(!bare.contains('\n'));
}
