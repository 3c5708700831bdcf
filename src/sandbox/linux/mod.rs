//! Linux: namespaces and mounts for the denies, rlimits, seccomp, then Landlock.

mod landlock_rules;
mod limits;
mod mounts;
mod seccomp;

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use nix::sched::{CloneFlags, unshare};
use nix::unistd::geteuid;

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
    /// Every id of the current namespace is mapped (root), not only the caller's own.
    all_ids: bool,
    mount: bool,
    network: bool,
}

pub(super) fn confine(envelope: &Envelope) -> Result<Confinement, SandboxError> {
    envelope.check()?;
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
        for folder in pinned(&hidden.writes, &envelope.writes) {
            mounts::pin(&folder)?;
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
        all_ids: ns.all_ids,
        mount_namespace: ns.mount,
        network_namespace: ns.network,
        hidden: hidden.reads.len(),
        read_only: hidden.writes.len(),
        noexec: noexec.len(),
        process_limit,
        seccomp: true,
    })
}

/// The folders above each read-only path that lie in a writable tree, outermost first.
///
/// A read-only mount holds the path, not the name: renaming a writable folder above it
/// (`mv .git .git2`) would let the call build a new `.git/hooks` beside the protected one,
/// outside the mount. A mount point cannot be renamed or removed (EBUSY), so each such
/// folder is bound onto itself.
fn pinned(read_only: &[PathBuf], writes: &[PathBuf]) -> Vec<PathBuf> {
    let writable: Vec<PathBuf> = writes
        .iter()
        .filter_map(|w| fs::canonicalize(w).ok())
        .collect();
    let mut folders = BTreeSet::new();
    for path in read_only {
        for folder in path.ancestors().skip(1) {
            if writable.iter().any(|w| folder.starts_with(w)) {
                folders.insert(folder.to_path_buf());
            }
        }
    }
    // INVARIANT: sorted, so a folder comes before the folders inside it.
    folders.into_iter().collect()
}

/// Enters a user and mount namespace (and an empty network namespace for `none`); as
/// root, a mount namespace alone when user namespaces are refused.
fn enter_namespaces(no_network: bool, mounts_needed: usize) -> Result<Namespaces, SandboxError> {
    let maps = IdMaps::prepare();
    let net = if no_network {
        CloneFlags::CLONE_NEWNET
    } else {
        CloneFlags::empty()
    };
    let user_error = match unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | net) {
        Ok(()) => {
            let all_ids = maps.write()?;
            return Ok(Namespaces {
                user: true,
                all_ids,
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
                all_ids: true,
                mount: true,
                network: no_network,
            });
        }
        if no_network && unshare(CloneFlags::CLONE_NEWNS).is_ok() {
            return Ok(Namespaces {
                user: false,
                all_ids: true,
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
        all_ids: true,
        mount: false,
        network: false,
    })
}

/// The identity maps of the new user namespace.
///
/// An unprivileged process may map only its own user and group, and writes that map
/// itself. Root should keep its rights over files of every owner, so it maps every id
/// valid in the current namespace; but the kernel lets only a process *outside* the new
/// namespace write such a map. So before `unshare`, root starts a small writer
/// (`/bin/sh`, waiting on a pipe) that writes the maps once told to; without it (no
/// `/bin/sh`, or it fails) root maps itself alone, and then reaches files of other
/// owners only as their permissions allow anyone.
///
/// Where the process that started this one writes the maps for it
/// ([`super::idmap`], `zero-policy run`), no writer is started.
struct IdMaps {
    own_uid: String,
    own_gid: String,
    writer: Option<std::process::Child>,
    /// The parent writes the maps when asked.
    parent: bool,
}

/// The writer's script: `$1` the pid, `$2` and `$3` the uid and gid maps.
const WRITER: &str =
    r#"read go && printf '%s' "$2" > /proc/$1/uid_map && printf '%s' "$3" > /proc/$1/gid_map"#;

impl IdMaps {
    /// Made before `unshare`, while /proc/self shows the current namespace's maps.
    fn prepare() -> IdMaps {
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        let own_uid = format!("{uid} {uid} 1\n");
        let own_gid = format!("{gid} {gid} 1\n");
        let root = uid.is_root() && gid.as_raw() == 0;
        let parent = root && std::env::var_os(super::idmap::MAPPER_VAR).is_some();
        let writer = if root && !parent {
            match (
                super::idmap::identity("/proc/self/uid_map"),
                super::idmap::identity("/proc/self/gid_map"),
            ) {
                (Some(uids), Some(gids)) => std::process::Command::new("/bin/sh")
                    .args(["-c", WRITER, "sh"])
                    .arg(std::process::id().to_string())
                    .args([uids, gids])
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .ok(),
                _ => None,
            }
        } else {
            None
        };
        IdMaps {
            own_uid,
            own_gid,
            writer,
            parent,
        }
    }

    /// Writes the maps of the new user namespace (entered since [`IdMaps::prepare`]).
    /// Returns whether every id is mapped (root with its writer).
    fn write(mut self) -> Result<bool, SandboxError> {
        let fail = |what: &str, e: std::io::Error| SandboxError::Namespace {
            count: 0,
            reason: format!("cannot write {what}: {e}"),
        };
        match fs::write("/proc/self/setgroups", "deny") {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(fail("/proc/self/setgroups", e)),
        }
        if self.parent && super::idmap::ask_parent() {
            return Ok(true);
        }
        if let Some(mut writer) = self.writer.take() {
            let told = writer
                .stdin
                .take()
                .is_some_and(|mut stdin| std::io::Write::write_all(&mut stdin, b"go\n").is_ok());
            let written = writer.wait().is_ok_and(|status| status.success());
            if told && written {
                return Ok(true);
            }
        }
        fs::write("/proc/self/uid_map", &self.own_uid)
            .map_err(|e| fail("/proc/self/uid_map", e))?;
        fs::write("/proc/self/gid_map", &self.own_gid)
            .map_err(|e| fail("/proc/self/gid_map", e))?;
        Ok(false)
    }
}

impl Drop for IdMaps {
    /// A writer never told to write (the user namespace was refused) sees its input end,
    /// writes nothing, and is reaped here, not left to the program about to run.
    fn drop(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            drop(writer.stdin.take());
            let _ = writer.wait();
        }
    }
}
