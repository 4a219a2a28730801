//! Where the service keeps its records, shared by `oxiscope serve` and
//! `oxiscope keys`: the data directory, the database a URL names (or
//! SQLite in the data directory), and how to say which one it is.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use oxiscope_storage::{PostgresStorage, SqliteStorage, Storage, is_postgres_url};

/// The service's data directory: `--data-dir`, else the user data dir.
pub(crate) fn data_dir(given: Option<&PathBuf>) -> PathBuf {
    given.cloned().unwrap_or_else(|| {
        dirs::data_dir()
            .unwrap_or_else(|| PathBuf::from("."))
            .join("oxiscope")
            .join("service")
    })
}

/// The environment variable `--database-url` defaults to.
const DATABASE_URL_ENV: &str = "OXISCOPE_DATABASE_URL";
/// `--database-url`, else `OXISCOPE_DATABASE_URL`, if either is set.
pub(crate) fn database_url(given: Option<&str>) -> Option<String> {
    let url = given
        .map(str::to_owned)
        .or_else(|| std::env::var(DATABASE_URL_ENV).ok());
    url.filter(|u| !u.trim().is_empty())
}

/// Where [`open_storage`] keeps the records, for people: the database
/// (a PostgreSQL URL without its password) or the SQLite directory.
pub(crate) fn describe_store(url: Option<&str>, data_dir: &Path) -> String {
    match database_url(url).as_deref() {
        Some(url) if is_postgres_url(url) => {
            format!("the PostgreSQL database {}", without_password(url))
        }
        Some(url) => match url.strip_prefix("sqlite://") {
            Some(dir) if !dir.is_empty() => format!("the SQLite database in {dir}"),
            _ => format!("the SQLite database in {}", data_dir.display()),
        },
        None => format!("the SQLite database in {}", data_dir.display()),
    }
}

/// `scheme://user:password@host/...` as `scheme://user@host/...`.
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// The record store `url` (else `OXISCOPE_DATABASE_URL`) names: PostgreSQL,
/// or SQLite in `sqlite://DIR` or, by default, in `data_dir`. Shared with
/// `oxiscope keys create`.
pub(crate) async fn open_storage(
    url: Option<&str>,
    data_dir: &Path,
) -> anyhow::Result<Arc<dyn Storage>> {
    let dir = match database_url(url).as_deref() {
        // The URL may carry a password: errors name the scheme only.
        Some(url) if is_postgres_url(url) => {
            let storage = PostgresStorage::connect(url)
                .await
                .context("connecting to the PostgreSQL database (--database-url)")?;
            return Ok(Arc::new(storage));
        }
        Some(url) => match url.strip_prefix("sqlite://") {
            Some("") => data_dir.to_path_buf(),
            Some(dir) => PathBuf::from(dir),
            None => anyhow::bail!(
                "--database-url: expected postgres://, postgresql:// or sqlite://DIR, got {}://...",
                url.split_once("://").map_or(url, |(scheme, _)| scheme)
            ),
        },
        None => data_dir.to_path_buf(),
    };
    let storage = SqliteStorage::open(&dir)
        .await
        .with_context(|| format!("opening the database in {}", dir.display()))?;
    Ok(Arc::new(storage))
}

/// The data directory, absolute (relative paths would break the
/// workspace's link checks once the process changes directory), created
/// private (`0700`, its `workspaces` too).
pub(crate) fn prepare_data_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = std::fs::canonicalize(dir).with_context(|| format!("resolving {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // Private, even to the sandbox user: a sandbox started by root
        // reaches its workspace through a mount made for it, never by
        // passing through these directories.
        let mode = 0o700;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("making {} private", dir.display()))?;
        let workspaces = dir.join("workspaces");
        std::fs::create_dir_all(&workspaces)
            .with_context(|| format!("creating {}", workspaces.display()))?;
        std::fs::set_permissions(&workspaces, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("making {} private", workspaces.display()))?;
    }
    Ok(dir)
}
