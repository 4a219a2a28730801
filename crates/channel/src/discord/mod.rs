//! Discord, over the Gateway (v10): `GET /gateway/bot` names the socket;
//! `Hello` gives the heartbeat interval, `Identify` (with the guild and
//! direct message intents and `MESSAGE_CONTENT`) or `Resume` (session id
//! and last sequence, on the `resume_gateway_url`) follows; heartbeats
//! carry the last sequence and must be acknowledged before the next, or
//! the socket is taken for dead and resumed; `Reconnect` resumes,
//! `Invalid Session` identifies again. `MESSAGE_CREATE` dispatches are
//! the messages; replies go out with `POST /channels/{id}/messages`
//! (2,000 characters each).
//!
//! Routing's `chat_type` is `guild` for a server channel, `dm` for a
//! direct message.

mod gateway;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use oxiscope_http::{HttpClient, RetryPolicy};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::channel::{
    Capabilities, Channel, ChannelSpec, ChannelStatus, ChannelType, ChannelTypeInfo, InboundSink,
    StatusCell,
};
use crate::error::{Error, Result};
use crate::inbound::{ChatKind, Inbound, Sender};

/// The most characters of one message.
const MAX_MESSAGE: usize = 2000;

/// How many times one send is tried.
const SEND_ATTEMPTS: u32 = 5;

/// `GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT`.
pub const INTENTS: u64 = (1 << 9) | (1 << 12) | (1 << 15);

/// The Discord channel type; the REST API's address is the operator's.
#[derive(Debug, Clone)]
pub struct Discord {
    api_base: String,
    backoff: (Duration, Duration),
}

impl Default for Discord {
    fn default() -> Self {
        Self {
            api_base: "https://discord.com/api/v10".into(),
            backoff: (Duration::from_secs(1), Duration::from_secs(60)),
        }
    }
}

