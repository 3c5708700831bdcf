//! `zero-policy init AGENT`: installs the hook in the agent's settings file.
//!
//! The file is read as JSON, the hook entry is added (or its command brought
//! up to date) and every other key is kept in its order; running it twice
//! gives one entry. A file that is not JSON is never overwritten.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::cli::{EXIT_ERROR, EXIT_OK};
use crate::hooks::{Agent, cursor};
use crate::output;

const EXAMPLES: &str = "Examples:

  zero-policy init claude-code            # .claude/settings.json in this project

  zero-policy init codex --user           # ~/.codex/hooks.json, for every project

  zero-policy init cursor --dry-run       # show the change to .cursor/hooks.json, write nothing

  sudo zero-policy init claude-code --managed --lock   # for every user, and only managed hooks run";

/// Install the hook in an agent's settings file (the long help is on `Command::Init`).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The agent to install the hook for.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Install in the user's settings, under the home folder.
    #[arg(long, conflicts_with_all = ["project", "managed"])]
    pub user: bool,
    /// Install in this project's settings, under the current folder (the default).
    #[arg(long, conflicts_with = "managed")]
    pub project: bool,
    /// Install in the agent's admin-managed file, for every user of this
    /// machine (needs root): Claude Code
    /// `/etc/claude-code/managed-settings.d/zero-policy.json`, Codex
    /// `/etc/codex/requirements.toml`, Gemini CLI `/etc/gemini-cli/settings.json`
    /// (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`), Cursor `/etc/cursor/hooks.json`
    /// (the macOS folders under `/Library/Application Support/`). Copilot CLI
    /// takes no hooks from its managed settings, and is refused.
    /// `ZERO_POLICY_MANAGED_ROOT` puts these paths under another folder (for
    /// packaging and tests).
    #[arg(long, conflicts_with = "trust")]
    pub managed: bool,
    /// With `--managed`: let only managed hooks run, so a user cannot take
    /// the hook out or run around it: Claude Code `allowManagedHooksOnly`,
    /// Codex `allow_managed_hooks_only`; Gemini CLI gets `hooksConfig.enabled:
    /// true`, which overrides a user's switch to turn every hook off (it has
    /// no managed-only switch). Every other hook of those agents' users stops running.
    #[arg(long, requires = "managed")]
    pub lock: bool,
    /// Print the change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Record the trust the agent needs before it runs the hook. Codex: the
    /// hook, by its hash, in Codex's `config.toml` (as its `/hooks` review
    /// does), and for a project hook the project. Gemini CLI and Copilot CLI:
    /// the project folder (`~/.gemini/trustedFolders.json`,
    /// `trustedFolders` in `~/.copilot/config.json`). Without it, `init` prints that step left:
    /// these agents skip a hook that is not trusted.
    #[arg(long)]
    pub trust: bool,
    /// Send the agent's events to a running `zero-policy serve --hooks` at
    /// this URL (`http://127.0.0.1:PORT`): Claude Code gets an `http` hook
    /// that blocks when the service is down, the other agents `zero-policy
    /// hook AGENT --via URL`, which blocks the call when the service does
    /// not answer (Copilot CLI skips a loopback `http` hook unless
    /// `COPILOT_HOOK_ALLOW_LOCALHOST=1` is set where it runs). Without it, an
    /// `http` hook installed before is turned back into the command.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
}

/// What the installed hook runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hook {
    /// A command line.
    Command(String),
    /// An `http` hook: the URL it posts to, and whether it sends the token
    /// from `ZERO_POLICY_HOOK_TOKEN`.
    Http {
        /// The endpoint.
        url: String,
        /// Send `Authorization: Bearer $ZERO_POLICY_HOOK_TOKEN`.
        token: bool,
    },
}

impl Hook {
    /// How the hook is named in what `init` prints.
    fn shown(&self) -> String {
        match self {
            Hook::Command(c) => c.clone(),
            Hook::Http { url, .. } => format!("POST {url}"),
        }
    }
}

/// Whether `init --http` gives the agent an `http` hook (else the `--via`
/// client). Copilot CLI has one too, and `serve --hooks` answers it, but
/// 1.0.102 skips an `http` hook to a loopback `http://` URL unless
/// `COPILOT_HOOK_ALLOW_LOCALHOST=1` is in its environment, and then the call
/// runs (seen in `tests/real_agents.rs`): the client always fires.
#[must_use]
pub fn has_http_hooks(agent: Agent) -> bool {
    agent == Agent::ClaudeCode
}
/// Where the hook is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Under the current folder.
    Project,
    /// Under the home folder.
    User,
    /// The agent's admin-managed file, for every user of the machine.
    Managed,
}

/// The variable that puts the admin-managed files under another folder
/// (for packaging and tests): `/etc/codex/requirements.toml` becomes
/// `$ZERO_POLICY_MANAGED_ROOT/etc/codex/requirements.toml`.
pub const MANAGED_ROOT_VAR: &str = "ZERO_POLICY_MANAGED_ROOT";

/// Why `init copilot --managed` is refused.
pub const COPILOT_MANAGED: &str = "Copilot CLI takes no hooks from its managed settings: \
     `/etc/github-copilot/managed-settings.json` has no `hooks` key in 1.0.102 (its schema allows \
     none), and its managed hooks come only from plugins force-enabled through managed \
     `enabledPlugins`; install with `zero-policy init copilot --user` for each user";

/// The agent's admin-managed file: where the agent reads settings that its
/// users cannot change (see `docs/hooks.md`, "Managed installation").
///
/// # Errors
/// Copilot CLI, which takes no hooks there.
pub fn managed_file(agent: Agent) -> Result<PathBuf, String> {
    let macos = cfg!(target_os = "macos");
    if agent == Agent::GeminiCli
        && let Some(path) =
            std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH").filter(|v| !v.is_empty())
    {
        return Ok(PathBuf::from(path));
    }
    let path = match agent {
        Agent::ClaudeCode if macos => {
            "/Library/Application Support/ClaudeCode/managed-settings.d/zero-policy.json"
        }
        Agent::ClaudeCode => "/etc/claude-code/managed-settings.d/zero-policy.json",
        Agent::Codex => "/etc/codex/requirements.toml",
        Agent::GeminiCli if macos => "/Library/Application Support/GeminiCli/settings.json",
        Agent::GeminiCli => "/etc/gemini-cli/settings.json",
        Agent::Cursor if macos => "/Library/Application Support/Cursor/hooks.json",
        Agent::Cursor => "/etc/cursor/hooks.json",
        Agent::Copilot => return Err(COPILOT_MANAGED.into()),
    };
    Ok(
        match std::env::var_os(MANAGED_ROOT_VAR).filter(|v| !v.is_empty()) {
            Some(root) => PathBuf::from(root).join(path.trim_start_matches('/')),
            None => PathBuf::from(path),
        },
    )
}

/// How an agent's settings file lists its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `hooks.EVENT: [{matcher, hooks: [{type: command, command, ...}]}]`.
    Grouped,
    /// `hooks.EVENT: [{..., KEY: command}]`, with `version: 1` at the top.
    Flat(&'static str),
}

