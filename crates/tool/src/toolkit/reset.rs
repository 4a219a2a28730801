//! The `reset_tools` meta tool.

use oxiscope_message::ToolResultState;
use oxiscope_permission::{PermissionContext, PermissionDecision};
use serde_json::{Map, Value, json};

use super::RESET_TOOLS;
use super::group::ToolGroup;
use crate::chunk::ToolChunk;
use crate::tool::{Tool, ToolCallContext, ToolFlags, ToolStream, once_future};

const DESCRIPTION: &str = "Choose which optional tool groups are equipped. \
Every parameter is the complete, final on/off state of one group: a group not set \
to true here is switched off, whatever its state before. Keep only the groups the \
current task needs, and switch groups off once you are done with them to keep the \
context small. The result contains the usage instructions of the groups you switch \
on; follow them. Calling this again with the same state shows the instructions again.";

/// Switches the session's non-basic groups to the state given.
#[derive(Debug)]
pub(super) struct ResetTools {
    groups: Vec<ToolGroup>,
    schema: Value,
}

impl ResetTools {
    pub(super) fn new(groups: Vec<ToolGroup>) -> Self {
        let properties: Map<String, Value> = groups
            .iter()
            .map(|g| {
                (
                    g.name.clone(),
                    json!({"default": false, "description": g.description, "type": "boolean"}),
                )
            })
            .collect();
        let schema = json!({"properties": properties, "type": "object"});
        Self { groups, schema }
    }
}

impl Tool for ResetTools {
    fn name(&self) -> &str {
        RESET_TOOLS
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        ToolFlags {
            state_injected: true,
            ..ToolFlags::default()
        }
    }

    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::allow("Switching tool groups is always allowed")
    }

    fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream {
        let groups = self.groups.clone();
        once_future(async move {
            let Value::Object(wanted) = input else {
                return ToolChunk::error("reset_tools expects an object of group: true/false");
            };
            let unknown: Vec<&str> = wanted
                .keys()
                .map(String::as_str)
                .filter(|k| !groups.iter().any(|g| g.name == *k))
                .collect();
            if !unknown.is_empty() {
                let known: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
                return ToolChunk::error(format!(
                    "Unknown tool group(s): {}. The groups are: {}.",
                    unknown.join(", "),
                    known.join(", ")
                ));
            }
            let on: Vec<&ToolGroup> = groups
                .iter()
                .filter(|g| {
                    wanted
                        .get(&g.name)
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                })
                .collect();
            let mut state = ctx.session.tool_context().lock().await;
            let newly: Vec<&ToolGroup> = on
                .iter()
                .copied()
                .filter(|g| !state.activated_groups.contains(&g.name))
                .collect();
            let off: Vec<String> = state
                .activated_groups
                .iter()
                .filter(|a| !on.iter().any(|g| &g.name == *a))
                .cloned()
                .collect();
            state.activated_groups = on.iter().map(|g| g.name.clone()).collect();
            drop(state);

            let mut text = if on.is_empty() {
                "All optional tool groups are now off.".to_owned()
            } else {
                let names: Vec<&str> = on.iter().map(|g| g.name.as_str()).collect();
                format!("Active tool groups: {}.", names.join(", "))
            };
            if !off.is_empty() {
                text.push_str(&format!(" Switched off: {}.", off.join(", ")));
            }
            for g in newly.iter().filter(|g| !g.instructions.is_empty()) {
                text.push_str(&format!(
                    "\n\n## Instructions for `{}`\n{}",
                    g.name, g.instructions
                ));
            }
            let active: Vec<&str> = on.iter().map(|g| g.name.as_str()).collect();
            let activated: Vec<&str> = newly.iter().map(|g| g.name.as_str()).collect();
            ToolChunk::text(text)
                .with_state(ToolResultState::Success)
                .with_metadata("active_groups", json!(active))
                .with_metadata("activated", json!(activated))
                .with_metadata("deactivated", json!(off))
        })
    }
}
