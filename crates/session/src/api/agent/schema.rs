//! The agent form's schema, as `GET /agent/schema/v2` answers it.
//!
//! AgentScope's web UI builds its create / edit form from this schema
//! alone: every `$ref` is inlined, top-level scalars form the identity
//! section, and each object under `chat_config` becomes a titled section.
//! Field order, titles, `format: textarea` (a multi-line input), bounds and
//! defaults follow AgentScope's `AgentData` schema; defaults are the ones
//! this server applies when a field is left out. `permission_mode` is an
//! oxiscope extension: a choice among the modes the operator allows.

use oxiscope_agent::{ContextConfig, ReActConfig};
use oxiscope_permission::PermissionMode;
use serde_json::{Map, Value, json};

use super::default_system_prompt;
use crate::api::AgentSchemaV2Response;

impl AgentSchemaV2Response {
    /// The schema of an agent's data, offering `allowed_modes` (in
    /// [`PermissionMode::ALL`] order) as the permission mode's choices.
    #[must_use]
    pub fn agent_data(allowed_modes: &[PermissionMode]) -> Self {
        Self {
            schema: agent_data_schema(allowed_modes),
        }
    }
}

/// The whole `AgentData` schema, `$ref`s inlined.
fn agent_data_schema(allowed_modes: &[PermissionMode]) -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(
        "name".into(),
        json!({
            "type": "string",
            "title": "Name",
            "description": "What the agent is called in lists and conversations.",
        }),
    );
    properties.insert(
        "system_prompt".into(),
        json!({
            "type": "string",
            "format": "textarea",
            "title": "System Prompt",
            "description": "The instructions the agent follows in every conversation.",
            "default": default_system_prompt(),
        }),
    );
    properties.insert("chat_config".into(), chat_config_schema());
    properties.insert(
        "permission_mode".into(),
        permission_mode_schema(allowed_modes),
    );
    let mut schema = Map::new();
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("type".into(), json!("object"));
    schema.insert("required".into(), json!(["name"]));
    schema.insert("title".into(), json!("AgentData"));
    schema.insert("description".into(), json!("An agent's editable settings."));
    schema
}

/// `chat_config`: the sections that apply to text conversations.
fn chat_config_schema() -> Value {
    json!({
        "properties": {
            "context_config": context_config_schema(),
            "react_config": react_config_schema(),
            "invite_config": invite_config_schema(),
        },
        "type": "object",
        "title": "Chat Config",
        "description": "How the agent runs its text conversations.",
    })
}

/// `chat_config.context_config`, without the internal `summary_schema`.
fn context_config_schema() -> Value {
    let d = ContextConfig::default();
    json!({
        "properties": {
            "trigger_ratio": {
                "type": "number",
                "maximum": 0.9,
                "exclusiveMinimum": 0.0,
                "title": "Trigger Ratio",
                "default": d.trigger_ratio,
            },
            "reserve_ratio": {
                "type": "number",
                "exclusiveMaximum": 0.9,
                "exclusiveMinimum": 0.0,
                "title": "Reserve Ratio",
                "default": d.reserve_ratio,
            },
            "context_buffer_ratio": {
                "type": "number",
                "maximum": 1.0,
                "minimum": 0.0,
                "title": "Context Buffer",
                "description": "How far below the trigger ratio the agent is warned that \
                    compression is coming (and may compress by itself when the compression \
                    tool is on). Must be smaller than the trigger ratio.",
                "default": d.context_buffer_ratio,
            },
            "compression_prompt": {
                "type": "string",
                "format": "textarea",
                "title": "Compression Prompt",
                "default": d.compression_prompt,
            },
            "summary_template": {
                "type": "string",
                "format": "textarea",
                "title": "Summary Template",
                "default": d.summary_template,
            },
            "tool_result_limit": {
                "type": "integer",
                "title": "Tool Result Limit",
                "description": "The most tokens one tool result keeps in the context; longer \
                    results are cut.",
                "default": d.tool_result_limit,
            },
            "compression_fallback_to_truncation": {
                "type": "boolean",
                "title": "Compression Fallback To Truncation",
                "description": "Drop the oldest messages when no summary can be written. When \
                    off, the error is reported and the context is left as it is.",
                "default": d.compression_fallback_to_truncation,
            },
            "compression_tool_enabled": {
                "type": "boolean",
                "title": "Compression Tool Enabled",
                "description": "Give the agent a tool to compress its context itself, at a good \
                    moment before the threshold is reached.",
                "default": d.compression_tool_enabled,
            },
            "max_image_num": {
                "type": "integer",
                "minimum": 0.0,
                "title": "Max Image Number",
                "description": "The most images kept in the context; older ones are removed \
                    first.",
                "default": d.max_image_num,
            },
        },
        "type": "object",
        "title": "Context Config",
        "description": "When and how the conversation is compressed to fit the model.",
    })
}

