//! The connection of a [`TelegramChannel`]: who the bot is, the polling
//! loop with its retries, webhook deliveries, and sending.

use super::*;

/// How many times one send is tried.
const SEND_ATTEMPTS: u32 = 5;

impl TelegramChannel {
    /// The wait before retry `attempt` (0-based): the platform's
    /// `retry_after` when it gave one, else doubling from the first wait.
    fn wait(&self, attempt: u32, error: &Error) -> Duration {
        error.retry_after().unwrap_or_else(|| {
            let (first, longest) = self.backoff;
            first
                .saturating_mul(2u32.saturating_pow(attempt.min(16)))
                .min(longest)
        })
    }

    /// Sleeps `wait` unless stopped first; `false` when stopped.
    async fn pause(stop: &CancellationToken, wait: Duration) -> bool {
        tokio::select! {
            () = stop.cancelled() => false,
            () = tokio::time::sleep(wait) => true,
        }
    }

    /// The bot, from `getMe` (asked once).
    async fn me(&self) -> Result<User> {
        let known = self
            .me
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(me) = known {
            return Ok(me);
        }
        let me: User = self.api.call("getMe", &json!({})).await?;
        *self.me.lock().unwrap_or_else(PoisonError::into_inner) = Some(me.clone());
        Ok(me)
    }

    /// Records `error`; `false` when the channel must park (refused
    /// credentials).
    fn note(&self, error: &Error) -> bool {
        tracing::warn!(channel_id = self.id, error = %error, "telegram");
        if error.is_unauthorized() {
            self.status.fail("failed", &error.to_string());
            false
        } else {
            self.status.fail("retrying", &error.to_string());
            true
        }
    }

    /// Connects: `getMe` until it answers, then (webhook mode) `setWebhook`
    /// or (polling) `deleteWebhook`; `None` when stopped or parked.
    async fn connect(&self, stop: &CancellationToken) -> Option<User> {
        self.status.set("connecting");
        let mut attempt = 0;
        loop {
            let connected = async {
                let me = self.me().await?;
                match &self.webhook {
                    Some(url) => {
                        let params = json!({"url": url, "secret_token": self.secret,
                                            "allowed_updates": ["message"]});
                        self.api.call::<Value>("setWebhook", &params).await?;
                    }
                    None => {
                        let params = json!({"drop_pending_updates": false});
                        self.api.call::<Value>("deleteWebhook", &params).await?;
                    }
                }
                Ok::<_, Error>(me)
            }
            .await;
            match connected {
                Ok(me) => {
                    self.status.set("connected");
                    return Some(me);
                }
                Err(e) => {
                    if !self.note(&e) {
                        stop.cancelled().await;
                        return None;
                    }
                    if !Self::pause(stop, self.wait(attempt, &e)).await {
                        return None;
                    }
                    attempt += 1;
                }
            }
        }
    }

    async fn poll(&self, sink: &dyn InboundSink, stop: &CancellationToken, me: &User) {
        let mut offset: Option<i64> = None;
        let mut attempt = 0;
        loop {
            let params = json!({
                "offset": offset,
                "timeout": self.poll_timeout.as_secs(),
                "allowed_updates": ["message"],
            });
            let got = tokio::select! {
                () = stop.cancelled() => return,
                got = self.api.call::<Vec<Value>>("getUpdates", &params) => got,
            };
            match got {
                Ok(updates) => {
                    if attempt > 0 {
                        self.status.set("connected");
                    }
                    attempt = 0;
                    for raw in updates {
                        let Some(id) = raw.get("update_id").and_then(Value::as_i64) else {
                            tracing::warn!(channel_id = self.id, "an update without an id");
                            continue;
                        };
                        // An update that is not the API's is skipped, not
                        // retried forever.
                        match serde_json::from_value::<Update>(raw) {
                            Ok(update) => {
                                self.take(sink, &update, me).await;
                            }
                            Err(e) => {
                                tracing::warn!(channel_id = self.id, error = %e,
                                    "a malformed update is skipped");
                            }
                        }
                        // Confirmed with the next call: handled updates are
                        // not delivered again.
                        offset = Some(id + 1);
                        if stop.is_cancelled() {
                            return;
                        }
                    }
                }
                Err(e) => {
                    if !self.note(&e) {
                        stop.cancelled().await;
                        return;
                    }
                    if !Self::pause(stop, self.wait(attempt, &e)).await {
                        return;
                    }
                    attempt += 1;
                }
            }
        }
    }

