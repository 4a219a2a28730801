//! MCP servers and skills in `oxiscope chat` and `oxiscope mcp list`:
//! a real MCP server (server-everything from npm, installed in
//! `crates/mcp/tests/servers`) configured through the config file or
//! `--mcp`, its tool called by a scripted model.

use std::path::PathBuf;

use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::chat_env::{ChatEnv, run, stderr, stdout, text};

/// server-everything's entry point, if it and `node` are installed;
/// otherwise the test is skipped (loudly; failed in CI).
pub(crate) fn everything() -> Option<PathBuf> {
    let script = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mcp/tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ));
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if script.is_file() && node {
        return Some(script);
    }
    oxiscope_test_support::skip(&format!(
        "the MCP test server is not installed (node on PATH: {node}; {} exists: {}); \
         run `npm ci --prefix crates/mcp/tests/servers`",
        script.display(),
        script.is_file()
    ));
    None
}

/// Returns from the test when server-everything is missing.
macro_rules! require_everything {
    () => {
        match $crate::suite::chat_mcp::everything() {
            Some(script) => script,
            None => return,
        }
    };
}
pub(crate) use require_everything;

/// A call of `name` with `args`.
fn call(id: &str, name: &str, args: &Value) -> OpenAiScript {
    OpenAiScript::new()
        .tool_call(0, id, name)
        .tool_args(0, args.to_string())
        .finish("tool_calls")
        .usage(30, 10, 0)
}

