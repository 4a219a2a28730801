//! Running a shell command in its own process group.

use std::io;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{ExecOutput, ExecRequest};

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

/// Runs `request` with `bash -c` in a new process group; on exit, timeout or
/// cancellation the whole group is killed so no child outlives the call;
/// dropping the future kills the group too.
pub(super) async fn run(request: ExecRequest, cancel: CancellationToken) -> io::Result<ExecOutput> {
    let mut command = tokio::process::Command::new("bash");
    command
        .arg("-c")
        .arg(&request.command)
        .current_dir(&request.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot start bash in {}: {e}", request.cwd.display()),
        )
    })?;
    let mut group = GroupGuard(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let sink = Arc::new(Mutex::new(Capped {
        cap: request.max_output,
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
        () = tokio::time::sleep(request.timeout) => Ending::TimedOut,
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
