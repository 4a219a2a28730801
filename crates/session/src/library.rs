//! The user's library: installing hub cards, editing installs, and putting
//! them into a session's workspace. An MCP's rendered config and the
//! values it was rendered from are sealed at rest and never answered.

use oxiscope_storage::{LibraryCard, McpLibraryRecord, SkillLibraryRecord, new_id, now};
use oxiscope_workspace::{McpDeclaration, McpServerConfig};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::hub::{self, HubError, HubKind, render_mcp, validate_name};
use super::workspace::{InstallDeadline, commit_skill, install_turn};
use crate::Engine;
use crate::Purpose;
use crate::api::{
    AddFromLibraryResponse, InstallMcpRequest, McpCard, McpView, SkillCard, SkillRecordView,
    SkillView, UpdateMcpRequest, WorkspaceQuery,
};
use crate::error::{SessionError, SessionResult};

/// What is sealed for an installed MCP.
#[derive(Serialize, Deserialize)]
struct SealedMcp {
    /// The rendered config.
    mcp_config: McpServerConfig,
    /// The answers it was rendered from (for re-rendering on a change).
    values: Map<String, Value>,
}

fn seal(state: &Engine, sealed: &SealedMcp) -> SessionResult<String> {
    let text = serde_json::to_string(sealed).map_err(|e| SessionError::Internal(e.to_string()))?;
    state
        .sealer()
        .seal(Purpose::LibraryMcp, text.as_bytes())
        .map_err(|e| SessionError::Internal(e.to_string()))
}

fn open(state: &Engine, record: &McpLibraryRecord) -> SessionResult<SealedMcp> {
    let plain = state
        .sealer()
        .open(Purpose::LibraryMcp, &record.sealed)
        .map_err(|e| SessionError::Internal(format!("library MCP {}: {e}", record.id)))?;
    serde_json::from_slice(&plain)
        .map_err(|e| SessionError::Internal(format!("library MCP {}: {e}", record.id)))
}

fn mcp_card_meta(card: &McpCard) -> LibraryCard {
    LibraryCard {
        hub_id: Some(card.hub_id.clone()),
        card_id: Some(card.id.clone()),
        version: card.version.clone(),
        display_name: card.display_name.clone(),
        description: card.description.clone(),
        tags: card.tags.clone(),
        author: card.author.clone(),
        icon_url: card.icon_url.clone(),
        url: card.url.clone(),
    }
}

fn skill_card_meta(card: &SkillCard) -> LibraryCard {
    LibraryCard {
        hub_id: Some(card.hub_id.clone()),
        card_id: Some(card.id.clone()),
        version: card.version.clone(),
        display_name: card.display_name.clone(),
        description: card.description.clone(),
        tags: card.tags.clone(),
        author: card.author.clone(),
        icon_url: card.icon_url.clone(),
        url: card.url.clone(),
    }
}

/// The library view of an installed MCP (no config).
pub fn mcp_view(r: McpLibraryRecord) -> McpView {
    let c = r.card;
    McpView {
        id: r.id,
        name: r.name,
        is_stateful: r.is_stateful,
        enabled: r.enabled,
        display_name: c.display_name,
        description: c.description,
        tags: c.tags,
        author: c.author,
        icon_url: c.icon_url,
        url: c.url,
        hub_id: c.hub_id,
        card_id: c.card_id,
        version: c.version,
    }
}

/// The library view of an installed skill.
pub fn skill_view(r: SkillLibraryRecord) -> SkillView {
    let c = r.card;
    SkillView {
        id: r.id,
        name: r.name,
        enabled: r.enabled,
        display_name: c.display_name,
        description: c.description,
        tags: c.tags,
        author: c.author,
        icon_url: c.icon_url,
        url: c.url,
        hub_id: c.hub_id,
        card_id: c.card_id,
        version: c.version,
    }
}

/// The full record of an installed skill.
pub fn skill_record_view(r: SkillLibraryRecord) -> SkillRecordView {
    let c = r.card;
    SkillRecordView {
        id: r.id,
        updated_at: r.updated_at,
        created_at: r.created_at,
        user_id: r.user_id,
        name: r.name,
        display_name: c.display_name,
        description: c.description,
        tags: c.tags,
        author: c.author,
        icon_url: c.icon_url,
        url: c.url,
        markdown: r.markdown,
        hub_id: c.hub_id,
        card_id: c.card_id,
        version: c.version,
        enabled: r.enabled,
    }
}

