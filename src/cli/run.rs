//! `zero-policy run`: decide a shell call through the dispatch path, then run
//! it confined by the kernel to the envelope the policy allows it (SPEC §11).

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use crate::bundle::source::Resolved;
use crate::call::{Call, Session};
use crate::cli::Source;
use crate::model::{Decision, Unconfined};
use crate::policy::Policy;
use crate::registry::Registry;
use crate::sandbox;

/// Exit code: the call was denied or rejected (as a shell's "cannot execute").
pub const EXIT_DENIED: u8 = 126;
/// Exit code: the call could not be confined, or `run` itself failed.
pub const EXIT_CANNOT_CONFINE: u8 = 125;

pub use crate::sandbox::plan::ENVELOPE_VAR;

/// `zero-policy run` arguments.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
Examples:
  zero-policy run -c 'cargo test'
  zero-policy run --agent claude-code -c 'grep -rn TODO src'
  zero-policy run -- git status

Exit status: the program's own; 128+N when it was killed by signal N;
126 when the call is denied or rejected (the reason on stderr); 125 when it
cannot be confined (no Landlock, an envelope that cannot be built) or `run`
itself failed. With `settings.enforce.unconfined: run`, a call that cannot
be confined runs without confinement, saying so on stderr.")]
pub struct Args {
    /// The script to decide and run, as the shared shell tool `bash` runs it.
    #[arg(short = 'c', value_name = "SCRIPT", conflicts_with = "program")]
    pub script: Option<String>,
    /// The agent the call is made for (`claude-code`, `codex`, …); it is recorded in `session.agent`.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Session settings: `mode=plan`, `workspace=/path`, `labels.KEY=VALUE` (the workspace
    /// defaults to the current folder).
    #[arg(long = "session", value_name = "KEY=VALUE")]
    pub session: Vec<String>,
    /// The shell that runs `-c SCRIPT` (default: bash where it is installed, else sh).
    #[arg(long, value_name = "PATH")]
    pub shell: Option<PathBuf>,
    /// Policy and manifest files or folders, `:`-separated in one argument or repeated;
    /// default `$ZERO_POLICY_PATH`, else `~/.config/zero-policy/`, else the built-in default.
    #[arg(long = "policy", value_name = "PATHS")]
    pub policy: Vec<OsString>,
    /// A ticket left by `zero-policy hook` for a call the person approved in the agent:
    /// a `prompt` is then taken as approved (a deny stays a deny). Used once.
    #[arg(long, value_name = "ID")]
    pub ticket: Option<String>,
    /// Write the folder where the script ended to this open descriptor (the hooks'
    /// rewrite keeps the agent's shell there).
    #[arg(long, value_name = "FD")]
    pub cwd_fd: Option<u32>,
    /// Trace the confined call (with strace) and report what the sandbox refused it:
    /// on stderr, and as `blocked` in the decision log line, written when it ends.
    #[arg(long)]
    pub findings: bool,
    /// Decide and print the envelope as JSON instead of running the call.
    #[arg(long)]
    pub print_envelope: bool,
    /// The signed bundle to take the policy from, instead of `--policy`.
    #[command(flatten)]
    pub bundle: crate::cli::BundleArgs,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
}

/// The call as a script: `-c SCRIPT`, or the program's words quoted for a shell.
fn script_of(args: &Args) -> Result<String, String> {
    if let Some(s) = &args.script {
        return Ok(s.clone());
    }
    if args.program.is_empty() {
        return Err("give the call as `-c SCRIPT` or as `-- PROGRAM ARGS…`".into());
    }
    Ok(args
        .program
        .iter()
        .map(|w| crate::escape::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" "))
}

