//! Slack, over Socket Mode: `apps.connections.open` (with the app-level
//! `xapp-` token) gives a WebSocket URL; the socket says `hello`, then
//! delivers `events_api` envelopes, each acknowledged by sending back its
//! `envelope_id`; a `disconnect` (or a dropped socket) opens a new one.
//! Replies go out with `chat.postMessage` (the `xoxb-` bot token).
//!
//! Routing's `chat_type` is Slack's `channel_type`: `im`, `mpim`,
//! `channel` or `group`.

mod api;
mod event;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use oxiscope_http::HttpClient;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use crate::channel::{
    Capabilities, Channel, ChannelSpec, ChannelStatus, ChannelType, ChannelTypeInfo, InboundSink,
    StatusCell,
};
use crate::error::{Error, Result};
use api::Api;
use event::normalise;

/// The most characters of one message (Slack advises 4,000).
const MAX_MESSAGE: usize = 4000;

/// How many times one send is tried.
const SEND_ATTEMPTS: u32 = 5;

/// The Slack channel type; the Web API's address is the operator's.
#[derive(Debug, Clone)]
pub struct Slack {
    api_base: String,
    backoff: (Duration, Duration),
}

impl Default for Slack {
    fn default() -> Self {
        Self {
            api_base: "https://slack.com/api".into(),
            backoff: (Duration::from_secs(1), Duration::from_secs(60)),
        }
    }
}

impl Slack {
    /// Against `slack.com`.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Against another Web API address (`http://127.0.0.1:9000/api`).
    #[must_use]
    pub fn with_api_base(mut self, base: impl Into<String>) -> Self {
        self.api_base = base.into().trim_end_matches('/').to_owned();
        self
    }

    /// The first and the longest wait between reconnections.
    #[must_use]
    pub fn with_backoff(mut self, first: Duration, longest: Duration) -> Self {
        self.backoff = (first, longest.max(first));
        self
    }
}

fn token<'a>(credentials: &'a Value, field: &str, prefix: &str) -> Result<&'a str> {
    credentials
        .get(field)
        .and_then(Value::as_str)
        .filter(|t| {
            t.starts_with(prefix) && t.len() > prefix.len() && !t.contains(char::is_whitespace)
        })
        .ok_or_else(|| Error::Invalid(format!("credentials.{field} must be a {prefix}… token")))
}

impl ChannelType for Slack {
    fn info(&self) -> ChannelTypeInfo {
        ChannelTypeInfo {
            channel_type: "slack".into(),
            display_name: "Slack".into(),
            description: "Connect agents to a Slack app over Socket Mode".into(),
            icon_url: String::new(),
            credentials_schema: json!({
                "title": "Credentials", "type": "object",
                "properties": {
                    "app_token": {"title": "App-Level Token", "type": "string",
                                  "format": "password"},
                    "bot_token": {"title": "Bot Token", "type": "string", "format": "password"},
                },
                "required": ["app_token", "bot_token"],
            }),
            config_schema: json!({
                "title": "Config", "type": "object",
                "properties": {
                    "only_at_reply": {"title": "Only At Reply", "type": "boolean", "default": true},
                    "show_thinking": {"title": "Show Thinking", "type": "boolean", "default": false},
                    "show_tool_process": {"title": "Show Tool Process", "type": "boolean",
                                          "default": false},
                },
            }),
            platform_bot_id_field: "app_token".into(),
            supports_credential_binding: false,
        }
    }

    fn platform_bot_id(&self, credentials: &Value) -> Result<String> {
        // `xapp-1-<app id>-<number>-<secret>`: the app id is no secret.
        let app = token(credentials, "app_token", "xapp-")?;
        Ok(app.split('-').nth(2).unwrap_or_default().to_owned())
    }

    fn open(&self, spec: ChannelSpec) -> Result<Arc<dyn Channel>> {
        let app_token = token(&spec.credentials, "app_token", "xapp-")?.to_owned();
        let bot_token = token(&spec.credentials, "bot_token", "xoxb-")?.to_owned();
        let http = HttpClient::shared().map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Arc::new(SlackChannel {
            id: spec.id,
            api: Api {
                http,
                base: self.api_base.clone(),
            },
            app_token,
            bot_token,
            backoff: self.backoff,
            status: StatusCell::default(),
        }))
    }
}

/// One Slack app's connection.
#[derive(Debug)]
pub struct SlackChannel {
    id: String,
    api: Api,
    app_token: String,
    bot_token: String,
    backoff: (Duration, Duration),
    status: StatusCell,
}

/// How a socket ended.
enum Ended {
    /// Stopped.
    Stop,
    /// Slack asked for a new socket, or it dropped: connect again.
    Again(Option<Error>),
}

