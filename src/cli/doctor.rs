//! `zero-policy doctor`: checks that the policy loads, that calls can be
//! confined on this machine (and are, by running a confined probe), and that
//! each agent's hook is installed and blocks a probe call.

use std::path::PathBuf;

use serde_json::Value;

use crate::cli::init::{self, Scope};
use crate::hooks::Agent;
use crate::sandbox;

/// `zero-policy doctor` arguments.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
Each check prints `ok`, `warn` or `fail` with what it found. Exit 0 when no
check failed, 1 when one did, 2 when it could not run.

Examples:
  zero-policy doctor                 # the policy, confinement, every agent
  zero-policy doctor claude-code     # one agent")]
pub struct Args {
    /// Check only this agent's hook.
    #[arg(value_enum)]
    pub agent: Option<Agent>,
    /// Policy and manifest files or folders, as `hook` reads them; default
    /// `$ZERO_POLICY_PATH`, else `~/.config/zero-policy/`, else the built-in default.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Ok,
    Warn,
    Fail,
}

struct Report {
    worst: Level,
    lines: String,
}

impl Report {
    fn say(&mut self, level: Level, what: &str, detail: &str) {
        let tag = match level {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Fail => "fail",
        };
        self.lines
            .push_str(&format!("{tag}  {what:<24} {detail}\n"));
        self.worst = self.worst.max(level);
    }
}

/// Runs `zero-policy doctor`.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let mut r = Report {
        worst: Level::Ok,
        lines: String::new(),
    };
    let source = crate::cli::hook::source(
        &args.paths,
        std::env::var_os("ZERO_POLICY_PATH"),
        crate::log::home(),
    );
    let loaded = match source.load(crate::loader::Purpose::Decide) {
        Ok(l) => l,
        Err(e) => {
            crate::output::error(&e.to_string());
            return crate::cli::EXIT_ERROR;
        }
    };
    let where_from = match &source {
        crate::cli::Source::Paths(p) => p
            .iter()
            .map(|x| x.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        crate::cli::Source::Builtin => "the built-in default".into(),
        crate::cli::Source::Bundle { bundle, .. } => {
            format!("the bundle, version {}", bundle.version())
        }
    };
    let registry = match &loaded.policy {
        Some(policy) => {
            r.say(
                Level::Ok,
                "policy",
                &format!("{} files load from {where_from}", policy.files.len()),
            );
            crate::Registry::new(policy).ok()
        }
        None => {
            let n = loaded
                .diagnostics
                .iter()
                .filter(|d| d.severity == crate::Severity::Error)
                .count();
            r.say(
                Level::Fail,
                "policy",
                &format!("{where_from} has {n} errors; run `zero-policy lint`: every hook call is blocked"),
            );
            None
        }
    };

    let support = sandbox::probe();
    if support.available() {
        r.say(Level::Ok, "confinement", &support.to_string());
        match confined_probe() {
            Ok(()) => r.say(
                Level::Ok,
                "confined probe",
                "a hidden file stayed unreadable and a write outside the envelope failed",
            ),
            Err(e) => r.say(Level::Fail, "confined probe", &e),
        }
    } else {
        let enforce = registry.as_ref().map(|reg| reg.settings().enforce.clone());
        let level = if enforce.is_some_and(|e| e.unconfined == crate::model::Unconfined::Run) {
            Level::Warn
        } else {
            Level::Fail
        };
        r.say(
            level,
            "confinement",
            &format!("{support}: `zero-policy run` refuses calls (exit 125) unless `settings.enforce.unconfined: run`"),
        );
    }

    let agents: Vec<Agent> = args.agent.map_or_else(|| Agent::ALL.to_vec(), |a| vec![a]);
    for agent in agents {
        let installed: Vec<PathBuf> = [Scope::Project, Scope::User]
            .into_iter()
            .filter_map(|s| init::settings_file(agent, s).ok())
            .filter(|p| has_hook(p, agent))
            .collect();
        let what = format!("hook {}", agent.as_str());
        if installed.is_empty() {
            let level = if args.agent.is_some() {
                Level::Fail
            } else {
                Level::Warn
            };
            r.say(
                level,
                &what,
                &format!("not installed; run `zero-policy init {}`", agent.as_str()),
            );
            continue;
        }
        let files = installed
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        r.say(Level::Ok, &what, &format!("in {files}"));
        if let Some(reg) = &registry {
            let blocked = probe_blocked(reg, agent);
            match blocked {
                Ok(()) => r.say(
                    Level::Ok,
                    &format!("{what} probe"),
                    "`cat ~/.ssh/id_rsa` is denied",
                ),
                Err(e) => r.say(Level::Fail, &format!("{what} probe"), &e),
            }
        }
    }
    crate::output::stdout(&r.lines);
    match r.worst {
        Level::Ok | Level::Warn => crate::cli::EXIT_OK,
        Level::Fail => crate::cli::EXIT_FAIL,
    }
}