/// The names of the tools request `index` offered.
pub(crate) fn tool_names(env: &ChatEnv, index: usize) -> Vec<String> {
    let body = env.requests()[index].body_json().unwrap();
    body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// The tool results (`role: tool`) of request `index`, as text.
fn tool_results(env: &ChatEnv, index: usize) -> Vec<String> {
    env.messages(index)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

pub(crate) fn write_config(env: &ChatEnv, text: &str) {
    std::fs::write(env.config().join("config.toml"), text).unwrap();
}

/// A TOML string literal of `path`.
pub(crate) fn quoted(path: &std::path::Path) -> String {
    Value::String(path.display().to_string()).to_string()
}

/// The model calls `mcp__everything__echo`, then answers; checks the
/// echo reached the model.
fn assert_echo_round_trip(env: &ChatEnv, args: &[&str]) {
    env.answer(&call(
        "call_1",
        "mcp__everything__echo",
        &serde_json::json!({"message": "hello-mcp"}),
    ));
    env.answer(&text("The server echoed."));
    let mut all = vec!["-p", "echo something", "--allow", "mcp__everything__echo"];
    all.extend_from_slice(args);
    let out = run(env.chat(&all));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The server echoed.\n");
    assert!(
        tool_names(env, 0).contains(&"mcp__everything__echo".to_owned()),
        "{:?}",
        tool_names(env, 0)
    );
    let results = tool_results(env, 1);
    assert!(
        results.iter().any(|r| r.contains("Echo: hello-mcp")),
        "{results:?}"
    );
    // Nothing failed, and -p reports connections only at debug verbosity.
    assert!(!stderr(&out).contains("mcp:"), "{}", stderr(&out));
}

#[test]
fn a_config_file_server_s_tool_result_reaches_the_model() {
    let script = require_everything!();
    let env = ChatEnv::new();
    write_config(
        &env,
        &format!(
            "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\
             enabled_tools = [\"echo\", \"get-sum\"]\n",
            quoted(&script)
        ),
    );
    assert_echo_round_trip(&env, &[]);
    // The allow-list left the other tools out.
    let everything: Vec<String> = tool_names(&env, 0)
        .into_iter()
        .filter(|n| n.starts_with("mcp__everything__"))
        .collect();
    assert_eq!(
        everything,
        ["mcp__everything__echo", "mcp__everything__get-sum"]
    );
}

#[test]
fn a_flag_server_s_tool_result_reaches_the_model_and_debug_reports_it() {
    let script = require_everything!();
    let env = ChatEnv::new();
    let flag = format!("everything=node '{}' stdio", script.display());
    assert_echo_round_trip(&env, &["--mcp", &flag]);

    env.answer(&text("Hi."));
    let out = run(env.chat(&["-p", "hi", "--mcp", &flag, "--verbosity", "debug"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.starts_with("mcp: everything connected ("))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.ends_with(" tools)"), "{line}");
}

#[test]
fn a_server_that_cannot_start_is_reported_once_and_the_chat_answers() {
    let env = ChatEnv::new();
    write_config(
        &env,
        "[mcp_servers.broken]\ncommand = \"oxiscope-no-such-mcp-server\"\n",
    );
    env.answer(&text("Still here."));
    let out = run(env.chat(&["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Still here.\n");
    let err = stderr(&out);
    let failures: Vec<&str> = err.lines().filter(|l| l.contains("broken")).collect();
    assert_eq!(failures.len(), 1, "{err}");
    assert!(
        failures[0].starts_with("mcp: broken failed: ")
            && failures[0].contains("oxiscope-no-such-mcp-server"),
        "{err}"
    );
    assert!(
        !tool_names(&env, 0).iter().any(|n| n.starts_with("mcp__")),
        "{:?}",
        tool_names(&env, 0)
    );
}

#[test]
fn a_config_error_stops_chat_and_mcp_list_naming_the_server() {
    let env = ChatEnv::new();
    write_config(
        &env,
        "[mcp_servers.remote]\nurl = \"https://example.invalid/mcp\"\n\
         headers = { Authorization = \"Bearer ${OXISCOPE_TEST_UNSET_TOKEN}\" }\n",
    );
    for out in [
        run(env.chat(&["-p", "hi"])),
        run(env.bare(&["mcp", "list"])),
    ] {
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("remote") && err.contains("OXISCOPE_TEST_UNSET_TOKEN is not set"),
            "{err}"
        );
        assert!(stdout(&out).is_empty());
    }
    assert!(env.requests().is_empty());

    write_config(
        &env,
        "[mcp_servers.both]\ncommand = \"x\"\nurl = \"http://h/mcp\"\n",
    );
    let out = run(env.bare(&["mcp", "list"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("`both`"), "{}", stderr(&out));
}

#[test]
fn mcp_list_shows_a_good_a_bad_and_a_disabled_server() {
    let script = require_everything!();
    let env = ChatEnv::new();
    write_config(
        &env,
        &format!(
            "[mcp_servers.good]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\
             enabled_tools = [\"echo\", \"get-sum\"]\n\
             [mcp_servers.bad]\ncommand = \"oxiscope-no-such-mcp-server\"\n\
             [mcp_servers.off]\ncommand = \"node\"\nenabled = false\n",
            quoted(&script)
        ),
    );
    let out = run(env.bare(&["mcp", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let listing = stdout(&out);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    assert!(
        lines[0].starts_with("bad (stdio): failed: ")
            && lines[0].contains("oxiscope-no-such-mcp-server"),
        "{listing}"
    );
    assert_eq!(lines[1], "good (stdio): connected, 2 tools: echo, get-sum");
    assert_eq!(lines[2], "off (stdio): disabled");
    // The failure is said once, in the listing.
    assert!(
        !stderr(&out).contains("oxiscope-no-such"),
        "{}",
        stderr(&out)
    );

    let out = run(env.bare(&[
        "mcp",
        "list",
        "--json",
        "--mcp",
        "extra=https://127.0.0.1:9/mcp",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let summary: Vec<(String, String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["transport"].as_str().unwrap().to_owned(),
                r["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("bad", "stdio", "failed"),
        ("good", "stdio", "connected"),
        ("off", "stdio", "disabled"),
        ("extra", "http", "failed"),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(summary, expected);
    assert_eq!(rows[1]["tools"], serde_json::json!(["echo", "get-sum"]));
    assert!(
        rows[0]["error"]
            .as_str()
            .unwrap()
            .contains("oxiscope-no-such")
    );
}

#[test]
fn mcp_list_without_servers_says_how_to_add_them() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["mcp", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("[mcp_servers.NAME]"),
        "{}",
        stdout(&out)
    );
    let out = run(env.bare(&["mcp", "list", "--json"]));
    assert_eq!(stdout(&out).trim(), "[]");
}

#[test]
fn skills_from_a_flag_are_offered_and_readable_and_bad_ones_warn() {
    let env = ChatEnv::new();
    let skills = env.root.path().join("skills");
    let deploy = skills.join("deploy");
    std::fs::create_dir_all(&deploy).unwrap();
    std::fs::write(
        deploy.join("SKILL.md"),
        "---\nname: deploy-app\ndescription: How to deploy the app.\n---\nRun make deploy-7731.\n",
    )
    .unwrap();
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(skills.join("broken").join("SKILL.md"), "no front matter\n").unwrap();

    env.answer(&call(
        "call_1",
        "Skill",
        &serde_json::json!({"skill_name": "deploy-app"}),
    ));
    env.answer(&text("I know how to deploy."));
    let skills_arg = skills.display().to_string();
    // The viewer is read-only: -p (dont-ask) runs it without a rule.
    let out = run(env.chat(&["-p", "deploy it", "--skills", &skills_arg]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "I know how to deploy.\n");
    assert!(tool_names(&env, 0).contains(&"Skill".to_owned()));
    let system = env.messages(0)[0]["content"].to_string();
    assert!(
        system.contains("deploy-app") && system.contains("How to deploy the app."),
        "{system}"
    );
    let results = tool_results(&env, 1);
    assert!(
        results.iter().any(|r| r.contains("make deploy-7731")),
        "{results:?}"
    );
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("broken")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].starts_with("warning: skill "), "{err}");
}

#[test]
fn skills_from_the_config_file_are_offered() {
    let env = ChatEnv::new();
    let skill = env.config().join("my-skills").join("review");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: code-review\ndescription: Review a change.\n---\nLook twice.\n",
    )
    .unwrap();
    write_config(&env, "[skills]\npaths = [\"my-skills\"]\n");
    env.answer(&text("Ok."));
    let out = run(env.chat(&["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let system = env.messages(0)[0]["content"].to_string();
    assert!(system.contains("code-review"), "{system}");
    assert!(tool_names(&env, 0).contains(&"Skill".to_owned()));
}

/// server-everything over streamable HTTP on a free loopback port; killed
/// on drop.
struct HttpEverything {
    child: std::process::Child,
    port: u16,
}

impl HttpEverything {
    fn start(script: &std::path::Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Dropped (killed and waited for) on every path from here.
        let server = Self { child, port };
        for _ in 0..400 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("server-everything did not listen on {port}");
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_http_server_from_the_config_file_is_listed_and_its_tool_reaches_the_model() {
    let script = require_everything!();
    let server = HttpEverything::start(&script);
    let env = ChatEnv::new();
    write_config(
        &env,
        "[mcp_servers.everything]\nurl = \"http://127.0.0.1:${EVERYTHING_PORT}/mcp\"\n\
         headers = { X-Test = \"${EVERYTHING_PORT}\" }\n",
    );
    let port = server.port.to_string();
    let mut list = env.bare(&["mcp", "list"]);
    list.env("EVERYTHING_PORT", &port);
    let out = run(list);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("everything (http): connected, ") && stdout(&out).contains("echo"),
        "{}",
        stdout(&out)
    );

    env.answer(&call(
        "call_1",
        "mcp__everything__echo",
        &serde_json::json!({"message": "over-http"}),
    ));
    env.answer(&text("Done."));
    let mut chat = env.chat(&["-p", "echo", "--allow", "mcp__everything__echo"]);
    chat.env("EVERYTHING_PORT", &port);
    let out = run(chat);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\n");
    let results = tool_results(&env, 1);
    assert!(
        results.iter().any(|r| r.contains("Echo: over-http")),
        "{results:?}"
    );
}
