//! What the service's unit tests share.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use oxiscope_storage::{
    AgentRecord, InMemoryBus, MessageBus, SessionRecord, SqliteStorage, Storage, new_id, now,
};
use serde_json::json;

use crate::Sealer;
use crate::{Engine, EngineConfig, WorkspaceMode};

/// A service over a SQLite store and an in-process bus, with one session
/// of user `u`.
pub(crate) async fn service(dir: &std::path::Path) -> (Engine, SessionRecord) {
    service_with(dir, |c| c).await
}

/// [`service`] with its configuration changed by `configure`.
pub(crate) async fn service_with(
    dir: &std::path::Path,
    configure: impl FnOnce(EngineConfig) -> EngineConfig,
) -> (Engine, SessionRecord) {
    let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir).await.unwrap());
    let bus: Arc<dyn MessageBus> = Arc::new(InMemoryBus::new());
    let config = configure(EngineConfig::new(dir).with_workspace(WorkspaceMode::Local));
    let state = Engine::new(storage, bus, Sealer::from_key(&[7; 32]), config);
    let agent = AgentRecord {
        id: new_id(),
        user_id: "u".into(),
        created_at: now(),
        updated_at: now(),
        data: json!({"name": "A"}),
    };
    state.storage().create_agent(&agent).await.unwrap();
    let session = SessionRecord {
        id: new_id(),
        user_id: "u".into(),
        agent_id: agent.id.clone(),
        workspace_id: "w".into(),
        created_at: now(),
        updated_at: now(),
        config: json!({}),
        state: json!({}),
        revision: 0,
    };
    state.storage().create_session(&session).await.unwrap();
    (state, session)
}