/// `chat_config.react_config`.
fn react_config_schema() -> Value {
    let d = ReActConfig::default();
    json!({
        "properties": {
            "max_iters": {
                "type": "integer",
                "title": "Max Iterations",
                "description": "The most reasoning-acting rounds in one reply.",
                "default": d.max_iters,
            },
            "structured_output_grace_iters": {
                "type": "integer",
                "exclusiveMinimum": 0.0,
                "title": "Grace Iters for Structured Output",
                "description": "Extra rounds allowed after the limit to produce a required \
                    structured output.",
                "default": d.structured_output_grace_iters,
            },
            "stop_on_reject": {
                "type": "boolean",
                "title": "Rejection Handling",
                "description": "End the reply when a tool call is rejected, instead of letting \
                    the agent react to the rejection.",
                "default": d.stop_on_reject,
            },
            "interruption_message": {
                "type": "string",
                "title": "Interruption Message",
                "description": "The reply given when the user interrupts.",
                "default": d.interruption_message,
            },
            "interruption_raise_cancelled_error": {
                "type": "boolean",
                "title": "Raise CancelledError on Interruption",
                "description": "Kept for compatibility with AgentScope's saved agents; it has no \
                    effect here.",
                "default": d.interruption_raise_cancelled_error,
            },
        },
        "type": "object",
        "title": "React Config",
        "description": "Limits of the reasoning-acting loop.",
    })
}

/// `chat_config.invite_config`.
fn invite_config_schema() -> Value {
    json!({
        "properties": {
            "invitable": {
                "type": "boolean",
                "title": "Invitable",
                "description": "Whether other agents may invite this one into their team. \
                    Needs an invite description.",
                "default": false,
            },
            "invite_description": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "format": "textarea",
                "title": "Invite Description",
                "description": "What the agent is good at, shown to an agent deciding whether \
                    to invite it. Kept while invitations are off.",
            },
        },
        "type": "object",
        "title": "Invite Config",
        "description": "Whether and how other agents may invite this one.",
    })
}

/// `permission_mode`: one of the allowed modes, `default` preselected when
/// it is allowed.
fn permission_mode_schema(allowed_modes: &[PermissionMode]) -> Value {
    let modes: Vec<PermissionMode> = PermissionMode::ALL
        .into_iter()
        .filter(|m| allowed_modes.contains(m))
        .collect();
    let explained: Vec<String> = modes
        .iter()
        .map(|m| format!("{}: {}", m.as_str(), explain(*m)))
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("string"));
    schema.insert(
        "enum".into(),
        Value::Array(modes.iter().map(|m| json!(m.as_str())).collect()),
    );
    schema.insert("title".into(), json!("Permission Mode"));
    schema.insert(
        "description".into(),
        json!(format!(
            "What the agent's sessions do with a tool call no permission rule decides. {}.",
            explained.join("; ")
        )),
    );
    if modes.contains(&PermissionMode::Default) {
        schema.insert("default".into(), json!(PermissionMode::Default.as_str()));
    }
    Value::Object(schema)
}

/// One line on what a mode does.
fn explain(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "ask before anything that is not read-only",
        PermissionMode::AcceptEdits => "also allow file edits inside the working directories",
        PermissionMode::Explore => "read-only, everything else is denied",
        PermissionMode::Bypass => "allow everything but deny / ask rules and safety checks",
        PermissionMode::DontAsk => "like accept_edits, but deny whatever would need asking",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_choices_are_the_allowed_modes_in_order() {
        let schema = permission_mode_schema(&[PermissionMode::Explore, PermissionMode::Default]);
        assert_eq!(schema["enum"], json!(["default", "explore"]));
        assert_eq!(schema["default"], "default");
        let text = schema["description"].as_str().unwrap_or_default();
        assert!(text.contains("explore: read-only"), "{text}");
        assert!(!text.contains("bypass"), "{text}");
    }

    #[test]
    fn without_the_default_mode_nothing_is_preselected() {
        let schema = permission_mode_schema(&[PermissionMode::Explore]);
        assert_eq!(schema["enum"], json!(["explore"]));
        assert!(schema.get("default").is_none());
    }
}
