//! Token accounting of the prompt, with per-message counts cached so a
//! round costs one count of what changed, not a pass over the context.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use oxiscope_message::{ContentBlock, Id, MediaBlock, Msg, PrintHasher, PrintState, RichContent};
use oxiscope_model::{
    DATA_BLOCK_TOKENS, MESSAGE_OVERHEAD, NAME_OVERHEAD, REPLY_PRIMING, TOOL_CALL_OVERHEAD,
    TOOL_SCHEMA_OVERHEAD, TokenCounter, ToolSchema, counter_for,
};

/// Where the counter comes from.
#[derive(Debug, Clone)]
pub(crate) enum CounterSource {
    /// The built-in counter for this model name, made on first use (a real
    /// tokenizer loads its vocabulary, which takes milliseconds).
    Builtin(String),
    /// A counter the user gave.
    Custom(Arc<dyn TokenCounter>),
}

/// Counts the prompt's tokens and remembers the count of every message it
/// has seen, keyed by message id and a cheap structural fingerprint.
#[derive(Debug)]
pub(crate) struct TokenLedger {
    source: CounterSource,
    counter: OnceLock<Arc<dyn TokenCounter>>,
    messages: HashMap<Id, (u64, usize), PrintState>,
    tools: Option<(u64, usize)>,
}

impl TokenLedger {
    pub(crate) fn new(source: CounterSource) -> Self {
        Self {
            source,
            counter: OnceLock::new(),
            messages: HashMap::with_hasher(PrintState),
            tools: None,
        }
    }

    /// The counter (made now if needed).
    pub(crate) fn counter(&self) -> &Arc<dyn TokenCounter> {
        self.counter.get_or_init(|| match &self.source {
            CounterSource::Builtin(name) => Arc::from(counter_for(name)),
            CounterSource::Custom(c) => Arc::clone(c),
        })
    }

    /// Whether the built-in counters' bound holds: they never count more
    /// tokens than a text has bytes.
    pub(crate) fn bounded_by_bytes(&self) -> bool {
        matches!(self.source, CounterSource::Builtin(_))
    }

    /// The tokens of one message, from the cache when it did not change.
    pub(crate) fn message(&mut self, msg: &Msg) -> usize {
        let print = msg.shape_print();
        if let Some((p, n)) = self.messages.get(&msg.id)
            && *p == print
        {
            return *n;
        }
        let n = self.counter().count_message(msg);
        self.messages.insert(msg.id.clone(), (print, n));
        n
    }

    /// The tokens of the tool schemas, cached while the offered tools
    /// (names and schema sizes) stay the same.
    pub(crate) fn tools(&mut self, tools: &[ToolSchema]) -> usize {
        let key = tools_key(tools);
        if let Some((k, n)) = self.tools
            && k == key
        {
            return n;
        }
        let n = self.counter().count_tools(tools);
        self.tools = Some((key, n));
        n
    }

    /// The tokens of a prompt made of the messages of `parts` (in order)
    /// and `tools`.
    ///
    /// When `below` is given and a cheap upper bound (bytes) already stays
    /// under it, the bound is returned without counting: small prompts never
    /// load a tokenizer.
    pub(crate) fn prompt(
        &mut self,
        parts: &[&[Msg]],
        tools: &[ToolSchema],
        below: Option<usize>,
    ) -> usize {
        let empty = parts.iter().all(|p| p.is_empty());
        let priming = if empty { 0 } else { REPLY_PRIMING };
        if let Some(limit) = below
            && self.bounded_by_bytes()
        {
            let bound = priming
                + parts
                    .iter()
                    .flat_map(|p| p.iter())
                    .map(byte_bound)
                    .sum::<usize>()
                + tools.iter().map(tool_byte_bound).sum::<usize>();
            if bound <= limit {
                return bound;
            }
        }
        let mut n = priming;
        for m in parts.iter().flat_map(|p| p.iter()) {
            n += self.message(m);
        }
        n + self.tools(tools)
    }

    /// Forgets messages no longer in `keep`, so the cache does not grow
    /// with everything ever compressed away.
    pub(crate) fn retain(&mut self, keep: &[Msg]) {
        if self.messages.len() <= keep.len() * 2 + 16 {
            return;
        }
        let ids: std::collections::HashSet<&str> = keep.iter().map(|m| m.id.as_str()).collect();
        self.messages.retain(|id, _| ids.contains(id.as_str()));
    }

