//! The agent's tunable knobs, serde-compatible with AgentScope's configs.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The reasoning-acting loop's limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReActConfig {
    /// The most reasoning-acting rounds in one reply.
    pub max_iters: u32,
    /// Extra rounds granted to produce a required structured output after
    /// `max_iters`.
    pub structured_output_grace_iters: u32,
    /// End the reply when the user denies a tool call, instead of letting
    /// the model react to the denial.
    pub stop_on_reject: bool,
    /// The text of the message a reply returns when it is interrupted.
    pub interruption_message: String,
    /// Kept for compatibility with saved configs; Rust has no cancelled
    /// exception to re-raise, so it has no effect.
    pub interruption_raise_cancelled_error: bool,
}

impl Default for ReActConfig {
    fn default() -> Self {
        Self {
            max_iters: 50,
            structured_output_grace_iters: 5,
            stop_on_reject: false,
            interruption_message: "The reply was interrupted. What should I do next?".to_owned(),
            interruption_raise_cancelled_error: false,
        }
    }
}

/// What the agent tells the model about the world as it runs (time for now;
/// tasks, context usage and repeated tool failures come with context
/// management).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InjectionConfig {
    /// Whether to inject the runtime state at all.
    pub inject_runtime_state: bool,
    /// The IANA time zone of the injected time, e.g. `Europe/Paris`. Only
    /// `UTC` and fixed offsets (`+02:00`) are resolved without a time-zone
    /// database; other names are reported as given with UTC time.
    pub timezone: String,
    /// The strftime format of the injected time.
    pub time_format: String,
    /// Hours that must pass before the time is injected again.
    pub time_interval: f64,
    /// Deprecated: overrides the context config's buffer ratio when set.
    pub context_buffer_ratio: Option<f64>,
    /// Consecutive identical failing calls of a tool before a hint is
    /// injected.
    pub tool_retries_limit: u32,
    /// The hint for repeated failures (`{tool_name}`, `{count}`).
    pub tool_retries_hint: String,
    /// Wraps the injected fields; `{runtime_state}` is replaced by them.
    pub template: String,
    /// The hint's `source`, also used to find earlier injections.
    pub injection_source: String,
    /// Tools whose calls in the context suppress the open-tasks injection.
    pub task_tool_names: Option<Vec<String>>,
    /// More fields to inject, as `<key>value</key>`.
    pub extra_fields: Option<Map<String, Value>>,
    /// Whether the injection is also emitted as a `HINT_BLOCK` event.
    pub emit_hint_event: bool,
}

impl Default for InjectionConfig {
    fn default() -> Self {
        Self {
            inject_runtime_state: true,
            timezone: "UTC".to_owned(),
            time_format: "%Y-%m-%dT%H:%M:%S".to_owned(),
            time_interval: 0.5,
            context_buffer_ratio: None,
            tool_retries_limit: 3,
            tool_retries_hint: "'{tool_name}' failed {count} times in a row with the same \
                                arguments. Do not repeat that call unchanged: read the error \
                                and change your approach."
                .to_owned(),
            template: "<system-reminder>Current facts, newer than anything said before (a later \
                       reminder replaces this one):\n{runtime_state}\n</system-reminder>"
                .to_owned(),
            injection_source: r#"{"label": "System", "sublabel": "Runtime State"}"#.to_owned(),
            task_tool_names: Some(
                ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"]
                    .map(str::to_owned)
                    .to_vec(),
            ),
            extra_fields: Some(Map::new()),
            emit_hint_event: true,
        }
    }
}

impl InjectionConfig {
    /// The minimum time between two time injections.
    #[must_use]
    pub fn interval(&self) -> Duration {
        Duration::from_secs_f64((self.time_interval * 3600.0).max(0.0))
    }
}

/// How model calls are retried: the budget of the one retry layer of a
/// reasoning step's model call (backoff with jitter, `Retry-After`, then
/// the fallback model; see the `reasoning` module docs and
/// [`RETRY_BASE_DELAY`](crate::RETRY_BASE_DELAY)).
///
/// The default is [`DEFAULT_MAX_RETRIES`]: AgentScope defaults to `0`
/// because its model clients run a retry loop of their own; Oxiscope's
/// model clients (as `oxiscope-providers` builds them) do not, so the
/// agent's budget is the only one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelConfig {
    /// Retries of a failed model call (before any output streamed), per
    /// model (the main one, then the fallback).
    pub max_retries: u32,
}

