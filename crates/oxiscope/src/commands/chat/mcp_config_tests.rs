use pretty_assertions::assert_eq;

use super::*;

fn env(k: &str) -> Option<String> {
    match k {
        "TOKEN" => Some("s3cret".to_owned()),
        "EMPTY" => Some(String::new()),
        "ROOT" => Some("/srv/data".to_owned()),
        _ => None,
    }
}

fn servers(toml_text: &str, flags: &[&str]) -> anyhow::Result<Vec<ServerSpec>> {
    #[derive(Deserialize)]
    struct File {
        #[serde(default)]
        mcp_servers: BTreeMap<String, toml::Value>,
    }
    let file: File = toml::from_str(toml_text).unwrap();
    let flags: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
    resolve_servers(&file.mcp_servers, &flags, &env)
}

fn error_of(toml_text: &str) -> String {
    format!("{:#}", servers(toml_text, &[]).unwrap_err())
}

#[test]
fn a_stdio_and_an_http_server_map_to_workspace_declarations() {
    let specs = servers(
        r#"
        [mcp_servers.fs]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-filesystem", "${ROOT}"]
        env = { KEY = "value", AUTH = "${TOKEN}" }
        cwd = "sub"
        enabled_tools = ["read_file"]
        disabled_tools = ["write_file"]
        timeout = 12.5
        startup_timeout = 5

        [mcp_servers.remote]
        url = "https://host.example/mcp"
        headers = { Authorization = "Bearer ${TOKEN}" }
        enabled = false
        "#,
        &[],
    )
    .unwrap();
    let fs = &specs[0];
    assert_eq!(fs.name(), "fs");
    assert_eq!(fs.transport(), "stdio");
    assert!(fs.enabled);
    assert_eq!(fs.startup_timeout, Duration::from_secs(5));
    assert_eq!(
        fs.decl,
        McpDeclaration {
            name: "fs".into(),
            is_stateful: true,
            mcp_config: McpServerConfig::Stdio {
                command: "npx".into(),
                args: Some(vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                    "/srv/data".into()
                ]),
                env: Some(BTreeMap::from([
                    ("AUTH".to_owned(), "s3cret".to_owned()),
                    ("KEY".to_owned(), "value".to_owned()),
                ])),
                cwd: Some("sub".into()),
                encoding_error_handler: "strict".into(),
            },
            enable_tools: Some(vec!["read_file".into()]),
            disable_tools: Some(vec!["write_file".into()]),
            execution_timeout: Some(12.5),
            stream_progress: false,
        }
    );
    let remote = &specs[1];
    assert_eq!(remote.transport(), "http");
    assert!(!remote.enabled);
    assert_eq!(
        remote.decl.mcp_config,
        McpServerConfig::Http {
            url: "https://host.example/mcp".into(),
            headers: Some(BTreeMap::from([(
                "Authorization".to_owned(),
                "Bearer s3cret".to_owned()
            )])),
            timeout: Some(30.0),
        }
    );
}

#[test]
fn an_unset_variable_is_an_error_naming_the_server_and_the_variable() {
    let text = error_of(
        r#"
        [mcp_servers.remote]
        url = "https://host/mcp"
        headers = { Authorization = "Bearer ${MY_TOKEN}" }
        "#,
    );
    assert!(text.contains("`remote`"), "{text}");
    assert!(text.contains("MY_TOKEN is not set"), "{text}");
    assert!(text.contains("headers.Authorization"), "{text}");
    let text = error_of("[mcp_servers.a]\ncommand = \"x\"\nargs = [\"${NOPE}\"]\n");
    assert!(text.contains("`a`") && text.contains("NOPE"), "{text}");
    let text = error_of("[mcp_servers.a]\nurl = \"${NOPE}\"\n");
    assert!(text.contains("NOPE"), "{text}");
    let text = error_of("[mcp_servers.a]\ncommand = \"x\"\nenv = { A = \"${NOPE}\" }\n");
    assert!(text.contains("NOPE") && text.contains("env.A"), "{text}");
}

