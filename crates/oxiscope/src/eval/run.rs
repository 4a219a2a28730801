//! One run of a task: a fresh workspace copied from the fixture, an agent
//! equipped from it, the prompt, the graders, the tapes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use oxiscope_agent::pipeline::CancellationToken;
use oxiscope_agent::{Agent, AgentState, ReActConfig, ReplyItem};
use oxiscope_message::{AgentEvent, Msg};
use oxiscope_model::DynChatModel;
use oxiscope_permission::{PermissionContext, PermissionMode};
use oxiscope_tool::{BASIC_GROUP, Toolkit};
use oxiscope_workspace::{Equipment, LocalWorkspace, Workspace};
use serde::{Deserialize, Serialize};

use super::grade::{Answer, Grade, grade};
use super::judge::{JudgeSource, judge};
use super::models::{ModelRequest, ModelRole};
use super::suite::{Grader, Suite, Task};
use super::{EvalError, Source};
use crate::tape::{Tape, TapeRecorder, TapeReplayer, offline_model};

/// What stands for a run's own directory on its tapes.
pub const RUN_DIR: &str = "{run_dir}";

/// How one run went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunResult {
    /// The task's id.
    pub task: String,
    /// The run's number, from 0.
    pub run: usize,
    /// Whether every grader passed (and, from a tape, the run did what
    /// was recorded).
    pub passed: bool,
    /// Each grader's verdict.
    pub grades: Vec<Grade>,
    /// The reply's final text.
    pub answer: String,
    /// What went wrong, when the run did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// From a tape: the first step where the run parted from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<String>,
    /// Prompt tokens of the agent's model calls.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// The agent's model calls.
    pub model_calls: usize,
    /// What the tokens cost, when the model's prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The run's tape (relative to the output directory when recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tape: Option<String>,
}

/// Where run `run` of `task` keeps its tape (`suffix`: `""`, or
/// `.judge<N>` for the call of judge grader `N`).
pub(super) fn tape_path(dir: &Path, task: &str, run: usize, suffix: &str) -> PathBuf {
    dir.join("tapes")
        .join(task)
        .join(format!("{run}{suffix}.jsonl"))
}

/// Runs run `run` of `task`; every failure is the run's (its `error`).
pub(super) async fn run_one(
    suite: &Suite,
    task: &Task,
    run: usize,
    source: &Source,
    out_dir: Option<&Path>,
) -> RunResult {
    let started = Instant::now();
    let mut result = RunResult {
        task: task.id.clone(),
        run,
        passed: false,
        grades: Vec::new(),
        answer: String::new(),
        error: None,
        divergence: None,
        input_tokens: 0,
        output_tokens: 0,
        model_calls: 0,
        cost: None,
        seconds: 0.0,
        tape: None,
    };
    if let Err(error) = attempt(suite, task, run, source, out_dir, &mut result).await {
        result.error = Some(error);
    }
    result.passed = result.error.is_none()
        && result.divergence.is_none()
        && !result.grades.is_empty()
        && result.grades.iter().all(|g| g.passed);
    result.seconds = started.elapsed().as_secs_f64();
    result
}

