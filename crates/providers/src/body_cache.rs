//! Request bodies without reformatting what did not change.
//!
//! In an agent loop every call sends the whole conversation, which grows by
//! one message (or one message grows) per round. Formatting a message and
//! encoding it as JSON depends only on the message when the formatter is a
//! chat formatter, so a model keeps each message's encoded provider messages
//! under the message id with a [print of its shape](Msg::shape_print), and builds the
//! body by splicing those bytes between the encoded head fields.
//!
//! What is kept:
//! - only messages whose formatting reads nothing outside the message (no
//!   linked media to download or read, no file written): each formatter says
//!   so with [`PerMessage::cacheable`];
//! - at most the configured number of bytes: past it, the entries used least
//!   recently are dropped, so a model shared by many sessions stays bounded.
//!
//! The cache sits behind a mutex held only for lookups and inserts, never
//! while formatting (which may await a download).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use oxiscope_message::{
    ContentBlock, DataBlock, DataSource, MediaBlock, Msg, PrintState, RichContent,
};
use oxiscope_model::ModelError;
use serde_json::{Map, Value, json};

/// Default cap of a model's cache: 64 MiB of encoded messages.
pub(crate) const DEFAULT_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Bytes counted for an entry besides its payload and key.
const ENTRY_OVERHEAD: usize = 96;

/// A formatter whose output for a message depends on that message alone.
pub(crate) trait PerMessage: Send + Sync {
    /// Appends the provider messages of `msg`, exactly as formatting a
    /// conversation does for it.
    fn format_one<'a>(
        &'a self,
        msg: &'a Msg,
        out: &'a mut Vec<Value>,
    ) -> BoxFuture<'a, Result<(), ModelError>>;

    /// Whether formatting `msg` uses nothing but `msg`: no media read from a
    /// file or a URL, no file written.
    fn cacheable(&self, msg: &Msg) -> bool;
}

/// Whether every data block of `msg` (its content, hints and tool results)
/// carries its bytes inline: base64, or a `data:` URL.
#[cfg_attr(
    not(any(feature = "anthropic", feature = "ollama")),
    allow(dead_code, reason = "used by the Anthropic and Ollama formatters")
)]
pub(crate) fn only_inline_media(msg: &Msg) -> bool {
    data_blocks(msg).all(|(data, _)| inline(data))
}

/// Whether `data` carries its bytes.
pub(crate) fn inline(data: &DataBlock) -> bool {
    match &data.source {
        DataSource::Base64(_) => true,
        DataSource::Url(src) => src.url.starts_with("data:"),
    }
}

/// Every data block of `msg`, with whether it is in a tool result.
pub(crate) fn data_blocks(msg: &Msg) -> impl Iterator<Item = (&DataBlock, bool)> {
    fn rich(content: &RichContent) -> &[MediaBlock] {
        match content {
            RichContent::Text(_) => &[],
            RichContent::Blocks(blocks) => blocks,
        }
    }
    msg.content.iter().flat_map(|block| {
        let (own, nested, in_result): (Option<&DataBlock>, &[MediaBlock], bool) = match block {
            ContentBlock::Data(d) => (Some(d), &[], false),
            ContentBlock::Hint(h) => (None, rich(&h.hint), false),
            ContentBlock::ToolResult(r) => (None, rich(&r.output), true),
            _ => (None, &[], false),
        };
        own.map(|d| (d, false))
            .into_iter()
            .chain(nested.iter().filter_map(move |b| match b {
                MediaBlock::Data(d) => Some((d, in_result)),
                MediaBlock::Text(_) => None,
            }))
    })
}

/// One message's provider messages, encoded: comma-separated JSON values.
#[derive(Debug, Default)]
pub(crate) struct Encoded {
    /// Blocks of the request's `system` field (Anthropic), when system
    /// messages are split out.
    system: Vec<u8>,
    /// Entries of the `messages` array.
    messages: Vec<u8>,
}

impl Encoded {
    /// Encodes `values`. With `split_system`, the content of `system`
    /// messages goes to [`system`](Self::system) as the request body of
    /// Anthropic wants it: a list of blocks, a string as one text block.
    fn new(values: &[Value], split_system: bool) -> Result<Self, ModelError> {
        let mut encoded = Self::default();
        for value in values {
            if split_system && value.get("role").and_then(Value::as_str) == Some("system") {
                match value.get("content") {
                    Some(Value::Array(blocks)) => {
                        for block in blocks {
                            push_item(&mut encoded.system, block)?;
                        }
                    }
                    Some(Value::String(text)) => {
                        push_item(&mut encoded.system, &json!({"type": "text", "text": text}))?;
                    }
                    _ => {}
                }
            } else {
                push_item(&mut encoded.messages, value)?;
            }
        }
        Ok(encoded)
    }

