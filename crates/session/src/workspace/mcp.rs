//! MCP servers of a session: declared, listed with their live state,
//! removed.

use std::time::Duration;

use futures_util::future::join_all;
use oxiscope_mcp::{McpClient, McpTool};
use oxiscope_tool::Tool as _;
use oxiscope_workspace::McpDeclaration;

use super::{SessionError, SessionResult, SessionWorkspace};
use crate::api::{McpClientBody, McpClientStatus, ToolInfo};

/// How long listing one server's tools (starting it if needed) may take
/// before it is reported unhealthy.
const LIST_TIMEOUT: Duration = Duration::from_secs(20);
/// How long getting the session's clients may wait (another request may
/// hold them).
const CLIENTS_TIMEOUT: Duration = Duration::from_secs(30);

fn to_body(decl: &McpDeclaration) -> SessionResult<McpClientBody> {
    serde_json::to_value(decl)
        .and_then(serde_json::from_value)
        .map_err(|e| SessionError::Internal(format!("an MCP declaration: {e}")))
}

fn to_declaration(body: &McpClientBody) -> SessionResult<McpDeclaration> {
    serde_json::to_value(body)
        .and_then(serde_json::from_value)
        .map_err(|e| SessionError::Unprocessable(format!("the MCP declaration: {e}")))
}

/// The session's MCP servers, each with its tools or why they could not
/// be listed. Servers start on first use; each gets `LIST_TIMEOUT`.
///
/// # Errors
/// The declarations cannot be read.
pub async fn list_mcps(ws: &SessionWorkspace) -> SessionResult<Vec<McpClientStatus>> {
    let (agent, session) = (&ws.session.agent_id, &ws.session.id);
    let declarations = ws.workspace.mcp_declarations(agent, session).await?;
    let clients =
        match tokio::time::timeout(CLIENTS_TIMEOUT, ws.workspace.list_mcps(agent, session)).await {
            Ok(clients) => clients?,
            Err(_) => {
                return Err(SessionError::Conflict(
                    "The session's MCP servers are busy; try again.".to_owned(),
                ));
            }
        };
    let statuses = declarations.iter().map(|decl| {
        let client = clients.iter().find(|c| c.name() == decl.name).cloned();
        async move {
            let client_body = to_body(decl)?;
            let (tools, error) = match client {
                None => (
                    Vec::new(),
                    Some("this declaration cannot be used in this workspace".to_owned()),
                ),
                Some(client) => match tokio::time::timeout(LIST_TIMEOUT, probe(&client)).await {
                    Ok(Ok(tools)) => (
                        tools
                            .iter()
                            .map(|t| ToolInfo {
                                name: t.remote_name().to_owned(),
                                description: Some(t.description().to_owned())
                                    .filter(|d| !d.is_empty()),
                            })
                            .collect(),
                        None,
                    ),
                    Ok(Err(e)) => (Vec::new(), Some(e)),
                    Err(_) => (
                        Vec::new(),
                        Some(format!(
                            "the server did not list its tools within {} s",
                            LIST_TIMEOUT.as_secs()
                        )),
                    ),
                },
            };
            Ok::<_, SessionError>(McpClientStatus {
                client: client_body,
                is_healthy: error.is_none(),
                tools,
                error,
            })
        }
    });
    join_all(statuses).await.into_iter().collect()
}

/// The tools of a live server: a stateful server found dead (or not yet
/// started) is started first, so a cached tool list never hides a dead
/// server.
async fn probe(client: &McpClient) -> Result<Vec<McpTool>, String> {
    if client.is_stateful() && !client.is_connected().await {
        client.connect().await.map_err(|e| e.to_string())?;
    }
    client.list_tools().await.map_err(|e| e.to_string())
}

/// Declares an MCP server for the session (it starts on next use).
///
/// # Errors
/// 422 for an unusable declaration (a bad name, an environment variable
/// that is no plain name, HTTP without network in the sandbox); 409 when
/// the name is taken.
pub async fn add_mcp(ws: &SessionWorkspace, body: &McpClientBody) -> SessionResult<()> {
    let decl = to_declaration(body)?;
    decl.validate()?;
    ws.workspace
        .add_mcp(decl, &ws.session.agent_id, &ws.session.id)
        .await?;
    Ok(())
}

/// Removes (and stops) the session's MCP server `name`.
///
/// # Errors
/// 404 when there is none.
pub async fn remove_mcp(ws: &SessionWorkspace, name: &str) -> SessionResult<()> {
    let removed = ws
        .workspace
        .remove_mcp(name, &ws.session.agent_id, &ws.session.id)
        .await?;
    if removed {
        Ok(())
    } else {
        Err(SessionError::NotFound(format!(
            "MCP server {name} not found"
        )))
    }
}
