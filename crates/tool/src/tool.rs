//! The [`Tool`] trait, its flags and the per-call context.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::stream::BoxStream;
use oxiscope_message::PermissionRule;
use oxiscope_model::ToolSchema;
use oxiscope_permission::{GenericPolicy, PermissionContext, PermissionDecision, ToolPolicy};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::backend::{ExecBackend, LocalBackend};
use crate::chunk::ToolChunk;
use crate::state::SessionState;

/// The chunks one tool call produces. The stream ends after a chunk with
/// `is_last = true` (or simply ends; the toolkit then treats the call as
/// finished).
pub type ToolStream = BoxStream<'static, ToolChunk>;

/// Static facts about a tool that the agent loop and the permission engine
/// read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[allow(clippy::struct_excessive_bools)]
pub struct ToolFlags {
    /// Calls may run in parallel with other concurrency-safe calls.
    pub concurrency_safe: bool,
    /// The tool never modifies anything (the default of `check_read_only`).
    pub read_only: bool,
    /// The caller (a UI, another program) executes the tool, not Oxiscope.
    pub external: bool,
    /// The tool reads or writes the session's tool state.
    pub state_injected: bool,
    /// The tool comes from an MCP server.
    pub mcp: bool,
}

/// Everything a tool call may use besides its arguments.
///
/// Cheap to clone; one per call. Built by the agent loop (or a test).
#[derive(Debug, Clone)]
pub struct ToolCallContext {
    /// The id of the tool call being answered.
    pub call_id: String,
    /// The working directory relative paths are resolved against.
    pub cwd: PathBuf,
    /// File system and process access.
    pub backend: Arc<dyn ExecBackend>,
    /// Cancelled when the call must stop (user interrupt, turn abort).
    pub cancel: CancellationToken,
    /// The session's read cache, active groups and tasks.
    pub session: SessionState,
    /// MIME types (or prefixes such as `image/`) the model accepts as input;
    /// `Read` returns images as data blocks only when they are accepted.
    pub accepted_media: Vec<String>,
}

impl ToolCallContext {
    /// A context on the local machine working in `cwd`, with a fresh
    /// session, a fresh cancellation token and no media accepted.
    pub fn local(cwd: impl Into<PathBuf>) -> Self {
        Self {
            call_id: oxiscope_message::stamp::new_id(),
            cwd: cwd.into(),
            backend: Arc::new(LocalBackend::new()),
            cancel: CancellationToken::new(),
            session: SessionState::default(),
            accepted_media: Vec::new(),
        }
    }

    /// Uses another session state.
    #[must_use]
    pub fn with_session(mut self, session: SessionState) -> Self {
        self.session = session;
        self
    }

    /// Uses another backend.
    #[must_use]
    pub fn with_backend(mut self, backend: Arc<dyn ExecBackend>) -> Self {
        self.backend = backend;
        self
    }

    /// Sets the call id.
    #[must_use]
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = id.into();
        self
    }

    /// Declares the media types the model accepts (`image/png`, `image/`, ...).
    #[must_use]
    pub fn with_accepted_media(mut self, media: impl IntoIterator<Item = String>) -> Self {
        self.accepted_media = media.into_iter().collect();
        self
    }

    /// Whether the model accepts `media_type`.
    #[must_use]
    pub fn accepts(&self, media_type: &str) -> bool {
        self.accepted_media
            .iter()
            .any(|m| m == media_type || (m.ends_with('/') && media_type.starts_with(m.as_str())))
    }

    /// `raw` as an absolute, normalised path (relative paths start at `cwd`).
    #[must_use]
    pub fn resolve(&self, raw: &str) -> PathBuf {
        let path = Path::new(raw);
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        };
        oxiscope_permission::normalise(&joined)
    }
}

/// Something the model can call.
///
/// Implement the identity methods and [`call`](Self::call); the permission
/// hooks have defaults that suit a tool the engine knows nothing about:
/// read-only as declared by the flags, no own check (passthrough), rules
/// matched on the exact JSON input, and a suggestion for exactly this input.
///
/// `call` receives arguments that were already parsed, repaired and
/// validated against [`input_schema`](Self::input_schema) by the
/// [`Toolkit`](crate::Toolkit). It must not panic on any input and must
/// stop promptly when `ctx.cancel` is cancelled.
pub trait Tool: Send + Sync + fmt::Debug {
    /// The unique name the model calls the tool by.
    fn name(&self) -> &str;

