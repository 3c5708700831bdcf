//! The kernel sandbox: what a confined call may touch ([`Envelope`]), and the code that
//! holds a process to it.
//!
//! A decision is a prediction; the sandbox makes what the prediction missed fail in the
//! kernel instead of happening (docs/enforcement.md). The caller computes an
//! [`Envelope`] from the policy and the call; then, in the process that is about to
//! `exec` the call:
//!
//! - on Linux, [`confine_current_process`] hides the denied paths in a private mount
//!   namespace, makes the protected ones read-only and the temp folders `noexec`, sets
//!   resource limits, installs a seccomp filter and finally a Landlock ruleset that allows
//!   only the envelope's trees. It refuses (never runs unconfined) where Landlock is
//!   missing or a deny could not be put in place;
//! - on macOS, [`seatbelt_profile`] writes the same envelope as a Seatbelt profile for
//!   `sandbox-exec`; it is a pure function, tested as text.
//!
//! This module is a leaf: it depends on no other part of the crate, so the policy side
//! and the enforcement side can change apart.

pub mod exec;
pub mod findings;
pub mod hidden;
pub mod idmap;
#[cfg(target_os = "linux")]
mod linux;
pub mod plan;
pub mod protect;
pub mod seatbelt;

use std::fmt;
use std::path::PathBuf;

pub use hidden::Hidden;
pub use seatbelt::seatbelt_profile;

/// What a confined call may touch: computed by the caller from the policy and the call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
pub struct Envelope {
    /// Trees or files that may be read (absolute, cleaned). Missing ones are skipped.
    pub reads: Vec<PathBuf>,
    /// Trees or files that may be written, created and deleted (implies read). A path that
    /// does not exist yet grants creation in its nearest existing parent folder.
    pub writes: Vec<PathBuf>,
    /// Trees whose files may be executed (implies read).
    pub exec: Vec<PathBuf>,
    /// Path globs (absolute, `~` already expanded, `**` crosses folders, `*` does not cross `/`)
    /// whose existing matches must not be read even inside `reads`/`writes`: hidden.
    pub deny_reads: Vec<String>,
    /// Globs of paths that must not be written even inside `writes`: made read-only.
    pub deny_writes: Vec<String>,
    /// Folders searched for matches of `deny_reads`/`deny_writes` globs that begin with `**`
    /// (typically the workspace and the writable folders). Anchored globs (`/home/u/.ssh/**`)
    /// are resolved from their literal prefix wherever that is.
    pub search: Vec<PathBuf>,
    /// Writable folders where nothing may be executed or mapped executable (temp folders):
    /// mounted noexec so that `ld-linux.so /tmp/x` fails too.
    pub noexec: Vec<PathBuf>,
    /// Which connections the call may open.
    pub network: Network,
    /// Whether the call may create Unix-domain sockets by path (the Docker socket, ssh-agent);
    /// socketpair() stays allowed either way.
    pub unix_sockets: bool,
    /// Resource limits.
    pub limits: Limits,
    /// Globs of environment variable names the program does not get (`*`
    /// matches any run, case is ignored): removed before it starts.
    #[serde(default)]
    pub deny_env: Vec<String>,
    /// Variables the program gets even where `deny_env` names them: those a
    /// confined MCP server's entry gives it by name.
    #[serde(default)]
    pub keep_env: Vec<String>,
}

impl Envelope {
    /// Whether the variable `name` is one the program does not get.
    #[must_use]
    pub fn denies_env(&self, name: &str) -> bool {
        !self.keep_env.iter().any(|k| k == name)
            && self.deny_env.iter().any(|g| env_glob_matches(g, name))
    }
}

/// Whether `name` matches `glob`, where `*` matches any run of characters and
/// case is ignored.
#[must_use]
pub fn env_glob_matches(glob: &str, name: &str) -> bool {
    let glob: Vec<u8> = glob.bytes().map(|b| b.to_ascii_uppercase()).collect();
    let name: Vec<u8> = name.bytes().map(|b| b.to_ascii_uppercase()).collect();
    // Iterative wildcard matching with one backtrack point.
    let (mut g, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if g < glob.len() && glob[g] == b'*' {
            star = Some((g, n));
            g += 1;
        } else if g < glob.len() && glob[g] == name[n] {
            g += 1;
            n += 1;
        } else if let Some((sg, sn)) = star {
            g = sg + 1;
            n = sn + 1;
            star = Some((sg, sn + 1));
        } else {
            return false;
        }
    }
    glob[g..].iter().all(|&b| b == b'*')
}

