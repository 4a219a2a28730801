//! `oxiscope config init` and `config show`.

use pretty_assertions::assert_eq;

use super::chat_env::{ChatEnv, run, stderr, stdout};

#[test]
fn config_init_writes_a_commented_file_and_keeps_an_existing_one() {
    let env = ChatEnv::new();
    let path = env.config().join("config.toml");
    let out = run(env.bare(&["config", "init"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("Wrote {}\n", path.display()));
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("# provider = \"openai\""), "{written}");

    std::fs::write(&path, "model = \"mine\"\n").unwrap();
    let out = run(env.bare(&["config", "init"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "model = \"mine\"\n"
    );

    let out = run(env.bare(&["config", "init", "--force"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
}

#[test]
fn config_show_prints_flags_env_and_files_with_the_key_masked() {
    let env = ChatEnv::new();
    std::fs::write(
        env.config().join("config.toml"),
        "model = \"from-file\"\nverbosity = \"quiet\"\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(env.work().join(".oxiscope")).unwrap();
    std::fs::write(
        env.work().join(".oxiscope/settings.toml"),
        "[permissions]\nallow = [\"Bash(touch:*)\"]\n",
    )
    .unwrap();
    let mut cmd = env.bare(&[
        "config",
        "show",
        "--provider",
        "openai",
        "--api-key",
        "sk-proj-1234567890abcd",
        "--max-tool-lines",
        "5",
    ]);
    cmd.env("OXISCOPE_MODEL", "from-env");
    let out = run(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = stdout(&out);
    for line in [
        "model: from-env",
        "api_key: sk-...abcd",
        "mode: default",
        "allow: Bash(touch:*) (project)",
        "deny: Bash(rm:*) (config)",
        "verbosity: quiet",
        "max_tool_lines: 5",
    ] {
        assert!(shown.lines().any(|l| l == line), "no {line:?} in\n{shown}");
    }
    assert!(!shown.contains("1234567890"), "{shown}");
}

#[test]
fn config_show_without_a_model_says_so() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["config", "show"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("model: not configured (no model provider is configured)"),
        "{}",
        stdout(&out)
    );
}
