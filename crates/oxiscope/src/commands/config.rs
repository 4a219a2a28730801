//! `oxiscope config`: where the configuration lives.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use clap::Subcommand;

use super::chat::settings;

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print the path of the config file (`config.toml`; it may not exist yet).
    Path,
    /// Print the data dir, where sessions and the prompt history are kept.
    DataDir,
}

pub(crate) fn run(command: &ConfigCommand) -> anyhow::Result<ExitCode> {
    match command {
        ConfigCommand::Path => println!("{}", settings::config_path()?.display()),
        ConfigCommand::DataDir => println!("{}", settings::data_dir()?.display()),
    }
    Ok(ExitCode::SUCCESS)
}