impl Envelope {
    /// Checks that every path is absolute: a relative one would be read from whatever
    /// folder the confining process happens to be in.
    ///
    /// # Errors
    /// The first path that is not absolute.
    pub fn check(&self) -> Result<(), SandboxError> {
        for (field, paths) in [
            ("reads", &self.reads),
            ("writes", &self.writes),
            ("exec", &self.exec),
            ("search", &self.search),
            ("noexec", &self.noexec),
        ] {
            if let Some(path) = paths.iter().find(|p| !p.is_absolute()) {
                return Err(SandboxError::RelativePath {
                    field,
                    path: path.clone(),
                });
            }
        }
        Ok(())
    }
}

/// Which connections a confined call may open.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// No network at all: a network namespace with nothing up, no UDP, no raw sockets.
    #[default]
    None,
    /// TCP connect to these ports only; no UDP, no raw sockets.
    Ports(Vec<u16>),
    /// Any TCP and UDP; still no raw or packet sockets.
    Any,
}

/// Resource limits (`setrlimit`), each unset when `None`. Core dumps are always off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
pub struct Limits {
    /// Processes (and threads) of the user, counted in the call's user namespace.
    pub processes: Option<u64>,
    /// The largest file the call may write, in bytes.
    pub file_size: Option<u64>,
    /// CPU time, in seconds.
    pub cpu_seconds: Option<u64>,
}

/// An error that stops confinement: the call must not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// This platform has no kernel sandbox this crate can apply in-process.
    #[error("confining a process is supported on Linux only")]
    Unsupported,
    /// The kernel cannot confine: no Landlock, or it is disabled.
    #[error("the kernel cannot confine the call: {0}")]
    Unavailable(String),
    /// A path of the envelope is not absolute.
    #[error("`{path}` in the envelope's `{field}` is not an absolute path")]
    RelativePath {
        /// The envelope field.
        field: &'static str,
        /// The path.
        path: PathBuf,
    },
    /// A deny glob is malformed or not anchored.
    #[error("deny glob `{glob}`: {reason}")]
    Glob {
        /// The glob as given.
        glob: String,
        /// Why it is refused.
        reason: String,
    },
    /// Resolving the deny globs visited more entries, or went deeper, than allowed.
    #[error(
        "resolving the deny globs under `{root}` {what}; refusing rather than leave a match unprotected"
    )]
    WalkBound {
        /// Where the walk started.
        root: PathBuf,
        /// What bound was crossed.
        what: String,
    },
    /// A folder could not be listed or a path resolved while resolving deny globs.
    #[error("cannot resolve deny globs at `{path}`: {source}")]
    Walk {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The namespaces needed to hide paths could not be created.
    #[error("cannot create a private mount namespace to hide {count} denied paths: {reason}")]
    Namespace {
        /// How many paths needed hiding or protecting.
        count: usize,
        /// Why not.
        reason: String,
    },
    /// A mount that enforces a deny failed.
    #[error("cannot {what} `{path}`: {reason}")]
    Mount {
        /// What was attempted ("hide", "make read-only", "mount noexec").
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        reason: String,
    },
    /// A resource limit could not be set.
    #[error("cannot set the {what} limit: {reason}")]
    Limit {
        /// Which limit.
        what: &'static str,
        /// The error.
        reason: String,
    },
    /// The seccomp filter could not be built or installed.
    #[error("cannot install the seccomp filter: {0}")]
    Seccomp(String),
    /// The Landlock ruleset could not be built or enforced.
    #[error("cannot enforce the Landlock ruleset: {0}")]
    Landlock(String),
}

/// What confinement this machine can apply, as far as can be told without trying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Support {
    /// The Landlock ABI the kernel reports (the `landlock_create_ruleset` version call),
    /// `None` when Landlock is missing or disabled.
    pub landlock_abi: Option<u32>,
    /// Whether this user may create a user namespace: root, or the sysctls allow it
    /// (`user.max_user_namespaces` above 0, `kernel.unprivileged_userns_clone` not 0,
    /// `kernel.apparmor_restrict_unprivileged_userns` not 1). A container's seccomp
    /// profile can still refuse; [`confine_current_process`] then says so.
    pub user_namespaces: bool,
    /// Whether a private mount namespace can be had: through a user namespace, or as root.
    pub mount_namespace: bool,
    /// Whether the kernel has seccomp filters (`Seccomp:` in /proc/self/status).
    pub seccomp: bool,
}