/// The agent's settings file for a scope.
///
/// # Errors
/// `--user` without a home folder.
pub fn settings_file(agent: Agent, scope: Scope) -> Result<PathBuf, String> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = || {
        crate::log::home()
            .ok_or_else(|| "`--user` needs the home folder, and `HOME` is not set".to_string())
    };
    Ok(match (agent, scope) {
        (Agent::ClaudeCode, Scope::Project) => PathBuf::from(".claude/settings.json"),
        (Agent::Codex, Scope::Project) => PathBuf::from(".codex/hooks.json"),
        (Agent::GeminiCli, Scope::Project) => PathBuf::from(".gemini/settings.json"),
        (Agent::Cursor, Scope::Project) => PathBuf::from(".cursor/hooks.json"),
        (Agent::Copilot, Scope::Project) => PathBuf::from(".github/hooks/zero-policy.json"),
        (Agent::ClaudeCode, Scope::User) => home()?.join(".claude/settings.json"),
        (Agent::Codex, Scope::User) => match var("CODEX_HOME") {
            Some(dir) => dir.join("hooks.json"),
            None => home()?.join(".codex/hooks.json"),
        },
        (Agent::GeminiCli, Scope::User) => home()?.join(".gemini/settings.json"),
        (Agent::Cursor, Scope::User) => home()?.join(".cursor/hooks.json"),
        (Agent::Copilot, Scope::User) => match var("COPILOT_HOME") {
            Some(dir) => dir.join("hooks/zero-policy.json"),
            None => home()?.join(".copilot/hooks/zero-policy.json"),
        },
        (agent, Scope::Managed) => managed_file(agent)?,
    })
}

fn shape(agent: Agent) -> Shape {
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::GeminiCli => Shape::Grouped,
        Agent::Cursor => Shape::Flat("command"),
        Agent::Copilot => Shape::Flat("bash"),
    }
}

fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::ClaudeCode | Agent::Codex => &["PreToolUse"],
        Agent::GeminiCli => &["BeforeTool"],
        Agent::Cursor => &cursor::EVENTS,
        Agent::Copilot => &["preToolUse"],
    }
}

/// The hook handler for one agent. Timeouts are generous: an agent lets a
/// call through when its hook times out.
fn handler(agent: Agent, hook: &Hook) -> Value {
    let command = match hook {
        Hook::Command(c) => c.as_str(),
        Hook::Http { url, token } => {
            let mut h = match agent {
                Agent::Copilot => json!({"type": "http", "url": url, "timeoutSec": 30}),
                _ => json!({"type": "http", "url": url, "timeout": 30, "onFailure": "block"}),
            };
            if *token {
                h["headers"] = token_headers();
                h["allowedEnvVars"] = json!([crate::cli::hook_service::TOKEN_VAR]);
            }
            return h;
        }
    };
    match agent {
        Agent::ClaudeCode => {
            json!({"type": "command", "command": command, "timeout": 30, "onFailure": "block"})
        }
        Agent::Codex => json!({"type": "command", "command": command, "timeout": 30}),
        Agent::GeminiCli => {
            json!({"name": "zero-policy", "type": "command", "command": command, "timeout": 30000})
        }
        Agent::Cursor => json!({"command": command, "failClosed": true}),
        Agent::Copilot => json!({"type": "command", "bash": command, "timeoutSec": 30}),
    }
}

/// The keys that make the agent block a call when the hook fails or times
/// out, where it has them: Claude Code's `onFailure: "block"` (2.1.295 and
/// later) and Cursor's `failClosed: true`. Kept on our entry on every run.
fn fail_closed(agent: Agent) -> Vec<(&'static str, Value)> {
    match agent {
        Agent::ClaudeCode => vec![("onFailure", json!("block"))],
        Agent::Cursor => vec![("failClosed", json!(true))],
        Agent::Codex | Agent::GeminiCli | Agent::Copilot => Vec::new(),
    }
}

/// The headers of an `http` hook that sends the token.
fn token_headers() -> Value {
    json!({"Authorization": format!("Bearer ${{{}}}", crate::cli::hook_service::TOKEN_VAR)})
}

/// Whether a handler is an `http` hook to `serve --hooks` for `agent`.
#[must_use]
pub fn is_our_http(handler: &Value, agent: Agent) -> bool {
    handler.get("type").and_then(Value::as_str) == Some("http")
        && handler
            .get("url")
            .and_then(Value::as_str)
            .and_then(|u| url::Url::parse(u).ok())
            .is_some_and(|u| {
                u.path().ends_with(&format!(
                    "{}{}",
                    crate::cli::hook_service::PREFIX,
                    agent.as_str()
                ))
            })
}

/// The command that runs the hook: this binary by its absolute path, quoted for a shell.
#[must_use]
pub fn hook_command(exe: &Path, agent: Agent) -> String {
    format!(
        "{} hook {}",
        shell_quote(&exe.to_string_lossy()),
        agent.as_str()
    )
}

pub use crate::escape::shell_quote;

/// Whether a hook command is a `zero-policy hook AGENT` (whatever the binary's path).
#[must_use]
pub fn is_ours(command: &str, agent: Agent) -> bool {
    let command = command.trim();
    let (program, rest) = if let Some(quoted) = command.strip_prefix('\'') {
        // The quoting `shell_quote` writes: '…' with `'\''` for a quote.
        let mut program = String::new();
        let mut rest = quoted;
        loop {
            let Some(end) = rest.find('\'') else {
                return false;
            };
            program.push_str(&rest[..end]);
            rest = &rest[end + 1..];
            match rest.strip_prefix("\\''") {
                Some(more) => {
                    program.push('\'');
                    rest = more;
                }
                None => break,
            }
        }
        (program, rest)
    } else {
        match command.split_once(char::is_whitespace) {
            Some((p, r)) => (p.to_string(), r),
            None => (command.to_string(), ""),
        }
    };
    let name = Path::new(&program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut words = rest.split_whitespace();
    (name == "zero-policy" || name == "zero-policy.exe")
        && words.next() == Some("hook")
        && words.next() == Some(agent.as_str())
}

/// What installing did to one event's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Updated,
    Unchanged,
}

/// Installs the hook in a settings document; returns what happened per event.
///
/// # Errors
/// A part of the document that must be an object or a list is not.
fn install(
    root: &mut Value,
    agent: Agent,
    hook: &Hook,
) -> Result<Vec<(&'static str, Change)>, String> {
    let Value::Object(top) = root else {
        return Err("the top level is not a JSON object".into());
    };
    if matches!(shape(agent), Shape::Flat(_)) && !top.contains_key("version") {
        top.insert("version".into(), json!(1));
    }
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err("`hooks` is not an object".into());
    };
    let mut changes = Vec::new();
    for event in events(agent) {
        let list = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(format!("`hooks.{event}` is not a list"));
        };
        let change = match shape(agent) {
            Shape::Grouped => install_grouped(list, agent, hook)?,
            Shape::Flat(key) => install_flat(list, agent, hook, key),
        };
        changes.push((*event, change));
    }
    Ok(changes)
}

