//! `oxiscope sessions`: the sessions saved by `oxiscope chat --session`.
#![allow(clippy::print_stdout)]

use std::io::Write as _;
use std::process::ExitCode;

use clap::Subcommand;

use super::chat::session::{SessionStore, transcript};
use super::chat::settings;

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List saved sessions: name, messages, whether a reply waits, path
    /// (one tab-separated line each; "no sessions" on stderr when empty).
    List,
    /// Print a saved session: its mode and size, then the conversation
    /// (`--json`: the whole agent state as JSON).
    Show {
        /// The session name.
        name: String,
        /// The agent state as JSON (AgentScope's `AgentState`).
        #[arg(long)]
        json: bool,
    },
    /// Delete a saved session.
    Rm {
        /// The session name.
        name: String,
    },
}

pub(crate) fn run(command: &SessionsCommand) -> anyhow::Result<ExitCode> {
    let store = SessionStore::new(&settings::data_dir()?);
    match command {
        SessionsCommand::List => {
            let sessions = store.list()?;
            if sessions.is_empty() {
                eprintln!("no sessions");
            }
            for info in sessions {
                let summary = match store.load(&info.name) {
                    Ok(Some(state)) => {
                        let waiting = if state.is_parked() { ", waiting" } else { "" };
                        format!("{} messages{waiting}", state.context.len())
                    }
                    Ok(None) => "gone".to_owned(),
                    Err(_) => "unreadable".to_owned(),
                };
                println!("{}\t{summary}\t{}", info.name, info.path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        SessionsCommand::Show { name, json } => match store.load(name)? {
            Some(state) => {
                let text = if *json {
                    format!("{}\n", serde_json::to_string_pretty(&state)?)
                } else {
                    let mode = state.permission_context.mode.as_str().replace('_', "-");
                    let waiting = if state.is_parked() {
                        ", a reply waits for confirmation"
                    } else {
                        ""
                    };
                    format!(
                        "session {name}: {} messages, mode {mode}{waiting}\n\n{}",
                        state.context.len(),
                        transcript(&state.context)
                    )
                };
                print_all(&text)?;
                Ok(ExitCode::SUCCESS)
            }
            None => {
                eprintln!("no session named {name:?}");
                Ok(ExitCode::from(1))
            }
        },
        SessionsCommand::Rm { name } => {
            if store.remove(name)? {
                println!("removed {name}");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("no session named {name:?}");
                Ok(ExitCode::from(1))
            }
        }
    }
}

/// Writes `text` to stdout; a reader that went away (`| head -1`) is not
/// an error.
fn print_all(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
