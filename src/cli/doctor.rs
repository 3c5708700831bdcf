//! `zero-policy doctor`: checks that the policy loads, that calls can be
//! confined on this machine (and are, by running a confined probe), and that
//! each agent's hook is installed where the agent reads it, fails closed
//! where the agent can, is trusted where the agent asks for that, and, run as
//! installed, blocks a probe call.

use std::path::PathBuf;

use serde_json::Value;

use crate::cli::init::{self, Scope};
use crate::hooks::Agent;
use crate::sandbox;

/// `zero-policy doctor` arguments.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
Each check prints `ok`, `warn` or `fail` with what it found and, for a
problem, the fix. Exit 0 when no check failed, 1 when one did, 2 when it
could not run.

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
    /// Output format: `human`, or `json` (`{"ok", "checks": [{"check",
    /// "level", "detail"}]}`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: crate::cli::Format,
    /// The signed bundle the hooks take their policy from, as `hook` reads it.
    #[command(flatten)]
    pub bundle: crate::cli::BundleArgs,
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
    checks: Vec<Value>,
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
        self.checks.push(serde_json::json!({
            "check": what,
            "level": tag.trim(),
            "detail": detail,
        }));
        self.worst = self.worst.max(level);
    }
}

/// Runs `zero-policy doctor`.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let mut r = Report {
        worst: Level::Ok,
        lines: String::new(),
        checks: Vec::new(),
    };
    let source = match args.bundle.source(!args.paths.is_empty()) {
        None => crate::cli::hook::source(
            &args.paths,
            std::env::var_os("ZERO_POLICY_PATH"),
            crate::log::home(),
        ),
        Some(found) => match bundle_check(&mut r, found) {
            Some(source) => source,
            None => return finish(&r, args.format),
        },
    };
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
            if let Some(spec) = &policy.settings.shadow {
                shadow_check(&mut r, spec, &source);
            }
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
        let installed: Vec<(Scope, PathBuf)> = [Scope::Project, Scope::User, Scope::Managed]
            .into_iter()
            .filter_map(|s| init::settings_file(agent, s).ok().map(|p| (s, p)))
            .filter(|(_, p)| has_hook(p, agent))
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
            .map(|(s, p)| {
                if *s == Scope::Managed {
                    format!("{} (managed, for every user)", p.display())
                } else {
                    p.display().to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        r.say(Level::Ok, &what, &format!("in {files}"));
        agent_version(&mut r, agent);
        for (scope, file) in &installed {
            check_installed(&mut r, agent, *scope, file);
        }
    }
    finish(&r, args.format)
}

/// Prints the report and returns the exit code.
fn finish(r: &Report, format: crate::cli::Format) -> u8 {
    match format {
        crate::cli::Format::Human => crate::output::stdout(&r.lines),
        crate::cli::Format::Json => {
            let doc = serde_json::json!({"ok": r.worst != Level::Fail, "checks": r.checks});
            crate::output::stdout(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
    }
    match r.worst {
        Level::Ok | Level::Warn => crate::cli::EXIT_OK,
        Level::Fail => crate::cli::EXIT_FAIL,
    }
}

/// The bundle check: the version in force (the bundle's, or the last good
/// one's with why the bundle was refused), or a failure when there is none,
/// and then no source to check further.
fn bundle_check(
    r: &mut Report,
    found: Result<crate::bundle::source::BundleSource, String>,
) -> Option<crate::cli::Source> {
    let resolved = found.and_then(|src| {
        let resolved = src.resolve(crate::bundle::source::cache_root().as_deref())?;
        Ok((src, resolved))
    });
    match resolved {
        Ok((src, resolved)) => {
            let version = resolved.bundle.version().to_string();
            let at = src.location.display().to_string();
            match &resolved.note {
                None => r.say(
                    Level::Ok,
                    "bundle",
                    &format!("version {version} from {at}, signature verified"),
                ),
                Some(note) => r.say(
                    Level::Warn,
                    "bundle",
                    &format!("version {version} in force (the last good one): {note}"),
                ),
            }
            Some(crate::cli::Source::Bundle {
                bundle: Box::new(resolved.bundle),
                places: src.places(),
            })
        }
        Err(e) => {
            r.say(
                Level::Fail,
                "bundle",
                &format!("{e}: with no good bundle, every hook call is blocked"),
            );
            None
        }
    }
}

/// The shadow check: the shadow policy loads, or is ignored (a warning:
/// the policy in force still decides every call).
fn shadow_check(r: &mut Report, spec: &crate::policy::Shadow, source: &crate::cli::Source) {
    match crate::shadow::load(
        spec,
        crate::loader::Purpose::Decide,
        &source.places(),
        false,
    ) {
        Ok(shadow) => {
            let from = match &shadow.bundle {
                Some(v) => format!("{}, version {v}", crate::shadow::describe(spec)),
                None => crate::shadow::describe(spec),
            };
            let note = shadow
                .note
                .as_ref()
                .map_or_else(String::new, |n| format!(" ({n})"));
            r.say(
                if shadow.note.is_some() {
                    Level::Warn
                } else {
                    Level::Ok
                },
                "shadow policy",
                &format!(
                    "{} files load from {from}{note}; each call's log line says what it would decide",
                    shadow.policy.files.len()
                ),
            );
        }
        Err(why) => r.say(
            Level::Warn,
            "shadow policy",
            &format!(
                "{}; the policy in force decides alone",
                crate::shadow::failure(spec, &why)
            ),
        ),
    }
}

/// The agent's program on `PATH` and its version, as `--version` prints it.
fn agent_version(r: &mut Report, agent: Agent) {
    let program = match agent {
        Agent::ClaudeCode => "claude",
        Agent::Codex => "codex",
        Agent::GeminiCli => "gemini",
        Agent::Cursor => "cursor-agent",
        Agent::Copilot => "copilot",
    };
    let what = format!("{} version", agent.as_str());
    let mut cmd = std::process::Command::new(program);
    cmd.arg("--version");
    match run_with_timeout(cmd, None) {
        Ok((_, out)) => {
            let first = out.lines().next().unwrap_or_default().trim().to_string();
            r.say(Level::Ok, &what, &format!("`{program} --version`: {first}"));
        }
        Err(e) => r.say(
            Level::Warn,
            &what,
            &format!("`{program}` does not run from `PATH` ({e}): its version is not checked"),
        ),
    }
}

/// The handlers in a settings document that run `zero-policy hook AGENT`.
fn our_handlers(v: &Value, agent: Agent) -> Vec<serde_json::Map<String, Value>> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            let ours = ["command", "bash"].iter().any(|k| {
                m.get(*k)
                    .and_then(Value::as_str)
                    .is_some_and(|c| init::is_ours(c, agent))
            }) || init::is_our_http(v, agent);
            if ours {
                out.push(m.clone());
            } else {
                for x in m.values() {
                    out.extend(our_handlers(x, agent));
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                out.extend(our_handlers(x, agent));
            }
        }
        _ => {}
    }
    out
}

/// One settings file's hook: fails closed where the agent can, is trusted
/// where the agent asks for it, and blocks a probe call when run as written.
fn check_installed(r: &mut Report, agent: Agent, scope: Scope, file: &std::path::Path) {
    let what = format!("hook {}", agent.as_str());
    let root = read_settings(file).unwrap_or(Value::Null);
    let handlers = our_handlers(&root, agent);
    let fix = |extra: &str| {
        format!(
            "run `{}zero-policy init {}{}{extra}`",
            if scope == Scope::Managed { "sudo " } else { "" },
            agent.as_str(),
            match scope {
                Scope::Project => "",
                Scope::User => " --user",
                Scope::Managed => " --managed",
            }
        )
    };
    let fix_init = fix("");
    let fix_trust = fix(" --trust");
    // Fails closed on a hook failure or timeout.
    let closed = match agent {
        Agent::ClaudeCode => Some(("onFailure", Value::from("block"))),
        Agent::Cursor => Some(("failClosed", Value::from(true))),
        Agent::Codex | Agent::GeminiCli | Agent::Copilot => None,
    };
    match closed {
        Some((key, want)) if handlers.iter().all(|h| h.get(key) == Some(&want)) => r.say(
            Level::Ok,
            &format!("{what} fail-closed"),
            &format!("`{key}: {want}`: a hook that fails or times out blocks the call"),
        ),
        Some((key, want)) => r.say(
            Level::Fail,
            &format!("{what} fail-closed"),
            &format!("`{key}: {want}` is missing in {}: a hook that times out lets the call run; {fix_init}", file.display()),
        ),
        None => r.say(
            Level::Warn,
            &format!("{what} fail-closed"),
            &format!("{} has no setting to block a call when its hook times out: the hook answers in milliseconds and `init` writes a 30 s timeout", agent.display()),
        ),
    }
    if scope == Scope::Managed {
        managed_check(r, agent, &root);
        if agent == Agent::GeminiCli {
            gemini_secure_check(r, file);
        }
    }
    // Trust.
    let project = scope == Scope::Project;
    let trust = |r: &mut Report, ok: bool, detail: String| {
        let level = if ok { Level::Ok } else { Level::Fail };
        r.say(level, &format!("{what} trust"), &detail);
    };
    match agent {
        Agent::Codex if scope == Scope::Managed => trust(
            r,
            true,
            format!(
                "Codex runs a hook from {} as managed, with no `/hooks` review",
                file.display()
            ),
        ),
        Agent::Codex => {
            let absolute = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
            let config_path = std::env::var_os("CODEX_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| crate::log::home().map(|h| h.join(".codex")))
                .map(|d| d.join("config.toml"))
                .unwrap_or_default();
            let config = crate::loader::read_file(&config_path).unwrap_or_default();
            let trusted = init::codex_hook_identity(&absolute, &root).is_some_and(|(key, hash)| {
                init::codex_toml_value(&config, "hooks", &key, "trusted_hash").as_deref()
                    == Some(hash.as_str())
            });
            if trusted {
                trust(
                    r,
                    true,
                    format!(
                        "Codex trusts the hook by its hash in {}",
                        config_path.display()
                    ),
                );
            } else {
                trust(
                    r,
                    false,
                    format!(
                        "Codex does not trust this hook (no matching `trusted_hash` in {}) and skips it silently; {fix_trust}",
                        config_path.display()
                    ),
                );
            }
            if project {
                let dir = absolute
                    .parent()
                    .and_then(std::path::Path::parent)
                    .map(|d| d.display().to_string())
                    .unwrap_or_default();
                let ok = init::codex_toml_value(&config, "projects", &dir, "trust_level")
                    .as_deref()
                    == Some("trusted");
                if ok {
                    trust(r, true, format!("Codex trusts the project `{dir}`"));
                } else {
                    trust(
                        r,
                        false,
                        format!(
                            "Codex reads `.codex/hooks.json` only in a trusted project, and `{dir}` is not; {fix_trust}"
                        ),
                    );
                }
            }
        }
        Agent::GeminiCli | Agent::Copilot if project => {
            let dir = std::env::current_dir().unwrap_or_default();
            let trust_file = init::folder_trust_file(agent).unwrap_or_default();
            let text = crate::loader::read_file(&trust_file).unwrap_or_default();
            if init::folder_trusted(agent, &text, &dir) == Some(true) {
                trust(
                    r,
                    true,
                    format!(
                        "`{}` is a trusted folder in {}",
                        dir.display(),
                        trust_file.display()
                    ),
                );
            } else {
                trust(
                    r,
                    false,
                    format!(
                        "{} loads this project's hooks only in a trusted folder, and `{}` is not trusted in {}; {fix_trust}",
                        agent.display(),
                        dir.display(),
                        trust_file.display()
                    ),
                );
            }
        }
        _ => {}
    }
    // Fires and blocks: each handler's command, run as the agent runs it;
    // an `http` hook's service, asked by the `--via` client.
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("zero-policy"));
    let mut commands: Vec<String> = handlers
        .iter()
        .filter_map(|h| match h.get("command").or_else(|| h.get("bash")) {
            Some(c) => c.as_str().map(String::from),
            None => h.get("url").and_then(Value::as_str).map(|url| {
                let suffix = format!("{}{}", crate::cli::hook_service::PREFIX, agent.as_str());
                format!(
                    "{} --via {}",
                    init::hook_command(&exe, agent),
                    init::shell_quote(url.strip_suffix(&suffix).unwrap_or(url))
                )
            }),
        })
        .collect();
    commands.dedup();
    for url in handlers
        .iter()
        .filter(|h| h.get("command").is_none() && h.get("bash").is_none())
        .filter_map(|h| h.get("url").and_then(Value::as_str))
    {
        let up = crate::cli::hook_via::parse_url(url).is_ok_and(|s| s.is_listening());
        if !up {
            r.say(
                Level::Warn,
                &format!("{what} service"),
                &format!(
                    "nothing answers at `{url}`: every call is blocked until `zero-policy serve --hooks` runs there"
                ),
            );
        }
    }
    for command in &commands {
        match probe(agent, command) {
            Ok(how) => r.say(
                Level::Ok,
                &format!("{what} probe"),
                &format!("run as installed, it blocks `cat ~/.ssh/id_rsa` ({how})"),
            ),
            Err(e) => r.say(Level::Fail, &format!("{what} probe"), &e),
        }
    }
}

/// The agent's pre-tool event for its shell tool running `command`.
fn probe_event(agent: Agent, command: &str, cwd: &str) -> Value {
    use serde_json::json;
    match agent {
        Agent::ClaudeCode | Agent::Codex => json!({
            "session_id": "zero-policy-doctor", "transcript_path": "", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command},
            "tool_use_id": "zero-policy-doctor", "turn_id": "zero-policy-doctor", "model": "doctor",
        }),
        Agent::GeminiCli => json!({
            "session_id": "zero-policy-doctor", "transcript_path": "", "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00Z",
            "tool_name": "run_shell_command", "tool_input": {"command": command},
        }),
        Agent::Cursor => json!({
            "conversation_id": "zero-policy-doctor", "generation_id": "zero-policy-doctor",
            "hook_event_name": "beforeShellExecution", "command": command, "cwd": cwd,
            "workspace_roots": [cwd],
        }),
        Agent::Copilot => json!({
            "timestamp": 0, "cwd": cwd, "sessionId": "zero-policy-doctor",
            "toolName": "bash", "toolArgs": {"command": command},
        }),
    }
}

