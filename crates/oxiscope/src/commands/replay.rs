//! `oxiscope replay TAPE`: a recorded run played back offline, two tapes
//! compared (`--diff OTHER`), or the tape's inputs run again against the
//! model the environment names (`--live`).
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use oxiscope::tape::{Tape, TapeRecorder, TapeReplayer, diff, diff_live, live_agent, replay_agent};

/// Options of `oxiscope replay`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ReplayArgs {
    /// The tape (JSON lines, as `oxiscope::tape::TapeRecorder` writes).
    #[arg(value_name = "TAPE")]
    tape: PathBuf,
    /// Compare with this tape step by step instead of replaying.
    #[arg(long, value_name = "OTHER", conflicts_with = "live")]
    diff: Option<PathBuf>,
    /// Run the tape's inputs again against the model the environment names
    /// (as `oxiscope chat` picks it; tools answer from the tape) and
    /// compare the answers and tool calls with the tape.
    #[arg(long)]
    live: bool,
}

/// Replays the tape with an agent rebuilt from it (no model is called, no
/// tool runs) and reports whether the run did exactly what was recorded;
/// exits 1 at the first divergence, printing both sides.
pub(crate) fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let load = |path: &PathBuf| {
        Tape::load(path).with_context(|| format!("cannot read the tape {}", path.display()))
    };
    let tape = load(&args.tape)?;
    if let Some(other) = &args.diff {
        return Ok(match diff(&tape, &load(other)?) {
            None => {
                println!("the tapes agree");
                ExitCode::SUCCESS
            }
            Some(divergence) => {
                println!("{divergence}");
                ExitCode::from(1)
            }
        });
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if args.live {
        let model = oxiscope::chat_model_from_env()?;
        let recorder = TapeRecorder::new();
        let agent = live_agent(&tape, model, &recorder)?;
        return Ok(match rt.block_on(diff_live(&tape, &agent, &recorder)) {
            None => {
                println!("the live run matches the tape");
                ExitCode::SUCCESS
            }
            Some(divergence) => {
                println!("{divergence}");
                ExitCode::from(1)
            }
        });
    }
    let replayer = TapeReplayer::new(tape.clone());
    let agent = replay_agent(&tape, &replayer)?;
    let report = rt.block_on(replayer.run(&agent));
    println!(
        "replayed {} model calls and {} events",
        report.model_calls, report.events
    );
    Ok(match report.divergence {
        None => {
            println!("the run matches the tape");
            ExitCode::SUCCESS
        }
        Some(divergence) => {
            println!("{divergence}");
            ExitCode::from(1)
        }
    })
}
