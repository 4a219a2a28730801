//! [`RagMiddleware`]: knowledge-base search in the agent loop, in
//! AgentScope's two modes.
//!
//! - **agentic** (the default): a `search_knowledge` tool is offered (via
//!   `list_tools`, so nothing has to be registered by hand); the model
//!   decides when and what to search, optionally naming the knowledge
//!   bases. Its result is the numbered hit list `[N] (source: file)\n…`,
//!   or `No relevant content found.`.
//! - **static**: before the first reasoning step of a reply, the reply's
//!   input messages (`name: text`, read when the reply starts) are the
//!   queries; the hits are wrapped in [`DEFAULT_HINT_TEMPLATE`] and given to
//!   the model as a hint block (source `{"label": "KnowledgeBase",
//!   "sublabel": ""}`), in one hook (`on_prepare_reasoning`, as a
//!   [`PrepHint`] with the flags below). With `persist_hint` the hint is
//!   recorded in the reply (and stays in the context); without it, it is
//!   only added to that one model request. With `emit_hint_event` the
//!   consumer also gets a `HINT_BLOCK` event.
//!
//! A search failure in static mode is logged and the step goes on without
//! a hint; in agentic mode the tool answers `Search failed: …` as an error
//! result. An optional [`LlmReranker`] picks the final `top_k` of
//! `rerank_candidate_k` candidates (default `2 * top_k`, at most 50).
//!
//! One instance serves one agent (its static-mode scratch state follows
//! the agent's one running reply), as in AgentScope.

mod retrieve;
mod tool;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::future::BoxFuture;
use oxiscope_agent::{
    AgentState, EventStream, Middleware, PrepHint, ReasoningPrep, ReplyCall, ReplyInput, ReplyNext,
    ToolList,
};
use oxiscope_message::{ContentBlock, RichContent};
use serde::{Deserialize, Serialize};

pub use tool::SEARCH_KNOWLEDGE_TOOL;

use crate::error::{Error, Result};
use crate::knowledge::KnowledgeBase;
use crate::rerank::LlmReranker;
use retrieve::{Retrieval, format_results, wrap_hint};

/// The default wrapper of static-mode hits (`{context}` is replaced).
pub const DEFAULT_HINT_TEMPLATE: &str = "<system-reminder>The following content is retrieved from \
the knowledge base(s) and may be helpful for the current request:\n<content>{context}</content>\
</system-reminder>";

/// The `source` of static-mode hint blocks.
pub const HINT_SOURCE: &str = r#"{"label": "KnowledgeBase", "sublabel": ""}"#;

/// How the middleware brings knowledge in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RagMode {
    /// Search before the first reasoning step of each reply, inject a hint.
    Static,
    /// Offer the `search_knowledge` tool.
    #[default]
    Agentic,
}

/// The parameters of [`RagMiddleware`], with AgentScope's names and
/// defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RagParameters {
    /// The mode (default agentic).
    pub mode: RagMode,
    /// Most hits per search, across knowledge bases and queries (1..=50,
    /// default 5).
    pub top_k: usize,
    /// Hits scoring less are dropped (`None`: keep all).
    pub score_threshold: Option<f32>,
    /// Candidates the reranker reads (at least `top_k`, default
    /// `2 * top_k`, at most 50); ignored without a reranker.
    pub rerank_candidate_k: Option<usize>,
    /// Static mode: also send the hint to the consumer as a `HINT_BLOCK`
    /// event (default true).
    pub emit_hint_event: bool,
    /// Static mode: keep the hint in the context after the step (default
    /// false).
    pub persist_hint: bool,
    /// Static mode: the hint's wrapper, with exactly one `{context}`.
    #[serde(skip_serializing)]
    pub hint_template: String,
}

impl Default for RagParameters {
    fn default() -> Self {
        Self {
            mode: RagMode::Agentic,
            top_k: 5,
            score_threshold: None,
            rerank_candidate_k: None,
            emit_hint_event: true,
            persist_hint: false,
            hint_template: DEFAULT_HINT_TEMPLATE.to_owned(),
        }
    }
}

impl RagParameters {
    /// Checks the ranges.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`] for `top_k` outside 1..=50, a
    /// `rerank_candidate_k` below `top_k` or above 50, or a template
    /// without exactly one `{context}`.
    pub fn validate(&self) -> Result<()> {
        if !(1..=50).contains(&self.top_k) {
            return Err(Error::InvalidParameters(format!(
                "top_k must be between 1 and 50, got {}",
                self.top_k
            )));
        }
        if let Some(k) = self.rerank_candidate_k
            && (k < self.top_k || k > retrieve::MAX_RERANK_CANDIDATES)
        {
            return Err(Error::InvalidParameters(format!(
                "rerank_candidate_k must be between top_k ({}) and 50, got {k}",
                self.top_k
            )));
        }
        let count = self.hint_template.matches("{context}").count();
        if count != 1 {
            return Err(Error::InvalidParameters(format!(
                "hint_template must contain exactly one '{{context}}' placeholder; found {count}"
            )));
        }
        Ok(())
    }
}

