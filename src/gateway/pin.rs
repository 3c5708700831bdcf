//! `zero-policy pin`: connect to every declared server and write
//! `zero-policy.lock`, the hash of each upstream tool's definition.
//!
//! The tools hashed are the ones the gateway would register (the server's
//! `include`/`exclude` applied). A server that does not answer keeps the
//! entries it had, so a flaky server never silently unpins its tools; servers
//! no longer declared are dropped.

use std::collections::BTreeMap;
use std::path::Path;

use crate::lock::{Lock, definition_hash};
use crate::mcp::register;
use crate::policy::Policy;
use crate::registry::SkippedServer;

/// One line of what `pin` changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A tool pinned for the first time.
    Added(String, String),
    /// A tool whose definition differs from the lock.
    Changed(String, String),
    /// A tool the server no longer lists (or that is no longer included).
    Removed(String, String),
}

/// What `pin` did.
#[derive(Debug, Clone)]
pub struct PinReport {
    /// The lock as written.
    pub lock: Lock,
    /// What changed, sorted.
    pub changes: Vec<Change>,
    /// Servers that did not answer; their earlier entries were kept.
    pub skipped: Vec<SkippedServer>,
}

/// Connects to every server, hashes their tools and writes the lock at `path`.
///
/// # Errors
/// The lock cannot be read or written.
pub async fn pin(policy: &Policy, path: &Path) -> Result<PinReport, String> {
    let old = Lock::read(path)?.unwrap_or_default();
    let lookup = |name: &str| std::env::var(name).ok();
    let mut tasks = tokio::task::JoinSet::new();
    let mut skipped = Vec::new();
    for s in &policy.servers {
        match register::connect_spec(s, &lookup) {
            Ok(spec) => {
                let name = s.name.clone();
                tasks.spawn(async move { (name, register::connect_and_list(spec).await) });
            }
            Err(e) => skipped.push(SkippedServer {
                server: s.name.clone(),
                reason: "connect-failed".into(),
                detail: e,
            }),
        }
    }
    let mut listed = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let Ok((name, result)) = joined else { continue };
        match result {
            Ok((client, tools)) => {
                client.close().await;
                listed.insert(name, tools);
            }
            Err(sk) => skipped.push(sk),
        }
    }
    skipped.sort_by(|a, b| a.server.cmp(&b.server));
    let mut lock = Lock {
        path: path.to_path_buf(),
        servers: BTreeMap::new(),
    };
    for s in &policy.servers {
        let Some(tools) = listed.get(&s.name) else {
            if let Some(kept) = old.servers.get(&s.name) {
                lock.servers.insert(s.name.clone(), kept.clone());
            }
            continue;
        };
        let mut hashes = BTreeMap::new();
        for t in tools {
            let Some(name) = &t.name else { continue };
            if !s.include.is_match(name) || s.exclude.is_match(name) {
                continue;
            }
            let hash = definition_hash(
                name,
                t.description.as_deref(),
                &t.input_schema,
                t.annotations.as_ref(),
            );
            hashes.insert(name.clone(), hash);
        }
        lock.servers.insert(s.name.clone(), hashes);
    }
    let mut changes = Vec::new();
    for (server, tools) in &lock.servers {
        let before = old.servers.get(server);
        for (tool, hash) in tools {
            match before.and_then(|b| b.get(tool)) {
                None => changes.push(Change::Added(server.clone(), tool.clone())),
                Some(h) if h != hash => changes.push(Change::Changed(server.clone(), tool.clone())),
                Some(_) => {}
            }
        }
    }
    for (server, tools) in &old.servers {
        for tool in tools.keys() {
            if !lock
                .servers
                .get(server)
                .is_some_and(|t| t.contains_key(tool))
            {
                changes.push(Change::Removed(server.clone(), tool.clone()));
            }
        }
    }
    changes.sort_by(|a, b| key(a).cmp(&key(b)));
    write_atomically(path, &lock.to_text())?;
    Ok(PinReport {
        lock,
        changes,
        skipped,
    })
}

fn key(c: &Change) -> (&str, &str) {
    match c {
        Change::Added(s, t) | Change::Changed(s, t) | Change::Removed(s, t) => (s, t),
    }
}

/// Writes a file whole: a temporary file beside it, then a rename.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let shown = path.display();
    let tmp = path.with_extension(format!("lock.tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write `{shown}`: {e}")
    })
}