/// A name clash in the library as a 409.
fn clash(e: oxiscope_storage::Error) -> SessionError {
    match e {
        oxiscope_storage::Error::AlreadyExists { kind, key } => SessionError::Conflict(format!(
            "An {kind} named {key:?} is already in your library."
        )),
        other => other.into(),
    }
}

/// Entries of each kind one user's library may hold: every install adds a
/// row (a skill's up to 256 KiB of markdown), so a tenant cannot grow the
/// database without end.
pub const MAX_LIBRARY_ENTRIES: usize = 256;

/// 409 when a library already holding `held` entries of `kind` is full.
fn room_for_one(held: usize, kind: &str) -> SessionResult<()> {
    if held >= MAX_LIBRARY_ENTRIES {
        return Err(SessionError::Conflict(format!(
            "Your {kind} library is full ({MAX_LIBRARY_ENTRIES} entries); remove one first."
        )));
    }
    Ok(())
}

/// Renders card `card_id` of MCP hub `hub_id` with the caller's values and
/// adds it to their library.
///
/// # Errors
/// 404 for an unknown hub or card, 422 for a bad name or values, 409 for
/// a name in use, the hub's failure.
pub async fn install_mcp(
    state: &Engine,
    user: &str,
    hub_id: &str,
    card_id: &str,
    body: InstallMcpRequest,
) -> Result<McpView, SessionError> {
    let card = hub::mcp_card(state.hubs(), hub_id, card_id).await?;
    let name = body.name.unwrap_or_else(|| card.name.clone());
    validate_name(&name, &["body", "name"])?;
    let held = state.storage().list_library_mcps(user).await?.len();
    room_for_one(held, "MCP")?;
    let (declaration, values) = render_mcp(&card, &name, body.values)?;
    let sealed = seal(
        state,
        &SealedMcp {
            mcp_config: declaration.mcp_config,
            values,
        },
    )?;
    let stamp = now();
    let record = McpLibraryRecord {
        id: new_id(),
        user_id: user.to_owned(),
        name,
        card: mcp_card_meta(&card),
        is_stateful: declaration.is_stateful,
        enabled: true,
        sealed,
        created_at: stamp.clone(),
        updated_at: stamp,
    };
    state
        .storage()
        .create_library_mcp(&record)
        .await
        .map_err(clash)?;
    Ok(mcp_view(record))
}

/// The caller's library MCP `id`, or 404.
async fn owned_mcp(state: &Engine, user: &str, id: &str) -> SessionResult<McpLibraryRecord> {
    state
        .storage()
        .get_library_mcp(user, id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("MCP {id} not found")))
}

/// Renames, turns on or off, or re-renders (new values merged over the
/// stored ones) an installed MCP.
///
/// # Errors
/// 404 when it is not the caller's, 422 for a bad name or values, 409 for
/// a name in use, 400 when it has no card to re-render from, the hub's
/// failure.
pub async fn update_mcp(
    state: &Engine,
    user: &str,
    id: &str,
    body: UpdateMcpRequest,
) -> Result<McpView, SessionError> {
    let mut record = owned_mcp(state, user, id).await?;
    if let Some(name) = body.name {
        validate_name(&name, &["body", "name"])?;
        record.name = name;
    }
    if let Some(enabled) = body.enabled {
        record.enabled = enabled;
    }
    if let Some(changes) = body.values {
        let (Some(hub_id), Some(card_id)) = (&record.card.hub_id, &record.card.card_id) else {
            return Err(SessionError::Invalid(
                "This MCP has no hub card to re-render its config from.".to_owned(),
            ));
        };
        let card = match hub::mcp_card(state.hubs(), hub_id, card_id).await {
            Err(SessionError::NotFound(_)) => {
                return Err(SessionError::Invalid(format!(
                    "The card {card_id} of hub {hub_id} is no longer available to re-render from."
                )));
            }
            other => other?,
        };
        let mut values = open(state, &record)?.values;
        values.extend(changes);
        let (declaration, values) = render_mcp(&card, &record.name, values)?;
        record.sealed = seal(
            state,
            &SealedMcp {
                mcp_config: declaration.mcp_config,
                values,
            },
        )?;
        record.is_stateful = declaration.is_stateful;
        record.card = mcp_card_meta(&card);
    }
    record.updated_at = now();
    state
        .storage()
        .update_library_mcp(&record)
        .await
        .map_err(clash)?;
    Ok(mcp_view(record))
}

