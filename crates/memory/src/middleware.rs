//! [`AgenticMemoryMiddleware`]: the agent hooks of the agentic memory.
//!
//! - `on_reply`: makes sure `MEMORY.md` exists, loads it for the system
//!   prompt, and (modes `static_control` / `both`, a reply started by
//!   messages) starts the selection of relevant memories in a task that
//!   runs alongside the reply; the task is aborted when the reply's stream
//!   ends or is dropped.
//! - `on_system_prompt`: appends the memory instructions and the index.
//! - `on_prepare_reasoning`: when the selection has finished, its memories
//!   are added once as a hint before that reasoning step.
//! - `list_tools`: offers `memory_search` (modes `agent_control` / `both`).

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::StreamExt;
use oxiscope_agent::{
    AgentState, EventStream, Middleware, PrepHint, ReasoningPrep, ReplyCall, ReplyInput, ReplyNext,
    ToolList,
};
use oxiscope_message::ContentBlock;
use oxiscope_model::DynChatModel;
use oxiscope_tool::{ExecBackend, LocalBackend, Tool};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::params::Parameters;
use crate::prompts::{EMPTY_INDEX, HINT_TEMPLATE, INDEX_CUT_NOTE, SEARCH_NUDGE};
use crate::search::MemorySearchTool;
use crate::store::{MemoryFile, MemoryStore};
use crate::text::cut_lines;

/// The default name of the memory directory inside the working directory.
pub const DEFAULT_MEMORY_DIR: &str = "Memory";

/// What the middleware and its tool share.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) store: MemoryStore,
    pub(crate) params: Parameters,
    model: Arc<dyn DynChatModel>,
    /// The index as put into the system prompt (rendered, cut).
    index: Mutex<Option<String>>,
    scratch: Mutex<Scratch>,
}

