//! Searching several knowledge bases at once, and rendering the hits for
//! the model (shared by the static hint and the `search_knowledge` tool).

use futures_util::future::try_join_all;
use oxiscope_message::{MediaBlock, RichContent, TextBlock};

use crate::error::Result;
use crate::knowledge::KnowledgeBase;
use crate::rerank::LlmReranker;
use crate::store::VectorSearchResult;

/// The most candidates a reranker reads.
pub(crate) const MAX_RERANK_CANDIDATES: usize = 50;

/// Searches every knowledge base concurrently with `queries` and merges the
/// hits: sorted by score, cut to `top_k` (scores of different embedding
/// models are compared as they are, as AgentScope does).
pub(crate) async fn search_across(
    knowledge_bases: &[&KnowledgeBase],
    queries: &[String],
    top_k: usize,
    score_threshold: Option<f32>,
) -> Result<Vec<VectorSearchResult>> {
    if queries.is_empty() || knowledge_bases.is_empty() {
        return Ok(Vec::new());
    }
    let per_kb = try_join_all(
        knowledge_bases
            .iter()
            .map(|kb| kb.search(queries, top_k, score_threshold)),
    )
    .await?;
    let mut merged: Vec<VectorSearchResult> = per_kb.into_iter().flatten().collect();
    merged.sort_by(|a, b| b.score.total_cmp(&a.score));
    merged.truncate(top_k);
    Ok(merged)
}

/// What one retrieval needs besides the knowledge bases and the queries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retrieval<'a> {
    pub(crate) top_k: usize,
    pub(crate) score_threshold: Option<f32>,
    pub(crate) rerank_candidate_k: Option<usize>,
    pub(crate) reranker: Option<&'a LlmReranker>,
}

impl Retrieval<'_> {
    /// Searches, then lets the reranker (if any) pick `top_k` of
    /// `rerank_candidate_k` candidates.
    pub(crate) async fn run(
        &self,
        knowledge_bases: &[&KnowledgeBase],
        queries: &[String],
    ) -> Result<Vec<VectorSearchResult>> {
        let Some(reranker) = self.reranker else {
            return search_across(knowledge_bases, queries, self.top_k, self.score_threshold).await;
        };
        let candidates = self
            .rerank_candidate_k
            .unwrap_or(self.top_k.saturating_mul(2))
            .clamp(self.top_k, MAX_RERANK_CANDIDATES.max(self.top_k));
        let hits =
            search_across(knowledge_bases, queries, candidates, self.score_threshold).await?;
        Ok(reranker.rerank(&queries.join("\n"), hits, self.top_k).await)
    }
}

/// The hits as a numbered list, `[N] (source: file)` before each chunk,
/// results separated by a blank line; adjacent text merged into one block,
/// data blocks kept as they are.
pub(crate) fn format_results(results: &[VectorSearchResult]) -> Vec<MediaBlock> {
    let mut out: Vec<MediaBlock> = Vec::new();
    let push_text = |out: &mut Vec<MediaBlock>, text: String| {
        if let Some(MediaBlock::Text(last)) = out.last_mut() {
            last.text.push_str(&text);
        } else {
            out.push(MediaBlock::Text(TextBlock::new(text)));
        }
    };
    let last = results.len();
    for (i, r) in results.iter().enumerate() {
        let prefix = format!("[{}] (source: {})\n", i + 1, r.chunk.source);
        match &r.chunk.content {
            MediaBlock::Text(t) => push_text(&mut out, prefix + &t.text),
            data @ MediaBlock::Data(_) => {
                push_text(&mut out, prefix);
                out.push(data.clone());
            }
        }
        if i + 1 != last {
            push_text(&mut out, "\n\n".to_owned());
        }
    }
    out
}

/// `template` with `{context}` replaced by the rendered hits: one text
/// when they are all text, else the blocks with the template's text
/// merged into the first and last text blocks (as AgentScope does).
pub(crate) fn wrap_hint(template: &str, blocks: Vec<MediaBlock>) -> RichContent {
    let (before, after) = template.split_once("{context}").unwrap_or((template, ""));
    if blocks.iter().all(|b| matches!(b, MediaBlock::Text(_))) {
        let joined: Vec<String> = blocks
            .into_iter()
            .filter_map(|b| match b {
                MediaBlock::Text(t) => Some(t.text),
                MediaBlock::Data(_) => None,
            })
            .collect();
        return RichContent::Text(format!("{before}{}{after}", joined.join("\n")));
    }
    let mut out = blocks;
    if !before.is_empty() {
        match out.first_mut() {
            Some(MediaBlock::Text(t)) => t.text.insert_str(0, before),
            _ => out.insert(0, MediaBlock::Text(TextBlock::new(before))),
        }
    }
    if !after.is_empty() {
        match out.last_mut() {
            Some(MediaBlock::Text(t)) => t.text.push_str(after),
            _ => out.push(MediaBlock::Text(TextBlock::new(after))),
        }
    }
    RichContent::Blocks(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use oxiscope_message::{Base64Source, DataBlock, DataSource};

    use super::*;
    use crate::section::Chunk;

    fn hit(content: MediaBlock, source: &str) -> VectorSearchResult {
        VectorSearchResult {
            score: 0.5,
            document_id: "d".into(),
            chunk: Chunk {
                content,
                source: source.into(),
                chunk_index: 0,
                total_chunks: 1,
                metadata: serde_json::Map::new(),
            },
        }
    }

    fn image() -> MediaBlock {
        MediaBlock::Data(DataBlock::new(DataSource::Base64(Base64Source {
            data: "AAAA".into(),
            media_type: "image/png".into(),
        })))
    }

    #[test]
    fn text_hits_become_one_numbered_text_and_one_hint_string() {
        let hits = [
            hit(MediaBlock::Text(TextBlock::new("one")), "a.md"),
            hit(MediaBlock::Text(TextBlock::new("two")), "b.md"),
        ];
        let blocks = format_results(&hits);
        assert_eq!(blocks.len(), 1);
        let RichContent::Text(hint) = wrap_hint("<c>{context}</c>", blocks) else {
            panic!("text expected");
        };
        assert_eq!(
            hint,
            "<c>[1] (source: a.md)\none\n\n[2] (source: b.md)\ntwo</c>"
        );
    }

    #[test]
    fn data_hits_stay_blocks_inside_the_template() {
        let hits = [
            hit(image(), "cat.png"),
            hit(MediaBlock::Text(TextBlock::new("two")), "b.md"),
        ];
        let blocks = format_results(&hits);
        assert_eq!(blocks.len(), 3);
        let plain = blocks.clone();
        let RichContent::Blocks(b) = wrap_hint("<c>{context}</c>", blocks) else {
            panic!("blocks expected");
        };
        let texts: Vec<_> = b
            .iter()
            .map(|x| match x {
                MediaBlock::Text(t) => t.text.clone(),
                MediaBlock::Data(_) => "<data>".into(),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "<c>[1] (source: cat.png)\n",
                "<data>",
                "\n\n[2] (source: b.md)\ntwo</c>"
            ]
        );
        // A data block at either end gets the template's text as blocks of
        // their own.
        let RichContent::Blocks(b) = wrap_hint("<c>{context}</c>", vec![plain[1].clone()]) else {
            panic!("blocks expected");
        };
        assert_eq!(b.len(), 3);
        assert!(matches!(&b[0], MediaBlock::Text(t) if t.text == "<c>"));
        assert!(matches!(&b[2], MediaBlock::Text(t) if t.text == "</c>"));
    }
}
