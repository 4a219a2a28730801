//! The Gateway connection of a [`DiscordChannel`]: hello, identify or
//! resume, heartbeats and their acknowledgements, dispatches.

use std::sync::PoisonError;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::*;

/// Close codes after which no retry helps until the channel is edited:
/// authentication failed, invalid or disallowed intents.
const FATAL_CLOSES: &[u16] = &[4004, 4010, 4011, 4012, 4013, 4014];

/// What a session can be resumed with.
#[derive(Debug, Clone)]
struct Resume {
    session_id: String,
    url: String,
    seq: Option<u64>,
}

/// How a socket ended.
enum Ended {
    Stop,
    /// Connect again; resume when the session allows.
    Again {
        resumable: bool,
        error: Option<Error>,
    },
    /// Refused for good.
    Fatal(Error),
}

impl DiscordChannel {
    pub(super) async fn gateway(&self, sink: &dyn InboundSink, stop: &CancellationToken) {
        self.status.set("connecting");
        let mut resume: Option<Resume> = None;
        let mut attempt = 0;
        loop {
            let ended = self.socket(sink, stop, &mut resume).await;
            let error = match ended {
                Ended::Stop => return,
                Ended::Fatal(e) => {
                    tracing::warn!(channel_id = self.id, error = %e, "discord");
                    self.status.fail("failed", &e.to_string());
                    stop.cancelled().await;
                    return;
                }
                Ended::Again { resumable, error } => {
                    if !resumable {
                        resume = None;
                    }
                    error
                }
            };
            if let Some(e) = &error {
                tracing::warn!(channel_id = self.id, error = %e, "discord");
                self.status.fail("retrying", &e.to_string());
            } else {
                self.status.set("retrying");
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.wait(attempt, error.as_ref())) => {}
            }
            attempt = if error.is_some() { attempt + 1 } else { 0 };
        }
    }

    async fn socket(
        &self,
        sink: &dyn InboundSink,
        stop: &CancellationToken,
        resume: &mut Option<Resume>,
    ) -> Ended {
        let url = match resume {
            Some(r) => r.url.clone(),
            None => match self.rest(reqwest::Method::GET, "/gateway/bot", None).await {
                Ok(found) => match found.get("url").and_then(Value::as_str) {
                    Some(url) => url.to_owned(),
                    None => {
                        return Ended::Again {
                            resumable: false,
                            error: Some(Error::Malformed("no gateway URL".into())),
                        };
                    }
                },
                Err(e) if e.is_unauthorized() => return Ended::Fatal(e),
                Err(e) => return again(false, e),
            },
        };
        let url = format!("{}/?v=10&encoding=json", url.trim_end_matches('/'));
        let connector = match crate::slack::tls() {
            Ok(config) => tokio_tungstenite::Connector::Rustls(config),
            Err(e) => return again(true, e),
        };
        let mut socket = match tokio_tungstenite::connect_async_tls_with_config(
            url.as_str(),
            None,
            false,
            Some(connector),
        )
        .await
        {
            Ok((socket, _)) => socket,
            Err(e) => return again(true, Error::Transport(e.to_string())),
        };
        let mut beat: Option<tokio::time::Interval> = None;
        let mut acked = true;
        loop {
            let frame = tokio::select! {
                () = stop.cancelled() => {
                    let _ = socket.close(None).await;
                    return Ended::Stop;
                }
                () = tick(&mut beat) => {
                    if !acked {
                        // No acknowledgement since the last beat: a dead
                        // socket, resumed on a new one.
                        let _ = socket.close(None).await;
                        return again(true, Error::Transport("no heartbeat acknowledgement".into()));
                    }
                    acked = false;
                    let seq = resume.as_ref().and_then(|r| r.seq);
                    let heartbeat = json!({"op": 1, "d": seq}).to_string();
                    if let Err(e) = socket.send(Message::text(heartbeat)).await {
                        return again(true, Error::Transport(e.to_string()));
                    }
                    continue;
                }
                frame = socket.next() => frame,
            };
            let text = match frame {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(close))) => {
                    let code = close.map(|c| u16::from(c.code));
                    if let Some(code) = code.filter(|c| FATAL_CLOSES.contains(c)) {
                        return Ended::Fatal(Error::Platform {
                            status: 401,
                            description: format!("the gateway closed with {code}"),
                            retry_after: None,
                        });
                    }
                    let resumable = code != Some(u16::from(CloseCode::Normal));
                    return Ended::Again {
                        resumable,
                        error: None,
                    };
                }
                None => {
                    return Ended::Again {
                        resumable: true,
                        error: None,
                    };
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return again(true, Error::Transport(e.to_string())),
            };
            let Ok(payload) = serde_json::from_str::<Value>(text.as_str()) else {
                tracing::warn!(channel_id = self.id, "a malformed gateway frame is skipped");
                continue;
            };
            let op = payload.get("op").and_then(Value::as_u64);
            if let (Some(r), Some(s)) = (resume.as_mut(), payload.get("s").and_then(Value::as_u64))
            {
                r.seq = Some(s);
            }
            match op {
                // Hello: start beating, then identify or resume.
                Some(10) => {
                    let every = payload
                        .pointer("/d/heartbeat_interval")
                        .and_then(Value::as_u64)
                        .unwrap_or(41_250)
                        .max(50);
                    let period = Duration::from_millis(every);
                    beat = Some(tokio::time::interval_at(
                        tokio::time::Instant::now() + period,
                        period,
                    ));
                    let opening = match resume {
                        Some(r) => json!({"op": 6, "d": {"token": self.token,
                            "session_id": r.session_id, "seq": r.seq}}),
                        None => json!({"op": 2, "d": {"token": self.token, "intents": INTENTS,
                            "properties": {"os": std::env::consts::OS, "browser": "oxiscope",
                                           "device": "oxiscope"}}}),
                    };
                    if let Err(e) = socket.send(Message::text(opening.to_string())).await {
                        return again(true, Error::Transport(e.to_string()));
                    }
                }
                Some(11) => acked = true,
                // The gateway asks for a beat now.
                Some(1) => {
                    let seq = resume.as_ref().and_then(|r| r.seq);
                    let heartbeat = json!({"op": 1, "d": seq}).to_string();
                    if let Err(e) = socket.send(Message::text(heartbeat)).await {
                        return again(true, Error::Transport(e.to_string()));
                    }
                }
                Some(7) => {
                    let _ = socket.close(None).await;
                    return Ended::Again {
                        resumable: true,
                        error: None,
                    };
                }
                Some(9) => {
                    let resumable = payload.get("d").and_then(Value::as_bool) == Some(true);
                    let _ = socket.close(None).await;
                    return Ended::Again {
                        resumable,
                        error: None,
                    };
                }
                Some(0) => self.dispatch(sink, &payload, resume).await,
                _ => {}
            }
        }
    }

    async fn dispatch(&self, sink: &dyn InboundSink, payload: &Value, resume: &mut Option<Resume>) {
        let d = payload.get("d").unwrap_or(&Value::Null);
        match payload.get("t").and_then(Value::as_str) {
            Some("READY") => {
                let session_id = d.get("session_id").and_then(Value::as_str);
                let url = d.get("resume_gateway_url").and_then(Value::as_str);
                if let (Some(session_id), Some(url)) = (session_id, url) {
                    *resume = Some(Resume {
                        session_id: session_id.to_owned(),
                        url: url.to_owned(),
                        seq: payload.get("s").and_then(Value::as_u64),
                    });
                }
                let me = d
                    .pointer("/user/id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                *self.bot_user.lock().unwrap_or_else(PoisonError::into_inner) = me;
                self.status.set("connected");
            }
            Some("RESUMED") => self.status.set("connected"),
            Some("MESSAGE_CREATE") => {
                let bot = self
                    .bot_user
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
                    .unwrap_or_default();
                if let Some(message) = normalise(d, &bot) {
                    sink.handle(message).await;
                }
            }
            _ => {}
        }
    }
}

fn again(resumable: bool, error: Error) -> Ended {
    Ended::Again {
        resumable,
        error: Some(error),
    }
}

/// The next heartbeat, or never before `Hello`.
async fn tick(beat: &mut Option<tokio::time::Interval>) {
    match beat {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending::<()>().await,
    }
}
