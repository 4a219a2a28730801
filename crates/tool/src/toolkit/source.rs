//! Dynamic tools: sets of tools that change while the toolkit is shared.
//!
//! A [`ToolSource`] hands the toolkit an immutable [`ToolSet`] snapshot
//! each time it is asked; whoever owns the source swaps in a new set when
//! its tools change (an MCP server announcing a new tool list, a plugin
//! being loaded). Argument schemas are compiled once, when a set is built,
//! never per call. [`DynamicTools`] is the ready-made source: a shared cell
//! holding the current set.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, RwLock};

use crate::args::ArgumentSchema;
use crate::error::Error;
use crate::tool::Tool;

/// A set of tools whose membership changes at run time.
///
/// The toolkit calls [`snapshot`](Self::snapshot) on every
/// [`schemas`](super::Toolkit::schemas), lookup, permission check and call,
/// so it must be cheap and must never block for long: clone an `Arc`, do
/// not talk to a server. Return the *same* `Arc` while the set is
/// unchanged: the toolkit recomputes (and warns about) name collisions only
/// when a snapshot is a different allocation than the last one it saw.
pub trait ToolSource: Send + Sync + fmt::Debug {
    /// The tools now.
    fn snapshot(&self) -> Arc<ToolSet>;
}

/// One tool of a [`ToolSet`] with its compiled argument schema.
pub(super) struct SetEntry {
    pub(super) tool: Arc<dyn Tool>,
    pub(super) args: Arc<ArgumentSchema>,
}

/// An immutable set of tools with their argument schemas compiled.
///
/// Built once per change of a [`ToolSource`]; a tool whose input schema
/// does not compile, or whose name repeats an earlier tool of the set, is
/// left out with a warning and listed in [`rejected`](Self::rejected).
#[derive(Default)]
pub struct ToolSet {
    entries: Vec<SetEntry>,
    rejected: Vec<Error>,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names())
            .field("rejected", &self.rejected)
            .finish()
    }
}

impl ToolSet {
    /// Compiles the argument schemas of `tools`, keeping their order.
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        let mut entries: Vec<SetEntry> = Vec::new();
        let mut rejected = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for tool in tools {
            let name = tool.name().to_owned();
            if seen.contains(&name) {
                tracing::warn!(tool = %name, "dynamic tool left out: its name repeats in its set");
                rejected.push(Error::DuplicateTool { name });
                continue;
            }
            match ArgumentSchema::new(tool.input_schema().clone()) {
                Ok(args) => {
                    seen.insert(name);
                    entries.push(SetEntry {
                        tool,
                        args: Arc::new(args),
                    });
                }
                Err(reason) => {
                    tracing::warn!(tool = %name, "dynamic tool left out: invalid input schema: {reason}");
                    rejected.push(Error::InvalidSchema { tool: name, reason });
                }
            }
        }
        Self { entries, rejected }
    }

    /// An empty set.
    #[must_use]
    pub fn empty() -> Self {
        Self::default()
    }

    /// How many tools the set holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set holds no tool.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tools, in order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|e| &e.tool)
    }

    /// The tool names, in order.
    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.tool.name()).collect()
    }

    /// The tool called `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.entries
            .iter()
            .find(|e| e.tool.name() == name)
            .map(|e| &e.tool)
    }

    /// Why tools given to [`new`](Self::new) were left out.
    #[must_use]
    pub fn rejected(&self) -> &[Error] {
        &self.rejected
    }

    pub(super) fn entries(&self) -> &[SetEntry] {
        &self.entries
    }
}

/// A [`ToolSource`] whose set is replaced by hand.
///
/// Cheap to clone: clones share the set, so one clone can live in a
/// toolkit (in an `Arc<Toolkit>`) while another publishes changes. Readers
/// take a snapshot under a read lock that is held only to clone an `Arc`;
/// a replacement compiles the new set before taking the write lock.
#[derive(Clone, Default)]
pub struct DynamicTools {
    current: Arc<RwLock<Arc<ToolSet>>>,
}

impl fmt::Debug for DynamicTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicTools")
            .field("tools", &self.current().names())
            .finish()
    }
}

impl DynamicTools {
    /// A source with no tools yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A source starting with `tools`.
    pub fn with_tools(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        let source = Self::new();
        source.replace(tools);
        source
    }

    /// Replaces the set by `tools` (see [`ToolSet::new`] for what is left
    /// out) and returns the new set.
    pub fn replace(&self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Arc<ToolSet> {
        let set = Arc::new(ToolSet::new(tools));
        self.publish(set.clone());
        set
    }

    /// Makes `set` the current set.
    pub fn publish(&self, set: Arc<ToolSet>) {
        match self.current.write() {
            Ok(mut guard) => *guard = set,
            Err(poisoned) => *poisoned.into_inner() = set,
        }
    }

    /// Withdraws every tool.
    pub fn clear(&self) {
        self.publish(Arc::new(ToolSet::empty()));
    }

    /// The current set.
    #[must_use]
    pub fn current(&self) -> Arc<ToolSet> {
        match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl ToolSource for DynamicTools {
    fn snapshot(&self) -> Arc<ToolSet> {
        self.current()
    }
}

/// A source registered in a toolkit.
pub(super) struct Source {
    pub(super) source: Arc<dyn ToolSource>,
    pub(super) group: String,
}

/// The dynamic tools visible at one moment: the snapshots of all sources
/// and which of their entries survive the collision rules.
pub(super) struct View {
    pub(super) sets: Vec<Arc<ToolSet>>,
    /// `(source index, entry index)` of each visible tool, in order.
    pub(super) visible: Vec<(usize, usize)>,
}

impl View {
    /// Resolves `sets` (one per source, in registration order) against the
    /// static names `statics`: a dynamic tool whose name is taken — by a
    /// static tool or by a tool of an earlier source — is ignored with a
    /// warning.
    pub(super) fn resolve(sets: Vec<Arc<ToolSet>>, statics: &HashSet<&str>) -> Self {
        let mut visible = Vec::new();
        {
            let mut dynamic: HashSet<&str> = HashSet::new();
            for (i, set) in sets.iter().enumerate() {
                for (j, entry) in set.entries().iter().enumerate() {
                    let name = entry.tool.name();
                    if statics.contains(name) {
                        tracing::warn!(
                            tool = %name,
                            "dynamic tool ignored: a static tool has the same name"
                        );
                    } else if !dynamic.insert(name) {
                        tracing::warn!(
                            tool = %name,
                            "dynamic tool ignored: an earlier tool source has a tool of the same name"
                        );
                    } else {
                        visible.push((i, j));
                    }
                }
            }
        }
        Self { sets, visible }
    }

    /// Whether the view was built from exactly these snapshots.
    pub(super) fn is_of(&self, sets: &[Arc<ToolSet>]) -> bool {
        self.sets.len() == sets.len() && self.sets.iter().zip(sets).all(|(a, b)| Arc::ptr_eq(a, b))
    }

    /// The visible entries with the index of their source.
    pub(super) fn entries(&self) -> impl Iterator<Item = (usize, &SetEntry)> {
        self.visible
            .iter()
            .filter_map(|&(i, j)| self.sets.get(i)?.entries().get(j).map(|e| (i, e)))
    }
}
