//! The `oxiscope` command line.

mod commands;
mod logging;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // The Landlock sandbox's launcher is this binary, started so.
    oxiscope_workspace::landlock_launcher();
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
