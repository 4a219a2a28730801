//! The interactive console: the `user>` prompt with line editing and
//! persisted history, live rendering, per-call confirmations, Ctrl+C.
#![allow(clippy::print_stdout)]

use std::io::{IsTerminal as _, Stdout, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use oxiscope_agent::pipeline::{GoalPipeline, PipelineProtocol};
use oxiscope_agent::{Agent, Awaiting, ReplyInput};
use oxiscope_message::{
    AgentEvent, ConfirmResult, Msg, ReplyEnding, ReplyFinishedReason, ReplyOutcome,
    RequireUserConfirmEvent, ToolCallBlock, ToolCallState, UserConfirmResultEvent,
    UserInterruptEvent,
};
use oxiscope_permission::{PermissionRule, format_rule};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use tokio::runtime::Runtime;

use super::drive::drive;
use super::mcp_start::StatusSink;
use super::project;
use super::provider::ModelSettings;
use super::session::{Session, last_exchange, transcript};
use super::setup::AgentKit;
use super::slash::{self, Next, Usage};
use super::spinner::Spinner;
use oxiscope::render::{ConsoleRenderer, Verbosity};

/// The user's name on their messages.
const USER: &str = "user";

/// What the user answered at a confirmation prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Once,
    Always,
    Deny,
    Interrupt,
}

/// The interactive loop and what it needs.
pub(crate) struct Console {
    pub(crate) agent: Agent,
    /// With `--goal-verifier`: the pipeline whose executor is `agent`;
    /// replies go through it.
    pub(crate) pipeline: Option<GoalPipeline>,
    pub(crate) renderer: ConsoleRenderer<Stdout>,
    pub(crate) session: Option<Session>,
    pub(crate) history: Option<PathBuf>,
    /// Whether a reply ended with an error (with piped input, the exit
    /// code says so).
    pub(crate) failed: bool,
    /// Where the MCP servers starting in the background report: their
    /// lines are printed before each prompt and when a message is sent.
    pub(crate) mcp_status: StatusSink,
    /// What `/model` builds a new agent from, and the model in use.
    pub(crate) kit: AgentKit,
    pub(crate) model: ModelSettings,
    /// The tokens of this console's model calls (`/cost`).
    pub(crate) usage: Usage,
    /// The working directory, whose settings file keeps "always allow"
    /// rules.
    pub(crate) workdir: PathBuf,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console").finish_non_exhaustive()
    }
}

impl Console {
    /// Runs until `exit`, `quit` or Ctrl+D. Without a terminal on stdin,
    /// exits with 1 when a reply failed.
    pub(crate) fn run(mut self, rt: &Runtime) -> anyhow::Result<ExitCode> {
        let mut editor = DefaultEditor::new()?;
        // From now on a server's status line waits for the next prompt.
        self.mcp_status.hold();
        if let Some(path) = &self.history {
            // A missing or unreadable history is not worth stopping for.
            let _ = editor.load_history(path);
        }
        self.show_resumed(rt);
        self.resume_parked(rt, &mut editor)?;
        loop {
            self.mcp_status.flush();
            let line = match editor.readline(&format!("{USER}> ")) {
                Ok(line) => line,
                Err(ReadlineError::Interrupted) => {
                    println!("(type exit or press Ctrl+D to leave)");
                    continue;
                }
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(e.into()),
            };
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if matches!(text, "exit" | "quit") {
                break;
            }
            let _ = editor.add_history_entry(text);
            if let Some(path) = &self.history {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let _ = editor.save_history(path);
            }
            match slash::parse(text) {
                Some(Ok(command)) => {
                    if self.slash(rt, command)? == Next::Leave {
                        break;
                    }
                    continue;
                }
                Some(Err(why)) => {
                    println!("{why}");
                    continue;
                }
                None => {}
            }
            self.mcp_status.flush();
            self.renderer.clear();
            let input = Msg::user(USER, text)?;
            self.reply(rt, &mut editor, input.into())?;
        }
        self.mcp_status.flush();
        if self.failed && !std::io::stdin().is_terminal() {
            return Ok(ExitCode::from(1));
        }
        Ok(ExitCode::SUCCESS)
    }

    /// A resumed session: how long it is and its last exchange, so the
    /// user sees where the conversation stands.
    fn show_resumed(&self, rt: &Runtime) {
        let Some(session) = &self.session else { return };
        let state = rt.block_on(self.agent.state());
        if state.context.is_empty() {
            return;
        }
        println!(
            "(resuming session {}: {} messages; the last exchange)",
            session.name,
            state.context.len()
        );
        print!("{}", transcript(last_exchange(&state.context)));
    }

    /// A resumed session whose reply waits for the user: ask now.
    fn resume_parked(&mut self, rt: &Runtime, editor: &mut DefaultEditor) -> anyhow::Result<()> {
        let state = rt.block_on(self.agent.state());
        let Some(reply) = state.reply_msg().filter(|_| state.is_parked()) else {
            return Ok(());
        };
        let reply_id = reply.id.to_string();
        self.renderer.resume(reply.clone());
        match state.awaiting() {
            Some(Awaiting::Permission) => {
                let calls: Vec<ToolCallBlock> = state
                    .pending_tool_calls()
                    .into_iter()
                    .filter(|c| c.state == ToolCallState::Asking)
                    .cloned()
                    .collect();
                println!("The saved session has a reply waiting for your confirmation.");
                let event = RequireUserConfirmEvent::new(reply_id, calls);
                self.renderer.render(&event.clone().into())?;
                let next = self.confirm(editor, &event)?;
                self.reply(rt, editor, next)
            }
            Some(Awaiting::ExternalResult) => {
                println!(
                    "The saved session waits for external tool results, which the console cannot run; \
                     the reply is interrupted."
                );
                self.reply(rt, editor, UserInterruptEvent::new(reply_id).into())
            }
            None => Ok(()),
        }
    }