/// Brings the first of our handlers in `handlers` up to date with `hook`
/// (the keys it sets; a handler of the other kind is replaced whole) and
/// removes the others; `None` when there is none.
fn keep_one(
    handlers: &mut Vec<Value>,
    key: &str,
    agent: Agent,
    hook: &Hook,
    seen: &mut bool,
) -> Option<Change> {
    let mut change = None;
    handlers.retain_mut(|h| {
        let command = h
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|c| is_ours(c, agent));
        let http = is_our_http(h, agent);
        if !command && !http {
            return true;
        }
        if *seen {
            change = Some(Change::Updated);
            return false;
        }
        *seen = true;
        let owned: Vec<(&str, Value)> = match hook {
            Hook::Command(c) if command => {
                let mut keys = vec![(key, json!(c))];
                keys.extend(fail_closed(agent));
                keys
            }
            Hook::Http { url, token } if http => {
                let mut keys = vec![("url", json!(url))];
                if agent == Agent::ClaudeCode {
                    keys.push(("onFailure", json!("block")));
                }
                if *token {
                    keys.push(("headers", token_headers()));
                    keys.push((
                        "allowedEnvVars",
                        json!([crate::cli::hook_service::TOKEN_VAR]),
                    ));
                }
                keys
            }
            // The other kind: replaced whole.
            _ => {
                *h = handler(agent, hook);
                change = Some(Change::Updated);
                return true;
            }
        };
        change.get_or_insert(Change::Unchanged);
        for (name, value) in owned {
            if h.get(name) != Some(&value) {
                h[name] = value;
                change = Some(Change::Updated);
            }
        }
        true
    });
    change
}

fn install_grouped(list: &mut Vec<Value>, agent: Agent, hook: &Hook) -> Result<Change, String> {
    let mut seen = false;
    let mut change: Option<Change> = None;
    for group in list.iter_mut() {
        let Some(handlers) = group.get_mut("hooks") else {
            continue;
        };
        let Value::Array(handlers) = handlers else {
            return Err("a hook group's `hooks` is not a list".into());
        };
        let before = handlers.len();
        if let Some(c) = keep_one(handlers, "command", agent, hook, &mut seen) {
            change = Some(match (change, c) {
                (Some(Change::Updated), _) | (_, Change::Updated) => Change::Updated,
                _ => c,
            });
        }
        // A group emptied by removing a duplicate of ours is dropped below.
        if handlers.is_empty() && before > 0 {
            *group = Value::Null;
        }
    }
    list.retain(|g| !g.is_null());
    Ok(match change {
        Some(c) => c,
        None => {
            list.push(json!({"matcher": "*", "hooks": [handler(agent, hook)]}));
            Change::Added
        }
    })
}

fn install_flat(list: &mut Vec<Value>, agent: Agent, hook: &Hook, key: &str) -> Change {
    let mut seen = false;
    match keep_one(list, key, agent, hook, &mut seen) {
        Some(c) => c,
        None => {
            list.push(handler(agent, hook));
            Change::Added
        }
    }
}

/// The indentation the file uses (so a rewrite changes as few lines as it can); two spaces if none.
fn indent_of(text: &str) -> String {
    text.lines()
        .find_map(|l| {
            let ws: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            (!ws.is_empty() && ws.len() < l.len()).then_some(ws)
        })
        .unwrap_or_else(|| "  ".into())
}

fn pretty(value: &Value, indent: &str) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    let mut s = String::from_utf8(out).unwrap_or_default();
    s.push('\n');
    s
}

/// A unified diff of two texts, three lines of context; empty when they are equal.
#[must_use]
pub fn diff(name: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a == b {
        return String::new();
    }
    // Longest common subsequence, for the small files settings are.
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 4_000_000 {
        return format!("--- {name}\n+++ {name}\n(too large to show a diff)\n");
    }
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (old line index, new line index, kind).
    let mut ops: Vec<(usize, usize, char)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((i, j, ' '));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push((i, j, '-'));
            i += 1;
        } else {
            ops.push((i, j, '+'));
            j += 1;
        }
    }
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.2 != ' ')
        .map(|(k, _)| k)
        .collect();
    let mut out = format!("--- {name}\n+++ {name}\n");
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let hunk = &ops[start..end];
        let old_len = hunk.iter().filter(|o| o.2 != '+').count();
        let new_len = hunk.iter().filter(|o| o.2 != '-').count();
        let old_start = hunk.first().map_or(0, |o| o.0) + usize::from(old_len > 0);
        let new_start = hunk.first().map_or(0, |o| o.1) + usize::from(new_len > 0);
        out.push_str(&format!(
            "@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"
        ));
        for (oi, nj, kind) in hunk {
            let line = if *kind == '+' { b[*nj] } else { a[*oi] };
            out.push(*kind);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Writes through a temporary file in the same folder and a rename, so a
/// crash never leaves half a settings file; keeps the old file's permissions.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write `{}`: {e}", path.display());
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir
        .unwrap_or_else(|| Path::new("."))
        .join(format!(".{name}.zero-policy-{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let scope = if args.managed {
        Scope::Managed
    } else if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            output::error(&format!(
                "cannot find the path of this zero-policy binary: {e}"
            ));
            return EXIT_ERROR;
        }
    };
    let hook = match &args.http {
        None => Hook::Command(hook_command(&exe, args.agent)),
        Some(url) => match crate::cli::hook_via::parse_url(url) {
            Err(e) => {
                output::error(&format!("`--http`: {e}"));
                return EXIT_ERROR;
            }
            Ok(service) if has_http_hooks(args.agent) => Hook::Http {
                url: service.endpoint(args.agent),
                token: std::env::var_os(crate::cli::hook_service::TOKEN_VAR)
                    .is_some_and(|t| !t.is_empty()),
            },
            Ok(service) => Hook::Command(format!(
                "{} --via {}",
                hook_command(&exe, args.agent),
                shell_quote(&service.base_url())
            )),
        },
    };
    let installed = if scope == Scope::Managed {
        init_managed(args.agent, &hook, args.lock, args.dry_run)
    } else {
        init(args.agent, scope, &hook, args.dry_run)
    };
    match installed.and_then(|mut text| {
        if let Hook::Http { url, token } = &hook {
            text.push_str(&http_notes(args.agent, url, *token));
        }
        if args.http.is_some() && args.agent == Agent::Copilot {
            text.push_str(COPILOT_HTTP);
        }
        match args.agent {
            // A managed hook needs no review: Codex runs it as managed.
            _ if scope == Scope::Managed => {}
            Agent::Codex => text.push_str(&codex_trust(scope, args.trust, args.dry_run)?),
            Agent::GeminiCli | Agent::Copilot if scope == Scope::Project => {
                text.push_str(&folder_trust(args.agent, args.trust, args.dry_run)?);
            }
            _ => {}
        }
        Ok(text)
    }) {
        Ok(text) => {
            output::stdout(&text);
            EXIT_OK
        }
        Err(e) => {
            output::error(&e);
            EXIT_ERROR
        }
    }
}

/// Installs (or with `dry_run` only describes) the hook; returns what to print.
///
/// # Errors
/// The settings file cannot be read or written, or is not a JSON object of
/// the agent's shape; the message names the file.
pub fn init(agent: Agent, scope: Scope, hook: &Hook, dry_run: bool) -> Result<String, String> {
    let path = settings_file(agent, scope)?;
    init_json(agent, &path, hook, false, dry_run)
}

