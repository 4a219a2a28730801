//! `oxiscope eval SUITE`: an evaluation suite run against a model (or from
//! an earlier run's tapes, offline) and reported as a table, JSON and HTML.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use oxiscope::eval::{EvalOptions, ModelRequest, ModelRole, Models, Suite, run_suite};

/// Options of `oxiscope eval`.
#[derive(Debug, Clone, Args)]
pub(crate) struct EvalArgs {
    /// The suite: YAML, or JSON when its name ends in `.json`.
    #[arg(value_name = "SUITE")]
    suite: PathBuf,
    /// Where the tapes and the reports (`report.json`, `report.html`) go.
    #[arg(long, short, value_name = "DIR", default_value = "eval-out")]
    out: PathBuf,
    /// Run from the tapes an earlier run wrote into DIR, without a model.
    #[arg(long, value_name = "DIR")]
    replay: Option<PathBuf>,
    /// Runs of each task (overrides the suite's `k`).
    #[arg(short, long)]
    k: Option<usize>,
    /// Runs at the same time, at most (overrides the suite's).
    #[arg(long, short = 'j')]
    concurrency: Option<usize>,
    /// Print the JSON report instead of the table.
    #[arg(long)]
    json: bool,
    /// Exit 1 when the suite's pass rate is below this share (0 to 1;
    /// default: 1 from tapes, where every run must pass, else 0).
    #[arg(long, value_name = "SHARE")]
    min_pass_rate: Option<f64>,
}

/// Runs the suite and prints its report; exits 1 below the pass rate
/// asked for.
pub(crate) fn run(args: &EvalArgs) -> anyhow::Result<ExitCode> {
    let mut suite = Suite::load(&args.suite)
        .with_context(|| format!("cannot load the suite {}", args.suite.display()))?;
    if let Some(k) = args.k {
        anyhow::ensure!(k > 0, "-k must be at least 1");
        suite.k = k;
        suite.pass_at.retain(|&p| p <= k);
    }
    let mut options = match &args.replay {
        Some(dir) => EvalOptions::replay(dir),
        None => {
            let models = Models::from_config();
            check_models(&suite, &models)?;
            EvalOptions::live(models).with_out_dir(&args.out)
        }
    };
    if let Some(n) = args.concurrency {
        options = options.with_concurrency(n);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = rt.block_on(run_suite(&suite, &options))?;
    report.write(&args.out)?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.table());
        println!(
            "\nreports: {} and {}",
            args.out.join("report.json").display(),
            args.out.join("report.html").display()
        );
    }
    let floor = args
        .min_pass_rate
        .unwrap_or(if args.replay.is_some() { 1.0 } else { 0.0 });
    Ok(if report.total.pass_rate + 1e-9 < floor {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Sets up every model the suite names before anything runs, so a missing
/// key is one clear error rather than a failed run each.
fn check_models(suite: &Suite, models: &Models) -> anyhow::Result<()> {
    for task in &suite.tasks {
        let agent = task.agent.over(&suite.agent);
        let request = ModelRequest::new(ModelRole::Agent, &task.id, 0, agent.model.as_ref());
        models
            .model(&request)
            .with_context(|| format!("task {}", task.id))?;
        let judged = task
            .graders
            .iter()
            .any(|g| matches!(g, oxiscope::eval::Grader::Judge(_)));
        if judged {
            let request = ModelRequest::new(ModelRole::Judge, &task.id, 0, suite.judge.as_ref());
            models.model(&request).context("the judge")?;
        }
    }
    Ok(())
}
