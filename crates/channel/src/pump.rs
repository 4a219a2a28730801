//! The reply pump of one session: follows the session's events and sends
//! every reply it sees begin, once it ends, to the session's chat; a
//! confirmation the reply parks on is asked in the chat.
//!
//! One replica pumps a session at a time: the pump holds a lease on the bus
//! (`channel-reply:<session>`), renewed while it runs, so a message that
//! lands on another replica does not make its reply go out twice. A pump
//! ends when the channel stops, its session is deleted, or its lease is
//! lost; the next message of the session starts one again.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_message::{AgentEvent, Msg, ReplyFinishedReason};
use oxiscope_session::Engine;
use oxiscope_storage::{EventStream, RunLease};
use tokio_util::sync::CancellationToken;

use crate::channel::{Channel, StatusCell};
use crate::context::{confirm_prompt, render};
use crate::settings::CommonConfig;
use crate::split::split_message;

/// How long a pump's lease lasts without renewal.
const LEASE_TTL: Duration = Duration::from_secs(60);

/// What pumps of one channel share.
#[derive(Debug, Clone)]
pub(crate) struct Pumps {
    pub(crate) engine: Engine,
    pub(crate) channel: Arc<dyn Channel>,
    pub(crate) channel_id: String,
    pub(crate) config: CommonConfig,
    pub(crate) status: StatusCell,
    pub(crate) stop: CancellationToken,
    /// Sessions pumped by this replica.
    pub(crate) running: Arc<Mutex<HashSet<String>>>,
}

fn lease_key(session_id: &str) -> String {
    format!("channel-reply:{session_id}")
}

impl Pumps {
    /// Makes sure a pump follows `session_id` (here, or on the replica
    /// holding its lease) before an input is submitted to it: the
    /// subscription is open when this returns, so no event of the coming
    /// reply is missed.
    pub(crate) async fn ensure(&self, session_id: &str, chat_id: &str) {
        {
            let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            if running.contains(session_id) {
                return;
            }
        }
        let bus = self.engine.bus();
        let lease = match bus.try_lock(&lease_key(session_id), LEASE_TTL).await {
            Ok(Some(lease)) => lease,
            // Another replica pumps the session.
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(channel_id = self.channel_id, session_id, error = %e,
                    "cannot take a reply lease");
                return;
            }
        };
        let events = match bus.subscribe(session_id, None).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(channel_id = self.channel_id, session_id, error = %e,
                    "cannot follow a session");
                let _ = bus.unlock(&lease).await;
                return;
            }
        };
        let fresh = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_owned());
        if !fresh {
            // Another message of the session raced this one here.
            let _ = bus.unlock(&lease).await;
            return;
        }
        let pumps = self.clone();
        let (session_id, chat_id) = (session_id.to_owned(), chat_id.to_owned());
        tokio::spawn(async move {
            pumps.pump(&session_id, &chat_id, &lease, events).await;
            pumps
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&session_id);
            let _ = pumps.engine.bus().unlock(&lease).await;
        });
    }

    async fn pump(
        &self,
        session_id: &str,
        chat_id: &str,
        lease: &RunLease,
        mut events: EventStream,
    ) {
        let mut renew = tokio::time::interval(LEASE_TTL / 3);
        renew.tick().await;
        let mut reply: Option<Msg> = None;
        loop {
            let event = tokio::select! {
                () = self.stop.cancelled() => return,
                _ = renew.tick() => {
                    match self.engine.bus().renew(lease, LEASE_TTL).await {
                        Ok(true) => continue,
                        Ok(false) => return,
                        Err(e) => {
                            tracing::warn!(session_id, error = %e, "cannot renew a reply lease");
                            continue;
                        }
                    }
                }
                next = events.next() => match next {
                    Some(event) => event,
                    None => return,
                },
            };
            let Ok(event) = serde_json::from_str::<AgentEvent>(&event.payload) else {
                continue;
            };
            match &event {
                AgentEvent::ReplyStart(start) => {
                    reply = Some(Msg::reply(start.name.clone(), start.reply_id.clone()));
                }
                AgentEvent::ReplyEnd(end) => {
                    if let Some(mut msg) = take_if(&mut reply, &end.reply_id) {
                        let _ = msg.append_event(&event);
                        let mut text = render(&msg, self.config);
                        if text.is_empty() && end.finished_reason == ReplyFinishedReason::Error {
                            let why = msg.error.as_ref().map_or("", |e| e.message.as_str());
                            text = format!("The agent could not reply. {why}");
                        }
                        self.deliver(chat_id, &text).await;
                    }
                }
                AgentEvent::RequireUserConfirm(ask) => {
                    if let Some(mut msg) = take_if(&mut reply, &ask.reply_id) {
                        let _ = msg.append_event(&event);
                        let text = render(&msg, self.config);
                        self.deliver(chat_id, &text).await;
                        self.deliver(chat_id, &confirm_prompt(&ask.tool_calls))
                            .await;
                    }
                }
                AgentEvent::RequireExternalExecution(ask) => {
                    if let Some(mut msg) = take_if(&mut reply, &ask.reply_id) {
                        let _ = msg.append_event(&event);
                        self.deliver(chat_id, &render(&msg, self.config)).await;
                    }
                }
                other => {
                    if let Some(msg) = &mut reply
                        && other.reply_id() == Some(msg.id.as_str())
                    {
                        // An event the reply cannot take is left out of
                        // what the chat is shown, nothing more.
                        let _ = msg.append_event(other);
                    }
                }
            }
        }
    }

    /// Sends `text` in pieces the platform takes; a piece that cannot be
    /// sent is logged and shown in the channel's status.
    async fn deliver(&self, chat_id: &str, text: &str) {
        let max = self.channel.capabilities().max_message_length;
        for piece in split_message(text, max) {
            if let Err(e) = self.channel.send(chat_id, &piece).await {
                tracing::warn!(channel_id = self.channel_id, chat_id, error = %e,
                    "a reply could not be sent");
                let state = self.channel.status().state;
                self.status
                    .fail(&state, &format!("sending a reply failed: {e}"));
                return;
            }
        }
    }
}

/// The reply being accumulated, when it is `reply_id`'s.
fn take_if(reply: &mut Option<Msg>, reply_id: &str) -> Option<Msg> {
    if reply.as_ref().is_some_and(|m| m.id.as_str() == reply_id) {
        reply.take()
    } else {
        None
    }
}
