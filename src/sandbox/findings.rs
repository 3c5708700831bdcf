//! Violations as findings: what the sandbox refused a confined call.
//!
//! Landlock's audit records (ABI 7) reach the kernel log only where the
//! kernel has audit; this machine's does not print them. So the refusals are
//! found by a check of the failing calls: the confined process tree runs
//! under `strace` (from outside the sandbox, so its seccomp filter does not
//! stop the tracing), and each file, exec or network call that failed with
//! "permission denied", "operation not permitted", "read-only file system" or
//! "network unreachable" is a finding. A hidden file opens and reads as empty:
//! that is no failure, and is not reported.

use std::collections::BTreeSet;
use std::path::Path;

/// One refusal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Blocked {
    /// `read`, `write`, `exec`, `connect`, or the system call's name.
    pub what: String,
    /// The path, or the address for `connect`.
    pub target: String,
    /// The error: `EACCES`, `EPERM`, `EROFS`, `ENETUNREACH`.
    pub error: String,
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.what, self.target, self.error)
    }
}

/// The `strace` that traces a confined call, if one is installed.
#[must_use]
pub fn tracer() -> Option<std::path::PathBuf> {
    ["/usr/bin/strace", "/bin/strace", "/usr/local/bin/strace"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file())
}

/// The arguments that put `strace` in front of a command, writing to `out`.
#[must_use]
pub fn tracer_args(out: &Path) -> Vec<String> {
    vec![
        "-f".into(),
        "-qq".into(),
        "-Z".into(),
        "-e".into(),
        "trace=%file,%network,execve".into(),
        "-o".into(),
        out.display().to_string(),
        "--".into(),
    ]
}

/// System calls of the confinement itself, made before the call runs.
const SETUP: [&str; 8] = [
    "mount",
    "umount2",
    "unshare",
    "setns",
    "pivot_root",
    "chroot",
    "prctl",
    "readlink",
];

/// The refusals in `strace -f -Z` output, each once, in order of appearance
/// sorted by what and where.
#[must_use]
pub fn parse(trace: &str) -> Vec<Blocked> {
    let mut out = BTreeSet::new();
    for line in trace.lines() {
        // `PID syscall(args…) = -1 ERRNO (text)`
        let rest = line
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let Some((call, result)) = rest.rsplit_once(") = -1 ") else {
            continue;
        };
        let error = result.split_whitespace().next().unwrap_or_default();
        if !matches!(error, "EACCES" | "EPERM" | "EROFS" | "ENETUNREACH") {
            continue;
        }
        let Some((name, args)) = call.split_once('(') else {
            continue;
        };
        if SETUP.contains(&name) {
            continue;
        }
        let quoted = first_quoted(args);
        let (what, target) = match name {
            "connect" => ("connect".to_string(), address(args)),
            // `socket(AF_UNIX, …)`: the family is what was refused.
            "socket" | "socketpair" => (
                name.to_string(),
                args.split(',')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            ),
            "execve" | "execveat" => ("exec".to_string(), quoted.unwrap_or_default()),
            "openat" | "open" | "creat" => {
                let writes = args.contains("O_WRONLY")
                    || args.contains("O_RDWR")
                    || args.contains("O_CREAT")
                    || name == "creat";
                (
                    if writes { "write" } else { "read" }.to_string(),
                    quoted.unwrap_or_default(),
                )
            }
            "unlink" | "unlinkat" | "rmdir" | "rename" | "renameat" | "renameat2" | "mkdir"
            | "mkdirat" | "symlink" | "symlinkat" | "link" | "linkat" | "truncate" | "chmod"
            | "fchmodat" | "chown" | "fchownat" | "utimensat" | "mknod" | "mknodat" => {
                ("write".to_string(), quoted.unwrap_or_default())
            }
            other => (other.to_string(), quoted.unwrap_or_default()),
        };
        out.insert(Blocked {
            what,
            target,
            error: error.to_string(),
        });
    }
    out.into_iter().collect()
}

fn first_quoted(args: &str) -> Option<String> {
    let start = args.find('"')? + 1;
    let end = start + args[start..].find('"')?;
    Some(args[start..end].to_string())
}

/// `1.1.1.1:80` from strace's sockaddr text, or the socket path.
fn address(args: &str) -> String {
    let field = |key: &str| {
        let i = args.find(key)? + key.len();
        let end = i + args[i..].find(['"', ')'])?;
        Some(args[i..end].to_string())
    };
    if args.contains("AF_UNIX")
        && let Some(path) = first_quoted(args)
    {
        return path;
    }
    let host = field("inet_addr(\"").or_else(|| field("inet_pton(AF_INET6, \""));
    let port = field("htons(");
    match (host, port) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h,
        _ => "a socket".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_from_strace_output() {
        let trace = r#"26714 readlink("/etc", 0x7ffe, 1023) = -1 EINVAL (Invalid argument)
26808 openat(AT_FDCWD, "/root/.bashrc", O_RDONLY) = -1 EACCES (Permission denied)
26714 openat(AT_FDCWD, "/etc/zz", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EACCES (Permission denied)
26810 openat(AT_FDCWD, "/dev/tty", O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device or address)
26810 connect(3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("1.1.1.1")}, 16) = -1 EACCES (Permission denied)
26811 execve("/tmp/x", ["/tmp/x"], 0x7ffd /* 20 vars */) = -1 EACCES (Permission denied)
26812 unlinkat(AT_FDCWD, "src/main.rs", 0) = -1 EROFS (Read-only file system)
26812 openat(AT_FDCWD, "/root/.bashrc", O_RDONLY) = -1 EACCES (Permission denied)
26813 socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = -1 EPERM (Operation not permitted)
26714 mount("none", "/", NULL, MS_REC|MS_PRIVATE, NULL) = -1 EPERM (Operation not permitted)
"#;
        let found: Vec<String> = parse(trace).iter().map(ToString::to_string).collect();
        assert_eq!(
            found,
            [
                "connect 1.1.1.1:80 (EACCES)",
                "exec /tmp/x (EACCES)",
                "read /root/.bashrc (EACCES)",
                "socket AF_UNIX (EPERM)",
                "write /etc/zz (EACCES)",
                "write src/main.rs (EROFS)",
            ]
        );
    }
}
