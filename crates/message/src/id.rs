//! [`Id`]: a short string kept inline.
//!
//! Messages, blocks and events each carry an id, mostly a 32-hex-digit UUID
//! (provider tool-call ids such as `call_…` or `toolu_…` are of the same
//! length). As a `String` each costs a heap allocation (48 bytes for 32
//! characters) on top of the 24-byte handle; a saved conversation of 50
//! messages holds a few hundred of them. An [`Id`] keeps up to
//! [`Id::INLINE`] bytes in its own 40 bytes and only boxes a longer string,
//! and reads as a `&str` everywhere.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// An id: any string, kept inline when it is at most [`Id::INLINE`] bytes.
///
/// It dereferences to `str` and compares, hashes, orders, prints and
/// serialises exactly as that string does.
#[derive(Clone)]
pub struct Id(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, buf: [u8; Id::INLINE] },
    Heap(Box<str>),
}

impl Id {
    /// The longest string kept without a heap allocation, in bytes.
    pub const INLINE: usize = 38;

    /// An id holding `s`.
    #[must_use]
    pub fn new(s: &str) -> Self {
        let bytes = s.as_bytes();
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= Self::INLINE => {
                let mut buf = [0u8; Self::INLINE];
                buf[..bytes.len()].copy_from_slice(bytes);
                Self(Repr::Inline { len, buf })
            }
            _ => Self(Repr::Heap(s.into())),
        }
    }

    /// A fresh random id: 32 lowercase hex digits (a version-4 UUID), as
    /// AgentScope's `uuid4().hex`.
    #[must_use]
    pub fn random() -> Self {
        let uuid = uuid::Builder::from_random_bytes(crate::stamp::random_bytes()).into_uuid();
        let mut buf = [0u8; Self::INLINE];
        let len = uuid.simple().encode_lower(&mut buf).len();
        Self(Repr::Inline {
            // 32 hex digits always fit.
            len: u8::try_from(len).unwrap_or(32),
            buf,
        })
    }

    /// Calls `f` with the id's string (what [`Stamp`](crate::Stamp) offers
    /// too).
    pub fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        f(self.as_str())
    }

    /// The id as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only whole `str`s are copied in, so this never fails.
            Repr::Inline { len, buf } => {
                std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or("")
            }
            Repr::Heap(s) => s,
        }
    }
}

impl Default for Id {
    fn default() -> Self {
        Self::new("")
    }
}

impl Deref for Id {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Id {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Id {}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Id {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

crate::strlike::str_like!(Id, "a string id");

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl From<&String> for Id {
    fn from(s: &String) -> Self {
        Self::new(s)
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        if s.len() <= Self::INLINE {
            Self::new(&s)
        } else {
            Self(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl From<&Id> for Id {
    fn from(id: &Id) -> Self {
        id.clone()
    }
}

impl From<Id> for String {
    fn from(id: Id) -> Self {
        match id.0 {
            Repr::Heap(s) => s.into_string(),
            Repr::Inline { .. } => id.as_str().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn an_id_is_40_bytes_and_reads_as_its_string() {
        assert_eq!(size_of::<Id>(), 40);
        assert_eq!(size_of::<Option<Id>>(), 40);
        for s in [
            "",
            "a",
            "call_00000001",
            &"x".repeat(38),
            &"y".repeat(39),
            "é€😀",
        ] {
            let id = Id::new(s);
            assert_eq!(id.as_str(), s);
            assert_eq!(id, s);
            assert_eq!(Id::from(s.to_owned()), id);
            assert_eq!(String::from(id.clone()), s);
            assert_eq!(format!("{id}"), s);
            assert_eq!(format!("{id:?}"), format!("{s:?}"));
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, serde_json::to_string(s).unwrap());
            assert_eq!(serde_json::from_str::<Id>(&json).unwrap(), id);
        }
        assert!(matches!(Id::new(&"x".repeat(38)).0, Repr::Inline { .. }));
        assert!(matches!(Id::new(&"x".repeat(39)).0, Repr::Heap(_)));
    }

    #[test]
    fn random_ids_are_uuid4_hex_and_inline() {
        let id = Id::random();
        assert_eq!(id.len(), 32);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(&id[12..13], "4");
        assert!(matches!(id.0, Repr::Inline { .. }));
        assert_ne!(id, Id::random());
    }

    #[test]
    fn ids_look_up_by_str_and_order_as_strings() {
        let mut map = HashMap::new();
        map.insert(Id::new("b"), 1);
        assert_eq!(map.get("b"), Some(&1));
        let mut ids = [Id::new("b"), Id::new(&"a".repeat(50)), Id::new("c")];
        ids.sort();
        assert_eq!(ids[0].as_str(), "a".repeat(50));
        assert!(serde_json::from_str::<Id>("3").is_err());
    }
}