/// The default [`ModelConfig::max_retries`].
pub const DEFAULT_MAX_RETRIES: u32 = 3;

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            max_retries: DEFAULT_MAX_RETRIES,
        }
    }
}

/// The most a model may write into one reply, in bytes, counted over all
/// of the reply's model calls as their deltas arrive.
///
/// A model that streams past a limit is cut off: the call is dropped, the
/// blocks it opened are closed, its unfinished tool calls get an error
/// result, and the reply ends with `REPLY_END` `error`
/// ([`AgentError::ReplyTooLarge`](crate::AgentError::ReplyTooLarge)). What
/// arrived before the limit stays in the reply, so the session goes on
/// with its next input. The limits bound what the agent holds, stores and
/// streams for one reply whatever the model sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplyLimits {
    /// Answer bytes: text, thinking and inline data (base64) together.
    pub max_text_bytes: usize,
    /// Tool-call argument bytes (the JSON text of every call's input).
    pub max_tool_input_bytes: usize,
}

/// The default [`ReplyLimits::max_text_bytes`]: 4 MiB.
pub const DEFAULT_MAX_REPLY_TEXT_BYTES: usize = 4 << 20;

/// The default [`ReplyLimits::max_tool_input_bytes`]: 4 MiB.
pub const DEFAULT_MAX_REPLY_TOOL_INPUT_BYTES: usize = 4 << 20;

impl Default for ReplyLimits {
    fn default() -> Self {
        Self {
            max_text_bytes: DEFAULT_MAX_REPLY_TEXT_BYTES,
            max_tool_input_bytes: DEFAULT_MAX_REPLY_TOOL_INPUT_BYTES,
        }
    }
}

/// How the context is kept within the model's window: compression of older
/// messages into a summary, truncation of huge tool results, and a limit on
/// images. Serde-compatible with AgentScope's `ContextConfig`.
///
/// Check a hand-made config with [`ContextConfig::validate`];
/// [`AgentBuilder::build`](crate::AgentBuilder::build) does it too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextConfig {
    /// Compress once the prompt uses more than this share of the model's
    /// context size; at most `0.9` (the rest is headroom for the summary
    /// call itself).
    pub trigger_ratio: f64,
    /// The share of the context size kept verbatim (the newest messages)
    /// when compressing.
    pub reserve_ratio: f64,
    /// How far ahead of `trigger_ratio` the agent is told that compression is
    /// near (and may compress itself with the `CompressContext` tool).
    /// Must be below `trigger_ratio`.
    pub context_buffer_ratio: f64,
    /// The instruction that asks the model for the summary;
    /// `{current_time}` is replaced by the current time.
    pub compression_prompt: String,
    /// How the summary is written into the context; `{field}` is replaced by
    /// the summary's field of that name.
    pub summary_template: String,
    /// The JSON schema of the structured summary.
    pub summary_schema: Value,
    /// The most tokens one tool result may keep in the context; longer
    /// results are cut (and offloaded when an offloader is set).
    pub tool_result_limit: u64,
    /// Fall back to dropping the oldest messages when no summary can be
    /// made; `false` reports an error and leaves the context as it is.
    pub compression_fallback_to_truncation: bool,
    /// Offer the `CompressContext` tool so the agent can compress at a good
    /// moment before the hard threshold.
    pub compression_tool_enabled: bool,
    /// The most images kept in the context; older ones are replaced by a
    /// note (offloaded first when an offloader is set).
    pub max_image_num: u64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            trigger_ratio: 0.8,
            reserve_ratio: 0.1,
            context_buffer_ratio: 0.2,
            compression_prompt: DEFAULT_COMPRESSION_PROMPT.to_owned(),
            summary_template: DEFAULT_SUMMARY_TEMPLATE.to_owned(),
            summary_schema: default_summary_schema(),
            tool_result_limit: 50_000,
            compression_fallback_to_truncation: true,
            compression_tool_enabled: false,
            max_image_num: 5,
        }
    }
}

