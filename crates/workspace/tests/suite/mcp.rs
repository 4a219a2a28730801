//! MCP stdio servers inside the sandbox: started in it, spoken to over the
//! `bwrap` process's pipes, stopped when the workspace is closed or
//! evicted.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use oxiscope_message::ToolResultState;
use oxiscope_tool::{ToolCallContext, collect};
use oxiscope_workspace::{
    Isolation, McpDeclaration, SandboxConfig, SandboxWorkspace, Workspace, WorkspaceFactory,
    WorkspaceManager, assemble_toolkit,
};

use super::support::{Scratch, Tier, mcp_servers, require_sandbox};

/// MCP servers start in a sandbox of their own whatever the tier.
const TIER: Tier = Tier::Warm;

fn everything(servers: &std::path::Path) -> McpDeclaration {
    let script = servers.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    serde_json::from_value(serde_json::json!({
        "name": "everything",
        "is_stateful": true,
        "mcp_config": {"type": "stdio_mcp", "command": "node",
                       "args": [script.display().to_string(), "stdio"]},
        "enable_tools": ["echo", "get-env"]
    }))
    .unwrap()
}

fn config(servers: &std::path::Path) -> SandboxConfig {
    SandboxConfig {
        ro_binds: vec![servers.to_path_buf()],
        ..SandboxConfig::default()
    }
}

#[tokio::test]
async fn a_stdio_server_runs_inside_the_sandbox_and_sees_only_its_environment() {
    let Some(servers) = mcp_servers() else { return };
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch, config(&servers));
    ws.add_mcp(everything(&servers), "agent", "s1")
        .await
        .unwrap();
    let (toolkit, registration) = assemble_toolkit(&ws, "agent", "s1").await.unwrap();
    assert!(registration.failed.is_empty(), "{:?}", registration.failed);
    let ctx = || ToolCallContext::local("/workspace").with_backend(ws.backend());
    let echoed = collect(
        toolkit
            .call(
                "mcp__everything__echo",
                r#"{"message": "from the sandbox"}"#,
                ctx(),
            )
            .await,
    )
    .await;
    assert_eq!(echoed.state, ToolResultState::Success, "{}", echoed.text());
    assert!(
        echoed.text().contains("from the sandbox"),
        "{}",
        echoed.text()
    );
    // The server's environment is the sandbox's, not the test process's.
    let env = collect(toolkit.call("mcp__everything__get-env", "{}", ctx()).await).await;
    assert!(env.text().contains("/workspace"), "{}", env.text());
    assert!(!env.text().contains("CARGO_MANIFEST_DIR"), "{}", env.text());
    let client = &ws.list_mcps("agent", "s1").await.unwrap()[0];
    assert!(client.is_connected().await);
    ws.close().await;
    assert!(!client.is_connected().await);
}

#[tokio::test]
async fn an_idle_workspace_is_evicted_and_its_servers_stopped() {
    let Some(servers) = mcp_servers() else { return };
    let scratch = Scratch::new();
    // Proves the sandbox exists (or skips) before the manager is used.
    let probe = require_sandbox!(scratch, config(&servers));
    drop(probe);
    let cfg = config(&servers);
    let factory: WorkspaceFactory = Arc::new(move |spec| {
        let cfg = cfg.clone();
        async move {
            let ws =
                SandboxWorkspace::create(spec.workspace_id, spec.dir, cfg, Vec::new(), Vec::new())
                    .await?;
            ws.initialize().await?;
            Ok(Arc::new(ws) as Arc<dyn Workspace>)
        }
        .boxed()
    });
    let base = scratch.path().join("workspaces");
    std::fs::create_dir_all(&base).unwrap();
    let manager =
        WorkspaceManager::new(&base, Isolation::PerAgent, factory).with_ttl(Duration::ZERO);
    let ws = manager.get("alice", "agent", "s1", None).await.unwrap();
    // The user's directory must be traversable by the sandbox user.
    ws.add_mcp(everything(&servers), "agent", "s1")
        .await
        .unwrap();
    let clients = ws.list_mcps("agent", "s1").await.unwrap();
    let (_toolkit, registration) = assemble_toolkit(&*ws, "agent", "s1").await.unwrap();
    assert!(registration.failed.is_empty(), "{:?}", registration.failed);
    assert!(clients[0].is_connected().await);
    drop(ws);
    drop(_toolkit);
    assert_eq!(manager.evict_idle().await, 1);
    assert!(
        !clients[0].is_connected().await,
        "eviction must stop the server"
    );
    // Declarations survive: the next request brings the server back.
    let ws = manager.get("alice", "agent", "s1", None).await.unwrap();
    assert_eq!(ws.mcp_declarations("agent", "s1").await.unwrap().len(), 1);
}

#[tokio::test]
async fn http_servers_need_a_sandbox_with_network() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let http: McpDeclaration = serde_json::from_value(serde_json::json!({
        "name": "remote", "is_stateful": true,
        "mcp_config": {"type": "http_mcp", "url": "http://169.254.169.254/mcp"}
    }))
    .unwrap();
    let err = ws.add_mcp(http, "a", "s").await.unwrap_err();
    assert!(err.to_string().contains("no network"), "{err}");
}
