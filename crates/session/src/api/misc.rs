//! `/health`, `/model/` and `/agent/schema/v2` bodies.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `GET /health` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HealthResponse {
    /// `ok` when every component is ready, else `not_ready`.
    pub status: String,
    /// The server version.
    pub version: String,
    /// Per component: `ok`, `not_ready` or `disabled`.
    pub components: BTreeMap<String, String>,
}

/// `GET /model/` query.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ModelQuery {
    /// A credential type, e.g. `openai_credential`.
    pub provider: String,
}

/// `GET /model/` answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListModelsResponse {
    /// Model cards (`ModelCard`).
    pub models: Vec<Value>,
    /// How many.
    pub total: usize,
}

/// `GET /agent/schema/v2` answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AgentSchemaV2Response {
    /// The JSON Schema of an agent's data.
    pub schema: Map<String, Value>,
}
