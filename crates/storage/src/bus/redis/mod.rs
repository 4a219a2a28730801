//! [`RedisBus`]: the message bus shared by every replica through one Redis
//! server (7 or later).
//!
//! # Design
//! Every key and channel starts with a prefix (default `oxiscope:`), so
//! several deployments, or tests, share one Redis. Per session:
//!
//! - `lock:<id>`: the run lock, a string holding the lease token with the
//!   lease's TTL, and `owner:<id>`, the last lease's token kept `idle_ttl`
//!   longer: as in process, a lease that ran out still renews, unlocks or
//!   releases while nobody else took the lock. Every lock operation is a
//!   Lua script that compares the token first (release also checks the
//!   inbox in the same step).
//! - `meta:<id>` (hash `run`, `seq`, `checkpoint`) and `log:<id>` (a
//!   stream): the current run's replay log. A [`Cursor`] `<run>-<seq>` *is*
//!   the stream entry id, so resuming after a cursor is `XRANGE (<cursor> +`
//!   whatever run the cursor belongs to: an earlier run's cursor sorts
//!   before every entry (the whole log), a later one after all of them
//!   (nothing). Run numbers are microseconds of the Redis server's clock,
//!   kept increasing by `clock`, so they outlive forgotten sessions.
//!   The publish script bounds the log to `replay_limit` entries and to
//!   the retention's `log_bytes` of payload (kept as `bytes` in `meta`),
//!   dropping the oldest entries first; a limit of 0 keeps none.
//!   `begin_run` deletes the log and starts a new run; `checkpoint` stores
//!   the last cursor, where a subscriber without `after` starts.
//! - `events:<id>`: a pub/sub channel; `publish` adds to the log and
//!   publishes `"<cursor> <payload>"` in one script, `forget_session`
//!   publishes `"! <n>"`.
//! - `inbox:<id>`: a list bounded by a length check in the push script;
//!   `wakeups` is a sorted set holding each session with queued input once,
//!   oldest first, withdrawn when its inbox empties, and the `wake`
//!   channel announces pushes.
//!
//! Live delivery: each `RedisBus` has one pub/sub connection (the hub)
//! shared by all its subscribers, subscribed to a session's channel while
//! it has local subscribers, fanned out through a bounded broadcast per
//! session. A subscriber attaches to the channel first, then reads the
//! replay, and drops live events at or before its last cursor, so replay
//! and live events join without a gap or a duplicate; one that falls
//! behind the broadcast reads the log again from its last cursor. Forget
//! notices carry the value of the global `forgets` counter, which the
//! replay also reads, so a notice older than a subscription is ignored.
//!
//! Wakeups: `next_wakeup` takes the oldest entry of `wakeups` with
//! `ZPOPMIN`, so each wakeup goes to exactly one waiter across all
//! replicas; it waits for a `wake` announcement (or polls every second, in
//! case one was missed) between attempts. The take runs in a task of its
//! own: when the caller's future was dropped meanwhile, the task puts the
//! wakeup back, so a cancelled wait loses nothing.
//!
//! Retention, as in process ([`Retention`]): the log and meta keys expire
//! `idle_ttl` after the run's lock is let go (every script that touches
//! them sets their TTL to the lock's remaining time plus `idle_ttl`), and
//! the `idle` sorted set indexes sessions whose only state is a log, least
//! recently idle first: beyond `idle_logs` of them, the oldest logs are
//! dropped. Unlike in process, a subscriber does not keep a log (a
//! replica does not know the others' subscribers); it still gets every
//! live event. The inbox has no TTL (it is bounded and served);
//! `forget_session` deletes all of a session's keys.
//!
//! Connection loss: commands go through a reconnecting connection and fail
//! with [`Error::Redis`](crate::Error::Redis) while the server is away
//! (each within a 10 s timeout). When the pub/sub connection drops, or an
//! idle one does not answer a ping (sent after 15 s without traffic),
//! every live stream of this bus ends (clients resume with their last
//! cursor) and the next subscription or wakeup wait connects again. If
//! Redis drops a subscriber connection that falls too far behind (its
//! `client-output-buffer-limit pubsub`), the same happens.
//!
//! Counting: [`MessageBus::depth`](super::MessageBus::depth) answers
//! `None` (counting means scanning keys); [`RedisBus::retained`] scans, for
//! tests and inspection.
//!
//! Not supported: Redis Cluster (the scripts touch a session's keys, the
//! global ones and, trimming idle logs, other sessions' keys together).

mod census;
mod follow;
mod hub;
mod keys;
mod ops;
mod scripts;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use self::hub::Hub;
use self::keys::Keys;
use self::scripts::Scripts;
use super::{Cursor, Retention};
use crate::error::{Error, Result};

