//! Dispatch: from a model's tool call to a stream of chunks.

use oxiscope_message::{ToolCallBlock, ToolResultBlock};
use oxiscope_permission::{PermissionContext, PermissionDecision, decide};
use serde_json::Value;

use super::registry::{Found, Toolkit};
use crate::chunk::ToolChunk;
use crate::middleware::{Next, ToolInvocation, collect};
use crate::state::ToolContext;
use crate::tool::{AsPolicy, ToolCallContext, ToolStream, once};

impl Toolkit {
    fn active_entry(&self, name: &str, context: &ToolContext) -> Result<Found<'_>, ToolChunk> {
        let Some(entry) = self.find(name) else {
            let mut known: Vec<String> = self.schemas_names(context);
            known.sort_unstable();
            // AgentScope's words, plus the names to pick from.
            return Err(ToolChunk::error(format!(
                "ToolNotFoundError: The tool named '{name}' doesn't exist. Available tools: {}.",
                known.join(", ")
            )));
        };
        if !context.is_active(entry.group) {
            return Err(ToolChunk::error(format!(
                "ToolGroupInactiveError: The tool '{name}' in group '{}' is currently inactive. \
                 You should first activate the group by calling the '{}' tool.",
                entry.group,
                super::RESET_TOOLS
            )));
        }
        Ok(entry)
    }

    fn schemas_names(&self, context: &ToolContext) -> Vec<String> {
        let mut names: Vec<String> = self
            .reset
            .iter()
            .chain(self.entries.iter().filter(|e| context.is_active(&e.group)))
            .map(|e| e.tool.name().to_owned())
            .collect();
        if let Some(view) = self.view() {
            names.extend(
                view.entries()
                    .filter(|(i, _)| self.source_active(*i, context))
                    .map(|(_, e)| e.tool.name().to_owned()),
            );
        }
        names
    }

    /// Parses, repairs and validates the arguments of a call to `name`.
    ///
    /// # Errors
    ///
    /// An error chunk for the model: unknown tool, tool of an inactive
    /// group, or arguments that are not valid after repair (each problem
    /// spelled out).
    pub fn prepare(
        &self,
        name: &str,
        raw_input: &str,
        context: &ToolContext,
    ) -> Result<Value, ToolChunk> {
        let entry = self.active_entry(name, context)?;
        entry
            .args
            .prepare(name, raw_input)
            .map_err(|e| ToolChunk::error(e.to_string()))
    }

    /// What the permission engine decides about calling `name` with
    /// (prepared) `input`; `None` for an unknown tool.
    #[must_use]
    pub fn decide(
        &self,
        name: &str,
        input: &Value,
        context: &PermissionContext,
    ) -> Option<PermissionDecision> {
        self.find(name)
            .map(|e| decide(&AsPolicy(e.tool.as_ref()), input, context))
    }

    /// Runs a call whose input was already prepared (see
    /// [`prepare`](Self::prepare)), through the middleware chain.
    ///
    /// Unknown or inactive tools yield a single error chunk.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe (it only reads the session's active groups); cancel
    /// `ctx.cancel` to stop a running tool.
    pub async fn call_prepared(
        &self,
        name: &str,
        input: Value,
        ctx: ToolCallContext,
    ) -> ToolStream {
        let entry = {
            let context = ctx.session.tool_context().lock().await;
            self.active_entry(name, &context).map(|e| e.tool)
        };
        match entry {
            Ok(tool) => Next::new(self.middleware.clone()).run(ToolInvocation { tool, input, ctx }),
            Err(chunk) => once(chunk),
        }
    }

    /// Prepares the raw arguments of a call to `name` and runs it. Any
    /// problem with the name or the arguments becomes an error chunk the
    /// model reads.
    ///
    /// # Cancel safety
    ///
    /// As [`call_prepared`](Self::call_prepared).
    pub async fn call(&self, name: &str, raw_input: &str, ctx: ToolCallContext) -> ToolStream {
        let prepared = {
            let context = ctx.session.tool_context().lock().await;
            self.prepare(name, raw_input, &context)
        };
        match prepared {
            Ok(input) => self.call_prepared(name, input, ctx).await,
            Err(chunk) => once(chunk),
        }
    }

    /// Runs a model's tool call to the end and returns its result block
    /// (ids taken from the call).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; cancel `ctx.cancel` first so
    /// processes are cleaned up.
    pub async fn execute(&self, call: &ToolCallBlock, ctx: ToolCallContext) -> ToolResultBlock {
        let stream = self.call(&call.name, &call.input, ctx).await;
        collect(stream)
            .await
            .into_result_block(call.id.clone(), call.name.clone())
    }
}
