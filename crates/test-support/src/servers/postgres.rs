//! [`TestPostgres`]: a throwaway PostgreSQL server for tests.
//!
//! `initdb` writes a cluster into a temporary directory (trust
//! authentication, superuser `oxiscope`), `postgres` serves it on a free
//! loopback port with its unix socket in the same directory, and dropping
//! the handle stops it (immediate shutdown) and removes the directory. A
//! watchdog process does the same when the test process ends without
//! dropping it (a shared server in a `static`, a crash).
//!
//! PostgreSQL refuses to run as root: when the tests run as root, the
//! directory is handed to the `postgres` system user and the server
//! binaries run as that user (through `setpriv`).
//!
//! The binaries are looked up with `pg_config --bindir`, then on `PATH`,
//! then in `/usr/lib/postgresql/<version>/bin` (Debian's layout, highest
//! version first).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The variable naming the `bin` directory of a PostgreSQL installation
/// that has the `pgvector` extension.
pub const PGVECTOR_BIN_ENV: &str = "OXISCOPE_TEST_PGVECTOR_BIN";

/// The superuser `initdb` creates.
pub const USER: &str = "oxiscope";

/// How long a server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A running PostgreSQL server in a temporary directory.
#[derive(Debug)]
pub struct TestPostgres {
    port: u16,
    bin: PathBuf,
    postmaster: Child,
    watchdog: Option<Child>,
    dir: tempfile::TempDir,
}

impl TestPostgres {
    /// Starts a server of its own, or `None` after a loud [`crate::skip`]
    /// when the PostgreSQL binaries are missing (in CI that fails the
    /// test).
    ///
    /// # Panics
    /// When the binaries exist but the server does not come up: that is a
    /// broken setup, not a reason to skip.
    #[must_use]
    pub fn start() -> Option<Self> {
        let server = Self::launch_if_installed();
        if server.is_none() {
            skip_missing();
        }
        server
    }

    /// One server shared by every test of the test binary (started by the
    /// first caller; the watchdog stops it when the process ends), or
    /// `None` after a loud [`crate::skip`], as [`TestPostgres::start`].
    ///
    /// Tests sharing it should each work in a database of their own:
    /// [`TestPostgres::fresh_database`].
    ///
    /// # Panics
    /// As [`TestPostgres::start`].
    #[must_use]
    pub fn shared() -> Option<&'static Self> {
        static SHARED: OnceLock<Option<TestPostgres>> = OnceLock::new();
        let server = SHARED.get_or_init(Self::launch_if_installed).as_ref();
        if server.is_none() {
            skip_missing();
        }
        server
    }

    /// A server of its own that has the `pgvector` extension, from the
    /// PostgreSQL installation whose `bin` directory
    /// `OXISCOPE_TEST_PGVECTOR_BIN` names (`.ci/run` unpacks one), or
    /// `None` after a loud [`crate::skip`] when that variable is unset or
    /// names no such directory.
    ///
    /// # Panics
    /// As [`TestPostgres::start`].
    #[allow(clippy::panic)]
    #[must_use]
    pub fn start_pgvector() -> Option<Self> {
        let bin = std::env::var_os(PGVECTOR_BIN_ENV)
            .map(PathBuf::from)
            .filter(|dir| complete(dir));
        let Some(bin) = bin else {
            crate::skip(&format!(
                "a PostgreSQL with the pgvector extension: set {PGVECTOR_BIN_ENV} to its \
                 `bin` directory (.ci/run unpacks one from PyPI's `pgserver` wheel)"
            ));
            return None;
        };
        match Self::launch(bin) {
            Ok(server) => Some(server),
            Err(why) => panic!("test PostgreSQL with pgvector did not start: {why}"),
        }
    }

    /// The server's port on `127.0.0.1`.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// What the server wrote to its log so far (for a failing test's
    /// message).
    #[must_use]
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The URL of the server's `postgres` database, as user [`USER`].
    #[must_use]
    pub fn url(&self) -> String {
        self.database_url("postgres")
    }

    /// The URL of database `name` on this server.
    #[must_use]
    pub fn database_url(&self, name: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates an empty database with a name no other call of this process
    /// used, and returns its URL.
    ///
    /// # Panics
    /// When `createdb` fails (the server is gone, the disk is full).
    #[allow(clippy::panic)]
    #[must_use]
    pub fn fresh_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let out = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .arg(&name)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(out) if out.status.success() => self.database_url(&name),
            Ok(out) => panic!(
                "createdb {name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => panic!("createdb {name}: {e}"),
        }
    }

    /// `None` when the binaries are missing.
    #[allow(clippy::panic)]
    fn launch_if_installed() -> Option<Self> {
        let bin = bin_dir()?;
        match Self::launch(bin) {
            Ok(server) => Some(server),
            Err(why) => panic!("test PostgreSQL did not start: {why}"),
        }
    }

    fn launch(bin: PathBuf) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("oxiscope-pg-")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        let owner = server_user()?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", dir.path().display()))?;
        }
        let data = dir.path().join("data");
        let out = as_server_user(owner, &bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", USER, "-A", "trust", "-E", "UTF8", "--locale=C"])
            .args(["--no-sync", "--no-instructions"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        // A port picked free can be taken before the server binds it: try a few.
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port().map_err(|e| format!("free port: {e}"))?;
            match start_postmaster(owner, &bin, dir.path(), port) {
                Ok(postmaster) => {
                    let watchdog = watchdog(postmaster.id(), dir.path()).ok();
                    return Ok(Self {
                        port,
                        bin,
                        postmaster,
                        watchdog,
                        dir,
                    });
                }
                Err(why) => last = why,
            }
        }
        Err(last)
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
        stop(&mut self.postmaster);
    }
}

