//! Evaluation: a suite of tasks run `k` times each against a model,
//! graded, and reported (`oxiscope eval SUITE`).
//!
//! A [`Suite`] (a YAML or JSON file) holds tasks: a prompt, a workspace
//! fixture copied into each run's fresh temporary workspace, an agent
//! (system prompt, tools, model, permission mode) and [`Grader`]s —
//! exact text, a regular expression, a JSON Schema, a file of the
//! workspace, a command's exit status (run through the workspace's
//! backend, as the agent's tools are) and a model as judge with its
//! rubric. [`run_suite`] runs them at most `concurrency` at a time and
//! gives an [`EvalReport`]: pass rate, pass@k ([`pass_at_k`], the
//! unbiased estimator), tokens, cost (when the suite gives prices; model
//! cards carry none) and time per task, as a table, JSON and a static HTML
//! page.
//!
//! Every run is recorded on a tape ([`crate::tape`]) with its directory
//! replaced by [`RUN_DIR`]. A suite run from those tapes
//! ([`EvalOptions::replay`]) needs no model: the agent's model calls (and
//! the judges') are answered from the tapes, its tools run for real in a
//! fresh workspace, and a run that does anything other than what was
//! recorded fails with the first divergence — a regression test. A tape's
//! tool calls are as trusted as the model that made them: they run under
//! the suite's permission mode, so replay only tapes you would let a model
//! write.
//!
//! ```no_run
//! use oxiscope::eval::{EvalOptions, Suite, run_suite};
//!
//! # async fn demo() -> Result<(), oxiscope::eval::EvalError> {
//! let suite = Suite::load("evals/smoke.yaml")?;
//! let out = std::path::Path::new("eval-out");
//! let report = run_suite(&suite, &EvalOptions::from_config().with_out_dir(out)).await?;
//! report.write(out)?;
//! print!("{}", report.table());
//! // Later, offline: the same suite from the recorded tapes.
//! let again = run_suite(&suite, &EvalOptions::replay(out)).await?;
//! assert!(again.all_passed());
//! # Ok(())
//! # }
//! ```

mod grade;
mod html;
mod judge;
mod models;
mod report;
mod run;
mod suite;

use std::path::{Path, PathBuf};
use std::time::Instant;

use futures_util::StreamExt as _;

pub use grade::Grade;
pub use models::{ModelRequest, ModelRole, Models, model_from_spec};
pub use report::{EvalReport, TaskReport, Totals, pass_at_k};
pub use run::{RUN_DIR, RunResult};
pub use suite::{
    AgentConfig, CommandCheck, FileCheck, Grader, JudgeCheck, ModelSpec, Price, Suite, Task,
};

use crate::EnvModelError;

/// Why an evaluation could not run (a run's own failure is in its
/// [`RunResult`], not here).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The suite file is not a valid suite.
    #[error("invalid suite: {0}")]
    Suite(String),
    /// A file could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A model could not be set up.
    #[error("the model: {0}")]
    Model(#[source] EnvModelError),
    /// A suite run from tapes has none of a task.
    #[error("no tapes of task {task} in {}", dir.display())]
    NoTapes {
        /// The task's id.
        task: String,
        /// Where they were looked for.
        dir: PathBuf,
    },
}

/// Where the runs' model answers come from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source {
    /// Models, live; every run is recorded.
    Models(Models),
    /// The tapes under this directory (an earlier run's output directory).
    Tapes(PathBuf),
}

/// How [`run_suite`] runs.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    source: Source,
    out_dir: Option<PathBuf>,
    concurrency: Option<usize>,
}

impl EvalOptions {
    /// Runs against `models`.
    #[must_use]
    pub fn live(models: Models) -> Self {
        Self {
            source: Source::Models(models),
            out_dir: None,
            concurrency: None,
        }
    }

    /// Runs against the models the suite names ([`Models::from_config`]).
    #[must_use]
    pub fn from_config() -> Self {
        Self::live(Models::from_config())
    }

    /// Runs from the tapes an earlier run wrote into `dir`, offline.
    #[must_use]
    pub fn replay(dir: impl Into<PathBuf>) -> Self {
        Self {
            source: Source::Tapes(dir.into()),
            out_dir: None,
            concurrency: None,
        }
    }

    /// Writes each live run's tapes under `dir/tapes/` (the report's
    /// links point there).
    #[must_use]
    pub fn with_out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Runs at most `n` at a time (default: the suite's `concurrency`).
    #[must_use]
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = Some(n.max(1));
        self
    }
}

/// Runs every task of `suite` `k` times (from tapes: once per tape), at
/// most `concurrency` runs at a time, and reports.
///
/// # Errors
/// [`EvalError::NoTapes`] when run from tapes and a task has none. A
/// run's own failures (a model error, a timeout, a grader) are its
/// result's.
pub async fn run_suite(suite: &Suite, options: &EvalOptions) -> Result<EvalReport, EvalError> {
    let started = Instant::now();
    let mut jobs: Vec<(&Task, usize)> = Vec::new();
    for task in &suite.tasks {
        let runs = match &options.source {
            Source::Models(_) => suite.k,
            Source::Tapes(dir) => recorded_runs(dir, &task.id),
        };
        if runs == 0
            && let Source::Tapes(dir) = &options.source
        {
            return Err(EvalError::no_tapes(&task.id, dir));
        }
        jobs.extend((0..runs).map(|run| (task, run)));
    }
    let concurrency = options.concurrency.unwrap_or(suite.concurrency).max(1);
    let out_dir = options.out_dir.as_deref();
    let results: Vec<RunResult> = futures_util::stream::iter(jobs)
        .map(|(task, run)| run::run_one(suite, task, run, &options.source, out_dir))
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let mode = match options.source {
        Source::Models(_) => "live",
        Source::Tapes(_) => "replay",
    };
    Ok(EvalReport::new(
        suite,
        mode,
        results,
        started.elapsed().as_secs_f64(),
    ))
}

/// How many runs of `task` have tapes in `dir` (numbered from 0, without
/// gaps).
fn recorded_runs(dir: &Path, task: &str) -> usize {
    (0..)
        .take_while(|&n| run::tape_path(dir, task, n, "").is_file())
        .count()
}
