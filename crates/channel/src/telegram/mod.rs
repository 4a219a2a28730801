//! Telegram, over the Bot API: long polling with `getUpdates` (the offset
//! confirms what was handled), or webhook mode (`setWebhook` with a secret
//! token Telegram sends back in `X-Telegram-Bot-Api-Secret-Token`);
//! replies with `sendMessage`, 4096 characters at most each.
//!
//! Routing's `chat_type` is `private` or `group` (a supergroup is a
//! group; the Bot API's own name is in `telegram_chat_type`). Polling
//! takes one consumer per bot: with several replicas, use webhook mode.

mod api;
mod update;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use futures_util::future::BoxFuture;
use oxiscope_http::HttpClient;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::channel::{
    Capabilities, Channel, ChannelSpec, ChannelStatus, ChannelType, ChannelTypeInfo, Handled,
    InboundSink, StatusCell,
};
use crate::error::{Error, Result};
use crate::inbound::Attachment;
use api::Api;
use update::{File, Update, User, normalise};

/// The header Telegram sends a webhook's secret token in.
pub const SECRET_HEADER: &str = "X-Telegram-Bot-Api-Secret-Token";

/// The most characters of one message.
const MAX_MESSAGE: usize = 4096;

/// The most bytes of one attachment the Bot API lets a bot download.
const MAX_MEDIA_LIMIT: u64 = 20 * 1024 * 1024;

/// The Telegram channel type. The API's address is the operator's choice
/// (a local Bot API server, or a fake in tests), never a tenant's.
#[derive(Debug, Clone)]
pub struct Telegram {
    api_base: String,
    poll_timeout: Duration,
    backoff: (Duration, Duration),
}

impl Default for Telegram {
    fn default() -> Self {
        Self {
            api_base: "https://api.telegram.org".into(),
            poll_timeout: Duration::from_secs(30),
            backoff: (Duration::from_secs(1), Duration::from_secs(60)),
        }
    }
}

impl Telegram {
    /// Against `api.telegram.org`.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Against another Bot API server (`http://127.0.0.1:8081`).
    #[must_use]
    pub fn with_api_base(mut self, base: impl Into<String>) -> Self {
        self.api_base = base.into().trim_end_matches('/').to_owned();
        self
    }

    /// How long one `getUpdates` waits for messages (30 s by default).
    #[must_use]
    pub fn with_poll_timeout(mut self, timeout: Duration) -> Self {
        self.poll_timeout = timeout;
        self
    }

    /// The first and the longest wait between retries (1 s and 60 s).
    #[must_use]
    pub fn with_backoff(mut self, first: Duration, longest: Duration) -> Self {
        self.backoff = (first, longest.max(first));
        self
    }
}

/// The credentials: `bot_token`, and for webhook mode `webhook_secret`.
fn token_of(credentials: &Value) -> Result<&str> {
    let token = credentials
        .get("bot_token")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::Invalid("credentials.bot_token is required".into()))?;
    let valid = token.split_once(':').is_some_and(|(id, secret)| {
        !id.is_empty()
            && id.bytes().all(|b| b.is_ascii_digit())
            && !secret.is_empty()
            && secret
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    if valid {
        Ok(token)
    } else {
        Err(Error::Invalid(
            "credentials.bot_token is not a bot token (<bot id>:<secret>)".into(),
        ))
    }
}

impl ChannelType for Telegram {
    fn info(&self) -> ChannelTypeInfo {
        ChannelTypeInfo {
            channel_type: "telegram".into(),
            display_name: "Telegram".into(),
            description: "Connect agents to a Telegram bot".into(),
            icon_url: String::new(),
            credentials_schema: json!({
                "title": "Credentials", "type": "object",
                "properties": {
                    "bot_token": {"title": "Bot Token", "type": "string", "format": "password"},
                    "webhook_secret": {"title": "Webhook Secret Token", "type": "string",
                                       "format": "password", "default": ""},
                },
                "required": ["bot_token"],
            }),
            config_schema: json!({
                "title": "Config", "type": "object",
                "properties": {
                    "only_at_reply": {"title": "Only At Reply", "type": "boolean", "default": true},
                    "show_thinking": {"title": "Show Thinking", "type": "boolean", "default": false},
                    "show_tool_process": {"title": "Show Tool Process", "type": "boolean",
                                          "default": false},
                    "mode": {"title": "Mode", "type": "string", "enum": ["polling", "webhook"],
                             "default": "polling"},
                    "webhook_url": {"title": "Webhook Url", "type": "string", "default": ""},
                    "max_media_bytes": {"title": "Max Media Bytes", "type": "integer",
                                        "default": 10_485_760, "maximum": MAX_MEDIA_LIMIT},
                },
            }),
            platform_bot_id_field: "bot_token".into(),
            supports_credential_binding: false,
        }
    }

    fn platform_bot_id(&self, credentials: &Value) -> Result<String> {
        let token = token_of(credentials)?;
        Ok(token.split(':').next().unwrap_or_default().to_owned())
    }

    fn open(&self, spec: ChannelSpec) -> Result<Arc<dyn Channel>> {
        let token = token_of(&spec.credentials)?.to_owned();
        let secret = spec
            .credentials
            .get("webhook_secret")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        if let Some(s) = &secret
            && (s.len() > 256
                || !s
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
        {
            return Err(Error::Invalid(
                "credentials.webhook_secret takes 1-256 of A-Z, a-z, 0-9, _ and -".into(),
            ));
        }
        let webhook = match spec.config.get("mode").and_then(Value::as_str) {
            None | Some("polling") => None,
            Some("webhook") => {
                let url = spec
                    .config
                    .get("webhook_url")
                    .and_then(Value::as_str)
                    .filter(|u| u.starts_with("https://"))
                    .ok_or_else(|| {
                        Error::Invalid("webhook mode needs an https:// webhook_url".into())
                    })?;
                if secret.is_none() {
                    return Err(Error::Invalid(
                        "webhook mode needs credentials.webhook_secret".into(),
                    ));
                }
                Some(url.to_owned())
            }
            Some(other) => return Err(Error::Invalid(format!("unknown mode {other:?}"))),
        };
        let max_media = spec
            .config
            .get("max_media_bytes")
            .and_then(Value::as_u64)
            .unwrap_or(10 * 1024 * 1024)
            .min(MAX_MEDIA_LIMIT);
        let http = HttpClient::builder()
            .with_response_timeout(self.poll_timeout + Duration::from_secs(15))
            .with_idle_timeout(self.poll_timeout + Duration::from_secs(15))
            .build()
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Arc::new(TelegramChannel {
            id: spec.id,
            api: Api {
                http,
                base: self.api_base.clone(),
                token,
            },
            secret,
            webhook,
            max_media,
            poll_timeout: self.poll_timeout,
            backoff: self.backoff,
            status: StatusCell::default(),
            me: Mutex::new(None),
        }))
    }
}

/// One bot's connection.
#[derive(Debug)]
pub struct TelegramChannel {
    id: String,
    api: Api,
    secret: Option<String>,
    webhook: Option<String>,
    max_media: u64,
    poll_timeout: Duration,
    backoff: (Duration, Duration),
    status: StatusCell,
    me: Mutex<Option<User>>,
}

#[path = "run.rs"]
mod run;
