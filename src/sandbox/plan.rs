//! The envelope of one call: what `settings.enforce` and the call's own
//! effects allow it to touch, computed once before it runs (SPEC §11).
//!
//! The kernel grants folders, not patterns, so a glob grants the folder before
//! its first wildcard (`~/.cargo/**` grants `~/.cargo`). Deny lists stay globs:
//! the backend finds what they match on the host and hides it (reads) or makes
//! it read-only (writes). A grant that would widen to the whole file system
//! because of a wildcard (`/*/cache/**`) is refused rather than widened.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::effects::Effects;
use crate::model::{NetworkScope, WriteScope};
use crate::policy::Enforce;

use super::{Envelope, Limits, Network};

/// The environment variable that carries an envelope, as JSON, to the hidden
/// `zero-policy __confine` that confines itself and then runs the program.
pub const ENVELOPE_VAR: &str = "ZERO_POLICY_ENVELOPE";

/// A program to start so that it runs confined: `zero-policy __confine --
/// PROGRAM ARGS…` with the envelope in [`ENVELOPE_VAR`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinedCommand {
    /// The `zero-policy` program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The variable to set: name and value.
    pub env: (String, String),
}

/// The program and arguments that run `program args…` confined to `envelope`
/// (this binary's `__confine`), and the variable to set for it.
///
/// # Errors
/// This binary's path cannot be found, or the envelope cannot be written.
pub fn confined_command(
    envelope: &Envelope,
    program: &str,
    args: &[String],
) -> Result<ConfinedCommand, PlanError> {
    confined_command_by(&confine_program()?, envelope, program, args)
}

/// As [`confined_command`], confined by the `zero-policy` program at `exe`.
///
/// # Errors
/// The envelope cannot be written.
pub fn confined_command_by(
    exe: &std::path::Path,
    envelope: &Envelope,
    program: &str,
    args: &[String],
) -> Result<ConfinedCommand, PlanError> {
    let json = serde_json::to_string(envelope).map_err(|e| PlanError(e.to_string()))?;
    let mut argv = vec![
        "__confine".to_string(),
        "--".to_string(),
        program.to_string(),
    ];
    argv.extend(args.iter().cloned());
    Ok(ConfinedCommand {
        program: exe.display().to_string(),
        args: argv,
        env: (ENVELOPE_VAR.to_string(), json),
    })
}

/// The `zero-policy` program that confines a call: `$ZERO_POLICY_BIN`, else
/// this program when it is `zero-policy`, else `zero-policy` on `PATH`. (A
/// process confines itself and then runs the call, so the library needs the
/// binary: it cannot confine a child between fork and exec without `unsafe`.)
///
/// # Errors
/// None of them is there.
pub fn confine_program() -> Result<std::path::PathBuf, PlanError> {
    if let Some(p) = std::env::var_os("ZERO_POLICY_BIN").filter(|p| !p.is_empty()) {
        return Ok(std::path::PathBuf::from(p));
    }
    if let Ok(me) = std::env::current_exe()
        && me.file_stem().is_some_and(|n| n == "zero-policy")
    {
        return Ok(me);
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("zero-policy"))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| {
            PlanError(
                "no `zero-policy` program to confine the call with: set ZERO_POLICY_BIN or put it on PATH"
                    .into(),
            )
        })
}

/// What the envelope is computed from besides the call's effects.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// `settings.enforce`.
    pub enforce: &'a Enforce,
    /// The policy's lists, for `lists.NAME` entries.
    pub lists: &'a BTreeMap<String, Vec<String>>,
    /// What `~` means.
    pub home: &'a str,
    /// The session's workspace (`{workspace}`).
    pub workspace: &'a str,
}

