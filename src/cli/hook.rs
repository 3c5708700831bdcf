//! `zero-policy hook AGENT`: one pre-tool event on stdin, answered in the agent's protocol.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::Instant;

use crate::cli::Source;
use crate::cli::hook_via as via;
use crate::hooks::confine::RunPolicy;
use crate::hooks::{self, Agent, Decided};
use crate::log;
use crate::output;
use crate::policy::{DEFAULT_LOG_PATH, Policy};
use crate::registry::Registry;
use crate::scrub::Scrubber;

const EXAMPLES: &str = r#"Examples:

  echo '{"session_id":"abc123","transcript_path":"/tmp/t.jsonl","cwd":"/home/dev/project",
         "permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash",
         "tool_input":{"command":"rm -rf /"},"tool_use_id":"toolu_01"}' \
    | zero-policy hook claude-code

  ZERO_POLICY_PATH=/etc/zero-policy zero-policy hook codex < event.json

  zero-policy hook gemini-cli ~/team-policy/ < event.json

Install it with `zero-policy init AGENT`; docs/hooks.md has each agent's setup."#;

/// Answer one agent hook event (the long help is on `Command::Hook`).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The agent whose protocol the event and the answer use.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Policy and manifest files or folders; default `$ZERO_POLICY_PATH`,
    /// else `~/.config/zero-policy/`, else the built-in default.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The signed bundle to take the policy from, instead of files.
    #[command(flatten)]
    pub bundle: crate::cli::BundleArgs,
    /// Ask a running `zero-policy serve --hooks` for the answer instead of
    /// loading the policy here: its URL, `http://127.0.0.1:PORT`. The token,
    /// if the service has one, is read from `ZERO_POLICY_HOOK_TOKEN`. If the
    /// service does not answer within 10 s, the call is blocked.
    #[arg(long, value_name = "URL", conflicts_with = "paths")]
    pub via: Option<String>,
}

/// Where the hook reads its policy: the paths given, else `$ZERO_POLICY_PATH`,
/// else `~/.config/zero-policy/` if it exists, else the built-in default.
#[must_use]
pub fn source(
    paths: &[PathBuf],
    zero_policy_path: Option<OsString>,
    home: Option<PathBuf>,
) -> Source {
    if !paths.is_empty() {
        return Source::Paths(paths.to_vec());
    }
    if let Some(value) = zero_policy_path {
        let listed: Vec<PathBuf> = std::env::split_paths(&value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !listed.is_empty() {
            return Source::Paths(listed);
        }
    }
    if let Some(home) = home {
        let dir = home.join(".config/zero-policy");
        if dir.is_dir() {
            return Source::Paths(vec![dir]);
        }
    }
    Source::Builtin
}

/// Loads the policy for `agent`'s calls and builds its registry; every
/// failure is one message.
pub(crate) fn load(source: &Source, agent: &'static str) -> Result<(Policy, Registry), String> {
    let loaded = source
        .load_cached(crate::loader::Purpose::DecideFor(agent))
        .map_err(|e| e.to_string())?;
    let Some(policy) = loaded.policy else {
        let errors: Vec<&crate::Diagnostic> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::Severity::Error)
            .collect();
        let first = errors.first().map_or_else(String::new, |d| {
            let place = d.place();
            format!(": {place}{}", d.message)
        });
        return Err(format!(
            "the policy does not load ({} error{}{first}); run `zero-policy lint` on it",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
        ));
    };
    let mut registry =
        Registry::new(&policy).map_err(|e| format!("the policy cannot be used: {e}"))?;
    registry.guard(source.places());
    // The hook runs where the call will: its paths are checked as the files they reach.
    registry
        .ground_in_host(
            crate::effects::ground::Host::within(policy.settings.walk_time),
            &policy.lists,
        )
        .map_err(|e| format!("the policy cannot be used: {e}"))?;
    Ok((policy, registry))
}

/// Where a hook's policy comes from, resolved: what `hook` does for each
/// call, and `serve --hooks` at its start and at each change of the files.
#[derive(Debug)]
pub(crate) struct Origin {
    /// The files, the built-in default or the verified bundle; or why no
    /// policy can be had (a bundle that cannot be used): every call is blocked.
    pub source: Result<Source, String>,
    /// The bundle in force, when the policy comes from one.
    pub bundle: Option<crate::bundle::source::Resolved>,
    /// The paths, absolute and `:`-separated, for a rewritten call's `run`.
    paths: Option<String>,
    /// The bundle's file or URL, key and CA, likewise.
    location: Option<PathBuf>,
    key: Option<String>,
    ca: Option<PathBuf>,
}

