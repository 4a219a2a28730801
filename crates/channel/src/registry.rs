//! The channel types a server accepts, registered when it is built.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::channel::{ChannelType, ChannelTypeInfo};
use crate::error::{Error, Result};

/// The accepted channel types, by type id. An empty registry turns
/// channels off.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    types: BTreeMap<String, Arc<dyn ChannelType>>,
}

impl Registry {
    /// No types.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// With `kind` accepted (a later type with the same id replaces an
    /// earlier one).
    #[must_use]
    pub fn with(mut self, kind: impl ChannelType + 'static) -> Self {
        self.register(Arc::new(kind));
        self
    }

    /// Accepts `kind`.
    pub fn register(&mut self, kind: Arc<dyn ChannelType>) {
        self.types.insert(kind.info().channel_type, kind);
    }

    /// The type with this id.
    ///
    /// # Errors
    /// [`Error::UnknownType`] when none is registered.
    pub fn get(&self, channel_type: &str) -> Result<&Arc<dyn ChannelType>> {
        self.types
            .get(channel_type)
            .ok_or_else(|| Error::UnknownType(channel_type.to_owned()))
    }

    /// Every type's description, by type id.
    #[must_use]
    pub fn infos(&self) -> Vec<ChannelTypeInfo> {
        self.types.values().map(|t| t.info()).collect()
    }

    /// Whether no type is accepted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
}
