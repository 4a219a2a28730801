//! `oxiscope chat -p PROMPT`: one reply, printed for scripts and pipes.
#![allow(clippy::print_stdout)]

use std::io::{IsTerminal as _, Read as _, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::ValueEnum;
use oxiscope::render::{ConsoleRenderer, RenderOptions, Verbosity};
use oxiscope_agent::Agent;
use oxiscope_message::{
    ConfirmResult, ContentBlock, Msg, ReplyEnding, ReplyFinishedReason, RequireUserConfirmEvent,
    UserConfirmResultEvent, UserInterruptEvent,
};
use oxiscope_permission::format_rule;
use tokio::runtime::Runtime;

use super::drive::drive;
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

/// One `-p` run and what it prints.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneShot<'a> {
    /// What stdout gets.
    pub(crate) output: Output,
    /// The console settings; at debug verbosity the text output is
    /// accompanied by the whole rendering (tool calls, results, hints) on
    /// stderr.
    pub(crate) render: &'a RenderOptions,
    /// Where the state is saved, if anywhere.
    pub(crate) session: Option<&'a Session>,
    /// No mode was chosen: each call the mode asks about is denied, said
    /// on stderr, and the reply goes on.
    pub(crate) deny_asks: bool,
}

impl OneShot<'_> {
    /// Runs one reply to `prompt` (`-` reads the prompt from stdin).
    pub(crate) fn run(self, rt: &Runtime, agent: &Agent, prompt: &str) -> anyhow::Result<ExitCode> {
        run(rt, agent, prompt, self)
    }
}

fn run(
    rt: &Runtime,
    agent: &Agent,
    prompt: &str,
    options: OneShot<'_>,
) -> anyhow::Result<ExitCode> {
    let OneShot {
        output,
        render,
        session,
        deny_asks,
    } = options;
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

    // The renderer rebuilds the message. It writes nothing to stdout; in
    // text mode at debug verbosity it shows the whole reply on stderr.
    let mut rebuilt = if output == Output::Text && render.verbosity >= Verbosity::Debug {
        let color = render.color && std::io::stderr().is_terminal();
        let options = render.clone().with_color(color);
        ConsoleRenderer::new(Box::new(std::io::stderr()) as Box<dyn Write>, options)
    } else {
        let quiet = RenderOptions::plain().with_verbosity(Verbosity::Quiet);
        ConsoleRenderer::new(Box::new(std::io::sink()) as Box<dyn Write>, quiet)
    };
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
    while deny_asks && let Some(ReplyEnding::Confirm(event)) = &ending {
        let denial = deny_all(event);
        ending = rt.block_on(drive(agent, denial.into(), &mut on_event))?;
    }
    let parked = ending
        .as_ref()
        .filter(|e| e.outcome().is_parked())
        .map(|e| e.reply_id().to_owned());
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
            // A failed reply with no text prints nothing on stdout, not an empty line.
            if let Some(text) = msg.as_ref().map(|m| m.text("\n")).filter(|t| !t.is_empty()) {
                println!("{text}");
            }
        }
        Output::Json => {
            if let Some(msg) = &msg {
                println!("{}", serde_json::to_string(&without_hints(msg))?);
            }
        }
        Output::Events => {}
    }
    let reason = match &ending {
        Some(ReplyEnding::Finished(end)) => Some(end.finished_reason),
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

/// Denies every call of `event`, one line on stderr each: what was denied,
/// why, and how to allow it.
fn deny_all(event: &RequireUserConfirmEvent) -> UserConfirmResultEvent {
    let mut results = Vec::new();
    for call in &event.tool_calls {
        eprintln!("{}", denial_line(call));
        results.push(ConfirmResult {
            confirmed: false,
            tool_call: call.clone(),
            rules: None,
        });
    }
    UserConfirmResultEvent::new(event.reply_id.clone(), results)
}

/// `denied: Bash(rm a.txt) ...`: the call, that `-p` denies what the
/// console asks about, and the flags that would allow it.
fn denial_line(call: &oxiscope_message::ToolCallBlock) -> String {
    let title = oxiscope::render::tool_call_title(call);
    let allow = match call.suggested_rules.first() {
        Some(rule) => format!("--allow '{}' or ", format_rule(rule)),
        None => String::new(),
    };
    format!("denied: {title} (the console would ask; -p denies that: allow it with {allow}--mode)")
}

/// The reply without its hint blocks: notes the agent injected for the
/// model (the runtime state, reminders), not part of the answer.
fn without_hints(msg: &Msg) -> Msg {
    let mut msg = msg.clone();
    msg.content.retain(|b| !matches!(b, ContentBlock::Hint(_)));
    msg
}
