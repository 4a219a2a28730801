//! Knowledge bases attached to a session (`knowledge_config`) become a
//! [`RagMiddleware`] in the session's agent.

use oxiscope_rag::{RagMiddleware, RagParameters};
use oxiscope_storage::SessionRecord;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{find_base, handle};
use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::spec::SessionSpec;

/// A session's `knowledge_config`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SessionKnowledgeConfig {
    /// The attached knowledge bases.
    #[serde(default)]
    pub knowledge_base_ids: Vec<String>,
    /// The RAG middleware's parameters.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// The RAG middleware of the session's attached knowledge bases; `None`
/// when none is attached. Knowledge bases deleted since are left out.
///
/// # Errors
/// 400 for a `knowledge_config` that does not parse or parameters out of
/// range; the errors of building a knowledge base's embedding model.
pub async fn session_middleware(
    state: &Engine,
    session: &SessionRecord,
    spec: &SessionSpec,
) -> SessionResult<Option<RagMiddleware>> {
    let Some(config) = spec
        .knowledge()
        .get()
        .map_err(|e| SessionError::Invalid(format!("The session's knowledge_config: {e}")))?
    else {
        return Ok(None);
    };
    if config.knowledge_base_ids.is_empty() {
        return Ok(None);
    }
    // Each id costs a lookup and a model per run: no repeats, and no more
    // than a user may have.
    let mut ids = config.knowledge_base_ids.clone();
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    let most = state.config().knowledge.max_bases_per_user;
    if ids.len() > most {
        return Err(SessionError::Invalid(format!(
            "The session's knowledge_config names {} knowledge bases; at most {most}",
            ids.len()
        )));
    }
    let parameters: RagParameters =
        serde_json::from_value(Value::Object(config.parameters.clone()))
            .map_err(|e| SessionError::Invalid(format!("The knowledge_config parameters: {e}")))?;
    let mut bases = Vec::with_capacity(ids.len());
    for id in &ids {
        let Ok(kb) = find_base(state, &session.user_id, id).await else {
            tracing::warn!(session = %session.id, knowledge_base = %id, "an attached knowledge base is gone");
            continue;
        };
        bases.push(handle(state, &kb).await?);
    }
    if bases.is_empty() {
        return Ok(None);
    }
    RagMiddleware::new(bases, parameters)
        .map(Some)
        .map_err(|e| SessionError::Invalid(format!("The knowledge_config parameters: {e}")))
}
