//! The agent of a session: the agent record, the session's model config and
//! credential, the session's workspace (tools, MCP servers, skills,
//! offloading), the session's state.

use std::sync::Arc;

use oxiscope_agent::{Agent, AgentState};
use oxiscope_model::DynChatModel;
use oxiscope_providers::{Endpoints, MediaPolicy, ModelConfig, RemoteMedia, chat_model_with};
use oxiscope_storage::{AgentRecord, SessionRecord};

use crate::Engine;
use crate::error::{SessionError, SessionResult};
use crate::spec::{AgentSpec, ModelSlot, SessionSpec};

/// What the session's models may read and call: media files from the
/// session's workspace only; downloads from public addresses only, and
/// only when the operator allows them; model endpoints at public
/// addresses only, unless the operator runs models on this machine or a
/// private network.
///
/// # Errors
/// 500 when the workspace directory cannot be named.
pub fn session_media_policy(state: &Engine, session: &SessionRecord) -> SessionResult<MediaPolicy> {
    let workspace_dir = state
        .workspaces()
        .dir(&session.user_id, &session.workspace_id)
        .map_err(workspace_error)?;
    let remote = if state.config().policy.remote_media {
        RemoteMedia::PublicOnly
    } else {
        RemoteMedia::Deny
    };
    let endpoints = if state.config().policy.private_model_endpoints {
        Endpoints::Any
    } else {
        Endpoints::PublicOnly
    };
    Ok(super::models::media_policy(
        workspace_dir,
        remote,
        endpoints,
    ))
}

/// Builds the agent that runs `session`, continuing from `agent_state`;
/// with it, the session's chat model.
///
/// # Errors
/// 400 when the session has no usable model config, 404 when its
/// credential is gone.
pub async fn build_agent(
    state: &Engine,
    agent: &AgentRecord,
    session: &SessionRecord,
    agent_state: AgentState,
    trace: Option<oxiscope_agent::otel::SpanContext>,
) -> SessionResult<(Agent, Arc<dyn DynChatModel>)> {
    let media = session_media_policy(state, session)?;
    let spec = SessionSpec::of(session);
    let model = session_model(state, session, &spec, ModelSlot::Chat, &media)
        .await?
        .ok_or_else(|| {
            SessionError::Invalid("The session has no chat model configured.".to_owned())
        })?;
    // Tried when the first model fails, as in the library.
    let fallback = session_model(state, session, &spec, ModelSlot::Fallback, &media).await?;
    let mut agent_state = agent_state;
    let policy = &state.config().policy;
    let mode = agent_state.permission_context.mode;
    if policy.effective_mode(mode) != mode {
        tracing::warn!(session = %session.id, mode = mode.as_str(), "the session's permission mode is no longer allowed; running in default");
        agent_state.permission_context.mode = policy.effective_mode(mode);
    }
    // What the session's model sets up (schedules) gets no more trust.
    let creator_mode = agent_state.permission_context.mode;

    // A stored loop or context config that does not parse reads as the
    // defaults; one that parses but cannot work is refused below.
    let agent_spec = AgentSpec::of(agent);
    let name = agent_spec.name_or("Assistant");
    // Tools, MCP servers, skills and offloading come from the session's
    // workspace (a sandbox unless the operator chose otherwise).
    let workspace = super::sessions::workspace_of(state, session)
        .await
        .map_err(workspace_error)?;
    let mut builder = Agent::builder(name, Arc::clone(&model))
        .reply_limits(state.config().reply_limits)
        .react_config(agent_spec.react.clone())
        .context_config(agent_spec.context.clone())
        .state(agent_state);
    if let Some(fallback) = fallback {
        builder = builder.fallback_model(fallback);
    }
    // The session's working directory, inside its workspace.
    let cwd = spec.cwd().map(std::path::PathBuf::from);
    if let Some(cwd) = &cwd {
        let dir = workspace.workdir().join(cwd);
        let is_dir = workspace
            .backend()
            .metadata(&dir)
            .await
            .is_ok_and(|m| m.is_dir);
        if !is_dir {
            return Err(SessionError::Invalid(format!(
                "The session's cwd {} is not a directory in its workspace.",
                dir.display()
            )));
        }
    }
    // The operator's cap on what one reply may spend.
    let builder = match &state.config().reply_budget {
        Some(budget) => builder.middleware(budget.clone()),
        None => builder,
    };
    // Long-term memory in the workspace, when the operator turned it on:
    // read and written through the workspace's backend, like its files.
    let builder = match &state.config().agentic_memory {
        Some(params) => {
            let memory = oxiscope_memory::AgenticMemoryMiddleware::builder(
                workspace.workdir(),
                Arc::clone(&model),
            )
            .parameters(params.clone())
            .backend(workspace.backend())
            .build()
            .map_err(|e| SessionError::Internal(format!("the agentic memory: {e}")))?;
            builder.middleware(memory)
        }
        None => builder,
    };
    let workspace_handle = Arc::clone(&workspace);
    let (builder, mcp) = oxiscope_workspace::equip(
        builder,
        workspace,
        &session.agent_id,
        &session.id,
        &agent_spec.system_prompt,
        cwd.as_deref(),
    )
    .await
    .map_err(workspace_error)?;
    for (server, error) in &mcp.failed {
        tracing::warn!(session = %session.id, %server, "MCP server unavailable: {error}");
    }
    // Knowledge bases attached to the session: search as a tool or a hint.
    let builder = match super::knowledge::session_middleware(state, session, &spec).await? {
        Some(rag) => builder.middleware(rag),
        None => builder,
    };
    // Hints that reached the session while its reply was parked.
    let builder = builder.middleware(super::deferred::DeferredHints);
    // The user's schedules, as tools.
    let builder = builder.middleware(super::schedule_tools::schedule_tools(
        state,
        session,
        spec.model(ModelSlot::Chat).ok().cloned(),
        creator_mode,
    ));
    // The team tools, by the session's role in a team (if any).
    let builder = builder.middleware(super::team::team_middleware(state, agent, session).await?);
    // What the application embedding the service adds, last of the
    // service's own layers.
    let recipes = &state.config().recipes;
    let builder = if recipes.is_empty() {
        builder
    } else {
        recipes.apply(
            builder,
            &crate::recipe::RecipeContext {
                user_id: &session.user_id,
                agent_id: &session.agent_id,
                session_id: &session.id,
                agent: &agent_spec,
                workspace: &workspace_handle,
            },
        )?
    };
    let builder = match &state.config().span_exporter {
        Some(exporter) => builder.middleware(crate::otel::session_tracing(
            Arc::clone(exporter),
            session,
            spec.provider(),
            name,
            model.model_name(),
            trace,
        )),
        None => builder,
    };
    // Tool calls that outlive the offload timeout go on in the background
    // (innermost, so the other layers see the placeholder result).
    let offload = state.config().tool_offload;
    let builder = if offload.is_zero() {
        builder
    } else {
        builder.middleware(super::offload::ToolOffloadMiddleware::new(
            state.clone(),
            &session.user_id,
            &session.id,
            offload,
        ))
    };
    let agent = builder
        .build()
        .map_err(|e| SessionError::Invalid(format!("the agent's configuration: {e}")))?;
    Ok((agent, model))
}

