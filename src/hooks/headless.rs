//! Whether anyone is there to answer an agent's own `ask`.
//!
//! Gemini CLI honours a hook's `ask` by showing its confirmation, and under
//! `gemini -p` (or with no terminal, or in CI) there is nobody to confirm:
//! the run waits for ever. So the hook looks at the Gemini process it runs
//! under and applies Gemini's own rule (`isHeadlessMode` in
//! `packages/core/src/utils/headless.ts` of Gemini CLI 0.61): headless when
//! `CI` or `GITHUB_ACTIONS` is `true` (unless `GEMINI_CLI_INTEGRATION_TEST`
//! is), when its standard input or output is not a terminal, or when it was
//! given `-p`/`--prompt`; `-i`/`--prompt-interactive` is interactive. Where
//! it is headless, a `prompt` follows `settings.on_prompt` instead of asking.

use std::path::Path;

/// What is known of one process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Process {
    /// Its arguments, the program first.
    pub argv: Vec<String>,
    /// Its environment variables that matter here, `NAME=value`.
    pub env: Vec<String>,
    /// Whether its standard input is a terminal.
    pub stdin_tty: bool,
    /// Whether its standard output is a terminal.
    pub stdout_tty: bool,
}

/// The index after the Gemini CLI script in `argv`, if `argv` runs Gemini CLI.
fn gemini_args(argv: &[String]) -> Option<usize> {
    argv.iter().take(4).position(|a| {
        let name = Path::new(a)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        matches!(name.as_str(), "gemini" | "gemini.js" | "gemini.mjs")
    })
}

/// Gemini CLI's own rule, on the Gemini process: `Some(why)` when headless.
#[must_use]
pub fn gemini_headless(p: &Process) -> Option<String> {
    let start = gemini_args(&p.argv)? + 1;
    let args = &p.argv[start.min(p.argv.len())..];
    let has_env = |name: &str| p.env.iter().any(|e| e == &format!("{name}=true"));
    if args
        .iter()
        .any(|a| a == "-i" || a == "--prompt-interactive" || a.starts_with("--prompt-interactive="))
    {
        return None;
    }
    if !has_env("GEMINI_CLI_INTEGRATION_TEST") {
        for var in ["CI", "GITHUB_ACTIONS"] {
            if has_env(var) {
                return Some(format!("it runs with `{var}=true`"));
            }
        }
    }
    if let Some(flag) = args.iter().find(|a| {
        *a == "-p" || *a == "--prompt" || a.starts_with("--prompt=") || a.starts_with("-p=")
    }) {
        let flag = flag.split('=').next().unwrap_or(flag);
        return Some(format!("it runs with `{flag}`"));
    }
    if !p.stdin_tty || !p.stdout_tty {
        return Some("it runs with no terminal".into());
    }
    None
}

/// The ancestors of this process, nearest first, up to `depth`.
#[cfg(target_os = "linux")]
fn ancestors(depth: usize) -> Vec<Process> {
    let mut out = Vec::new();
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..depth {
        if pid <= 1 {
            break;
        }
        let dir = Path::new("/proc").join(pid.to_string());
        let argv: Vec<String> = std::fs::read(dir.join("cmdline"))
            .map(|b| {
                b.split(|c| *c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let env: Vec<String> = std::fs::read(dir.join("environ"))
            .map(|b| {
                b.split(|c| *c == 0)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .filter(|e| {
                        ["CI=", "GITHUB_ACTIONS=", "GEMINI_CLI_INTEGRATION_TEST="]
                            .iter()
                            .any(|k| e.starts_with(k))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let tty = |fd: &str| {
            std::fs::read_link(dir.join("fd").join(fd)).is_ok_and(|t| {
                let t = t.to_string_lossy();
                t.starts_with("/dev/pts/") || t.starts_with("/dev/tty")
            })
        };
        out.push(Process {
            stdin_tty: tty("0"),
            stdout_tty: tty("1"),
            argv,
            env,
        });
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        // `pid (comm) state ppid ...`; the name may hold spaces and parentheses.
        pid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
    }
    out
}

#[cfg(not(target_os = "linux"))]
fn ancestors(_depth: usize) -> Vec<Process> {
    Vec::new()
}

/// Why nobody can answer `agent`'s own `ask` in this run, if that is so.
#[must_use]
pub fn nobody_to_ask(agent: super::Agent) -> Option<String> {
    if agent != super::Agent::GeminiCli {
        return None;
    }
    // The hook runs under a shell Gemini starts; Gemini may run as a child of
    // its own launcher.
    ancestors(6)
        .iter()
        .find(|p| gemini_args(&p.argv).is_some())
        .and_then(gemini_headless)
}

/// How a decision learns whether anyone can answer the agent's `ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asker {
    /// Look at the processes this one runs under (`zero-policy hook`).
    Probe,
    /// Told by whoever sent the event: `Some(why)` when nobody can answer
    /// (the `hook --via` client looked at its own processes and said so to
    /// `serve --hooks`).
    Told(Option<String>),
}

impl Asker {
    /// Why nobody can answer `agent`'s own `ask` for this event, if that is so.
    #[must_use]
    pub fn nobody_to_ask(&self, agent: super::Agent) -> Option<String> {
        match self {
            Asker::Probe => nobody_to_ask(agent),
            Asker::Told(why) if agent == super::Agent::GeminiCli => why.clone(),
            Asker::Told(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemini(args: &[&str], env: &[&str], tty: bool) -> Process {
        Process {
            argv: [
                "node",
                "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js",
            ]
            .iter()
            .chain(args)
            .map(|s| (*s).to_string())
            .collect(),
            env: env.iter().map(|s| (*s).to_string()).collect(),
            stdin_tty: tty,
            stdout_tty: tty,
        }
    }

    #[test]
    fn gemini_is_headless_by_its_own_rule() {
        for (p, want) in [
            (gemini(&[], &[], true), None),
            (gemini(&["-p", "hi"], &[], true), Some("it runs with `-p`")),
            (
                gemini(&["--prompt=hi"], &[], true),
                Some("it runs with `--prompt`"),
            ),
            (gemini(&["-i", "hi"], &[], false), None),
            (gemini(&[], &[], false), Some("it runs with no terminal")),
            (
                gemini(&[], &["CI=true"], true),
                Some("it runs with `CI=true`"),
            ),
            (
                gemini(&[], &["CI=true", "GEMINI_CLI_INTEGRATION_TEST=true"], true),
                None,
            ),
            (
                Process {
                    argv: vec!["bash".into(), "-c".into(), "x".into()],
                    ..Process::default()
                },
                None,
            ),
        ] {
            assert_eq!(gemini_headless(&p).as_deref(), want, "{p:?}");
        }
    }

    #[test]
    fn other_agents_are_never_probed() {
        assert_eq!(nobody_to_ask(super::super::Agent::ClaudeCode), None);
    }
}
