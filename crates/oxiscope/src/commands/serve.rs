//! `oxiscope serve`: the agent service with the embedded defaults (SQLite
//! in the data directory, the in-process message bus).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use oxiscope_server::{AppState, AuthMode, Sealer, ServerConfig};
use oxiscope_storage::{InMemoryBus, SqliteStorage};

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8000")]
    addr: SocketAddr,
    /// Where the database, the key file and the agents' workspaces live
    /// (default: the user data directory's `oxiscope/service`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Development only: trust the X-User-ID header instead of API keys.
    #[arg(long)]
    dev_auth: bool,
    /// Allow browser calls from this origin (repeatable; `*` for any).
    /// CORS is off without it.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
}

/// The service's data directory: `--data-dir`, else the user data dir.
pub(crate) fn data_dir(given: Option<&PathBuf>) -> PathBuf {
    given.cloned().unwrap_or_else(|| {
        dirs::data_dir()
            .unwrap_or_else(|| PathBuf::from("."))
            .join("oxiscope")
            .join("service")
    })
}

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let dir = data_dir(args.data_dir.as_ref());
    let storage = SqliteStorage::open(&dir)
        .await
        .with_context(|| format!("opening the database in {}", dir.display()))?;
    let sealer = Sealer::load_or_create(&dir).context("loading the credential key")?;
    let auth = if args.dev_auth {
        eprintln!(
            "WARNING: --dev-auth is on: every request may claim any user with the X-User-ID \
             header. Never expose this server to others."
        );
        AuthMode::DevHeader
    } else {
        AuthMode::ApiKeys
    };
    let config = ServerConfig::new(&dir)
        .with_auth(auth)
        .with_cors_origins(args.cors_origins.clone());
    let state = AppState::new(
        Arc::new(storage),
        Arc::new(InMemoryBus::new()),
        sealer,
        config,
    );
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?;
    let addr = listener.local_addr()?;
    eprintln!(
        "oxiscope serve: listening on http://{addr} (data in {})",
        dir.display()
    );
    if !args.dev_auth {
        eprintln!(
            "oxiscope serve: requests need `Authorization: Bearer <key>` (oxiscope keys create --user NAME)"
        );
    }
    oxiscope_server::serve(listener, state, shutdown_signal()).await?;
    eprintln!("oxiscope serve: stopped");
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    eprintln!("oxiscope serve: shutting down (interrupting running replies)");
}
