//! Provider credentials, sealed at rest with the engine's key.

use oxiscope_model::Credential;
use oxiscope_storage::CredentialRecord;
use serde_json::Value;

use crate::error::{SessionError, SessionResult};
use crate::{Engine, Purpose};

impl Engine {
    /// Opens a stored credential.
    ///
    /// # Errors
    /// [`SessionError::Internal`] when the record cannot be opened with
    /// this key or is no credential.
    pub fn unseal_credential(&self, record: &CredentialRecord) -> SessionResult<Credential> {
        let broken = |e: &dyn std::fmt::Display| {
            SessionError::Internal(format!("credential {}: {e}", record.id))
        };
        let plain = self
            .sealer()
            .open(Purpose::Credential, &record.sealed)
            .map_err(|e| broken(&e))?;
        let value: Value = serde_json::from_slice(&plain).map_err(|e| broken(&e))?;
        Credential::from_json_value(value).map_err(|e| broken(&e))
    }

    /// Seals `credential` for storage.
    ///
    /// # Errors
    /// [`SessionError::Internal`] when it cannot be written or sealed.
    pub fn seal_credential(&self, credential: &Credential) -> SessionResult<String> {
        let storage = credential
            .to_storage_json()
            .map_err(|e| SessionError::Internal(e.to_string()))?;
        self.sealer()
            .seal(Purpose::Credential, storage.to_string().as_bytes())
            .map_err(|e| SessionError::Internal(e.to_string()))
    }
}
