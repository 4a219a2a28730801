//! The agent of a session: the agent record, the session's model config and
//! credential, the session's workspace (tools, MCP servers, skills,
//! offloading), the session's state.

use oxiscope_agent::{Agent, AgentState, ContextConfig, ReActConfig};
use oxiscope_providers::{ModelConfig, chat_model};
use oxiscope_storage::{AgentRecord, SessionRecord};
use serde_json::Value;

use crate::api::ChatModelConfig;
use crate::error::{ApiError, ApiResult};
use crate::routes::unseal_credential;
use crate::state::AppState;

/// Builds the agent that runs `session`, continuing from `agent_state`.
///
/// # Errors
/// 400 when the session has no usable model config, 404 when its
/// credential is gone.
pub(crate) async fn build_agent(
    state: &AppState,
    agent: &AgentRecord,
    session: &SessionRecord,
    agent_state: AgentState,
) -> ApiResult<Agent> {
    let config: ChatModelConfig = session
        .config
        .get("chat_model_config")
        .filter(|v| !v.is_null())
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| ApiError::BadRequest(format!("The session's chat model config: {e}")))?
        .ok_or_else(|| {
            ApiError::BadRequest("The session has no chat model configured.".to_owned())
        })?;
    let record = state
        .storage()
        .get_credential(&session.user_id, &config.credential_id)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(format!("Credential {} not found", config.credential_id))
        })?;
    let key = super::models::key(&record, &config);
    let model = state.models().get_or_build(key, || {
        let credential = unseal_credential(state, &record)?;
        chat_model(&credential, &ModelConfig::from(&config))
            .map_err(|e| ApiError::BadRequest(format!("Cannot build the chat model: {e}")))
    })?;

    let data = &agent.data;
    let name = data
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("Assistant");
    let prompt = data
        .get("system_prompt")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let react: ReActConfig = data
        .pointer("/chat_config/react_config")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    // A stored context config that does not parse falls back to the
    // defaults; one that parses but cannot work is refused.
    let context: ContextConfig = data
        .pointer("/chat_config/context_config")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    // Tools, MCP servers, skills and offloading come from the session's
    // workspace (a sandbox unless the operator chose otherwise).
    let workspace = state
        .workspaces()
        .get(
            &session.user_id,
            &session.agent_id,
            &session.id,
            Some(&session.workspace_id),
        )
        .await
        .map_err(workspace_error)?;
    let builder = Agent::builder(name, model)
        .react_config(react)
        .context_config(context)
        .state(agent_state);
    let (builder, mcp) =
        oxiscope_workspace::equip(builder, workspace, &session.agent_id, &session.id, prompt)
            .await
            .map_err(workspace_error)?;
    for (server, error) in &mcp.failed {
        tracing::warn!(session = %session.id, %server, "MCP server unavailable: {error}");
    }
    builder
        .build()
        .map_err(|e| ApiError::BadRequest(format!("the agent's configuration: {e}")))
}

/// A workspace failure: the tenant's own input (an id, a declaration) is
/// a 400; anything else is the server's.
fn workspace_error(e: oxiscope_workspace::Error) -> ApiError {
    use oxiscope_workspace::Error;
    match e {
        Error::InvalidId { .. } | Error::InvalidMcp { .. } | Error::InvalidSkill { .. } => {
            ApiError::BadRequest(e.to_string())
        }
        other => ApiError::Internal(format!("the workspace: {other}")),
    }
}
