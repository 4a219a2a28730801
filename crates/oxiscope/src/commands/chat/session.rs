//! Saved sessions: one agent state per name, as JSON in the data dir
//! (`sessions/<name>.json`, AgentScope's `AgentState` shape).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use oxiscope::render::{tool_call_title, without_reminders};
use oxiscope_agent::AgentState;
use oxiscope_message::{ContentBlock, Msg, Role};

/// The sessions folder of a data dir.
#[derive(Debug, Clone)]
pub(crate) struct SessionStore {
    dir: PathBuf,
}

/// One saved session, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionInfo {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
}

impl SessionStore {
    /// The store under `data_dir`.
    pub(crate) fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("sessions"),
        }
    }

    /// The file of session `name`, once the name is checked.
    pub(crate) fn path(&self, name: &str) -> anyhow::Result<PathBuf> {
        check_name(name)?;
        Ok(self.dir.join(format!("{name}.json")))
    }

    /// The saved state, or `None` for a new session.
    pub(crate) fn load(&self, name: &str) -> anyhow::Result<Option<AgentState>> {
        let path = self.path(name)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let state = serde_json::from_str(&text).with_context(|| {
            format!(
                "session {name:?} is not a valid agent state: {}",
                path.display()
            )
        })?;
        Ok(Some(state))
    }

    /// Saves the state (written to a temporary file, then renamed, so a
    /// crash never leaves half a session).
    pub(crate) fn save(&self, name: &str, state: &AgentState) -> anyhow::Result<()> {
        let path = self.path(name)?;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let tmp = self.dir.join(format!(".{name}.json.tmp"));
        let json = serde_json::to_vec_pretty(state)?;
        std::fs::write(&tmp, json).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }

    /// Deletes a session; `false` when there was none.
    pub(crate) fn remove(&self, name: &str) -> anyhow::Result<bool> {
        let path = self.path(name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot delete {}", path.display())),
        }
    }

    /// The saved sessions, by name.
    pub(crate) fn list(&self) -> anyhow::Result<Vec<SessionInfo>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", self.dir.display())),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry?;
            let path = entry.path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
                .filter(|n| check_name(n).is_ok())
            else {
                continue;
            };
            out.push(SessionInfo {
                name: name.to_owned(),
                path: path.clone(),
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// Session names are file names: letters, digits, `-`, `_` and `.`, not
/// starting with a dot.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    anyhow::ensure!(
        ok,
        "invalid session name {name:?}: use letters, digits, '-', '_' or '.'"
    );
    Ok(())
}

/// The session a console saves into.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) store: SessionStore,
    pub(crate) name: String,
}

impl Session {
    /// Saves the agent state under the session's name.
    pub(crate) fn save(&self, state: &AgentState) -> anyhow::Result<()> {
        self.store.save(&self.name, state)
    }
}

/// Messages as a person reads them: `name: text` per message, tool calls
/// as `● Bash(git status)`, results as `⎿ Bash (success)`; notes for the
/// model (hints, reminders) and empty messages are left out.
pub(crate) fn transcript(msgs: &[Msg]) -> String {
    let mut out = String::new();
    for msg in msgs {
        let name = if msg.name.is_empty() {
            format!("{:?}", msg.role).to_ascii_lowercase()
        } else {
            msg.name.clone()
        };
        let mut lines = Vec::new();
        for block in &msg.content {
            match block {
                ContentBlock::Text(t) => {
                    let text = without_reminders(&t.text);
                    if !text.trim().is_empty() {
                        lines.push(text.trim().to_owned());
                    }
                }
                ContentBlock::ToolCall(call) => lines.push(format!("● {}", tool_call_title(call))),
                ContentBlock::ToolResult(result) => {
                    let state = serde_json::to_value(result.state)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    lines.push(format!("  ⎿ {} ({state})", result.name));
                }
                ContentBlock::Data(_) => lines.push("[data]".to_owned()),
                ContentBlock::Thinking(_) | ContentBlock::Hint(_) => {}
            }
        }
        if !lines.is_empty() {
            out.push_str(&format!("{name}: {}\n", lines.join("\n")));
        }
    }
    out
}

/// The last exchange of a context: from the last message the user typed
/// to the end.
pub(crate) fn last_exchange(msgs: &[Msg]) -> &[Msg] {
    let typed = |m: &Msg| m.role == Role::User && !without_reminders(&m.text("")).trim().is_empty();
    let start = msgs.iter().rposition(typed).unwrap_or(0);
    &msgs[start..]
}

#[cfg(test)]
mod tests {
    use oxiscope_message::{ToolCallBlock, ToolResultBlock, ToolResultState};
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_transcript_reads_as_a_conversation_and_the_last_exchange_is_the_tail() {
        let mut reply = Msg::from_text("Oxiscope", Role::Assistant, "Done.");
        reply.content.insert(
            0,
            ContentBlock::ToolCall(ToolCallBlock::new("c1", "Bash", r#"{"command":"ls"}"#)),
        );
        reply.content.insert(
            1,
            ContentBlock::ToolResult(ToolResultBlock::new(
                "c1",
                "Bash",
                oxiscope_message::RichContent::Text(
                    "<system-reminder>The user did not allow this call.</system-reminder>".into(),
                ),
                ToolResultState::Denied,
            )),
        );
        let msgs = vec![
            Msg::from_text("user", Role::User, "first"),
            Msg::from_text("Oxiscope", Role::Assistant, "One."),
            Msg::from_text("user", Role::User, "list files"),
            Msg::from_text(
                "user",
                Role::User,
                "<system-reminder>time</system-reminder>",
            ),
            reply,
        ];
        assert_eq!(
            transcript(last_exchange(&msgs)),
            "user: list files\nOxiscope: ● Bash(ls)\n  ⎿ Bash (denied)\nDone.\n"
        );
        assert!(transcript(&msgs).starts_with("user: first\nOxiscope: One.\n"));
    }
}
