//! The console renderer: an agent's event stream as terminal text.
//!
//! [`ConsoleRenderer`] is what `oxiscope chat` prints with, and it works on
//! its own: hand it every event of one or more replies and it writes them
//! to any [`std::io::Write`] and rebuilds the reply messages. See
//! [`ConsoleRenderer`] for what each kind of content looks like, and
//! [`Verbosity`] for the three levels.

mod blocks;
mod renderer;
mod style;

use std::str::FromStr;

pub use renderer::ConsoleRenderer;

/// A tool call in one line, as the renderer prints it: `Bash(git status)`
/// (the tool and its key argument, else its input as compact JSON).
#[must_use]
pub fn tool_call_title(call: &oxiscope_message::ToolCallBlock) -> String {
    blocks::call_title(call)
}

/// `text` without the `<system-reminder>` notes the agent writes for the
/// model (what a user should see of a tool result or a stored message).
#[must_use]
pub fn without_reminders(text: &str) -> String {
    blocks::without_reminders(text)
}

/// How much the renderer shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verbosity {
    /// Only the reply text (and data placeholders) and errors.
    Quiet,
    /// Plus thinking, tool calls and results, token usage and
    /// confirmation notices.
    #[default]
    Default,
    /// Plus lifecycle events (reply start and end, model calls), hints
    /// (notes for the model, such as the runtime state), tool result
    /// metadata, and one line per event that has no rendering.
    Debug,
}

impl Verbosity {
    /// The level's name: `quiet`, `default` or `debug`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quiet => "quiet",
            Self::Default => "default",
            Self::Debug => "debug",
        }
    }
}

/// A verbosity name that is not `quiet`, `default` or `debug`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVerbosity(pub String);

impl std::fmt::Display for UnknownVerbosity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown verbosity {:?}: expected quiet, default or debug",
            self.0
        )
    }
}

impl std::error::Error for UnknownVerbosity {}

impl FromStr for Verbosity {
    type Err = UnknownVerbosity;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "quiet" => Ok(Self::Quiet),
            "default" => Ok(Self::Default),
            "debug" => Ok(Self::Debug),
            _ => Err(UnknownVerbosity(s.to_owned())),
        }
    }
}

/// The renderer's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// How much is shown.
    pub verbosity: Verbosity,
    /// Lines of a tool result shown before the rest collapses into a hint
    /// line (`None`: everything).
    pub max_tool_lines: Option<usize>,
    /// Whether ANSI colours and dimming are used.
    pub color: bool,
}

impl Default for RenderOptions {
    /// Default verbosity, 20 lines per tool result, colour on.
    fn default() -> Self {
        Self {
            verbosity: Verbosity::Default,
            max_tool_lines: Some(20),
            color: true,
        }
    }
}

impl RenderOptions {
    /// The defaults without colour (logs, tests, pipes).
    #[must_use]
    pub fn plain() -> Self {
        Self {
            color: false,
            ..Self::default()
        }
    }

    /// The same options at another verbosity.
    #[must_use]
    pub fn with_verbosity(mut self, verbosity: Verbosity) -> Self {
        self.verbosity = verbosity;
        self
    }

    /// The same options with another tool-result line limit.
    #[must_use]
    pub fn with_max_tool_lines(mut self, max: Option<usize>) -> Self {
        self.max_tool_lines = max;
        self
    }

    /// The same options with colour on or off.
    #[must_use]
    pub fn with_color(mut self, color: bool) -> Self {
        self.color = color;
        self
    }
}