    /// Forgets everything (the state was replaced).
    pub(crate) fn clear(&mut self) {
        self.messages.clear();
    }
}

fn tools_key(tools: &[ToolSchema]) -> u64 {
    let mut h = PrintHasher::default();
    for t in tools {
        t.function.name.hash(&mut h);
        t.function.description.len().hash(&mut h);
        t.function.parameters.to_string().len().hash(&mut h);
    }
    h.finish()
}

/// An upper bound of a message's tokens for the built-in counters: bytes of
/// text (no token is shorter than a byte) plus the framing.
fn byte_bound(msg: &Msg) -> usize {
    let mut n = MESSAGE_OVERHEAD + msg.role.as_str().len();
    if !msg.name.is_empty() {
        n += msg.name.len() + NAME_OVERHEAD;
    }
    for block in &msg.content {
        n += match block {
            ContentBlock::Text(t) => t.text.len(),
            ContentBlock::Thinking(t) => t.thinking.len(),
            ContentBlock::Data(_) => DATA_BLOCK_TOKENS,
            ContentBlock::Hint(x) => rich_bound(&x.hint),
            ContentBlock::ToolCall(c) => TOOL_CALL_OVERHEAD + c.name.len() + c.input.len(),
            ContentBlock::ToolResult(r) => {
                TOOL_CALL_OVERHEAD + r.name.len() + rich_bound(&r.output)
            }
        };
    }
    n
}

pub(crate) fn rich_bound(content: &RichContent) -> usize {
    match content {
        RichContent::Text(t) => t.len(),
        RichContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                MediaBlock::Text(t) => t.text.len(),
                MediaBlock::Data(_) => DATA_BLOCK_TOKENS,
            })
            .sum(),
    }
}

fn tool_byte_bound(tool: &ToolSchema) -> usize {
    // The schema's JSON: name, description, parameters and the wrapper,
    // with a quarter more for escapes (walking the value, not encoding it).
    let text = tool.function.name.len()
        + tool.function.description.len()
        + json_len(&tool.function.parameters);
    TOOL_SCHEMA_OVERHEAD + 64 + text + text / 4
}

/// About the length of `v` as compact JSON, without encoding it.
fn json_len(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|i| json_len(i) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_len(v))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiscope_message::Role;

    #[derive(Debug, Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl TokenCounter for Counting {
        fn count_text(&self, text: &str) -> usize {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            text.len()
        }
    }

    #[test]
    fn unchanged_messages_are_counted_once() {
        let counting = Arc::new(Counting::default());
        let mut ledger = TokenLedger::new(CounterSource::Custom(counting.clone()));
        let mut msgs: Vec<Msg> = (0..50)
            .map(|i| Msg::from_text("u", Role::User, format!("message {i}")))
            .collect();
        let first = ledger.prompt(&[&msgs], &[], None);
        let calls = counting.0.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(ledger.prompt(&[&msgs], &[], None), first);
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), calls);
        // One changed message is recounted, alone.
        msgs[7]
            .content
            .push(oxiscope_message::TextBlock::new("more").into());
        let after = ledger.prompt(&[&msgs], &[], None);
        assert!(after > first);
        let recount = counting.0.load(std::sync::atomic::Ordering::Relaxed) - calls;
        // Role, name and two texts of that one message; not 50 messages.
        assert_eq!(recount, 4, "{recount} texts counted again");
    }

    #[test]
    fn the_byte_bound_never_undercounts_the_builtin_counters() {
        for model in ["gpt-4o", "claude-sonnet-4-5"] {
            let mut ledger = TokenLedger::new(CounterSource::Builtin(model.to_owned()));
            let msgs = vec![
                Msg::from_text("u", Role::User, "héllo wörld 日本語 and some ascii code();"),
                Msg::from_text("a", Role::Assistant, "🙂 ".repeat(40)),
            ];
            let exact = ledger.prompt(&[&msgs], &[], None);
            let bound = REPLY_PRIMING + msgs.iter().map(byte_bound).sum::<usize>();
            assert!(bound >= exact, "{model}: bound {bound} < exact {exact}");
            // Under a generous limit the bound is returned without counting.
            let mut fresh = TokenLedger::new(CounterSource::Builtin(model.to_owned()));
            assert_eq!(fresh.prompt(&[&msgs], &[], Some(1_000_000)), bound);
            assert!(fresh.counter.get().is_none(), "no tokenizer was loaded");
        }
    }
}
