//! Root's identity maps, written by the process that started the confining one.
//!
//! Root confines a call in a user namespace where every id of its own namespace is
//! mapped, so that it keeps its rights over files of every owner. The kernel lets only a
//! process *outside* the new namespace write such a map. Without help, the confining
//! process starts a writer of its own (`/bin/sh`) before it enters the namespace: a
//! program to start on every confined call. A parent that waits for the confined call
//! anyway (`zero-policy run`) is outside already, so it writes the maps itself:
//!
//! 1. before it starts `__confine`, it makes a [`Mapper`] (two pipes) and passes the
//!    child's ends in [`MAPPER_VAR`];
//! 2. the confining process, once in its new user namespace, asks through its end;
//! 3. the parent writes `/proc/PID/uid_map` and `gid_map` of that child (the identity
//!    of its own maps), and answers whether it did.
//!
//! Whatever goes wrong (no answer, a refusal, a closed pipe), the confining process
//! maps itself alone, as it does when its own writer fails: never more than the same
//! maps the writer would have written.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};

/// The variable that names the confining process's two descriptors, `READ,WRITE`.
pub const MAPPER_VAR: &str = "ZERO_POLICY_ID_MAPPER";

/// The request the confining process sends once it is in its new user namespace.
const ASK: u8 = b'm';
/// The answer: the maps are written.
const DONE: u8 = b'1';
/// The answer: they are not.
const FAILED: u8 = b'0';

/// The parent's side: the pipes to one confining process, made before it starts.
#[derive(Debug)]
pub struct Mapper {
    /// The parent reads requests here.
    requests: OwnedFd,
    /// The parent answers here.
    answers: OwnedFd,
    /// The child's ends (inherited by it; closed here once it has started).
    child_ends: (OwnedFd, OwnedFd),
    /// The maps to write: the identity of this process's own.
    uid_map: String,
    gid_map: String,
}

impl Mapper {
    /// A mapper where one is needed and can be made: root (user and group 0), whose own
    /// maps can be read; `None` otherwise (another user maps itself).
    #[must_use]
    pub fn new() -> Option<Mapper> {
        #[cfg(target_os = "linux")]
        {
            if !(nix::unistd::getuid().is_root() && nix::unistd::getgid().as_raw() == 0) {
                return None;
            }
            let uid_map = identity("/proc/self/uid_map")?;
            let gid_map = identity("/proc/self/gid_map")?;
            let cloexec = nix::fcntl::OFlag::O_CLOEXEC;
            let (child_read, answers) = nix::unistd::pipe2(cloexec).ok()?;
            let (requests, child_write) = nix::unistd::pipe2(cloexec).ok()?;
            // Only the child's ends cross the exec.
            for fd in [&child_read, &child_write] {
                nix::fcntl::fcntl(
                    fd,
                    nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
                )
                .ok()?;
            }
            Some(Mapper {
                requests,
                answers,
                child_ends: (child_read, child_write),
                uid_map,
                gid_map,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// The variable to set for the confining process: its descriptors, `READ,WRITE`.
    #[must_use]
    pub fn env(&self) -> (String, String) {
        (
            MAPPER_VAR.to_string(),
            format!(
                "{},{}",
                self.child_ends.0.as_raw_fd(),
                self.child_ends.1.as_raw_fd()
            ),
        )
    }

    /// Serves the confining process started as `pid` (the caller's child, not yet
    /// waited for, so the pid is its): on a thread, writes its maps when it asks, once.
    /// A child that ends without asking ends the thread too.
    pub fn serve(self, pid: u32) {
        let Mapper {
            requests,
            answers,
            child_ends,
            uid_map,
            gid_map,
        } = self;
        // The child holds its ends now; with this process's copies closed, the thread
        // sees the end of input when the child ends.
        drop(child_ends);
        let _ = std::thread::Builder::new()
            .name("id-maps".into())
            .spawn(move || {
                let mut requests = std::fs::File::from(requests);
                let mut answers = std::fs::File::from(answers);
                let mut ask = [0u8; 1];
                if requests.read_exact(&mut ask).is_err() || ask[0] != ASK {
                    return;
                }
                let written = std::fs::write(format!("/proc/{pid}/uid_map"), &uid_map)
                    .and_then(|()| std::fs::write(format!("/proc/{pid}/gid_map"), &gid_map))
                    .is_ok();
                let _ = answers.write_all(&[if written { DONE } else { FAILED }]);
            });
    }
}

/// The confining process's side: asks the parent named by [`MAPPER_VAR`] to write the
/// maps of the user namespace it has just entered. Whether they are written; `false`
/// without a parent, or on any failure.
#[must_use]
pub fn ask_parent() -> bool {
    let Some(value) = std::env::var_os(MAPPER_VAR) else {
        return false;
    };
    let Some((read, write)) = value.to_str().and_then(|v| v.split_once(',')) else {
        return false;
    };
    let (Ok(read), Ok(write)) = (read.parse::<u32>(), write.parse::<u32>()) else {
        return false;
    };
    // The inherited descriptors are opened again by name (no `unsafe` to adopt a
    // number); the originals are closed with every other inherited one before the exec.
    let open = |fd: u32, writing: bool| {
        std::fs::OpenOptions::new()
            .read(!writing)
            .write(writing)
            .open(format!("/proc/self/fd/{fd}"))
    };
    let (Ok(mut answers), Ok(mut requests)) = (open(read, false), open(write, true)) else {
        return false;
    };
    if requests.write_all(&[ASK]).is_err() {
        return false;
    }
    let mut answer = [0u8; 1];
    answers.read_exact(&mut answer).is_ok() && answer[0] == DONE
}

/// Each range of an id map (`inside outside count`) as an identity range of the same ids.
#[must_use]
pub fn identity(file: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let inside = parts.next()?;
            let _outside = parts.next()?;
            let count = parts.next()?;
            Some(format!("{inside} {inside} {count}\n"))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.concat())
}
