//! [`TestRedis`]: a throwaway Redis server for tests.
//!
//! `redis-server` (from `PATH`) serves a free loopback port with nothing
//! persisted (`--save "" --appendonly no`) and its working directory in a
//! temporary directory; dropping the handle kills it and removes the
//! directory. Tests that share one server keep apart with
//! [`TestRedis::unique_prefix`] (a key prefix per test) or a database
//! index in the URL.

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to answer `PING`.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// Ports tried before giving up (another process may take a free port
/// between the check and the server's bind).
const ATTEMPTS: usize = 5;

/// A running Redis server in a temporary directory.
#[derive(Debug)]
pub struct TestRedis {
    port: u16,
    child: Child,
    dir: tempfile::TempDir,
}

impl TestRedis {
    /// Starts a server of its own, or `None` after a loud [`crate::skip`]
    /// when `redis-server` is not installed (in CI that fails the test).
    ///
    /// # Panics
    /// When the binary exists but no server comes up: that is a broken
    /// setup, not a reason to skip.
    #[must_use]
    #[allow(clippy::panic)]
    pub fn start() -> Option<Self> {
        let mut last_error = String::new();
        for _ in 0..ATTEMPTS {
            match Self::launch() {
                Ok(server) => return Some(server),
                Err(Launch::Missing) => {
                    crate::skip(
                        "redis-server is not installed (apt-get install redis-server); \
                         the Redis message bus tests need it",
                    );
                    return None;
                }
                Err(Launch::Failed(why)) => last_error = why,
            }
        }
        panic!("redis-server did not come up: {last_error}");
    }

    /// The server's port on `127.0.0.1`.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>` (database 0).
    #[must_use]
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The URL of database `db` (0 to 15) of the server.
    #[must_use]
    pub fn url_of_db(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// A key prefix no other caller in this process gets, for a test that
    /// shares the server.
    #[must_use]
    pub fn unique_prefix() -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        format!("test{}-{n}:", std::process::id())
    }

    /// Kills the server now (to test what clients do when it goes away).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port (empty: nothing is
    /// persisted), after [`TestRedis::stop`], to test reconnecting.
    ///
    /// # Panics
    /// When it does not come up.
    #[allow(clippy::panic)]
    pub fn restart(&mut self) {
        self.stop();
        match spawn(self.port, &self.dir) {
            Ok(child) => self.child = child,
            Err(Launch::Missing) => panic!("redis-server went missing"),
            Err(Launch::Failed(why)) => panic!("redis-server did not restart: {why}"),
        }
        if let Err(Launch::Failed(why)) = self.wait_ready() {
            panic!("redis-server did not restart: {why}");
        }
    }

    fn launch() -> Result<Self, Launch> {
        let port = free_port().map_err(|e| Launch::Failed(format!("no free port: {e}")))?;
        let dir = tempfile::Builder::new()
            .prefix("oxiscope-redis-")
            .tempdir()
            .map_err(|e| Launch::Failed(format!("temporary directory: {e}")))?;
        let child = spawn(port, &dir)?;
        let mut server = Self { port, child, dir };
        server.wait_ready()?;
        Ok(server)
    }

    /// Waits until the server answers `PING`; stops it when it does not.
    fn wait_ready(&mut self) -> Result<(), Launch> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if ping(self.port) {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let log =
                    std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default();
                return Err(Launch::Failed(format!("exited with {status}: {log}")));
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(Launch::Failed("no answer to PING in time".to_owned()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Spawns `redis-server` on `port` with its files in `dir`.
fn spawn(port: u16, dir: &tempfile::TempDir) -> Result<Child, Launch> {
    let log = dir.path().join("redis.log");
    let spawned = Command::new("redis-server")
        .arg("--port")
        .arg(port.to_string())
        .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--daemonize", "no", "--databases", "16"])
        .arg("--dir")
        .arg(dir.path())
        .arg("--logfile")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(child) => Ok(child),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Launch::Missing),
        Err(e) => Err(Launch::Failed(format!("spawning redis-server: {e}"))),
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

enum Launch {
    Missing,
    Failed(String),
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Whether a server on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut answer = [0_u8; 7];
    stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
}