/// Adds card `card_id` of skill hub `hub_id` to the caller's library (its
/// metadata and `SKILL.md`; the files are fetched when it is used).
///
/// # Errors
/// 404 for an unknown hub or card, 422 for a bad name, 409 for a name in
/// use, the hub's failure.
pub async fn install_skill(
    state: &Engine,
    user: &str,
    hub_id: &str,
    card_id: &str,
    name: Option<String>,
) -> Result<SkillView, SessionError> {
    let (card, entry, _) = hub::skill_card(state.hubs(), hub_id, card_id).await?;
    let name = name.unwrap_or_else(|| card.name.clone());
    validate_name(&name, &["query", "name"])?;
    let held = state.storage().list_library_skills(user).await?.len();
    room_for_one(held, "skill")?;
    let stamp = now();
    let record = SkillLibraryRecord {
        id: new_id(),
        user_id: user.to_owned(),
        name,
        card: skill_card_meta(&card),
        source: Some(entry.files.describe()),
        markdown: card.markdown.clone().unwrap_or_default(),
        enabled: true,
        created_at: stamp.clone(),
        updated_at: stamp,
    };
    state
        .storage()
        .create_library_skill(&record)
        .await
        .map_err(clash)?;
    Ok(skill_view(record))
}

/// The workspace of the caller's session (which must be of the agent).
async fn session_workspace(
    state: &Engine,
    user: &str,
    query: &WorkspaceQuery,
) -> SessionResult<std::sync::Arc<dyn oxiscope_workspace::Workspace>> {
    let session = super::load_session(state, user, &query.session_id, &query.agent_id).await?;
    super::sessions::workspace_of(state, &session)
        .await
        .map_err(|e| SessionError::Internal(format!("the workspace: {e}")))
}

/// The most ids one `from-library` request takes (each is a lookup, and a
/// skill's a hub download and a staging).
const MAX_IDS: usize = 64;

