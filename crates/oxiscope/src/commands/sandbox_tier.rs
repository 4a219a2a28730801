//! `oxiscope serve --sandbox`: which mechanism confines tenants' tools.
//! By default the strongest this machine supports; the server refuses to
//! start when none does, unless told `--sandbox none`.

use anyhow::{Context as _, bail};
use oxiscope_workspace::{SandboxConfig, SandboxTier};

/// `--sandbox`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SandboxArg {
    /// Bubblewrap if it works here, else Landlock + seccomp.
    #[default]
    Auto,
    /// Bubblewrap (namespaces), one warm sandbox per workspace.
    Bwrap,
    /// Landlock + seccomp (kernel features only).
    Landlock,
    /// No confinement at all (as `--workspace local`).
    None,
}

/// The configuration of the tier `arg` asks for, checked to work here
/// and said on stderr; `None` for `--sandbox none` (tools unconfined).
/// The Landlock tier's launcher is this very program.
///
/// # Errors
/// The tier asked for (or, for `auto`, every tier) does not work here.
pub(crate) async fn choose(
    arg: SandboxArg,
    base: SandboxConfig,
) -> anyhow::Result<Option<SandboxConfig>> {
    let landlock = SandboxConfig {
        tier: SandboxTier::Landlock,
        launcher: Some(std::env::current_exe().context("locating this program")?),
        ..base.clone()
    };
    let bwrap = SandboxConfig {
        tier: SandboxTier::Bwrap,
        ..base
    };
    let chosen = match arg {
        SandboxArg::None => {
            eprintln!(
                "WARNING: --sandbox none: agents' tools run UNCONFINED on this machine, as this \
                 user, with this process's environment. Use it only when every user of this \
                 server is trusted."
            );
            return Ok(None);
        }
        SandboxArg::Bwrap => {
            oxiscope_workspace::probe_sandbox(&bwrap)
                .await
                .context("--sandbox bwrap")?;
            bwrap
        }
        SandboxArg::Landlock => {
            oxiscope_workspace::probe_sandbox(&landlock)
                .await
                .context("--sandbox landlock")?;
            landlock
        }
        SandboxArg::Auto => match oxiscope_workspace::probe_sandbox(&bwrap).await {
            Ok(()) => bwrap,
            Err(bwrap_error) => match oxiscope_workspace::probe_sandbox(&landlock).await {
                Ok(()) => landlock,
                Err(landlock_error) => bail!(
                    "oxiscope serve runs every tool in a sandbox, and none works here.\n  \
                     bubblewrap: {bwrap_error}\n  Landlock: {landlock_error}\n\
                     (`--sandbox none` runs tools unconfined)"
                ),
            },
        },
    };
    match chosen.tier {
        SandboxTier::Landlock => {
            let abi = oxiscope_workspace::probe_landlock(&chosen).await?;
            eprintln!("sandbox: Landlock + seccomp (Landlock ABI {abi})");
        }
        _ => eprintln!(
            "sandbox: bubblewrap ({})",
            if chosen.warm {
                "one warm sandbox per workspace"
            } else {
                "a sandbox per command"
            }
        ),
    }
    Ok(Some(chosen))
}