/// Where the policy comes from: a bundle (verified, or the last good one),
/// else the paths given, the environment's, or the built-in default.
fn source(args: &Args) -> Result<(Source, Option<Resolved>), String> {
    let paths: Vec<PathBuf> = args
        .policy
        .iter()
        .flat_map(|p| std::env::split_paths(p).collect::<Vec<_>>())
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    if let Some(bundle) = args.bundle.source(!paths.is_empty()) {
        let bundle = bundle?;
        let resolved = bundle.resolve(crate::bundle::source::cache_root().as_deref())?;
        if let Some(note) = &resolved.note {
            crate::output::stderr(&format!("zero-policy: {note}\n"));
        }
        return Ok((
            Source::Bundle {
                bundle: Box::new(resolved.bundle.clone()),
                places: bundle.places(),
            },
            Some(resolved),
        ));
    }
    Ok((
        crate::cli::hook::source(
            &paths,
            std::env::var_os("ZERO_POLICY_PATH"),
            crate::log::home(),
        ),
        None,
    ))
}

fn load(source: &Source) -> Result<(Policy, Registry), String> {
    let loaded = source
        .load_cached(crate::loader::Purpose::Decide)
        .map_err(|e| e.to_string())?;
    let Some(policy) = loaded.policy else {
        let first = loaded
            .diagnostics
            .iter()
            .find(|d| d.severity == crate::Severity::Error)
            .map_or_else(String::new, |d| format!(": {}{}", d.place(), d.message));
        return Err(format!(
            "the policy does not load{first}; run `zero-policy lint` on it"
        ));
    };
    let mut registry =
        Registry::new(&policy).map_err(|e| format!("the policy cannot be used: {e}"))?;
    registry.guard(source.places());
    registry
        .ground_in_host(
            crate::effects::ground::Host::within(policy.settings.walk_time),
            &policy.lists,
        )
        .map_err(|e| format!("the policy cannot be used: {e}"))?;
    Ok((policy, registry))
}

fn fail(code: u8, why: &str) -> u8 {
    crate::output::stderr(&format!("zero-policy: {why}\n"));
    code
}

