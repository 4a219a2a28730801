//! [`RedisBus::retained`]: what the bus keeps in Redis, counted by
//! scanning its keys (for tests and occasional inspection, not metrics).

use std::collections::HashSet;

use super::super::Retained;
use super::RedisBus;
use crate::error::Result;

impl RedisBus {
    /// What this bus's key prefix holds in Redis: sessions with a lock, a
    /// non-empty log or queued input; events in logs and their payload bytes; queued inputs;
    /// pending wakeups; and the subscribers attached through this
    /// instance. Run bookkeeping that only waits for its TTL is not
    /// counted.
    ///
    /// It scans every key under the prefix: O(keys), meant for tests and
    /// inspection.
    ///
    /// # Errors
    /// [`Error::Redis`](crate::Error::Redis) when Redis fails.
    pub async fn retained(&self) -> Result<Retained> {
        let keys = &self.inner.keys;
        let mut conn = self.conn();
        let mut sessions = HashSet::new();
        let mut retained = Retained::default();
        for kind in ["lock", "log", "inbox"] {
            let mut cursor = 0_u64;
            loop {
                let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(keys.pattern(kind))
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut conn)
                    .await?;
                for key in found {
                    let Some(session) = keys.session_of(kind, &key) else {
                        continue;
                    };
                    let size: usize = match kind {
                        "log" => redis::cmd("XLEN").arg(&key).query_async(&mut conn).await?,
                        "inbox" => redis::cmd("LLEN").arg(&key).query_async(&mut conn).await?,
                        _ => {
                            redis::cmd("EXISTS")
                                .arg(&key)
                                .query_async(&mut conn)
                                .await?
                        }
                    };
                    if size == 0 {
                        continue;
                    }
                    if kind == "log" {
                        let bytes: Option<usize> = redis::cmd("HGET")
                            .arg(keys.session(session).meta)
                            .arg("bytes")
                            .query_async(&mut conn)
                            .await?;
                        retained.bytes += bytes.unwrap_or(0);
                    }
                    match kind {
                        "log" => retained.events += size,
                        "inbox" => retained.inputs += size,
                        _ => {}
                    }
                    sessions.insert(session.to_owned());
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        retained.sessions = sessions.len();
        retained.wakeups = redis::cmd("ZCARD")
            .arg(keys.wakeups())
            .query_async(&mut conn)
            .await?;
        retained.subscribers = self.inner.hub.subscribers();
        Ok(retained)
    }
}
