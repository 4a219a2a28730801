//! The span model: ids, attributes, status, events and a finished span.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use oxiscope_message::stamp;

/// A 16-byte trace id, shown as 32 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(pub [u8; 16]);

/// An 8-byte span id, shown as 16 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId(pub [u8; 8]);

impl TraceId {
    /// A fresh random trace id (never all zeros).
    #[must_use]
    pub fn random() -> Self {
        let mut out = [0u8; 16];
        fill_random(&mut out);
        Self(out)
    }

    /// Parses 32 hex digits; `None` for anything else or the invalid all-zero id.
    #[must_use]
    pub fn from_hex(hex: &str) -> Option<Self> {
        let mut out = [0u8; 16];
        (decode_hex(hex, &mut out) && out != [0; 16]).then_some(Self(out))
    }
}

impl SpanId {
    /// A fresh random span id (never all zeros).
    #[must_use]
    pub fn random() -> Self {
        let mut out = [0u8; 8];
        fill_random(&mut out);
        Self(out)
    }

    /// Parses 16 hex digits; `None` for anything else or the invalid all-zero id.
    #[must_use]
    pub fn from_hex(hex: &str) -> Option<Self> {
        let mut out = [0u8; 8];
        (decode_hex(hex, &mut out) && out != [0; 8]).then_some(Self(out))
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Debug for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceId({self})")
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Debug for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SpanId({self})")
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    for b in bytes {
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

fn decode_hex(hex: &str, out: &mut [u8]) -> bool {
    let bytes = hex.as_bytes();
    if bytes.len() != out.len() * 2 {
        return false;
    }
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let (Some(hi), Some(lo)) = (nibble(pair[0]), nibble(pair[1])) else {
            return false;
        };
        *slot = (hi << 4) | lo;
    }
    true
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Random bytes from the message crate's id pool (random UUID bytes).
fn fill_random(out: &mut [u8]) {
    loop {
        let id = stamp::new_id();
        let mut raw = [0u8; 16];
        if decode_hex(&id, &mut raw) {
            // Skip the UUID version/variant nibbles' bytes for ids up to 8
            // bytes; a trace id keeps them (still 122 random bits).
            let src: &[u8] = if out.len() <= 8 { &raw[8..] } else { &raw };
            let n = out.len().min(src.len());
            out[..n].copy_from_slice(&src[..n]);
        }
        if out.iter().any(|b| *b != 0) {
            return;
        }
    }
}

/// Where a span sits in a trace: its trace and its own id. The parent a
/// span is started under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanContext {
    /// The trace.
    pub trace_id: TraceId,
    /// The span.
    pub span_id: SpanId,
}

impl SpanContext {
    /// A fresh root: a new trace and a new span id.
    #[must_use]
    pub fn new_root() -> Self {
        Self {
            trace_id: TraceId::random(),
            span_id: SpanId::random(),
        }
    }

    /// Parses a W3C `traceparent` header (`00-{trace}-{span}-{flags}`),
    /// the caller's span to hang ours under; `None` when malformed.
    #[must_use]
    pub fn from_traceparent(header: &str) -> Option<Self> {
        let mut parts = header.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let known = version == "00" && parts.next().is_none();
        let future = version.len() == 2 && version != "ff" && version != "00";
        if !(known || future) || flags.len() != 2 || !flags.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(Self {
            trace_id: TraceId::from_hex(trace)?,
            span_id: SpanId::from_hex(span)?,
        })
    }

    /// This context as a W3C `traceparent` header value (sampled).
    #[must_use]
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", self.trace_id, self.span_id)
    }

    /// A fresh child: the same trace, a new span id.
    #[must_use]
    pub fn child(&self) -> Self {
        Self {
            trace_id: self.trace_id,
            span_id: SpanId::random(),
        }
    }
}

/// What a span describes (OTLP's `SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SpanKind {
    /// Work inside the process.
    #[default]
    Internal,
    /// The handling of a request from a caller.
    Server,
    /// A request to a remote service (a model call).
    Client,
}

/// An attribute value (OTLP's `AnyValue`, the kinds spans use).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// A signed integer.
    Int(i64),
    /// A float.
    Double(f64),
    /// A boolean.
    Bool(bool),
    /// A list of strings.
    StrList(Vec<String>),
}

impl From<&str> for AttrValue {
    fn from(v: &str) -> Self {
        Self::Str(v.to_owned())
    }
}

impl From<String> for AttrValue {
    fn from(v: String) -> Self {
        Self::Str(v)
    }
}

