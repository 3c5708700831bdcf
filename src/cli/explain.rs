//! `zero-policy explain`: one call, every step, the matched rules, the decision.

use std::path::{Path, PathBuf};

use crate::call::{Call, Session};
use crate::cli::{EXIT_ERROR, EXIT_OK, Format, Paths, load_registry, with_servers};
use crate::loader;
use crate::model::Scope;
use crate::output;

const EXAMPLES: &str = "Examples:\n\n  zero-policy explain --tool bash --args '{\"command\": \"git status\"}'\n\n  echo '{\"tool\":\"read_file\",\"args\":{\"path\":\".env\"}}' | zero-policy explain --call - --format json\n\n  zero-policy explain --session mode=plan --tool write_file --args '{\"path\":\"a.txt\",\"content\":\"\"}'";

/// Show how one call is decided.
///
/// Give the call as `--tool NAME --args JSON`, or as a JSON file
/// `{"tool": ..., "args": {...}, "session": {...}}` with `--call FILE`
/// (`-` reads standard input). `--session` settings apply on top.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The tool's final name.
    #[arg(long, conflicts_with = "call", required_unless_present = "call")]
    pub tool: Option<String>,
    /// The arguments as a JSON object.
    #[arg(long, value_name = "JSON", requires = "tool")]
    pub args: Option<String>,
    /// A JSON file with `{tool, args, session}`; `-` for standard input.
    #[arg(long, value_name = "FILE")]
    pub call: Option<PathBuf>,
    /// Session settings: `mode=plan`, `workspace=/path`, `scopes=read_only,write`, `labels.KEY=VALUE`.
    #[arg(long = "session", value_name = "KEY=VALUE")]
    pub session: Vec<String>,
    /// The agent the call is made for (`claude-code`, `codex`, …): its own tools resolve first.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Decide as `zero-policy run` does: the call will run confined by the kernel
    /// (`call.confined` is true for a shell tool).
    #[arg(long)]
    pub confined: bool,
    /// Also run the call, if it is an allowed shell call, confined and traced, and show
    /// its exit status and what the sandbox refused it (implies `--confined`; needs strace).
    #[arg(long)]
    pub run: bool,
    /// Connect to the declared MCP servers first, so calls to their tools can be decided.
    #[arg(long)]
    pub connect: bool,
    /// Decide as a hook on this machine does: paths are also checked as the files they
    /// reach (links resolved) and searches against the tree they would walk; the
    /// account shows what was seen. Without it the decision is the same on every machine.
    #[arg(long)]
    pub host: bool,
    /// The files to read.
    #[command(flatten)]
    pub paths: Paths,
}

/// Applies one `KEY=VALUE` to a session.
///
/// # Errors
/// An unknown key or a bad value.
pub fn apply_session(session: &mut Session, kv: &str) -> Result<(), String> {
    let (key, value) = kv
        .split_once('=')
        .ok_or_else(|| format!("`{kv}` is not KEY=VALUE"))?;
    match key {
        "mode" => session.mode = value.to_string(),
        "workspace" => session.workspace = value.to_string(),
        "agent" => session.agent = value.to_string(),
        "scopes" => {
            let mut scopes = Vec::new();
            for s in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                scopes.push(Scope::parse(s).ok_or_else(|| {
                    format!("unknown scope `{s}`; the scopes are `read_only`, `write`, `shell`, `network`")
                })?);
            }
            session.scopes = scopes;
        }
        k => match k.strip_prefix("labels.") {
            Some(label) if !label.is_empty() => {
                session.labels.insert(label.to_string(), value.to_string());
            }
            _ => {
                return Err(format!(
                    "unknown session key `{k}`; use `mode`, `workspace`, `scopes`, `agent` or `labels.NAME`"
                ));
            }
        },
    }
    Ok(())
}

/// A serde_json error in words: no Rust type names, the place as line and column.
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let what = text.split(" at line ").next().unwrap_or(&text);
    let what = if what.contains("struct ") || what.contains("invalid length") {
        // `invalid type: sequence, expected struct Call`, `invalid length 0, expected
        // struct Call with 3 elements`: a call is an object.
        "the value is not a JSON object"
    } else {
        what
    };
    if e.line() == 0 {
        what.to_string()
    } else {
        format!("{what} (line {}, column {})", e.line(), e.column())
    }
}

