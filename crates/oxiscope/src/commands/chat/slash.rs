//! Slash commands at the console's prompt: `/help`, `/clear`, `/model`,
//! `/mode`, `/compact`, `/cost`, `/session` (and `/exit`). A line is a
//! command when it starts with `/` and a word; anything else (`/etc/hosts
//! is odd`) is a message.
#![allow(clippy::print_stdout)]

use oxiscope_agent::{AgentError, AgentState, ContextConfig, ContextError};
use oxiscope_message::AgentEvent;
use oxiscope_permission::PermissionMode;
use tokio::runtime::Runtime;

use super::console::Console;

/// One command typed at the prompt, with its argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slash {
    Help,
    Clear,
    Model(Option<String>),
    Mode(Option<String>),
    Compact(Option<String>),
    Cost,
    Session,
    Exit,
}

/// The commands, their arguments and what they do: `/help` prints this
/// table and [`parse`] reads its names.
const COMMANDS: &[(&str, &str, &str)] = &[
    ("help", "", "this list"),
    (
        "clear",
        "",
        "start a new conversation (the mode and accepted rules stay)",
    ),
    (
        "model",
        " [NAME]",
        "the model in use, or switch to NAME (same provider and key)",
    ),
    (
        "mode",
        " [MODE]",
        "the permission mode, or switch: default, accept-edits, explore, bypass, dont-ask",
    ),
    (
        "compact",
        " [FOCUS]",
        "summarise the conversation so far to free the context (FOCUS: what to keep)",
    ),
    ("cost", "", "tokens used by this console's model calls"),
    (
        "session",
        "",
        "the saved session: its name, file and messages",
    ),
    ("exit", "", "leave (also `exit`, `quit`, Ctrl+D)"),
];

/// The command on `line`: `None` when the line is a message,
/// `Some(Err(why))` for an unknown command.
pub(crate) fn parse(line: &str) -> Option<Result<Slash, String>> {
    let rest = line.trim().strip_prefix('/')?;
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((name, arg)) => (name, Some(arg.trim().to_owned()).filter(|a| !a.is_empty())),
        None => (rest, None),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    Some(Ok(match name.to_ascii_lowercase().as_str() {
        "help" => Slash::Help,
        "clear" => Slash::Clear,
        "model" => Slash::Model(arg),
        "mode" => Slash::Mode(arg),
        "compact" => Slash::Compact(arg),
        "cost" => Slash::Cost,
        "session" => Slash::Session,
        "exit" | "quit" => Slash::Exit,
        _ => return Some(Err(format!("unknown command /{name} (/help lists them)"))),
    }))
}

/// The `/help` text.
pub(crate) fn help() -> String {
    let width = COMMANDS
        .iter()
        .map(|(name, arg, _)| name.len() + arg.len() + 1)
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (name, arg, what) in COMMANDS {
        let usage = format!("/{name}{arg}");
        out.push_str(&format!("  {usage:<width$}  {what}\n"));
    }
    out
}

/// The token usage of the model calls seen by the console.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    calls: u64,
    input: u64,
    output: u64,
    cached: u64,
}

impl Usage {
    /// Counts `event` when it ends a model call.
    pub(crate) fn add(&mut self, event: &AgentEvent) {
        if let AgentEvent::ModelCallEnd(e) = event {
            self.calls += 1;
            self.input = self.input.saturating_add(e.input_tokens);
            self.output = self.output.saturating_add(e.output_tokens);
            self.cached = self.cached.saturating_add(e.cache_input_tokens);
        }
    }

    /// `2 model calls · 40 tokens in (0 cached) · 10 out`.
    pub(crate) fn line(&self) -> String {
        let plural = if self.calls == 1 { "" } else { "s" };
        format!(
            "{} model call{plural} · {} tokens in ({} cached) · {} out",
            self.calls, self.input, self.cached, self.output
        )
    }
}

/// What a command asks of the prompt loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Prompt,
    Leave,
}

impl Console {
    /// Runs one slash command; its output goes to stdout.
    pub(crate) fn slash(&mut self, rt: &Runtime, command: Slash) -> anyhow::Result<Next> {
        match command {
            Slash::Help => print!("{}", help()),
            Slash::Clear => {
                let old = rt.block_on(self.agent.state());
                let fresh = AgentState {
                    permission_context: old.permission_context,
                    ..AgentState::default()
                };
                rt.block_on(self.agent.set_state(fresh));
                self.renderer.clear();
                self.save(rt)?;
                println!(
                    "(a new conversation: {} messages left behind)",
                    old.context.len()
                );
            }
            Slash::Model(None) => println!(
                "model {} of {} at {}",
                self.model.model,
                self.model.provider,
                self.model.endpoint()
            ),
            Slash::Model(Some(name)) => self.switch_model(rt, name)?,
            Slash::Mode(None) => {
                let mode = rt.block_on(self.agent.state()).permission_context.mode;
                println!("mode {}", kebab(mode));
            }
            Slash::Mode(Some(text)) => match text.parse::<PermissionMode>() {
                Ok(mode) => {
                    let mut state = rt.block_on(self.agent.state());
                    state.permission_context.mode = mode;
                    rt.block_on(self.agent.set_state(state));
                    self.save(rt)?;
                    println!("mode {}", kebab(mode));
                }
                Err(e) => println!("{e}"),
            },
            Slash::Compact(focus) => self.compact(rt, focus)?,
            Slash::Cost => println!("{}", self.usage.line()),
            Slash::Session => match &self.session {
                Some(session) => {
                    let messages = rt.block_on(self.agent.state()).context.len();
                    let path = session.store.path(&session.name)?;
                    println!(
                        "session {} · {messages} messages · {}",
                        session.name,
                        path.display()
                    );
                }
                None => println!("no session: start with --session NAME to save the conversation"),
            },
            Slash::Exit => return Ok(Next::Leave),
        }
        Ok(Next::Prompt)
    }