    fn size(&self) -> usize {
        self.system.len() + self.messages.len()
    }
}

fn push_item(buf: &mut Vec<u8>, value: &Value) -> Result<(), ModelError> {
    if !buf.is_empty() {
        buf.push(b',');
    }
    serde_json::to_writer(buf, value).map_err(encode_error)
}

#[allow(clippy::needless_pass_by_value)] // used as `map_err(encode_error)`
fn encode_error(e: serde_json::Error) -> ModelError {
    ModelError::InvalidRequest {
        message: format!("cannot encode the request: {e}"),
    }
}

/// The JSON bytes of `head` (a request body whose `messages` list is
/// empty) with the encoded messages spliced into `messages`, and, when any
/// message has system blocks, a `system` list just before it. The bytes are
/// those of encoding the body built from the whole formatted conversation.
///
/// # Errors
/// [`ModelError::InvalidRequest`] when a head value cannot be encoded.
pub(crate) fn encode_body(
    head: &Map<String, Value>,
    parts: &[Arc<Encoded>],
) -> Result<Vec<u8>, ModelError> {
    let spliced: usize = parts.iter().map(|p| p.size() + 2).sum();
    let mut out = Vec::with_capacity(spliced + 256);
    out.push(b'{');
    let mut first = true;
    let mut key = |out: &mut Vec<u8>, name: &str| -> Result<(), ModelError> {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, name).map_err(encode_error)?;
        out.push(b':');
        Ok(())
    };
    for (name, value) in head {
        if name == "messages" {
            if parts.iter().any(|p| !p.system.is_empty()) {
                key(&mut out, "system")?;
                join(&mut out, parts.iter().map(|p| p.system.as_slice()));
            }
            key(&mut out, "messages")?;
            join(&mut out, parts.iter().map(|p| p.messages.as_slice()));
        } else {
            key(&mut out, name)?;
            serde_json::to_writer(&mut out, value).map_err(encode_error)?;
        }
    }
    out.push(b'}');
    Ok(out)
}

/// `[a,b,...]` of the non-empty runs.
fn join<'a>(out: &mut Vec<u8>, runs: impl Iterator<Item = &'a [u8]>) {
    out.push(b'[');
    let mut first = true;
    for run in runs.filter(|r| !r.is_empty()) {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        out.extend_from_slice(run);
    }
    out.push(b']');
}

/// A chat formatter with the encoded messages it produced.
pub(crate) struct Cached<F> {
    formatter: F,
    /// System messages go to the body's `system` field (Anthropic).
    split_system: bool,
    max_bytes: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry, PrintState>,
    /// Bytes counted for all entries.
    bytes: usize,
    /// Calls served; an entry remembers the last call that used it.
    clock: u64,
}

struct Entry {
    fingerprint: u64,
    encoded: Arc<Encoded>,
    last_used: u64,
    size: usize,
}

impl<F> std::fmt::Debug for Cached<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Cached");
        out.field("max_bytes", &self.max_bytes);
        // Never waits: printing from inside a lookup must not deadlock.
        if let Ok(state) = self.state.try_lock() {
            out.field("entries", &state.entries.len())
                .field("bytes", &state.bytes);
        }
        out.finish_non_exhaustive()
    }
}

impl<F: PerMessage> Cached<F> {
    /// A cache of at most `max_bytes` over `formatter`.
    pub(crate) fn new(formatter: F, split_system: bool, max_bytes: usize) -> Self {
        Self {
            formatter,
            split_system,
            max_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// The formatter.
    #[cfg_attr(
        not(any(feature = "anthropic", feature = "ollama")),
        allow(dead_code, reason = "used by the Anthropic and Ollama models")
    )]
    pub(crate) fn formatter(&self) -> &F {
        &self.formatter
    }

