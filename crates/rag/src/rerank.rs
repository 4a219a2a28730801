//! [`LlmReranker`]: a chat model reads the candidates of a vector search
//! and picks the best, in order.
//!
//! Reranking is best-effort, as AgentScope documents it: a failed model
//! call or an answer that cannot be read leaves the vector order (cut to
//! `top_k`) and logs a warning; it never fails the search.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_message::{ContentBlock, MediaBlock, Msg, TextBlock};
use oxiscope_model::{ChatRequest, DynChatModel};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::store::VectorSearchResult;

/// The default rerank instruction (`{query}` and `{top_k}` are filled in;
/// the candidates follow it).
pub const DEFAULT_RERANK_PROMPT: &str = "You rank search results by how well they answer a query.\n\
Query: {query}\n\n\
The candidates follow, each introduced by its number in square brackets. \
Choose at most {top_k} candidates that help answer the query, best first. \
Answer with a JSON array of their numbers only, for example [3, 0, 5]; \
answer [] when none helps.";

/// Reranks search results with a chat model.
#[derive(Debug, Clone)]
pub struct LlmReranker {
    model: Arc<dyn DynChatModel>,
    prompt: String,
}

impl LlmReranker {
    /// A reranker asking `model` with [`DEFAULT_RERANK_PROMPT`].
    #[must_use]
    pub fn new(model: Arc<dyn DynChatModel>) -> Self {
        Self {
            model,
            prompt: DEFAULT_RERANK_PROMPT.to_owned(),
        }
    }

    /// Replaces the instruction; it must contain `{query}` and may contain
    /// `{top_k}`.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`] when `{query}` is missing.
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Result<Self> {
        let prompt = prompt.into();
        if !prompt.contains("{query}") {
            return Err(Error::InvalidParameters(
                "the rerank prompt must contain the {query} placeholder".into(),
            ));
        }
        self.prompt = prompt;
        Ok(self)
    }

    /// The `top_k` candidates the model prefers, in its order; the vector
    /// order cut to `top_k` when the model fails or answers something
    /// unreadable. Data (image) candidates are not shown to the model and
    /// are dropped.
    pub async fn rerank(
        &self,
        query: &str,
        candidates: Vec<VectorSearchResult>,
        top_k: usize,
    ) -> Vec<VectorSearchResult> {
        if candidates.len() <= 1 {
            return candidates.into_iter().take(top_k).collect();
        }
        match self.ask(query, &candidates, top_k).await {
            Ok(order) => {
                let mut slots: Vec<Option<VectorSearchResult>> =
                    candidates.into_iter().map(Some).collect();
                order
                    .into_iter()
                    .filter_map(|i| slots.get_mut(i).and_then(Option::take))
                    .take(top_k)
                    .collect()
            }
            Err(reason) => {
                tracing::warn!(%reason, "reranking failed; keeping the vector order");
                candidates.into_iter().take(top_k).collect()
            }
        }
    }

    /// The model's order, as candidate numbers.
    async fn ask(
        &self,
        query: &str,
        candidates: &[VectorSearchResult],
        top_k: usize,
    ) -> std::result::Result<Vec<usize>, String> {
        let instruction = self
            .prompt
            .replace("{top_k}", &top_k.to_string())
            .replace("{query}", query);
        let mut blocks = vec![ContentBlock::Text(TextBlock::new(instruction))];
        for (i, c) in candidates.iter().enumerate() {
            if let MediaBlock::Text(t) = &c.chunk.content {
                blocks.push(ContentBlock::Text(TextBlock::new(format!(
                    "\n[{i}] (source: {})\n{}",
                    c.chunk.source, t.text
                ))));
            }
        }
        let message = Msg::user("user", blocks).map_err(|e| e.to_string())?;
        let messages = [message];
        let request = ChatRequest {
            messages: &messages,
            tools: &[],
            tool_choice: None,
        };
        let mut stream = self
            .model
            .call_boxed(request, CancellationToken::new())
            .await
            .map_err(|e| e.to_string())?;
        let mut last = None;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| e.to_string())?;
            if chunk.is_last {
                last = Some(chunk);
            }
        }
        let answer = last.ok_or("the model ended without an answer")?;
        let text: String = answer
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        parse_order(&text, candidates.len())
    }
}

/// The first JSON array of candidate numbers in `text`; numbers out of
/// range and repeats are dropped.
fn parse_order(text: &str, candidates: usize) -> std::result::Result<Vec<usize>, String> {
    let start = text.find('[').ok_or("no JSON array in the answer")?;
    let end = text[start..]
        .find(']')
        .map(|e| start + e)
        .ok_or("no JSON array in the answer")?;
    let numbers: Vec<serde_json::Value> = serde_json::from_str(&text[start..=end])
        .map_err(|e| format!("the answer's array is not JSON: {e}"))?;
    let mut seen = vec![false; candidates];
    let mut order = Vec::new();
    for n in numbers {
        let i = n
            .as_u64()
            .or_else(|| n.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| format!("`{n}` is not a candidate number"))?;
        if let Some(s) = seen.get_mut(i)
            && !*s
        {
            *s = true;
            order.push(i);
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::parse_order;

    #[test]
    fn the_order_is_read_from_the_first_array() {
        assert_eq!(parse_order("Sure: [2, 0, 2, 9]", 3).unwrap(), [2, 0]);
        assert_eq!(parse_order("[\"1\"]", 3).unwrap(), [1]);
        assert!(parse_order("[]", 3).unwrap().is_empty());
        assert!(parse_order("no idea", 3).is_err());
        assert!(parse_order("[1, x]", 3).is_err());
        assert!(parse_order("[-1]", 3).is_err());
    }
}
