//! Routing rules, as AgentScope's routing chapter defines them: an ordered
//! list of bindings, matched top to bottom, first match wins; exactly one
//! catch-all (`match_value` `"*"`), last; no duplicate
//! `(match_key, match_value)`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::inbound::Inbound;

/// Which session a matched message joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionScope {
    /// One session per chat.
    #[default]
    PerChat,
    /// One session per member of a chat.
    PerChatUser,
}

/// One rule: which messages (`match_key` = `match_value`, or anything for
/// `"*"`), which agent, which session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ChannelBinding")]
pub struct Binding {
    /// `chat_id`, `user_id`, or a metadata key such as `chat_type`.
    #[serde(default = "chat_id")]
    pub match_key: String,
    /// The exact value, or `"*"`.
    #[serde(default = "any")]
    pub match_value: String,
    /// The agent that answers.
    pub agent_id: String,
    /// How sessions are grouped.
    #[serde(default)]
    pub session_scope: SessionScope,
}

fn chat_id() -> String {
    "chat_id".into()
}

fn any() -> String {
    "*".into()
}

/// The catch-all value.
pub const CATCH_ALL: &str = "*";

/// A channel's ordered rules (AgentScope's `RoutingConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "RoutingConfig")]
pub struct Routing {
    /// The rules, in order.
    #[serde(default)]
    pub bindings: Vec<Binding>,
}

/// Where a message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The agent.
    pub agent_id: String,
    /// The scope of the rule that matched.
    pub scope: SessionScope,
    /// The session key: agent, chat and, per member, user. Different
    /// agents and different scopes never share a key.
    pub session_key: String,
}

impl Routing {
    /// Checks that every message has one definite destination.
    ///
    /// # Errors
    /// [`Error::Invalid`] saying which rule breaks which of the three
    /// checks (or has an empty agent or key).
    pub fn validate(&self) -> Result<()> {
        let catch_alls = self
            .bindings
            .iter()
            .filter(|b| b.match_value == CATCH_ALL)
            .count();
        if catch_alls != 1 {
            return Err(Error::Invalid(format!(
                "routing needs exactly one catch-all rule (match_value \"*\"), found {catch_alls}"
            )));
        }
        if self.bindings.last().map(|b| b.match_value.as_str()) != Some(CATCH_ALL) {
            return Err(Error::Invalid(
                "the catch-all rule must be the last; rules after it are never reached".into(),
            ));
        }
        for (i, b) in self.bindings.iter().enumerate() {
            if b.agent_id.trim().is_empty() || b.match_key.trim().is_empty() {
                return Err(Error::Invalid(format!(
                    "rule {i} needs a match_key and an agent_id"
                )));
            }
            if self.bindings[..i]
                .iter()
                .any(|e| e.match_key == b.match_key && e.match_value == b.match_value)
            {
                return Err(Error::Invalid(format!(
                    "rule {i} repeats ({}, {}) of an earlier rule",
                    b.match_key, b.match_value
                )));
            }
        }
        Ok(())
    }

    /// The first rule `message` matches, as a route; `None` only for rules
    /// that failed [`Routing::validate`].
    #[must_use]
    pub fn route(&self, message: &Inbound) -> Option<Route> {
        let rule = self.bindings.iter().find(|b| {
            b.match_value == CATCH_ALL
                || message.field(&b.match_key).as_deref() == Some(b.match_value.as_str())
        })?;
        let key = match rule.session_scope {
            SessionScope::PerChat => {
                serde_json::json!([rule.agent_id, "chat", message.chat_id])
            }
            SessionScope::PerChatUser => {
                serde_json::json!([rule.agent_id, "user", message.chat_id, message.sender.id])
            }
        };
        Some(Route {
            agent_id: rule.agent_id.clone(),
            scope: rule.session_scope,
            session_key: key.to_string(),
        })
    }

    /// The agents the rules name, each once.
    #[must_use]
    pub fn agents(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for b in &self.bindings {
            if !out.contains(&b.agent_id.as_str()) {
                out.push(&b.agent_id);
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "routing_tests.rs"]
mod tests;
