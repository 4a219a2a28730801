//! The `memory_search` tool (modes `agent_control` and `both`): a word
//! search over the memory files' front matter and text, no model call.
//!
//! The query is split into words (letters and digits); a file scores three
//! points for each occurrence of a word in its file name, name or
//! description and one for each in its text. The best `limit` files with a
//! score are returned whole (each cut to `retrieval_max_tokens_per_md`),
//! rendered like the injected memories.

use std::sync::Arc;

use oxiscope_permission::{PermissionContext, PermissionDecision};
use oxiscope_tool::{Tool, ToolCallContext, ToolChunk, ToolFlags, ToolStream};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::middleware::Core;
use crate::store::MemoryFile;

/// The tool's name.
pub const MEMORY_SEARCH_TOOL: &str = "memory_search";

/// The answer when nothing matched.
pub const NOTHING_FOUND: &str = "No matching memories found.";

/// The most files one search returns.
const MAX_LIMIT: usize = 50;

#[derive(Debug, Deserialize)]
struct Args {
    query: String,
    #[serde(default)]
    limit: Option<i64>,
}

/// Searches the memory files; see the module docs.
#[derive(Debug)]
pub(crate) struct MemorySearchTool {
    core: Arc<Core>,
    schema: Value,
}

impl MemorySearchTool {
    pub(crate) fn new(core: Arc<Core>) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Words to look for in the memory files: specific names, \
                        terms or phrases rather than whole sentences."
                },
                "limit": {
                    "type": "integer",
                    "default": core.params.top_k,
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "The most memories to return."
                }
            },
            "required": ["query"]
        });
        Self { core, schema }
    }
}

/// The words of `query`, lower-cased, without repeats.
pub(crate) fn words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// The score of a file with `head` (file name, name, description) and
/// `text` for `words`.
pub(crate) fn score(words: &[String], head: &str, text: &str) -> usize {
    let head = head.to_lowercase();
    let text = text.to_lowercase();
    words
        .iter()
        .map(|w| 3 * head.matches(w.as_str()).count() + text.matches(w.as_str()).count())
        .sum()
}

fn head_of(file: &MemoryFile) -> String {
    [
        Some(file.filename.as_str()),
        file.front.name.as_deref(),
        file.front.description.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
}

impl Core {
    /// Runs one search; the tool's answer.
    async fn search(&self, query: &str, limit: usize) -> ToolChunk {
        let words = words(query);
        if words.is_empty() {
            return ToolChunk::error("Error: the query has no words to search for.");
        }
        let params = &self.params;
        let files = self
            .store
            .list(
                params.retrieval_max_files,
                params.retrieval_max_tokens_per_frontmatter,
            )
            .await;
        let mut scored = Vec::new();
        for file in &files {
            let Ok(text) = self.store.read_text(&file.path).await else {
                continue;
            };
            let points = score(&words, &head_of(file), &text);
            if points > 0 {
                scored.push((points, file));
            }
        }
        // Stable: equal scores keep the listing's newest-first order.
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        let chosen: Vec<&MemoryFile> = scored.into_iter().take(limit).map(|(_, f)| f).collect();
        match crate::select::render(&self.store, &chosen, params.retrieval_max_tokens_per_md).await
        {
            Some(text) => ToolChunk::text(text),
            None => ToolChunk::text(NOTHING_FOUND),
        }
    }
}

impl Tool for MemorySearchTool {
    fn name(&self) -> &str {
        MEMORY_SEARCH_TOOL
    }

    fn description(&self) -> &str {
        "Search your long-term memory files (the Markdown files listed in MEMORY.md) for words \
         and return the best-matching memories in full. Use it when earlier conversations may \
         hold something useful for the current request."
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        ToolFlags {
            concurrency_safe: true,
            read_only: true,
            ..ToolFlags::default()
        }
    }

    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::allow("Searching the memory files only reads them.")
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        let core = Arc::clone(&self.core);
        Box::pin(futures_util::stream::once(async move {
            let args: Args = match serde_json::from_value(input) {
                Ok(a) => a,
                Err(e) => {
                    return ToolChunk::error(format!(
                        "Invalid arguments for tool `{MEMORY_SEARCH_TOOL}`: {e}"
                    ));
                }
            };
            let limit = match args.limit {
                None => core.params.top_k,
                Some(n) if (1..=MAX_LIMIT as i64).contains(&n) => {
                    usize::try_from(n).unwrap_or(MAX_LIMIT)
                }
                Some(n) => {
                    return ToolChunk::error(format!(
                        "Error: limit must be between 1 and {MAX_LIMIT}, got {n}."
                    ));
                }
            };
            core.search(&args.query, limit).await
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lower_cased_and_unique() {
        assert_eq!(
            words("Hangzhou, answer-style; hangzhou!"),
            ["hangzhou", "answer", "style"]
        );
        assert!(words(" ,;- ").is_empty());
    }

    #[test]
    fn the_head_weighs_more_than_the_text() {
        let w = words("tea");
        assert_eq!(score(&w, "tea.md", "coffee"), 3);
        assert_eq!(score(&w, "coffee.md", "tea and more tea"), 2);
        assert_eq!(score(&w, "x", "y"), 0);
    }
}
