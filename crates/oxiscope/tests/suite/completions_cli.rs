//! `oxiscope completions`.

use super::chat_env::{ChatEnv, run, stderr, stdout};

#[test]
fn completions_for_bash_name_the_subcommands() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["completions", "bash"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let script = stdout(&out);
    assert!(script.contains("complete -F"), "{script}");
    for word in ["chat", "serve", "--session"] {
        assert!(script.contains(word), "no {word} in the script");
    }
}

#[test]
fn completions_for_zsh_and_fish_are_printed_and_an_unknown_shell_is_refused() {
    let env = ChatEnv::new();
    for (shell, marker) in [
        ("zsh", "#compdef oxiscope"),
        ("fish", "complete -c oxiscope"),
    ] {
        let out = run(env.bare(&["completions", shell]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains(marker), "{shell}: {}", stdout(&out));
    }
    let out = run(env.bare(&["completions", "tcsh"]));
    assert_eq!(out.status.code(), Some(2));
}
