//! Putting MCP servers' tools into a [`Toolkit`].

use std::sync::Arc;

use futures_util::future::join_all;
use oxiscope_tool::{Tool, Toolkit};

use crate::client::McpClient;
use crate::error::{Error, Result};

/// What [`register_mcp`] did with each client.
#[derive(Debug, Default)]
pub struct McpRegistration {
    /// Per server that was added: its name and the names of its tools.
    pub registered: Vec<(String, Vec<String>)>,
    /// Per server that was skipped: its name and why.
    pub failed: Vec<(String, Error)>,
}

impl McpRegistration {
    /// The tool names registered for `server`.
    #[must_use]
    pub fn tools_of(&self, server: &str) -> Option<&[String]> {
        self.registered
            .iter()
            .find(|(s, _)| s == server)
            .map(|(_, tools)| tools.as_slice())
    }
}

/// Lists the tools of every client — all at once, so a slow server delays
/// no other — and registers them in `group` (`basic`, or a group declared
/// with [`Toolkit::add_group`]).
///
/// A server whose listing fails (it does not start, times out, errors) is
/// skipped with a warning and contributes no tools; so is a server one of
/// whose tool names is already taken. The other servers are registered in
/// the order given. Stateful servers are started here if they were not
/// connected yet.
///
/// # Cancel safety
///
/// Dropping the future abandons the listings; the toolkit is only changed
/// after all of them finished.
pub async fn register_mcp(
    toolkit: &mut Toolkit,
    clients: &[McpClient],
    group: &str,
) -> McpRegistration {
    let listings = join_all(clients.iter().map(McpClient::list_tools)).await;
    let mut report = McpRegistration::default();
    for (client, listing) in clients.iter().zip(listings) {
        let server = client.name().to_owned();
        match listing.and_then(|tools| add_all(toolkit, client, tools, group)) {
            Ok(names) => report.registered.push((server, names)),
            Err(e) => {
                tracing::warn!(server = %server, "skipping MCP server: {e}");
                report.failed.push((server, e));
            }
        }
    }
    report
}

/// Registers all of one server's tools, or none.
fn add_all(
    toolkit: &mut Toolkit,
    client: &McpClient,
    tools: Vec<crate::McpTool>,
    group: &str,
) -> Result<Vec<String>> {
    let fail = |source| Error::Toolkit {
        server: client.name().to_owned(),
        source,
    };
    if let Some(taken) = tools.iter().find(|t| toolkit.tool(t.name()).is_some()) {
        return Err(fail(oxiscope_tool::Error::DuplicateTool {
            name: taken.name().to_owned(),
        }));
    }
    let mut names = Vec::with_capacity(tools.len());
    for tool in tools {
        names.push(tool.name().to_owned());
        toolkit.register_arc(Arc::new(tool), group).map_err(fail)?;
    }
    Ok(names)
}
