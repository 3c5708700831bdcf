//! Resource limits: `setrlimit`, and for root a pids cgroup.
//!
//! The kernel never applies RLIMIT_NPROC to the user whose id is 0 outside every
//! namespace (`copy_process` exempts `INIT_USER`), even inside a user namespace. So for
//! root the process limit is a pids cgroup made for the call: a child of the process's
//! own cgroup (v2, or the v1 `pids` hierarchy) named `zero-policy-PID`, with `pids.max`
//! set, which the process joins before it execs. The cgroup outlives the call; empty
//! ones left by earlier calls are removed each time a new one is made.

use std::fs;
use std::path::{Path, PathBuf};

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use nix::unistd::geteuid;

use super::super::{Limits, SandboxError};

/// Sets the rlimits (never above the current hard limit); core dumps off.
pub(super) fn set_rlimits(limits: &Limits) -> Result<(), SandboxError> {
    let set = |what: &'static str, resource: Resource, value: u64| {
        let fail = |e: nix::Error| SandboxError::Limit {
            what,
            reason: e.desc().to_owned(),
        };
        let (_, hard) = getrlimit(resource).map_err(fail)?;
        let value = value.min(hard);
        setrlimit(resource, value, value).map_err(fail)
    };
    if let Some(n) = limits.processes {
        set("process", Resource::RLIMIT_NPROC, n)?;
    }
    if let Some(n) = limits.file_size {
        set("file size", Resource::RLIMIT_FSIZE, n)?;
    }
    if let Some(n) = limits.cpu_seconds {
        set("CPU time", Resource::RLIMIT_CPU, n)?;
    }
    set("core dump", Resource::RLIMIT_CORE, 0)
}

/// Holds the process limit: by rlimit (set later, in [`set_rlimits`]) for other users, by
/// a pids cgroup for root. Returns how.
pub(super) fn limit_processes(max: Option<u64>) -> Result<&'static str, SandboxError> {
    let Some(max) = max else {
        return Ok("none");
    };
    if !geteuid().is_root() {
        return Ok("rlimit");
    }
    let fail = |reason: String| SandboxError::Limit {
        what: "process",
        reason: format!("RLIMIT_NPROC does not bind root, and no pids cgroup: {reason}"),
    };
    let parent =
        own_pids_cgroup().ok_or_else(|| fail("no pids cgroup controller found".to_owned()))?;
    sweep(&parent);
    let dir = parent.join(format!("zero-policy-{}", std::process::id()));
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fail(format!("cannot create `{}`: {e}", dir.display()))),
    }
    let write = |file: &str, value: String| {
        let path = dir.join(file);
        fs::write(&path, value).map_err(|e| fail(format!("cannot write `{}`: {e}", path.display())))
    };
    write("pids.max", max.to_string())?;
    write("cgroup.procs", "0".to_owned())?;
    Ok("cgroup")
}

/// Removes the empty cgroups earlier calls left (a populated one refuses, and stays).
/// Only those of processes that have ended: another call's cgroup is empty from the
/// moment it is made until its process joins it, and removing it then would fail that
/// call (a hook's calls run in parallel).
fn sweep(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_string_lossy()
            .strip_prefix("zero-policy-")
            .map(str::to_owned)
        else {
            continue;
        };
        let ended = pid
            .parse::<u32>()
            .is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
        if ended {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// The folder of this process's cgroup in a hierarchy that has the pids controller.
fn own_pids_cgroup() -> Option<PathBuf> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in mountinfo.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPEROPTIONS
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(mountpoint), Some(fstype)) =
            (left.get(3), left.get(4), right.first())
        else {
            continue;
        };
        let mountpoint = PathBuf::from(super::mounts::unescape(mountpoint));
        let own = match *fstype {
            "cgroup"
                if right
                    .get(2)
                    .is_some_and(|o| o.split(',').any(|o| o == "pids")) =>
            {
                cgroups.lines().find_map(|l| {
                    let mut parts = l.splitn(3, ':');
                    let _id = parts.next()?;
                    let controllers = parts.next()?;
                    let path = parts.next()?;
                    controllers.split(',').any(|c| c == "pids").then_some(path)
                })
            }
            "cgroup2" => cgroups.lines().find_map(|l| l.strip_prefix("0::")),
            _ => None,
        };
        let Some(own) = own else {
            continue;
        };
        let relative = own
            .strip_prefix(*root)
            .unwrap_or(own)
            .trim_start_matches('/');
        let dir = mountpoint.join(relative);
        let has_pids = if *fstype == "cgroup2" {
            fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"))
        } else {
            true
        };
        if has_pids && dir.is_dir() {
            return Some(dir);
        }
    }
    None
}