/// Runs a hook command with the probe event; `Ok(how it blocked)`.
fn probe(agent: Agent, command: &str) -> Result<String, String> {
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "/".into());
    let event = probe_event(agent, "cat ~/.ssh/id_rsa", &cwd).to_string();
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.args(["-c", command]);
    let (code, out) =
        run_with_timeout(cmd, Some(event)).map_err(|e| format!("`{command}` does not run: {e}"))?;
    if code == Some(2) {
        return Ok("exit 2".into());
    }
    let answer: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
    let decision = answer
        .pointer("/hookSpecificOutput/permissionDecision")
        .or_else(|| answer.get("permissionDecision"))
        .or_else(|| answer.get("decision"))
        .or_else(|| answer.get("permission"))
        .and_then(Value::as_str);
    match (code, decision) {
        (Some(0), Some("deny")) => Ok("a deny".into()),
        _ => Err(format!(
            "`{command}` did not block `cat ~/.ssh/id_rsa`: exit {}, answer `{}`",
            code.map_or_else(|| "by a signal".into(), |c| c.to_string()),
            out.trim()
        )),
    }
}

/// Runs `cmd` (with `input` on stdin), for at most 30 seconds: its exit
/// code and standard output.
fn run_with_timeout(
    mut cmd: std::process::Command,
    input: Option<String>,
) -> Result<(Option<i32>, String), String> {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if started.elapsed() > std::time::Duration::from_secs(30) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("no answer in 30 s".into());
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    };
    Ok((status.code(), reader.join().unwrap_or_default()))
}