impl Support {
    /// Whether a call can be confined here at all (Landlock is there).
    #[must_use]
    pub fn available(&self) -> bool {
        self.landlock_abi.is_some()
    }

    /// `full`, `partial` (Landlock without the mount namespace or seccomp: denies inside
    /// allowed trees are refused) or `none` (the call cannot be confined).
    #[must_use]
    pub fn level(&self) -> &'static str {
        match self.landlock_abi {
            None => "none",
            Some(_) if self.mount_namespace && self.seccomp => "full",
            Some(_) => "partial",
        }
    }
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(abi) = self.landlock_abi else {
            return if cfg!(target_os = "linux") {
                write!(
                    f,
                    "none: the kernel has no Landlock (older than 5.13, or not enabled at boot)"
                )
            } else {
                write!(
                    f,
                    "none: in-process confinement is Linux only (macOS uses a Seatbelt profile)"
                )
            };
        };
        write!(f, "{}: Landlock ABI {abi}", self.level())?;
        if self.user_namespaces {
            write!(f, ", user namespace")?;
        }
        if self.mount_namespace {
            write!(f, ", mount namespace")?;
        } else {
            write!(
                f,
                ", no mount namespace (deny globs inside allowed trees fail)"
            )?;
        }
        if self.seccomp {
            write!(f, ", seccomp")?;
        } else {
            write!(f, ", no seccomp")?;
        }
        Ok(())
    }
}

/// What [`confine_current_process`] applied.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Confinement {
    /// The Landlock ABI enforced (the lower of the kernel's and the one this crate targets).
    pub landlock_abi: u32,
    /// Whether every requested Landlock right was enforced (`false`: best effort on an
    /// older kernel, some rights not handled).
    pub landlock_full: bool,
    /// Whether Landlock holds TCP connect and bind (ABI 4 and later, when the network is
    /// not `any`).
    pub landlock_network: bool,
    /// Whether signals and abstract Unix sockets are scoped to the sandbox (ABI 6).
    pub landlock_scoped: bool,
    /// A user namespace was entered.
    pub user_namespace: bool,
    /// Every user and group id is mapped in it (root: its rights over files of every
    /// owner are kept). `false` for another user, who maps only itself, and for root when
    /// its map writer could not run: root then reaches other owners' files only as their
    /// permissions allow anyone.
    pub all_ids: bool,
    /// A private mount namespace was entered.
    pub mount_namespace: bool,
    /// A network namespace with nothing up was entered (network `none`).
    pub network_namespace: bool,
    /// Paths hidden (an empty mount over each).
    pub hidden: usize,
    /// Paths made read-only.
    pub read_only: usize,
    /// Folders mounted `noexec`.
    pub noexec: usize,
    /// How the process limit is held: `rlimit` (RLIMIT_NPROC), `cgroup` (a pids cgroup,
    /// for root, whom RLIMIT_NPROC does not bind), or `none` (no limit asked).
    pub process_limit: &'static str,
    /// The seccomp filter is installed.
    pub seccomp: bool,
}

impl fmt::Display for Confinement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Landlock ABI {}", self.landlock_abi)?;
        if !self.landlock_full {
            write!(f, " (best effort)")?;
        }
        let mut parts = Vec::new();
        if self.landlock_network {
            parts.push("TCP ports".to_owned());
        }
        if self.landlock_scoped {
            parts.push("signal and socket scoping".to_owned());
        }
        if self.user_namespace {
            parts.push(if self.all_ids {
                "user namespace".to_owned()
            } else {
                "user namespace (own ids only)".to_owned()
            });
        }
        if self.mount_namespace {
            parts.push("mount namespace".to_owned());
        }
        if self.network_namespace {
            parts.push("no network".to_owned());
        }
        parts.push(format!("{} hidden", self.hidden));
        parts.push(format!("{} read-only", self.read_only));
        parts.push(format!("{} noexec", self.noexec));
        if self.process_limit != "none" {
            parts.push(format!("process limit by {}", self.process_limit));
        }
        if self.seccomp {
            parts.push("seccomp".to_owned());
        }
        write!(f, ", {}", parts.join(", "))
    }
}

/// What confinement this machine can apply. Reads sysctls and /proc; creates nothing.
#[must_use]
pub fn probe() -> Support {
    #[cfg(target_os = "linux")]
    {
        linux::probe()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support {
            landlock_abi: None,
            user_namespaces: false,
            mount_namespace: false,
            seccomp: false,
        }
    }
}

