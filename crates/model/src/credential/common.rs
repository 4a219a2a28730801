//! Pieces every credential struct shares.

/// A fresh credential id: 32 lowercase hex digits, like AgentScope's
/// `uuid4().hex`. Used when a payload carries no `id`.
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Adds the builder methods for the fields every credential has (`id`,
/// `name`) to a credential struct.
macro_rules! common_builders {
    ($ty:ty) => {
        impl $ty {
            /// Replaces the generated id.
            #[must_use]
            pub fn with_id(mut self, id: impl Into<String>) -> Self {
                self.id = id.into();
                self
            }

            /// Sets the display name.
            #[must_use]
            pub fn with_name(mut self, name: impl Into<String>) -> Self {
                self.name = name.into();
                self
            }
        }
    };
}

pub(crate) use common_builders;