/// Why no envelope could be computed: the call is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// The envelope for a call with these effects.
///
/// # Errors
/// An entry names no list, or a grant cannot be expressed as folders without
/// widening to the whole file system.
pub fn envelope(cx: &Context<'_>, fx: &Effects) -> Result<Envelope, PlanError> {
    let e = cx.enforce;
    let expand = |entries: &[String]| -> Result<Vec<String>, PlanError> {
        let mut out = Vec::new();
        for entry in entries {
            match entry.strip_prefix("lists.") {
                Some(name) => {
                    let list = cx.lists.get(name).ok_or_else(|| {
                        PlanError(format!(
                            "`settings.enforce` names `lists.{name}`, which no file defines"
                        ))
                    })?;
                    out.extend(list.iter().cloned());
                }
                None => out.push(entry.clone()),
            }
        }
        Ok(out)
    };
    let place = |glob: &str| -> String {
        let g = if glob == "~" {
            cx.home.to_string()
        } else if let Some(rest) = glob.strip_prefix("~/") {
            format!("{}/{rest}", cx.home.trim_end_matches('/'))
        } else if let Some(rest) = glob.strip_prefix("{workspace}") {
            format!("{}{rest}", cx.workspace.trim_end_matches('/'))
        } else {
            glob.to_string()
        };
        crate::effects::paths::clean(&g)
    };
    let grants = |entries: &[String], what: &str| -> Result<Vec<PathBuf>, PlanError> {
        let mut out = Vec::new();
        for glob in expand(entries)? {
            if !(glob.starts_with('/') || glob.starts_with('~') || glob.starts_with("{workspace}"))
            {
                // A relative glob (`**/.env`) names no folder to grant.
                continue;
            }
            let g = place(&glob);
            out.push(folder_of(&g).ok_or_else(|| {
                PlanError(format!(
                    "`settings.enforce.{what}` entry `{glob}` would grant the whole file system; name its folder (`/srv/data/**`)"
                ))
            })?);
        }
        Ok(out)
    };

    let workspace = PathBuf::from(crate::effects::paths::clean(cx.workspace));
    let lifted = lifted(e, fx);

    // Reads: the policy's places, and what the call was decided to read or
    // list (a folder is listed through Landlock's read-dir right).
    let mut reads = grants(&e.reads, "reads")?;
    if fx.exact {
        // A tree grounding narrowed (a walk saw no credential in it) is still
        // what the call reads: the kernel grants it; `deny_reads` still hides.
        let narrowed = fx
            .grounding
            .iter()
            .flat_map(|g| &g.walks)
            .filter(|w| w.narrowed)
            .map(|w| &w.tree);
        for r in fx.reads.iter().chain(&fx.lists).chain(narrowed) {
            if let Some(f) = folder_of(r).filter(|f| f.as_os_str() != "/") {
                reads.push(f);
            }
        }
    }

    // Writes: the call's own, or the workspace where they are not known.
    // A place the policy lists that is not on this host grants nothing (its
    // nearest existing parent could be `/`).
    let mut writes: Vec<PathBuf> = grants(&e.write_also, "write_also")?
        .into_iter()
        .filter(|p| p.exists())
        .collect();
    let unknown_writes = !fx.exact || fx.runs_code;
    match e.writes {
        WriteScope::Workspace => writes.push(workspace.clone()),
        WriteScope::Predicted => {
            let mut to_workspace = unknown_writes;
            // Removing or moving a path away is a change of its folder.
            let deleted = fx.deletes.iter().filter_map(|d| {
                if crate::effects::paths::is_pattern(d) {
                    return Some(d.clone());
                }
                let f = folder_of(d)?;
                f.parent().map(|p| p.display().to_string())
            });
            let written: Vec<String> = fx.writes.iter().cloned().chain(deleted).collect();
            for w in &written {
                match folder_of(w) {
                    // A file to be created is created in its folder: that
                    // folder must exist and not be `/`.
                    Some(f)
                        if f.exists()
                            || f.parent()
                                .is_some_and(|p| p.parent().is_some() && p.exists()) =>
                    {
                        writes.push(f);
                    }
                    Some(f) if f.as_os_str() != "/" => {
                        // Nowhere to create it: the kernel refuses the write.
                    }
                    _ => to_workspace = true,
                }
            }
            if to_workspace {
                writes.push(workspace.clone());
            }
        }
    }

    // What a program's lift lets it write (`**/.git/**` for git) is granted
    // where it exists in the workspace.
    for g in &lifted.writes {
        let tail = g
            .strip_prefix("**/")
            .map(|t| t.strip_suffix("/**").unwrap_or(t));
        if let Some(tail) = tail.filter(|t| !crate::effects::paths::is_pattern(t)) {
            let p = workspace.join(tail);
            if p.exists() {
                writes.push(p);
            }
        }
    }
    let exec = grants(&e.exec, "exec")?;
    let deny = |entries: &[String], lift: &[String]| -> Result<Vec<String>, PlanError> {
        Ok(expand(entries)?
            .into_iter()
            .filter(|g| !lift.contains(g))
            .flat_map(|g| expand_braces(&g))
            .map(|g| if g.starts_with("**") { g } else { place(&g) })
            .collect())
    };
    // Only what lies inside a grant needs hiding: the rest is out of reach.
    // Each root's components are taken apart once, not once per glob and root
    // (`Path::starts_with` parses both paths each time it is asked: hundreds of
    // deny globs against dozens of grants made this most of `run`'s own time).
    let inside = |globs: Vec<String>, roots: &[&PathBuf]| -> Vec<String> {
        let roots: Vec<Vec<std::path::Component<'_>>> =
            roots.iter().map(|r| r.components().collect()).collect();
        globs
            .into_iter()
            .filter(|g| {
                g.starts_with("**")
                    || folder_of(g).is_none_or(|f| {
                        let f: Vec<std::path::Component<'_>> = f.components().collect();
                        roots
                            .iter()
                            .any(|r| f.starts_with(r.as_slice()) || r.starts_with(f.as_slice()))
                    })
            })
            .collect()
    };
    // Another process's files under /proc (`environ`, `mem`) are out of reach
    // already: Landlock refuses ptrace-class access to processes outside the
    // sandbox. The call's own are its own. So /proc is not walked for them.
    let not_proc = |globs: Vec<String>| -> Vec<String> {
        globs
            .into_iter()
            .filter(|g| !(g.starts_with("/proc/") || g.starts_with("/sys/")))
            .collect()
    };
    let readable: Vec<&PathBuf> = reads.iter().chain(&writes).chain(&exec).collect();
    let deny_reads = inside(not_proc(deny(&e.deny_reads, &lifted.reads)?), &readable);
    let writable: Vec<&PathBuf> = writes.iter().collect();
    let deny_writes = inside(deny(&e.deny_writes, &lifted.writes)?, &writable);

    // Temp folders are written but never run from: a program dropped there
    // does not start, even through the dynamic loader.
    let noexec = writes
        .iter()
        .filter(|w| {
            !exec.iter().any(|x| w.starts_with(x))
                && !w.starts_with(&workspace)
                && !workspace.starts_with(w)
        })
        .cloned()
        .collect();

    let network = match (e.network, lifted.network) {
        (NetworkScope::Any, _) | (_, Some(NetworkScope::Any)) => Network::Any,
        (NetworkScope::None, _) => Network::None,
        (NetworkScope::Predicted, _) => {
            let mut ports: Vec<u16> = fx
                .fetches
                .iter()
                .map(|f| {
                    f.port.unwrap_or(match f.scheme.as_str() {
                        "http" | "ws" => 80,
                        "ssh" | "git+ssh" => 22,
                        "ftp" => 21,
                        _ => 443,
                    })
                })
                .collect();
            ports.sort_unstable();
            ports.dedup();
            if ports.is_empty() {
                Network::None
            } else {
                Network::Ports(ports)
            }
        }
    };

    let mut search = vec![workspace.clone()];
    for c in &fx.commands {
        let cwd = PathBuf::from(&c.cwd);
        if !crate::effects::paths::is_pattern(&c.cwd)
            && !cwd.starts_with(&workspace)
            && cwd.as_os_str() != "/"
        {
            search.push(cwd);
        }
    }
    let mut env = Envelope {
        reads,
        writes,
        exec,
        deny_reads,
        deny_writes,
        search,
        noexec,
        network,
        unix_sockets: e.unix_sockets,
        limits: Limits {
            processes: e.processes,
            file_size: e.file_size,
            cpu_seconds: e.cpu_seconds,
        },
        deny_env: e.deny_env.clone(),
        keep_env: Vec::new(),
    };
    for v in [
        &mut env.reads,
        &mut env.writes,
        &mut env.exec,
        &mut env.search,
        &mut env.noexec,
    ] {
        v.sort();
        v.dedup();
    }
    env.deny_reads.sort();
    env.deny_reads.dedup();
    env.deny_writes.sort();
    env.deny_writes.dedup();
    Ok(env)
}

