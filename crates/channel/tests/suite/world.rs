//! An engine over a temporary SQLite store, an in-process bus, local
//! workspaces and a fake OpenAI server; agents `friday` and `expert` of
//! user `u`; a fake Telegram and the channel host of this replica.

#![allow(clippy::unwrap_used, clippy::panic, dead_code)]

use std::sync::Arc;
use std::time::Duration;

use oxiscope_channel::telegram::Telegram;
use oxiscope_channel::{ChannelHost, Channels, NewChannel, Registry, Routing, SessionSettings};
use oxiscope_session::{Engine, EngineConfig, Sealer, WorkspaceMode};
use oxiscope_storage::{
    AgentRecord, ChannelRecord, ChannelSessionRecord, CredentialRecord, InMemoryBus, MessageBus,
    SqliteStorage, Storage, new_id, now,
};
use oxiscope_test_support::telegram::FakeTelegram;
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use serde_json::{Value, json};

pub(crate) const TOKEN: &str = "4242:test-secret_token";

pub(crate) struct World {
    pub(crate) engine: Engine,
    pub(crate) model: FakeServer,
    pub(crate) telegram: FakeTelegram,
    pub(crate) host: ChannelHost,
    pub(crate) friday: String,
    pub(crate) expert: String,
    pub(crate) credential_id: String,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) bus: Arc<dyn MessageBus>,
    _dir: tempfile::TempDir,
}

impl World {
    pub(crate) async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let storage: Arc<dyn Storage> = Arc::new(SqliteStorage::open(dir.path()).await.unwrap());
        let bus: Arc<dyn MessageBus> = Arc::new(InMemoryBus::new());
        let mut config = EngineConfig::new(dir.path()).with_workspace(WorkspaceMode::Local);
        config.policy.private_model_endpoints = true;
        let engine = Engine::new(
            storage.clone(),
            bus.clone(),
            Sealer::from_key(&[7; 32]),
            config,
        );
        let model = FakeServer::start().await.unwrap();
        let telegram = FakeTelegram::start(TOKEN).await.unwrap();

        let credential = oxiscope_model::Credential::from_json_value(json!({
            "type": "openai_credential", "name": "fake", "api_key": "sk-test",
            "base_url": model.url("/v1"),
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
        let mut ids = Vec::new();
        for (name, prompt) in [("Friday", "You are Friday."), ("Expert", "You are Expert.")] {
            let agent = AgentRecord {
                id: new_id(),
                user_id: "u".into(),
                created_at: now(),
                updated_at: now(),
                data: json!({"name": name, "system_prompt": prompt}),
            };
            storage.create_agent(&agent).await.unwrap();
            ids.push(agent.id);
        }
        let host = host_of(&engine, &telegram);
        Self {
            engine,
            model,
            telegram,
            host,
            expert: ids.pop().unwrap(),
            friday: ids.pop().unwrap(),
            credential_id: credential.id,
            storage,
            bus,
            _dir: dir,
        }
    }

    /// Another replica: an engine and a channel host over the same store
    /// and bus.
    pub(crate) fn replica(&self) -> (Engine, ChannelHost) {
        let engine = Engine::new(
            self.storage.clone(),
            self.bus.clone(),
            Sealer::from_key(&[7; 32]),
            self.engine.config().clone(),
        );
        let host = host_of(&engine, &self.telegram);
        (engine, host)
    }

    pub(crate) fn settings(&self) -> SessionSettings {
        serde_json::from_value(json!({
            "chat_model_config": {"type": "openai_credential", "credential_id": self.credential_id,
                                  "model": "gpt-4.1", "parameters": {}},
        }))
        .unwrap()
    }

    pub(crate) fn new_channel(
        &self,
        routing: Value,
        config: Value,
        credentials: Value,
    ) -> NewChannel {
        NewChannel {
            channel_type: "telegram".into(),
            name: Some("bot".into()),
            credentials,
            platform_config: serde_json::from_value(config).unwrap(),
            routing: serde_json::from_value::<Routing>(routing).unwrap(),
            session: self.settings(),
            enabled: true,
        }
    }

    /// A polling channel with `routing`, started.
    pub(crate) async fn start(&self, routing: Value) -> ChannelRecord {
        let new = self.new_channel(routing, json!({}), json!({"bot_token": TOKEN}));
        let record = self.host.channels().create("u", new).await.unwrap();
        self.host.start(record.clone()).await.unwrap();
        record
    }

    /// Everything to `friday`, per chat.
    pub(crate) fn to_friday(&self) -> Value {
        json!({"bindings": [{"agent_id": self.friday}]})
    }

    pub(crate) async fn sessions_of(&self, channel: &ChannelRecord) -> Vec<ChannelSessionRecord> {
        self.storage
            .channels()
            .unwrap()
            .channel_sessions(&channel.id)
            .await
            .unwrap()
    }

    /// The model requests so far, as JSON.
    pub(crate) fn model_requests(&self) -> Vec<Value> {
        self.model
            .requests()
            .iter()
            .map(|r| r.body_json().unwrap())
            .collect()
    }

    /// Waits until the channel reports `state` (at most 10 s).
    pub(crate) async fn wait_state(
        &self,
        id: &str,
        state: &str,
    ) -> oxiscope_channel::ChannelStatus {
        for _ in 0..1000 {
            let status = self.host.status(id);
            if status.state == state {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "channel {id} never became {state}: {:?}",
            self.host.status(id)
        );
    }
}

fn host_of(engine: &Engine, telegram: &FakeTelegram) -> ChannelHost {
    let registry = Registry::new().with(
        Telegram::new()
            .with_api_base(telegram.base_url())
            .with_poll_timeout(Duration::from_secs(1))
            .with_backoff(Duration::from_millis(10), Duration::from_millis(200)),
    );
    ChannelHost::new(engine.clone(), Channels::new(engine.clone(), registry))
}

pub(crate) fn answer(text: &str) -> ScriptedResponse {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(10, 5, 0)
        .response()
}

/// The texts sent to `chat`.
pub(crate) fn texts_to(sent: &[Value], chat: i64) -> Vec<String> {
    sent.iter()
        .filter(|m| m["chat_id"] == json!(chat))
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

/// The user texts of a model request (the channel header included).
pub(crate) fn user_texts(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"].to_string()
}