impl Origin {
    /// The policy `paths` or `bundle` name: the paths given, else
    /// `$ZERO_POLICY_PATH`, else `~/.config/zero-policy/`, else the built-in
    /// default; or the bundle, verified (a bundle at a URL is fetched in the
    /// background when stale only with `background_fetch`).
    pub(crate) fn resolve(
        paths: &[PathBuf],
        bundle: &crate::cli::BundleArgs,
        background_fetch: bool,
    ) -> Origin {
        let (source, resolved) = match bundle.source(!paths.is_empty()) {
            None => (
                Ok(source(
                    paths,
                    std::env::var_os("ZERO_POLICY_PATH"),
                    log::home(),
                )),
                None,
            ),
            Some(src) => match src.and_then(|mut src| {
                src.background_fetch = background_fetch;
                let resolved = src.resolve(crate::bundle::source::cache_root().as_deref())?;
                Ok((
                    Source::Bundle {
                        bundle: Box::new(resolved.bundle.clone()),
                        places: src.places(),
                    },
                    resolved,
                ))
            }) {
                Ok((source, resolved)) => (Ok(source), Some(resolved)),
                Err(why) => (Err(why), None),
            },
        };
        let joined: Option<String> = match &source {
            Ok(Source::Paths(p)) => std::env::join_paths(
                p.iter()
                    .map(|x| std::path::absolute(x).unwrap_or_else(|_| x.clone())),
            )
            .ok()
            .and_then(|s| s.into_string().ok()),
            _ => None,
        };
        // A rewritten call's `run` reads the policy from where this hook did:
        // the same files, the built-in default, or the same bundle and key,
        // named so that they read the same from the agent's shell's folder.
        let absolute = |p: &PathBuf| {
            if p.to_str().is_some_and(|s| s.contains("://")) {
                p.clone()
            } else {
                std::path::absolute(p).unwrap_or_else(|_| p.clone())
            }
        };
        Origin {
            source,
            bundle: resolved,
            paths: joined,
            location: bundle.bundle.as_ref().map(absolute),
            key: bundle.key.as_ref().map(|k| {
                if std::path::Path::new(k).is_file() {
                    absolute(&PathBuf::from(k)).display().to_string()
                } else {
                    k.clone()
                }
            }),
            ca: bundle.bundle_ca.as_ref().map(absolute),
        }
    }

    /// Where a rewritten call's `run` reads the policy; `None` where it
    /// cannot read this one.
    pub(crate) fn run_policy(&self) -> Option<RunPolicy<'_>> {
        match &self.source {
            Ok(Source::Paths(_)) => self.paths.as_deref().map(RunPolicy::Paths),
            Ok(Source::Builtin) | Err(_) => Some(RunPolicy::Builtin),
            Ok(Source::Bundle { .. }) => match (&self.location, &self.key) {
                (Some(location), Some(key)) => Some(RunPolicy::Bundle {
                    location: location.as_path(),
                    key: key.as_str(),
                    ca: self.ca.as_deref(),
                }),
                _ => None,
            },
        }
    }

    /// Loads the policy for `agent`'s calls, as [`load`] does.
    pub(crate) fn load(&self, agent: &'static str) -> Result<(Policy, Registry), String> {
        match &self.source {
            Ok(source) => load(source, agent),
            Err(why) => Err(why.clone()),
        }
    }
}

