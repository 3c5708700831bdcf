//! Linux: namespaces and mounts for the denies, rlimits, seccomp, then Landlock.

mod landlock_rules;
mod limits;
mod mounts;
mod seccomp;

use std::fs;

use nix::sched::{CloneFlags, unshare};
use nix::unistd::{Uid, getegid, geteuid};

use super::{Confinement, Envelope, Network, SandboxError, Support, hidden};

/// What the probe can tell without creating anything.
pub(super) fn probe() -> Support {
    let landlock_abi = landlock_rules::kernel_abi();
    let root = geteuid().is_root();
    let sysctl = |path: &str| -> Option<i64> { fs::read_to_string(path).ok()?.trim().parse().ok() };
    let max = sysctl("/proc/sys/user/max_user_namespaces");
    let unprivileged = sysctl("/proc/sys/kernel/unprivileged_userns_clone");
    let apparmor = sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    let user_namespaces = max.is_none_or(|m| m > 0)
        && (root || (unprivileged.is_none_or(|u| u != 0) && apparmor.is_none_or(|a| a != 1)));
    let seccomp = fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")));
    Support {
        landlock_abi,
        user_namespaces,
        mount_namespace: user_namespaces || root,
        seccomp,
    }
}

/// The namespaces entered.
struct Namespaces {
    user: bool,
    mount: bool,
    network: bool,
}

pub(super) fn confine(envelope: &Envelope) -> Result<Confinement, SandboxError> {
    if landlock_rules::kernel_abi().is_none() {
        return Err(SandboxError::Unavailable(
            "Landlock is missing (a kernel older than 5.13, or not enabled at boot)".to_owned(),
        ));
    }
    let hidden = hidden::resolve(envelope)?;
    // Before the user namespace: the cgroup files belong to the outer root.
    let process_limit = limits::limit_processes(envelope.limits.processes)?;
    let noexec: Vec<_> = envelope
        .noexec
        .iter()
        .filter_map(|p| fs::canonicalize(p).ok())
        .collect();
    let cwd = std::env::current_dir().ok();
    let mounts_needed = hidden.reads.len() + hidden.writes.len() + noexec.len();
    let no_network = envelope.network == Network::None;
    let ns = enter_namespaces(no_network, mounts_needed)?;
    if ns.mount {
        mounts::make_private()?;
        for folder in &noexec {
            mounts::noexec(folder)?;
        }
        for path in &hidden.writes {
            mounts::read_only(path)?;
        }
        for path in &hidden.reads {
            mounts::hide(path)?;
        }
        // The working folder was entered before the mounts: enter it again through them,
        // so that a relative path cannot reach what a mount now covers.
        if let Some(cwd) = &cwd {
            std::env::set_current_dir(cwd).map_err(|e| SandboxError::Mount {
                what: "enter the working folder again after mounting",
                path: cwd.clone(),
                reason: e.to_string(),
            })?;
        }
    }
    limits::set_rlimits(&envelope.limits)?;
    seccomp::install(envelope)?;
    let landlock = landlock_rules::enforce(envelope, !ns.network)?;
    Ok(Confinement {
        landlock_abi: landlock.abi,
        landlock_full: landlock.full,
        landlock_network: landlock.network,
        landlock_scoped: landlock.scoped,
        user_namespace: ns.user,
        mount_namespace: ns.mount,
        network_namespace: ns.network,
        hidden: hidden.reads.len(),
        read_only: hidden.writes.len(),
        noexec: noexec.len(),
        process_limit,
        seccomp: true,
    })
}

/// Enters a user and mount namespace (and an empty network namespace for `none`); as
/// root, a mount namespace alone when user namespaces are refused.
fn enter_namespaces(no_network: bool, mounts_needed: usize) -> Result<Namespaces, SandboxError> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let net = if no_network {
        CloneFlags::CLONE_NEWNET
    } else {
        CloneFlags::empty()
    };
    let user_error = match unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | net) {
        Ok(()) => {
            map_ids(uid, gid.as_raw())?;
            return Ok(Namespaces {
                user: true,
                mount: true,
                network: no_network,
            });
        }
        Err(e) => e,
    };
    if geteuid().is_root() {
        if unshare(CloneFlags::CLONE_NEWNS | net).is_ok() {
            return Ok(Namespaces {
                user: false,
                mount: true,
                network: no_network,
            });
        }
        if no_network && unshare(CloneFlags::CLONE_NEWNS).is_ok() {
            return Ok(Namespaces {
                user: false,
                mount: true,
                network: false,
            });
        }
    }
    if mounts_needed > 0 {
        return Err(SandboxError::Namespace {
            count: mounts_needed,
            reason: format!("user namespace: {}", user_error.desc()),
        });
    }
    // Nothing to mount: Landlock and seccomp alone hold the call (network `none` then
    // relies on Landlock's TCP rights and the seccomp filter).
    Ok(Namespaces {
        user: false,
        mount: false,
        network: false,
    })
}

/// Maps the user and group to themselves in the new user namespace.
fn map_ids(uid: Uid, gid: u32) -> Result<(), SandboxError> {
    let fail = |what: &str, e: std::io::Error| SandboxError::Namespace {
        count: 0,
        reason: format!("cannot write {what}: {e}"),
    };
    match fs::write("/proc/self/setgroups", "deny") {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail("/proc/self/setgroups", e)),
    }
    fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))
        .map_err(|e| fail("/proc/self/uid_map", e))?;
    fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
        .map_err(|e| fail("/proc/self/gid_map", e))?;
    // The effective group is unchanged; checked so a half-made mapping is not missed.
    debug_assert_eq!(getegid().as_raw(), gid);
    Ok(())
}
