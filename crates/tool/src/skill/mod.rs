//! Skills: markdown instructions in `SKILL.md` files, read by the model
//! through the `Skill` viewer tool.

mod loader;
mod viewer;

use std::path::PathBuf;

pub use loader::SkillLoader;
pub(crate) use viewer::SkillViewer;

/// One skill: a name, a one-line description and the full markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The name the model asks the viewer for.
    pub name: String,
    /// When to use the skill; listed in the system prompt.
    pub description: String,
    /// The whole `SKILL.md`, front matter included.
    pub content: String,
    /// The skill's directory, when loaded from disk.
    pub dir: Option<PathBuf>,
}

impl Skill {
    /// A skill defined in memory.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            content: content.into(),
            dir: None,
        }
    }

    /// A skill from the text of a `SKILL.md` (front matter with `name` and
    /// `description`), found in `dir`.
    ///
    /// # Errors
    /// Why the front matter cannot be used, for the caller to report.
    pub fn from_markdown(content: String, dir: Option<PathBuf>) -> Result<Self, String> {
        let (name, description) = loader::parse_front_matter(&content)?;
        Ok(Self {
            name,
            description,
            content,
            dir,
        })
    }
}

/// The system-prompt fragment listing `skills`, or `None` when empty.
pub(crate) fn prompt_fragment(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = String::from(
        "# Skills\n\nSkills are written instructions for particular kinds of work. They are \
         not tools: to use one, first call the `Skill` tool with its name to read the full \
         instructions, then follow them with your other tools.\n\nAvailable skills:\n",
    );
    for skill in skills {
        text.push_str(&format!("- {}: {}", skill.name, skill.description));
        if let Some(dir) = &skill.dir {
            text.push_str(&format!(" (directory: {})", dir.display()));
        }
        text.push('\n');
    }
    Some(text)
}
