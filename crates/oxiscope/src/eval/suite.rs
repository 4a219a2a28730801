//! [`Suite`]: an evaluation suite as its file says it, parsed once and
//! checked before anything runs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use oxiscope_permission::PermissionMode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::EvalError;

/// A suite of tasks, each run `k` times against a model and graded.
///
/// Read from YAML (`.yaml`, `.yml`, and any other name) or JSON (`.json`)
/// by [`Suite::load`]; relative fixture paths are relative to the file.
///
/// ```
/// let suite = oxiscope::eval::Suite::from_yaml(r#"
/// k: 3
/// agent: {system_prompt: "Answer with one word."}
/// tasks:
///   - id: capital
///     prompt: What is the capital of France?
///     graders: [{exact: Paris}, {regex: "(?i)^paris$"}]
/// "#, ".")?;
/// assert_eq!((suite.k, suite.tasks.len()), (3, 1));
/// # Ok::<(), oxiscope::eval::EvalError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Suite {
    /// The suite's name (default: the file's stem).
    #[serde(default)]
    pub name: String,
    /// Runs of each task.
    #[serde(default = "one")]
    pub k: usize,
    /// The `k`s of the pass@k figures reported (default: 1 and `k`); none
    /// may exceed `k`.
    #[serde(default)]
    pub pass_at: Vec<usize>,
    /// Runs at the same time, at most.
    #[serde(default = "four")]
    pub concurrency: usize,
    /// The agent every task starts from (a task's own settings win).
    #[serde(default)]
    pub agent: AgentConfig,
    /// The model of the judge graders.
    #[serde(default)]
    pub judge: Option<ModelSpec>,
    /// The tasks.
    pub tasks: Vec<Task>,
    /// Where relative fixture paths start (the suite file's directory).
    #[serde(skip)]
    pub base_dir: PathBuf,
}

fn one() -> usize {
    1
}

fn four() -> usize {
    4
}

/// One task: a prompt, a workspace to start from, an agent and graders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Task {
    /// The task's id: letters, digits, `-`, `_` and `.`, not first.
    pub id: String,
    /// What the user asks.
    pub prompt: String,
    /// A directory copied into each run's fresh workspace (default: an
    /// empty one).
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// This task's agent settings, over the suite's.
    #[serde(default)]
    pub agent: AgentConfig,
    /// A JSON Schema the reply's structured output must follow (the agent
    /// is asked for one).
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// Seconds a run may take before it is interrupted and fails.
    #[serde(default = "run_timeout")]
    pub timeout_secs: u64,
    /// The graders; a run passes when every one passes.
    pub graders: Vec<Grader>,
}

fn run_timeout() -> u64 {
    300
}

/// How an agent is set up; unset fields take the suite's (then the
/// defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The agent's name (default `Agent`).
    #[serde(default)]
    pub name: Option<String>,
    /// Its system prompt (the workspace's instructions follow it).
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// The workspace's built-in tools it gets, by name (default: all).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Its model (default: the one the environment names, as `oxiscope
    /// chat` picks it).
    #[serde(default)]
    pub model: Option<ModelSpec>,
    /// Its permission mode (default `dont_ask`: nobody answers questions,
    /// so what would ask is denied).
    #[serde(default)]
    pub permission_mode: Option<PermissionMode>,
    /// Reasoning-acting rounds at most.
    #[serde(default)]
    pub max_iters: Option<u32>,
}

impl AgentConfig {
    /// `self` with its unset fields taken from `base`.
    #[must_use]
    pub fn over(&self, base: &Self) -> Self {
        Self {
            name: self.name.clone().or_else(|| base.name.clone()),
            system_prompt: self
                .system_prompt
                .clone()
                .or_else(|| base.system_prompt.clone()),
            tools: self.tools.clone().or_else(|| base.tools.clone()),
            model: self.model.clone().or_else(|| base.model.clone()),
            permission_mode: self.permission_mode.or(base.permission_mode),
            max_iters: self.max_iters.or(base.max_iters),
        }
    }
}

/// A model: a provider of the registry and a model name; the key comes
/// from the provider's variables (or `api_key_env`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ModelSpec {
    /// The provider (`openai`, `anthropic`, ...; default: the first whose
    /// key is set).
    #[serde(default)]
    pub provider: Option<String>,
    /// The model's name (default: the provider's).
    #[serde(default)]
    pub model: Option<String>,
    /// The endpoint (default: the provider's).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The variable holding the key (default: the provider's).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Prices, for the cost column (model cards carry none).
    #[serde(default)]
    pub price: Option<Price>,
}

/// What a model's tokens cost, per million.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million completion tokens.
    pub output: f64,
}

