//! The Oxiscope agent service: AgentScope 2.0's REST and SSE API over axum.
//!
//! [`app`] builds the router over an [`AppState`] (a [`Storage`], a
//! [`MessageBus`], a credential [`Sealer`] and a [`ServerConfig`]). Chat
//! runs go to the background: `POST /chat/` takes the session's lock and
//! returns; the reply's events are published on the bus and reach every
//! `GET /sessions/{id}/stream` subscriber as `data: <json>` frames, written
//! exactly as the Python service writes them. Records are owned by users:
//! another user's id is a 404.
//!
//! The routes are the edge over the engine (`oxiscope-session`): they
//! parse requests, call [`Engine`]'s [`Sessions`](oxiscope_session::Sessions)
//! and its other operations, and turn a [`SessionError`] into a status in
//! one `From` impl.
//!
//! This crate does not own storage backends (see `oxiscope-storage`), the
//! agent loop (`oxiscope-agent`) or the command line (`oxiscope serve`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use oxiscope_server::{AppState, AuthMode, Sealer, ServerConfig, app};
//! use oxiscope_storage::{InMemoryBus, SqliteStorage};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::path::Path::new("./data");
//! let storage = Arc::new(SqliteStorage::open(dir).await?);
//! let state = AppState::new(
//!     storage,
//!     Arc::new(InMemoryBus::new()),
//!     Sealer::load_or_create(dir)?,
//!     ServerConfig::new(dir).with_auth(AuthMode::DevHeader),
//! );
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! axum::serve(listener, app(state)).await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`Storage`]: oxiscope_storage::Storage
//! [`MessageBus`]: oxiscope_storage::MessageBus

/// IM channels: the types a server accepts are given with
/// [`ServerConfig::with_channels`].
pub use oxiscope_channel as channel;
pub use oxiscope_session::api;
mod auth;
mod channel_api;
mod download;
mod error;
mod extract;
mod listen;
mod metrics;
mod openapi;
mod routes;
mod serve;
mod served_file;
mod state;
mod token;
mod upload;

/// The engine under the routes, by the name the routes use.
pub(crate) use oxiscope_session as service;

pub use auth::{
    ApiKeys, AuthError, AuthMode, AuthProvider, DevHeader, Jwt, JwtConfig, JwtError, UserId,
    generate_api_key, hash_api_key,
};
pub use error::{ApiError, ApiResult};
pub use extract::{ApiJson, ApiQuery};
pub use listen::{ListenLimits, listen, raise_open_file_limit};
pub use metrics::{metrics_app, serve_metrics};
pub use openapi::document as openapi_document;
pub use oxiscope_session::otel::{OtlpConfig, OtlpExporter};
pub use oxiscope_session::{
    CryptoError, Engine, EngineConfig, KEY_ENV, KEY_FILE, Purpose, QuotaWindow, Sealer,
    SessionError, TenantPolicy, WorkspaceMode, to_python_json,
};
pub use routes::app;
pub use serve::serve;
pub use service::knowledge::{KnowledgeSettings, OFFLINE_CREDENTIAL_ID, open_vector_store};
pub use service::scheduler::{
    Clock, SCHEDULER_SWEEP, SCHEDULER_TICK, SystemClock, spawn_scheduler, spawn_scheduler_with,
};
pub use service::team::{TeamTemplates, TemplateError};
pub use service::{HubError, HubSource, SessionTitles};
pub use state::{AppState, ServerConfig};