/// How a [`RedisBus`] names its keys and keeps idle logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisBusOptions {
    /// Starts every key and channel name: deployments (or tests) with
    /// different prefixes share a Redis without seeing each other.
    pub prefix: String,
    /// How many replay logs of sessions nothing needs (no lock, no queued
    /// input) are kept, and how long: as for the in-process bus. The token
    /// of a lease that ran out is kept as long as its log.
    pub retention: Retention,
}

impl Default for RedisBusOptions {
    /// Prefix `oxiscope:`, the default [`Retention`] (128 idle logs, for
    /// at most a minute).
    fn default() -> Self {
        Self {
            prefix: "oxiscope:".to_owned(),
            retention: Retention::default(),
        }
    }
}

impl RedisBusOptions {
    /// With another key prefix.
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// With another retention of idle logs.
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }
}

/// The networked [`MessageBus`](super::MessageBus): locks, replay logs,
/// inboxes and wakeups in Redis, so any replica can run any session and
/// every subscriber, on any replica, sees every event. See the module
/// documentation for how.
///
/// ```no_run
/// # async fn demo() -> oxiscope_storage::Result<()> {
/// use std::time::Duration;
/// use oxiscope_storage::{MessageBus, RedisBus, RedisBusOptions};
///
/// let options = RedisBusOptions::default().with_prefix("staging:");
/// let bus = RedisBus::connect("redis://127.0.0.1:6379", options).await?;
/// if let Some(lease) = bus.try_lock("s1", Duration::from_secs(30)).await? {
///     bus.begin_run("s1").await?;
///     bus.publish("s1", "{}".into(), 4096).await?;
///     bus.release(&lease).await?;
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisBus {
    inner: Arc<Inner>,
}

struct Inner {
    conn: ConnectionManager,
    hub: Arc<Hub>,
    keys: Keys,
    scripts: Scripts,
    idle_ms: u64,
    idle_logs: usize,
    /// The byte budget of each replay log ([`Retention::log_bytes`]).
    log_bytes: usize,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus")
            .field("prefix", &self.inner.keys.prefix())
            .field("idle_ms", &self.inner.idle_ms)
            .finish_non_exhaustive()
    }
}

/// How long a connection attempt or a command may take.
const TIMEOUT: Duration = Duration::from_secs(10);

impl RedisBus {
    /// Connects to the Redis server at `url` (`redis://[user:pass@]host:port[/db]`).
    ///
    /// # Errors
    /// [`Error::Redis`] when the URL is invalid or the server cannot be
    /// reached.
    pub async fn connect(url: &str, options: RedisBusOptions) -> Result<Self> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(2);
        let conn = client.get_connection_manager_with_config(config).await?;
        let keys = Keys::new(&options.prefix);
        let hub = Arc::new(Hub::new(client, keys.wake_channel()));
        hub.connect().await?;
        let idle_ms = u64::try_from(options.retention.idle_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        Ok(Self {
            inner: Arc::new(Inner {
                conn,
                hub,
                keys,
                scripts: Scripts::new(),
                idle_ms,
                idle_logs: options.retention.idle_logs,
                log_bytes: options.retention.log_bytes,
            }),
        })
    }

    fn conn(&self) -> ConnectionManager {
        self.inner.conn.clone()
    }

    /// Runs `script` for `session_id` with its keys, the shared arguments
    /// and `args`.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &redis::Script,
        session_id: &str,
        args: &[&[u8]],
    ) -> Result<T> {
        let keys = &self.inner.keys;
        let session = keys.session(session_id);
        let mut invocation = script.prepare_invoke();
        invocation
            .key(&session.lock)
            .key(&session.meta)
            .key(&session.log)
            .key(&session.inbox)
            .key(keys.wakeups())
            .key(keys.clock())
            .key(keys.forgets())
            .key(keys.wake_seq())
            .key(&session.owner)
            .key(keys.idle())
            .arg(session_id)
            .arg(&session.channel)
            .arg(keys.wake_channel())
            .arg(self.inner.idle_ms)
            .arg(self.inner.idle_logs);
        for arg in args {
            invocation.arg(*arg);
        }
        Ok(invocation.invoke_async(&mut self.conn()).await?)
    }
}

/// Milliseconds of a TTL, at least 1 unless it is zero.
fn millis(ttl: Duration) -> u64 {
    if ttl.is_zero() {
        return 0;
    }
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// A cursor the bus wrote, read back.
fn cursor(id: &str) -> Result<Cursor> {
    id.parse()
        .map_err(|_| Error::BusReply(format!("not a cursor: {id:?}")))
}