/// One check of a run; a run passes when all of its task's pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Grader {
    /// The final text, trimmed, equals this.
    Exact(String),
    /// The final text matches this regular expression (Rust syntax).
    Regex(String),
    /// The structured output, else the final text parsed as JSON (a code
    /// fence around it is taken off), follows this JSON Schema.
    JsonSchema(Value),
    /// A file of the workspace, after the run.
    File(FileCheck),
    /// A command run in the workspace after the run, through its backend.
    Command(CommandCheck),
    /// A model reads the task, the answer and the rubric, and decides.
    Judge(JudgeCheck),
}

/// What a file grader checks; every field given must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FileCheck {
    /// The path, relative to the workspace.
    pub path: String,
    /// Whether the file exists (default true).
    #[serde(default = "yes")]
    pub exists: bool,
    /// Text the file contains.
    #[serde(default)]
    pub contains: Option<String>,
    /// The whole file (trailing whitespace aside).
    #[serde(default)]
    pub equals: Option<String>,
}

fn yes() -> bool {
    true
}

/// A command and the exit status it must end with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandCheck {
    /// The command line (`bash -c`), run in the workspace.
    pub run: String,
    /// The exit status it must end with.
    #[serde(default)]
    pub exit: i32,
    /// Seconds it may take.
    #[serde(default = "command_timeout")]
    pub timeout_secs: u64,
}

fn command_timeout() -> u64 {
    60
}

/// A rubric a model judges the answer by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JudgeCheck {
    /// What a passing answer does.
    pub rubric: String,
}

impl Grader {
    /// A short label: its kind and what it checks.
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            Self::Exact(text) => format!("exact {text:?}"),
            Self::Regex(re) => format!("regex /{re}/"),
            Self::JsonSchema(_) => "json_schema".to_owned(),
            Self::File(f) => format!("file {}", f.path),
            Self::Command(c) => format!("command `{}`", c.run),
            Self::Judge(_) => "judge".to_owned(),
        }
    }
}

impl Suite {
    /// Reads a suite file: JSON when its name ends in `.json`, else YAML.
    ///
    /// # Errors
    /// [`EvalError::Io`] when it cannot be read, [`EvalError::Suite`] when
    /// it is not a valid suite.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
            what: format!("reading the suite {}", path.display()),
            source,
        })?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        let mut suite = if path.extension().is_some_and(|e| e == "json") {
            Self::from_json(&text, base)?
        } else {
            Self::from_yaml(&text, base)?
        };
        if suite.name.is_empty() {
            suite.name = path
                .file_stem()
                .map_or_else(|| "suite".to_owned(), |s| s.to_string_lossy().into_owned());
        }
        Ok(suite)
    }

    /// Parses a YAML suite whose relative paths start at `base_dir`.
    ///
    /// # Errors
    /// [`EvalError::Suite`]: not YAML, not a suite, or not valid.
    pub fn from_yaml(text: &str, base_dir: impl Into<PathBuf>) -> Result<Self, EvalError> {
        // A grader is a one-key map (`- exact: Paris`), as in JSON.
        let suite: Self = serde_yaml_ng::with::singleton_map_recursive::deserialize(
            serde_yaml_ng::Deserializer::from_str(text),
        )
        .map_err(|e| EvalError::Suite(e.to_string()))?;
        suite.checked(base_dir.into())
    }

    /// Parses a JSON suite whose relative paths start at `base_dir`.
    ///
    /// # Errors
    /// [`EvalError::Suite`]: not JSON, not a suite, or not valid.
    pub fn from_json(text: &str, base_dir: impl Into<PathBuf>) -> Result<Self, EvalError> {
        let suite: Self =
            serde_json::from_str(text).map_err(|e| EvalError::Suite(e.to_string()))?;
        suite.checked(base_dir.into())
    }

    /// The `k`s of the pass@k figures.
    #[must_use]
    pub fn pass_at(&self) -> Vec<usize> {
        let mut ks = if self.pass_at.is_empty() {
            vec![1, self.k]
        } else {
            self.pass_at.clone()
        };
        ks.sort_unstable();
        ks.dedup();
        ks
    }

    /// The task's fixture directory, if it has one.
    #[must_use]
    pub fn fixture(&self, task: &Task) -> Option<PathBuf> {
        task.workspace.as_ref().map(|dir| self.base_dir.join(dir))
    }

    fn checked(mut self, base_dir: PathBuf) -> Result<Self, EvalError> {
        self.base_dir = base_dir;
        let bad = |why: String| Err(EvalError::Suite(why));
        if self.k == 0 {
            return bad("k must be at least 1".to_owned());
        }
        if self.concurrency == 0 {
            return bad("concurrency must be at least 1".to_owned());
        }
        if let Some(k) = self.pass_at.iter().find(|&&k| k == 0 || k > self.k) {
            return bad(format!("pass_at {k} is not between 1 and k = {}", self.k));
        }
        if self.tasks.is_empty() {
            return bad("the suite has no tasks".to_owned());
        }
        let mut ids = HashSet::new();
        for task in &self.tasks {
            if !valid_id(&task.id) {
                return bad(format!(
                    "task id {:?}: use letters, digits, '-', '_' and '.' (not first)",
                    task.id
                ));
            }
            if !ids.insert(task.id.as_str()) {
                return bad(format!("task id {:?} is used twice", task.id));
            }
            if task.graders.is_empty() {
                return bad(format!("task {} has no graders", task.id));
            }
            for grader in &task.graders {
                check_grader(grader)
                    .map_err(|why| EvalError::Suite(format!("task {}: {why}", task.id)))?;
            }
            if let Some(schema) = &task.output_schema {
                jsonschema::validator_for(schema).map_err(|e| {
                    EvalError::Suite(format!("task {}: output_schema: {e}", task.id))
                })?;
            }
        }
        Ok(self)
    }
}

