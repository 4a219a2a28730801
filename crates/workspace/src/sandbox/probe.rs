//! Whether a sandbox tier can run on this machine: what `oxiscope serve`
//! checks at start.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Whether bubblewrap can run sandboxes made with `config` here: what
/// `oxiscope serve` checks at start.
///
/// # Errors
/// [`Error::SandboxUnavailable`], saying what to install or enable.
pub async fn probe(config: &SandboxConfig) -> Result<()> {
    match config.tier {
        SandboxTier::Bwrap => bwrap::probe(config).await.map(drop),
        SandboxTier::Landlock => probe_landlock(config).await.map(drop),
    }
}

/// The Landlock ABI the kernel enforces for the launcher of `config`
/// (1 or more): what the Landlock tier checks at start.
///
/// # Errors
/// [`Error::SandboxUnavailable`] when the launcher cannot run or the
/// kernel has no Landlock.
pub async fn probe_landlock(config: &SandboxConfig) -> Result<i32> {
    landlock::probe(config)
        .await
        .map_err(|e| Error::SandboxUnavailable {
            reason: e.to_string(),
            hint: "The Landlock tier needs Linux 5.13 or later with Landlock enabled (`landlock` \
                   in /sys/kernel/security/lsm) and a launcher (the oxiscope binary); use \
                   `--sandbox bwrap`, or `--sandbox none` to run tools unconfined."
                .to_owned(),
        })
}

/// Whether a real sandbox works over a workspace under `base` (where the
/// service keeps its workspaces): one is made in a fresh directory there,
/// as any workspace is, and a command inside writes a file that must
/// appear on the host. What `oxiscope serve` checks once at start, so a
/// sandbox that cannot reach its workspace (say, a user who may not pass
/// through the directories above it) stops the server with the reason,
/// not the first chat with an error.
///
/// # Errors
/// [`Error::SandboxUnavailable`], saying what failed and what to do.
pub async fn probe_at(config: &SandboxConfig, base: &Path) -> Result<()> {
    probe(config).await?;
    let dir = base.join(format!(".sandbox-probe-{}", std::process::id()));
    let outcome = probe_in(config, &dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

async fn probe_in(config: &SandboxConfig, dir: &Path) -> Result<()> {
    use oxiscope_tool::{ExecBackend as _, ExecRequest};

    let hint = match config.tier {
        SandboxTier::Bwrap => {
            "Check that bubblewrap can mount the data directory here (as root, the sandbox \
             runs as the user of `SandboxConfig::run_as`, 65534 by default), or run the \
             service with `--workspace local` to run tools unconfined."
        }
        SandboxTier::Landlock => {
            "As root, Landlock sandboxes run as the user of `SandboxConfig::run_as` (65534 by \
             default), who must be able to pass through the directories above the data \
             directory; or run the service with `--workspace local` to run tools unconfined."
        }
    };
    let failed = |reason: String| Error::SandboxUnavailable {
        reason,
        hint: hint.to_owned(),
    };
    let workspace =
        SandboxWorkspace::create("sandbox-probe", dir, config.clone(), Vec::new(), Vec::new())
            .await?;
    let out = workspace
        .backend
        .exec(
            ExecRequest {
                command: "echo ready > probe && cat probe".to_owned(),
                cwd: workspace.workdir.clone(),
                timeout: std::time::Duration::from_secs(30),
                max_output: 4096,
            },
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .map_err(|e| {
            failed(format!(
                "a sandbox over {} did not start: {e}",
                dir.display()
            ))
        })?;
    let on_host = std::fs::read_to_string(dir.join("probe")).unwrap_or_default();
    if out.exit_code != Some(0) || on_host != "ready\n" {
        return Err(failed(format!(
            "a sandbox over {} could not write its workspace (exit {:?}): {}",
            dir.display(),
            out.exit_code,
            String::from_utf8_lossy(&out.output).trim()
        )));
    }
    Ok(())
}
