//! Turning a provider's increments into delta chunks plus one final,
//! accumulated chunk.

use std::collections::HashMap;
use std::time::Instant;

use oxiscope_message::{
    Base64Source, ContentBlock, DataBlock, DataSource, FinishedReason, Id, Metadata, Stamp,
    Stamper, SystemStamper, TextBlock, ThinkingBlock, ToolCallBlock,
};
use serde_json::{Map, Value};

use super::response::{ChatResponse, ChatUsage};

/// One increment of a provider's stream, decoded from its wire format.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelDelta {
    /// New answer text.
    Text(String),
    /// New reasoning text.
    Thinking(String),
    /// Provider metadata for the current thinking block (e.g. a signature),
    /// merged into its extra fields.
    ThinkingMeta(Map<String, Value>),
    /// A fragment of a tool call. `index` is the provider's position of the
    /// call in the answer; `id` and `name` usually come with the first
    /// fragment only.
    ToolCall {
        /// The provider's index of the call.
        index: usize,
        /// The call id, when this fragment carries it.
        id: Option<String>,
        /// The tool name, when this fragment carries it.
        name: Option<String>,
        /// The argument fragment (JSON text, possibly incomplete).
        arguments: String,
    },
    /// A chunk of base64 data (audio, image) in the answer.
    Data {
        /// The MIME type.
        media_type: String,
        /// The base64 chunk.
        data: String,
    },
    /// Token usage so far; the last one reported wins.
    Usage(ChatUsage),
}

/// Accumulates [`ModelDelta`]s into per-delta chunks and the final response.
///
/// Every operation is amortised O(size of the delta): text is appended in
/// place, tool calls are found through an index map, nothing is rebuilt.
#[derive(Debug)]
pub struct ResponseAccumulator {
    blocks: Vec<ContentBlock>,
    /// Provider index of a tool call -> position in `blocks`.
    call_by_index: HashMap<usize, usize>,
    /// Call id -> position in `blocks`.
    call_by_id: HashMap<String, usize>,
    usage: Option<ChatUsage>,
    started: Instant,
    chunk_stamp: Option<(Id, Stamp)>,
}

impl Default for ResponseAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseAccumulator {
    /// An empty accumulator; the call's clock starts now.
    #[must_use]
    pub fn new() -> Self {
        Self {
            blocks: Vec::new(),
            call_by_index: HashMap::new(),
            call_by_id: HashMap::new(),
            usage: None,
            started: Instant::now(),
            chunk_stamp: None,
        }
    }

    /// Applies one delta and returns the chunk that carries just it, or
    /// `None` for deltas that produce no content (usage, metadata).
    pub fn push(&mut self, delta: ModelDelta) -> Option<ChatResponse> {
        self.push_with(delta, &SystemStamper)
    }