/// Runs `zero-policy run`.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let started = Instant::now();
    // One call, as in `hook`: glob lists build their automata only if the
    // call compares a pattern with them (`lint` builds them all).
    crate::effects::globs::defer_automata(true);
    let script = match script_of(args) {
        Ok(s) => s,
        Err(e) => return fail(crate::cli::EXIT_ERROR, &e),
    };
    let mut session = Session::default();
    if let Some(agent) = &args.agent {
        session.agent.clone_from(agent);
    }
    for kv in &args.session {
        if let Err(e) = crate::cli::explain::apply_session(&mut session, kv) {
            return fail(crate::cli::EXIT_ERROR, &e);
        }
    }
    let support = sandbox::probe();
    let (source, bundle) = match source(args) {
        Ok(x) => x,
        Err(e) => return fail(EXIT_DENIED, &format!("the call is refused: {e}")),
    };
    let (policy, registry) = match load(&source) {
        Ok(x) => x,
        Err(e) => return fail(EXIT_DENIED, &format!("the call is refused: {e}")),
    };
    let settings = registry.settings();
    let can_confine = support.available();
    let call = Call {
        tool: "bash".into(),
        args: serde_json::json!({ "command": script }),
        session,
        confined: can_confine,
    };
    let ev = registry.decide_with_effects(&call);
    let reason = ev.reason.clone().unwrap_or_default();
    let mut decision = ev.decision;
    if decision == Decision::Prompt {
        decision = match &args.ticket {
            Some(t) => match crate::hooks::confine::redeem(t, &script, &call.session.workspace) {
                Ok(()) => Decision::Allow,
                Err(e) => {
                    crate::output::stderr(&format!(
                        "zero-policy: the ticket is not accepted: {e}\n"
                    ));
                    Decision::Prompt
                }
            },
            None => ask(&reason),
        };
    }
    let shadow = shadow_record(&registry, &source, &call);
    if !(args.findings && decision == Decision::Allow) {
        log(
            (&policy, &registry, bundle.as_ref()),
            (&call, &ev, shadow.as_ref()),
            decision,
            started,
            &[],
        );
    }
    match decision {
        Decision::Allow => {}
        Decision::Prompt | Decision::Deny | Decision::Reject => {
            let why = ev
                .reject_reason
                .clone()
                .filter(|_| ev.decision == Decision::Reject)
                .unwrap_or(reason);
            let what = if ev.decision == Decision::Prompt {
                "not approved"
            } else {
                ev.decision.as_str()
            };
            return fail(EXIT_DENIED, &format!("{what}: {why}"));
        }
    }
    let Some(fx) = ev.effects.clone() else {
        return fail(
            EXIT_CANNOT_CONFINE,
            "cannot confine the call: its effects were not computed",
        );
    };
    let cx = sandbox::plan::Context {
        enforce: &settings.enforce,
        lists: &policy.lists,
        home: &settings.home,
        workspace: &call.session.workspace,
    };
    let envelope = match sandbox::plan::envelope(&cx, &fx) {
        Ok(e) => e,
        Err(e) => {
            return fail(
                EXIT_CANNOT_CONFINE,
                &format!("cannot confine the call: {e}"),
            );
        }
    };
    if args.print_envelope {
        let text = serde_json::to_string_pretty(&envelope).unwrap_or_default();
        crate::output::stdout(&format!("{text}\n"));
        return crate::cli::EXIT_OK;
    }
    let shell = args.shell.clone().unwrap_or_else(default_shell);
    let run_script = match args.cwd_fd {
        // Where the script ends is reported however it ends (an `exit`
        // included); the decision was made on the script as given.
        Some(fd) => format!("trap 'pwd -P >&{fd} 2>/dev/null' EXIT\n{script}"),
        None => script.clone(),
    };
    let argv: Vec<OsString> = if args.script.is_some() {
        vec![shell.into_os_string(), "-c".into(), run_script.into()]
    } else {
        args.program.iter().map(OsString::from).collect()
    };
    if !can_confine {
        if settings.enforce.unconfined == Unconfined::Run {
            crate::output::stderr(&format!(
                "zero-policy: running unconfined ({}); `settings.enforce.unconfined: run` allows it\n",
                support
            ));
            return wait_for(std::process::Command::new(&argv[0]).args(&argv[1..]));
        }
        return fail(
            EXIT_CANNOT_CONFINE,
            &format!(
                "cannot confine the call: {support}; set `settings.enforce.unconfined: run` to run it anyway"
            ),
        );
    }
    let words: Vec<String> = argv
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let confined = match sandbox::plan::confined_command(&envelope, &words[0], &words[1..]) {
        Ok(c) => c,
        Err(e) => {
            return fail(
                EXIT_CANNOT_CONFINE,
                &format!("cannot confine the call: {e}"),
            );
        }
    };
    // Protected places the call could create (they are missing now) are
    // removed again if it does.
    let missing = sandbox::protect::missing(&envelope);
    let keep = args.cwd_fd.map(|fd| fd.to_string()).unwrap_or_default();
    if !args.findings {
        let mut cmd = std::process::Command::new(&confined.program);
        cmd.args(&confined.args)
            .env(&confined.env.0, &confined.env.1)
            .env(crate::cli::confine::KEEP_FDS_VAR, &keep);
        // Root's maps are written from here rather than by a writer the confining
        // process would start (a program fewer per call).
        let mapper = sandbox::idmap::Mapper::new();
        if let Some(m) = &mapper {
            let (name, value) = m.env();
            cmd.env(name, value);
        }
        std::mem::forget((policy, registry));
        let code = wait_for_mapped(&mut cmd, mapper);
        for p in missing.undo() {
            crate::output::stderr(&format!("zero-policy: blocked: {}\n", created(&p)));
        }
        return code;
    }
    let (code, blocked) = run_traced(&confined, &keep);
    let mut blocked: Vec<String> = blocked.iter().map(ToString::to_string).collect();
    blocked.extend(missing.undo().iter().map(|p| created(p)));
    for b in &blocked {
        crate::output::stderr(&format!("zero-policy: blocked: {b}\n"));
    }
    log(
        (&policy, &registry, bundle.as_ref()),
        (&call, &ev, shadow.as_ref()),
        decision,
        started,
        &blocked,
    );
    code
}