/// Whether a settings file names `zero-policy hook AGENT` anywhere.
fn has_hook(path: &std::path::Path, agent: Agent) -> bool {
    fn any(v: &Value, agent: Agent) -> bool {
        if init::is_our_http(v, agent) {
            return true;
        }
        match v {
            Value::String(s) => init::is_ours(s, agent),
            Value::Array(a) => a.iter().any(|x| any(x, agent)),
            Value::Object(m) => m.values().any(|x| any(x, agent)),
            _ => false,
        }
    }
    read_settings(path).is_some_and(|v| any(&v, agent))
}

/// A settings file as JSON: Codex's `requirements.toml` read as TOML.
fn read_settings(path: &std::path::Path) -> Option<Value> {
    let text = crate::loader::read_file(path).ok()?;
    if path.extension().is_some_and(|e| e == "toml") {
        let doc: toml::Table = text.parse().ok()?;
        serde_json::to_value(doc).ok()
    } else {
        serde_json::from_str(&text).ok()
    }
}

/// Gemini CLI reads its system settings only when the file and every
/// folder above it are root's and not writable by group or others (0.61:
/// "Skipping system settings file … is insecure").
fn gemini_secure_check(r: &mut Report, file: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let what = "hook gemini-cli owner";
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let insecure = absolute.ancestors().find_map(|p| {
        let meta = std::fs::metadata(p).ok()?;
        (meta.uid() != 0 || meta.mode() & 0o022 != 0).then(|| {
            format!(
                "`{}` (uid {}, mode {:o})",
                p.display(),
                meta.uid(),
                meta.mode() & 0o7777
            )
        })
    });
    match insecure {
        None => r.say(
            Level::Ok,
            what,
            "the file and every folder above it are root's and not writable by others, as Gemini CLI asks",
        ),
        Some(p) => r.say(
            Level::Fail,
            what,
            &format!(
                "Gemini CLI skips system settings when a folder above them, or the file, is not root's or is writable by group or others, and {p} is: `sudo chown root:root` it and `sudo chmod g-w,o-w` it"
            ),
        ),
    }
}

