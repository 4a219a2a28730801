//! Terminal styles: ANSI escape sequences, or nothing when colour is off.

/// How text is decorated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Thinking, usage lines, hints about collapsed output.
    Dim,
    /// Tool names and speaker names.
    Bold,
    /// Errors.
    Red,
    /// Confirmation notices.
    Yellow,
    /// Hint panels.
    Cyan,
}

impl Tone {
    fn code(self) -> &'static str {
        match self {
            Self::Dim => "\x1b[2m",
            Self::Bold => "\x1b[1m",
            Self::Red => "\x1b[31m",
            Self::Yellow => "\x1b[33m",
            Self::Cyan => "\x1b[36m",
        }
    }
}

const RESET: &str = "\x1b[0m";

/// Paints text when colour is on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Painter {
    pub(crate) color: bool,
}

impl Painter {
    /// `text` wrapped in the tone's escape sequence (unchanged without colour).
    pub(crate) fn paint(self, tone: Tone, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("{}{text}{RESET}", tone.code())
        } else {
            text.to_owned()
        }
    }

    /// The opening sequence of a tone, for text streamed in pieces.
    pub(crate) fn open(self, tone: Tone) -> &'static str {
        if self.color { tone.code() } else { "" }
    }

    /// The closing sequence matching [`open`](Self::open).
    pub(crate) fn close(self) -> &'static str {
        if self.color { RESET } else { "" }
    }
}
