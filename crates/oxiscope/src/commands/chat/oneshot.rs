//! `oxiscope chat -p PROMPT`: one reply, printed for scripts and pipes.
#![allow(clippy::print_stdout)]

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::ValueEnum;
use oxiscope::render::{ConsoleRenderer, RenderOptions, Verbosity};
use oxiscope_agent::Agent;
use oxiscope_message::{Msg, ReplyFinishedReason, UserInterruptEvent};
use tokio::runtime::Runtime;

use super::drive::{Ending, drive};
use super::session::Session;

/// What `-p` prints on stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    /// The answer's text.
    #[default]
    Text,
    /// The reply message as one JSON object (AgentScope's `Msg`).
    Json,
    /// Every event as a JSON line, as it arrives.
    Events,
}

/// Exit code of a reply parked for a confirmation in a saved session.
const PARKED: u8 = 3;

/// Runs one reply to `prompt` (`-` reads the prompt from stdin).
pub(crate) fn run(
    rt: &Runtime,
    agent: &Agent,
    prompt: &str,
    output: Output,
    session: Option<&Session>,
) -> anyhow::Result<ExitCode> {
    let text = if prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the prompt from stdin")?;
        text
    } else {
        prompt.to_owned()
    };
    anyhow::ensure!(!text.trim().is_empty(), "the prompt is empty");
    let state = rt.block_on(agent.state());
    anyhow::ensure!(
        !state.is_parked(),
        "the session has a reply waiting for confirmation: resume it with `oxiscope chat --session NAME`"
    );

    // The renderer rebuilds the message; it prints nothing on its own.
    let mut rebuilt = ConsoleRenderer::new(
        std::io::sink(),
        RenderOptions::plain().with_verbosity(Verbosity::Quiet),
    );
    let mut stdout = std::io::stdout();
    let mut on_event = |e: &oxiscope_message::AgentEvent| -> std::io::Result<()> {
        rebuilt.render(e)?;
        if output == Output::Events {
            let line = serde_json::to_string(e).map_err(std::io::Error::other)?;
            writeln!(stdout, "{line}")?;
            stdout.flush()?;
        }
        Ok(())
    };
    let input = Msg::user("user", text)?;
    let mut ending = rt.block_on(drive(agent, input.into(), &mut on_event))?;
    let parked = match &ending {
        Ending::Confirm(e) => Some(e.reply_id.clone()),
        Ending::External(e) => Some(e.reply_id.clone()),
        Ending::Finished(_) => None,
    };
    if let Some(reply_id) = parked {
        if let Some(session) = session {
            session.save(&rt.block_on(agent.state()))?;
            eprintln!(
                "The reply waits for a confirmation; answer it with `oxiscope chat --session {}`.",
                session.name
            );
            return Ok(ExitCode::from(PARKED));
        }
        eprintln!(
            "The reply needs a confirmation, which -p cannot ask for (see --mode); it is interrupted."
        );
        ending = rt.block_on(drive(
            agent,
            UserInterruptEvent::new(reply_id).into(),
            &mut on_event,
        ))?;
    }
    if let Some(session) = session {
        session.save(&rt.block_on(agent.state()))?;
    }
    let msg = rebuilt.last_msg().cloned();
    match output {
        Output::Text => {
            if let Some(msg) = &msg {
                let text = msg.text("\n");
                println!("{text}");
            }
        }
        Output::Json => {
            if let Some(msg) = &msg {
                println!("{}", serde_json::to_string(msg)?);
            }
        }
        Output::Events => {}
    }
    let reason = match &ending {
        Ending::Finished(Some(end)) => Some(end.finished_reason),
        _ => None,
    };
    if let Some(ReplyFinishedReason::Error) = reason {
        let message = msg
            .as_ref()
            .and_then(|m| m.error.as_ref())
            .map_or("the reply failed", |e| e.message.as_str());
        eprintln!("error: {message}");
    }
    Ok(if reason == Some(ReplyFinishedReason::Completed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
