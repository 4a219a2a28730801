//! `oxiscope keys create|list|revoke`: the service's API keys. Only a
//! key's SHA-256 hash is stored; the key is printed once, when created.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use oxiscope_storage::{ApiKeyRecord, Storage, now};

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Create an API key for a user and print it (shown only once).
    Create(CreateArgs),
    /// List the API keys (an id, the user, the label, when made; never
    /// the key).
    List(ListArgs),
    /// Revoke API keys: one by the id `keys list` shows, or all of a user.
    Revoke(RevokeArgs),
}

/// Which database the keys live in: the service's.
#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    /// The service's data directory (as given to `oxiscope serve`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The service's database (as given to `oxiscope serve`:
    /// `postgres://...` or `sqlite://DIR`; default `OXISCOPE_DATABASE_URL`,
    /// else SQLite in the data directory).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The user the key authenticates as.
    #[arg(long)]
    user: String,
    /// A note for operators.
    #[arg(long, default_value = "")]
    label: String,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only this user's keys.
    #[arg(long)]
    user: Option<String>,
    /// JSON lines instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["id", "user"])))]
pub(crate) struct RevokeArgs {
    /// The key's id as `keys list` shows it (or a longer prefix of it).
    id: Option<String>,
    /// Revoke every key of this user instead.
    #[arg(long)]
    user: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
}

/// The characters of a key's hash that `keys list` shows as its id.
const ID_LEN: usize = 12;
/// The shortest prefix `keys revoke` takes.
const MIN_PREFIX: usize = 8;

pub(crate) fn run(command: &KeysCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        match command {
            KeysCommand::Create(args) => create(args).await,
            KeysCommand::List(args) => list(args).await,
            KeysCommand::Revoke(args) => revoke(args).await,
        }
    })
}

async fn open(store: &StoreArgs) -> anyhow::Result<(Arc<dyn Storage>, String)> {
    let dir = super::store::data_dir(store.data_dir.as_ref());
    let url = store.database_url.as_deref();
    let storage = super::store::open_storage(url, &dir).await?;
    Ok((storage, super::store::describe_store(url, &dir)))
}

async fn create(args: &CreateArgs) -> anyhow::Result<ExitCode> {
    let user = args.user.trim();
    anyhow::ensure!(!user.is_empty(), "--user must not be empty");
    let (storage, place) = open(&args.store).await?;
    let (key, hash) = oxiscope_server::generate_api_key();
    storage
        .create_api_key(&ApiKeyRecord {
            hash: hash.clone(),
            user_id: user.to_owned(),
            label: args.label.clone(),
            created_at: now(),
        })
        .await?;
    println!("{key}");
    eprintln!(
        "API key {} created for user {user:?} in {place}; it is not shown again.",
        &hash[..ID_LEN.min(hash.len())]
    );
    Ok(ExitCode::SUCCESS)
}

async fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let (storage, place) = open(&args.store).await?;
    let keys: Vec<ApiKeyRecord> = storage
        .list_api_keys()
        .await?
        .into_iter()
        .filter(|k| args.user.as_deref().is_none_or(|u| k.user_id == u.trim()))
        .collect();
    if args.json {
        for k in &keys {
            let line = serde_json::json!({
                "id": id_of(k), "user": k.user_id, "label": k.label, "created_at": k.created_at
            });
            println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let count = match keys.len() {
        1 => "1 API key".to_owned(),
        n => format!("{n} API keys"),
    };
    eprintln!("{count} in {place}");
    if keys.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let user_width = keys
        .iter()
        .map(|k| k.user_id.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    println!(
        "{:<ID_LEN$}  {:<user_width$}  {:<26}  LABEL",
        "ID", "USER", "CREATED"
    );
    for k in &keys {
        println!(
            "{:<ID_LEN$}  {:<user_width$}  {:<26}  {}",
            id_of(k),
            printable(&k.user_id),
            printable(&k.created_at),
            printable(&k.label)
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn revoke(args: &RevokeArgs) -> anyhow::Result<ExitCode> {
    let (storage, place) = open(&args.store).await?;
    let keys = storage.list_api_keys().await?;
    let chosen: Vec<&ApiKeyRecord> = match (&args.id, &args.user) {
        (Some(id), _) => {
            let id = id.trim().to_ascii_lowercase();
            anyhow::ensure!(
                id.len() >= MIN_PREFIX,
                "a key id has at least {MIN_PREFIX} characters (`oxiscope keys list` shows them)"
            );
            let found: Vec<&ApiKeyRecord> =
                keys.iter().filter(|k| k.hash.starts_with(&id)).collect();
            match found.len() {
                0 => anyhow::bail!("no API key {id} in {place}"),
                1 => found,
                n => anyhow::bail!("{n} API keys start with {id}: give more of the id"),
            }
        }
        (None, Some(user)) => {
            let user = user.trim();
            let found: Vec<&ApiKeyRecord> = keys.iter().filter(|k| k.user_id == user).collect();
            anyhow::ensure!(!found.is_empty(), "user {user:?} has no API key in {place}");
            found
        }
        (None, None) => anyhow::bail!("name a key id or --user"),
    };
    for k in chosen {
        if storage.delete_api_key(&k.hash).await? {
            eprintln!(
                "revoked API key {} of user {:?} in {place}",
                id_of(k),
                k.user_id
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn id_of(k: &ApiKeyRecord) -> &str {
    &k.hash[..ID_LEN.min(k.hash.len())]
}

/// `text` without control characters, for a terminal.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