/// The keys `--lock` sets in an agent's managed JSON file: what keeps a
/// user from turning managed hooks off or running other hooks.
fn lock_keys(agent: Agent) -> &'static [(&'static str, &'static str)] {
    match agent {
        // Claude Code: only managed hooks run.
        Agent::ClaudeCode => &[("", "allowManagedHooksOnly")],
        // Gemini CLI: system settings override a user's `hooksConfig.enabled: false`.
        Agent::GeminiCli => &[("hooksConfig", "enabled")],
        Agent::Codex | Agent::Cursor | Agent::Copilot => &[],
    }
}

/// Sets the `--lock` keys to `true`; whether anything changed.
///
/// # Errors
/// A part of the document that must be an object is not.
fn set_lock(root: &mut Value, agent: Agent) -> Result<bool, String> {
    let mut changed = false;
    for (table, key) in lock_keys(agent) {
        let Value::Object(top) = root else {
            return Err("the top level is not a JSON object".into());
        };
        let map = if table.is_empty() {
            top
        } else {
            match top
                .entry(*table)
                .or_insert_with(|| Value::Object(Map::new()))
            {
                Value::Object(m) => m,
                _ => return Err(format!("`{table}` is not an object")),
            }
        };
        if map.get(*key) != Some(&Value::Bool(true)) {
            map.insert((*key).to_string(), Value::Bool(true));
            changed = true;
        }
    }
    Ok(changed)
}

/// `init AGENT --managed`: the hook in the agent's admin-managed file, and
/// with `lock` what keeps users from taking it out. Refused, before anything
/// is written, when this user cannot write the file.
///
/// # Errors
/// Copilot CLI (no managed hooks); the file cannot be written by this user,
/// read, or is not of the agent's shape.
pub fn init_managed(
    agent: Agent,
    hook: &Hook,
    lock: bool,
    dry_run: bool,
) -> Result<String, String> {
    let path = managed_file(agent)?;
    if !dry_run {
        writable(&path).map_err(|why| {
            format!(
                "cannot write `{}` ({why}): it is {}'s admin-managed file, which only root may change. \
                 Run `sudo zero-policy init {}{}`, or add `--dry-run` to see the change",
                path.display(),
                agent.display(),
                agent.as_str(),
                if lock { " --managed --lock" } else { " --managed" }
            )
        })?;
    }
    if !dry_run && let Some(dir) = path.parent() {
        // Folders made here are root's and readable by everyone, as the
        // agents ask of a managed folder (Gemini CLI's admin folder must not
        // be writable by group or others).
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(|e| format!("cannot make `{}`: {e}", dir.display()))?;
    }
    let mut out = if agent == Agent::Codex {
        let Hook::Command(command) = hook else {
            return Err("Codex takes a command hook only".into());
        };
        init_codex_requirements(&path, command, lock, dry_run)?
    } else {
        init_json(agent, &path, hook, lock, dry_run)?
    };
    if !dry_run {
        // Every user's agent reads it: readable by all, whatever the umask.
        use std::os::unix::fs::PermissionsExt;
        let target = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if let Ok(meta) = std::fs::metadata(&target) {
            let mode = meta.permissions().mode();
            if mode & 0o444 != 0o444 {
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode | 0o444))
                    .map_err(|e| format!("cannot make `{}` readable: {e}", target.display()))?;
            }
        }
    }
    out.push_str(&managed_notes(agent, lock));
    Ok(out)
}

/// What to know once the managed hook is in place.
fn managed_notes(agent: Agent, lock: bool) -> String {
    let note = match (agent, lock) {
        (Agent::ClaudeCode, false) => {
            "Claude Code runs managed hooks for every user, and a user's `disableAllHooks` leaves them running; \
             `--lock` also stops every hook that is not managed (`allowManagedHooksOnly`)"
        }
        (Agent::ClaudeCode, true) => {
            "With `allowManagedHooksOnly`, Claude Code runs only managed hooks: users' own hooks do not run"
        }
        (Agent::Codex, false) => {
            "Codex runs a hook from `requirements.toml` as managed: no `/hooks` review, and users cannot disable it; \
             `--lock` also stops every hook that is not managed (`allow_managed_hooks_only`)"
        }
        (Agent::Codex, true) => {
            "With `allow_managed_hooks_only`, Codex runs only managed hooks, with no `/hooks` review: users' own hooks do not run"
        }
        (Agent::GeminiCli, false) => {
            "Gemini CLI adds system hooks to every user's; it reads the file only while it and every folder above \
             it are root's and not writable by others, runs them only in a folder it trusts, and a user can still name \
             the hook `zero-policy` in `hooksConfig.disabled`, or turn every hook off unless `--lock` is given"
        }
        (Agent::GeminiCli, true) => {
            "Gemini CLI keeps hooks on for every user (`hooksConfig.enabled: true` here overrides theirs); it reads \
             the file only while it and every folder above it are root's and not writable by others, runs them only in \
             a folder it trusts, and a user can still name the hook `zero-policy` in `hooksConfig.disabled`"
        }
        (Agent::Cursor, false) => "Cursor runs enterprise hooks for every user, beside their own",
        (Agent::Cursor, true) => {
            "Cursor has no setting to run only enterprise hooks: nothing more was written; it runs \
             enterprise hooks for every user, beside their own"
        }
        (Agent::Copilot, _) => COPILOT_MANAGED,
    };
    format!("\n{note}\n")
}

/// Whether this user may write `path`: the file if it exists, and the
/// nearest folder that exists on the way to it (the file is replaced by a
/// rename there, and missing folders are made in it).
fn writable(path: &Path) -> Result<(), String> {
    use nix::unistd::{AccessFlags, access};
    if path.exists() {
        access(path, AccessFlags::W_OK).map_err(|e| e.desc().to_string())?;
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d.as_os_str().is_empty() {
            break;
        }
        if d.exists() {
            return access(d, AccessFlags::W_OK | AccessFlags::X_OK)
                .map_err(|e| format!("`{}`: {}", d.display(), e.desc()));
        }
        dir = d.parent();
    }
    Ok(())
}

