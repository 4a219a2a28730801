//! The auto-registered `Skill` viewer tool.

use oxiscope_permission::{PermissionContext, PermissionDecision};
use serde_json::{Value, json};

use super::Skill;
use crate::chunk::ToolChunk;
use crate::tool::{Tool, ToolCallContext, ToolFlags, ToolStream, once};

/// Returns the full markdown of one skill.
#[derive(Debug)]
pub(crate) struct SkillViewer {
    skills: Vec<Skill>,
    schema: Value,
}

impl SkillViewer {
    pub(crate) const NAME: &'static str = "Skill";

    pub(crate) fn new(skills: Vec<Skill>) -> Self {
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "skill_name": {
                    "type": "string",
                    "description": "The name of the skill to read.",
                    "enum": names,
                }
            },
            "required": ["skill_name"],
        });
        Self { skills, schema }
    }
}

impl Tool for SkillViewer {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Read the full instructions of one of the available skills (listed in the system \
         prompt). Call it before doing work a skill covers, then follow what it says."
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        ToolFlags {
            read_only: true,
            concurrency_safe: true,
            ..ToolFlags::default()
        }
    }

    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::allow("Reading a skill is always allowed")
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        let wanted = input
            .get("skill_name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let chunk = match self.skills.iter().find(|s| s.name == wanted) {
            Some(skill) => ToolChunk::text(skill.content.clone()),
            None => ToolChunk::error(format!("There is no skill named `{wanted}`.")),
        };
        once(chunk)
    }
}