impl From<i64> for AttrValue {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<u64> for AttrValue {
    fn from(v: u64) -> Self {
        Self::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for AttrValue {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

impl From<f64> for AttrValue {
    fn from(v: f64) -> Self {
        Self::Double(v)
    }
}

impl From<Vec<String>> for AttrValue {
    fn from(v: Vec<String>) -> Self {
        Self::StrList(v)
    }
}

/// The longest string attribute, event attribute or status description a
/// span keeps, in bytes: longer ones are cut (at a character boundary)
/// and end in `…`. Attributes carry what tenants send (names, ids,
/// content), so no span grows with them.
pub const MAX_ATTRIBUTE_LEN: usize = 8 * 1024;
/// The longest span name kept, in bytes (names embed tool and model
/// names).
pub const MAX_SPAN_NAME_LEN: usize = 256;
/// The most items a string-list attribute keeps.
pub const MAX_LIST_ITEMS: usize = 64;

/// Cuts `s` to at most `max` bytes at a character boundary, marking the
/// cut with `…`.
pub(super) fn truncate(s: &mut String, max: usize) {
    if s.len() <= max {
        return;
    }
    const MARK: &str = "…";
    let mut end = max.saturating_sub(MARK.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(MARK);
}

/// Appends `more` to `buf` while `buf` stays within [`MAX_ATTRIBUTE_LEN`]
/// plus a little, so text gathered for an attribute stays bounded.
pub(super) fn push_capped(buf: &mut String, more: &str) {
    let room = (MAX_ATTRIBUTE_LEN + 4).saturating_sub(buf.len());
    if room == 0 {
        return;
    }
    let mut end = more.len().min(room);
    while !more.is_char_boundary(end) {
        end -= 1;
    }
    buf.push_str(&more[..end]);
}

impl AttrValue {
    /// Cuts strings to [`MAX_ATTRIBUTE_LEN`] and lists to
    /// [`MAX_LIST_ITEMS`].
    fn cap(&mut self) {
        match self {
            Self::Str(s) => truncate(s, MAX_ATTRIBUTE_LEN),
            Self::StrList(items) => {
                items.truncate(MAX_LIST_ITEMS);
                for item in items {
                    truncate(item, MAX_ATTRIBUTE_LEN);
                }
            }
            Self::Int(_) | Self::Double(_) | Self::Bool(_) => {}
        }
    }
}

/// Caps every value of `attributes`, and their keys.
fn cap_attributes(attributes: &mut Attributes) {
    for (key, value) in attributes {
        truncate(key, MAX_SPAN_NAME_LEN);
        value.cap();
    }
}

/// Key-value attributes, in the order they were set (a key set twice keeps
/// its last value, in its first place).
pub type Attributes = Vec<(String, AttrValue)>;

/// How a span ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SpanStatus {
    /// Not said.
    #[default]
    Unset,
    /// Succeeded.
    Ok,
    /// Failed, with a description.
    Error(String),
}

/// Something that happened at one moment during a span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// The event's name.
    pub name: String,
    /// When, in nanoseconds since the Unix epoch.
    pub time_unix_nano: u64,
    /// Its attributes.
    pub attributes: Attributes,
}

/// A span: one timed operation in a trace. Built with [`SpanData::start`],
/// filled in, then closed with [`SpanData::end`].
#[derive(Debug, Clone, PartialEq)]
pub struct SpanData {
    /// The span's own trace and id.
    pub context: SpanContext,
    /// The parent span's id (in the same trace), `None` for a root.
    pub parent_span_id: Option<SpanId>,
    /// The operation's name (`invoke_agent Assistant`, `chat gpt-4o`, ...).
    pub name: String,
    /// What the span describes.
    pub kind: SpanKind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start_unix_nano: u64,
    /// End, in nanoseconds since the Unix epoch (the start until ended).
    pub end_unix_nano: u64,
    /// Attributes.
    pub attributes: Attributes,
    /// How it ended.
    pub status: SpanStatus,
    /// Timed events.
    pub events: Vec<SpanEvent>,
}

impl SpanData {
    /// Starts a span now, under `parent` (a new trace when `None`).
    #[must_use]
    pub fn start(name: impl Into<String>, kind: SpanKind, parent: Option<SpanContext>) -> Self {
        let now = now_unix_nano();
        Self {
            context: parent.map_or_else(SpanContext::new_root, |p| p.child()),
            parent_span_id: parent.map(|p| p.span_id),
            name: name.into(),
            kind,
            start_unix_nano: now,
            end_unix_nano: now,
            attributes: Vec::new(),
            status: SpanStatus::Unset,
            events: Vec::new(),
        }
    }

    /// Sets an attribute, replacing an earlier value of the same key; a
    /// long string is cut to [`MAX_ATTRIBUTE_LEN`].
    pub fn set(&mut self, key: &str, value: impl Into<AttrValue>) {
        let mut value = value.into();
        value.cap();
        match self.attributes.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = value,
            None => self.attributes.push((key.to_owned(), value)),
        }
    }

    /// The value of attribute `key`.
    #[must_use]
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find_map(|(k, v)| (k == key).then_some(v))
    }

    /// Adds an event now.
    pub fn add_event(&mut self, name: impl Into<String>, attributes: Attributes) {
        self.events.push(SpanEvent {
            name: name.into(),
            time_unix_nano: now_unix_nano(),
            attributes,
        });
    }

    /// Marks the span failed with `description`, and records the error
    /// class as `error.type`.
    pub fn fail(&mut self, error_type: &str, description: impl Into<String>) {
        self.set("error.type", error_type);
        self.status = SpanStatus::Error(description.into());
    }

    /// Closes the span now, and caps its strings ([`Self::cap`]).
    pub fn end(&mut self) {
        self.end_unix_nano = now_unix_nano().max(self.start_unix_nano);
        self.cap();
    }

    /// Cuts the name to [`MAX_SPAN_NAME_LEN`], and every string attribute,
    /// event attribute and the status description to
    /// [`MAX_ATTRIBUTE_LEN`] (whatever was written to the fields
    /// directly).
    pub fn cap(&mut self) {
        truncate(&mut self.name, MAX_SPAN_NAME_LEN);
        cap_attributes(&mut self.attributes);
        if let SpanStatus::Error(description) = &mut self.status {
            truncate(description, MAX_ATTRIBUTE_LEN);
        }
        for event in &mut self.events {
            truncate(&mut event.name, MAX_SPAN_NAME_LEN);
            cap_attributes(&mut event.attributes);
        }
    }
}

/// The current time in nanoseconds since the Unix epoch (0 before it).
#[must_use]
pub fn now_unix_nano() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
