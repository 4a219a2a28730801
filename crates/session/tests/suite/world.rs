//! An engine over a temporary SQLite store, an in-process bus, local
//! workspaces and a fake OpenAI server; one agent and one session of user
//! `u`.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_agent::AgentState;
use oxiscope_session::api::SessionStatus;
use oxiscope_session::{Engine, EngineConfig, Sealer, SessionKey, WorkspaceMode, session_status};
use oxiscope_storage::{
    AgentRecord, CredentialRecord, EventStream, InMemoryBus, MessageBus, SessionRecord,
    SqliteStorage, Storage, new_id, now,
};
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use serde_json::{Value, json};

pub(crate) struct World {
    pub(crate) engine: Engine,
    pub(crate) fake: FakeServer,
    pub(crate) agent_id: String,
    pub(crate) session_id: String,
    /// Another replica shares these.
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) bus: Arc<dyn MessageBus>,
    _dir: tempfile::TempDir,
}

impl World {
    pub(crate) async fn new() -> Self {
        Self::with(|c| c).await
    }

    pub(crate) async fn with(configure: impl FnOnce(EngineConfig) -> EngineConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir.path()).await.unwrap());
        let bus: Arc<dyn MessageBus> = Arc::new(InMemoryBus::new());
        let mut config = EngineConfig::new(dir.path()).with_workspace(WorkspaceMode::Local);
        // The fake model server is on loopback.
        config.policy.private_model_endpoints = true;
        let config = configure(config);
        let engine = Engine::new(
            storage.clone(),
            bus.clone(),
            Sealer::from_key(&[9; 32]),
            config,
        );
        let fake = FakeServer::start().await.unwrap();

        let credential = oxiscope_model::Credential::from_json_value(json!({
            "type": "openai_credential", "name": "fake", "api_key": "sk-test",
            "base_url": fake.url("/v1"),
        }))
        .unwrap();
        let credential = CredentialRecord {
            id: new_id(),
            user_id: "u".into(),
            created_at: now(),
            updated_at: now(),
            sealed: engine.seal_credential(&credential).unwrap(),
        };
        storage.create_credential(&credential).await.unwrap();
        let agent = AgentRecord {
            id: new_id(),
            user_id: "u".into(),
            created_at: now(),
            updated_at: now(),
            data: json!({"name": "Friday", "system_prompt": "You are Friday."}),
        };
        storage.create_agent(&agent).await.unwrap();
        let session_id = new_id();
        let state = AgentState {
            session_id: session_id.clone(),
            ..AgentState::default()
        };
        let session = SessionRecord {
            id: session_id.clone(),
            user_id: "u".into(),
            agent_id: agent.id.clone(),
            workspace_id: "w".into(),
            created_at: now(),
            updated_at: now(),
            config: json!({
                "workspace_id": "w", "name": "s", "naming": {"auto": false}, "cwd": null,
                "chat_model_config": {"type": "openai_credential", "credential_id": credential.id,
                                      "model": "gpt-4.1", "parameters": {}},
            }),
            state: serde_json::to_value(&state).unwrap(),
            revision: 0,
        };
        storage.create_session(&session).await.unwrap();
        Self {
            engine,
            fake,
            agent_id: agent.id,
            session_id,
            storage,
            bus,
            _dir: dir,
        }
    }

    pub(crate) fn key(&self) -> SessionKey<'_> {
        self.key_of("u")
    }

    pub(crate) fn key_of<'a>(&'a self, owner: &'a str) -> SessionKey<'a> {
        SessionKey {
            owner,
            agent_id: &self.agent_id,
            session_id: &self.session_id,
        }
    }

    pub(crate) async fn subscribe(&self) -> Events {
        Events(
            self.engine
                .sessions()
                .subscribe(self.key(), None)
                .await
                .unwrap(),
        )
    }

    pub(crate) async fn status(&self) -> SessionStatus {
        let session = self.engine.sessions().load(self.key()).await.unwrap();
        session_status(&self.engine, &session).await.unwrap()
    }

    /// The status once no run is active (at most 10 s).
    pub(crate) async fn settled(&self) -> SessionStatus {
        for _ in 0..1000 {
            let status = self.status().await;
            if status != SessionStatus::Running {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the session is still running");
    }
}

/// A session's events as JSON.
pub(crate) struct Events(EventStream);

impl Events {
    /// Events up to and including the first of type `kind` (at most 10 s).
    pub(crate) async fn until(&mut self, kind: &str) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let next = tokio::time::timeout(Duration::from_secs(10), self.0.next())
                .await
                .unwrap_or_else(|_| panic!("no {kind} within 10 s after {out:?}"))
                .unwrap();
            let event: Value = serde_json::from_str(&next.payload).unwrap();
            let done = event["type"] == kind;
            out.push(event);
            if done {
                return out;
            }
        }
    }
}

pub(crate) fn types(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}

pub(crate) fn user_msg(text: &str) -> Value {
    json!({"role": "user", "name": "user", "content": [{"type": "text", "text": text}]})
}

pub(crate) fn text_answer(text: &str) -> ScriptedResponse {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(10, 5, 0)
        .response()
}
