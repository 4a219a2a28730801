//! Hubs: operator-configured catalogues of MCP servers and skills, read
//! from local files or downloaded, cached for a while, browsed by users.

mod catalogue;
mod fetch;
mod render;
mod stage;

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use oxiscope_http::HttpClient;

pub use catalogue::{Catalogue, HubKind, SkillEntry, SkillFiles, matches, page};
pub use render::{render_mcp, validate_name};
pub use stage::{skill_markdown, stage_skill};

use crate::api::{CardsQuery, HubInfo, McpCard, McpHubPage, SkillCard, SkillHubPage};
use crate::error::SessionError;

/// Where a hub's catalogue is: a local JSON file (or a directory holding
/// `hub.json`), or an `https://` URL of the same JSON (`http://` only on
/// loopback). The catalogue names its hub id and kind (`mcp` or `skill`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubSource {
    /// A catalogue file or directory on this machine.
    Local(PathBuf),
    /// A catalogue downloaded from this URL.
    Remote(String),
}

impl HubSource {
    /// A URL when `text` starts with `http://` or `https://`, else a path.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            Self::Remote(text.to_owned())
        } else {
            Self::Local(PathBuf::from(text))
        }
    }
}

impl fmt::Display for HubSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local(path) => write!(f, "{}", path.display()),
            Self::Remote(url) => f.write_str(url),
        }
    }
}

/// Why a hub cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubError {
    /// Two catalogues of one kind name the same hub id.
    #[error("two {kind} hubs are named {hub_id:?}")]
    Duplicate {
        /// `mcp` or `skill`.
        kind: &'static str,
        /// The repeated id.
        hub_id: String,
    },
    /// A catalogue cannot be read or is not a valid catalogue.
    #[error("hub catalogue {location}: {reason}")]
    Invalid {
        /// The file or URL.
        location: String,
        /// Why.
        reason: String,
    },
    /// The hub's server failed or refused.
    #[error("hub {location} failed: {reason}")]
    Upstream {
        /// The URL.
        location: String,
        /// Why.
        reason: String,
        /// Whether the hub answered 429.
        rate_limited: bool,
    },
}

/// A hub's failure as the engine reports it: an upstream failure (the
/// hub's server failed or limited its rate) stays one, a broken catalogue
/// is internal.
impl From<HubError> for SessionError {
    fn from(e: HubError) -> Self {
        match e {
            HubError::Upstream {
                location,
                reason,
                rate_limited,
            } => Self::Upstream {
                location,
                reason,
                rate_limited,
            },
            other => Self::Internal(other.to_string()),
        }
    }
}

/// One loaded catalogue.
#[derive(Debug, Clone)]
struct Slot {
    source: HubSource,
    kind: HubKind,
    hub_id: String,
    catalogue: Arc<Catalogue>,
    fetched: Instant,
}

/// The configured hubs: loaded all at once (at startup, or on first use),
/// after which each hub id stays bound to its source; a catalogue older
/// than the cache time is read again when used.
#[derive(Debug)]
pub struct Hubs {
    sources: Vec<HubSource>,
    ttl: Duration,
    http: OnceLock<HttpClient>,
    slots: tokio::sync::Mutex<Option<Vec<Slot>>>,
}

impl Hubs {
    /// The hubs of `sources`, each catalogue used for `ttl` before it is
    /// read again.
    #[must_use]
    pub fn new(sources: Vec<HubSource>, ttl: Duration) -> Self {
        Self {
            sources,
            ttl,
            http: OnceLock::new(),
            slots: tokio::sync::Mutex::new(None),
        }
    }

    pub(crate) fn http(&self) -> Result<&HttpClient, HubError> {
        if let Some(http) = self.http.get() {
            return Ok(http);
        }
        let made = fetch::client().map_err(|reason| HubError::Invalid {
            location: "the HTTP client".to_owned(),
            reason,
        })?;
        Ok(self.http.get_or_init(|| made))
    }

    /// Loads every catalogue once; later calls do nothing.
    ///
    /// # Errors
    /// A catalogue cannot be read, or two of one kind share a hub id.
    pub async fn load(&self) -> Result<(), HubError> {
        if self.slots.lock().await.is_some() {
            return Ok(());
        }
        let mut slots: Vec<Slot> = Vec::with_capacity(self.sources.len());
        for source in &self.sources {
            let catalogue = self.read(source).await?;
            let hub_id = catalogue.info.hub_id.clone();
            if slots
                .iter()
                .any(|s| s.kind == catalogue.kind && s.hub_id == hub_id)
            {
                return Err(HubError::Duplicate {
                    kind: catalogue.kind.as_str(),
                    hub_id,
                });
            }
            slots.push(Slot {
                source: source.clone(),
                kind: catalogue.kind,
                hub_id,
                catalogue: Arc::new(catalogue),
                fetched: Instant::now(),
            });
        }
        let mut guard = self.slots.lock().await;
        if guard.is_none() {
            *guard = Some(slots);
        }
        Ok(())
    }

    async fn read(&self, source: &HubSource) -> Result<Catalogue, HubError> {
        let (bytes, root) = match source {
            HubSource::Local(path) => {
                let (bytes, root) =
                    fetch::read_local(path.clone(), catalogue::MAX_CATALOGUE_BYTES).await?;
                (bytes, Some(root))
            }
            HubSource::Remote(url) => {
                let bytes =
                    fetch::download(self.http()?, url, catalogue::MAX_CATALOGUE_BYTES).await?;
                (bytes.to_vec(), None)
            }
        };
        let mut catalogue = Catalogue::parse(&bytes, root).map_err(|reason| match source {
            // A hub that answers garbage has failed like one that errs.
            HubSource::Remote(url) => HubError::Upstream {
                location: url.clone(),
                reason,
                rate_limited: false,
            },
            HubSource::Local(_) => HubError::Invalid {
                location: source.to_string(),
                reason,
            },
        })?;
        if let HubSource::Remote(url) = source {
            catalogue.source_url = Some(url.clone());
        }
        Ok(catalogue)
    }

