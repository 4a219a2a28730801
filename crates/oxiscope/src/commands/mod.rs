//! Subcommands of the `oxiscope` binary, one module each.

mod permission;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Oxiscope: an agent framework wire-compatible with AgentScope 2.0.
#[derive(Debug, Parser)]
#[command(name = "oxiscope", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with permission rules.
    #[command(subcommand)]
    Permission(permission::PermissionCommand),
}

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Permission(command) => permission::run(command),
    }
}
