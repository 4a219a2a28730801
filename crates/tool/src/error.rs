//! Errors of the tool crate.
//!
//! Most tool failures are not Rust errors: they become an error
//! [`ToolResultBlock`](oxiscope_message::ToolResultBlock) the model reads.
//! [`Error`] covers what a program does wrong when it builds a toolkit or
//! loads skills.

use std::path::PathBuf;

/// What can go wrong while assembling tools, groups and skills.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two tools share one name.
    #[error("a tool named `{name}` is already registered")]
    DuplicateTool {
        /// The clashing name.
        name: String,
    },
    /// A group name was used twice, or `basic` was declared explicitly.
    #[error("a tool group named `{name}` is already registered")]
    DuplicateGroup {
        /// The clashing name.
        name: String,
    },
    /// A tool was put into a group that was never declared.
    #[error("tool group `{name}` does not exist")]
    UnknownGroup {
        /// The missing group.
        name: String,
    },
    /// A tool's input schema is not a JSON object schema.
    #[error("the input schema of `{tool}` is invalid: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A `SKILL.md` could not be read.
    #[error("cannot read skill file {}: {source}", path.display())]
    SkillIo {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A `SKILL.md` has no valid front matter with `name` and `description`.
    #[error("invalid skill file {}: {reason}", path.display())]
    InvalidSkill {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Two skills share one name.
    #[error("a skill named `{name}` is already registered")]
    DuplicateSkill {
        /// The clashing name.
        name: String,
    },
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