/// Confines the current process to `envelope`, for the program it is about to `exec`.
///
/// Call it in a single-threaded process (the kernel refuses `unshare` of a user
/// namespace otherwise, and Landlock and seccomp apply to the calling thread), then
/// `exec` the program. In order: resolve the deny globs ([`hidden::resolve`]); enter a
/// user, mount (and, for network `none`, network) namespace; hide, make read-only and
/// mount `noexec`; set resource limits; install the seccomp filter; enforce Landlock.
///
/// # Errors
/// Anything that would leave the call less confined than the envelope says: no Landlock,
/// a deny glob that cannot be resolved within bounds, a deny that cannot be mounted, a
/// filter that cannot be installed. The process is then partly confined: do not run the
/// call, exit (125).
pub fn confine_current_process(envelope: &Envelope) -> Result<Confinement, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::confine(envelope)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = envelope;
        Err(SandboxError::Unsupported)
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::expect_used, reason = "tests")]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn support_says_what_is_available() {
        let full = Support {
            landlock_abi: Some(7),
            user_namespaces: true,
            mount_namespace: true,
            seccomp: true,
        };
        assert_eq!(full.level(), "full");
        assert_eq!(
            full.to_string(),
            "full: Landlock ABI 7, user namespace, mount namespace, seccomp"
        );
        let partial = Support {
            mount_namespace: false,
            user_namespaces: false,
            ..full
        };
        assert_eq!(
            partial.to_string(),
            "partial: Landlock ABI 7, no mount namespace (deny globs inside allowed trees fail), seccomp"
        );
        let none = Support {
            landlock_abi: None,
            ..full
        };
        assert_eq!(none.level(), "none");
        assert!(none.to_string().starts_with("none: "), "{none}");
    }

    #[test]
    fn confinement_says_what_was_applied() {
        let c = Confinement {
            landlock_abi: 7,
            landlock_full: true,
            landlock_network: false,
            landlock_scoped: true,
            user_namespace: true,
            all_ids: true,
            mount_namespace: true,
            network_namespace: true,
            hidden: 3,
            read_only: 1,
            noexec: 1,
            process_limit: "cgroup",
            seccomp: true,
        };
        assert_eq!(
            c.to_string(),
            "Landlock ABI 7, signal and socket scoping, user namespace, mount namespace, \
             no network, 3 hidden, 1 read-only, 1 noexec, process limit by cgroup, seccomp"
        );
    }

    #[test]
    fn the_envelope_reads_from_json() {
        let e: Envelope = serde_json::from_str(
            r#"{"reads":["/usr"],"writes":[],"exec":[],"deny_reads":["**/.env"],
                "deny_writes":[],"search":[],"noexec":[],"network":{"ports":[443]},
                "unix_sockets":false,"limits":{"processes":32,"file_size":null,"cpu_seconds":null}}"#,
        )
        .expect("envelope");
        assert_eq!(e.network, Network::Ports(vec![443]));
        assert!(e.check().is_ok());
        let relative = Envelope {
            writes: vec![PathBuf::from("/ok"), PathBuf::from("src")],
            ..e
        };
        assert_eq!(
            relative.check().map_err(|e| e.to_string()),
            Err("`src` in the envelope's `writes` is not an absolute path".to_owned())
        );
        assert_eq!(e.limits.processes, Some(32));
        assert_eq!(
            serde_json::to_value(Network::None).expect("json"),
            serde_json::json!("none")
        );
    }

    #[test]
    fn environment_globs_match_whole_names_ignoring_case() {
        use super::env_glob_matches as m;
        assert!(m("*TOKEN*", "GITHUB_TOKEN"));
        assert!(m("*TOKEN*", "gh_token"));
        assert!(m("*_KEY", "OPENAI_API_KEY"));
        assert!(!m("*_KEY", "KEYBOARD"));
        assert!(!m("*_KEY", "MY_KEY_ID"));
        assert!(m("*_KEY_*", "MY_KEY_ID"));
        assert!(m("DATABASE_URL", "database_url"));
        assert!(!m("DATABASE_URL", "DATABASE_URL_X"));
        assert!(m("A*B*C", "AXXBYYC"));
        assert!(!m("A*B*C", "AXXBYY"));
        assert!(m("*", ""));
        assert!(!m("X", ""));
        let envelope = super::Envelope {
            deny_env: vec!["*TOKEN*".into()],
            keep_env: vec!["GITHUB_TOKEN".into()],
            ..super::Envelope::default()
        };
        assert!(!envelope.denies_env("GITHUB_TOKEN"));
        assert!(envelope.denies_env("NPM_TOKEN"));
    }
}
