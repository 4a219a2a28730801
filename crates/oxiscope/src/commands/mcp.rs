//! `oxiscope mcp`: the MCP servers `oxiscope chat` starts, checked.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use futures_util::future::join_all;
use serde::Serialize;

use super::chat::mcp_config::{ServerSpec, resolve_servers};
use super::chat::mcp_start::{client_for, quietly, timed_out, tools};
use super::chat::settings;

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Start each configured server once and show its transport, its state
    /// (connected, failed and why, or disabled) and its tools. Exits 0 even
    /// when a server failed; non-zero when the configuration is wrong.
    List(ListArgs),
}

/// Options of `oxiscope mcp list`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ListArgs {
    /// Print a JSON array, one object per server, for scripts.
    #[arg(long)]
    json: bool,
    /// A server to check as well (repeatable), as `oxiscope chat --mcp`.
    #[arg(long = "mcp", value_name = "NAME=COMMAND|URL")]
    mcp: Vec<String>,
    /// Start stdio servers in this directory, as `oxiscope chat -C`.
    #[arg(short = 'C', long = "cwd", value_name = "DIR")]
    cwd: Option<PathBuf>,
}

/// One server in the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Row {
    name: String,
    /// `stdio` or `http`.
    transport: &'static str,
    /// `connected`, `failed` or `disabled`.
    state: &'static str,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Its tools as the server names them (the agent sees
    /// `mcp__NAME__TOOL`).
    tools: Vec<String>,
}

pub(crate) fn run(command: &McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List(args) => list(args),
    }
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    // The listing says why a server failed; the MCP layers' own logs of
    // the same failure come only when asked for.
    if std::env::var_os("RUST_LOG").is_some_and(|v| !v.is_empty()) {
        crate::logging::init_console();
    }
    let workdir = super::chat::working_dir(args.cwd.as_deref())?;
    let config_path = settings::config_path()?;
    let file = settings::load_config(&config_path)?;
    let env = |k: &str| std::env::var(k).ok();
    let specs = resolve_servers(&file.mcp_servers, &args.mcp, &env)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let rows = rt.block_on(join_all(specs.iter().map(|s| check(s, &workdir))));
    let text = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&rows)?)
    } else if rows.is_empty() {
        format!(
            "No MCP servers are configured: add [mcp_servers.NAME] to {}, or pass --mcp.\n",
            config_path.display()
        )
    } else {
        rows.iter().map(|r| render(r) + "\n").collect()
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Starts the server of `spec`, lists its tools and stops it.
async fn check(spec: &ServerSpec, workdir: &std::path::Path) -> Row {
    let mut row = Row {
        name: spec.name().to_owned(),
        transport: spec.transport(),
        state: "disabled",
        error: None,
        tools: Vec::new(),
    };
    if !spec.enabled {
        return row;
    }
    let listed = match client_for(spec, workdir) {
        Ok(client) => {
            let listed = quietly(tokio::time::timeout(
                spec.startup_timeout,
                client.list_tools(),
            ))
            .await;
            quietly(client.close()).await;
            match listed {
                Ok(Ok(found)) => Ok(found.iter().map(|t| t.remote_name().to_owned()).collect()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(timed_out(spec)),
            }
        }
        Err(why) => Err(why),
    };
    match listed {
        Ok(tools) => {
            row.state = "connected";
            row.tools = tools;
        }
        Err(why) => {
            row.state = "failed";
            row.error = Some(why);
        }
    }
    row
}

/// `fs (stdio): connected, 2 tools: read_file, list_directory`.
fn render(row: &Row) -> String {
    let head = format!("{} ({})", row.name, row.transport);
    match (row.state, &row.error) {
        (_, Some(why)) => format!("{head}: failed: {why}"),
        ("connected", None) if row.tools.is_empty() => format!("{head}: connected, no tools"),
        ("connected", None) => format!(
            "{head}: connected, {}: {}",
            tools(row.tools.len()),
            row.tools.join(", ")
        ),
        (state, None) => format!("{head}: {state}"),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn row(state: &'static str, error: Option<&str>, tools: &[&str]) -> Row {
        Row {
            name: "fs".into(),
            transport: "stdio",
            state,
            error: error.map(str::to_owned),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
        }
    }

    #[test]
    fn each_state_renders_on_one_line() {
        assert_eq!(
            render(&row("connected", None, &["read_file", "list"])),
            "fs (stdio): connected, 2 tools: read_file, list"
        );
        assert_eq!(
            render(&row("connected", None, &[])),
            "fs (stdio): connected, no tools"
        );
        assert_eq!(
            render(&row("failed", Some("cannot start `x`"), &[])),
            "fs (stdio): failed: cannot start `x`"
        );
        assert_eq!(render(&row("disabled", None, &[])), "fs (stdio): disabled");
        let json = serde_json::to_value(row("disabled", None, &[])).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "fs", "transport": "stdio", "state": "disabled", "tools": []})
        );
    }
}