/// The model in the session's `slot` (`None` when unset), reusing one
/// already built for the same credential, config and media policy.
///
/// # Errors
/// 400 for an unusable config, 404 when its credential is gone.
async fn session_model(
    state: &Engine,
    session: &SessionRecord,
    spec: &SessionSpec,
    slot: ModelSlot,
    media: &MediaPolicy,
) -> SessionResult<Option<Arc<dyn DynChatModel>>> {
    let Some(config) = spec
        .model(slot)
        .get()
        .map_err(|e| SessionError::Invalid(format!("The session's {}: {e}", slot.key())))?
    else {
        return Ok(None);
    };
    let record = state
        .storage()
        .get_credential(&session.user_id, &config.credential_id)
        .await?
        .ok_or_else(|| {
            SessionError::NotFound(format!("Credential {} not found", config.credential_id))
        })?;
    let key = super::models::key(&record, config, media);
    let model = state.models().get_or_build(key, || {
        let credential = state.unseal_credential(&record)?;
        chat_model_with(&credential, &ModelConfig::from(config), media)
            .map_err(|e| SessionError::Invalid(format!("Cannot build the chat model: {e}")))
    })?;
    Ok(Some(model))
}

/// A workspace failure: the tenant's own input (an id, a declaration) is
/// a 400; anything else is the server's.
fn workspace_error(e: oxiscope_workspace::Error) -> SessionError {
    use oxiscope_workspace::Error;
    match e {
        Error::InvalidId { .. } | Error::InvalidMcp { .. } | Error::InvalidSkill { .. } => {
            SessionError::Invalid(e.to_string())
        }
        Error::TooManyLive { .. } => {
            SessionError::Limit(format!("{e} (max_live_workspaces_per_user)"))
        }
        other => SessionError::Internal(format!("the workspace: {other}")),
    }
}
