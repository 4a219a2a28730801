//! Registration: tools, groups, skills, middleware.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, RwLock};

use oxiscope_model::ToolSchema;

use super::BASIC_GROUP;
use super::group::ToolGroup;
use super::reset::ResetTools;
use super::source::{Source, ToolSource, View};
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

/// A tool found by name: static or from a [`ToolSource`].
pub(super) struct Found<'a> {
    pub(super) tool: Arc<dyn Tool>,
    pub(super) group: &'a str,
    pub(super) args: Arc<ArgumentSchema>,
}

impl<'a> From<&'a Entry> for Found<'a> {
    fn from(entry: &'a Entry) -> Self {
        Self {
            tool: entry.tool.clone(),
            group: &entry.group,
            args: entry.args.clone(),
        }
    }
}

/// The tools an agent can call, shared by all its sessions.
///
/// Holds tools (in the always-active `basic` group or a named
/// [`ToolGroup`]), skills (with the auto-registered `Skill` viewer), and
/// middleware. Besides tools registered once (*static* tools), a toolkit
/// can hold [`ToolSource`]s whose tools change while it is shared (see
/// [`register_source`](Self::register_source)). What changes per session — which groups are active, the read
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
    pub(super) sources: Vec<Source>,
    /// The last resolved view of the sources' tools.
    view: RwLock<Option<Arc<View>>>,
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
                "sources",
                &self.sources.iter().map(|s| &s.source).collect::<Vec<_>>(),
            )
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
        self.check_group(group)?;
        let name = tool.name();
        if self.find_static(name).is_some() || name == super::RESET_TOOLS {
            return Err(Error::DuplicateTool {
                name: name.to_owned(),
            });
        }
        self.entries.push(Entry::new(tool, group)?);
        self.forget_view();
        Ok(self)
    }

    /// Adds a source of dynamic tools to `group` (`basic`, or a group
    /// declared with [`add_group`](Self::add_group) first).
    ///
    /// The toolkit asks the source for its current [`ToolSet`] each time it
    /// lists schemas, looks a tool up, checks permissions or calls, so the
    /// source's changes show without rebuilding the (shared) toolkit.
    /// Dynamic tools come after the static ones in
    /// [`schemas`](Self::schemas), source by source in registration order.
    /// A dynamic tool named like a static tool (or `reset_tools`), or like
    /// a tool of an earlier source, is ignored with a warning: the static
    /// tool, or the earlier source, wins.
    ///
    /// # Errors
    ///
    /// The group does not exist.
    ///
    /// [`ToolSet`]: super::ToolSet
    pub fn register_source(
        &mut self,
        source: Arc<dyn ToolSource>,
        group: &str,
    ) -> Result<&mut Self> {
        self.check_group(group)?;
        self.sources.push(Source {
            source,
            group: group.to_owned(),
        });
        self.forget_view();
        Ok(self)
    }

    fn check_group(&self, group: &str) -> Result<()> {
        if group != BASIC_GROUP && !self.groups.iter().any(|g| g.name == group) {
            return Err(Error::UnknownGroup {
                name: group.to_owned(),
            });
        }
        Ok(())
    }

    /// Drops the resolved view (the static names changed).
    fn forget_view(&mut self) {
        match self.view.get_mut() {
            Ok(view) => *view = None,
            Err(poisoned) => *poisoned.into_inner() = None,
        }
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
        self.forget_view();
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
            None if self.find_static(SkillViewer::NAME).is_some() => {
                return Err(Error::DuplicateTool {
                    name: SkillViewer::NAME.to_owned(),
                });
            }
            None => {
                self.viewer = Some(self.entries.len());
                self.entries.push(viewer);
            }
        }
        self.forget_view();
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

    /// A tool by name: a static one (whether or not its group is active;
    /// `reset_tools` included when groups exist) or one a source offers
    /// now.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.find(name).map(|found| found.tool)
    }

    pub(super) fn find_static(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .chain(self.reset.as_ref())
            .find(|e| e.tool.name() == name)
    }

    pub(super) fn find(&self, name: &str) -> Option<Found<'_>> {
        if let Some(entry) = self.find_static(name) {
            return Some(entry.into());
        }
        let view = self.view()?;
        view.entries()
            .find(|(_, e)| e.tool.name() == name)
            .and_then(|(i, e)| {
                Some(Found {
                    tool: e.tool.clone(),
                    group: &self.sources.get(i)?.group,
                    args: e.args.clone(),
                })
            })
    }

    /// The sources' tools now, collisions resolved; `None` without
    /// sources. Resolved again only when a source's snapshot changed.
    pub(super) fn view(&self) -> Option<Arc<View>> {
        if self.sources.is_empty() {
            return None;
        }
        let sets: Vec<_> = self.sources.iter().map(|s| s.source.snapshot()).collect();
        let cached = match self.view.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        if let Some(view) = cached
            && view.is_of(&sets)
        {
            return Some(view);
        }
        let statics: HashSet<&str> = self
            .entries
            .iter()
            .map(|e| e.tool.name())
            .chain([super::RESET_TOOLS])
            .collect();
        let view = Arc::new(View::resolve(sets, &statics));
        match self.view.write() {
            Ok(mut guard) => *guard = Some(view.clone()),
            Err(poisoned) => *poisoned.into_inner() = Some(view.clone()),
        }
        Some(view)
    }

    /// Names of the statically registered tools, in registration order
    /// (see [`all_tool_names`](Self::all_tool_names) for the dynamic ones
    /// too).
    #[must_use]
    pub fn tool_names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.tool.name()).collect()
    }

    /// Names of every tool now: the static ones in registration order,
    /// then the dynamic ones the sources offer (collisions resolved).
    #[must_use]
    pub fn all_tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .iter()
            .map(|e| e.tool.name().to_owned())
            .collect();
        if let Some(view) = self.view() {
            names.extend(view.entries().map(|(_, e)| e.tool.name().to_owned()));
        }
        names
    }

    /// The schemas for the model: `reset_tools` first when non-basic groups
    /// exist, then the static tools of the active groups in registration
    /// order, then the dynamic tools of the active groups (source by
    /// source, in each source's order).
    #[must_use]
    pub fn schemas(&self, context: &ToolContext) -> Vec<ToolSchema> {
        let mut schemas: Vec<ToolSchema> = self
            .reset
            .iter()
            .chain(self.entries.iter().filter(|e| context.is_active(&e.group)))
            .map(|e| e.tool.schema())
            .collect();
        if let Some(view) = self.view() {
            schemas.extend(
                view.entries()
                    .filter(|(i, _)| self.source_active(*i, context))
                    .map(|(_, e)| e.tool.schema()),
            );
        }
        schemas
    }

    /// Whether the group of source `index` is active in `context`.
    pub(super) fn source_active(&self, index: usize, context: &ToolContext) -> bool {
        self.sources
            .get(index)
            .is_some_and(|s| context.is_active(&s.group))
    }
}
