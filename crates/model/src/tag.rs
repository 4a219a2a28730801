//! Constant `type` fields, serialised in their declared position.
//!
//! AgentScope writes a record's `type` discriminator among its other fields
//! (`id, name, type, api_key, ...`), not first. A zero-sized [`TypeTag`] field
//! lets a plain `derive(Serialize)` struct keep that order while accepting and
//! writing only its one constant value.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Unexpected};
use serde::{Deserialize, Serialize, Serializer};

/// A record whose JSON has a constant `type` value.
pub(crate) trait TypeName {
    /// The value of the record's `type` field.
    const TYPE: &'static str;
}

/// The `type` field of a `T`: serialises as `T::TYPE`, accepts nothing else.
pub(crate) struct TypeTag<T>(PhantomData<fn() -> T>);

impl<T> Default for TypeTag<T> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T> Clone for TypeTag<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for TypeTag<T> {}

impl<T> PartialEq for TypeTag<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for TypeTag<T> {}

impl<T: TypeName> fmt::Debug for TypeTag<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::TYPE)
    }
}

impl<T: TypeName> Serialize for TypeTag<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(T::TYPE)
    }
}

impl<'de, T: TypeName> Deserialize<'de> for TypeTag<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        if value == T::TYPE {
            Ok(Self::default())
        } else {
            Err(de::Error::invalid_value(Unexpected::Str(&value), &T::TYPE))
        }
    }
}