/// Decides one event by the policy `origin` names, loaded (`loaded`): the
/// hook's whole decision, which `hook` makes once per process and
/// `serve --hooks` once per request.
pub(crate) fn decide(
    agent: Agent,
    input: Result<Vec<u8>, String>,
    origin: &Origin,
    loaded: Result<(&Policy, &Registry), String>,
    shadow: Option<Result<&crate::shadow::Shadow, &str>>,
    asker: &hooks::headless::Asker,
    started: Instant,
) -> Decided {
    let failed = loaded.is_err();
    let hook_policy = if failed {
        Some(RunPolicy::Builtin)
    } else {
        origin.run_policy()
    };
    let shadow_failed = match (shadow, &loaded) {
        (Some(Err(why)), Ok((_, registry))) => Some(registry.scrubber().scrub_str(why)),
        _ => None,
    };
    let mut decided = hooks::decide(agent, input, loaded, hook_policy, shadow, asker, started);
    if let Some(why) = shadow_failed {
        decided
            .answer
            .stderr
            .push_str(&format!("zero-policy: {why}\n"));
    }
    if let (Some(resolved), Ok(_)) = (&origin.bundle, &origin.source) {
        decided.record.bundle = Some(resolved.bundle.version().to_string());
        if let Some(note) = &resolved.note {
            decided
                .answer
                .stderr
                .push_str(&format!("zero-policy: {note}\n"));
            decided.record.note = Some(note.clone());
        }
    }
    decided
}

/// The shadow policy (`settings.shadow`) of the policy `loaded`, for
/// `agent`'s calls: loaded, or why it could not be (then it is ignored and
/// the failure noted); `None` when none is set.
pub(crate) fn load_shadow(
    agent: Agent,
    origin: &Origin,
    loaded: Result<&Registry, &str>,
) -> Option<Result<crate::shadow::Shadow, String>> {
    let (Ok(registry), Ok(source)) = (loaded, &origin.source) else {
        return None;
    };
    let spec = registry.settings().shadow.as_ref()?;
    Some(
        crate::shadow::load(
            spec,
            crate::loader::Purpose::DecideFor(agent.as_str()),
            &source.places(),
            true,
        )
        .map_err(|why| crate::shadow::failure(spec, &why)),
    )
}

/// The event on standard input.
fn read_input(agent: Agent) -> Result<Vec<u8>, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        Err(format!(
            "standard input is a terminal; pipe one {} hook event into `zero-policy hook {}`",
            agent.display(),
            agent.as_str()
        ))
    } else {
        hooks::read_event(stdin.lock())
    }
}

/// The hook without the panic guard.
fn run_unguarded(args: &Args, started: Instant) -> Decided {
    let input = read_input(args.agent);
    let origin = Origin::resolve(&args.paths, &args.bundle, true);
    let loaded = origin.load(args.agent.as_str());
    let shadow = load_shadow(
        args.agent,
        &origin,
        loaded.as_ref().map(|(_, r)| r).map_err(String::as_str),
    );
    let decided = decide(
        args.agent,
        input,
        &origin,
        loaded.as_ref().map(|(p, r)| (p, r)).map_err(Clone::clone),
        shadow.as_ref().map(|s| s.as_ref().map_err(String::as_str)),
        &hooks::headless::Asker::Probe,
        started,
    );
    // The process ends after this one call: freeing the policy's many small
    // allocations would only cost time (about 3% of the call).
    std::mem::forget((loaded, shadow));
    decided
}

/// Appends the record; a failure is added to the answer's stderr, and the decision stands.
pub(crate) fn write_log(decided: &mut Decided) {
    let result =
        log::resolve_path(&decided.log_path, log::home().as_deref()).and_then(|path| match path {
            Some(p) => log::append_record(&p, &decided.record, decided.log_chain.into()),
            None => Ok(()),
        });
    if let Err(e) = result {
        decided.answer.stderr.push_str(&format!(
            "zero-policy: {}\n",
            Scrubber::builtin().scrub_str(&e)
        ));
    }
}

/// Runs `f`; a panic in it becomes the agent's blocking answer, scrubbed.
pub fn guarded(agent: Agent, started: Instant, f: impl FnOnce() -> Decided) -> Decided {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(d) => d,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            hooks::fail(
                agent,
                &Scrubber::builtin(),
                (DEFAULT_LOG_PATH, None),
                "",
                None,
                &format!("internal error (a bug in zero-policy, please report it): {detail}"),
                started,
            )
        }
    }
}

