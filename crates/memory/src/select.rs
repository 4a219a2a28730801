//! Choosing relevant memories with a model call, and rendering memories for
//! the model (the injected hint and `memory_search` share the rendering).

use std::collections::HashSet;

use oxiscope_message::Msg;
use oxiscope_model::{DynChatModel, StructuredOptions, generate_structured_output};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::store::{MemoryFile, MemoryStore};
use crate::text::cut_to_tokens;

/// The field of the selection answer.
pub(crate) const SELECTED_FILES: &str = "selected_files";

/// The tool the selection call forces.
pub(crate) const SELECT_TOOL: &str = "select_memories";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            SELECTED_FILES: {
                "type": "array",
                "items": {"type": "string"},
                "description": "File names of the memories to use, relative to the memory \
                    directory (for example 'user_profile.md')."
            }
        },
        "required": [SELECTED_FILES]
    })
}

/// One line per file: `- [type] name (date): description`.
pub(crate) fn manifest(files: &[MemoryFile]) -> String {
    files
        .iter()
        .map(|f| {
            let kind = f
                .front
                .kind
                .as_deref()
                .map(|k| format!("[{k}] "))
                .unwrap_or_default();
            let date = date_of(f.modified).unwrap_or_else(|| "unknown".to_owned());
            let description = f
                .front
                .description
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            format!("- {kind}{} ({date}){description}", f.filename)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn date_of(modified: f64) -> Option<String> {
    if modified <= 0.0 || !modified.is_finite() {
        return None;
    }
    // Whole seconds are enough for a date.
    #[allow(clippy::cast_possible_truncation)]
    let secs = modified as i64;
    chrono::DateTime::from_timestamp(secs, 0).map(|t| t.format("%Y-%m-%d").to_string())
}

/// The files `model` picks for `query` among `files`, at most `max`, in
/// its order. Unknown names, repeats and any failure (a failed call, an
/// answer that does not fit the schema) give fewer or no files, never an
/// error (failures are logged).
pub(crate) async fn select(
    model: &dyn DynChatModel,
    instructions: &str,
    query: &str,
    files: &[MemoryFile],
    max: usize,
    cancel: CancellationToken,
) -> Vec<String> {
    if files.is_empty() || query.trim().is_empty() {
        return Vec::new();
    }
    let instructions = instructions.replace("{max_selected}", &max.to_string());
    let request = format!(
        "Request: {query}\n\nAvailable memories:\n{}",
        manifest(files)
    );
    let messages = [
        Msg::from_text("system", oxiscope_message::Role::System, instructions),
        Msg::from_text("user", oxiscope_message::Role::User, request),
    ];
    let options = StructuredOptions::default()
        .with_max_retries(0)
        .with_tool_name(SELECT_TOOL)
        .with_tool_description("Give the file names of the memories to use.")
        .with_cancel(cancel);
    let answer = match generate_structured_output(model, &messages, &schema(), options).await {
        Ok(answer) => answer,
        Err(e) => {
            tracing::warn!(error = %e, "memory selection failed; no memories are injected");
            return Vec::new();
        }
    };
    let known: HashSet<&str> = files.iter().map(|f| f.filename.as_str()).collect();
    let mut seen = HashSet::new();
    answer
        .value
        .get(SELECTED_FILES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| known.contains(name) && seen.insert(*name))
        .take(max)
        .map(str::to_owned)
        .collect()
}

/// How old a memory is, in words.
pub(crate) fn age(modified: f64, now: f64) -> Option<String> {
    if modified <= 0.0 || !modified.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let days = ((now - modified).max(0.0) / 86_400.0) as u64;
    Some(match days {
        0 => "today".to_owned(),
        1 => "yesterday".to_owned(),
        n => format!("{n} days ago"),
    })
}

/// The files' contents, each cut to `max_tokens` and headed by its path
/// and age, separated by `---` lines; `None` when none could be read.
pub(crate) async fn render(
    store: &MemoryStore,
    files: &[&MemoryFile],
    max_tokens: usize,
) -> Option<String> {
    let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
    let mut parts = Vec::new();
    for file in files {
        let text = match store.read_text(&file.path).await {
            Ok(text) => text,
            Err(reason) => {
                tracing::warn!(path = %file.path.display(), %reason, "skipping a memory file");
                continue;
            }
        };
        let body = cut_to_tokens(&text, max_tokens);
        let header = match age(file.modified, now) {
            Some(age) => format!("Memory (saved {age}): {}:", file.path.display()),
            None => format!("Memory: {}:", file.path.display()),
        };
        parts.push(format!("{header}\n\n{body}"));
    }
    (!parts.is_empty()).then(|| parts.join("\n\n---\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::FrontMatter;

    #[test]
    fn the_manifest_lists_type_date_and_description() {
        let files = [
            MemoryFile {
                filename: "user_profile.md".into(),
                path: "/m/user_profile.md".into(),
                front: FrontMatter {
                    name: Some("Profile".into()),
                    description: Some("Where the user lives".into()),
                    kind: Some("user".into()),
                },
                modified: 1_767_225_600.0,
            },
            MemoryFile {
                filename: "notes/misc.md".into(),
                path: "/m/notes/misc.md".into(),
                front: FrontMatter::default(),
                modified: 0.0,
            },
        ];
        assert_eq!(
            manifest(&files),
            "- [user] user_profile.md (2026-01-01): Where the user lives\n\
             - notes/misc.md (unknown)"
        );
    }

    #[test]
    fn ages_read_as_words() {
        let now = 10.0 * 86_400.0;
        assert_eq!(age(now - 5.0, now).as_deref(), Some("today"));
        assert_eq!(age(now - 86_400.0, now).as_deref(), Some("yesterday"));
        assert_eq!(
            age(now - 3.5 * 86_400.0, now).as_deref(),
            Some("3 days ago")
        );
        assert_eq!(age(now + 100.0, now).as_deref(), Some("today"));
        assert_eq!(age(0.0, now), None);
    }
}
