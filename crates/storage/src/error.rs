//! Storage and bus errors.

/// What a store or a bus can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The record does not exist (or belongs to another user).
    #[error("{kind} {id} not found")]
    NotFound {
        /// The record kind (`agent`, `session`, ...).
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// A record with the same unique key exists already (a session of the
    /// same user, agent and workspace).
    #[error("{kind} {key} exists already")]
    AlreadyExists {
        /// The record kind.
        kind: &'static str,
        /// The key that clashed.
        key: String,
    },
    /// A session state write lost the race: the stored revision is newer
    /// than the one the writer loaded.
    #[error(
        "session {session_id}: stale state write (expected revision {expected}, found {found})"
    )]
    StaleRevision {
        /// The session.
        session_id: String,
        /// The revision the writer loaded.
        expected: i64,
        /// The revision in the store.
        found: i64,
    },
    /// The database failed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration {version}: {source}")]
    Migration {
        /// The migration that failed.
        version: i64,
        /// Why.
        source: sqlx::Error,
    },
    /// A stored document is not valid JSON.
    #[error("stored JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The Redis server of the message bus failed or could not be reached.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// The Redis server answered the message bus with something it never
    /// writes (another program changed its keys).
    #[error("unexpected message bus reply: {0}")]
    BusReply(String),
    /// The data directory could not be prepared.
    #[error("data directory {path}: {source}")]
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Result with the storage [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