/// Runs the command: never panics, never answers allow on an error.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let started = Instant::now();
    // A panic is reported below, scrubbed, in the agent's blocking form; the
    // default hook would print its message (which may quote input) raw.
    std::panic::set_hook(Box::new(|_| {}));
    // One call: glob lists build their automata only if the call compares a
    // pattern with them (`lint` builds them all and reports any too large).
    crate::effects::globs::defer_automata(true);
    let mut logged = false;
    let mut decided = guarded(args.agent, started, || match &args.via {
        Some(url) => {
            let input = read_input(args.agent);
            let (decided, by_service) = via::ask(
                args.agent,
                input,
                url,
                &hooks::headless::Asker::Probe,
                started,
            );
            logged = by_service;
            decided
        }
        None => run_unguarded(args, started),
    });
    if !logged && catch_unwind(AssertUnwindSafe(|| write_log(&mut decided))).is_err() {
        decided
            .answer
            .stderr
            .push_str("zero-policy: internal error while writing the decision log\n");
    }
    output::stdout(&decided.answer.stdout);
    output::stderr(&decided.answer.stderr);
    send_remote(&decided);
    decided.answer.code
}

/// How long a hook waits, after answering, for its record to leave.
const REMOTE_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

/// Sends the record to syslog and OTLP after the answer is out, through
/// their spools ([`log::spool`]), waiting at most [`REMOTE_WAIT`] for both
/// together; a record that did not leave waits for the next decision, and
/// what happened is said on stderr.
fn send_remote(decided: &Decided) {
    if decided.syslog.is_none() && decided.otlp.is_none() {
        return;
    }
    let local = log::resolve_path(&decided.log_path, log::home().as_deref())
        .ok()
        .flatten();
    let root = log::spool::Spool::root(local.as_deref());
    for note in log::spool::send_record(
        &decided.record,
        decided.syslog.as_ref(),
        decided.otlp.as_ref(),
        root.as_deref(),
        REMOTE_WAIT,
    ) {
        output::stderr(&format!(
            "zero-policy: {}\n",
            Scrubber::builtin().scrub_str(&note)
        ));
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::path::PathBuf;

    use super::source;
    use crate::cli::Source;

    #[test]
    #[expect(clippy::panic, reason = "the panic under test")]
    fn a_panic_is_the_agents_blocking_answer_with_the_secret_scrubbed() {
        use crate::hooks::Agent;
        let started = std::time::Instant::now();
        for agent in Agent::ALL {
            let d = super::guarded(agent, started, || {
                panic!("boom with token ghp_16C7e42F292c6912E7710c838347Ae178B4a")
            });
            assert_eq!(d.record.decision, "error");
            assert_eq!(d.record.answer, "deny");
            let all = format!("{}{}{}", d.answer.stdout, d.answer.stderr, d.record.line());
            assert!(all.contains("internal error"), "{all}");
            assert!(
                !all.contains("ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
                "{all}"
            );
            match agent {
                Agent::Copilot => {
                    assert_eq!(d.answer.code, 0);
                    assert!(d.answer.stdout.contains(r#""permissionDecision":"deny""#));
                }
                Agent::Cursor => {
                    assert_eq!(d.answer.code, 2);
                    assert!(d.answer.stdout.contains(r#""permission":"deny""#));
                }
                _ => {
                    assert_eq!(d.answer.code, 2);
                    assert!(d.answer.stdout.is_empty());
                    assert!(
                        d.answer
                            .stderr
                            .starts_with("zero-policy: the call is blocked")
                    );
                }
            }
        }
    }

    #[test]
    fn paths_given_win_then_the_variable_then_the_config_folder_then_the_builtin() {
        let home = std::env::temp_dir().join(format!("zp-hook-home-{}", std::process::id()));
        let config = home.join(".config/zero-policy");
        let given = vec![PathBuf::from("/etc/zp")];
        assert_eq!(
            source(&given, Some("/a:/b".into()), Some(home.clone())),
            Source::Paths(given.clone())
        );
        assert_eq!(
            source(&[], Some("/a::/b".into()), Some(home.clone())),
            Source::Paths(vec!["/a".into(), "/b".into()])
        );
        assert_eq!(
            source(&[], Some("".into()), Some(home.clone())),
            Source::Builtin
        );
        std::fs::create_dir_all(&config).unwrap();
        assert_eq!(
            source(&[], None, Some(home.clone())),
            Source::Paths(vec![config])
        );
        std::fs::remove_dir_all(&home).unwrap();
        assert_eq!(source(&[], None, Some(home)), Source::Builtin);
        assert_eq!(source(&[], None, None), Source::Builtin);
    }
}
