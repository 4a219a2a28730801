//! `oxiscope completions`: a completion script for a shell.

use std::process::ExitCode;

use clap::{Args, CommandFactory as _};
use clap_complete::Shell;

use super::Cli;

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

/// Prints the script on stdout.
pub(crate) fn run(args: &CompletionsArgs) -> ExitCode {
    let mut command = Cli::command();
    clap_complete::generate(args.shell, &mut command, "oxiscope", &mut std::io::stdout());
    ExitCode::SUCCESS
}
