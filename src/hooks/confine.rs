//! Rewrite to enforce (SPEC §7): an allowed or asked shell call is rewritten
//! to run through `zero-policy run`, which decides it again and runs it
//! confined by the kernel.
//!
//! Two things hold the rewrite honest:
//!
//! - **A call the person approved is not refused again.** For an asked call
//!   the hook leaves a one-time **ticket**: a private file bound to the exact
//!   script and workspace, which `run --ticket ID` consumes to accept the
//!   person's approval of a `prompt` (a `deny` stays a deny).
//! - **The model cannot mint that approval.** Tickets live in the state
//!   folder (`~/.local/state/zero-policy/tickets`, mode 0700), which no
//!   confined call may read or write; an id is 128 random bits; a ticket is
//!   good for one run, for ten minutes, for one script in one workspace.
//!
//! The working folder the agent's shell keeps between calls is kept too: the
//! confined script reports where it ended on a descriptor, and the rewritten
//! command `cd`s there after it.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::registry::Registry;

/// How long a ticket is good for.
pub const TICKET_SECONDS: u64 = 600;

/// The argument that holds a shell tool's script, where its `effects.shell`
/// is a plain `args.KEY` (only such a call can be rewritten).
#[must_use]
pub fn shell_key(registry: &Registry, tool: &str) -> Option<String> {
    let effects = registry.get(tool)?.effects.as_ref()?;
    let source = effects.shell.as_ref()?.source.trim();
    let key = source.strip_prefix("args.")?;
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| key.to_string())
}

/// Where the `zero-policy run` of a rewritten call reads its policy: the
/// place the hook read it from, so that both decide by one policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPolicy<'a> {
    /// The built-in default.
    Builtin,
    /// Files and folders, `:`-separated.
    Paths(&'a str),
    /// A signed bundle, a file or an `https://` URL, with its key and CA.
    Bundle {
        /// The bundle's file or URL.
        location: &'a Path,
        /// The minisign public key.
        key: &'a str,
        /// A CA file for a bundle at a URL.
        ca: Option<&'a Path>,
    },
}

/// The rewritten command: `run` decides and confines `script`, then the
/// agent's shell moves to where the script ended (read from `cwd_file`, see
/// [`cwd_file`]) and returns its status.
///
/// It uses no command substitution (`$(...)`, backticks) and no `rm -f`:
/// Gemini CLI refuses a command with a substitution as an injection, and
/// Codex refuses `rm -f` where nobody can approve it (both seen in the real
/// agents, `tests/real_agents.rs`).
#[must_use]
pub fn command_line(
    exe: &Path,
    agent: &str,
    workspace: &str,
    policy: RunPolicy<'_>,
    ticket: Option<&str>,
    cwd_file: &Path,
    script: &str,
) -> String {
    use crate::escape::shell_quote as q;
    let mut run = format!(
        "{} run --agent {} --session {} --cwd-fd 9",
        q(&exe.display().to_string()),
        q(agent),
        q(&format!("workspace={workspace}"))
    );
    let path = |p: &Path| q(&p.display().to_string());
    match policy {
        RunPolicy::Builtin => {}
        RunPolicy::Paths(p) => run.push_str(&format!(" --policy {}", q(p))),
        RunPolicy::Bundle { location, key, ca } => {
            run.push_str(&format!(" --bundle {} --key {}", path(location), q(key)));
            if let Some(ca) = ca {
                run.push_str(&format!(" --bundle-ca {}", path(ca)));
            }
        }
    }
    if let Some(t) = ticket {
        run.push_str(&format!(" --ticket {}", q(t)));
    }
    run.push_str(&format!(" -c {}", q(script)));
    let file = q(&cwd_file.display().to_string());
    format!(
        "{{ {run} 9>{file}; __zp_rc=$?; __zp_to=; IFS= read -r __zp_to <{file}; \
         rm {file}; [ -n \"$__zp_to\" ] && cd \"$__zp_to\"; (exit $__zp_rc); }}"
    )
}