impl Discord {
    /// Against `discord.com`.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Against another REST address (`http://127.0.0.1:9000/api/v10`).
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

fn bot_token(credentials: &Value) -> Result<&str> {
    credentials
        .get("bot_token")
        .and_then(Value::as_str)
        .filter(|t| {
            !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        })
        .ok_or_else(|| Error::Invalid("credentials.bot_token is not a bot token".into()))
}

impl ChannelType for Discord {
    fn info(&self) -> ChannelTypeInfo {
        ChannelTypeInfo {
            channel_type: "discord".into(),
            display_name: "Discord".into(),
            description: "Connect agents to a Discord bot over the Gateway".into(),
            icon_url: String::new(),
            credentials_schema: json!({
                "title": "Credentials", "type": "object",
                "properties": {
                    "application_id": {"title": "Application ID", "type": "string"},
                    "bot_token": {"title": "Bot Token", "type": "string", "format": "password"},
                },
                "required": ["application_id", "bot_token"],
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
            platform_bot_id_field: "application_id".into(),
            supports_credential_binding: false,
        }
    }

    fn platform_bot_id(&self, credentials: &Value) -> Result<String> {
        bot_token(credentials)?;
        credentials
            .get("application_id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_owned)
            .ok_or_else(|| Error::Invalid("credentials.application_id must be digits".into()))
    }

    fn open(&self, spec: ChannelSpec) -> Result<Arc<dyn Channel>> {
        self.platform_bot_id(&spec.credentials)?;
        let token = bot_token(&spec.credentials)?.to_owned();
        let http = HttpClient::shared().map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Arc::new(DiscordChannel {
            id: spec.id,
            http,
            base: self.api_base.clone(),
            token,
            backoff: self.backoff,
            status: StatusCell::default(),
            bot_user: Mutex::new(None),
        }))
    }
}

/// One Discord bot's connection.
#[derive(Debug)]
pub struct DiscordChannel {
    id: String,
    http: HttpClient,
    base: String,
    token: String,
    backoff: (Duration, Duration),
    status: StatusCell,
    bot_user: Mutex<Option<String>>,
}

impl DiscordChannel {
    /// A REST call.
    ///
    /// # Errors
    /// [`Error::Platform`] for an error status (with `retry_after` from
    /// the body or the header); [`Error::Transport`] when no answer came.
    async fn rest(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value> {
        let http = self.http.with_retry_policy(RetryPolicy::none());
        let mut request = http
            .request(method, format!("{}{path}", self.base))
            .header("Authorization", format!("Bot {}", self.token));
        if let Some(body) = body {
            request = request.json(body);
        }
        match http.send(request).await {
            Ok(response) => {
                let raw = http
                    .body(response)
                    .collect_bounded(1024 * 1024)
                    .await
                    .map_err(|e| Error::Transport(e.to_string()))?;
                serde_json::from_slice(&raw).map_err(|e| Error::Malformed(e.to_string()))
            }
            Err(oxiscope_http::Error::Status(status)) => {
                let body: Value = serde_json::from_str(&status.body).unwrap_or(Value::Null);
                let retry_after = body
                    .get("retry_after")
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(|s| Duration::from_secs_f64(s.min(600.0)))
                    .or(status.retry_after);
                Err(Error::Platform {
                    status: status.status.as_u16(),
                    description: body
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("request failed")
                        .to_owned(),
                    retry_after,
                })
            }
            Err(e) => Err(Error::Transport(e.to_string())),
        }
    }

    fn wait(&self, attempt: u32, error: Option<&Error>) -> Duration {
        error.and_then(Error::retry_after).unwrap_or_else(|| {
            let (first, longest) = self.backoff;
            first
                .saturating_mul(2u32.saturating_pow(attempt.min(16)))
                .min(longest)
        })
    }
}

/// A `MESSAGE_CREATE` as the runtime takes it; `None` for a bot's message
/// or one without an author or channel.
pub(crate) fn normalise(d: &Value, bot_user: &str) -> Option<Inbound> {
    let author = d.get("author")?;
    if author.get("bot").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let user = author.get("id")?.as_str()?;
    let channel = d.get("channel_id")?.as_str()?;
    let id = d.get("id")?.as_str()?;
    let text = d.get("content").and_then(Value::as_str).unwrap_or("");
    let guild = d.get("guild_id").and_then(Value::as_str);
    let mentions: Vec<String> = d
        .get("mentions")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter_map(|u| u.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mentions_bot = mentions.iter().any(|m| m == bot_user)
        || d.pointer("/referenced_message/author/id")
            .and_then(Value::as_str)
            == Some(bot_user);
    let clean = text
        .replace(&format!("<@{bot_user}>"), "")
        .replace(&format!("<@!{bot_user}>"), "")
        .trim()
        .to_owned();
    let (kind, chat_type) = match guild {
        Some(_) => (ChatKind::Group, "guild"),
        None => (ChatKind::Private, "dm"),
    };
    let mut metadata = Map::new();
    metadata.insert("chat_type".into(), json!(chat_type));
    if let Some(guild) = guild {
        metadata.insert("guild_id".into(), json!(guild));
    }
    let name = author
        .get("global_name")
        .and_then(Value::as_str)
        .or_else(|| author.get("username").and_then(Value::as_str))
        .map(str::to_owned);
    Some(Inbound {
        message_id: id.to_owned(),
        chat_id: channel.to_owned(),
        chat_name: None,
        kind,
        chat_type: chat_type.into(),
        sender: Sender {
            id: user.to_owned(),
            name,
        },
        text: clean,
        images: Vec::new(),
        files: Vec::new(),
        mentions,
        mentions_bot,
        metadata,
    })
}

impl Channel for DiscordChannel {
    fn run<'a>(&'a self, sink: &'a dyn InboundSink, stop: CancellationToken) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.gateway(sink, &stop).await;
            self.status.set("stopped");
        })
    }

    fn send<'a>(&'a self, chat_id: &'a str, text: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if !chat_id.bytes().all(|b| b.is_ascii_digit()) || chat_id.is_empty() {
                return Err(Error::Invalid(format!("not a channel id: {chat_id}")));
            }
            let body = json!({"content": text});
            let path = format!("/channels/{chat_id}/messages");
            let mut attempt = 0;
            loop {
                match self.rest(reqwest::Method::POST, &path, Some(&body)).await {
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