fn skip_missing() {
    crate::skip(
        "PostgreSQL server binaries (initdb, postgres, createdb) not found: \
         install the `postgresql` package",
    );
}

/// Immediate shutdown (SIGQUIT: the server stops its backends and cleans
/// up its shared memory), then reaps it.
fn stop(postmaster: &mut Child) {
    let _ = Command::new("kill")
        .args(["-QUIT", &postmaster.id().to_string()])
        .stderr(Stdio::null())
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if matches!(postmaster.try_wait(), Ok(Some(_)) | Err(_)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = postmaster.kill();
    let _ = postmaster.wait();
}

/// Runs `postgres` on `port` and waits until it accepts connections.
fn start_postmaster(
    owner: Option<(u32, u32)>,
    bin: &Path,
    dir: &Path,
    port: u16,
) -> Result<Child, String> {
    let data = dir.join("data");
    let log = std::fs::File::create(dir.join("server.log")).map_err(|e| format!("log: {e}"))?;
    if let Some((uid, gid)) = owner {
        let _ = std::os::unix::fs::chown(dir.join("server.log"), Some(uid), Some(gid));
    }
    let mut child = as_server_user(owner, &bin.join("postgres"))
        .arg("-D")
        .arg(&data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
        .arg(dir)
        // Throwaway data: durability buys nothing here.
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=300"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("postgres: {e}"))?;
    let pid_file = data.join("postmaster.pid");
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            return Err(format!("postgres exited ({status}): {}", log.trim()));
        }
        // The eighth line of postmaster.pid is the server's status.
        let ready = std::fs::read_to_string(&pid_file)
            .is_ok_and(|text| text.lines().nth(7).is_some_and(|s| s.trim() == "ready"));
        if ready {
            return Ok(child);
        }
        if Instant::now() > deadline {
            stop(&mut child);
            return Err(format!("postgres not ready after {READY_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A process that stops the server and removes its directory once the
/// test process has gone (statics are never dropped; crashes skip `Drop`).
fn watchdog(postmaster: u32, dir: &Path) -> std::io::Result<Child> {
    let script = "while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; \
                  kill -QUIT \"$2\" 2>/dev/null; \
                  while kill -0 \"$2\" 2>/dev/null; do sleep 0.2; done; \
                  rm -rf \"$3\"";
    Command::new("sh")
        .args(["-c", script, "oxiscope-pg-watchdog"])
        .arg(std::process::id().to_string())
        .arg(postmaster.to_string())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

/// A command for `program`, run as the `postgres` user when `owner` is set.
fn as_server_user(owner: Option<(u32, u32)>, program: &Path) -> Command {
    match owner {
        Some((uid, gid)) => {
            let mut cmd = Command::new("setpriv");
            cmd.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg("--")
                .arg(program);
            cmd
        }
        None => Command::new(program),
    }
}

/// `Some((uid, gid))` of the `postgres` system user when running as root
/// (PostgreSQL refuses root), `None` otherwise.
fn server_user() -> Result<Option<(u32, u32)>, String> {
    if rustix::process::geteuid().as_raw() != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            match fields.as_slice() {
                ["postgres", _, uid, gid, ..] => Some((uid.parse().ok()?, gid.parse().ok()?)),
                _ => None,
            }
        })
        .map(Some)
        .ok_or_else(|| "running as root and there is no `postgres` user to run the server".into())
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Whether `dir` holds `initdb`, `postgres` and `createdb`.
fn complete(dir: &Path) -> bool {
    ["initdb", "postgres", "createdb"]
        .iter()
        .all(|b| dir.join(b).is_file())
}

/// The directory holding `initdb`, `postgres` and `createdb`.
fn bin_dir() -> Option<PathBuf> {
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| {
            dirs.filter_map(|d| d.ok().map(|d| d.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    debian.sort_by_key(|p| {
        p.parent()
            .and_then(Path::file_name)
            .and_then(|v| v.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    debian.reverse();
    from_pg_config
        .into_iter()
        .chain(on_path)
        .chain(debian)
        .find(|dir| complete(dir))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_server_starts_serves_fresh_databases_and_is_gone_after_drop() {
        let Some(server) = TestPostgres::start() else {
            return;
        };
        let port = server.port();
        let dir = server.dir.path().to_path_buf();
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
        assert_eq!(
            server.url(),
            format!("postgres://oxiscope@127.0.0.1:{port}/postgres")
        );
        let (one, two) = (server.fresh_database(), server.fresh_database());
        assert_ne!(one, two);
        assert!(one.starts_with(&format!("postgres://oxiscope@127.0.0.1:{port}/test_")));
        assert!(server.log().contains("ready to accept connections"));
        drop(server);
        assert!(!dir.exists());
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
