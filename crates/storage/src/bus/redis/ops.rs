//! [`MessageBus`] for [`RedisBus`]: each operation is one script or one
//! command.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::super::{Cursor, EventStream, MessageBus, Release, RunLease};
use super::{RedisBus, cursor, millis};
use crate::error::{Error, Result};
use crate::record::new_id;
use crate::storage::BoxFuture;

/// How often a waiter looks for wakeups without an announcement (one may
/// be lost while the pub/sub connection reconnects).
const WAKEUP_POLL: Duration = Duration::from_secs(1);

impl RedisBus {
    async fn lock_now(&self, session_id: &str, ttl: Duration) -> Result<Option<RunLease>> {
        let token = new_id();
        let ms = millis(ttl).to_string();
        let taken: i64 = self
            .run(
                &self.inner.scripts.try_lock,
                session_id,
                &[token.as_bytes(), ms.as_bytes()],
            )
            .await?;
        Ok((taken == 1).then(|| RunLease {
            session_id: session_id.to_owned(),
            token,
        }))
    }

    /// Runs a lock script with the lease's token and `extra` arguments.
    async fn with_token(
        &self,
        script: &redis::Script,
        lease: &RunLease,
        extra: &[&[u8]],
    ) -> Result<i64> {
        let mut args: Vec<&[u8]> = vec![lease.token.as_bytes()];
        args.extend_from_slice(extra);
        self.run(script, &lease.session_id, &args).await
    }

    async fn last_cursor_now(&self, session_id: &str) -> Result<Option<Cursor>> {
        let log = self.inner.keys.session(session_id).log;
        let last: Vec<(String, Vec<String>)> = redis::cmd("XREVRANGE")
            .arg(&log)
            .arg("+")
            .arg("-")
            .arg("COUNT")
            .arg(1)
            .query_async(&mut self.conn())
            .await?;
        last.first().map(|(id, _)| cursor(id)).transpose()
    }

    /// Takes the oldest wakeup, in a task of its own: if the caller is gone
    /// when it completes, the wakeup is put back.
    async fn take_wakeup(&self) -> Result<Option<String>> {
        let (tx, rx) = oneshot::channel();
        let bus = self.clone();
        tokio::spawn(async move {
            let taken: Result<Vec<String>> = redis::cmd("ZPOPMIN")
                .arg(bus.inner.keys.wakeups())
                .query_async(&mut bus.conn())
                .await
                .map_err(Error::from);
            // `[member, score]`, or nothing.
            let first = taken.map(|mut v| {
                let score = v.pop()?;
                let member = v.pop()?;
                Some((member, score))
            });
            if let Err(Ok(Some((session_id, score)))) = tx.send(first) {
                let put_back = bus
                    .run::<i64>(
                        &bus.inner.scripts.requeue_wakeup,
                        &session_id,
                        &[score.as_bytes()],
                    )
                    .await;
                if let Err(e) = put_back {
                    tracing::warn!(session_id, error = %e, "redis bus: a wakeup could not be put back");
                }
            }
        });
        match rx.await {
            Ok(taken) => Ok(taken?.map(|(session_id, _)| session_id)),
            Err(_) => Err(Error::BusReply("the wakeup task stopped".to_owned())),
        }
    }

    async fn next_wakeup_now(&self) -> Result<String> {
        let hub = Arc::clone(&self.inner.hub);
        loop {
            let notified = hub.wakeup.notified();
            tokio::pin!(notified);
            // Registered before looking, so an announcement in between is seen.
            notified.as_mut().enable();
            hub.connect().await?;
            if let Some(session_id) = self.take_wakeup().await? {
                return Ok(session_id);
            }
            let _ = tokio::time::timeout(WAKEUP_POLL, notified).await;
        }
    }
}

impl MessageBus for RedisBus {
    fn try_lock<'a>(
        &'a self,
        session_id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<RunLease>>> {
        Box::pin(self.lock_now(session_id, ttl))
    }