/// Installs the hook in one JSON settings file (with `lock`, the
/// [`lock_keys`] too); returns what to print.
fn init_json(
    agent: Agent,
    path: &Path,
    hook: &Hook,
    lock: bool,
    dry_run: bool,
) -> Result<String, String> {
    let path = path.to_path_buf();
    let shown = path.display().to_string();
    // Write through a symlink to the file it names, not over the link.
    let target = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    // Read as policy files are: a FIFO or device there is refused by kind, and
    // at most 16 MiB is read.
    let old = match crate::loader::read_file(&target) {
        Ok(t) => t,
        Err(crate::loader::LoadError::NotFound(_)) => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut root: Value = if old.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(&old).map_err(|e| {
            format!(
                "`{shown}` is not valid JSON ({e}); it was left as it is. Fix it, or add this {} hook by hand: {}",
                events(agent).join(", "),
                handler(agent, hook)
            )
        })?
    };
    let original = root.clone();
    let changes = install(&mut root, agent, hook)
        .map_err(|e| format!("`{shown}`: {e}; it was left as it is"))?;
    let locked = if lock {
        set_lock(&mut root, agent).map_err(|e| format!("`{shown}`: {e}; it was left as it is"))?
    } else {
        false
    };
    let new = pretty(&root, &indent_of(&old));
    let mut out = String::new();
    let verb = |c: Change| match (c, dry_run) {
        (Change::Added, false) => "added",
        (Change::Added, true) => "would add",
        (Change::Updated, false) => "updated",
        (Change::Updated, true) => "would update",
        (Change::Unchanged, _) => "already has",
    };
    for (event, change) in &changes {
        out.push_str(&format!(
            "{shown}: {} the `{event}` hook `{}`\n",
            verb(*change),
            hook.shown()
        ));
    }
    for (table, key) in lock_keys(agent).iter().filter(|_| lock) {
        let name = if table.is_empty() {
            (*key).to_string()
        } else {
            format!("{table}.{key}")
        };
        let verb = match (locked, dry_run) {
            (false, _) => "already has",
            (true, false) => "set",
            (true, true) => "would set",
        };
        out.push_str(&format!("{shown}: {verb} `{name}: true`\n"));
    }
    if root == original {
        out.push_str(&format!("{shown}: nothing to change\n"));
        return Ok(out);
    }
    out.push('\n');
    out.push_str(&diff(&shown, &old, &new));
    if !dry_run {
        write_atomically(&target, &new)?;
    }
    Ok(out)
}

