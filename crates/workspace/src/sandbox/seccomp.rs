//! The Landlock tier's syscall filter (see [`super::landlock`] for what it
//! refuses and why).

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Refused outright (`EPERM`).
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_quotactl,
    libc::SYS_acct,
    libc::SYS_syslog,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_vhangup,
];

/// `clone` flags that make a namespace.
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

fn arch() -> io::Result<TargetArch> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| io::Error::other(format!("no syscall filter for this machine: {e}")))
}

fn failed(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("the syscall filter: {e}"))
}

/// The filters: what is refused with `EPERM`, and `clone3` with `ENOSYS`
/// (its flags cannot be inspected; the C library then uses `clone`).
fn programs(network: bool) -> io::Result<Vec<BpfProgram>> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
    let flag = |f: libc::c_int| -> io::Result<SeccompRule> {
        let f = u64::from(f.cast_unsigned());
        SeccompRule::new(vec![
            SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(f), f)
                .map_err(failed)?,
        ])
        .map_err(failed)
    };
    rules.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|&f| flag(f))
            .collect::<io::Result<_>>()?,
    );
    if !network {
        let unix = u64::from(libc::AF_UNIX.cast_unsigned());
        rules.insert(
            libc::SYS_socket,
            vec![
                SeccompRule::new(vec![
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix)
                        .map_err(failed)?,
                ])
                .map_err(failed)?,
            ],
        );
    }
    let arch = arch()?;
    let eperm = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM.cast_unsigned()),
        arch,
    )
    .map_err(failed)?;
    let enosys = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS.cast_unsigned()),
        arch,
    )
    .map_err(failed)?;
    Ok(vec![
        BpfProgram::try_from(eperm).map_err(failed)?,
        BpfProgram::try_from(enosys).map_err(failed)?,
    ])
}

/// Installs the filters on this process (after `no_new_privs`).
pub(crate) fn apply(network: bool) -> io::Result<()> {
    for program in programs(network)? {
        seccompiler::apply_filter(&program).map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile_for_this_machine_with_and_without_network() {
        assert_eq!(programs(false).unwrap().len(), 2);
        let with = programs(true).unwrap();
        let without = programs(false).unwrap();
        assert!(
            without[0].len() > with[0].len(),
            "the socket rule is missing"
        );
    }
}
