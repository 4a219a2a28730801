//! Per-session tool state, embedded in the agent state: the read cache and
//! active groups ([`ToolContext`]) and the task list ([`TasksContext`]).
//!
//! The shared [`Toolkit`](crate::Toolkit) holds none of this; each call gets
//! a [`SessionState`] handle instead, so one toolkit serves many sessions.

use std::sync::Arc;

use oxiscope_message::stamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

/// The `tool_context` of the agent state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolContext {
    /// How many files the read cache keeps at most.
    #[serde(default = "default_max_files")]
    pub max_cache_files: u64,
    /// How many kibibytes of file lines the read cache keeps at most.
    #[serde(default = "default_max_bytes")]
    pub max_cache_bytes: f64,
    /// What the `Read` tool read, oldest first.
    #[serde(default)]
    pub read_file_cache: Vec<ReadCacheEntry>,
    /// The non-basic tool groups switched on.
    #[serde(default)]
    pub activated_groups: Vec<String>,
}

fn default_max_files() -> u64 {
    100
}

fn default_max_bytes() -> f64 {
    25_000.0
}

impl Default for ToolContext {
    fn default() -> Self {
        Self {
            max_cache_files: default_max_files(),
            max_cache_bytes: default_max_bytes(),
            read_file_cache: Vec::new(),
            activated_groups: Vec::new(),
        }
    }
}

/// One file in the read cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadCacheEntry {
    /// The file's lines as read, each with its line ending.
    pub lines: Vec<String>,
    /// The file's modification time when read, in seconds since the epoch.
    pub updated_at: f64,
    /// The size of `lines` in kibibytes.
    pub bytes: f64,
    /// The absolute path.
    pub file_path: String,
}

impl ReadCacheEntry {
    /// An entry for `lines` of `file_path` with modification time `mtime`.
    #[must_use]
    pub fn new(file_path: impl Into<String>, lines: Vec<String>, mtime: f64) -> Self {
        let size: usize = lines.iter().map(String::len).sum();
        #[allow(clippy::cast_precision_loss)]
        let bytes = size as f64 / 1024.0;
        Self {
            lines,
            updated_at: mtime,
            bytes,
            file_path: file_path.into(),
        }
    }
}

impl ToolContext {
    /// The cache entry of `path`, if it was read.
    #[must_use]
    pub fn cached(&self, path: &str) -> Option<&ReadCacheEntry> {
        self.read_file_cache.iter().find(|e| e.file_path == path)
    }

    /// Records a read: replaces the file's entry, moves it to the newest
    /// position and evicts the oldest entries beyond the file and size limits
    /// (the newest entry always stays).
    pub fn record_read(&mut self, entry: ReadCacheEntry) {
        self.read_file_cache
            .retain(|e| e.file_path != entry.file_path);
        self.read_file_cache.push(entry);
        let max_files = usize::try_from(self.max_cache_files.max(1)).unwrap_or(usize::MAX);
        while self.read_file_cache.len() > max_files {
            self.read_file_cache.remove(0);
        }
        while self.read_file_cache.len() > 1
            && self.read_file_cache.iter().map(|e| e.bytes).sum::<f64>() > self.max_cache_bytes
        {
            self.read_file_cache.remove(0);
        }
    }

    /// Whether `group` is switched on.
    #[must_use]
    pub fn is_active(&self, group: &str) -> bool {
        group == crate::toolkit::BASIC_GROUP || self.activated_groups.iter().any(|g| g == group)
    }
}

/// The `tasks_context` of the agent state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TasksContext {
    /// Every task, in creation order.
    #[serde(default)]
    pub tasks: Vec<Task>,
}

/// The state of a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Not started.
    #[default]
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

impl TaskState {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// One task of the agent's task list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// A short title.
    pub subject: String,
    /// What has to be done.
    pub description: String,
    /// Free-form data.
    pub metadata: Map<String, Value>,
    /// When the task was created.
    #[serde(default = "stamp::now")]
    pub created_at: String,
    /// Where the task stands.
    #[serde(default)]
    pub state: TaskState,
    /// The task id.
    #[serde(default = "stamp::new_id")]
    pub id: String,
    /// Who works on it.
    #[serde(default)]
    pub owner: Option<String>,
    /// Ids of the tasks that wait for this one.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Ids of the tasks this one waits for.
    #[serde(default)]
    pub blocked_by: Vec<String>,
}

/// Shared, mutable access to one session's tool state.
///
/// Cloning shares the state. The agent keeps the values in its state and
/// hands a handle to every tool call of the session.
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    tool: Arc<Mutex<ToolContext>>,
    tasks: Arc<Mutex<TasksContext>>,
}

impl SessionState {
    /// A handle over the given contexts.
    #[must_use]
    pub fn new(tool: ToolContext, tasks: TasksContext) -> Self {
        Self {
            tool: Arc::new(Mutex::new(tool)),
            tasks: Arc::new(Mutex::new(tasks)),
        }
    }

    /// The read cache and active groups.
    #[must_use]
    pub fn tool_context(&self) -> &Arc<Mutex<ToolContext>> {
        &self.tool
    }

    /// The task list.
    #[must_use]
    pub fn tasks_context(&self) -> &Arc<Mutex<TasksContext>> {
        &self.tasks
    }

    /// Copies of both contexts, to write back into the agent state.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits for the locks.
    pub async fn snapshot(&self) -> (ToolContext, TasksContext) {
        let tool = self.tool.lock().await.clone();
        let tasks = self.tasks.lock().await.clone();
        (tool, tasks)
    }
}
