use std::collections::HashMap;

use oxiscope_permission::PermissionMode;
use pretty_assertions::assert_eq;

use super::*;

/// The config dir the tests pretend to read from.
fn cfg() -> &'static Path {
    Path::new("/cfg")
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn settings(args: &ChatArgs, env: &[(&str, &str)], file: &ConfigFile) -> Settings {
    resolve(args, &env_of(env), file, cfg(), false)
        .unwrap()
        .unwrap()
}

#[test]
fn flags_win_over_environment_over_file() {
    let file: ConfigFile = toml::from_str(
        r#"
        provider = "openai"
        model = "from-file"
        base_url = "http://file"
        api_key = "file-key"
        "#,
    )
    .unwrap();
    let env = [
        ("OXISCOPE_MODEL", "from-env"),
        ("OPENAI_BASE_URL", "http://env"),
    ];
    let none = ChatArgs::default();
    let s = settings(&none, &env, &file);
    assert_eq!(s.model.model, "from-env");
    assert_eq!(s.model.base_url.as_deref(), Some("http://env"));
    assert_eq!(s.model.api_key.as_deref(), Some("file-key"));

    let flags = ChatArgs {
        model: Some("from-flag".into()),
        api_key: Some("flag-key".into()),
        ..ChatArgs::default()
    };
    let s = settings(&flags, &env, &file);
    assert_eq!(s.model.model, "from-flag");
    assert_eq!(s.model.api_key.as_deref(), Some("flag-key"));
}

#[test]
fn the_provider_is_inferred_from_the_key_in_the_environment() {
    let s = settings(
        &ChatArgs::default(),
        &[("ANTHROPIC_API_KEY", "k")],
        &ConfigFile::default(),
    );
    assert_eq!(s.model.provider.name, "anthropic");
    assert_eq!(s.model.model, "claude-sonnet-4-5");
    let s = settings(
        &ChatArgs::default(),
        &[("OLLAMA_HOST", "http://gpu:11434")],
        &ConfigFile::default(),
    );
    assert_eq!(s.model.provider.name, "ollama");
    assert_eq!(s.model.base_url.as_deref(), Some("http://gpu:11434"));
    assert_eq!(s.model.api_key, None);
}

#[test]
fn nothing_configured_says_so() {
    let out = resolve(
        &ChatArgs::default(),
        &env_of(&[]),
        &ConfigFile::default(),
        cfg(),
        false,
    )
    .unwrap();
    let reason = out.unwrap_err();
    let text = how_to_configure(&reason, Path::new("/cfg/config.toml"));
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.contains("/cfg/config.toml"));
    let keyless = ChatArgs {
        provider: Some("openai".into()),
        ..ChatArgs::default()
    };
    let out = resolve(&keyless, &env_of(&[]), &ConfigFile::default(), cfg(), false).unwrap();
    assert!(out.unwrap_err().0.contains("OPENAI_API_KEY"));
}

#[test]
fn rules_from_file_and_flags_join_and_one_shot_denies_what_the_default_mode_asks() {
    let file: ConfigFile = toml::from_str(
        r#"
        [permissions]
        allow = ["Bash(git status:*)"]
        deny = ["Write(**/.env)"]
        "#,
    )
    .unwrap();
    let args = ChatArgs {
        allow: vec!["Read".into()],
        ..ChatArgs::default()
    };
    let env = [("OPENAI_API_KEY", "k")];
    let out = resolve(&args, &env_of(&env), &file, cfg(), true)
        .unwrap()
        .unwrap();
    assert_eq!(out.permissions.mode, PermissionMode::Default);
    assert!(out.deny_asks);
    let allowed: Vec<String> = out
        .permissions
        .allow_rules
        .values()
        .flatten()
        .map(oxiscope_permission::format_rule)
        .collect();
    assert_eq!(allowed, ["Bash(git status:*)", "Read"]);
    assert_eq!(out.permissions.deny_rules.len(), 1);

    let explicit = ChatArgs {
        mode: Some("accept-edits".into()),
        ..ChatArgs::default()
    };
    let out = resolve(&explicit, &env_of(&env), &file, cfg(), true)
        .unwrap()
        .unwrap();
    assert_eq!(out.permissions.mode, PermissionMode::AcceptEdits);
    assert!(!out.deny_asks);
    // The console asks: nothing is denied for it.
    let out = resolve(&args, &env_of(&env), &file, cfg(), false)
        .unwrap()
        .unwrap();
    assert!(!out.deny_asks);
}

#[test]
fn bad_values_are_errors_not_panics() {
    let env = env_of(&[("OPENAI_API_KEY", "k")]);
    let bad_mode = ChatArgs {
        mode: Some("yolo".into()),
        ..ChatArgs::default()
    };
    assert!(resolve(&bad_mode, &env, &ConfigFile::default(), cfg(), false).is_err());
    let bad_rule = ChatArgs {
        allow: vec!["Bash(".into()],
        ..ChatArgs::default()
    };
    assert!(resolve(&bad_rule, &env, &ConfigFile::default(), cfg(), false).is_err());
    assert!(toml::from_str::<ConfigFile>("colour = true").is_err());
}

#[test]
fn a_bad_mode_is_reported_before_a_missing_provider() {
    let bad_mode = ChatArgs {
        mode: Some("yolo".into()),
        ..ChatArgs::default()
    };
    let error = resolve(
        &bad_mode,
        &env_of(&[]),
        &ConfigFile::default(),
        cfg(),
        false,
    )
    .unwrap_err();
    assert!(error.to_string().contains("yolo"), "{error}");
}

