//! A string that never shows itself by accident.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a non-empty [`Secret`] prints and serialises as.
///
/// The same ten asterisks AgentScope writes for its secret fields, so clients
/// that compare against the placeholder keep working.
pub const SECRET_MASK: &str = "**********";

/// A secret string such as an API key.
///
/// `Debug`, `Display` and `Serialize` all write [`SECRET_MASK`] instead of the
/// value (an empty secret writes an empty string, as AgentScope does), so
/// logging a credential or returning it from an API cannot leak the key.
/// `Deserialize` reads the real value. The only ways to get the value back
/// are [`Secret::expose`] and the explicit storage view of a credential,
/// [`Credential::to_storage_json`](crate::Credential::to_storage_json).
///
/// ```
/// use oxiscope_model::Secret;
///
/// let key = Secret::new("sk-live-123");
/// assert_eq!(format!("{key} {key:?}"), "********** **********");
/// assert_eq!(serde_json::to_string(&key).unwrap(), r#""**********""#);
/// assert_eq!(key.expose(), "sk-live-123");
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// Returns the real value. Call it only where the value must leave the
    /// process on purpose (an `Authorization` header, the credential store).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the value is the mask itself, which is what a client sends back
    /// when it echoes a masked credential unchanged.
    pub fn is_mask(&self) -> bool {
        self.0 == SECRET_MASK
    }

    fn masked(&self) -> &'static str {
        if self.0.is_empty() { "" } else { SECRET_MASK }
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.masked())
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.masked())
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.masked())
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_display_and_serde_never_show_the_value() {
        let secret = Secret::new("sk-abc");
        assert_eq!(format!("{secret:?}"), SECRET_MASK);
        assert_eq!(secret.to_string(), SECRET_MASK);
        assert_eq!(
            serde_json::to_value(&secret).unwrap(),
            serde_json::json!(SECRET_MASK)
        );
        assert!(!format!("{secret:?}{secret}").contains("sk-abc"));
    }

    #[test]
    fn empty_secret_masks_as_empty_string() {
        let secret = Secret::default();
        assert_eq!(secret.to_string(), "");
        assert_eq!(
            serde_json::to_value(&secret).unwrap(),
            serde_json::json!("")
        );
    }

    #[test]
    fn deserialising_reads_the_real_value() {
        let secret: Secret = serde_json::from_str(r#""sk-real""#).unwrap();
        assert_eq!(secret.expose(), "sk-real");
        assert!(!secret.is_mask());
        let echoed: Secret = serde_json::from_str(r#""**********""#).unwrap();
        assert!(echoed.is_mask());
    }
}