/// What `settings.enforce.programs` lifts for this call: only where every
/// command is that program or one that touches no file, and the call is exact.
#[derive(Debug, Default)]
struct Lifted {
    reads: Vec<String>,
    writes: Vec<String>,
    network: Option<NetworkScope>,
}

fn lifted(e: &Enforce, fx: &Effects) -> Lifted {
    let mut out = Lifted::default();
    // A program that runs code (`git -c alias.x='!cat …'`) could hand what is
    // lifted for it to anything.
    if !fx.exact || fx.commands.is_empty() || fx.runs_code {
        return out;
    }
    let file_free = |c: &crate::effects::Command| {
        c.exact
            && c.reads.is_empty()
            && c.lists.is_empty()
            && c.writes.is_empty()
            && c.deletes.is_empty()
            && !c.runs_code
    };
    let programs: Vec<&str> = fx
        .commands
        .iter()
        .filter(|c| !file_free(c) || e.programs.contains_key(&c.program))
        .map(|c| c.program.as_str())
        .collect();
    let Some(first) = programs.first() else {
        return out;
    };
    if programs.iter().any(|p| p != first) {
        return out;
    }
    if let Some(p) = e.programs.get(*first) {
        out.reads.clone_from(&p.reads);
        out.writes.clone_from(&p.writes);
        out.network = p.network;
    }
    out
}

