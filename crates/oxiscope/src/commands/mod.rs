//! Subcommands of the `oxiscope` binary, one module each.

mod chat;
mod completions;
mod config;
mod eval;
mod keys;
mod mcp;
mod permission;
mod replay;
mod sandbox_tier;
mod serve;
mod sessions;
mod store;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Oxiscope: AI agents at the terminal and as a service.
///
/// `oxiscope chat` talks with an agent that reads, edits and runs things in
/// the working directory, asking before it acts; `oxiscope chat -p` answers
/// one prompt for scripts; `oxiscope serve` runs the agent service
/// (AgentScope 2.0's REST + SSE API).
#[derive(Debug, Parser)]
#[command(name = "oxiscope", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with permission rules.
    #[command(subcommand)]
    Permission(permission::PermissionCommand),
    /// Chat with an agent in the terminal (or answer one prompt with -p).
    Chat(Box<chat::ChatArgs>),
    /// Where the configuration and data live.
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// The MCP servers `oxiscope chat` starts (config file `[mcp_servers]`).
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// Sessions saved by `oxiscope chat --session`.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// Run the agent service (AgentScope's REST + SSE API).
    Serve(Box<serve::ServeArgs>),
    /// API keys of the agent service.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Replay a recorded tape offline, or compare two (`--diff`).
    Replay(replay::ReplayArgs),
    /// Run an evaluation suite against a model, or from its tapes offline.
    Eval(Box<eval::EvalArgs>),
    /// Print a shell completion script, e.g. `oxiscope completions bash >
    /// ~/.local/share/bash-completion/completions/oxiscope`.
    Completions(completions::CompletionsArgs),
}

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Permission(command) => permission::run(command),
        Command::Chat(args) => chat::run(&args),
        Command::Config(command) => config::run(&command),
        Command::Mcp(command) => mcp::run(&command),
        Command::Sessions(command) => sessions::run(&command),
        Command::Serve(args) => serve::run(&args),
        Command::Keys(command) => keys::run(&command),
        Command::Completions(args) => Ok(completions::run(&args)),
        Command::Replay(args) => replay::run(&args),
        Command::Eval(args) => eval::run(&args),
    }
}
