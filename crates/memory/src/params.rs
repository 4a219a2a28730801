//! [`Parameters`] and [`MemoryMode`]: the tunables of
//! [`AgenticMemoryMiddleware`](crate::AgenticMemoryMiddleware), with
//! AgentScope's names and defaults where it has them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::prompts::{DEFAULT_MEMORY_INSTRUCTIONS, DEFAULT_RETRIEVAL_INSTRUCTIONS};

/// How memories reach the model (the index in the system prompt and the
/// Read/Write/Edit instructions are there in every mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryMode {
    /// Automatic retrieval only: when a reply starts, a model call selects
    /// the relevant memory files and they are injected as a hint before a
    /// later reasoning step. No extra tool.
    StaticControl,
    /// No automatic retrieval: the `memory_search` tool is offered and the
    /// model decides when to search.
    AgentControl,
    /// Both automatic retrieval and the `memory_search` tool (the default).
    #[default]
    Both,
}

impl MemoryMode {
    /// Whether memories are selected automatically when a reply starts.
    #[must_use]
    pub fn retrieves(self) -> bool {
        matches!(self, Self::StaticControl | Self::Both)
    }

    /// Whether the `memory_search` tool is offered.
    #[must_use]
    pub fn offers_search(self) -> bool {
        matches!(self, Self::AgentControl | Self::Both)
    }
}

/// The tunables of the agentic memory. Token counts are estimated as
/// AgentScope does: four bytes of UTF-8 per token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Parameters {
    /// How memories reach the model (default [`MemoryMode::Both`]).
    pub mode: MemoryMode,
    /// Most tokens of `MEMORY.md` put into the system prompt (default
    /// 4000); the rest is cut with a note telling the model how to read it.
    pub memory_max_tokens: usize,
    /// Most lines of `MEMORY.md` put into the system prompt (default 200).
    pub memory_max_lines: usize,
    /// The instructions added to the system prompt before the index;
    /// `{memory_dir}` is replaced by the memory directory.
    pub memory_instructions: String,
    /// Most tokens read from each memory file that is injected or returned
    /// by `memory_search` (default 2000).
    pub retrieval_max_tokens_per_md: usize,
    /// Most memory files considered (newest first) when selecting
    /// (default 200).
    pub retrieval_max_files: usize,
    /// Most tokens read from the start of a file to find its front matter
    /// (default 256).
    pub retrieval_max_tokens_per_frontmatter: usize,
    /// Most files the selection may inject (default 5).
    pub retrieval_max_selected: usize,
    /// The instructions of the selection call.
    pub retrieval_instructions: String,
    /// How long the first reasoning step of a reply waits for the automatic
    /// selection (default zero: as in AgentScope, the selection runs
    /// alongside the reply and its hint is injected before the first
    /// reasoning step that starts after it finished).
    #[serde(with = "millis")]
    pub retrieval_wait: Duration,
    /// Files larger than this are skipped with a warning (default 1 MiB).
    pub max_file_bytes: u64,
    /// Default `limit` of `memory_search` (default 5).
    pub top_k: usize,
}

impl Default for Parameters {
    fn default() -> Self {
        Self {
            mode: MemoryMode::Both,
            memory_max_tokens: 4_000,
            memory_max_lines: 200,
            memory_instructions: DEFAULT_MEMORY_INSTRUCTIONS.to_owned(),
            retrieval_max_tokens_per_md: 2_000,
            retrieval_max_files: 200,
            retrieval_max_tokens_per_frontmatter: 256,
            retrieval_max_selected: 5,
            retrieval_instructions: DEFAULT_RETRIEVAL_INSTRUCTIONS.to_owned(),
            retrieval_wait: Duration::ZERO,
            max_file_bytes: 1 << 20,
            top_k: 5,
        }
    }
}

impl Parameters {
    /// Checks the ranges.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`] when a limit that must be positive is
    /// zero, `top_k` or `retrieval_max_selected` is above 50, or
    /// `max_file_bytes` is below the front-matter budget.
    pub fn validate(&self) -> Result<()> {
        let positive = [
            ("memory_max_tokens", self.memory_max_tokens),
            ("memory_max_lines", self.memory_max_lines),
            (
                "retrieval_max_tokens_per_md",
                self.retrieval_max_tokens_per_md,
            ),
            ("retrieval_max_files", self.retrieval_max_files),
            (
                "retrieval_max_tokens_per_frontmatter",
                self.retrieval_max_tokens_per_frontmatter,
            ),
            ("retrieval_max_selected", self.retrieval_max_selected),
            ("top_k", self.top_k),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(Error::InvalidParameters(format!(
                    "{name} must be at least 1"
                )));
            }
        }
        for (name, value) in [
            ("top_k", self.top_k),
            ("retrieval_max_selected", self.retrieval_max_selected),
        ] {
            if value > 50 {
                return Err(Error::InvalidParameters(format!(
                    "{name} must be at most 50, got {value}"
                )));
            }
        }
        let frontmatter_bytes = crate::text::token_bytes(self.retrieval_max_tokens_per_frontmatter);
        if self.max_file_bytes < frontmatter_bytes as u64 {
            return Err(Error::InvalidParameters(format!(
                "max_file_bytes ({}) must be at least the front-matter budget ({frontmatter_bytes} \
                 bytes)",
                self.max_file_bytes
            )));
        }
        Ok(())
    }
}

/// `Duration` as whole milliseconds.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_use_the_seed_names() {
        for (mode, name) in [
            (MemoryMode::StaticControl, "\"static_control\""),
            (MemoryMode::AgentControl, "\"agent_control\""),
            (MemoryMode::Both, "\"both\""),
        ] {
            assert_eq!(serde_json::to_string(&mode).unwrap(), name);
            assert_eq!(serde_json::from_str::<MemoryMode>(name).unwrap(), mode);
        }
        assert!(
            MemoryMode::StaticControl.retrieves() && !MemoryMode::StaticControl.offers_search()
        );
        assert!(!MemoryMode::AgentControl.retrieves() && MemoryMode::AgentControl.offers_search());
        assert!(MemoryMode::Both.retrieves() && MemoryMode::Both.offers_search());
    }

    #[test]
    fn parameters_read_from_json_with_defaults() {
        let p: Parameters = serde_json::from_value(
            serde_json::json!({"mode": "agent_control", "retrieval_wait": 250}),
        )
        .unwrap();
        assert_eq!(p.mode, MemoryMode::AgentControl);
        assert_eq!(p.retrieval_wait, Duration::from_millis(250));
        assert_eq!(p.memory_max_tokens, 4_000);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        for p in [
            Parameters {
                memory_max_lines: 0,
                ..Parameters::default()
            },
            Parameters {
                top_k: 51,
                ..Parameters::default()
            },
            Parameters {
                retrieval_max_selected: 0,
                ..Parameters::default()
            },
            Parameters {
                max_file_bytes: 10,
                ..Parameters::default()
            },
        ] {
            assert!(
                matches!(p.validate(), Err(Error::InvalidParameters(_))),
                "{p:?}"
            );
        }
    }
}
