//! The [`Toolkit`]: registered tools, dynamic tool sources, groups, skills
//! and middleware, and the one entry point the agent loop calls.

mod dispatch;
mod group;
mod registry;
mod reset;
mod source;

pub use group::ToolGroup;
pub use registry::Toolkit;
pub use source::{DynamicTools, ToolSet, ToolSource};

/// The group that is always active; tools registered without a group go
/// here.
pub const BASIC_GROUP: &str = "basic";

/// The name of the meta tool that switches groups on and off.
pub const RESET_TOOLS: &str = "reset_tools";