    /// What the tool does, written for the model.
    fn description(&self) -> &str;

    /// The JSON schema (an object schema) of the tool's input.
    fn input_schema(&self) -> &Value;

    /// Static facts about the tool.
    fn flags(&self) -> ToolFlags {
        ToolFlags::default()
    }

    /// Whether this call only reads. Default: the `read_only` flag.
    fn check_read_only(&self, _input: &Value) -> bool {
        self.flags().read_only
    }

    /// The tool's own permission check. Default: no opinion (passthrough).
    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        PermissionDecision::passthrough(format!("No tool-specific check for {}", self.name()))
    }

    /// Whether a rule with content applies to this call. Default: the rule
    /// content equals the JSON input.
    fn match_rule(
        &self,
        rule: &PermissionRule,
        input: &Value,
        context: &PermissionContext,
    ) -> bool {
        GenericPolicy::new(self.name()).match_rule(rule, input, context)
    }

    /// Rules that would allow calls like this one. Default: a rule for
    /// exactly this input, or for an MCP tool (`mcp__server__tool`) the
    /// tool with any input ([`GenericPolicy`]).
    fn generate_suggestions(
        &self,
        input: &Value,
        context: &PermissionContext,
    ) -> Vec<PermissionRule> {
        GenericPolicy::new(self.name()).generate_suggestions(input, context)
    }

    /// Whether the allow rules together allow the call. Default: the first
    /// matching rule.
    fn match_allow_rules(
        &self,
        rules: &[PermissionRule],
        input: &Value,
        context: &PermissionContext,
    ) -> Option<String> {
        rules
            .iter()
            .find(|rule| rule.rule_content.is_none() || self.match_rule(rule, input, context))
            .map(|rule| format!("Rule: {}", oxiscope_permission::format_rule(rule)))
    }

    /// Runs the tool.
    ///
    /// # Cancel safety
    ///
    /// Dropping the stream abandons the call; tools that start processes
    /// watch `ctx.cancel` to clean them up, so cancel the token first.
    fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream;

    /// The schema handed to the model.
    fn schema(&self) -> ToolSchema {
        ToolSchema::function(self.name(), self.description(), self.input_schema().clone())
    }
}

/// A [`Tool`] seen as the permission engine's [`ToolPolicy`], so
/// [`oxiscope_permission::decide`] can judge its calls.
#[derive(Debug, Clone, Copy)]
pub struct AsPolicy<'a>(pub &'a dyn Tool);

impl ToolPolicy for AsPolicy<'_> {
    fn tool_name(&self) -> &str {
        self.0.name()
    }

    fn check_read_only(&self, input: &Value) -> bool {
        self.0.check_read_only(input)
    }

    fn check_permissions(&self, input: &Value, context: &PermissionContext) -> PermissionDecision {
        self.0.check_permissions(input, context)
    }

    fn match_rule(
        &self,
        rule: &PermissionRule,
        input: &Value,
        context: &PermissionContext,
    ) -> bool {
        self.0.match_rule(rule, input, context)
    }

    fn generate_suggestions(
        &self,
        input: &Value,
        context: &PermissionContext,
    ) -> Vec<PermissionRule> {
        self.0.generate_suggestions(input, context)
    }

    fn match_allow_rules(
        &self,
        rules: &[PermissionRule],
        input: &Value,
        context: &PermissionContext,
    ) -> Option<String> {
        self.0.match_allow_rules(rules, input, context)
    }
}

/// A stream of exactly one chunk.
pub(crate) fn once(chunk: ToolChunk) -> ToolStream {
    Box::pin(futures_util::stream::once(async move { chunk }))
}

/// A stream of the one chunk `fut` produces.
pub(crate) fn once_future<F>(fut: F) -> ToolStream
where
    F: std::future::Future<Output = ToolChunk> + Send + 'static,
{
    Box::pin(futures_util::stream::once(fut))
}