    /// Normalises one update, fetches its attachments and hands it on.
    async fn take(&self, sink: &dyn InboundSink, update: &Update, me: &User) -> Handled {
        let Some(message) = &update.message else {
            return Handled::Ignored;
        };
        let Some((mut inbound, wanted)) = normalise(message, me) else {
            return Handled::Ignored;
        };
        for want in wanted {
            match self.fetch(&want).await {
                Ok(bytes) => {
                    let attachment = Attachment {
                        name: want.name.clone(),
                        media_type: want.media_type.clone(),
                        data: B64.encode(bytes),
                    };
                    if want.image {
                        inbound.images.push(attachment);
                    } else {
                        inbound.files.push(attachment);
                    }
                }
                Err(e) => {
                    tracing::warn!(channel_id = self.id, error = %e, "an attachment is left out");
                    let name = want.name.as_deref().unwrap_or("an attachment");
                    inbound
                        .text
                        .push_str(&format!("\n[{name} could not be received: {e}]"));
                }
            }
        }
        sink.handle(inbound).await
    }

    async fn fetch(&self, want: &update::Wanted) -> Result<Vec<u8>> {
        if want.size.is_some_and(|s| s > self.max_media) {
            return Err(Error::Invalid(format!(
                "it is over {} bytes",
                self.max_media
            )));
        }
        let file: File = self
            .api
            .call("getFile", &json!({"file_id": want.file_id}))
            .await?;
        let path = file
            .file_path
            .ok_or_else(|| Error::Malformed("getFile named no file_path".into()))?;
        self.api.download(&path, self.max_media).await
    }
}

impl Channel for TelegramChannel {
    fn run<'a>(&'a self, sink: &'a dyn InboundSink, stop: CancellationToken) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(me) = self.connect(&stop).await {
                if self.webhook.is_some() {
                    // Deliveries arrive through `webhook`.
                    stop.cancelled().await;
                } else {
                    self.poll(sink, &stop, &me).await;
                }
            }
            self.status.set("stopped");
        })
    }

    fn send<'a>(&'a self, chat_id: &'a str, text: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let chat: Value = chat_id
                .parse::<i64>()
                .map_or_else(|_| json!(chat_id), |id| json!(id));
            let params = json!({"chat_id": chat, "text": text});
            let mut attempt = 0;
            loop {
                match self.api.call::<Value>("sendMessage", &params).await {
                    Ok(_) => return Ok(()),
                    Err(e) if e.is_retryable() && attempt + 1 < SEND_ATTEMPTS => {
                        tokio::time::sleep(self.wait(attempt, &e)).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        })
    }

    fn status(&self) -> ChannelStatus {
        self.status.get()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            markdown: false,
            image: false,
            file: false,
            interactive: false,
            max_message_length: MAX_MESSAGE,
        }
    }

    fn webhook<'a>(
        &'a self,
        sink: &'a dyn InboundSink,
        secret: Option<&'a str>,
        body: &'a [u8],
    ) -> BoxFuture<'a, Result<Handled>> {
        Box::pin(async move {
            let Some(expected) = &self.secret else {
                return Err(Error::Invalid("this channel takes no webhooks".into()));
            };
            if !secret.is_some_and(|given| same(given.as_bytes(), expected.as_bytes())) {
                return Err(Error::Invalid("wrong or missing secret token".into()));
            }
            let update: Update = serde_json::from_slice(body)
                .map_err(|e| Error::Invalid(format!("not an update: {e}")))?;
            let me = self.me().await?;
            Ok(self.take(sink, &update, &me).await)
        })
    }
}

/// Compares secrets in time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
