//! The shared reader: one pub/sub connection per [`RedisBus`](super::RedisBus)
//! that carries live events of every subscribed session and the wakeup
//! announcements, fanned out to local subscribers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{PubSubSink, PubSubStream};
use tokio::sync::{Notify, broadcast, oneshot};

use super::super::{BusEvent, Cursor};
use crate::error::Result;

/// Live messages buffered per subscriber before it catches up from the log.
const FANOUT_CAPACITY: usize = 256;

/// How long connecting, (un)subscribing or a ping may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// How often an idle link is pinged, so a connection that died silently
/// ends its streams instead of leaving them hanging.
const PING_EVERY: Duration = Duration::from_secs(15);

/// `fut` within [`TIMEOUT`]; running out is an I/O timeout error.
async fn timely<T>(fut: impl Future<Output = redis::RedisResult<T>>) -> Result<T> {
    match tokio::time::timeout(TIMEOUT, fut).await {
        Ok(out) => Ok(out?),
        Err(_) => {
            Err(redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut)).into())
        }
    }
}

/// What the channel of a session carries.
#[derive(Debug, Clone)]
pub(super) enum Live {
    /// A published event.
    Event(BusEvent),
    /// The session was forgotten; the number orders it against replays.
    Forgotten(u64),
}

/// The pub/sub connection, its fan-out table and the wakeup signal.
#[derive(Debug)]
pub(super) struct Hub {
    client: redis::Client,
    wake_channel: String,
    /// Serialises (un)subscribing and reconnecting.
    link: tokio::sync::Mutex<Option<Link>>,
    table: Mutex<Table>,
    /// Woken by every wake announcement (and when the link drops).
    pub(super) wakeup: Notify,
}

/// One live pub/sub connection.
#[derive(Debug)]
struct Link {
    sink: PubSubSink,
    epoch: u64,
    alive: Arc<AtomicBool>,
    /// Dropped with the link: stops its reader task.
    _stop: oneshot::Sender<()>,
}

#[derive(Debug, Default)]
struct Table {
    /// Fans by channel name.
    fans: HashMap<String, Fan>,
    /// Numbers links and fans.
    counter: u64,
}

#[derive(Debug)]
struct Fan {
    id: u64,
    epoch: u64,
    tx: broadcast::Sender<Live>,
    subscribers: usize,
}

/// A subscriber's place in a fan; dropping it detaches the subscriber.
#[derive(Debug)]
pub(super) struct Attachment {
    hub: Weak<Hub>,
    channel: String,
    fan: u64,
}

impl Hub {
    pub(super) fn new(client: redis::Client, wake_channel: String) -> Self {
        Self {
            client,
            wake_channel,
            link: tokio::sync::Mutex::new(None),
            table: Mutex::new(Table::default()),
            wakeup: Notify::new(),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Connects (again) when there is no live link; returns the link.
    async fn ensure<'l>(self: &Arc<Self>, link: &'l mut Option<Link>) -> Result<&'l mut Link> {
        let dead = link
            .as_ref()
            .filter(|l| !l.alive.load(Ordering::Acquire))
            .map(|l| l.epoch);
        if let Some(epoch) = dead {
            // Its reader stops with it; its subscribers' streams end.
            *link = None;
            self.lost(epoch);
        }
        if link.is_none() {
            let (mut sink, stream) = timely(self.client.get_async_pubsub()).await?.split();
            timely(sink.subscribe(&self.wake_channel)).await?;
            let epoch = {
                let mut table = self.table();
                table.counter += 1;
                table.counter
            };
            let alive = Arc::new(AtomicBool::new(true));
            let (stop, stopped) = oneshot::channel();
            tokio::spawn(read(
                Arc::downgrade(self),
                sink.clone(),
                stream,
                epoch,
                Arc::clone(&alive),
                stopped,
            ));
            *link = Some(Link {
                sink,
                epoch,
                alive,
                _stop: stop,
            });
            // Wakeups announced while no link was up are looked for again.
            self.wakeup.notify_waiters();
        }
        match link.as_mut() {
            Some(link) => Ok(link),
            None => Err(crate::Error::BusReply("no pub/sub link".to_owned())),
        }
    }

    /// Makes sure the link is up (so wake announcements arrive).
    pub(super) async fn connect(self: &Arc<Self>) -> Result<()> {
        let mut link = self.link.lock().await;
        self.ensure(&mut link).await.map(|_| ())
    }

    /// Attaches a subscriber to `channel`; when this returns, everything
    /// published on it from now on reaches the receiver.
    pub(super) async fn attach(
        self: &Arc<Self>,
        channel: &str,
    ) -> Result<(broadcast::Receiver<Live>, Attachment)> {
        let mut guard = self.link.lock().await;
        let link = self.ensure(&mut guard).await?;
        let (rx, fan, fresh) = {
            let mut table = self.table();
            let Table { fans, counter } = &mut *table;
            let stale = fans.get(channel).is_some_and(|f| f.epoch != link.epoch);
            if stale {
                fans.remove(channel);
            }
            let fresh = !fans.contains_key(channel);
            let fan = fans.entry(channel.to_owned()).or_insert_with(|| {
                *counter += 1;
                Fan {
                    id: *counter,
                    epoch: link.epoch,
                    tx: broadcast::channel(FANOUT_CAPACITY).0,
                    subscribers: 0,
                }
            });
            fan.subscribers += 1;
            (fan.tx.subscribe(), fan.id, fresh)
        };
        let attachment = Attachment {
            hub: Arc::downgrade(self),
            channel: channel.to_owned(),
            fan,
        };
        if fresh {
            // On failure the attachment's drop undoes the count.
            if let Err(e) = timely(link.sink.subscribe(channel)).await {
                // The link is in an unknown state: the next caller reconnects.
                link.alive.store(false, Ordering::Release);
                return Err(e);
            }
        }
        Ok((rx, attachment))
    }

