//! `oxiscope keys create`: an API key for the service. Only its SHA-256
//! hash is stored; the key is printed once.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use oxiscope_storage::{ApiKeyRecord, now};

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Create an API key for a user and print it (shown only once).
    Create(CreateArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The user the key authenticates as.
    #[arg(long)]
    user: String,
    /// A note for operators.
    #[arg(long, default_value = "")]
    label: String,
    /// The service's data directory (as given to `oxiscope serve`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The service's database (as given to `oxiscope serve`:
    /// `postgres://...` or `sqlite://DIR`; default `OXISCOPE_DATABASE_URL`,
    /// else SQLite in the data directory).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

pub(crate) fn run(command: &KeysCommand) -> anyhow::Result<ExitCode> {
    let KeysCommand::Create(args) = command;
    anyhow::ensure!(!args.user.trim().is_empty(), "--user must not be empty");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let key = runtime.block_on(async {
        let dir = super::serve::data_dir(args.data_dir.as_ref());
        let storage = super::serve::open_storage(args.database_url.as_deref(), &dir).await?;
        let (key, hash) = oxiscope_server::generate_api_key();
        storage
            .create_api_key(&ApiKeyRecord {
                hash,
                user_id: args.user.trim().to_owned(),
                label: args.label.clone(),
                created_at: now(),
            })
            .await?;
        anyhow::Ok(key)
    })?;
    println!("{key}");
    eprintln!(
        "API key created for user {:?}; it is not shown again.",
        args.user.trim()
    );
    Ok(ExitCode::SUCCESS)
}
