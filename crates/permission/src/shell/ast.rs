//! The parsed form of a shell command line: a flat list of simple commands
//! plus the constructs that defeat static analysis.

/// Something in a word that is only known when the shell runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expansion {
    /// `$NAME`, `${NAME}` or a special parameter (`$1`, `$?`, ...).
    Variable,
    /// `${...}` with an operator (`${x:-y}`, `${x/a/b}`, `${!x}`, ...).
    Parameter,
    /// `$(...)` or backticks.
    CommandSubstitution,
    /// `<(...)` or `>(...)`.
    ProcessSubstitution,
    /// `$((...))`.
    Arithmetic,
    /// `{a,b}` or `{1..9}`.
    Brace,
}

/// One shell word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The source text of the word.
    pub raw: String,
    /// The word after quote removal; expansions keep their source text.
    pub value: String,
    /// Expansions found in the word (empty for a literal word).
    pub expansions: Vec<Expansion>,
    /// An unquoted `*`, `?` or `[` (pathname expansion).
    pub glob: bool,
    /// An unquoted leading `~` (tilde expansion).
    pub tilde: bool,
    /// Some part of the word was quoted or escaped.
    pub quoted: bool,
}

impl Word {
    /// Whether the word's value is known without running anything
    /// (globs and tilde excepted: path code resolves them).
    #[must_use]
    pub fn is_static(&self) -> bool {
        self.expansions.is_empty()
    }
}

/// The operator of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>` or `>|`
    Write,
    /// `>>`
    Append,
    /// `&>` or `>&file`
    WriteBoth,
    /// `&>>`
    AppendBoth,
    /// `<>`
    ReadWrite,
    /// `>&N` or `<&N`: duplicate a descriptor.
    Duplicate,
    /// `<<` or `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

impl RedirectOp {
    /// Whether the redirection writes to its target.
    #[must_use]
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Write | Self::Append | Self::WriteBoth | Self::AppendBoth | Self::ReadWrite
        )
    }

    /// Whether this is an output redirection of any kind (descriptor
    /// duplication included).
    #[must_use]
    pub fn is_output(self) -> bool {
        self.writes() || self == Self::Duplicate
    }
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The descriptor number written before the operator, if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirectOp,
    /// The target word (file, descriptor number or heredoc delimiter).
    pub target: Word,
}

/// A simple command: assignments, words and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// `NAME=value` prefixes.
    pub assignments: Vec<Word>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    /// Redirections, in order.
    pub redirects: Vec<Redirect>,
    /// The command's source text, trimmed.
    pub text: String,
    /// Its standard input comes from the previous stage of a pipeline.
    pub piped_input: bool,
    /// It runs inside a command or process substitution.
    pub nested: bool,
}

impl SimpleCommand {
    /// The command name, if any.
    #[must_use]
    pub fn name(&self) -> Option<&Word> {
        self.words.first()
    }

    /// The values of all words (name first).
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|w| w.value.as_str())
    }
}

/// A construct whose effect cannot be known without running the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hazard {
    /// `$(...)` or backticks.
    CommandSubstitution,
    /// `<(...)` / `>(...)`.
    ProcessSubstitution,
    /// `${...}` with an operator.
    ParameterExpansion,
    /// `$((...))` or `((...))`.
    Arithmetic,
    /// `{a,b}` brace expansion.
    BraceExpansion,
    /// A variable or expansion as the command name.
    DynamicCommandName,
    /// `if`, `for`, `while`, `until`, `case`, `select`.
    ControlFlow(&'static str),
    /// `name() { ...; }` or `function name`.
    FunctionDefinition,
    /// `[ ... ]` or `[[ ... ]]`.
    TestCommand,
}

impl Hazard {
    /// A short description for messages.
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Self::CommandSubstitution => "command substitution".into(),
            Self::ProcessSubstitution => "process substitution".into(),
            Self::ParameterExpansion => "parameter expansion".into(),
            Self::Arithmetic => "arithmetic expansion".into(),
            Self::BraceExpansion => "brace expansion".into(),
            Self::DynamicCommandName => "a command name that is only known at run time".into(),
            Self::ControlFlow(kind) => format!("a `{kind}` statement"),
            Self::FunctionDefinition => "a function definition".into(),
            Self::TestCommand => "a test command".into(),
        }
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    /// Every simple command, in source order, including those inside
    /// subshells, groups and substitutions.
    pub commands: Vec<SimpleCommand>,
    /// The constructs that defeat static analysis, in order of appearance.
    pub hazards: Vec<Hazard>,
}