/// A context config that cannot work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A ratio outside its range.
    #[error("`{field}` must be {range}, got {value}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The allowed range, in words.
        range: &'static str,
        /// The value given.
        value: f64,
    },
    /// The buffer does not leave room before the trigger.
    #[error(
        "`context_buffer_ratio` ({buffer}) must be smaller than `trigger_ratio` ({trigger}), so \
         the agent is warned before compression starts"
    )]
    BufferNotBelowTrigger {
        /// `context_buffer_ratio`.
        buffer: f64,
        /// `trigger_ratio`.
        trigger: f64,
    },
    /// The injection template has no `{runtime_state}` placeholder.
    #[error("the injection `template` must contain the `{{runtime_state}}` placeholder")]
    Template,
    /// The summary schema is not an object schema.
    #[error("`summary_schema` must be a JSON schema of an object")]
    SummarySchema,
}

impl ContextConfig {
    /// Checks the ratios and the summary schema.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field, ok: bool, range, value| {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::OutOfRange {
                    field,
                    range,
                    value,
                })
            }
        };
        let t = self.trigger_ratio;
        check("trigger_ratio", t > 0.0 && t <= 0.9, "in (0, 0.9]", t)?;
        let r = self.reserve_ratio;
        check("reserve_ratio", r > 0.0 && r < 0.9, "in (0, 0.9)", r)?;
        check(
            "reserve_ratio",
            r < t,
            "below `trigger_ratio` (what is kept must fit under the threshold)",
            r,
        )?;
        let b = self.context_buffer_ratio;
        check(
            "context_buffer_ratio",
            (0.0..=1.0).contains(&b),
            "in [0, 1]",
            b,
        )?;
        if b >= t {
            return Err(ConfigError::BufferNotBelowTrigger {
                buffer: b,
                trigger: t,
            });
        }
        if self.summary_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(ConfigError::SummarySchema);
        }
        Ok(())
    }
}

/// The default summary instruction (our wording).
const DEFAULT_COMPRESSION_PROMPT: &str = "<system-hint>The conversation so far is about to be \
replaced by a summary you write now, so that you can carry on the work in a fresh context. Make \
it structured, short and actionable.\nThe current time is {current_time}.\nThe history will be \
gone, and this summary may be summarised again later, so make every reference stand on its own:\n\
- Turn relative times ('today', 'yesterday', 'recently') into absolute dates, using the current \
time above - also those an earlier summary kept relative.\n- Name things exactly: file paths, \
symbols, issue and PR numbers, ids, URLs, commands and error messages verbatim, never 'that \
file' or 'the approach above'.\n- List all unfinished work, above all background jobs whose \
results are still due (with their ids and what they do), and for each item say who asked for it \
(the user or you) and whether it is done, pending or blocked.\n</system-hint>";

/// The default layout of the summary in the context (our wording).
const DEFAULT_SUMMARY_TEMPLATE: &str = "<system-info>A summary of the work so far\n\
## Task overview\n{task_overview}\n\n## Current state\n{current_state}\n\n\
## Important discoveries\n{important_discoveries}\n\n## Next steps\n{next_steps}\n\n\
## Context to preserve\n{context_to_preserve}</system-info>";

/// The five-field summary schema (field names as AgentScope's, our
/// descriptions).
fn default_summary_schema() -> Value {
    let field = |title: &str, description: &str| serde_json::json!({"title": title, "type": "string", "description": description});
    serde_json::json!({
        "title": "SummarySchema",
        "description": "A summary of the conversation so far that replaces it",
        "type": "object",
        "properties": {
            "task_overview": field("Task Overview",
                "What the user asked for and how success is judged, with every constraint or \
                 clarification they gave"),
            "current_state": field("Current State",
                "What is done: files created, changed or examined (with paths), outputs and \
                 artifacts produced"),
            "important_discoveries": field("Important Discoveries",
                "Constraints found, decisions taken and why, errors met and how they were \
                 solved, approaches that failed and why"),
            "next_steps": field("Next Steps",
                "The concrete actions still needed, in order of priority, with open questions \
                 and blockers"),
            "context_to_preserve": field("Context To Preserve",
                "The user's preferences and style, domain details that are not obvious, and \
                 every promise made to the user"),
        },
        "required": ["task_overview", "current_state", "important_discoveries", "next_steps",
                     "context_to_preserve"],
    })
}