    /// Ends the local subscribers of `channel` (their session was
    /// forgotten) and stops listening to it.
    pub(super) fn drop_fan(self: &Arc<Self>, channel: &str) {
        if self.table().fans.remove(channel).is_some() {
            self.unsubscribe_later(channel);
        }
    }

    /// Local subscribers attached now.
    pub(super) fn subscribers(&self) -> usize {
        self.table().fans.values().map(|f| f.subscribers).sum()
    }

    fn detach(self: &Arc<Self>, channel: &str, fan: u64) {
        let mut table = self.table();
        let Some(entry) = table.fans.get_mut(channel) else {
            return;
        };
        if entry.id != fan {
            return;
        }
        entry.subscribers = entry.subscribers.saturating_sub(1);
        if entry.subscribers == 0 {
            table.fans.remove(channel);
            drop(table);
            self.unsubscribe_later(channel);
        }
    }

    /// Unsubscribes from `channel` unless a subscriber came back meanwhile.
    /// Best effort: a channel left subscribed only costs the messages the
    /// reader drops.
    fn unsubscribe_later(self: &Arc<Self>, channel: &str) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let hub = Arc::downgrade(self);
        let channel = channel.to_owned();
        runtime.spawn(async move {
            let Some(hub) = hub.upgrade() else { return };
            let mut link = hub.link.lock().await;
            if hub.table().fans.contains_key(&channel) {
                return;
            }
            if let Some(link) = link.as_mut()
                && let Err(e) = link.sink.unsubscribe(&channel).await
            {
                tracing::debug!(channel, error = %e, "redis bus: unsubscribe failed");
            }
        });
    }

    /// Routes one message of link `epoch`.
    fn route(&self, channel: &str, payload: &[u8]) {
        if channel == self.wake_channel {
            self.wakeup.notify_waiters();
            return;
        }
        let Some(live) = parse(payload) else {
            tracing::warn!(channel, "redis bus: unreadable live message dropped");
            return;
        };
        let table = self.table();
        if let Some(fan) = table.fans.get(channel) {
            // No receiver left is not an error: the log keeps the event.
            let _ = fan.tx.send(live);
        }
    }

    /// The link of `epoch` is gone: its subscribers' streams end.
    fn lost(&self, epoch: u64) {
        self.table().fans.retain(|_, fan| fan.epoch != epoch);
        self.wakeup.notify_waiters();
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            hub.detach(&self.channel, self.fan);
        }
    }
}

/// `"<cursor> <payload>"` or `"! <forget count>"`.
fn parse(message: &[u8]) -> Option<Live> {
    let text = std::str::from_utf8(message).ok()?;
    let (head, rest) = text.split_once(' ')?;
    if head == "!" {
        return rest.parse().ok().map(Live::Forgotten);
    }
    let cursor: Cursor = head.parse().ok()?;
    Some(Live::Event(BusEvent {
        cursor,
        payload: Arc::from(rest),
    }))
}

/// The reader task of one link: routes messages until the connection or
/// the hub goes away.
async fn read(
    hub: Weak<Hub>,
    mut pinger: PubSubSink,
    mut stream: PubSubStream,
    epoch: u64,
    alive: Arc<AtomicBool>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            message = stream.next() => {
                let Some(message) = message else { break };
                let Some(hub) = hub.upgrade() else { return };
                hub.route(message.get_channel_name(), message.get_payload_bytes());
            }
            _ = &mut stopped => return,
            () = tokio::time::sleep(PING_EVERY) => {
                if let Err(e) = timely(pinger.ping::<redis::Value>()).await {
                    tracing::warn!(error = %e, "redis bus: the pub/sub connection does not answer");
                    break;
                }
            }
        }
    }
    alive.store(false, Ordering::Release);
    if let Some(hub) = hub.upgrade() {
        tracing::warn!("redis bus: the pub/sub connection was lost; live streams end");
        hub.lost(epoch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_messages_parse_or_are_refused() {
        match parse(b"12-3 {\"a\": 1} x") {
            Some(Live::Event(e)) => {
                assert_eq!(e.cursor, Cursor { run: 12, seq: 3 });
                assert_eq!(&*e.payload, "{\"a\": 1} x");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse(b"! 7"), Some(Live::Forgotten(7))));
        assert!(parse(b"nonsense").is_none());
        assert!(parse(b"1-x payload").is_none());
        assert!(parse(&[0xff, b' ']).is_none());
    }
}