impl SlackChannel {
    fn wait(&self, attempt: u32, error: Option<&Error>) -> Duration {
        error.and_then(Error::retry_after).unwrap_or_else(|| {
            let (first, longest) = self.backoff;
            first
                .saturating_mul(2u32.saturating_pow(attempt.min(16)))
                .min(longest)
        })
    }

    /// One socket: open it, serve it until it ends.
    async fn socket(&self, sink: &dyn InboundSink, stop: &CancellationToken, bot: &str) -> Ended {
        let opened = match self
            .api
            .call("apps.connections.open", &self.app_token, &json!({}))
            .await
        {
            Ok(opened) => opened,
            Err(e) => return Ended::Again(Some(e)),
        };
        let Some(url) = opened.get("url").and_then(Value::as_str) else {
            return Ended::Again(Some(Error::Malformed("no socket URL".into())));
        };
        let connector = match tls() {
            Ok(config) => tokio_tungstenite::Connector::Rustls(config),
            Err(e) => return Ended::Again(Some(e)),
        };
        let connected =
            tokio_tungstenite::connect_async_tls_with_config(url, None, false, Some(connector))
                .await;
        let mut socket = match connected {
            Ok((socket, _)) => socket,
            Err(e) => return Ended::Again(Some(Error::Transport(e.to_string()))),
        };
        loop {
            let frame = tokio::select! {
                () = stop.cancelled() => {
                    let _ = socket.close(None).await;
                    return Ended::Stop;
                }
                frame = socket.next() => frame,
            };
            let text = match frame {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(_))) | None => return Ended::Again(None),
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Ended::Again(Some(Error::Transport(e.to_string()))),
            };
            let Ok(envelope) = serde_json::from_str::<Value>(text.as_str()) else {
                tracing::warn!(
                    channel_id = self.id,
                    "a malformed Socket Mode frame is skipped"
                );
                continue;
            };
            // Acknowledged first: Slack waits three seconds, and delivers
            // again what it did not see acknowledged (taken once anyway).
            if let Some(id) = envelope.get("envelope_id").and_then(Value::as_str) {
                let ack = json!({"envelope_id": id}).to_string();
                if let Err(e) = socket.send(Message::text(ack)).await {
                    return Ended::Again(Some(Error::Transport(e.to_string())));
                }
            }
            match envelope.get("type").and_then(Value::as_str) {
                Some("hello") => self.status.set("connected"),
                Some("disconnect") => return Ended::Again(None),
                Some("events_api") => {
                    if let Some(message) = envelope
                        .pointer("/payload/event")
                        .and_then(|e| normalise(e, bot))
                    {
                        sink.handle(message).await;
                    }
                }
                _ => {}
            }
        }
    }
}

/// TLS for `wss://`: the workspace rustls (ring) with the system roots.
pub(crate) fn tls() -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| Error::Invalid(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

impl Channel for SlackChannel {
    fn run<'a>(&'a self, sink: &'a dyn InboundSink, stop: CancellationToken) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.status.set("connecting");
            let mut attempt = 0;
            let mut bot: Option<String> = None;
            loop {
                let ended = match &bot {
                    Some(bot) => self.socket(sink, &stop, bot).await,
                    None => match self
                        .api
                        .call("auth.test", &self.bot_token, &json!({}))
                        .await
                    {
                        Ok(me) => {
                            bot = me.get("user_id").and_then(Value::as_str).map(str::to_owned);
                            continue;
                        }
                        Err(e) => Ended::Again(Some(e)),
                    },
                };
                let error = match ended {
                    Ended::Stop => break,
                    Ended::Again(None) => {
                        attempt = 0;
                        continue;
                    }
                    Ended::Again(Some(e)) => e,
                };
                tracing::warn!(channel_id = self.id, error = %error, "slack");
                if error.is_unauthorized() {
                    self.status.fail("failed", &error.to_string());
                    stop.cancelled().await;
                    break;
                }
                self.status.fail("retrying", &error.to_string());
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(self.wait(attempt, Some(&error))) => {}
                }
                attempt += 1;
            }
            self.status.set("stopped");
        })
    }

    fn send<'a>(&'a self, chat_id: &'a str, text: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let body = json!({"channel": chat_id, "text": text});
            let mut attempt = 0;
            loop {
                match self
                    .api
                    .call("chat.postMessage", &self.bot_token, &body)
                    .await
                {
                    Ok(_) => return Ok(()),
                    Err(e) if e.is_retryable() && attempt + 1 < SEND_ATTEMPTS => {
                        tokio::time::sleep(self.wait(attempt, Some(&e))).await;
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
            markdown: true,
            image: false,
            file: false,
            interactive: false,
            max_message_length: MAX_MESSAGE,
        }
    }
}
