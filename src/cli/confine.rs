//! `zero-policy __confine -- PROGRAM ARGS…`: confine this process to the envelope in
//! `ZERO_POLICY_ENVELOPE`, then become PROGRAM. Hidden: `run` calls it.
//!
//! It starts no thread (the kernel refuses a user namespace to a threaded process), reads
//! the envelope, confines itself ([`crate::sandbox::confine_current_process`]) and execs
//! the program with the variable removed (with `ZERO_POLICY_CONFINE_REPORT` set, it first
//! says on stderr what it applied). Whatever fails before the exec, the program
//! does not run: exit 125 with `zero-policy: cannot confine the call: REASON`.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use crate::output;
use crate::sandbox::{self, Envelope};

/// The environment variable that carries the envelope, as JSON.
pub const ENVELOPE_VAR: &str = crate::sandbox::plan::ENVELOPE_VAR;

/// When set (to anything), what was applied is said on stderr before the exec.
pub const REPORT_VAR: &str = "ZERO_POLICY_CONFINE_REPORT";

/// Exit code: the call could not be confined, and did not run.
pub const EXIT_CANNOT_CONFINE: u8 = 125;
/// Exit code: the program was found but could not be run (as a shell says).
pub const EXIT_CANNOT_RUN: u8 = 126;
/// Exit code: the program was not found (as a shell says).
pub const EXIT_NOT_FOUND: u8 = 127;

/// Run a program confined to the envelope in `ZERO_POLICY_ENVELOPE` (JSON).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub command: Vec<OsString>,
}

/// Confines this process, then execs the program; returns only on failure.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let Some((program, rest)) = args.command.split_first() else {
        return refuse("no program given");
    };
    let envelope = match read_envelope() {
        Ok(e) => e,
        Err(reason) => return refuse(&reason),
    };
    match sandbox::confine_current_process(&envelope) {
        Ok(confinement) => {
            if std::env::var_os(REPORT_VAR).is_some() {
                output::stderr(&format!("zero-policy: confined: {confinement}\n"));
            }
        }
        Err(e) => return refuse(&e.to_string()),
    }
    close_inherited();
    let mut command = std::process::Command::new(program);
    command
        .args(rest)
        .env_remove(ENVELOPE_VAR)
        .env_remove(REPORT_VAR)
        .env_remove(sandbox::idmap::MAPPER_VAR);
    // The kernel cannot hide what the program is given: secrets in the
    // environment are left out (`settings.enforce.deny_env`).
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_none_or(|n| envelope.denies_env(n)) {
            command.env_remove(&name);
        }
    }
    let error = command.exec();
    output::stderr(&format!(
        "zero-policy: cannot run `{}`: {error}\n",
        program.to_string_lossy()
    ));
    if error.kind() == std::io::ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_CANNOT_RUN
    }
}

fn read_envelope() -> Result<Envelope, String> {
    let text = std::env::var(ENVELOPE_VAR).map_err(|e| format!("`{ENVELOPE_VAR}`: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("`{ENVELOPE_VAR}` is not an envelope: {e}"))
}

fn refuse(reason: &str) -> u8 {
    output::stderr(&format!("zero-policy: cannot confine the call: {reason}\n"));
    EXIT_CANNOT_CONFINE
}

/// The variable that names descriptors, besides the standard streams, that
/// the confined program keeps (`run --cwd-fd`).
pub const KEEP_FDS_VAR: &str = "ZERO_POLICY_KEEP_FDS";

/// Closes every descriptor the call inherited but the standard streams and
/// those `ZERO_POLICY_KEEP_FDS` names: a file opened outside the sandbox
/// would be written through it, envelope or not.
fn close_inherited() {
    let keep: Vec<i32> = std::env::var(KEEP_FDS_VAR)
        .unwrap_or_default()
        .split(',')
        .filter_map(|f| f.trim().parse().ok())
        .collect();
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|fd| *fd > 2 && !keep.contains(fd))
        .collect();
    for fd in fds {
        // The directory's own descriptor is gone by now; closing it again fails harmlessly.
        let _ = nix::unistd::close(fd);
    }
}
