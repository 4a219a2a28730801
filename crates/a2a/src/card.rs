//! Agent cards: fetching one from its well-known address, and choosing the
//! endpoint this client talks to.

use oxiscope_http::HttpClient;
use oxiscope_http::reqwest::header;
use serde::{Deserialize, Serialize};

use crate::error::{CardError, Result};

/// Where an agent publishes its card, relative to its base URL.
pub const WELL_KNOWN_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The largest card read (cards are small JSON documents).
const MAX_CARD_BYTES: usize = 1 << 20;

/// A remote agent's self-description (the fields this client reads; the
/// rest is ignored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentCard {
    /// The agent's name; it becomes the name of the [`A2AAgent`](crate::A2AAgent).
    pub name: String,
    /// What the agent does.
    pub description: String,
    /// The transports and endpoints it offers.
    pub supported_interfaces: Vec<AgentInterface>,
    /// The agent's version.
    pub version: String,
    /// Optional protocol features.
    pub capabilities: AgentCapabilities,
    /// Default accepted input MIME types.
    pub default_input_modes: Vec<String>,
    /// Default produced output MIME types.
    pub default_output_modes: Vec<String>,
    /// What it can do.
    pub skills: Vec<AgentSkill>,
}

/// One endpoint of an agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentInterface {
    /// The endpoint URL.
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON` or `GRPC`.
    pub protocol_binding: String,
    /// The tenant to name in requests, if any.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The A2A version, e.g. `1.0`.
    pub protocol_version: String,
}

/// Optional protocol features of an agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentCapabilities {
    /// Whether it streams responses (`SendStreamingMessage`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Whether it sends push notifications (not used by this client).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
}

/// A skill an agent advertises.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentSkill {
    /// The skill id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
}

/// The endpoint chosen from a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The JSON-RPC URL.
    pub url: url::Url,
    /// The tenant to name in requests (empty: none).
    pub tenant: String,
}

impl AgentCard {
    /// Fetches the card at `base_url` + [`WELL_KNOWN_CARD_PATH`] (or at
    /// `base_url` itself when it already ends in `.json`) and checks it
    /// with [`AgentCard::endpoint`].
    ///
    /// # Errors
    /// [`CardError`] for a bad base URL, a body that is not a card, or a
    /// card this client cannot use; [`Error::Http`](crate::Error::Http) when
    /// the request fails.
    pub async fn resolve(http: &HttpClient, base_url: &str) -> Result<Self> {
        let url = card_url(base_url)?;
        let request = http.get(url).header(header::ACCEPT, "application/json");
        let response = http.send(request).await?;
        let body = http
            .body(response)
            .collect_bounded(MAX_CARD_BYTES as u64)
            .await?;
        let card = Self::from_json(&body)?;
        Ok(card)
    }

    /// Parses a card from its JSON and checks it with
    /// [`AgentCard::endpoint`].
    ///
    /// # Errors
    /// [`CardError`] for JSON that is not a usable card.
    pub fn from_json(json: &[u8]) -> Result<Self, CardError> {
        let card: Self =
            serde_json::from_slice(json).map_err(|source| CardError::Invalid { source })?;
        card.endpoint()?;
        Ok(card)
    }

    /// Whether the agent streams its responses.
    #[must_use]
    pub fn streams(&self) -> bool {
        self.capabilities.streaming == Some(true)
    }

    /// The endpoint this client uses: the first A2A 1.x interface bound to
    /// JSON-RPC, with an absolute `http(s)` URL.
    ///
    /// # Errors
    /// [`CardError::MissingName`], [`CardError::NoSupportedInterface`] or
    /// [`CardError::InvalidUrl`].
    pub fn endpoint(&self) -> Result<Endpoint, CardError> {
        if self.name.trim().is_empty() {
            return Err(CardError::MissingName);
        }
        let chosen = self.supported_interfaces.iter().find(|i| {
            i.protocol_binding.eq_ignore_ascii_case("JSONRPC")
                && (i.protocol_version == "1" || i.protocol_version.starts_with("1."))
        });
        let Some(interface) = chosen else {
            return Err(CardError::NoSupportedInterface {
                advertised: self
                    .supported_interfaces
                    .iter()
                    .map(|i| format!("{}@{}", i.protocol_binding, i.protocol_version))
                    .collect(),
            });
        };
        let invalid = |reason: String| CardError::InvalidUrl {
            url: interface.url.clone(),
            reason,
        };
        let url = url::Url::parse(&interface.url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!("scheme {:?} is not http(s)", url.scheme())));
        }
        Ok(Endpoint {
            url,
            tenant: interface.tenant.clone(),
        })
    }
}

fn card_url(base_url: &str) -> Result<url::Url, CardError> {
    let invalid = |reason: String| CardError::InvalidBaseUrl {
        base_url: base_url.to_owned(),
        reason,
    };
    let mut url = url::Url::parse(base_url).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!("scheme {:?} is not http(s)", url.scheme())));
    }
    if !url.path().ends_with(".json") {
        let path = format!("{}{WELL_KNOWN_CARD_PATH}", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn card_url_appends_the_well_known_path() {
        assert_eq!(
            card_url("http://h:1").unwrap().as_str(),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(
            card_url("http://h:1/agents/x/").unwrap().as_str(),
            "http://h:1/agents/x/.well-known/agent-card.json"
        );
        assert_eq!(
            card_url("http://h:1/card.json").unwrap().as_str(),
            "http://h:1/card.json"
        );
        assert!(matches!(
            card_url("ftp://h"),
            Err(CardError::InvalidBaseUrl { .. })
        ));
    }

    #[test]
    fn endpoint_picks_the_first_jsonrpc_1x_interface() {
        let card: AgentCard = serde_json::from_value(serde_json::json!({
            "name": "a",
            "supportedInterfaces": [
                {"url": "http://h/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "http://h/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": "http://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
                 "tenant": "t1"}
            ]
        }))
        .unwrap();
        let endpoint = card.endpoint().unwrap();
        assert_eq!(endpoint.url.as_str(), "http://h/rpc");
        assert_eq!(endpoint.tenant, "t1");
    }

    #[test]
    fn unusable_cards_are_typed_errors() {
        let nameless = br#"{"supportedInterfaces": []}"#;
        assert!(matches!(
            AgentCard::from_json(nameless),
            Err(CardError::MissingName)
        ));
        let grpc_only = br#"{"name": "a", "supportedInterfaces": [
            {"url": "http://h", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}"#;
        match AgentCard::from_json(grpc_only) {
            Err(CardError::NoSupportedInterface { advertised }) => {
                assert_eq!(advertised, vec!["GRPC@1.0".to_owned()]);
            }
            other => panic!("unexpected {other:?}"),
        }
        let bad_url = br#"{"name": "a", "supportedInterfaces": [
            {"url": "file:///x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}"#;
        assert!(matches!(
            AgentCard::from_json(bad_url),
            Err(CardError::InvalidUrl { .. })
        ));
        assert!(matches!(
            AgentCard::from_json(b"[1, 2]"),
            Err(CardError::Invalid { .. })
        ));
    }
}