    /// `/model NAME`: the same provider, endpoint and key with another
    /// model; the conversation goes on with it.
    fn switch_model(&mut self, rt: &Runtime, name: String) -> anyhow::Result<()> {
        if self.pipeline.is_some() {
            println!("the model cannot change during a goal run (--goal-verifier)");
            return Ok(());
        }
        let mut settings = self.model.clone();
        settings.model = name;
        let model = {
            let _entered = rt.enter();
            match settings.build() {
                Ok(model) => model,
                Err(e) => {
                    println!("{e:#}");
                    return Ok(());
                }
            }
        };
        let state = rt.block_on(self.agent.state());
        self.agent = self.kit.agent(model, state)?;
        println!("model {} of {}", settings.model, settings.provider);
        self.model = settings;
        Ok(())
    }

    /// `/compact`: summarises all but the newest messages now, whatever
    /// the context's size.
    fn compact(&mut self, rt: &Runtime, focus: Option<String>) -> anyhow::Result<()> {
        let size = self.agent.context_size().max(1) as f64;
        // The threshold must hold the system prompt and tools; the first
        // try is tiny and the engine says how much they take.
        let mut result = rt.block_on(
            self.agent
                .compress_context(Some(forced(MIN_RATIO)), focus.clone()),
        );
        if let Err(AgentError::Context(ContextError::SystemPromptTooLarge { tokens, .. })) = &result
        {
            // Just above them (the engine rounds the threshold down).
            let ratio = ((*tokens as f64 + 2.0) / size).min(0.9);
            result = rt.block_on(self.agent.compress_context(Some(forced(ratio)), focus));
        }
        match result {
            Ok(outcome) if outcome.compressed => {
                let how = if outcome.truncated.is_some() {
                    "dropped (no summary could be made)"
                } else {
                    "summarised"
                };
                println!(
                    "{} messages {how}: {} → {} tokens",
                    outcome.messages, outcome.tokens_before, outcome.tokens_after
                );
                self.save(rt)?;
            }
            Ok(_) => println!("nothing to compact yet"),
            Err(e) => println!("cannot compact: {e}"),
        }
        Ok(())
    }
}

/// The smallest share of the context a forced compaction starts from.
const MIN_RATIO: f64 = 0.000_1;

/// A context config that compresses above `ratio` of the context and keeps
/// almost nothing verbatim.
fn forced(ratio: f64) -> ContextConfig {
    ContextConfig {
        trigger_ratio: ratio,
        reserve_ratio: MIN_RATIO / 2.0,
        context_buffer_ratio: 0.0,
        ..ContextConfig::default()
    }
}

fn kebab(mode: PermissionMode) -> String {
    mode.as_str().replace('_', "-")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_slash_and_a_word_is_a_command_and_a_path_is_a_message() {
        assert_eq!(parse("/help"), Some(Ok(Slash::Help)));
        assert_eq!(
            parse("  /MODE  accept-edits "),
            Some(Ok(Slash::Mode(Some("accept-edits".into()))))
        );
        assert_eq!(parse("/model"), Some(Ok(Slash::Model(None))));
        assert_eq!(parse("/etc/hosts looks odd"), None);
        assert_eq!(parse("/"), None);
        assert_eq!(parse("hello /help"), None);
        assert_eq!(
            parse("/nope"),
            Some(Err("unknown command /nope (/help lists them)".into()))
        );
    }

    #[test]
    fn help_lists_every_command_once() {
        let text = help();
        for (name, arg, _) in COMMANDS {
            let usage = format!("/{name}{arg} ");
            let lines = text.lines().filter(|l| l.trim_start().starts_with(&usage));
            assert_eq!(lines.count(), 1, "{text}");
        }
    }

    #[test]
    fn usage_adds_up_model_calls() {
        let mut usage = Usage::default();
        let end = |i, o| {
            AgentEvent::from(oxiscope_message::ModelCallEndEvent::new(
                "r".to_owned(),
                i,
                o,
                3,
                0,
                oxiscope_message::FinishedReason::Completed,
            ))
        };
        usage.add(&end(20, 5));
        usage.add(&end(30, 10));
        assert_eq!(
            usage.line(),
            "2 model calls · 50 tokens in (6 cached) · 15 out"
        );
    }
}
