//! Named groups of tools.

/// A named bundle of tools the model switches on and off with
/// `reset_tools`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolGroup {
    /// The group name; it is the parameter name in `reset_tools`.
    pub name: String,
    /// What the group is for, shown to the model in `reset_tools`.
    pub description: String,
    /// How to use the group's tools; returned when the group is activated.
    pub instructions: String,
}

impl ToolGroup {
    /// A group without instructions.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            instructions: String::new(),
        }
    }

    /// Sets the instructions returned on activation.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }
}
