//! The channels one replica runs: started from their records, restarted
//! when a record changes, stopped when it is disabled or deleted and when
//! the engine shuts down. Every replica runs every enabled channel; the
//! runtime makes sure each message is handled, and each reply sent, once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oxiscope_storage::ChannelRecord;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::channel::{ChannelSpec, ChannelStatus, Handled};
use crate::error::{Error, Result};
use crate::records::Channels;
use crate::runtime::{ChannelRuntime, store_of};

/// How long a stopping channel may take to let go before it is aborted.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long a taken platform message id is remembered (platforms redeliver
/// within minutes).
const INBOUND_MEMORY_DAYS: i64 = 7;

#[derive(Debug)]
struct Running {
    runtime: Arc<ChannelRuntime>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// The running channels of this replica. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ChannelHost {
    channels: Channels,
    engine: oxiscope_session::Engine,
    running: Arc<Mutex<HashMap<String, Running>>>,
}

impl ChannelHost {
    /// A host over `channels`' records and `engine`.
    #[must_use]
    pub fn new(engine: oxiscope_session::Engine, channels: Channels) -> Self {
        Self {
            channels,
            engine,
            running: Arc::default(),
        }
    }

    /// The records it runs.
    #[must_use]
    pub fn channels(&self) -> &Channels {
        &self.channels
    }

    /// Starts every enabled channel of every user; how many started (a
    /// channel that cannot start is logged and skipped).
    ///
    /// # Errors
    /// The store's failure listing them.
    pub async fn start_enabled(&self) -> Result<usize> {
        let records = store_of(&self.engine)?.enabled_channels().await?;
        self.spawn_pruner();
        let mut started = 0;
        for record in records {
            match self.start(record.clone()).await {
                Ok(()) => started += 1,
                Err(e) => {
                    tracing::warn!(channel_id = record.id, error = %e, "a channel cannot start");
                }
            }
        }
        Ok(started)
    }

    /// Forgets taken message ids older than a week, hourly, until the
    /// engine shuts down.
    fn spawn_pruner(&self) {
        let engine = self.engine.clone();
        tokio::spawn(async move {
            let stop = engine.shutdown_token().clone();
            loop {
                let cutoff = (chrono::Local::now().naive_local()
                    - chrono::Duration::days(INBOUND_MEMORY_DAYS))
                .format("%Y-%m-%dT%H:%M:%S%.6f")
                .to_string();
                if let Ok(store) = store_of(&engine)
                    && let Err(e) = store.prune_inbound(&cutoff).await
                {
                    tracing::warn!(error = %e, "cannot forget old inbound message ids");
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_secs(3600)) => {}
                }
            }
        });
    }

    /// Runs `record` (stopping the runtime it replaces), or only stops it
    /// when it is disabled.
    ///
    /// # Errors
    /// [`Error::UnknownType`] or [`Error::Invalid`] when it cannot be
    /// opened.
    pub async fn start(&self, record: ChannelRecord) -> Result<()> {
        self.stop(&record.id).await;
        if !record.enabled {
            return Ok(());
        }
        let kind = self.channels.registry().get(&record.channel_type)?;
        let data = crate::settings::ChannelData::from_value(&record.data)?;
        let channel = kind.open(ChannelSpec {
            id: record.id.clone(),
            credentials: self.channels.credentials(&record)?,
            config: serde_json::Value::Object(data.platform_config),
        })?;
        let stop = self.engine.shutdown_token().child_token();
        let runtime = Arc::new(ChannelRuntime::new(
            self.engine.clone(),
            record.clone(),
            channel,
            stop.clone(),
        )?);
        let task = {
            let (runtime, stop) = (runtime.clone(), stop.clone());
            tokio::spawn(async move {
                let channel = runtime.channel().clone();
                channel.run(runtime.as_ref(), stop).await;
            })
        };
        tracing::info!(
            channel_id = record.id,
            channel_type = record.channel_type,
            "channel started"
        );
        let replaced = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                record.id.clone(),
                Running {
                    runtime,
                    stop,
                    task,
                },
            );
        if let Some(old) = replaced {
            finish(old).await;
        }
        Ok(())
    }

    /// Stops a channel's runtime here, if it runs.
    pub async fn stop(&self, id: &str) {
        let running = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(running) = running {
            finish(running).await;
            tracing::info!(channel_id = id, "channel stopped");
        }
    }

    /// Stops every channel here.
    pub async fn stop_all(&self) {
        let all: Vec<Running> = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, r)| r)
            .collect();
        for running in all {
            finish(running).await;
        }
    }

    /// A channel's live status here (`stopped` when it does not run).
    #[must_use]
    pub fn status(&self, id: &str) -> ChannelStatus {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(running) = running.get(id) else {
            return ChannelStatus::default();
        };
        let mut status = running.runtime.channel().status();
        if status.last_error.is_empty() {
            status.last_error = running.runtime.delivery_error();
        }
        status
    }

    /// Hands a webhook delivery to the running channel `id`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the channel does not run here, takes no
    /// webhooks, or the secret or body is refused.
    pub async fn webhook(&self, id: &str, secret: Option<&str>, body: &[u8]) -> Result<Handled> {
        let runtime = {
            let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            running.get(id).map(|r| r.runtime.clone())
        };
        let Some(runtime) = runtime else {
            return Err(Error::Invalid(format!("channel {id} does not run")));
        };
        let channel = runtime.channel().clone();
        channel.webhook(runtime.as_ref(), secret, body).await
    }
}

async fn finish(running: Running) {
    running.stop.cancel();
    let mut task = running.task;
    if tokio::time::timeout(STOP_GRACE, &mut task).await.is_err() {
        task.abort();
    }
}