/// The automatic selection of the running reply.
#[derive(Debug, Default)]
struct Scratch {
    /// Bumped by every reply; a selection of an older reply is dropped.
    generation: u64,
    /// A finished selection's hint, not yet injected.
    ready: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Core {
    /// Reads `MEMORY.md` again and renders it for the system prompt.
    async fn refresh_index(&self) {
        self.store.ensure_layout().await;
        let raw = self.store.read_index().await.unwrap_or_default();
        let rendered = render_index(&raw, &self.params, &self.store.index_path());
        *lock(&self.index) = Some(rendered);
    }

    /// The hint with the memories the model selects for `query`, if any.
    async fn retrieve(&self, query: &str, cancel: CancellationToken) -> Option<String> {
        let p = &self.params;
        let files = self
            .store
            .list(
                p.retrieval_max_files,
                p.retrieval_max_tokens_per_frontmatter,
            )
            .await;
        let names = crate::select::select(
            self.model.as_ref(),
            &p.retrieval_instructions,
            query,
            &files,
            p.retrieval_max_selected,
            cancel,
        )
        .await;
        let chosen: Vec<&MemoryFile> = names
            .iter()
            .filter_map(|n| files.iter().find(|f| &f.filename == n))
            .collect();
        if chosen.is_empty() {
            return None;
        }
        let memories =
            crate::select::render(&self.store, &chosen, p.retrieval_max_tokens_per_md).await?;
        Some(HINT_TEMPLATE.replace("{memories}", &memories))
    }

    /// Forgets the previous reply's selection; the new generation.
    fn next_generation(&self) -> u64 {
        let mut s = lock(&self.scratch);
        s.generation += 1;
        s.ready = None;
        s.generation
    }
}

/// The index as the system prompt shows it: cut to the limits with a note,
/// or a placeholder when empty.
pub(crate) fn render_index(raw: &str, params: &Parameters, path: &Path) -> String {
    let cut = cut_lines(raw, params.memory_max_lines, params.memory_max_tokens);
    if cut.kept.trim().is_empty() && cut.omitted_lines == 0 {
        return EMPTY_INDEX.to_owned();
    }
    let mut out = cut.kept.to_owned();
    if cut.omitted_lines > 0 {
        out.push_str(
            &INDEX_CUT_NOTE
                .replace("{omitted}", &cut.omitted_lines.to_string())
                .replace("{offset}", &cut.kept_lines.to_string())
                .replace("{path}", &path.display().to_string()),
        );
    }
    out
}

/// The reply's input as the selection query: one `name: text` line per
/// message with text.
fn query_of(input: &ReplyInput) -> String {
    let ReplyInput::Msgs(msgs) = input else {
        return String::new();
    };
    msgs.iter()
        .filter_map(|m| {
            let text: Vec<&str> = m
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            (!text.is_empty()).then(|| format!("{}: {}", m.name, text.join("\n")))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Aborts the selection task when the reply's stream goes away.
#[derive(Debug)]
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Long-term memory in Markdown files that the agent writes itself; see
/// the [crate docs](crate).
///
/// One instance serves one agent at a time (the selection follows the
/// agent's one running reply), as in AgentScope.
#[derive(Debug, Clone)]
pub struct AgenticMemoryMiddleware {
    core: Arc<Core>,
    search: Arc<dyn Tool>,
}

impl AgenticMemoryMiddleware {
    /// A builder for memories in `workdir`/`Memory`, selected by `model`.
    #[must_use]
    pub fn builder(
        workdir: impl Into<PathBuf>,
        model: Arc<dyn DynChatModel>,
    ) -> AgenticMemoryMiddlewareBuilder {
        AgenticMemoryMiddlewareBuilder {
            workdir: workdir.into(),
            memory_dir: DEFAULT_MEMORY_DIR.to_owned(),
            model,
            params: Parameters::default(),
            backend: None,
        }
    }

    /// The memory directory.
    #[must_use]
    pub fn memory_dir(&self) -> &Path {
        self.core.store.dir()
    }

    /// The parameters.
    #[must_use]
    pub fn parameters(&self) -> &Parameters {
        &self.core.params
    }

    /// The `memory_search` tool (offered automatically through
    /// `list_tools` in modes `agent_control` and `both`; this is for
    /// toolkits built by hand).
    #[must_use]
    pub fn search_tool(&self) -> Arc<dyn Tool> {
        Arc::clone(&self.search)
    }

    /// Creates `MEMORY.md` when missing and loads it for the system prompt.
    /// Every reply does this when it starts; call it to see the index in a
    /// system prompt assembled before any reply.
    pub async fn refresh_index(&self) {
        self.core.refresh_index().await;
    }

    /// Runs the selection for `query` now and returns the hint text the
    /// agent would get, `None` when no memory is selected. Never fails:
    /// problems are logged and give `None`.
    pub async fn relevant_memories(&self, query: &str) -> Option<String> {
        self.core.retrieve(query, CancellationToken::new()).await
    }
}

/// Builds an [`AgenticMemoryMiddleware`].
#[derive(Debug)]
pub struct AgenticMemoryMiddlewareBuilder {
    workdir: PathBuf,
    memory_dir: String,
    model: Arc<dyn DynChatModel>,
    params: Parameters,
    backend: Option<Arc<dyn ExecBackend>>,
}

impl AgenticMemoryMiddlewareBuilder {
    /// The memory directory's name inside the working directory (default
    /// `Memory`); a relative path without `..`.
    #[must_use]
    pub fn memory_dir(mut self, name: impl Into<String>) -> Self {
        self.memory_dir = name.into();
        self
    }

    /// The parameters.
    #[must_use]
    pub fn parameters(mut self, params: Parameters) -> Self {
        self.params = params;
        self
    }

    /// Reads the memory files through `backend` (a workspace's sandbox,
    /// say); it should confine access to the workspace, as the workspace
    /// backends do. Default: the local file system confined to the memory
    /// directory (symbolic links leading out of it are refused).
    #[must_use]
    pub fn backend(mut self, backend: Arc<dyn ExecBackend>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The middleware.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`]: a relative working directory, a memory
    /// directory name that is empty, absolute or climbs out with `..`, or
    /// parameters out of range ([`Parameters::validate`]).
    pub fn build(self) -> Result<AgenticMemoryMiddleware> {
        self.params.validate()?;
        if !self.workdir.is_absolute() {
            return Err(Error::InvalidParameters(format!(
                "the working directory must be an absolute path, got {}",
                self.workdir.display()
            )));
        }
        let name = Path::new(&self.memory_dir);
        let plain = name
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if self.memory_dir.trim().is_empty() || !plain {
            return Err(Error::InvalidParameters(format!(
                "the memory directory must be a relative path inside the working directory, \
                 got `{}`",
                self.memory_dir
            )));
        }
        let dir = oxiscope_permission::normalise(&self.workdir.join(name));
        let backend = self.backend.unwrap_or_else(|| {
            Arc::new(LocalBackend::new().with_roots([dir.clone()])) as Arc<dyn ExecBackend>
        });
        let core = Arc::new(Core {
            store: MemoryStore::new(dir, backend, self.params.max_file_bytes),
            params: self.params,
            model: self.model,
            index: Mutex::new(None),
            scratch: Mutex::default(),
        });
        let search: Arc<dyn Tool> = Arc::new(MemorySearchTool::new(Arc::clone(&core)));
        Ok(AgenticMemoryMiddleware { core, search })
    }
}

impl Middleware for AgenticMemoryMiddleware {
    fn on_system_prompt(&self, prompt: String) -> String {
        let core = &self.core;
        let index = lock(&core.index)
            .clone()
            .unwrap_or_else(|| EMPTY_INDEX.to_owned());
        let dir = core.store.dir().display().to_string();
        let mut out = prompt;
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(
            &core
                .params
                .memory_instructions
                .replace("{memory_dir}", &dir),
        );
        if core.params.mode.offers_search() {
            out.push('\n');
            out.push_str(SEARCH_NUDGE);
            out.push('\n');
        }
        out.push_str("\n## MEMORY.md\n");
        out.push_str(&index);
        out
    }

    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        if self.core.params.mode.offers_search() {
            tools.add(Arc::clone(&self.search));
        }
    }

    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        let core = Arc::clone(&self.core);
        let query = if core.params.mode.retrieves() {
            query_of(&call.input)
        } else {
            String::new()
        };
        let start = async move {
            core.refresh_index().await;
            let generation = core.next_generation();
            let task = (!query.trim().is_empty()).then(|| {
                let worker = Arc::clone(&core);
                tokio::spawn(async move {
                    let hint = worker.retrieve(&query, CancellationToken::new()).await;
                    let mut s = lock(&worker.scratch);
                    if s.generation == generation {
                        s.ready = hint;
                    }
                })
            });
            let guard = match task {
                Some(mut handle) => {
                    let wait = core.params.retrieval_wait;
                    if !wait.is_zero() {
                        // Timing out leaves the task running.
                        let _ = tokio::time::timeout(wait, &mut handle).await;
                    }
                    Some(AbortOnDrop(handle))
                }
                None => None,
            };
            next.run(call).map(move |event| {
                let _keep_running = &guard;
                event
            })
        };
        Box::pin(futures_util::stream::once(start).flatten())
    }

    fn on_prepare_reasoning<'a>(
        &'a self,
        step: &'a mut ReasoningPrep<'_>,
    ) -> futures_util::future::BoxFuture<'a, ()> {
        // Recorded in the reply and streamed (the default hint).
        if let Some(hint) = lock(&self.core.scratch).ready.take() {
            step.hints.push(PrepHint::from(hint));
        }
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_index_reads_as_a_placeholder() {
        let p = Parameters::default();
        assert_eq!(render_index("", &p, Path::new("/m/MEMORY.md")), EMPTY_INDEX);
        assert_eq!(
            render_index(" \n\n", &p, Path::new("/m/MEMORY.md")),
            EMPTY_INDEX
        );
    }

    #[test]
    fn a_long_index_is_cut_with_a_note() {
        let p = Parameters {
            memory_max_lines: 2,
            ..Parameters::default()
        };
        let out = render_index("- a\n- b\n- c\n- d\n", &p, Path::new("/m/MEMORY.md"));
        assert!(out.starts_with("- a\n- b\n<<<TRUNCATED>>>"), "{out}");
        assert!(out.contains("2 more lines"), "{out}");
        assert!(out.contains("offset 2 of '/m/MEMORY.md'"), "{out}");
        let small = Parameters {
            memory_max_tokens: 2,
            ..Parameters::default()
        };
        let out = render_index("- aaa\n- bbb\n", &small, Path::new("/m/MEMORY.md"));
        assert!(out.starts_with("- aaa\n<<<TRUNCATED>>>"), "{out}");
    }
}
