//! MCP servers starting behind the console's prompt, in a pseudo-terminal.

use std::time::{Duration, Instant};

use rexpect::session::spawn_command;

use super::chat_env::{ChatEnv, text};
use super::chat_mcp::{quoted, require_everything, tool_names, write_config};

#[test]
fn the_prompt_does_not_wait_for_a_slow_server_and_each_server_reports_once() {
    let script = require_everything!();
    let env = ChatEnv::new();
    write_config(
        &env,
        &format!(
            "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\
             [mcp_servers.broken]\ncommand = \"oxiscope-no-such-mcp-server\"\n\
             [mcp_servers.slow]\ncommand = \"sleep\"\nargs = [\"60\"]\nstartup_timeout = 60\n",
            quoted(&script)
        ),
    );
    env.answer(&text("Tools noted."));
    let started = Instant::now();
    let mut p = spawn_command(env.chat(&[]), Some(30_000)).unwrap();
    let mut transcript = p.exp_string("user> ").unwrap();
    // The slow server (a minute) does not hold the prompt back.
    assert!(started.elapsed() < Duration::from_secs(20));
    // Time for the other two to report (the first prompt waits a second at
    // most; a later report is printed when the next message is sent).
    std::thread::sleep(Duration::from_secs(4));
    p.send_line("hello").unwrap();
    transcript += &p.exp_string("Oxiscope: Tools noted.").unwrap();
    transcript += &p.exp_string("user> ").unwrap();
    p.send_control('d').unwrap();
    transcript += &p.exp_eof().unwrap();

    let reports: Vec<&str> = transcript
        .lines()
        .map(|l| l.trim_matches(['\r', ' ']))
        .filter(|l| l.starts_with("mcp: "))
        .collect();
    assert_eq!(reports.len(), 2, "{transcript}");
    let broken: Vec<&&str> = reports.iter().filter(|l| l.contains("broken")).collect();
    assert_eq!(broken.len(), 1, "{transcript}");
    assert!(
        broken[0].starts_with("mcp: broken failed: "),
        "{transcript}"
    );
    assert!(
        broken[0].contains("oxiscope-no-such-mcp-server"),
        "{transcript}"
    );
    assert!(
        reports
            .iter()
            .any(|l| l.starts_with("mcp: everything connected (")),
        "{transcript}"
    );
    let tools = tool_names(&env, 0);
    assert!(
        tools.contains(&"mcp__everything__echo".to_owned()),
        "{tools:?}"
    );
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__slow__")),
        "{tools:?}"
    );
}
