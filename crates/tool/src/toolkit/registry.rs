//! Registration: tools, groups, skills, middleware.

use std::fmt;
use std::sync::Arc;

use oxiscope_model::ToolSchema;

use super::BASIC_GROUP;
use super::group::ToolGroup;
use super::reset::ResetTools;
use crate::args::ArgumentSchema;
use crate::error::{Error, Result};
use crate::middleware::ToolMiddleware;
use crate::skill::{Skill, SkillViewer};
use crate::state::ToolContext;
use crate::tool::Tool;

pub(super) struct Entry {
    pub(super) tool: Arc<dyn Tool>,
    pub(super) group: String,
    pub(super) args: Arc<ArgumentSchema>,
}

impl Entry {
    fn new(tool: Arc<dyn Tool>, group: &str) -> Result<Self> {
        let args = ArgumentSchema::new(tool.input_schema().clone()).map_err(|reason| {
            Error::InvalidSchema {
                tool: tool.name().to_owned(),
                reason,
            }
        })?;
        Ok(Self {
            tool,
            group: group.to_owned(),
            args: Arc::new(args),
        })
    }
}

/// The tools an agent can call, shared by all its sessions.
///
/// Holds tools (in the always-active `basic` group or a named
/// [`ToolGroup`]), skills (with the auto-registered `Skill` viewer), and
/// middleware. What changes per session — which groups are active, the read
/// cache, tasks — lives in the session's [`ToolContext`] /
/// [`SessionState`](crate::SessionState), so one `Toolkit` (in an `Arc`)
/// serves any number of concurrent sessions.
#[derive(Default)]
pub struct Toolkit {
    pub(super) entries: Vec<Entry>,
    pub(super) groups: Vec<ToolGroup>,
    pub(super) reset: Option<Entry>,
    pub(super) middleware: Arc<[Arc<dyn ToolMiddleware>]>,
    pub(super) skills: Vec<Skill>,
    viewer: Option<usize>,
}

impl fmt::Debug for Toolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toolkit")
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(|e| e.tool.name())
                    .collect::<Vec<_>>(),
            )
            .field("groups", &self.groups)
            .field(
                "skills",
                &self.skills.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("middleware", &self.middleware.len())
            .finish()
    }
}

impl Toolkit {
    /// An empty toolkit.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool` to the `basic` group.
    ///
    /// # Errors
    ///
    /// Another tool has the same name, or the input schema does not compile.
    pub fn register(&mut self, tool: impl Tool + 'static) -> Result<&mut Self> {
        self.register_arc(Arc::new(tool), BASIC_GROUP)
    }

    /// Adds `tool` to the group `group` (declared with
    /// [`add_group`](Self::add_group) first, or `basic`).
    ///
    /// # Errors
    ///
    /// The group does not exist, the name is taken, or the schema does not
    /// compile.
    pub fn register_in(&mut self, group: &str, tool: impl Tool + 'static) -> Result<&mut Self> {
        self.register_arc(Arc::new(tool), group)
    }

    /// Adds a shared tool to `group`.
    ///
    /// # Errors
    ///
    /// As [`register_in`](Self::register_in).
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>, group: &str) -> Result<&mut Self> {
        if group != BASIC_GROUP && !self.groups.iter().any(|g| g.name == group) {
            return Err(Error::UnknownGroup {
                name: group.to_owned(),
            });
        }
        let name = tool.name();
        if self.find(name).is_some() || name == super::RESET_TOOLS {
            return Err(Error::DuplicateTool {
                name: name.to_owned(),
            });
        }
        self.entries.push(Entry::new(tool, group)?);
        Ok(self)
    }

    /// Declares a non-basic group; its tools are hidden until the model
    /// activates it with `reset_tools`, which now appears in the schemas.
    ///
    /// # Errors
    ///
    /// The name is taken (or is `basic`).
    pub fn add_group(&mut self, group: ToolGroup) -> Result<&mut Self> {
        if group.name == BASIC_GROUP || self.groups.iter().any(|g| g.name == group.name) {
            return Err(Error::DuplicateGroup { name: group.name });
        }
        self.groups.push(group);
        let reset = ResetTools::new(self.groups.clone());
        self.reset = Some(Entry::new(Arc::new(reset), BASIC_GROUP)?);
        Ok(self)
    }

    /// Adds a middleware around every tool call; the first added is the
    /// outermost.
    pub fn add_middleware(&mut self, middleware: impl ToolMiddleware + 'static) -> &mut Self {
        let mut chain: Vec<_> = self.middleware.iter().cloned().collect();
        chain.push(Arc::new(middleware));
        self.middleware = chain.into();
        self
    }

    /// Adds skills and (re)registers the `Skill` viewer tool.
    ///
    /// # Errors
    ///
    /// A skill name is taken, or a tool other than the viewer is called
    /// `Skill`.
    pub fn add_skills(&mut self, skills: impl IntoIterator<Item = Skill>) -> Result<&mut Self> {
        for skill in skills {
            if self.skills.iter().any(|s| s.name == skill.name) {
                return Err(Error::DuplicateSkill { name: skill.name });
            }
            self.skills.push(skill);
        }
        if self.skills.is_empty() {
            return Ok(self);
        }
        let viewer = Entry::new(Arc::new(SkillViewer::new(self.skills.clone())), BASIC_GROUP)?;
        match self.viewer {
            Some(i) => self.entries[i] = viewer,
            None if self.find(SkillViewer::NAME).is_some() => {
                return Err(Error::DuplicateTool {
                    name: SkillViewer::NAME.to_owned(),
                });
            }
            None => {
                self.viewer = Some(self.entries.len());
                self.entries.push(viewer);
            }
        }
        Ok(self)
    }

    /// The registered skills.
    #[must_use]
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The system-prompt fragment listing the skills, or `None` without
    /// skills.
    #[must_use]
    pub fn skills_prompt(&self) -> Option<String> {
        crate::skill::prompt_fragment(&self.skills)
    }

    /// The declared non-basic groups.
    #[must_use]
    pub fn groups(&self) -> &[ToolGroup] {
        &self.groups
    }

    /// A registered tool by name (whether or not its group is active;
    /// `reset_tools` included when groups exist).
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.find(name).map(|e| &e.tool)
    }

    pub(super) fn find(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .chain(self.reset.as_ref())
            .find(|e| e.tool.name() == name)
    }

    /// Names of all registered tools, in registration order.
    #[must_use]
    pub fn tool_names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.tool.name()).collect()
    }

    /// The schemas for the model: `reset_tools` first when non-basic groups
    /// exist, then the tools of the active groups in registration order.
    #[must_use]
    pub fn schemas(&self, context: &ToolContext) -> Vec<ToolSchema> {
        self.reset
            .iter()
            .chain(self.entries.iter().filter(|e| context.is_active(&e.group)))
            .map(|e| e.tool.schema())
            .collect()
    }
}