/// Reads the call from the arguments.
///
/// # Errors
/// A message for the user.
pub fn read_call(args: &Args) -> Result<Call, String> {
    let mut call = if let Some(path) = &args.call {
        // The same cap and kind checks as policy files: `--call /dev/zero` or a
        // FIFO is refused, and standard input is read to 16 MiB at most.
        let text = if path.as_os_str() == "-" {
            loader::read_capped(
                std::io::stdin().lock(),
                Path::new("standard input"),
                loader::MAX_FILE_BYTES,
            )
        } else {
            loader::read_file(path)
        }
        .map_err(|e| e.to_string())?;
        serde_json::from_str::<Call>(&text).map_err(|e| {
            format!(
                "`{}` is not a call `{{\"tool\": ..., \"args\": {{...}}, \"session\": {{...}}}}`: {}",
                crate::escape::escape(&path.display().to_string()),
                json_error(&e)
            )
        })?
    } else {
        let tool = args.tool.clone().unwrap_or_default();
        let call_args = match &args.args {
            Some(a) => serde_json::from_str(a)
                .map_err(|e| format!("`--args` is not JSON: {}", json_error(&e)))?,
            None => serde_json::Value::Object(serde_json::Map::new()),
        };
        Call {
            tool,
            args: call_args,
            session: Session::default(),
            confined: false,
        }
    };
    for kv in &args.session {
        apply_session(&mut call.session, kv)?;
    }
    if let Some(agent) = &args.agent {
        call.session.agent = agent.clone();
    }
    if args.confined || args.run {
        call.confined = true;
    }
    Ok(call)
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    // One call, as a hook decides it: glob automata are built when used.
    crate::effects::globs::defer_automata(true);
    let call = match read_call(args) {
        Ok(c) => c,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    // A call made for one of the hooks' agents never sees another agent's
    // tools: their manifests are not read, as the hook does not read them.
    let purpose = crate::hooks::Agent::ALL
        .iter()
        .find(|a| a.as_str() == call.session.agent)
        .map_or(crate::loader::Purpose::Decide, |a| {
            crate::loader::Purpose::DecideFor(a.as_str())
        });
    let (policy, mut registry) = match load_registry(&args.paths, purpose) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if args.host
        && let Err(e) = registry.ground_in_host(
            crate::effects::ground::Host::within(policy.settings.walk_time),
            &policy.lists,
        )
    {
        output::error(&e.to_string());
        return EXIT_ERROR;
    }
    let shown = with_servers(&mut registry, args.connect, |registry, _| {
        let evaluation = registry.explain(&call);
        match args.format {
            Format::Human => output::explain_human(registry, &call, &evaluation),
            Format::Json => output::explain_json(registry, &call, &evaluation),
        }
        if args.run {
            run_traced(&policy, registry, &call, &evaluation);
        }
    });
    // The process ends after this one call, as a hook's does: freeing the
    // policy's many small allocations would only cost time (1.3 million
    // instructions of 25.5). A registry that connected to servers is dropped.
    if args.connect {
        drop((policy, registry));
    } else {
        std::mem::forget((policy, registry));
    }
    match shown {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

/// `explain --run`: an allowed shell call runs confined and traced; its exit
/// status and what the sandbox refused it go to stderr (standard output keeps
/// the explanation and the call's own output).
fn run_traced(
    policy: &crate::policy::Policy,
    registry: &crate::registry::Registry,
    call: &Call,
    ev: &crate::Evaluation,
) {
    let say = |t: &str| output::stderr(&format!("{t}\n"));
    let key = crate::hooks::confine::shell_key(registry, &call.tool);
    let script = key
        .as_ref()
        .and_then(|k| call.args.get(k))
        .and_then(serde_json::Value::as_str);
    let (Some(script), Some(fx)) = (script, &ev.effects) else {
        say("run      not run: the tool runs no shell script");
        return;
    };
    if ev.decision != crate::Decision::Allow {
        say(&format!(
            "run      not run: the decision is `{}`",
            ev.decision.as_str()
        ));
        return;
    }
    let settings = registry.settings();
    let cx = crate::sandbox::plan::Context {
        enforce: &settings.enforce,
        lists: &policy.lists,
        home: &settings.home,
        workspace: &call.session.workspace,
    };
    let confined = crate::sandbox::plan::envelope(&cx, fx).and_then(|envelope| {
        crate::sandbox::plan::confined_command(
            &envelope,
            "/bin/sh",
            &["-c".into(), script.to_string()],
        )
    });
    match confined {
        Err(e) => say(&format!("run      not run: cannot confine the call: {e}")),
        Ok(confined) => {
            let (code, blocked) = crate::cli::run::run_traced(&confined, "");
            say(&format!("run      exit {code}"));
            if blocked.is_empty() {
                say("blocked  nothing");
            }
            for b in blocked {
                say(&format!("blocked  {b}"));
            }
        }
    }
}