/// `requirements.toml` with our `PreToolUse` hook under `[hooks]` (and with
/// `lock`, `allow_managed_hooks_only = true`), every other line kept as
/// written; `None` when it already is so. The result is read back with
/// Codex's shape before it is used.
///
/// # Errors
/// The file is not TOML, or holds its hooks in a form lines cannot be added to
/// (an inline `PreToolUse = [...]`).
pub fn with_codex_requirements(text: &str, command: &str, lock: bool) -> Result<String, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("it is not TOML ({})", e.message()))?;
    let handlers = codex_requirement_handlers(&doc);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let is_command = |l: &str| {
        l.trim_start()
            .strip_prefix("command")
            .is_some_and(|r| r.trim_start().starts_with('='))
    };
    if handlers.iter().any(|c| c == command) {
        // Already there.
    } else if handlers.is_empty() {
        let inline = doc
            .get("hooks")
            .and_then(|h| h.get("PreToolUse"))
            .is_some_and(|p| !text.contains("[[hooks.PreToolUse]]") && p.is_array());
        if inline {
            return Err(
                "its `hooks.PreToolUse` is an inline list, which lines cannot be added to".into(),
            );
        }
        if lines.last().is_some_and(|l| !l.trim().is_empty()) {
            lines.push(String::new());
        }
        lines.extend([
            "# zero-policy: every tool call is decided by the policy (`zero-policy init codex --managed`)".into(),
            "[[hooks.PreToolUse]]".into(),
            "matcher = \"*\"".into(),
            String::new(),
            "[[hooks.PreToolUse.hooks]]".into(),
            "type = \"command\"".into(),
            format!("command = {}", toml_string(command)),
            "timeout = 30".into(),
        ]);
    } else {
        // Ours with another binary path: each `command = ...` line that
        // reads as one of ours is brought up to date.
        for line in &mut lines {
            if !is_command(line) {
                continue;
            }
            let value = line
                .split_once('=')
                .and_then(|(_, v)| format!("v = {v}").parse::<toml::Table>().ok())
                .and_then(|t| t.get("v").and_then(toml::Value::as_str).map(String::from));
            if value.is_some_and(|v| is_ours(&v, Agent::Codex)) {
                *line = format!("command = {}", toml_string(command));
            }
        }
    }
    if lock
        && doc
            .get("allow_managed_hooks_only")
            .and_then(toml::Value::as_bool)
            != Some(true)
    {
        let key = |l: &str| {
            l.trim_start()
                .strip_prefix("allow_managed_hooks_only")
                .is_some_and(|r| r.trim_start().starts_with('='))
        };
        let first_table = lines
            .iter()
            .position(|l| l.trim_start().starts_with('['))
            .unwrap_or(lines.len());
        match lines[..first_table].iter().position(|l| key(l)) {
            Some(i) => lines[i] = "allow_managed_hooks_only = true".into(),
            None => {
                let mut at = first_table;
                // Above the comment that opens the first table, if any.
                while at > 0 && lines[at - 1].trim_start().starts_with('#') {
                    at -= 1;
                }
                lines.insert(at, "allow_managed_hooks_only = true".into());
                if at + 1 < lines.len() && !lines[at + 1].trim().is_empty() {
                    lines.insert(at + 1, String::new());
                }
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    // Read back as Codex will: our command once, the lock if asked.
    let check: toml::Table = out
        .parse()
        .map_err(|e: toml::de::Error| format!("the change would not be TOML ({})", e.message()))?;
    let ours = codex_requirement_handlers(&check);
    let locked = check
        .get("allow_managed_hooks_only")
        .and_then(toml::Value::as_bool)
        == Some(true);
    if !ours.iter().any(|c| c == command) || (lock && !locked) {
        return Err("the hook could not be added to it line by line".into());
    }
    Ok(out)
}

/// The commands of our hooks in a `requirements.toml`'s `[hooks]` `PreToolUse`.
#[must_use]
pub fn codex_requirement_handlers(doc: &toml::Table) -> Vec<String> {
    doc.get("hooks")
        .and_then(|h| h.get("PreToolUse"))
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(toml::Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(toml::Value::as_str))
        .filter(|c| is_ours(c, Agent::Codex))
        .map(String::from)
        .collect()
}

/// `init codex --managed`: the hook in `requirements.toml`.
fn init_codex_requirements(
    path: &Path,
    command: &str,
    lock: bool,
    dry_run: bool,
) -> Result<String, String> {
    let shown = path.display().to_string();
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let old = match crate::loader::read_file(&target) {
        Ok(t) => t,
        Err(crate::loader::LoadError::NotFound(_)) => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let new = with_codex_requirements(&old, command, lock).map_err(|e| {
        format!(
            "`{shown}`: {e}; it was left as it is. Add this by hand:\n\n\
             [[hooks.PreToolUse]]\nmatcher = \"*\"\n\n[[hooks.PreToolUse.hooks]]\n\
             type = \"command\"\ncommand = {}\ntimeout = 30",
            toml_string(command)
        )
    })?;
    let doc: toml::Table = old.parse().unwrap_or_default();
    let had = codex_requirement_handlers(&doc);
    let verb = match (had.iter().any(|c| c == command), had.is_empty(), dry_run) {
        (true, _, _) => "already has",
        (false, true, false) => "added",
        (false, true, true) => "would add",
        (false, false, false) => "updated",
        (false, false, true) => "would update",
    };
    let mut out = format!("{shown}: {verb} the `PreToolUse` hook `{command}`\n");
    if lock {
        let had_lock = doc
            .get("allow_managed_hooks_only")
            .and_then(toml::Value::as_bool)
            == Some(true);
        let verb = match (had_lock, dry_run) {
            (true, _) => "already has",
            (false, false) => "set",
            (false, true) => "would set",
        };
        out.push_str(&format!(
            "{shown}: {verb} `allow_managed_hooks_only = true`\n"
        ));
    }
    if new == old {
        out.push_str(&format!("{shown}: nothing to change\n"));
        return Ok(out);
    }
    out.push('\n');
    out.push_str(&diff(&shown, &old, &new));
    if !dry_run {
        write_atomically(&target, &new)?;
    }
    Ok(out)
}

/// Why Copilot CLI gets the client rather than its `http` hook.
const COPILOT_HTTP: &str = "\nCopilot CLI gets the client, not its `http` hook: it skips an `http` hook to a loopback `http://` URL unless `COPILOT_HOOK_ALLOW_LOCALHOST=1` is in its environment, and the call then runs. Where that variable is always set, an `http` hook to the same service works (see docs/hooks.md).\n";

/// What to know about an `http` hook once it is installed.
fn http_notes(agent: Agent, url: &str, token: bool) -> String {
    let mut out = format!(
        "\nThe hook asks `zero-policy serve --hooks` at `{url}`: keep it running (as a user service, say)."
    );
    if agent == Agent::ClaudeCode {
        out.push_str(
            " With `onFailure: \"block\"`, Claude Code blocks the call when the service is down.",
        );
    }
    if token {
        out.push_str(&format!(
            " It sends the token from `{}`, which must be set where the agent runs.",
            crate::cli::hook_service::TOKEN_VAR
        ));
    }
    out.push('\n');
    out
}

/// Codex's hash of one command hook, as `/hooks` records it when the hook is
/// trusted (codex-rs `hooks/src/engine/discovery.rs`, `command_hook_hash`,
/// and `config/src/fingerprint.rs`, `version_for_toml`): the SHA-256 of the
/// hook's normalized identity as JSON with sorted keys and no spaces.
#[must_use]
pub fn codex_hook_hash(event: &str, matcher: Option<&str>, handler: &Value) -> String {
    use sha2::Digest;
    let mut hook = std::collections::BTreeMap::new();
    hook.insert(
        "async",
        json!(
            handler
                .get("async")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        ),
    );
    hook.insert(
        "command",
        handler.get("command").cloned().unwrap_or(Value::Null),
    );
    if let Some(m) = handler.get("statusMessage").filter(|m| m.is_string()) {
        hook.insert("statusMessage", m.clone());
    }
    let timeout = handler
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(600)
        .max(1);
    hook.insert("timeout", json!(timeout));
    hook.insert("type", json!("command"));
    let hook = Value::Object(hook.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(event));
    identity.insert("hooks".into(), json!([hook]));
    if let Some(m) = matcher {
        identity.insert("matcher".into(), json!(m));
    }
    let text = Value::Object(identity).to_string();
    let digest = sha2::Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Codex's state key and hash for our `PreToolUse` handler in `hooks.json`.
pub fn codex_hook_identity(path: &Path, root: &Value) -> Option<(String, String)> {
    let groups = root.get("hooks")?.get("PreToolUse")?.as_array()?;
    for (g, group) in groups.iter().enumerate() {
        let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
            continue;
        };
        for (h, handler) in handlers.iter().enumerate() {
            let ours = handler
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(|c| is_ours(c, Agent::Codex));
            if ours {
                let matcher = group.get("matcher").and_then(Value::as_str);
                let key = format!("{}:pre_tool_use:{g}:{h}", path.display());
                return Some((key, codex_hook_hash("pre_tool_use", matcher, handler)));
            }
        }
    }
    None
}

/// Codex's user `config.toml` (`$CODEX_HOME`, else `~/.codex`).
fn codex_config() -> Result<PathBuf, String> {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir).join("config.toml")),
        None => crate::log::home()
            .map(|h| h.join(".codex/config.toml"))
            .ok_or_else(|| {
                "Codex's `config.toml` needs the home folder, and `HOME` is not set".into()
            }),
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `config.toml` with `[hooks.state."KEY"] trusted_hash = HASH` set, every
/// other line kept as written.
#[must_use]
pub fn set_codex_trust(config: &str, key: &str, hash: &str) -> String {
    set_toml_key(
        config,
        &format!("[hooks.state.{}]", toml_string(key)),
        "trusted_hash",
        &toml_string(hash),
    )
}

/// `config.toml` with `[projects."DIR"] trust_level = "trusted"` set, every
/// other line kept as written.
#[must_use]
pub fn set_codex_project_trust(config: &str, dir: &str) -> String {
    set_toml_key(
        config,
        &format!("[projects.{}]", toml_string(dir)),
        "trust_level",
        &toml_string("trusted"),
    )
}

/// `KEY = VALUE` set under the table `header`, added at the end when the
/// table is not there; every other line kept as written.
fn set_toml_key(config: &str, header: &str, key: &str, value: &str) -> String {
    let line = format!("{key} = {value}");
    let is_key = |l: &str| {
        l.trim_start()
            .strip_prefix(key)
            .is_some_and(|r| r.trim_start().starts_with('='))
    };
    let mut lines: Vec<String> = config.lines().map(String::from).collect();
    if let Some(start) = lines.iter().position(|l| l.trim() == header) {
        let end = lines[start + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with('['))
            .map_or(lines.len(), |e| start + 1 + e);
        match lines[start + 1..end].iter().position(|l| is_key(l)) {
            Some(i) => lines[start + 1 + i] = line,
            None => lines.insert(start + 1, line),
        }
    } else {
        if lines.last().is_some_and(|l| !l.trim().is_empty()) {
            lines.push(String::new());
        }
        lines.push(header.to_string());
        lines.push(line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The value of `key` in the table `[table."name"]` of a Codex `config.toml`,
/// if it is a string.
#[must_use]
pub fn codex_toml_value(config: &str, table: &str, name: &str, key: &str) -> Option<String> {
    let doc: toml::Table = config.parse().ok()?;
    let mut node = doc.get(table)?;
    if table == "hooks" {
        node = node.get("state")?;
    }
    node.get(name)?.get(key)?.as_str().map(String::from)
}

/// After `init codex`: record the hook's trust (`--trust`) or say the step left.
fn codex_trust(scope: Scope, trust: bool, dry_run: bool) -> Result<String, String> {
    let hooks = settings_file(Agent::Codex, scope)?;
    let absolute = std::fs::canonicalize(&hooks)
        .or_else(|_| std::path::absolute(&hooks))
        .map_err(|e| format!("cannot find `{}`: {e}", hooks.display()))?;
    let text = crate::loader::read_file(&absolute).unwrap_or_default();
    let root: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let Some((key, hash)) = codex_hook_identity(&absolute, &root) else {
        // A dry run on a file not written yet: nothing to hash.
        return Ok(String::new());
    };
    let config = codex_config()?;
    let old = match crate::loader::read_file(&config) {
        Ok(t) => t,
        Err(crate::loader::LoadError::NotFound(_)) => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let new = set_codex_trust(&old, &key, &hash);
    let shown = config.display().to_string();
    let mut out = String::new();
    if new == old {
        out.push_str(&format!(
            "{shown}: Codex already trusts this hook ({hash})\n"
        ));
    } else if trust {
        out.push('\n');
        out.push_str(&diff(&shown, &old, &new));
        if !dry_run {
            write_atomically(&config, &new)?;
            out.push_str(&format!(
                "{shown}: recorded the hook as trusted, as Codex's `/hooks` review does\n"
            ));
        }
    } else {
        out.push_str(&format!(
            "\nCodex runs this hook only once it is trusted, and skips it silently until then: \
             start `codex`, open `/hooks` and trust it, or run `zero-policy init codex{} --trust`\n",
            if scope == Scope::User { " --user" } else { "" }
        ));
    }
    if scope == Scope::Project {
        let dir = absolute
            .parent()
            .and_then(Path::parent)
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let now = crate::loader::read_file(&config).unwrap_or_default();
        let with = set_codex_project_trust(&now, &dir);
        let trusted =
            codex_toml_value(&now, "projects", &dir, "trust_level").as_deref() == Some("trusted");
        if trusted {
            out.push_str(&format!(
                "{shown}: Codex already trusts the project `{dir}`\n"
            ));
        } else if trust {
            out.push('\n');
            out.push_str(&diff(&shown, &now, &with));
            if !dry_run {
                write_atomically(&config, &with)?;
                out.push_str(&format!(
                    "{shown}: recorded the project `{dir}` as trusted\n"
                ));
            }
        } else {
            out.push_str(&format!(
                "Codex reads `.codex/hooks.json` only in a trusted project: trust `{dir}` when Codex asks, \
                 or run `zero-policy init codex --trust`\n"
            ));
        }
    }
    Ok(out)
}

/// The file where Gemini CLI or Copilot CLI records trusted folders.
///
/// # Errors
/// No home folder.
pub fn folder_trust_file(agent: Agent) -> Result<PathBuf, String> {
    let home = || {
        crate::log::home()
            .ok_or_else(|| "folder trust needs the home folder, and `HOME` is not set".to_string())
    };
    match agent {
        Agent::GeminiCli => Ok(home()?.join(".gemini/trustedFolders.json")),
        Agent::Copilot => match std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => Ok(PathBuf::from(dir).join("config.json")),
            None => Ok(home()?.join(".copilot/config.json")),
        },
        _ => Err(format!("{} has no folder trust", agent.display())),
    }
}

/// A JSON settings file that may open with `//` comment lines (Copilot CLI
/// writes one at the top of its `config.json`): those lines, and the value.
fn read_commented_json(text: &str) -> Result<(String, Value), String> {
    let mut header = String::new();
    let mut rest = text;
    while let Some(line) = rest.lines().next() {
        if !line.trim_start().starts_with("//") {
            break;
        }
        header.push_str(line);
        header.push('\n');
        rest = rest.get(line.len() + 1..).unwrap_or("");
    }
    let value = if rest.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(rest).map_err(|e| e.to_string())?
    };
    Ok((header, value))
}

/// Whether the agent's trust file trusts `dir` (Gemini CLI: `TRUST_FOLDER`
/// for it, or `TRUST_PARENT` for a folder in it; Copilot CLI: it is listed
/// in `trustedFolders`). `None` when the file does not read.
#[must_use]
pub fn folder_trusted(agent: Agent, text: &str, dir: &Path) -> Option<bool> {
    let (_, value) = read_commented_json(text).ok()?;
    let d = dir.display().to_string();
    Some(match agent {
        Agent::GeminiCli => value.as_object()?.iter().any(|(k, v)| {
            let k = Path::new(k);
            (k == dir && v == "TRUST_FOLDER") || (dir.parent() == Some(k) && v == "TRUST_PARENT")
        }),
        // `trustedFolders` now; Copilot CLI 1.0.102 still reads (and renames)
        // the older `trusted_folders`.
        Agent::Copilot => ["trustedFolders", "trusted_folders"].iter().any(|key| {
            value
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|f| f.as_str() == Some(d.as_str())))
        }),
        _ => false,
    })
}

/// The trust file's text with `dir` trusted, every other key kept.
fn with_folder_trusted(agent: Agent, text: &str, dir: &Path) -> Result<String, String> {
    let (header, mut value) = read_commented_json(text)?;
    let d = dir.display().to_string();
    let map = value.as_object_mut().ok_or("it is not a JSON object")?;
    match agent {
        Agent::GeminiCli => {
            map.insert(d, json!("TRUST_FOLDER"));
        }
        _ => {
            let list = map
                .entry("trustedFolders")
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .ok_or("`trustedFolders` is not a list")?;
            if !list.iter().any(|f| f.as_str() == Some(d.as_str())) {
                list.push(json!(d));
            }
        }
    }
    Ok(format!("{header}{}", pretty(&value, &indent_of(text))))
}

/// After `init gemini-cli` or `init copilot` in a project: record the
/// project folder as trusted (`--trust`) or say the step left. Both agents
/// load a project's hooks only in a trusted folder; Copilot CLI runs without
/// them, silently (seen in Copilot CLI 1.0.102), and Gemini CLI refuses to
/// run headless in an untrusted folder.
fn folder_trust(agent: Agent, trust: bool, dry_run: bool) -> Result<String, String> {
    let dir =
        std::env::current_dir().map_err(|e| format!("cannot find the current folder: {e}"))?;
    let file = folder_trust_file(agent)?;
    let shown = file.display().to_string();
    let old = match crate::loader::read_file(&file) {
        Ok(t) => t,
        Err(crate::loader::LoadError::NotFound(_)) => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut out = String::new();
    if folder_trusted(agent, &old, &dir) == Some(true) {
        out.push_str(&format!(
            "{shown}: {} already trusts `{}`\n",
            agent.display(),
            dir.display()
        ));
        return Ok(out);
    }
    if !trust {
        out.push_str(&format!(
            "\n{} loads this project's hooks only in a trusted folder, and `{}` is not trusted: \
             trust it when {} asks, or run `zero-policy init {} --trust`\n",
            agent.display(),
            dir.display(),
            agent.display(),
            agent.as_str()
        ));
        return Ok(out);
    }
    let new = with_folder_trusted(agent, &old, &dir)
        .map_err(|e| format!("`{shown}`: {e}; it was left as it is"))?;
    out.push('\n');
    out.push_str(&diff(&shown, &old, &new));
    if !dry_run {
        write_atomically(&file, &new)?;
        out.push_str(&format!(
            "{shown}: recorded `{}` as a trusted folder\n",
            dir.display()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::path::Path;

    use super::*;

    #[test]
    fn our_commands_are_recognised_whatever_the_binary_path() {
        let cmd = hook_command(Path::new("/opt/my tools/zero-policy"), Agent::Codex);
        assert_eq!(cmd, "'/opt/my tools/zero-policy' hook codex");
        assert!(is_ours(&cmd, Agent::Codex));
        assert!(!is_ours(&cmd, Agent::ClaudeCode));
        assert!(is_ours("/usr/bin/zero-policy hook cursor", Agent::Cursor));
        assert!(is_ours(
            &hook_command(Path::new("/it's/zero-policy"), Agent::Cursor),
            Agent::Cursor
        ));
        assert!(!is_ours("/usr/bin/other hook cursor", Agent::Cursor));
        assert!(!is_ours("echo zero-policy hook cursor", Agent::Cursor));
        assert!(!is_ours(
            "'/unterminated/zero-policy hook cursor",
            Agent::Cursor
        ));
    }

    #[test]
    fn shell_quote_leaves_plain_paths_and_quotes_the_rest() {
        assert_eq!(
            shell_quote("/usr/local/bin/zero-policy"),
            "/usr/local/bin/zero-policy"
        );
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("/a'b"), r"'/a'\''b'");
        assert_eq!(shell_quote("/a$HOME"), "'/a$HOME'");
    }

    #[test]
    fn installing_twice_gives_one_entry_and_updates_a_moved_binary() {
        let mut root = json!({"model": "opus", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}
        ]}});
        let first = install(
            &mut root,
            Agent::ClaudeCode,
            &Hook::Command("/a/zero-policy hook claude-code".into()),
        )
        .unwrap();
        assert_eq!(first, vec![("PreToolUse", Change::Added)]);
        let again = install(
            &mut root,
            Agent::ClaudeCode,
            &Hook::Command("/a/zero-policy hook claude-code".into()),
        )
        .unwrap();
        assert_eq!(again, vec![("PreToolUse", Change::Unchanged)]);
        let moved = install(
            &mut root,
            Agent::ClaudeCode,
            &Hook::Command("/b/zero-policy hook claude-code".into()),
        )
        .unwrap();
        assert_eq!(moved, vec![("PreToolUse", Change::Updated)]);
        assert_eq!(
            root,
            json!({"model": "opus", "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "/b/zero-policy hook claude-code", "timeout": 30, "onFailure": "block"}]}
            ]}})
        );
    }

    #[test]
    fn duplicates_of_our_entry_are_folded_into_one() {
        let ours =
            json!({"type": "command", "bash": "/a/zero-policy hook copilot", "timeoutSec": 30});
        let mut root = json!({"version": 1, "hooks": {"preToolUse": [ours.clone(), ours.clone()]}});
        let changes = install(
            &mut root,
            Agent::Copilot,
            &Hook::Command("/a/zero-policy hook copilot".into()),
        )
        .unwrap();
        assert_eq!(changes, vec![("preToolUse", Change::Updated)]);
        assert_eq!(root, json!({"version": 1, "hooks": {"preToolUse": [ours]}}));
    }

    #[test]
    fn shapes_that_are_not_ours_to_change_are_errors() {
        for (bad, want) in [
            (json!([1]), "top level"),
            (json!({"hooks": []}), "`hooks` is not an object"),
            (
                json!({"hooks": {"PreToolUse": {}}}),
                "`hooks.PreToolUse` is not a list",
            ),
            (
                json!({"hooks": {"PreToolUse": [{"hooks": "x"}]}}),
                "is not a list",
            ),
        ] {
            let mut root = bad.clone();
            let err = install(
                &mut root,
                Agent::ClaudeCode,
                &Hook::Command("zero-policy hook claude-code".into()),
            )
            .unwrap_err();
            assert!(err.contains(want), "{bad}: {err}");
        }
    }

    #[test]
    fn diff_shows_added_lines_with_context() {
        let old = "{\n  \"a\": 1\n}\n";
        let new = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        assert_eq!(
            diff("f.json", old, new),
            "--- f.json\n+++ f.json\n@@ -1,3 +1,4 @@\n {\n-  \"a\": 1\n+  \"a\": 1,\n+  \"b\": 2\n }\n"
        );
        assert_eq!(diff("f.json", old, old), "");
        assert_eq!(
            diff("f.json", "", "{}\n"),
            "--- f.json\n+++ f.json\n@@ -0,0 +1,1 @@\n+{}\n"
        );
    }

    #[test]
    fn codex_hook_hash_is_the_one_codex_computes() {
        // `currentHash` that Codex 0.171.0's app server (`hooks/list`) gave
        // for this very hook in `$CODEX_HOME/hooks.json`.
        let handler = handler(
            Agent::Codex,
            &Hook::Command("/usr/local/bin/zero-policy hook codex".into()),
        );
        assert_eq!(
            codex_hook_hash("pre_tool_use", Some("*"), &handler),
            "sha256:43c7e3e3b77c48c7341a9f797599e749ccc2d5da20f42c4b335c655e1ee75b48"
        );
    }

    #[test]
    fn codex_trust_is_set_once_and_every_other_line_kept() {
        let old = "model = \"gpt-5\"\n\n[hooks.state.\"/h/hooks.json:pre_tool_use:0:0\"]\nenabled = true\ntrusted_hash = \"sha256:old\"\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n";
        let new = set_codex_trust(old, "/h/hooks.json:pre_tool_use:0:0", "sha256:new");
        assert_eq!(new, old.replace("sha256:old", "sha256:new"));
        assert_eq!(
            set_codex_trust(&new, "/h/hooks.json:pre_tool_use:0:0", "sha256:new"),
            new
        );
        assert_eq!(
            set_codex_trust(
                "model = \"o3\"\n",
                "/a \"b\"/hooks.json:pre_tool_use:1:0",
                "sha256:x"
            ),
            "model = \"o3\"\n\n[hooks.state.\"/a \\\"b\\\"/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:x\"\n"
        );
    }

    #[test]
    fn fail_closed_keys_are_added_to_an_entry_installed_before() {
        let mut root =
            json!({"hooks": {"preToolUse": [{"command": "/a/zero-policy hook cursor"}]}});
        let changes = install(
            &mut root,
            Agent::Cursor,
            &Hook::Command("/a/zero-policy hook cursor".into()),
        )
        .unwrap();
        assert_eq!(changes[0], ("preToolUse", Change::Updated));
        assert_eq!(root["hooks"]["preToolUse"][0]["failClosed"], json!(true));
    }

    #[test]
    fn codex_requirements_get_the_hook_once_or_are_refused() {
        let cmd = "/usr/bin/zero-policy hook codex";
        // Empty: the hook, and the lock at the top.
        let new = with_codex_requirements("", cmd, true).unwrap();
        assert!(
            new.starts_with("allow_managed_hooks_only = true\n"),
            "{new}"
        );
        assert_eq!(with_codex_requirements(&new, cmd, true).unwrap(), new);
        // A lock set to false by hand is turned on in place.
        let off = new.replace("= true", "= false");
        assert_eq!(with_codex_requirements(&off, cmd, true).unwrap(), new);
        // An inline list cannot take lines: refused, with the reason.
        let inline = "[hooks]\nPreToolUse = [{ matcher = \"Bash\", hooks = [] }]\n";
        let err = with_codex_requirements(inline, cmd, false).unwrap_err();
        assert!(err.contains("inline list"), "{err}");
        // Not TOML.
        assert!(with_codex_requirements("a = ", cmd, false).is_err());
    }

    #[test]
    fn indentation_is_kept() {
        assert_eq!(indent_of("{\n    \"a\": 1\n}"), "    ");
        assert_eq!(indent_of("{\n\t\"a\": 1\n}"), "\t");
        assert_eq!(indent_of("{}"), "  ");
    }
}
