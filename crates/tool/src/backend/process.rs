//! Running a command in its own process group, with an output cap, a
//! timeout, cancellation and a kill of the whole group.

use std::io;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::ExecOutput;

/// How long to wait for the pipes to close after the group was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
struct Capped {
    data: Vec<u8>,
    cap: usize,
    total: u64,
}

impl Capped {
    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.data.len());
        self.data.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// Kills the process group when dropped while still armed, so a dropped
/// `exec` future leaves no processes behind.
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    /// Kills the group now and disarms the guard.
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

enum Ending {
    Exited(Option<i32>),
    TimedOut,
    Cancelled,
}

/// Gives the child of `command` a read-only file holding `data` at
/// descriptor `child_fd` (3 or more), and nothing else of this process:
/// the file exists in memory only, and no other child sees it (it is
/// inherited through a mapping made in the child alone, not by clearing
/// close-on-exec here, which would race with other spawns).
///
/// What a launcher reads its options from (`bwrap --args 3`), so they are
/// not on its command line, where every process of the machine, and of
/// the sandbox, could read them.
///
/// # Errors
///
/// The in-memory file could not be made or written; `child_fd` is below 3.
pub fn pass_data_fd(
    command: &mut tokio::process::Command,
    child_fd: i32,
    data: &[u8],
) -> io::Result<()> {
    use command_fds::{CommandFdExt as _, FdMapping};
    use std::io::{Seek as _, Write as _};

    if child_fd < 3 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {child_fd} is one of stdin, stdout or stderr"),
        ));
    }
    let fd =
        nix::sys::memfd::memfd_create(c"oxiscope-launch", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
            .map_err(io::Error::from)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(data)?;
    file.rewind()?;
    command
        .fd_mappings(vec![FdMapping {
            parent_fd: file.into(),
            child_fd,
        }])
        .map(drop)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
}

/// Runs a prepared `command` in a new process group, keeping the first
/// `max_output` bytes of its stdout and stderr (interleaved as they arrive).
///
/// This is what [`LocalBackend`](super::LocalBackend) runs `bash -c` with;
/// another backend can hand it any command (a sandbox launcher wrapping
/// the shell, for example). It sets the command's stdin to null, pipes
/// stdout and stderr, puts the child in a new process group
/// (`process_group(0)`) and sets `kill_on_drop`, overriding what the caller
/// set for these; program, arguments, working directory and environment
/// are the caller's.
///
/// When the command exits, `timeout` passes or `cancel` is cancelled, the
/// whole process group is killed with `SIGKILL`, so background children do
/// not outlive the call. A timeout or a cancellation is not an error: the
/// output so far comes back with `timed_out` or `cancelled` set and no exit
/// code. Processes that leave the group (`setsid`) are out of its reach; a
/// launcher should take its children down with it (for `bwrap`,
/// `--die-with-parent`).
///
/// Must be called inside a Tokio runtime: the pipes are read by spawned
/// tasks.
///
/// # Errors
///
/// The command could not be started (the message names the program and
/// the working directory), or waiting for it failed.
///
/// # Cancel safety
///
/// Dropping the future kills the process group without reporting; cancel
/// `cancel` instead to kill it and get the partial output.
pub async fn run_process(
    mut command: tokio::process::Command,
    timeout: Duration,
    max_output: usize,
    cancel: CancellationToken,
) -> io::Result<ExecOutput> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| {
        let prepared = command.as_std();
        let place = prepared
            .get_current_dir()
            .map(|dir| format!(" in {}", dir.display()))
            .unwrap_or_default();
        io::Error::new(
            e.kind(),
            format!(
                "cannot start {}{place}: {e}",
                prepared.get_program().to_string_lossy()
            ),
        )
    })?;
    let mut group = GroupGuard(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let sink = Arc::new(Mutex::new(Capped {
        cap: max_output,
        ..Capped::default()
    }));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(spawn_reader(out, Arc::clone(&sink)));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(spawn_reader(err, Arc::clone(&sink)));
    }

    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status?.code()),
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
        () = cancel.cancelled() => Ending::Cancelled,
    };
    // Kill the group in every case: after a normal exit this ends
    // background children that would otherwise be orphaned.
    group.kill();
    if !matches!(ending, Ending::Exited(_)) {
        let _ = child.wait().await;
    }
    for reader in readers {
        let abort = reader.abort_handle();
        if tokio::time::timeout(DRAIN_GRACE, reader).await.is_err() {
            abort.abort();
        }
    }
    let (output, total) = match sink.lock() {
        Ok(mut s) => (std::mem::take(&mut s.data), s.total),
        Err(poisoned) => {
            let mut s = poisoned.into_inner();
            (std::mem::take(&mut s.data), s.total)
        }
    };
    let (exit_code, timed_out, cancelled) = match ending {
        Ending::Exited(code) => (code, false, false),
        Ending::TimedOut => (None, true, false),
        Ending::Cancelled => (None, false, true),
    };
    Ok(ExecOutput {
        exit_code,
        output,
        total_bytes: total,
        timed_out,
        cancelled,
    })
}

fn spawn_reader<R>(mut pipe: R, sink: Arc<Mutex<Capped>>) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut s) = sink.lock() {
                        s.push(&buf[..n]);
                    }
                }
            }
        }
    })
}
