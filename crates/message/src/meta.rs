//! [`Metadata`]: a JSON object that costs one pointer while it is empty.
//!
//! Messages and tool results carry a free-form `metadata` object that is
//! empty almost always. With `serde_json`'s order-preserving map an empty
//! object is still 72 bytes; this holds it behind an optional box instead.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object (`serde_json::Map`), boxed and absent while empty.
///
/// It dereferences to the map (mutably too: the first insert allocates it),
/// compares equal to any map with the same entries, and serialises as an
/// object — `{}` when empty.
#[derive(Clone, Default)]
pub struct Metadata(Option<Box<Map<String, Value>>>);

static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

impl Metadata {
    /// An empty object.
    #[must_use]
    pub const fn new() -> Self {
        Self(None)
    }

    /// The map, taking it out (the metadata is left empty).
    #[must_use]
    pub fn take(&mut self) -> Map<String, Value> {
        self.0.take().map(|m| *m).unwrap_or_default()
    }

    /// The map, by value.
    #[must_use]
    pub fn into_map(self) -> Map<String, Value> {
        self.0.map(|m| *m).unwrap_or_default()
    }
}

impl Deref for Metadata {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<Map<String, Value>> for Metadata {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Self(None)
        } else {
            Self(Some(Box::new(map)))
        }
    }
}

impl From<Metadata> for Map<String, Value> {
    fn from(meta: Metadata) -> Self {
        meta.into_map()
    }
}

impl From<Metadata> for Value {
    fn from(meta: Metadata) -> Self {
        Value::Object(meta.into_map())
    }
}

impl FromIterator<(String, Value)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Self::from(Map::from_iter(iter))
    }
}

impl<'a> IntoIterator for &'a Metadata {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.deref().iter()
    }
}

impl PartialEq for Metadata {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Metadata {}

impl PartialEq<Map<String, Value>> for Metadata {
    fn eq(&self, other: &Map<String, Value>) -> bool {
        **self == *other
    }
}

impl fmt::Debug for Metadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Map::deserialize(d).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_metadata_is_one_pointer_and_fills_on_first_insert() {
        assert_eq!(size_of::<Metadata>(), 8);
        let mut meta = Metadata::new();
        assert!(meta.is_empty());
        assert_eq!(serde_json::to_string(&meta).unwrap(), "{}");
        meta.insert("b".into(), json!(1));
        meta.insert("a".into(), json!([2]));
        assert_eq!(serde_json::to_string(&meta).unwrap(), r#"{"b":1,"a":[2]}"#);
        let back: Metadata = serde_json::from_str(r#"{"b":1,"a":[2]}"#).unwrap();
        assert_eq!(back, meta);
        assert!(serde_json::from_str::<Metadata>("{}").unwrap().0.is_none());
        assert!(serde_json::from_str::<Metadata>("[]").is_err());
        assert_eq!(meta.take().len(), 2);
        assert!(meta.is_empty());
    }
}