/// Whether a settings file names `zero-policy hook AGENT` anywhere.
fn has_hook(path: &std::path::Path, agent: Agent) -> bool {
    fn any(v: &Value, agent: Agent) -> bool {
        match v {
            Value::String(s) => init::is_ours(s, agent),
            Value::Array(a) => a.iter().any(|x| any(x, agent)),
            Value::Object(m) => m.values().any(|x| any(x, agent)),
            _ => false,
        }
    }
    crate::loader::read_file(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| any(&v, agent))
}

/// The agent's probe event (its shell tool reading a private key) is denied.
fn probe_blocked(registry: &crate::Registry, agent: Agent) -> Result<(), String> {
    let tool = registry
        .tools()
        .find(|t| {
            t.agent.as_deref() == Some(agent.as_str())
                && crate::hooks::confine::shell_key(registry, &t.name).is_some()
        })
        .map(|t| t.name.clone())
        .ok_or_else(|| format!("no shell tool of {} in the manifests", agent.display()))?;
    let key = crate::hooks::confine::shell_key(registry, &tool).unwrap_or_else(|| "command".into());
    let call = crate::Call {
        tool: tool.clone(),
        args: serde_json::json!({ key: "cat ~/.ssh/id_rsa" }),
        session: crate::Session {
            agent: agent.as_str().into(),
            ..crate::Session::default()
        },
        confined: false,
    };
    let ev = registry.decide_call(&call);
    if ev.decision == crate::Decision::Deny {
        Ok(())
    } else {
        Err(format!(
            "`cat ~/.ssh/id_rsa` through `{tool}` is `{}`, not `deny`",
            ev.decision.as_str()
        ))
    }
}

/// Runs a confined probe: a file hidden by the envelope must stay unreadable,
/// and a write outside it must fail, as seen from outside afterwards.
fn confined_probe() -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("zero-policy-doctor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let secret = dir.join("work/secret.key");
    let outside = dir.join("outside");
    std::fs::create_dir_all(secret.parent().unwrap_or(&dir))
        .and_then(|()| std::fs::create_dir_all(&outside))
        .and_then(|()| std::fs::write(&secret, "doctor-canary"))
        .map_err(|e| format!("cannot set up the probe in {}: {e}", dir.display()))?;
    let work = dir.join("work");
    let envelope = sandbox::Envelope {
        reads: ["/usr", "/bin", "/lib", "/lib64", "/etc"]
            .iter()
            .map(PathBuf::from)
            .chain([work.clone()])
            .collect(),
        writes: vec![work.clone()],
        exec: ["/usr", "/bin", "/lib", "/lib64"]
            .iter()
            .map(PathBuf::from)
            .collect(),
        deny_reads: vec!["**/*.key".into()],
        search: vec![work.clone()],
        ..sandbox::Envelope::default()
    };
    let json = serde_json::to_string(&envelope).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let script = format!(
        "cat {0}; echo written > {1}/x",
        crate::escape::shell_quote(&secret.display().to_string()),
        crate::escape::shell_quote(&outside.display().to_string()),
    );
    let out = std::process::Command::new(exe)
        .args(["__confine", "--", "/bin/sh", "-c", &script])
        .env(crate::cli::run::ENVELOPE_VAR, json)
        .current_dir(&work)
        .output()
        .map_err(|e| format!("cannot start the probe: {e}"))?;
    let leaked = String::from_utf8_lossy(&out.stdout).contains("doctor-canary");
    let wrote = outside.join("x").exists();
    let _ = std::fs::remove_dir_all(&dir);
    match (leaked, wrote, out.status.code()) {
        (_, _, Some(125)) => Err(format!(
            "the probe could not be confined: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        (true, _, _) => Err("the hidden file was read inside the sandbox".into()),
        (_, true, _) => Err("a write outside the envelope succeeded".into()),
        _ => Ok(()),
    }
}