/// A glob's `{a,b}` alternatives spelled out, so that each names one place
/// to look (`/{root,home/*}/.ssh/**` is `/root/.ssh/**` and `/home/*/.ssh/**`).
/// At most 64 results; past that the glob is kept as it is.
#[must_use]
pub fn expand_braces(glob: &str) -> Vec<String> {
    fn go(g: &str, out: &mut Vec<String>) -> bool {
        if out.len() > 64 {
            return false;
        }
        let Some(open) = g.find('{') else {
            out.push(g.to_string());
            return true;
        };
        // The matching `}` and the top-level commas between.
        let (mut depth, mut close, mut commas) = (0usize, None, Vec::new());
        for (i, c) in g[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                ',' if depth == 1 => commas.push(open + i),
                _ => {}
            }
        }
        let Some(close) = close else {
            out.push(g.to_string());
            return true;
        };
        let mut cuts = vec![open];
        cuts.extend(commas);
        cuts.push(close);
        for pair in cuts.windows(2) {
            let alt = &g[pair[0] + 1..pair[1]];
            if !go(&format!("{}{alt}{}", &g[..open], &g[close + 1..]), out) {
                return false;
            }
        }
        true
    }
    let mut out = Vec::new();
    if go(glob, &mut out) {
        out
    } else {
        vec![glob.to_string()]
    }
}

/// The folder a glob grants: the path up to its first wildcard segment, or
/// the path itself; `None` where that is the root because of a wildcard.
#[must_use]
pub fn folder_of(glob: &str) -> Option<PathBuf> {
    let mut literal = String::new();
    let mut chars = glob.chars().peekable();
    let mut wild = false;
    while let Some(c) = chars.next() {
        match c {
            // `[c]` is an escaped literal character (how effects write one).
            '[' => {
                let mut look = chars.clone();
                match (look.next(), look.next()) {
                    (Some(x), Some(']')) => {
                        literal.push(x);
                        chars.next();
                        chars.next();
                    }
                    _ => {
                        wild = true;
                        break;
                    }
                }
            }
            '*' | '?' | '{' => {
                wild = true;
                break;
            }
            c => literal.push(c),
        }
    }
    if !wild {
        return Some(PathBuf::from(crate::effects::paths::clean(&literal)));
    }
    // Up to the last `/` before the wildcard.
    let cut = literal.rfind('/').unwrap_or(0);
    let folder = crate::effects::paths::clean(&literal[..cut]);
    if folder == "/" && glob != "/**" {
        return None;
    }
    Some(PathBuf::from(folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_grants_the_folder_before_its_first_wildcard() {
        assert_eq!(
            folder_of("/home/u/.cargo/**"),
            Some(PathBuf::from("/home/u/.cargo"))
        );
        assert_eq!(folder_of("/srv/a*/b"), Some(PathBuf::from("/srv")));
        assert_eq!(folder_of("/etc/hosts"), Some(PathBuf::from("/etc/hosts")));
        assert_eq!(
            folder_of("/w/odd[[]name/x"),
            Some(PathBuf::from("/w/odd[name/x"))
        );
        assert_eq!(folder_of("/**"), Some(PathBuf::from("/")));
        assert_eq!(folder_of("/*/cache/**"), None);
    }

    #[test]
    fn braces_are_spelled_out() {
        assert_eq!(
            expand_braces("/{root,home/*}/{.ssh,.aws}/**"),
            [
                "/root/.ssh/**",
                "/root/.aws/**",
                "/home/*/.ssh/**",
                "/home/*/.aws/**"
            ]
        );
        assert_eq!(expand_braces("/a/b"), ["/a/b"]);
        assert_eq!(expand_braces("/a/{b"), ["/a/{b"]);
    }
}
