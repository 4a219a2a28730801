//! The agent of a session: the agent record, the session's model config and
//! credential, the built-in tools in the workspace directory, the session's
//! state.

use std::path::PathBuf;
use std::sync::Arc;

use oxiscope_agent::{Agent, AgentState, ContextConfig, ReActConfig};
use oxiscope_model::{Credential, DynChatModel, ModelError};
use oxiscope_permission::PathEnv;
use oxiscope_providers::{anthropic, ollama, openai_chat};
use oxiscope_storage::{AgentRecord, SessionRecord};
use oxiscope_tool::{BASIC_GROUP, FileOffloader, Toolkit, builtin_tools};
use serde_json::Value;

use crate::api::ChatModelConfig;
use crate::error::{ApiError, ApiResult};
use crate::routes::unseal_credential;
use crate::state::AppState;

/// The working directory of a workspace: `<data_dir>/workspaces/<id>`.
pub(crate) fn workspace_dir(state: &AppState, workspace_id: &str) -> PathBuf {
    state.data_dir().join("workspaces").join(workspace_id)
}

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
        chat_model(&credential, &config)
            .map_err(|e| ApiError::BadRequest(format!("Cannot build the chat model: {e}")))
    })?;

    let workdir = workspace_dir(state, &session.workspace_id);
    std::fs::create_dir_all(&workdir)
        .map_err(|e| ApiError::Internal(format!("workspace {}: {e}", workdir.display())))?;
    let mut toolkit = Toolkit::new();
    for tool in builtin_tools(&PathEnv::new(&workdir, None)) {
        toolkit
            .register_arc(tool, BASIC_GROUP)
            .map_err(|e| ApiError::Internal(e.to_string()))?;
    }

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
    Agent::builder(name, model)
        .system_prompt(prompt)
        .toolkit(Arc::new(toolkit))
        // Offloaded context lands in the workspace (`sessions/`, `data/`),
        // where the agent's file tools can read it back.
        .offloader(Arc::new(FileOffloader::new(&workdir)))
        .workdir(workdir)
        .react_config(react)
        .context_config(context)
        .state(agent_state)
        .build()
        .map_err(|e| ApiError::BadRequest(format!("the agent's configuration: {e}")))
}

/// The chat model for a credential and a model config.
fn chat_model(
    credential: &Credential,
    config: &ChatModelConfig,
) -> Result<Arc<dyn DynChatModel>, ModelError> {
    let class = config.model_class.as_str();
    let kind = credential.credential_type().as_str();
    if class == "anthropic_chat" || (class.is_empty() && kind == "anthropic_credential") {
        let model = anthropic::AnthropicChatModel::from_credential(credential, &config.model)?;
        let params =
            serde_json::from_value(Value::Object(config.parameters.clone())).map_err(|e| {
                ModelError::InvalidRequest {
                    message: format!("parameters: {e}"),
                }
            })?;
        return Ok(Arc::new(model.with_parameters(params)));
    }
    if class == "ollama_chat" || (class.is_empty() && kind == "ollama_credential") {
        let model = ollama::OllamaChatModel::from_credential(credential, &config.model)?;
        let params =
            serde_json::from_value(Value::Object(config.parameters.clone())).map_err(|e| {
                ModelError::InvalidRequest {
                    message: format!("parameters: {e}"),
                }
            })?;
        return Ok(Arc::new(model.with_parameters(params)));
    }
    let model = openai_chat::OpenAiChatModel::from_credential(credential, &config.model)?
        .with_parameters(config.parameters.clone())
        .build()?;
    Ok(Arc::new(model))
}
