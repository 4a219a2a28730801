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

/// How model calls are retried.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelConfig {
    /// Retries of a failed model call (before any output streamed).
    pub max_retries: u32,
}