    /// The hubs of `kind`, in configuration order.
    ///
    /// # Errors
    /// As [`Self::load`].
    pub async fn list(&self, kind: HubKind) -> Result<Vec<HubInfo>, HubError> {
        self.load().await?;
        let guard = self.slots.lock().await;
        Ok(guard
            .iter()
            .flatten()
            .filter(|s| s.kind == kind)
            .map(|s| s.catalogue.info.clone())
            .collect())
    }

    /// The current catalogue of hub `hub_id` of `kind`, read again when
    /// the cached one is too old.
    ///
    /// # Errors
    /// 404 for an unknown hub; the hub's failure when it must be read
    /// again and cannot be.
    pub async fn catalogue(
        &self,
        kind: HubKind,
        hub_id: &str,
    ) -> Result<Arc<Catalogue>, SessionError> {
        self.load().await?;
        let slot = {
            let guard = self.slots.lock().await;
            guard
                .iter()
                .flatten()
                .find(|s| s.kind == kind && s.hub_id == hub_id)
                .cloned()
        }
        .ok_or_else(|| SessionError::NotFound(format!("Hub {hub_id} not found")))?;
        if slot.fetched.elapsed() < self.ttl {
            return Ok(slot.catalogue);
        }
        let fresh = self.read(&slot.source).await?;
        if fresh.kind != kind || fresh.info.hub_id != hub_id {
            return Err(HubError::Invalid {
                location: slot.source.to_string(),
                reason: format!(
                    "the catalogue now names the {} hub {:?} instead of {hub_id:?}",
                    fresh.kind.as_str(),
                    fresh.info.hub_id
                ),
            }
            .into());
        }
        let fresh = Arc::new(fresh);
        let mut guard = self.slots.lock().await;
        if let Some(stored) = guard
            .iter_mut()
            .flatten()
            .find(|s| s.kind == kind && s.hub_id == hub_id)
        {
            stored.catalogue = Arc::clone(&fresh);
            stored.fetched = Instant::now();
        }
        Ok(fresh)
    }
}

/// A page of hub `hub_id`'s MCP cards matching the query (without their
/// readmes).
///
/// # Errors
/// 404 for an unknown hub, 422 for a bad limit or cursor, the hub's
/// failure.
pub async fn mcp_cards(
    hubs: &Hubs,
    hub_id: &str,
    query: &CardsQuery,
) -> Result<McpHubPage, SessionError> {
    let catalogue = hubs.catalogue(HubKind::Mcp, hub_id).await?;
    let q = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let found: Vec<&McpCard> = catalogue
        .mcp
        .iter()
        .filter(|c| q.is_none_or(|q| matches(q, &c.name, c.display_name.as_deref(), &c.tags)))
        .collect();
    let (cards, next_cursor) = page(found, query.cursor.as_deref(), query.limit)?;
    Ok(McpHubPage {
        cards: cards
            .into_iter()
            .map(|c| McpCard {
                readme: None,
                ..c.clone()
            })
            .collect(),
        next_cursor,
    })
}

/// MCP card `card_id` of hub `hub_id`.
///
/// # Errors
/// 404 for an unknown hub or card, the hub's failure.
pub async fn mcp_card(hubs: &Hubs, hub_id: &str, card_id: &str) -> Result<McpCard, SessionError> {
    let catalogue = hubs.catalogue(HubKind::Mcp, hub_id).await?;
    catalogue
        .mcp_card(card_id)
        .cloned()
        .ok_or_else(|| card_not_found(card_id))
}

/// A page of hub `hub_id`'s skill cards matching the query (without
/// their `SKILL.md`).
///
/// # Errors
/// As [`mcp_cards`].
pub async fn skill_cards(
    hubs: &Hubs,
    hub_id: &str,
    query: &CardsQuery,
) -> Result<SkillHubPage, SessionError> {
    let catalogue = hubs.catalogue(HubKind::Skill, hub_id).await?;
    let q = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let found: Vec<&SkillEntry> = catalogue
        .skills
        .iter()
        .filter(|s| {
            let c = &s.card;
            q.is_none_or(|q| matches(q, &c.name, c.display_name.as_deref(), &c.tags))
        })
        .collect();
    let (cards, next_cursor) = page(found, query.cursor.as_deref(), query.limit)?;
    Ok(SkillHubPage {
        cards: cards
            .into_iter()
            .map(|s| SkillCard {
                markdown: None,
                ..s.card.clone()
            })
            .collect(),
        next_cursor,
    })
}

/// Skill card `card_id` of hub `hub_id`, with its `SKILL.md`, and the
/// catalogue it is in.
///
/// # Errors
/// As [`mcp_card`].
pub async fn skill_card(
    hubs: &Hubs,
    hub_id: &str,
    card_id: &str,
) -> Result<(SkillCard, SkillEntry, Arc<Catalogue>), SessionError> {
    let catalogue = hubs.catalogue(HubKind::Skill, hub_id).await?;
    let entry = catalogue
        .skill(card_id)
        .cloned()
        .ok_or_else(|| card_not_found(card_id))?;
    let card = SkillCard {
        markdown: skill_markdown(&catalogue, &entry).await,
        ..entry.card.clone()
    };
    Ok((card, entry, catalogue))
}

fn card_not_found(card_id: &str) -> SessionError {
    SessionError::NotFound(format!("Card {card_id} not found"))
}