#[test]
fn bad_tables_are_errors_naming_the_server() {
    for (table, expected) in [
        ("command = \"x\"\ncomand = \"y\"", "unknown field `comand`"),
        ("command = \"x\"\nurl = \"http://h/mcp\"", "not both"),
        ("args = [\"x\"]", "needs `command`"),
        (
            "url = \"http://h/mcp\"\nargs = [\"x\"]",
            "`args` is for stdio",
        ),
        (
            "command = \"x\"\nheaders = { A = \"b\" }",
            "`headers` are for HTTP",
        ),
        ("url = \"file:///etc/passwd\"", "http:// or https://"),
        ("command = \"x\"\ntimeout = 0", "`timeout`"),
        ("command = \"x\"\nstartup_timeout = -1", "`startup_timeout`"),
        ("command = \"x\"\nargs = \"not a list\"", "invalid type"),
        ("command = \"  \"", "empty"),
    ] {
        let text = error_of(&format!("[mcp_servers.bad]\n{table}\n"));
        assert!(text.contains("`bad`"), "{table}: {text}");
        assert!(text.contains(expected), "{table}: {text}");
    }
    let text = error_of("[mcp_servers.\"../evil\"]\ncommand = \"x\"\n");
    assert!(text.contains("../evil"), "{text}");
    let text = error_of("[mcp_servers]\nfs = \"npx\"\n");
    assert!(
        text.contains("`fs`") && text.contains("must be a table"),
        "{text}"
    );
}

#[test]
fn a_flag_adds_a_server_or_replaces_the_configured_one() {
    let specs = servers(
        "[mcp_servers.fs]\ncommand = \"old\"\n[mcp_servers.z]\ncommand = \"zed\"\n",
        &[
            "fs=npx -y '@scope/server fs' \"a b\" plain\\ word",
            "web=https://example.com/mcp",
        ],
    )
    .unwrap();
    let names: Vec<&str> = specs.iter().map(ServerSpec::name).collect();
    assert_eq!(names, ["fs", "z", "web"]);
    assert_eq!(
        specs[0].decl.mcp_config,
        McpServerConfig::Stdio {
            command: "npx".into(),
            args: Some(vec![
                "-y".into(),
                "@scope/server fs".into(),
                "a b".into(),
                "plain word".into()
            ]),
            env: None,
            cwd: None,
            encoding_error_handler: "strict".into(),
        }
    );
    assert_eq!(specs[2].transport(), "http");
}

#[test]
fn bad_flags_are_errors() {
    for flag in [
        "no-equals",
        "=cmd",
        "bad name=cmd",
        "fs=",
        "fs='unclosed",
        "x/y=cmd",
    ] {
        let error = servers("", &[flag]).unwrap_err();
        assert!(format!("{error:#}").contains("--mcp"), "{flag}: {error:#}");
    }
}

#[test]
fn expansion_replaces_set_variables_and_defaults_only() {
    assert_eq!(expand("a ${TOKEN} b", &env).unwrap(), "a s3cret b");
    assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
    assert_eq!(expand("${EMPTY:-d}", &env).unwrap(), "d");
    assert_eq!(expand("${NOPE:-fallback}", &env).unwrap(), "fallback");
    assert_eq!(
        expand("$TOKEN and $ alone", &env).unwrap(),
        "$TOKEN and $ alone"
    );
    assert_eq!(expand("${ROOT}${TOKEN}", &env).unwrap(), "/srv/datas3cret");
    assert_eq!(
        expand("x ${NOPE} y", &env),
        Err(ExpandError::Unset("NOPE".into()))
    );
    assert!(matches!(
        expand("${oops", &env),
        Err(ExpandError::Malformed(_))
    ));
    assert!(matches!(
        expand("${1X}", &env),
        Err(ExpandError::Malformed(_))
    ));
    assert!(matches!(
        expand("${}", &env),
        Err(ExpandError::Malformed(_))
    ));
}

#[test]
fn words_split_like_a_shell_without_expansion() {
    let split = |t: &str| split_words(t).unwrap();
    assert_eq!(split("  a  b\tc "), ["a", "b", "c"]);
    assert_eq!(split("'a b' \"c d\" e\\ f"), ["a b", "c d", "e f"]);
    assert_eq!(split("'it''s' \"q\\\"x\" \"\\n\""), ["its", "q\"x", "\\n"]);
    assert_eq!(split("'' x"), ["", "x"]);
    assert_eq!(split("$HOME"), ["$HOME"]);
    assert!(split("").is_empty());
    assert!(split_words("'open").is_err());
    assert!(split_words("\"open").is_err());
    assert!(split_words("trailing\\").is_err());
}