async fn attempt(
    suite: &Suite,
    task: &Task,
    run: usize,
    source: &Source,
    out_dir: Option<&Path>,
    result: &mut RunResult,
) -> Result<(), String> {
    let config = task.agent.over(&suite.agent);
    let dir = tempfile::Builder::new()
        .prefix("oxiscope-eval-")
        .tempdir()
        .map_err(|e| format!("cannot make the run's directory: {e}"))?;
    let workdir = dir.path().join("ws");
    if let Some(fixture) = suite.fixture(task) {
        let target = workdir.clone();
        tokio::task::spawn_blocking(move || copy_dir(&fixture, &target))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot copy the fixture: {e}"))?;
    }
    let workspace = LocalWorkspace::builder("eval", &workdir)
        .state_dir(dir.path().join("state"))
        .home(None)
        .build()
        .map_err(|e| e.to_string())?;
    workspace.initialize().await.map_err(|e| e.to_string())?;
    let workspace: Arc<dyn Workspace> = Arc::new(workspace);
    let prompt = config.system_prompt.clone().unwrap_or_default();
    let (mut equipment, _mcp) = Equipment::of(Arc::clone(&workspace), "eval", "run", &prompt, None)
        .await
        .map_err(|e| e.to_string())?;
    if let Some(names) = &config.tools {
        let mut toolkit = Toolkit::new();
        for name in names {
            let tool = equipment
                .toolkit
                .tool(name)
                .ok_or_else(|| format!("the workspace has no tool {name:?}"))?;
            toolkit
                .register_arc(tool, BASIC_GROUP)
                .map_err(|e| e.to_string())?;
        }
        equipment.toolkit = toolkit;
    }
    let run_dir = dir.path().display().to_string();
    let tapes = TapesOf {
        task: &task.id,
        run,
    };
    let (model, recorder, replayer): (Arc<dyn DynChatModel>, _, _) = match source {
        Source::Models(factory) => {
            let request = ModelRequest::new(ModelRole::Agent, &task.id, run, config.model.as_ref());
            let model = factory.model(&request).map_err(|e| e.to_string())?;
            (
                model,
                Some(TapeRecorder::new().with_alias(&run_dir, RUN_DIR)),
                None,
            )
        }
        Source::Tapes(tapes_dir) => {
            let tape = tapes.load(tapes_dir, "")?;
            result.tape = Some(tapes.path(tapes_dir, "").display().to_string());
            let replayer = TapeReplayer::new(tape.clone())
                .with_alias(&run_dir, RUN_DIR)
                .with_live_tools();
            (offline_model(&tape), None, Some(replayer))
        }
    };
    let state = AgentState {
        permission_context: PermissionContext::new(
            config.permission_mode.unwrap_or(PermissionMode::DontAsk),
        ),
        ..AgentState::default()
    };
    let mut builder = Agent::builder(
        config.name.clone().unwrap_or_else(|| "Agent".to_owned()),
        model,
    )
    .state(state);
    if let Some(recorder) = &recorder {
        builder = builder.middleware(recorder.clone());
    }
    if let Some(replayer) = &replayer {
        builder = builder.middleware(replayer.clone());
    }
    if let Some(max_iters) = config.max_iters {
        builder = builder.react_config(ReActConfig {
            max_iters,
            ..ReActConfig::default()
        });
    }
    let agent = equipment
        .share()
        .apply(builder)
        .build()
        .map_err(|e| e.to_string())?;
    let outcome = reply(&agent, task, result).await;
    if let Some(recorder) = &recorder
        && let Some(out_dir) = out_dir
    {
        let path = tapes.path(out_dir, "");
        save(&recorder.tape(), &path)?;
        result.tape = Some(tapes.relative("").display().to_string());
    }
    if let Some(replayer) = &replayer {
        result.divergence = replayer.report().divergence.map(|d| d.to_string());
    }
    let answer = outcome?;
    result.answer.clone_from(&answer.text);
    let price = config.model.as_ref().and_then(|m| m.price);
    result.cost = price.map(|p| {
        (result.input_tokens as f64 * p.input + result.output_tokens as f64 * p.output) / 1e6
    });
    for (n, grader) in task.graders.iter().enumerate() {
        let grade = match grader {
            Grader::Judge(check) => {
                let suffix = format!(".judge{n}");
                let recorded;
                let source = match source {
                    Source::Models(factory) => {
                        let request = ModelRequest::new(
                            ModelRole::Judge,
                            &task.id,
                            run,
                            suite.judge.as_ref(),
                        );
                        let model = factory
                            .model(&request)
                            .map_err(|e| format!("the judge's model: {e}"))?;
                        JudgeSource::Live(model)
                    }
                    Source::Tapes(dir) => {
                        recorded = tapes.load(dir, &suffix)?;
                        JudgeSource::Tape(&recorded)
                    }
                };
                let judged = judge(grader, &check.rubric, &task.prompt, &answer, source).await;
                if let (Some(tape), Some(out_dir)) = (&judged.tape, out_dir) {
                    save(tape, &tapes.path(out_dir, &suffix))?;
                }
                if result.divergence.is_none() {
                    result.divergence = judged.divergence.map(|d| format!("judge {n}: {d}"));
                }
                judged.grade
            }
            _ => grade(grader, &answer, &*workspace.backend(), workspace.workdir()).await,
        };
        result.grades.push(grade);
    }
    workspace.close().await;
    drop(dir);
    Ok(())
}

