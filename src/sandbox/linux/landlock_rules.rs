//! The Landlock ruleset: every filesystem right handled, each granted only beneath the
//! envelope's trees; TCP connect and bind handled unless the network is `any`; signals
//! and abstract Unix sockets scoped to the sandbox.
//!
//! Best effort by kernel ABI (the crate drops what the kernel does not know, and says
//! so): the rights are those of ABI 8, the highest whose rights are all held by the
//! rules below (ABI 9's Unix socket right is left to the seccomp filter). Where the
//! kernel has no Landlock at all, or cannot hold the TCP rules the envelope needs,
//! confinement fails.

use std::fs;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, NetPort,
    PathBeneath, PathFd, RestrictSelf, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    Scope,
};

use super::super::{Envelope, Network, SandboxError};

/// The ABI whose rights the ruleset asks for.
const TARGET: ABI = ABI::V8;

/// Devices that most programs open for reading and writing.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The Landlock ABI the kernel reports, `None` without Landlock. Makes the version call
/// only: with no flags and no no_new_privs, `RestrictSelf::apply` restricts nothing.
pub(super) fn kernel_abi() -> Option<u32> {
    let status = RestrictSelf::default().no_new_privs(false).apply().ok()?;
    match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.map_or(effective_abi as u32, i32::unsigned_abs)),
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => None,
    }
}

/// What was enforced.
pub(super) struct Enforced {
    pub abi: u32,
    pub full: bool,
    pub network: bool,
    pub scoped: bool,
}

fn err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Landlock(e.to_string())
}

/// Builds and enforces the ruleset on the calling thread (and what it execs).
/// `tcp_needed`: no network namespace holds network `none`, so Landlock must.
pub(super) fn enforce(envelope: &Envelope, tcp_needed: bool) -> Result<Enforced, SandboxError> {
    let Some(kernel) = kernel_abi() else {
        return Err(SandboxError::Unavailable(
            "Landlock is missing (a kernel older than 5.13, or not enabled at boot)".to_owned(),
        ));
    };
    let abi = TARGET;
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let exec = read | AccessFs::Execute;
    let write = read | (AccessFs::from_write(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock));
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::ReadDir | AccessFs::IoctlDev;

    let handle_net = envelope.network != Network::Any;
    if handle_net && kernel < 4 && (tcp_needed || matches!(envelope.network, Network::Ports(_))) {
        return Err(SandboxError::Unavailable(format!(
            "Landlock ABI {kernel} cannot restrict TCP ports (ABI 4, Linux 6.7)"
        )));
    }
    let scoped = kernel >= 6;

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if handle_net {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(err)?;
    }
    if scoped {
        let scopes = if envelope.unix_sockets {
            BitFlags::from(Scope::Signal)
        } else {
            Scope::Signal | Scope::AbstractUnixSocket
        };
        ruleset = ruleset.scope(scopes).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;

    let mut grants: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    grants.extend(envelope.reads.iter().map(|p| (p.clone(), read)));
    grants.extend(envelope.exec.iter().map(|p| (p.clone(), exec)));
    grants.extend(
        envelope
            .writes
            .iter()
            .filter_map(|p| nearest_existing(p))
            .map(|p| (p, write)),
    );
    grants.extend(DEVICES.iter().map(|d| (PathBuf::from(d), device)));
    grants.push((PathBuf::from("/proc"), read));
    for (path, access) in grants {
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        let access = if meta.is_dir() {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        let fd = match PathFd::new(&path) {
            Ok(fd) => fd,
            // Vanished since, or not openable by this user: nothing to grant.
            Err(_) => continue,
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| SandboxError::Landlock(format!("`{}`: {e}", path.display())))?;
    }
    if let Network::Ports(ports) = &envelope.network {
        for &port in ports {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(err)?;
        }
    }
    // Denials after the exec are logged too (ABI 7 audit), for findings.
    let created = created.log_new_exec(true).map_err(err)?;
    let status = created.restrict_self().map_err(err)?;
    let full = match status.ruleset {
        RulesetStatus::FullyEnforced => true,
        RulesetStatus::PartiallyEnforced => false,
        RulesetStatus::NotEnforced => {
            return Err(SandboxError::Unavailable(
                "the kernel enforced none of the Landlock ruleset".to_owned(),
            ));
        }
    };
    Ok(Enforced {
        abi: kernel.min(abi as u32),
        full,
        network: handle_net && kernel >= 4,
        scoped,
    })
}

/// `path` if it exists, else its nearest existing ancestor (where it may be created).
fn nearest_existing(path: &Path) -> Option<PathBuf> {
    // Never the root: a write to a folder that does not exist under `/` must
    // not open the whole file system to writes.
    path.ancestors()
        .find(|p| fs::symlink_metadata(p).is_ok())
        .filter(|p| p.parent().is_some())
        .map(Path::to_path_buf)
}