/// What the shadow policy (`settings.shadow`), if any, would decide for the
/// call; a shadow that does not load is said on stderr and in the record.
fn shadow_record(
    registry: &Registry,
    source: &Source,
    call: &Call,
) -> Option<crate::log::ShadowRecord> {
    let spec = registry.settings().shadow.as_ref()?;
    Some(
        match crate::shadow::load(spec, crate::loader::Purpose::Decide, &source.places(), true) {
            Ok(shadow) => {
                let record = shadow.decide(call);
                std::mem::forget(shadow);
                record
            }
            Err(why) => {
                let why = crate::shadow::failure(spec, &why);
                crate::output::stderr(&format!(
                    "zero-policy: {}\n",
                    registry.scrubber().scrub_str(&why)
                ));
                crate::shadow::failed(&why, registry.scrubber())
            }
        },
    )
}

/// A finding for a protected place the call created, which was removed.
fn created(path: &std::path::Path) -> String {
    format!("create {} (protected; removed)", path.display())
}

/// Runs a confined command under `strace` and returns its status and what the
/// sandbox refused it ([`sandbox::findings`]).
pub fn run_traced(
    confined: &sandbox::plan::ConfinedCommand,
    keep_fds: &str,
) -> (u8, Vec<sandbox::findings::Blocked>) {
    let Some(strace) = sandbox::findings::tracer() else {
        crate::output::stderr(
            "zero-policy: findings need strace, which is not installed; the call runs untraced\n",
        );
        let mut cmd = std::process::Command::new(&confined.program);
        cmd.args(&confined.args)
            .env(&confined.env.0, &confined.env.1);
        return (wait_for(&mut cmd), Vec::new());
    };
    let out = std::env::temp_dir().join(format!("zero-policy-trace-{}", std::process::id()));
    let mut cmd = std::process::Command::new(strace);
    cmd.args(sandbox::findings::tracer_args(&out))
        .arg(&confined.program)
        .args(&confined.args)
        .env(&confined.env.0, &confined.env.1)
        .env(crate::cli::confine::KEEP_FDS_VAR, keep_fds);
    let code = wait_for(&mut cmd);
    let trace = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    (code, sandbox::findings::parse(&trace))
}

