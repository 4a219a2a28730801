//! Storage and messaging for the Oxiscope agent service.
//!
//! This crate owns where the service keeps its records and how runs talk to
//! subscribers:
//!
//! - [`Storage`]: agents, credentials (sealed by the caller), sessions with
//!   their agent state and a revision, messages, schedules, API-key
//!   hashes, users' libraries of installed MCP servers (config sealed
//!   by the caller) and skills, token usage per session and per user
//!   and day, and knowledge bases with their documents' indexing states;
//!   every read is scoped by the owning user.
//! - [`MessageBus`]: per-session run locks (owner token + expiry), a bounded
//!   replay log per run addressed by [`Cursor`]s, live fan-out, and a
//!   bounded inbox with a wakeup queue.
//!
//! The embedded defaults are [`SqliteStorage`] (one WAL-mode SQLite file in
//! the data directory, migrations embedded) and [`InMemoryBus`]. Both
//! traits are object-safe (`Arc<dyn Storage>`, `Arc<dyn MessageBus>`), so
//! networked backends plug in without touching callers: [`RedisBus`] carries
//! locks, replay logs, live events and inboxes between replicas through one
//! Redis server, and [`PostgresStorage`] keeps the same records as SQLite
//! in a PostgreSQL database the replicas share (see its "Running on
//! PostgreSQL"). It knows nothing of HTTP, agents or encryption.
//!
//! ```
//! use std::sync::Arc;
//! use oxiscope_storage::{InMemoryBus, MessageBus};
//! use futures_util::StreamExt;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let bus = InMemoryBus::new();
//! let lease = bus.try_lock("s1", std::time::Duration::from_secs(60)).await?.ok_or("free")?;
//! assert!(bus.try_lock("s1", std::time::Duration::from_secs(60)).await?.is_none());
//!
//! bus.begin_run("s1").await?;
//! let first = bus.publish("s1", Arc::from("one"), 1000).await?;
//! bus.publish("s1", Arc::from("two"), 1000).await?;
//!
//! // A late subscriber resumes behind the first event.
//! let mut events = bus.subscribe("s1", Some(first)).await?;
//! assert_eq!(&*events.next().await.ok_or("replayed")?.payload, "two");
//! assert!(bus.unlock(&lease).await?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod api_key_sql;
mod background;
mod bus;
mod channel;
mod channel_sql;
mod columns;
mod error;
mod journal;
mod knowledge;
mod library_sql;
mod params;
mod postgres;
mod record;
mod records_sql;
mod rows;
mod schedule_sql;
mod session_sql;
mod sql_storage;
mod sqlite;
mod storage;
mod team;
mod usage;
mod usage_sql;

pub use background::{BackgroundTaskRecord, BackgroundTaskState, epoch_millis};
pub use bus::{
    BusEvent, Cursor, DEFAULT_REPLAY_LOG_BYTES, EventStream, InMemoryBus, InvalidCursor,
    MessageBus, RedisBus, RedisBusOptions, Release, Retained, Retention, RunLease,
};
pub use channel::{ChannelChatRecord, ChannelRecord, ChannelSessionRecord, ChannelStore};
pub use error::{Error, Result};
pub use journal::{RESULT_LIMIT, ToolCallRecord, cap_text};
pub use knowledge::{KnowledgeBaseRecord, KnowledgeDocumentRecord};
pub use postgres::{PostgresStorage, is_postgres_url};
pub use record::{
    AgentRecord, ApiKeyRecord, CredentialRecord, LibraryCard, McpLibraryRecord, MessagePage,
    ScheduleRecord, SessionRecord, SkillLibraryRecord, StoredMessage, check_time, new_id, now,
};
pub use sqlite::{DATABASE_FILE, SqliteStorage};
pub use storage::{BoxFuture, Storage};
pub use team::TeamRecord;
pub use usage::UsageCounts;
