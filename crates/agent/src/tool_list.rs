//! The tools of a reasoning step as the `list_tools` middleware hook sees
//! them: the toolkit's offer, plus tools middlewares add, minus the ones
//! they take away.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use oxiscope_model::ToolSchema;
use oxiscope_tool::Tool;
use oxiscope_tool::args::ArgumentSchema;
use serde_json::Value;

/// A tool a middleware added, with its compiled argument schema.
struct Added {
    tool: Arc<dyn Tool>,
    args: ArgumentSchema,
}

/// The tools offered to the model for one reasoning step, as
/// [`Middleware::list_tools`](crate::Middleware::list_tools) sees them.
///
/// It starts as the agent's offer (the toolkit's tools of the active
/// groups, then `CompressContext` and the structured-output tool when they
/// apply). A middleware may [`add`](Self::add) tools of its own, which are
/// offered after the others and run when the model calls them (through the
/// permission check and the `on_acting` hooks, like toolkit tools), and
/// may [`retain`](Self::retain) a subset: a tool taken away is neither
/// offered nor run (a call to it gets a "doesn't exist" error result).
#[derive(Default)]
pub struct ToolList {
    schemas: Vec<ToolSchema>,
    added: Vec<Added>,
    removed: HashSet<String>,
}

impl fmt::Debug for ToolList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolList")
            .field("offered", &self.names().collect::<Vec<_>>())
            .field(
                "added",
                &self.added.iter().map(|a| a.tool.name()).collect::<Vec<_>>(),
            )
            .field("removed", &self.removed)
            .finish()
    }
}

impl ToolList {
    pub(crate) fn new(schemas: Vec<ToolSchema>) -> Self {
        Self {
            schemas,
            added: Vec::new(),
            removed: HashSet::new(),
        }
    }

    /// The schemas offered, in order.
    #[must_use]
    pub fn schemas(&self) -> &[ToolSchema] {
        &self.schemas
    }

    /// The names offered, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.schemas.iter().map(|s| s.function.name.as_str())
    }

    /// Whether a tool called `name` is offered.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.names().any(|n| n == name)
    }

    /// Offers each of `tools` that is not offered yet (a middleware that
    /// adds the same tools before every step), quietly skipping the rest.
    pub fn add_missing<'a>(&mut self, tools: impl IntoIterator<Item = &'a Arc<dyn Tool>>) {
        for tool in tools {
            if !self.contains(tool.name()) {
                self.add(Arc::clone(tool));
            }
        }
    }

    /// Offers `tool` (after the tools already offered) and runs it when the
    /// model calls it. Returns `false`, leaving the list unchanged, when a
    /// tool of that name is offered already (take it away with
    /// [`retain`](Self::retain) first to replace it) or when its input
    /// schema does not compile; both are logged.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> bool {
        let name = tool.name().to_owned();
        if self.contains(&name) {
            tracing::warn!(tool = %name, "a middleware's tool is left out: the name is taken");
            return false;
        }
        let args = match ArgumentSchema::new(tool.input_schema().clone()) {
            Ok(args) => args,
            Err(reason) => {
                tracing::warn!(tool = %name, %reason, "a middleware's tool is left out: invalid input schema");
                return false;
            }
        };
        self.removed.remove(&name);
        self.schemas.push(tool.schema());
        self.added.push(Added { tool, args });
        true
    }

    /// Keeps only the tools for which `keep` returns `true`; the others are
    /// no longer offered, nor run when called.
    pub fn retain(&mut self, mut keep: impl FnMut(&ToolSchema) -> bool) {
        let mut dropped = Vec::new();
        self.schemas.retain(|s| {
            let kept = keep(s);
            if !kept {
                dropped.push(s.function.name.clone());
            }
            kept
        });
        self.added
            .retain(|a| !dropped.iter().any(|d| d == a.tool.name()));
        self.removed.extend(dropped);
    }

    /// Whether a middleware took the tool `name` away.
    pub(crate) fn is_removed(&self, name: &str) -> bool {
        self.removed.contains(name)
    }

    /// The tool `name` a middleware added.
    pub(crate) fn added(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.added
            .iter()
            .find(|a| a.tool.name() == name)
            .map(|a| &a.tool)
    }

    /// Parses, repairs and validates the raw arguments of a call to the
    /// added tool `name`; `None` when no middleware added it.
    pub(crate) fn prepare_added(&self, name: &str, raw: &str) -> Option<Result<Value, String>> {
        let added = self.added.iter().find(|a| a.tool.name() == name)?;
        Some(added.args.prepare(name, raw).map_err(|e| e.to_string()))
    }
}
