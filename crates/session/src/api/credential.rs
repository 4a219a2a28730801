//! `/credential/` bodies. Secrets never appear in answers: they are masked
//! as `"**********"`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST /credential/`: the credential document, tagged by `type`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateCredentialRequest {
    /// `{"type": "openai_credential", "api_key": ..., ...}`.
    pub data: Map<String, Value>,
}

/// `PATCH /credential/{credential_id}`: fields to change; a masked secret
/// keeps the stored value.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateCredentialRequest {
    /// The fields to change.
    pub data: Map<String, Value>,
}

/// `POST /credential/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreateCredentialResponse {
    /// The new credential's id.
    pub credential_id: String,
}

/// A credential as the API shows it (secrets masked).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CredentialView {
    /// The credential id.
    pub id: String,
    /// Last change.
    pub updated_at: String,
    /// Creation.
    pub created_at: String,
    /// The owner.
    pub user_id: String,
    /// The credential's public view.
    pub data: Map<String, Value>,
    /// Whether the caller may edit it.
    pub editable: bool,
}

/// `GET /credential/` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListCredentialsResponse {
    /// The caller's credentials.
    pub credentials: Vec<CredentialView>,
    /// How many.
    pub total: usize,
}

/// `GET /credential/schemas` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListCredentialSchemasResponse {
    /// One JSON Schema per credential type.
    pub schemas: Vec<Map<String, Value>>,
}