/// How long a working-folder file is kept when the rewritten command never
/// ran (the agent refused it after the hook).
const CWD_FILE_SECONDS: u64 = 24 * 60 * 60;

/// A new private file (mode 0600, a 128-bit random name) in the state folder
/// (`~/.local/state/zero-policy/cwd`) for the rewritten command to report its
/// working folder in. Files older than a day, of commands that never ran, are
/// swept as new ones are made.
///
/// # Errors
/// The folder or file could not be made, or no randomness.
pub fn cwd_file() -> Result<PathBuf, String> {
    let dir = state_dir()?.join("cwd");
    let id = private_dir_and_id(&dir, CWD_FILE_SECONDS)?;
    let path = dir.join(format!("{id}.cwd"));
    new_private_file(&path).map(|_| path)
}

/// The call's arguments with its script replaced by `line`.
#[must_use]
pub fn rewritten(args: &Value, key: &str, line: String) -> Value {
    let mut out = args.clone();
    if let Value::Object(m) = &mut out {
        m.insert(key.to_string(), Value::String(line));
    }
    out
}

fn state_dir() -> Result<PathBuf, String> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| crate::log::home().map(|h| h.join(".local/state")))
        .ok_or("no home folder for the state folder")?;
    Ok(base.join("zero-policy"))
}

fn tickets_dir() -> Result<PathBuf, String> {
    Ok(state_dir()?.join("tickets"))
}

/// Makes `dir` (mode 0700), sweeps its files older than `keep` seconds, and
/// returns a new 128-bit random id.
fn private_dir_and_id(dir: &Path, keep: u64) -> Result<String, String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot make the folder `{}`: {e}", dir.display()))?;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("no randomness for an id: {e}"))?;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let stale = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > keep);
            if stale {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Creates `path` new, mode 0600 (never through an existing file or link).
fn new_private_file(path: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

fn binding(script: &str, workspace: &str) -> String {
    let mut h = Sha256::new();
    h.update(workspace.as_bytes());
    h.update([0]);
    h.update(script.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Leaves a ticket for `script` in `workspace`; returns its id.
///
/// # Errors
/// The ticket folder or file could not be written, or no randomness.
pub fn issue(script: &str, workspace: &str) -> Result<String, String> {
    let dir = tickets_dir()?;
    // Old tickets are swept as new ones are issued.
    let id = private_dir_and_id(&dir, TICKET_SECONDS)?;
    let body = serde_json::json!({
        "binds": binding(script, workspace),
        "expires": now() + TICKET_SECONDS,
    });
    let path = dir.join(&id);
    let mut f = new_private_file(&path)?;
    std::io::Write::write_all(&mut f, body.to_string().as_bytes())
        .map_err(|e| format!("cannot write the ticket `{}`: {e}", path.display()))?;
    Ok(id)
}

/// Consumes ticket `id` for `script` in `workspace`: it is gone afterwards,
/// whatever the outcome.
///
/// # Errors
/// No such ticket, used, expired, or bound to another call.
pub fn redeem(id: &str, script: &str, workspace: &str) -> Result<(), String> {
    if id.len() != 32 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err("the ticket id is not one `zero-policy hook` issues".into());
    }
    let path = tickets_dir()?.join(id);
    let text = crate::loader::read_file(&path)
        .map_err(|_| "no such ticket (used, expired or never issued)".to_string())?;
    // Removing it is what uses it: only one run gets past this.
    std::fs::remove_file(&path).map_err(|_| "the ticket was already used".to_string())?;
    let body: Value =
        serde_json::from_str(&text).map_err(|_| "the ticket is damaged".to_string())?;
    if body
        .get("expires")
        .and_then(Value::as_u64)
        .is_none_or(|t| t < now())
    {
        return Err("the ticket has expired".into());
    }
    if body.get("binds").and_then(Value::as_str) != Some(binding(script, workspace).as_str()) {
        return Err("the ticket was issued for another command or workspace".into());
    }
    Ok(())
}