/// `ids` without repeats, in their order; 422 at `body.<field>` when
/// there are more than [`MAX_IDS`].
fn distinct_ids(ids: Vec<String>, field: &str) -> SessionResult<Vec<String>> {
    if ids.len() > MAX_IDS {
        return Err(SessionError::invalid(
            &["body", field],
            format!("At most {MAX_IDS} ids per request, got {}", ids.len()),
            "too_long",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    Ok(ids
        .into_iter()
        .filter(|id| seen.insert(id.clone()))
        .collect())
}

/// Why the workspace refused a library item, for the `failed` map: its
/// own refusals as they are, anything else (an I/O failure naming the
/// server's paths) logged and told in general terms.
fn workspace_reason(e: &oxiscope_workspace::Error) -> String {
    use oxiscope_workspace::Error as E;
    match e {
        E::InvalidId { .. }
        | E::InvalidMcp { .. }
        | E::InvalidSkill { .. }
        | E::DuplicateMcp { .. }
        | E::DuplicateSkill { .. } => e.to_string(),
        other => {
            tracing::error!("the workspace refused a library item: {other}");
            "the workspace could not take it".to_owned()
        }
    }
}

/// Declares the caller's library MCPs `ids` in the session's workspace;
/// each one that is not the caller's, is off, or clashes is reported.
///
/// # Errors
/// 404 for a session that is not the caller's (of that agent).
pub async fn add_mcps(
    state: &Engine,
    user: &str,
    query: &WorkspaceQuery,
    ids: Vec<String>,
) -> Result<AddFromLibraryResponse, SessionError> {
    let ids = distinct_ids(ids, "mcp_ids")?;
    let workspace = session_workspace(state, user, query).await?;
    let mut out = AddFromLibraryResponse::default();
    for id in ids {
        let record = match state.storage().get_library_mcp(user, &id).await? {
            Some(r) if r.enabled => r,
            Some(_) => {
                out.failed.insert(id, "it is turned off".to_owned());
                continue;
            }
            None => {
                out.failed.insert(id, "not in your library".to_owned());
                continue;
            }
        };
        let config = match open(state, &record) {
            Ok(sealed) => sealed.mcp_config,
            Err(e) => {
                tracing::error!(%id, "cannot open a library MCP: {e}");
                out.failed
                    .insert(id, "its stored config cannot be read".to_owned());
                continue;
            }
        };
        let declaration = McpDeclaration {
            name: record.name.clone(),
            is_stateful: record.is_stateful,
            mcp_config: config,
            enable_tools: None,
            disable_tools: None,
            execution_timeout: None,
            stream_progress: false,
        };
        match workspace
            .add_mcp(declaration, &query.agent_id, &query.session_id)
            .await
        {
            Ok(()) => out.added.push(record.name),
            Err(e) => {
                out.failed.insert(id, workspace_reason(&e));
            }
        }
    }
    Ok(out)
}

/// Fetches the caller's library skills `ids` from their hubs and copies
/// them into the session's workspace; each one that fails is reported.
/// The whole request runs within the server's skill-install time limit:
/// a skill it cuts off, and every one after it, is reported with the
/// limit as its reason.
///
/// # Errors
/// 404 for a session that is not the caller's (of that agent).
pub async fn add_skills(
    state: &Engine,
    user: &str,
    query: &WorkspaceQuery,
    ids: Vec<String>,
) -> Result<AddFromLibraryResponse, SessionError> {
    let deadline = InstallDeadline::start(state);
    let ids = distinct_ids(ids, "skill_ids")?;
    let workspace = session_workspace(state, user, query).await?;
    let staging = state.data_dir().join("staging");
    let mut out = AddFromLibraryResponse::default();
    for id in ids {
        let record = match state.storage().get_library_skill(user, &id).await? {
            Some(r) if r.enabled => r,
            Some(_) => {
                out.failed.insert(id, "it is turned off".to_owned());
                continue;
            }
            None => {
                out.failed.insert(id, "not in your library".to_owned());
                continue;
            }
        };
        let install = add_skill(state, user, &workspace, &record, &query.agent_id, &staging);
        match deadline.run(install).await {
            Ok(Ok(name)) => out.added.push(name),
            Ok(Err(reason)) => {
                out.failed.insert(id, reason);
            }
            Err(expired) => {
                out.failed.insert(id, expired.reason());
            }
        }
    }
    Ok(out)
}

/// One library skill into the workspace; the reason when it cannot be.
async fn add_skill(
    state: &Engine,
    user: &str,
    workspace: &std::sync::Arc<dyn oxiscope_workspace::Workspace>,
    record: &SkillLibraryRecord,
    agent_id: &str,
    staging: &std::path::Path,
) -> Result<String, String> {
    let (Some(hub_id), Some(card_id)) = (&record.card.hub_id, &record.card.card_id) else {
        return Err("it came from no hub".to_owned());
    };
    let hubs = state.hubs();
    let catalogue = hubs
        .catalogue(HubKind::Skill, hub_id)
        .await
        .map_err(|e| reason(&e))?;
    let entry = catalogue
        .skill(card_id)
        .ok_or_else(|| format!("the hub {hub_id} no longer offers the card {card_id}"))?;
    // One staging at a time per user, within the server's slots.
    let _turn = install_turn(user)
        .await
        .map_err(|_| "the server cannot stage a skill now; try again".to_owned())?;
    let staged = hub::stage_skill(hubs, &catalogue, entry, staging)
        .await
        .map_err(|e| hub_reason(&e))?;
    let dir = staged.dir.clone();
    commit_skill(std::sync::Arc::clone(workspace), agent_id, dir, staged)
        .await
        .map_err(|e| workspace_reason(&e))
}

fn reason(failure: &SessionError) -> String {
    match failure {
        SessionError::NotFound(_) => "its hub is no longer configured".to_owned(),
        SessionError::Upstream {
            rate_limited: true, ..
        } => "the hub is rate-limiting requests; try again later".to_owned(),
        SessionError::Upstream { .. } => "the hub could not be reached".to_owned(),
        SessionError::Internal(detail) => {
            tracing::error!(%detail, "a skill hub failed");
            "its hub cannot be read now".to_owned()
        }
        e => e.to_string(),
    }
}

fn hub_reason(e: &HubError) -> String {
    match e {
        HubError::Upstream {
            rate_limited: true, ..
        } => "the hub is rate-limiting requests; try again later".to_owned(),
        HubError::Upstream { .. } => "the hub could not be reached".to_owned(),
        HubError::Invalid { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}
