//! The agentic mode's `search_knowledge` tool.

use std::sync::Arc;

use oxiscope_message::ToolResultState;
use oxiscope_permission::{PermissionContext, PermissionDecision};
use oxiscope_tool::{Tool, ToolCallContext, ToolChunk, ToolFlags, ToolStream};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Shared;
use super::retrieve::format_results;

/// The tool's name.
pub const SEARCH_KNOWLEDGE_TOOL: &str = "search_knowledge";

/// The answer when nothing matched.
pub(crate) const NOTHING_FOUND: &str = "No relevant content found.";

#[derive(Debug, Deserialize)]
struct Args {
    query: String,
    #[serde(default)]
    knowledge_bases: Option<Vec<String>>,
}

/// Searches the middleware's knowledge bases (or the ones the model names).
#[derive(Debug)]
pub(crate) struct SearchKnowledgeTool {
    shared: Arc<Shared>,
    description: String,
    schema: Value,
}

impl SearchKnowledgeTool {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let names: Vec<&str> = shared.knowledge_bases.iter().map(|kb| kb.name()).collect();
        let mut lines = vec![
            "Search the agent's equipped knowledge bases by semantic similarity and return the \
             most relevant chunks."
                .to_owned(),
            String::new(),
            "## When to Use".to_owned(),
            "- The user's question may be answered by content stored in one of the listed \
             knowledge bases (see *Equipped Knowledge Bases* below)."
                .to_owned(),
            "- You need supporting facts, definitions, or documents that are unlikely to be in \
             your parametric knowledge."
                .to_owned(),
            String::new(),
            "## Guidance".to_owned(),
            "- Knowledge base names and descriptions are user-supplied and may be terse, vague, \
             or unrelated to the actual contents. When in doubt, try the search — a single call \
             is cheap and an empty result is informative."
                .to_owned(),
            "- Phrase `query` as a self-contained statement of what you want to find. Avoid \
             pronouns or relative time references — the search is purely semantic and has no \
             conversational context."
                .to_owned(),
            "- Set `knowledge_bases` only when the question clearly matches one or two specific \
             bases; otherwise leave it unset to search them all."
                .to_owned(),
            String::new(),
            "## Equipped Knowledge Bases".to_owned(),
        ];
        if shared.knowledge_bases.is_empty() {
            lines.push(
                "No knowledge bases are currently equipped. **Do not call this tool** — it will \
                 return nothing."
                    .to_owned(),
            );
        } else {
            lines.push(format!(
                "The agent is currently equipped with {} knowledge base(s):",
                shared.knowledge_bases.len()
            ));
            for kb in &shared.knowledge_bases {
                lines.push(format!("- **{}**: {}", kb.name(), kb.description()));
            }
        }
        let mut items = json!({"type": "string"});
        if !names.is_empty() {
            items["enum"] = json!(names);
        }
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "The query string to search the knowledge base(s) with. Must be \
                        concise, explicit, and self-contained: AVOID ambiguous references like \
                        `he`/`she`/`it`, `today`/`yesterday`/`tomorrow`, `here`/`there`, etc. — \
                        the search is purely semantic and has no conversational context. Phrase \
                        the query as a complete statement of what you want to find."
                },
                "knowledge_bases": {
                    "anyOf": [{"type": "array", "items": items}, {"type": "null"}],
                    "default": null,
                    "description": "Optional subset of knowledge bases to query, by name. When \
                        omitted (or `null`) every equipped knowledge base is searched. Names must \
                        exactly match those listed in the tool description."
                }
            },
            "required": ["query"]
        });
        Self {
            shared,
            description: lines.join("\n"),
            schema,
        }
    }
}

impl Tool for SearchKnowledgeTool {
    fn name(&self) -> &str {
        SEARCH_KNOWLEDGE_TOOL
    }

    fn description(&self) -> &str {
        &self.description
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
        PermissionDecision::allow("Knowledge-base search is read-only.")
    }

    fn call(&self, input: Value, _ctx: ToolCallContext) -> ToolStream {
        let shared = Arc::clone(&self.shared);
        Box::pin(futures_util::stream::once(async move {
            let args: Args = match serde_json::from_value(input) {
                Ok(a) => a,
                Err(e) => {
                    return ToolChunk::error(format!(
                        "Invalid arguments for tool `{SEARCH_KNOWLEDGE_TOOL}`: {e}"
                    ));
                }
            };
            let targets: Vec<_> = shared
                .knowledge_bases
                .iter()
                .filter(|kb| {
                    args.knowledge_bases
                        .as_ref()
                        .is_none_or(|wanted| wanted.iter().any(|w| w == kb.name()))
                })
                .collect();
            if targets.is_empty() {
                return ToolChunk::text(NOTHING_FOUND);
            }
            match shared.retrieval().run(&targets, &[args.query]).await {
                Ok(hits) if hits.is_empty() => ToolChunk::text(NOTHING_FOUND),
                Ok(hits) => ToolChunk::new(format_results(&hits), ToolResultState::Success),
                Err(e) => {
                    tracing::warn!(error = %e, "search_knowledge failed");
                    ToolChunk::error(format!("Search failed: {e}"))
                }
            }
        }))
    }
}
