//! [`Error`]: what can go wrong with a workspace.

use std::io;

/// A workspace operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The sandbox cannot run on this machine.
    #[error("the bubblewrap sandbox is not available: {reason}. {hint}")]
    SandboxUnavailable {
        /// What the probe saw.
        reason: String,
        /// What to install or enable.
        hint: String,
    },
    /// An id used in a directory name is not `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid {what} {id:?}: use 1 to 64 letters, digits, '_' or '-'")]
    InvalidId {
        /// Which id (`user id`, `workspace id`, ...).
        what: &'static str,
        /// The id given.
        id: String,
    },
    /// An MCP server of that name is already declared.
    #[error("an MCP server named {name:?} is already in this workspace")]
    DuplicateMcp {
        /// The server name.
        name: String,
    },
    /// An MCP declaration cannot be used.
    #[error("MCP server {name:?}: {reason}")]
    InvalidMcp {
        /// The server name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A skill directory cannot be added.
    #[error("skill {name:?}: {reason}")]
    InvalidSkill {
        /// The skill (or its directory) name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A skill of that name is already in the agent's partition.
    #[error("a skill named {name:?} is already in this workspace")]
    DuplicateSkill {
        /// The skill name.
        name: String,
    },
    /// No skill of that name.
    #[error("no skill named {name:?} in this workspace")]
    UnknownSkill {
        /// The skill name.
        name: String,
    },
    /// The user has as many live workspaces as the operator allows.
    #[error(
        "this user already has {limit} workspaces open (the operator's limit of live \
         workspaces per user); one closes after it has been idle for a while"
    )]
    TooManyLive {
        /// The limit.
        limit: usize,
    },
    /// The workspace was closed.
    #[error("the workspace {id} is closed")]
    Closed {
        /// Its id.
        id: String,
    },
    /// Building the toolkit failed (a name clash).
    #[error(transparent)]
    Toolkit(#[from] oxiscope_tool::Error),
    /// A file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}

/// A workspace result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks an id that becomes a directory name: 1 to 64 of
/// `[A-Za-z0-9_-]`, so it can neither climb (`..`) nor nest (`/`).
///
/// # Errors
/// [`Error::InvalidId`].
pub fn validate_id(what: &'static str, id: &str) -> Result<()> {
    let ok = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidId {
            what,
            id: id.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_name_another_directory_are_refused() {
        for bad in [
            "",
            "..",
            ".",
            "a/b",
            "a\\b",
            "ä",
            &"x".repeat(65),
            "a b",
            "-/..",
        ] {
            assert!(validate_id("workspace id", bad).is_err(), "{bad:?}");
        }
        for good in ["a", "A-b_9", &"x".repeat(64), "0123abcdef"] {
            assert!(validate_id("workspace id", good).is_ok(), "{good:?}");
        }
    }
}