/// What the middleware shares with its tool.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) knowledge_bases: Vec<KnowledgeBase>,
    pub(crate) parameters: RagParameters,
    pub(crate) reranker: Option<LlmReranker>,
}

impl Shared {
    pub(crate) fn retrieval(&self) -> Retrieval<'_> {
        Retrieval {
            top_k: self.parameters.top_k,
            score_threshold: self.parameters.score_threshold,
            rerank_candidate_k: self.parameters.rerank_candidate_k,
            reranker: self.reranker.as_ref(),
        }
    }
}

/// Static mode's state: the input of the reply that starts, as queries
/// (taken by its first reasoning step).
#[derive(Debug, Default)]
struct Scratch {
    queries: Vec<String>,
}

/// Knowledge-base search for an agent; see the module docs.
#[derive(Debug)]
pub struct RagMiddleware {
    shared: Arc<Shared>,
    scratch: Arc<Mutex<Scratch>>,
}

impl RagMiddleware {
    /// A middleware over `knowledge_bases` with `parameters`.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`] (see [`RagParameters::validate`]).
    pub fn new(knowledge_bases: Vec<KnowledgeBase>, parameters: RagParameters) -> Result<Self> {
        parameters.validate()?;
        Ok(Self {
            shared: Arc::new(Shared {
                knowledge_bases,
                parameters,
                reranker: None,
            }),
            scratch: Arc::default(),
        })
    }

    /// Reranks every search with `reranker`.
    #[must_use]
    pub fn with_reranker(self, reranker: LlmReranker) -> Self {
        let Shared {
            knowledge_bases,
            parameters,
            ..
        } = Arc::unwrap_or_clone(self.shared);
        Self {
            shared: Arc::new(Shared {
                knowledge_bases,
                parameters,
                reranker: Some(reranker),
            }),
            scratch: self.scratch,
        }
    }

    /// The parameters.
    #[must_use]
    pub fn parameters(&self) -> &RagParameters {
        &self.shared.parameters
    }

    /// The knowledge bases.
    #[must_use]
    pub fn knowledge_bases(&self) -> &[KnowledgeBase] {
        &self.shared.knowledge_bases
    }

    fn scratch(&self) -> MutexGuard<'_, Scratch> {
        lock(&self.scratch)
    }

    fn is_static(&self) -> bool {
        self.shared.parameters.mode == RagMode::Static
    }

    /// Searches for the reply's input and returns the hint, if any hit.
    async fn static_hint(&self, queries: &[String]) -> Option<PrepHint> {
        let targets: Vec<&KnowledgeBase> = self.shared.knowledge_bases.iter().collect();
        let hits = match self.shared.retrieval().run(&targets, queries).await {
            Ok(hits) => hits,
            Err(e) => {
                tracing::warn!(error = %e, "knowledge-base search failed; going on without it");
                return None;
            }
        };
        if hits.is_empty() {
            return None;
        }
        let params = &self.shared.parameters;
        let hint: RichContent = wrap_hint(&params.hint_template, format_results(&hits));
        Some(
            PrepHint::new(hint)
                .with_source(Some(HINT_SOURCE.to_owned()))
                .with_emit_event(params.emit_hint_event)
                .with_persist(params.persist_hint),
        )
    }
}

fn lock(m: &Mutex<Scratch>) -> MutexGuard<'_, Scratch> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The reply's input messages as queries: each text block, the first of a
/// message prefixed with its sender's name (as AgentScope does).
fn queries_of(input: &ReplyInput) -> Vec<String> {
    let ReplyInput::Msgs(msgs) = input else {
        return Vec::new();
    };
    let mut queries = Vec::new();
    for msg in msgs {
        let mut first = true;
        for block in &msg.content {
            if let ContentBlock::Text(t) = block {
                if first {
                    queries.push(format!("{}: {}", msg.name, t.text));
                    first = false;
                } else {
                    queries.push(t.text.clone());
                }
            }
        }
    }
    queries
}

impl Middleware for RagMiddleware {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        if self.shared.parameters.mode == RagMode::Agentic {
            tools.add(Arc::new(tool::SearchKnowledgeTool::new(Arc::clone(
                &self.shared,
            ))));
        }
    }

    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        if self.is_static() {
            self.scratch().queries = queries_of(&call.input);
        }
        next.run(call)
    }

    fn on_prepare_reasoning<'a>(&'a self, step: &'a mut ReasoningPrep<'_>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if !self.is_static() || step.cur_iter != 0 {
                return;
            }
            let queries = std::mem::take(&mut self.scratch().queries);
            if queries.is_empty() {
                return;
            }
            if let Some(hint) = self.static_hint(&queries).await {
                step.hints.push(hint);
            }
        })
    }
}