#[test]
fn mcp_servers_and_skills_come_from_the_file_and_the_flags() {
    let file: ConfigFile = toml::from_str(
        r#"
        [mcp_servers.fs]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
        timeout = 30

        [mcp_servers.remote]
        url = "https://host/mcp"
        headers = { Authorization = "Bearer ${MY_TOKEN}" }

        [skills]
        paths = ["team-skills"]
        "#,
    )
    .unwrap();
    let args = ChatArgs {
        mcp: vec!["fs=node server.js".into()],
        skills: vec!["/abs/skills".into()],
        ..ChatArgs::default()
    };
    let env = [("OPENAI_API_KEY", "k"), ("MY_TOKEN", "t0k")];
    let s = settings(&args, &env, &file);
    let names: Vec<(&str, &str)> = s.mcp.iter().map(|m| (m.name(), m.transport())).collect();
    assert_eq!(names, [("fs", "stdio"), ("remote", "http")]);
    // The flag replaced the file's `fs`, timeout and all.
    assert_eq!(s.mcp[0].decl.execution_timeout, None);
    assert_eq!(
        s.skills,
        [
            PathBuf::from("/cfg/team-skills"),
            PathBuf::from("/abs/skills")
        ]
    );
}

#[test]
fn an_mcp_error_is_reported_before_a_missing_provider_and_names_the_server() {
    let file: ConfigFile = toml::from_str(
        "[mcp_servers.remote]\nurl = \"https://h/mcp\"\nheaders = { A = \"${UNSET_VAR}\" }\n",
    )
    .unwrap();
    let error = resolve(&ChatArgs::default(), &env_of(&[]), &file, cfg(), false).unwrap_err();
    let text = format!("{error:#}");
    assert!(
        text.contains("remote") && text.contains("UNSET_VAR"),
        "{text}"
    );
    // Unknown keys in `[skills]` are refused when the file is read.
    assert!(toml::from_str::<ConfigFile>("[skills]\npath = [\"x\"]\n").is_err());
}

#[test]
fn gemini_minimax_and_the_responses_api_take_their_vendors_variables() {
    let none = ChatArgs::default();
    let file = ConfigFile::default();
    let s = settings(
        &none,
        &[
            ("GEMINI_API_KEY", "g-key"),
            ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
        ],
        &file,
    );
    assert_eq!(s.model.provider.name, "gemini");
    assert_eq!(s.model.model, "gemini-2.5-flash");
    assert_eq!(s.model.api_key.as_deref(), Some("g-key"));
    assert_eq!(s.model.endpoint(), "http://127.0.0.1:9/v1beta");

    let minimax = ChatArgs {
        provider: Some("minimax".into()),
        ..ChatArgs::default()
    };
    let s = settings(&minimax, &[("MINIMAX_API_KEY", "m-key")], &file);
    assert_eq!(
        (s.model.model.as_str(), s.model.api_key.as_deref()),
        ("MiniMax-M2.7", Some("m-key"))
    );
    assert_eq!(s.model.endpoint(), "https://api.minimax.io/anthropic");

    let responses: ConfigFile = toml::from_str("provider = \"openai-responses\"").unwrap();
    let env = [("OPENAI_API_KEY", "sk"), ("OPENAI_BASE_URL", "http://h/v1")];
    let s = settings(&none, &env, &responses);
    assert_eq!(s.model.provider.name, "openai-responses");
    assert_eq!(s.model.base_url.as_deref(), Some("http://h/v1"));
}

#[test]
fn a_provider_without_its_key_names_the_variables() {
    for (name, vars) in [
        ("gemini", "GOOGLE_API_KEY or GEMINI_API_KEY"),
        ("minimax", "MINIMAX_API_KEY"),
        ("openai-responses", "OPENAI_API_KEY"),
    ] {
        let args = ChatArgs {
            provider: Some(name.into()),
            ..ChatArgs::default()
        };
        let out = resolve(&args, &env_of(&[]), &ConfigFile::default(), cfg(), false).unwrap();
        assert_eq!(
            out.unwrap_err().0,
            format!("{name} needs an API key ({vars})")
        );
    }
    let vllm = ChatArgs {
        provider: Some("vllm".into()),
        ..ChatArgs::default()
    };
    let out = resolve(&vllm, &env_of(&[]), &ConfigFile::default(), cfg(), false).unwrap();
    assert!(out.unwrap_err().0.contains("base URL"));
    let unknown = ChatArgs {
        provider: Some("bard".into()),
        ..ChatArgs::default()
    };
    let error = resolve(&unknown, &env_of(&[]), &ConfigFile::default(), cfg(), false).unwrap_err();
    assert!(error.to_string().contains("gemini, minimax"), "{error}");
}

#[test]
fn the_keys_of_existing_providers_still_win_over_the_new_ones() {
    let env = [("GOOGLE_API_KEY", "g"), ("DEEPSEEK_API_KEY", "d")];
    let s = settings(&ChatArgs::default(), &env, &ConfigFile::default());
    assert_eq!(s.model.provider.name, "deepseek");
    let text = how_to_configure(
        &NotConfigured("no model provider is configured".into()),
        Path::new("/cfg/config.toml"),
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    for var in [
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "MINIMAX_API_KEY",
        "OLLAMA_HOST",
    ] {
        assert!(text.contains(var), "{var}: {text}");
    }
}
