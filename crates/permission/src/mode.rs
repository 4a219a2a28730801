//! The five permission modes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The global policy that decides what happens to calls nothing else resolves.
///
/// Serialised in AgentScope's spelling (`default`, `accept_edits`, `explore`,
/// `bypass`, `dont_ask`). See the crate documentation for the decision table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    /// Ask for everything that is neither read-only nor allowed by a rule.
    #[default]
    Default,
    /// Like `Default`, plus edits inside a working directory are allowed.
    AcceptEdits,
    /// Read-only: anything that is not read-only is denied.
    Explore,
    /// Trust everything except deny / ask rules and tool denials.
    Bypass,
    /// Unattended: like `AcceptEdits`, but every ask becomes a denial.
    DontAsk,
}

impl PermissionMode {
    /// Every mode, in declaration order.
    pub const ALL: [Self; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Explore,
        Self::Bypass,
        Self::DontAsk,
    ];

    /// The wire spelling (`accept_edits`, ...).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept_edits",
            Self::Explore => "explore",
            Self::Bypass => "bypass",
            Self::DontAsk => "dont_ask",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = Error;

    /// Accepts the wire spelling and the kebab-case spelling
    /// (`accept_edits` and `accept-edits`), case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let normalised = s.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == normalised)
            .ok_or_else(|| Error::UnknownMode(s.to_owned()))
    }
}