    /// Like [`ResponseAccumulator::push`], with new block ids from `stamper`.
    pub fn push_with(&mut self, delta: ModelDelta, stamper: &dyn Stamper) -> Option<ChatResponse> {
        let block = match delta {
            ModelDelta::Text(text) => {
                if let Some(ContentBlock::Text(last)) = self.blocks.last_mut() {
                    last.text.push_str(&text);
                    // The chunk carries the new piece only: never copy what
                    // accumulated, or a stream becomes quadratic.
                    ContentBlock::Text(TextBlock {
                        text,
                        id: last.id.clone(),
                        created_at: last.created_at.clone(),
                        finished_at: None,
                    })
                } else {
                    let block = TextBlock::stamped(text, stamper);
                    self.blocks.push(block.clone().into());
                    ContentBlock::Text(block)
                }
            }
            ModelDelta::Thinking(text) => {
                if let Some(ContentBlock::Thinking(last)) = self.blocks.last_mut() {
                    last.thinking.push_str(&text);
                    ContentBlock::Thinking(ThinkingBlock {
                        thinking: text,
                        id: last.id.clone(),
                        created_at: last.created_at.clone(),
                        finished_at: None,
                        extra: Metadata::new(),
                    })
                } else {
                    let block = ThinkingBlock::stamped(text, stamper);
                    self.blocks.push(block.clone().into());
                    ContentBlock::Thinking(block)
                }
            }
            ModelDelta::ThinkingMeta(extra) => {
                let last = self.blocks.iter_mut().rev().find_map(|b| match b {
                    ContentBlock::Thinking(t) => Some(t),
                    _ => None,
                });
                match last {
                    Some(t) => t.extra.extend(extra),
                    None => {
                        let mut block = ThinkingBlock::stamped("", stamper);
                        block.extra = extra.into();
                        self.blocks.push(block.into());
                    }
                }
                return None;
            }
            ModelDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                let pos = self.call_position(index, id.as_deref(), stamper);
                let ContentBlock::ToolCall(call) = &mut self.blocks[pos] else {
                    return None;
                };
                if let Some(name) = name.filter(|n| !n.is_empty()) {
                    if call.name.is_empty() {
                        call.name = name;
                    } else if call.name != name {
                        // Some servers repeat the name; a different one is
                        // appended, as fragments of a streamed name are.
                        call.name.push_str(&name);
                    }
                }
                call.input.push_str(&arguments);
                ContentBlock::ToolCall(ToolCallBlock {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: arguments,
                    state: call.state,
                    suggested_rules: Vec::new(),
                    created_at: call.created_at.clone(),
                    finished_at: None,
                })
            }
            ModelDelta::Data { media_type, data } => {
                if let Some(ContentBlock::Data(last)) = self.blocks.last_mut()
                    && let DataSource::Base64(src) = &mut last.source
                    && src.media_type == media_type
                {
                    src.data.push_str(&data);
                    ContentBlock::Data(DataBlock {
                        id: last.id.clone(),
                        source: DataSource::Base64(Base64Source { data, media_type }),
                        name: last.name.clone(),
                        created_at: last.created_at.clone(),
                        finished_at: None,
                    })
                } else {
                    let block = DataBlock::stamped(
                        DataSource::Base64(Base64Source { data, media_type }),
                        stamper,
                    );
                    self.blocks.push(block.clone().into());
                    ContentBlock::Data(block)
                }
            }
            ModelDelta::Usage(usage) => {
                self.usage = Some(usage);
                return None;
            }
        };
        // The delta chunks of one call share an id and a creation time:
        // minting both per chunk was the main per-chunk cost.
        let (id, created_at) = self
            .chunk_stamp
            .get_or_insert_with(|| (stamper.new_id(), stamper.now()))
            .clone();
        Some(ChatResponse {
            content: vec![block],
            is_last: false,
            id,
            created_at,
            usage: None,
            finished_reason: FinishedReason::Completed,
            metadata: Map::new(),
        })
    }

    /// The position of the tool call a fragment belongs to, creating the
    /// call when the fragment starts a new one.
    ///
    /// A known id wins; a new id starts a new call even at a reused index
    /// (some servers number every call 0); without an id the index decides.
    fn call_position(&mut self, index: usize, id: Option<&str>, stamper: &dyn Stamper) -> usize {
        if let Some(id) = id.filter(|i| !i.is_empty()) {
            if let Some(&pos) = self.call_by_id.get(id) {
                self.call_by_index.insert(index, pos);
                return pos;
            }
            let existing = self.call_by_index.get(&index).copied();
            if let Some(pos) = existing
                && let ContentBlock::ToolCall(call) = &mut self.blocks[pos]
                && call.id.is_empty()
            {
                // The id arrived after the first fragment.
                call.id = id.into();
                self.call_by_id.insert(id.to_owned(), pos);
                return pos;
            }
            return self.new_call(index, id.to_owned(), stamper);
        }
        match self.call_by_index.get(&index) {
            Some(&pos) => pos,
            None => {
                let id = format!("call_{}", stamper.new_id());
                self.new_call(index, id, stamper)
            }
        }
    }

    fn new_call(&mut self, index: usize, id: String, stamper: &dyn Stamper) -> usize {
        let mut call = ToolCallBlock::new(id.clone(), "", "");
        call.created_at = stamper.now();
        self.blocks.push(call.into());
        let pos = self.blocks.len() - 1;
        self.call_by_index.insert(index, pos);
        self.call_by_id.insert(id, pos);
        pos
    }

    /// The blocks accumulated so far.
    #[must_use]
    pub fn blocks(&self) -> &[ContentBlock] {
        &self.blocks
    }

    /// The final chunk: every block in full, the usage with the elapsed
    /// time, and the finish reason.
    #[must_use]
    pub fn finish(self, reason: FinishedReason) -> ChatResponse {
        self.finish_with(reason, &SystemStamper)
    }

    /// Like [`ResponseAccumulator::finish`], with the id from `stamper`.
    #[must_use]
    pub fn finish_with(self, reason: FinishedReason, stamper: &dyn Stamper) -> ChatResponse {
        let elapsed = self.started.elapsed().as_secs_f64();
        let usage = self.usage.map(|mut u| {
            u.time = elapsed;
            u
        });
        ChatResponse {
            content: self.blocks,
            is_last: true,
            id: stamper.new_id(),
            created_at: stamper.now(),
            usage,
            finished_reason: reason,
            metadata: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> ModelDelta {
        ModelDelta::ToolCall {
            index,
            id: id.map(str::to_owned),
            name: name.map(str::to_owned),
            arguments: args.to_owned(),
        }
    }

    fn inputs(r: &ChatResponse) -> Vec<(String, String, String)> {
        r.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolCall(c) => {
                    Some((c.id.to_string(), c.name.clone(), c.input.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn interleaved_parallel_tool_call_fragments_accumulate_by_index() {
        let mut acc = ResponseAccumulator::new();
        acc.push(call(0, Some("a"), Some("Read"), "{\"file_path\":"));
        acc.push(call(1, Some("b"), Some("Glob"), "{\"pattern\":"));
        acc.push(call(0, None, None, "\"x.rs\"}"));
        acc.push(call(1, None, None, "\"*.rs\"}"));
        let done = acc.finish(FinishedReason::Completed);
        assert_eq!(
            inputs(&done),
            vec![
                ("a".into(), "Read".into(), "{\"file_path\":\"x.rs\"}".into()),
                ("b".into(), "Glob".into(), "{\"pattern\":\"*.rs\"}".into()),
            ]
        );
    }

    #[test]
    fn a_new_id_at_a_reused_index_starts_a_new_call() {
        let mut acc = ResponseAccumulator::new();
        acc.push(call(0, Some("a"), Some("Read"), "{}"));
        acc.push(call(0, Some("b"), Some("Read"), "{}"));
        assert_eq!(inputs(&acc.finish(FinishedReason::Completed)).len(), 2);
    }

    #[test]
    fn chunks_carry_only_the_delta_and_the_last_chunk_everything() {
        let mut acc = ResponseAccumulator::new();
        let first = acc.push(ModelDelta::Text("Hel".into())).unwrap();
        let second = acc.push(ModelDelta::Text("lo".into())).unwrap();
        let (ContentBlock::Text(a), ContentBlock::Text(b)) =
            (&first.content[0], &second.content[0])
        else {
            panic!("text chunks expected")
        };
        assert_eq!((a.text.as_str(), b.text.as_str()), ("Hel", "lo"));
        assert_eq!(a.id, b.id, "both deltas extend one block");
        assert!(
            acc.push(ModelDelta::Usage(ChatUsage::tokens(10, 2)))
                .is_none()
        );
        let last = acc.finish(FinishedReason::Interrupted);
        assert!(last.is_last);
        assert_eq!(last.finished_reason, FinishedReason::Interrupted);
        assert_eq!(last.usage.as_ref().map(|u| u.input_tokens), Some(10));
        let ContentBlock::Text(full) = &last.content[0] else {
            panic!()
        };
        assert_eq!(full.text, "Hello");
    }

    #[test]
    fn invalid_tool_json_is_kept_verbatim() {
        let mut acc = ResponseAccumulator::new();
        acc.push(call(0, Some("a"), Some("Bash"), "{\"command\": \"ls"));
        let done = acc.finish(FinishedReason::Completed);
        assert_eq!(inputs(&done)[0].2, "{\"command\": \"ls");
    }

    #[test]
    fn text_after_a_tool_call_opens_a_new_text_block() {
        let mut acc = ResponseAccumulator::new();
        acc.push(ModelDelta::Thinking("hm".into()));
        acc.push(ModelDelta::Text("a".into()));
        acc.push(call(0, Some("c"), Some("Bash"), "{}"));
        acc.push(ModelDelta::Text("b".into()));
        let kinds: Vec<&str> = acc.blocks().iter().map(|b| b.kind().as_str()).collect();
        assert_eq!(kinds, ["thinking", "text", "tool_call", "text"]);
    }
}