/// The reply to the task's prompt: its answer, with the usage counted
/// into `result`; a timeout interrupts it.
async fn reply(agent: &Agent, task: &Task, result: &mut RunResult) -> Result<Answer, String> {
    let msg = Msg::user("user", task.prompt.clone()).map_err(|e| e.to_string())?;
    let cancel = CancellationToken::new();
    let stream = agent.reply_stream_with(msg, task.output_schema.clone(), cancel.clone());
    let mut items = std::pin::pin!(stream.with_message());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(task.timeout_secs);
    let mut error = None;
    let mut last = None;
    loop {
        let item = match tokio::time::timeout_at(deadline, items.next()).await {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(_) => {
                cancel.cancel();
                error = Some(format!("timed out after {} s", task.timeout_secs));
                // The stream ends promptly once cancelled.
                while items.next().await.is_some() {}
                break;
            }
        };
        match item {
            ReplyItem::Event(AgentEvent::ModelCallEnd(e)) => {
                result.model_calls += 1;
                result.input_tokens += e.input_tokens;
                result.output_tokens += e.output_tokens;
            }
            ReplyItem::Event(AgentEvent::ReplyEnd(e)) => {
                if let Some(info) = e.error {
                    error.get_or_insert(format!("the reply failed: {}", info.message));
                }
            }
            ReplyItem::Event(AgentEvent::RequireUserConfirm(_)) => {
                error.get_or_insert(
                    "the reply asked for a confirmation (nobody answers in an evaluation: \
                     use permission_mode dont_ask or bypass)"
                        .to_owned(),
                );
            }
            ReplyItem::Event(AgentEvent::RequireExternalExecution(_)) => {
                error.get_or_insert("the reply waits for an external execution".to_owned());
            }
            ReplyItem::Message(msg) => last = Some(msg),
            ReplyItem::Event(_) => {}
        }
    }
    if let Some(error) = error {
        return Err(error);
    }
    let msg = last.ok_or_else(|| "the reply gave no message".to_owned())?;
    Ok(Answer {
        text: msg.text(""),
        structured: msg.structured_output.map(|m| serde_json::Value::Object(*m)),
    })
}

/// The tapes of one run.
struct TapesOf<'a> {
    task: &'a str,
    run: usize,
}

impl TapesOf<'_> {
    fn path(&self, dir: &Path, suffix: &str) -> PathBuf {
        tape_path(dir, self.task, self.run, suffix)
    }

    fn relative(&self, suffix: &str) -> PathBuf {
        tape_path(Path::new(""), self.task, self.run, suffix)
    }

    fn load(&self, dir: &Path, suffix: &str) -> Result<Tape, String> {
        let path = self.path(dir, suffix);
        Tape::load(&path).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn save(tape: &Tape, path: &Path) -> Result<(), String> {
    let write = || -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, tape.to_jsonl())
    };
    write().map_err(|e| format!("cannot write the tape {}: {e}", path.display()))
}

/// Copies the directory tree `from` into `to` (created); symbolic links
/// are copied as links.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

impl EvalError {
    /// The error of a task with no tapes in `dir`.
    pub(super) fn no_tapes(task: &str, dir: &Path) -> Self {
        Self::NoTapes {
            task: task.to_owned(),
            dir: dir.to_path_buf(),
        }
    }
}
