//! `oxiscope sessions`: the sessions saved by `oxiscope chat --session`.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use clap::Subcommand;

use super::chat::session::SessionStore;
use super::chat::settings;

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List saved sessions: name, messages, whether a reply waits, path
    /// (one tab-separated line each; "no sessions" on stderr when empty).
    List,
    /// Print a saved session's agent state as JSON.
    Show {
        /// The session name.
        name: String,
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
        SessionsCommand::Show { name } => match store.load(name)? {
            Some(state) => {
                println!("{}", serde_json::to_string_pretty(&state)?);
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