    fn renew<'a>(&'a self, lease: &'a RunLease, ttl: Duration) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let ms = millis(ttl).to_string();
            let renewed = self
                .with_token(&self.inner.scripts.renew, lease, &[ms.as_bytes()])
                .await?;
            Ok(renewed == 1)
        })
    }

    fn unlock<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let unlocked = self
                .with_token(&self.inner.scripts.unlock, lease, &[])
                .await?;
            Ok(unlocked == 1)
        })
    }

    fn release<'a>(&'a self, lease: &'a RunLease) -> BoxFuture<'a, Result<Release>> {
        Box::pin(async move {
            let outcome = self
                .with_token(&self.inner.scripts.release, lease, &[])
                .await?;
            match outcome {
                0 => Ok(Release::NotHeld),
                1 => Ok(Release::InboxPending),
                2 => Ok(Release::Released),
                other => Err(Error::BusReply(format!("release answered {other}"))),
            }
        })
    }

    fn is_locked<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let lock = self.inner.keys.session(session_id).lock;
            let held: bool = redis::cmd("EXISTS")
                .arg(&lock)
                .query_async(&mut self.conn())
                .await?;
            Ok(held)
        })
    }

    fn begin_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.run::<i64>(&self.inner.scripts.begin_run, session_id, &[])
                .await?;
            Ok(())
        })
    }

    fn publish<'a>(
        &'a self,
        session_id: &'a str,
        payload: Arc<str>,
        replay_limit: usize,
    ) -> BoxFuture<'a, Result<Cursor>> {
        Box::pin(async move {
            let limit = replay_limit.to_string();
            let budget = self.inner.log_bytes.to_string();
            let id: String = self
                .run(
                    &self.inner.scripts.publish,
                    session_id,
                    &[payload.as_bytes(), limit.as_bytes(), budget.as_bytes()],
                )
                .await?;
            cursor(&id)
        })
    }

    fn checkpoint<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.run::<i64>(&self.inner.scripts.checkpoint, session_id, &[])
                .await?;
            Ok(())
        })
    }

    fn last_cursor<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Cursor>>> {
        Box::pin(self.last_cursor_now(session_id))
    }

    fn subscribe<'a>(
        &'a self,
        session_id: &'a str,
        after: Option<Cursor>,
    ) -> BoxFuture<'a, Result<EventStream>> {
        Box::pin(self.subscribe_now(session_id, after))
    }

    fn push_inbox<'a>(
        &'a self,
        session_id: &'a str,
        item: Value,
        limit: usize,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let item = serde_json::to_string(&item)?;
            let limit = limit.to_string();
            let queued: i64 = self
                .run(
                    &self.inner.scripts.push_inbox,
                    session_id,
                    &[item.as_bytes(), limit.as_bytes()],
                )
                .await?;
            Ok(queued == 1)
        })
    }

    fn pop_inbox<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        Box::pin(async move {
            let item: Option<String> = self
                .run(&self.inner.scripts.pop_inbox, session_id, &[])
                .await?;
            Ok(item.map(|s| serde_json::from_str(&s)).transpose()?)
        })
    }

    fn next_wakeup(&self) -> BoxFuture<'_, Result<String>> {
        Box::pin(self.next_wakeup_now())
    }

    fn open_run<'a>(&'a self, session_id: &'a str, info: Value) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let info = serde_json::to_string(&info)?;
            let _: i64 = redis::cmd("HSET")
                .arg(self.inner.keys.runs())
                .arg(session_id)
                .arg(info)
                .query_async(&mut self.conn())
                .await?;
            Ok(())
        })
    }

    fn close_run<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let removed: i64 = redis::cmd("HDEL")
                .arg(self.inner.keys.runs())
                .arg(session_id)
                .query_async(&mut self.conn())
                .await?;
            Ok(removed == 1)
        })
    }

    fn open_runs(&self) -> BoxFuture<'_, Result<Vec<(String, Value)>>> {
        Box::pin(async move {
            let all: Vec<(String, String)> = redis::cmd("HGETALL")
                .arg(self.inner.keys.runs())
                .query_async(&mut self.conn())
                .await?;
            all.into_iter()
                .map(|(id, info)| Ok((id, serde_json::from_str(&info)?)))
                .collect()
        })
    }

    fn open_run_info<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Option<Value>>> {
        Box::pin(async move {
            let info: Option<String> = redis::cmd("HGET")
                .arg(self.inner.keys.runs())
                .arg(session_id)
                .query_async(&mut self.conn())
                .await?;
            Ok(info.map(|info| serde_json::from_str(&info)).transpose()?)
        })
    }

    fn forget_session<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            // Local subscribers end now; those elsewhere on the notice.
            let channel = self.inner.keys.channel(session_id);
            self.inner.hub.drop_fan(&channel);
            self.run::<i64>(&self.inner.scripts.forget, session_id, &[])
                .await?;
            Ok(())
        })
    }
}