    /// The same formatter with an empty cache of at most `max_bytes`.
    #[cfg_attr(
        not(any(feature = "anthropic", feature = "ollama")),
        allow(dead_code, reason = "used by the Anthropic and Ollama models")
    )]
    pub(crate) fn resized(&self, max_bytes: usize) -> Self
    where
        F: Clone,
    {
        Self::new(self.formatter.clone(), self.split_system, max_bytes)
    }

    /// The encoded provider messages of `msgs`, one entry per message,
    /// formatting only the messages not cached with their current shape.
    ///
    /// # Errors
    /// The formatter's errors.
    pub(crate) async fn encode(&self, msgs: &[Msg]) -> Result<Vec<Arc<Encoded>>, ModelError> {
        let prints: Vec<Option<u64>> = msgs
            .iter()
            .map(|m| (self.max_bytes > 0 && self.formatter.cacheable(m)).then(|| m.shape_print()))
            .collect();
        let mut slots = self.lookup(msgs, &prints);
        let mut fresh = Vec::new();
        let mut values = Vec::new();
        for ((msg, slot), print) in msgs.iter().zip(slots.iter_mut()).zip(&prints) {
            if slot.is_some() {
                continue;
            }
            values.clear();
            self.formatter.format_one(msg, &mut values).await?;
            let encoded = Arc::new(Encoded::new(&values, self.split_system)?);
            if let Some(print) = print {
                fresh.push((msg.id.as_str(), *print, Arc::clone(&encoded)));
            }
            *slot = Some(encoded);
        }
        self.store(fresh);
        Ok(slots.into_iter().flatten().collect())
    }

    /// The cached entries of `msgs` whose fingerprint still matches.
    fn lookup(&self, msgs: &[Msg], prints: &[Option<u64>]) -> Vec<Option<Arc<Encoded>>> {
        if self.max_bytes == 0 {
            return vec![None; msgs.len()];
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.clock += 1;
        let now = state.clock;
        msgs.iter()
            .zip(prints)
            .map(|(msg, print)| {
                let print = (*print)?;
                let entry = state.entries.get_mut(msg.id.as_str())?;
                if entry.fingerprint != print {
                    return None;
                }
                entry.last_used = now;
                Some(Arc::clone(&entry.encoded))
            })
            .collect()
    }

    /// Keeps `fresh` entries (replacing older shapes of the same messages),
    /// then drops the least recently used entries past the cap.
    fn store(&self, fresh: Vec<(&str, u64, Arc<Encoded>)>) {
        if fresh.is_empty() {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = state.clock;
        for (id, fingerprint, encoded) in fresh {
            let size = encoded.size() + id.len() + ENTRY_OVERHEAD;
            if size > self.max_bytes {
                continue;
            }
            let entry = Entry {
                fingerprint,
                encoded,
                last_used: now,
                size,
            };
            state.bytes += size;
            if let Some(old) = state.entries.insert(id.to_owned(), entry) {
                state.bytes -= old.size;
            }
        }
        if state.bytes > self.max_bytes {
            // Down to three quarters, so eviction is not paid on every call,
            // but this call's entries go only as far as the cap needs.
            let target = self.max_bytes / 4 * 3;
            let mut ages: Vec<(u64, String)> = state
                .entries
                .iter()
                .map(|(id, e)| (e.last_used, id.clone()))
                .collect();
            ages.sort_unstable();
            for (used, id) in ages {
                let limit = if used == now { self.max_bytes } else { target };
                if state.bytes <= limit {
                    break;
                }
                if let Some(old) = state.entries.remove(&id) {
                    state.bytes -= old.size;
                }
            }
        }
    }

    /// Entries and bytes held, for tests.
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (state.entries.len(), state.bytes)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use oxiscope_message::{
        Base64Source, Role, TextBlock, ToolCallBlock, ToolCallState, ToolResultBlock,
        ToolResultState, UrlSource,
    };
    use pretty_assertions::assert_eq;

    use super::*;

    /// One provider message per message, system content as blocks; counts
    /// the messages it formats.
    #[derive(Default)]
    struct Echo {
        formatted: AtomicUsize,
    }

    impl PerMessage for Echo {
        fn format_one<'a>(
            &'a self,
            msg: &'a Msg,
            out: &'a mut Vec<Value>,
        ) -> BoxFuture<'a, Result<(), ModelError>> {
            Box::pin(async move {
                self.formatted.fetch_add(1, Ordering::SeqCst);
                let text = msg.text("\n");
                if text == "fail" {
                    return Err(ModelError::InvalidRequest {
                        message: "bad".to_owned(),
                    });
                }
                out.push(match msg.role {
                    Role::System => {
                        json!({"role": "system", "content": [{"type": "text", "text": text}]})
                    }
                    role => json!({"role": role.as_str(), "content": text}),
                });
                Ok(())
            })
        }

        fn cacheable(&self, msg: &Msg) -> bool {
            only_inline_media(msg)
        }
    }

    impl Cached<Echo> {
        fn formatted(&self) -> usize {
            self.formatter.formatted.load(Ordering::SeqCst)
        }
    }

    fn conversation(n: usize) -> Vec<Msg> {
        let mut msgs = vec![Msg::from_text("s", Role::System, "Be brief.")];
        msgs.extend((1..n).map(|i| {
            let role = if i % 2 == 1 {
                Role::User
            } else {
                Role::Assistant
            };
            Msg::from_text("x", role, format!("message {i} \"quoted\""))
        }));
        msgs
    }

    fn body(head: &Map<String, Value>, parts: &[Arc<Encoded>]) -> Value {
        serde_json::from_slice(&encode_body(head, parts).unwrap()).unwrap()
    }

    fn head() -> Map<String, Value> {
        let mut head = Map::new();
        head.insert("model".into(), "m".into());
        head.insert("max_tokens".into(), 5.into());
        head.insert("messages".into(), json!([]));
        head.insert("stream".into(), true.into());
        head
    }

    #[tokio::test]
    async fn a_second_call_formats_only_the_new_message() {
        let cache = Cached::new(Echo::default(), false, 1 << 20);
        let mut msgs = conversation(10);
        cache.encode(&msgs).await.unwrap();
        assert_eq!(cache.formatted(), 10);
        msgs.push(Msg::from_text("u", Role::User, "one more"));
        let parts = cache.encode(&msgs).await.unwrap();
        assert_eq!(cache.formatted(), 11);
        let body = body(&head(), &parts);
        assert_eq!(body["messages"].as_array().unwrap().len(), 11);
        assert_eq!(body["messages"][10]["content"], "one more");
    }

    #[tokio::test]
    async fn a_message_that_grows_or_changes_state_is_formatted_again() {
        let cache = Cached::new(Echo::default(), false, 1 << 20);
        let mut msgs = conversation(3);
        cache.encode(&msgs).await.unwrap();
        let ContentBlock::Text(TextBlock { text, .. }) = &mut msgs[2].content[0] else {
            panic!("text")
        };
        text.push_str(" and more");
        let parts = cache.encode(&msgs).await.unwrap();
        assert_eq!(cache.formatted(), 4);
        assert_eq!(
            body(&head(), &parts)["messages"][2]["content"],
            "message 2 \"quoted\" and more"
        );

        let mut call = ToolCallBlock::new("c1", "run", "{}");
        let before = msgs[2].shape_print();
        msgs[2].content.push(ContentBlock::ToolCall(call.clone()));
        let with_call = msgs[2].shape_print();
        assert_ne!(before, with_call);
        call.state = ToolCallState::Finished;
        msgs[2].content[1] = ContentBlock::ToolCall(call);
        assert_ne!(with_call, msgs[2].shape_print());
        let mut result = ToolResultBlock::new("c1", "run", "out", ToolResultState::Running);
        msgs[2]
            .content
            .push(ContentBlock::ToolResult(result.clone()));
        let running = msgs[2].shape_print();
        result.state = ToolResultState::Success;
        msgs[2].content[2] = ContentBlock::ToolResult(result);
        assert_ne!(running, msgs[2].shape_print());
        assert_eq!(msgs[2].shape_print(), msgs[2].clone().shape_print());
    }

    #[tokio::test]
    async fn system_blocks_are_split_out_and_spliced_before_the_messages() {
        let cache = Cached::new(Echo::default(), true, 1 << 20);
        let msgs = conversation(3);
        let parts = cache.encode(&msgs).await.unwrap();
        let bytes = encode_body(&head(), &parts).unwrap();
        let expected = json!({
            "model": "m",
            "max_tokens": 5,
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "message 1 \"quoted\""},
                {"role": "assistant", "content": "message 2 \"quoted\""},
            ],
            "stream": true,
        });
        assert_eq!(String::from_utf8(bytes).unwrap(), expected.to_string());

        let no_system = Cached::new(Echo::default(), true, 1 << 20);
        let parts = no_system.encode(&msgs[1..]).await.unwrap();
        let body = body(&head(), &parts);
        assert!(body.get("system").is_none(), "{body}");
    }

    #[tokio::test]
    async fn the_cache_stays_under_its_cap_dropping_the_least_recently_used() {
        let cap = 4 * 1024;
        let cache = Cached::new(Echo::default(), false, cap);
        let old = conversation(20);
        cache.encode(&old).await.unwrap();
        let (entries, bytes) = cache.held();
        assert_eq!(entries, 20);
        assert!(bytes <= cap);
        // Many sessions later, the old one is gone, and the cap held all along.
        for _ in 0..20 {
            cache.encode(&conversation(20)).await.unwrap();
            assert!(cache.held().1 <= cap, "{:?}", cache.held());
        }
        let before = cache.formatted();
        cache.encode(&old).await.unwrap();
        assert_eq!(
            cache.formatted() - before,
            20,
            "evicted, so formatted again"
        );
        // The session used last is kept whole.
        cache.encode(&old).await.unwrap();
        assert_eq!(cache.formatted() - before, 20);
    }

    #[tokio::test]
    async fn a_zero_cap_keeps_nothing_and_errors_keep_nothing() {
        let off = Cached::new(Echo::default(), false, 0);
        let msgs = conversation(4);
        off.encode(&msgs).await.unwrap();
        off.encode(&msgs).await.unwrap();
        assert_eq!(off.formatted(), 8);
        assert_eq!(off.held(), (0, 0));

        let cache = Cached::new(Echo::default(), false, 1 << 20);
        let mut msgs = conversation(3);
        msgs.push(Msg::from_text("u", Role::User, "fail"));
        assert!(cache.encode(&msgs).await.is_err());
        assert_eq!(cache.held().0, 0, "nothing kept from a failed call");
    }

    #[test]
    fn linked_media_is_not_cacheable_and_inline_media_is() {
        let png = DataSource::Base64(Base64Source {
            data: "iVBORw0KGgo=".to_owned(),
            media_type: "image/png".to_owned(),
        });
        let inline_msg = Msg::user("u", vec![ContentBlock::Data(DataBlock::new(png))]).unwrap();
        assert!(only_inline_media(&inline_msg));

        let url = |u: &str| DataSource::Url(UrlSource::new(u, "image/png").unwrap());
        let remote = Msg::user(
            "u",
            vec![ContentBlock::Data(DataBlock::new(url(
                "https://example.com/a.png",
            )))],
        )
        .unwrap();
        assert!(!only_inline_media(&remote));
        let data_url = Msg::user(
            "u",
            vec![ContentBlock::Data(DataBlock::new(url(
                "data:image/png;base64,iVBO",
            )))],
        )
        .unwrap();
        assert!(only_inline_media(&data_url));

        let result = ToolResultBlock::new(
            "c",
            "shot",
            vec![MediaBlock::Data(DataBlock::new(url("file:///tmp/x.png")))],
            ToolResultState::Success,
        );
        let in_result = Msg::assistant("a", vec![ContentBlock::ToolResult(result)]).unwrap();
        assert_eq!(
            data_blocks(&in_result)
                .map(|(_, in_result)| in_result)
                .collect::<Vec<_>>(),
            [true]
        );
        assert!(!only_inline_media(&in_result));
    }

    #[tokio::test]
    async fn concurrent_sessions_on_one_cache_each_get_their_own_messages() {
        let cache = Arc::new(Cached::new(Echo::default(), false, 8 * 1024));
        let mut tasks = Vec::new();
        for session in 0..8 {
            let cache = Arc::clone(&cache);
            tasks.push(tokio::spawn(async move {
                let msgs: Vec<Msg> = (0..30)
                    .map(|i| Msg::from_text("u", Role::User, format!("s{session} m{i}")))
                    .collect();
                for _ in 0..5 {
                    let parts = cache.encode(&msgs).await.unwrap();
                    let body = body(&head(), &parts);
                    let texts: Vec<&str> = body["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| m["content"].as_str().unwrap())
                        .collect();
                    let expected: Vec<String> =
                        (0..30).map(|i| format!("s{session} m{i}")).collect();
                    assert_eq!(texts, expected);
                    tokio::task::yield_now().await;
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert!(cache.held().1 <= 8 * 1024);
    }
}