/// bash where it is installed (as the agents' shell tools run it), else sh.
fn default_shell() -> PathBuf {
    ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

/// `prompt`: asks on the terminal where there is one. Without one nobody can
/// answer (`on_prompt: ask` has no one to ask either): it stays a prompt,
/// which `run` does not run.
fn ask(reason: &str) -> Decision {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty");
    let (Ok(mut tty), true) = (
        tty,
        std::io::stdin().is_terminal() || std::io::stderr().is_terminal(),
    ) else {
        return Decision::Prompt;
    };
    let _ = write!(tty, "zero-policy: {reason}\nRun it? [y/N] ");
    let _ = tty.flush();
    let mut line = String::new();
    let _ = std::io::BufReader::new(&mut tty).read_line(&mut line);
    if matches!(line.trim(), "y" | "Y" | "yes" | "Yes") {
        Decision::Allow
    } else {
        Decision::Prompt
    }
}

/// Appends the call's decision log line; `from` is the policy, its registry
/// and the bundle it came from, if any.
fn log(
    (policy, registry, bundle): (&Policy, &Registry, Option<&Resolved>),
    (call, ev, shadow): (&Call, &crate::Evaluation, Option<&crate::log::ShadowRecord>),
    answer: Decision,
    started: Instant,
    blocked: &[String],
) {
    let settings = registry.settings();
    let path = match crate::log::resolve_path(&settings.log_path, crate::log::home().as_deref()) {
        Ok(path) => path,
        Err(e) => {
            crate::output::stderr(&format!("zero-policy: {e}\n"));
            None
        }
    };
    let mut args = call.args.clone();
    registry.scrubber().scrub_json(&mut args);
    let record = crate::log::Record {
        time: crate::log::rfc3339_utc(std::time::SystemTime::now()),
        front: "run".into(),
        session: String::new(),
        tool: call.tool.clone(),
        decision: ev.decision.as_str().into(),
        answer: answer.as_str().into(),
        reason: registry
            .scrubber()
            .scrub_str(ev.reason.as_deref().unwrap_or_default())
            .into_owned(),
        matched: ev.matched.iter().map(|m| m.id.clone()).collect(),
        policy: crate::log::policy_hash(&policy.files),
        duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        args: (settings.log_args == crate::model::LogArgs::Scrubbed).then_some(args),
        blocked: blocked.to_vec(),
        rules: crate::log::RuleAt::of(&ev.matched),
        bundle: bundle.map(|b| b.bundle.version().to_string()),
        note: bundle.and_then(|b| b.note.clone()),
        shadow: shadow.cloned(),
        ..crate::log::Record::default()
    };
    if let Some(path) = &path {
        let chain = crate::log::Chain::from(Some(settings.log_chain));
        if let Err(e) = crate::log::append_record(path, &record, chain) {
            crate::output::stderr(&format!("zero-policy: {e}\n"));
        }
    }
    // As the hook does: the record leaves through the receivers' spools,
    // with the sandbox's `blocked` findings.
    let root = crate::log::spool::Spool::root(path.as_deref());
    for note in crate::log::spool::send_record(
        &record,
        settings.log_syslog.as_ref(),
        settings.log_otlp.as_ref(),
        root.as_deref(),
        REMOTE_WAIT,
    ) {
        let note = registry.scrubber().scrub_str(&note).into_owned();
        crate::output::stderr(&format!("zero-policy: {note}\n"));
    }
}

/// How long `run`, after its call ends, waits for the record to leave.
const REMOTE_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

/// Runs the command, passing its streams through, forwarding the signals a
/// supervisor sends to `run` itself, and returns its exit status (128+N for
/// signal N). Processes it leaves behind are killed when it ends: `run` is
/// their subreaper, so the whole confined tree ends with the call.
fn wait_for(cmd: &mut std::process::Command) -> u8 {
    wait_for_mapped(cmd, None)
}

/// As [`wait_for`], serving the confining process's id maps with `mapper`.
fn wait_for_mapped(cmd: &mut std::process::Command, mapper: Option<sandbox::idmap::Mapper>) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(EXIT_CANNOT_CONFINE, &format!("cannot start: {e}")),
    };
    let status = runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut child =
            tokio::process::Command::from(std::mem::replace(cmd, std::process::Command::new("/")))
                .spawn()?;
        if let (Some(m), Some(id)) = (mapper, child.id()) {
            m.serve(id);
        }
        let pid = child.id().and_then(|p| i32::try_from(p).ok());
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        // The terminal sends SIGINT and SIGQUIT to the whole process group,
        // the child included: `run` only keeps them from ending itself.
        let mut int = signal(SignalKind::interrupt())?;
        let mut quit = signal(SignalKind::quit())?;
        loop {
            let forward = tokio::select! {
                status = child.wait() => return status,
                _ = term.recv() => nix::sys::signal::Signal::SIGTERM,
                _ = hup.recv() => nix::sys::signal::Signal::SIGHUP,
                _ = int.recv() => continue,
                _ = quit.recv() => continue,
            };
            if let Some(pid) = pid {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), forward);
            }
        }
    });
    reap_leftovers();
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(c), _) => u8::try_from(c).unwrap_or(1),
            (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(255),
            (None, None) => 1,
        },
        Err(e) => fail(EXIT_CANNOT_CONFINE, &format!("cannot run the call: {e}")),
    }
}

/// Kills and reaps every process the call left behind (they were re-parented
/// to `run`, its subreaper).
///
/// A process the call left running is a child of `run` now, so where `run`
/// has no child left (`ECHILD`, after reaping the ended ones) nothing is
/// left, and `/proc` is not read: the common case costs one system call.
fn reap_leftovers() {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let me = std::process::id().to_string();
    for _ in 0..1000 {
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Err(nix::errno::Errno::ECHILD) => return,
                Ok(nix::sys::wait::WaitStatus::StillAlive) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let mut any = false;
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let name = entry.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    continue;
                };
                // The parent's pid is the second field after the command's `)`.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1));
                if ppid == Some(me.as_str()) {
                    any = true;
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        }
        while let Ok(s) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            if s == nix::sys::wait::WaitStatus::StillAlive {
                break;
            }
        }
        if !any {
            return;
        }
    }
}