    /// Streams a reply, answering confirmation requests until it ends; saves
    /// the session after each stream.
    fn reply(
        &mut self,
        rt: &Runtime,
        editor: &mut DefaultEditor,
        mut input: ReplyInput,
    ) -> anyhow::Result<()> {
        loop {
            let renderer = &mut self.renderer;
            let usage = &mut self.usage;
            let target: &dyn PipelineProtocol = match &self.pipeline {
                Some(pipeline) => pipeline,
                None => &self.agent,
            };
            // Until the reply sends more than its (silent) start.
            let debug = renderer.options().verbosity >= Verbosity::Debug;
            let mut spinner = Spinner::start();
            let ending = rt.block_on(drive(target, input, |e| {
                let silent = matches!(e, AgentEvent::ReplyStart(_) | AgentEvent::ModelCallStart(_));
                if debug || !silent {
                    spinner.stop();
                }
                usage.add(e);
                renderer.render(e)
            }));
            spinner.stop();
            self.save(rt)?;
            match ending? {
                Some(ReplyEnding::Confirm(event)) => input = self.confirm(editor, &event)?,
                Some(ReplyEnding::External(event)) => {
                    println!("The reply waits for external tool results; it is interrupted.");
                    input = UserInterruptEvent::new(event.reply_id).into();
                }
                ending => {
                    let outcome = ending.map(|e| e.outcome());
                    self.failed |=
                        outcome == Some(ReplyOutcome::Finished(ReplyFinishedReason::Error));
                    if let Some(pipeline) = &self.pipeline {
                        let progress = rt.block_on(pipeline.progress());
                        if let Some(line) = super::goal::outcome_line(&progress) {
                            println!("{line}");
                        }
                    }
                    return Ok(());
                }
            }
        }
    }

    /// Asks about each call; Ctrl+C or Ctrl+D interrupts the reply.
    fn confirm(
        &mut self,
        editor: &mut DefaultEditor,
        event: &RequireUserConfirmEvent,
    ) -> anyhow::Result<ReplyInput> {
        let mut results = Vec::new();
        for call in &event.tool_calls {
            let answer = ask(editor, call)?;
            let (confirmed, rules) = match answer {
                Answer::Interrupt => {
                    return Ok(UserInterruptEvent::new(event.reply_id.clone()).into());
                }
                Answer::Once => (true, None),
                Answer::Always => {
                    self.keep_rules(&call.suggested_rules);
                    (true, Some(call.suggested_rules.clone()))
                }
                Answer::Deny => (false, None),
            };
            results.push(ConfirmResult {
                confirmed,
                tool_call: call.clone(),
                rules,
            });
        }
        Ok(UserConfirmResultEvent::new(event.reply_id.clone(), results).into())
    }

    /// Saves "always allow" rules in the project settings file, so later
    /// consoles in this directory have them; says where, in one line. A
    /// failure is reported, and the rules still hold for this console.
    fn keep_rules(&self, rules: &[PermissionRule]) {
        if rules.is_empty() {
            return;
        }
        let texts: Vec<String> = rules.iter().map(format_rule).collect();
        match project::add_allow(&self.workdir, &texts) {
            Ok(path) => println!("(saved {} to {})", texts.join(", "), path.display()),
            Err(e) => println!("(the rule holds for this console only: {e:#})"),
        }
    }

    /// Saves the agent state in the session, if there is one.
    pub(crate) fn save(&self, rt: &Runtime) -> anyhow::Result<()> {
        if let Some(session) = &self.session {
            let state = rt.block_on(self.agent.state());
            session.save(&state)?;
        }
        Ok(())
    }
}

/// The one line that asks about a call: the choices, the rule `a` adds,
/// and `N` (the default) to deny.
fn prompt_line(title: &str, suggested: &[PermissionRule]) -> String {
    let always = if suggested.is_empty() {
        "[a] allow (no rule to remember)".to_owned()
    } else {
        let rules: Vec<String> = suggested.iter().map(format_rule).collect();
        format!("[a] always allow {}", rules.join(", "))
    };
    format!("Allow {title}?  [y] once  {always}  [N] deny: ")
}

#[cfg(test)]
#[path = "console_prompt_tests.rs"]
mod prompt_tests;

/// One confirmation prompt.
fn ask(editor: &mut DefaultEditor, call: &ToolCallBlock) -> anyhow::Result<Answer> {
    let title = oxiscope::render::tool_call_title(call);
    std::io::stdout().flush()?;
    match editor.readline(&prompt_line(&title, &call.suggested_rules)) {
        Ok(line) => Ok(match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Answer::Once,
            "a" | "always" => Answer::Always,
            _ => Answer::Deny,
        }),
        Err(ReadlineError::Interrupted | ReadlineError::Eof) => Ok(Answer::Interrupt),
        Err(e) => Err(e.into()),
    }
}
