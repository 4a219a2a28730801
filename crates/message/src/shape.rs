//! A cheap print of a message's shape, for caches keyed by message id
//! (token counts, formatted requests): it changes when the message grows,
//! shrinks, gains a block or changes a state.

use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::Value;

use crate::{ContentBlock, DataBlock, DataSource, MediaBlock, Msg, RichContent, Role};

impl Msg {
    /// A cheap print of the shape of this message: its role, the kind and state of
    /// every block, and the length of every string a formatter reads (name,
    /// texts, ids, tool names and inputs, media types and payloads). A message
    /// that grows, shrinks, gains a block or changes a state gets another print;
    /// an edit that keeps every length does not. Only lengths are read, not the
    /// text itself, so printing a long conversation stays cheap.
    #[must_use]
    pub fn shape_print(&self) -> u64 {
        shape_print(self)
    }
}

/// See [`Msg::shape_print`].
pub(crate) fn shape_print(msg: &Msg) -> u64 {
    let mut h = PrintHasher::default();
    h.write_u8(role_tag(msg.role));
    len(&msg.name, &mut h);
    h.write_usize(msg.content.len());
    for block in &msg.content {
        match block {
            ContentBlock::Text(t) => {
                h.write_u8(1);
                len(&t.text, &mut h);
            }
            ContentBlock::Thinking(t) => {
                h.write_u8(2);
                len(&t.thinking, &mut h);
                h.write_usize(t.extra.len());
                for (key, value) in &t.extra {
                    len(key, &mut h);
                    match value {
                        Value::String(s) => len(s, &mut h),
                        // Rare, small: whole values.
                        other => len(&other.to_string(), &mut h),
                    }
                }
            }
            ContentBlock::Data(d) => {
                h.write_u8(3);
                data_print(d, &mut h);
            }
            ContentBlock::Hint(hint) => {
                h.write_u8(4);
                rich_print(&hint.hint, &mut h);
            }
            ContentBlock::ToolCall(c) => {
                h.write_u8(5);
                len(&c.id, &mut h);
                len(&c.name, &mut h);
                len(&c.input, &mut h);
                c.state.hash(&mut h);
            }
            ContentBlock::ToolResult(r) => {
                h.write_u8(6);
                len(&r.id, &mut h);
                len(&r.name, &mut h);
                r.state.hash(&mut h);
                rich_print(&r.output, &mut h);
            }
        }
    }
    h.finish()
}

fn role_tag(role: Role) -> u8 {
    match role {
        Role::System => 1,
        Role::User => 2,
        Role::Assistant => 3,
    }
}

fn rich_print(content: &RichContent, h: &mut PrintHasher) {
    match content {
        RichContent::Text(t) => {
            h.write_u8(1);
            len(t, h);
        }
        RichContent::Blocks(blocks) => {
            h.write_u8(2);
            h.write_usize(blocks.len());
            for block in blocks {
                match block {
                    MediaBlock::Text(t) => {
                        h.write_u8(1);
                        len(&t.text, h);
                    }
                    MediaBlock::Data(d) => {
                        h.write_u8(3);
                        data_print(d, h);
                    }
                }
            }
        }
    }
}

fn data_print(data: &DataBlock, h: &mut PrintHasher) {
    len(&data.id, h);
    h.write_usize(data.name.as_ref().map_or(usize::MAX, String::len));
    match &data.source {
        DataSource::Base64(src) => {
            h.write_u8(1);
            len(&src.media_type, h);
            len(&src.data, h);
        }
        DataSource::Url(src) => {
            h.write_u8(2);
            len(&src.media_type, h);
            len(&src.url, h);
        }
    }
}

fn len(text: &str, h: &mut PrintHasher) {
    h.write_usize(text.len());
}

/// A multiply-xorshift hasher: the inputs are our own ids and samples, not
/// chosen by an attacker, and SipHash would cost more than the lookup.
#[derive(Debug, Default, Clone, Copy)]
pub struct PrintHasher(u64);

const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for PrintHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let x = (self.0 ^ n).wrapping_mul(MUL);
        self.0 = x ^ (x >> 29);
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n) | 0x100);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`PrintHasher`]s.
#[derive(Debug, Default, Clone, Copy)]
pub struct PrintState;

impl BuildHasher for PrintState {
    type Hasher = PrintHasher;

    fn build_hasher(&self) -> PrintHasher {
        PrintHasher::default()
    }
}