/// A task id that is a safe file name.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why `grader` cannot work, found before anything runs.
fn check_grader(grader: &Grader) -> Result<(), String> {
    match grader {
        Grader::Regex(re) => regex::Regex::new(re)
            .map(drop)
            .map_err(|e| format!("regex {re:?}: {e}")),
        Grader::JsonSchema(schema) => jsonschema::validator_for(schema)
            .map(drop)
            .map_err(|e| format!("json_schema: {e}")),
        Grader::File(f) => oxiscope_workspace::safe_relative_path(&f.path, 64)
            .map(drop)
            .map_err(|e| format!("file {:?}: {e}", f.path)),
        Grader::Exact(_) | Grader::Command(_) | Grader::Judge(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Suite, EvalError> {
        Suite::from_yaml(yaml, ".")
    }

    #[test]
    fn a_suite_reads_its_graders_and_defaults() {
        let suite = parse(
            "tasks:\n- id: t\n  prompt: p\n  graders:\n  - exact: x\n  - file: {path: a.txt, contains: hi}\n  - command: {run: 'test -f a.txt'}\n  - judge: {rubric: good}\n",
        )
        .unwrap();
        assert_eq!(
            (suite.k, suite.concurrency, suite.pass_at()),
            (1, 4, vec![1])
        );
        let graders = &suite.tasks[0].graders;
        assert_eq!(graders[0], Grader::Exact("x".to_owned()));
        assert!(
            matches!(&graders[1], Grader::File(f) if f.exists && f.contains.as_deref() == Some("hi"))
        );
        assert!(matches!(&graders[2], Grader::Command(c) if c.exit == 0 && c.timeout_secs == 60));
    }

    #[test]
    fn invalid_suites_are_typed_errors_that_say_why() {
        let cases = [
            (
                "k: 0\ntasks: [{id: t, prompt: p, graders: [{exact: x}]}]",
                "k must be",
            ),
            (
                "k: 2\npass_at: [3]\ntasks: [{id: t, prompt: p, graders: [{exact: x}]}]",
                "pass_at 3",
            ),
            ("tasks: []", "no tasks"),
            (
                "tasks: [{id: ../x, prompt: p, graders: [{exact: x}]}]",
                "task id",
            ),
            (
                "tasks: [{id: t, prompt: p, graders: [{exact: x}]}, {id: t, prompt: q, graders: [{exact: x}]}]",
                "twice",
            ),
            ("tasks: [{id: t, prompt: p, graders: []}]", "no graders"),
            (
                "tasks: [{id: t, prompt: p, graders: [{regex: '('}]}]",
                "regex",
            ),
            (
                "tasks: [{id: t, prompt: p, graders: [{file: {path: /etc/passwd}}]}]",
                "absolute",
            ),
            (
                "tasks: [{id: t, prompt: p, graders: [{file: {path: ../x}}]}]",
                "file",
            ),
            (
                "tasks: [{id: t, prompt: p, graders: [{json_schema: {type: 7}}]}]",
                "json_schema",
            ),
            ("tasks: [{id: t, prompt: p, grader: []}]", "unknown field"),
            (
                "tasks: [{id: t, prompt: p, graders: [{exactly: x}]}]",
                "unknown variant",
            ),
            (": : :", ""),
        ];
        for (yaml, why) in cases {
            let error = parse(yaml).unwrap_err();
            assert!(
                matches!(&error, EvalError::Suite(m) if m.contains(why)),
                "{yaml}: {error}"
            );
        }
    }

    #[test]
    fn a_json_suite_reads_the_same_and_task_settings_win() {
        let suite = Suite::from_json(
            r#"{"k": 2, "agent": {"name": "A", "max_iters": 3},
                "tasks": [{"id": "t", "prompt": "p", "agent": {"name": "B"}, "graders": [{"regex": "x"}]}]}"#,
            "/suites",
        )
        .unwrap();
        let agent = suite.tasks[0].agent.over(&suite.agent);
        assert_eq!(
            (agent.name.as_deref(), agent.max_iters),
            (Some("B"), Some(3))
        );
        assert_eq!(suite.pass_at(), vec![1, 2]);
        assert_eq!(suite.fixture(&suite.tasks[0]), None);
    }
}