/// A managed installation: whether users can still take the hook out or
/// run around it (`init --managed --lock`), as far as the agent lets an
/// admin stop them.
fn managed_check(r: &mut Report, agent: Agent, root: &Value) {
    let what = format!("hook {} lock", agent.as_str());
    let set = |key: &str| root.pointer(key) == Some(&Value::Bool(true));
    let (level, detail) = match agent {
        Agent::ClaudeCode if set("/allowManagedHooksOnly") => (
            Level::Ok,
            "`allowManagedHooksOnly: true`: only managed hooks run".to_string(),
        ),
        Agent::Codex if set("/allow_managed_hooks_only") => (
            Level::Ok,
            "`allow_managed_hooks_only = true`: only managed hooks run".to_string(),
        ),
        Agent::GeminiCli if set("/hooksConfig/enabled") => (
            Level::Ok,
            "`hooksConfig.enabled: true` overrides a user's switch; a user can still list `zero-policy` in `hooksConfig.disabled`".to_string(),
        ),
        Agent::ClaudeCode | Agent::Codex | Agent::GeminiCli => (
            Level::Warn,
            format!(
                "users' own hooks run beside the managed one; to run only managed hooks, run `sudo zero-policy init {} --managed --lock`",
                agent.as_str()
            ),
        ),
        Agent::Cursor | Agent::Copilot => (
            Level::Ok,
            format!("{} has no setting to run only managed hooks", agent.display()),
        ),
    };
    r.say(level, &what, &detail);
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
