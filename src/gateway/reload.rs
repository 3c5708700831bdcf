//! Hot reload: the policy files (and the lock) are polled every
//! [`POLL_INTERVAL`]; when their names, sizes or modification times change,
//! the policy is loaded again and, if it loads, swapped in whole (a new
//! registry; calls in flight finish under the one they started with). A file
//! that no longer loads keeps the last good policy, and the errors go to stderr
//! and the decision log, once per change.
//!
//! Polling rather than file events: it sees editors that replace a file by
//! rename, folders created later, and network file systems alike, and a few
//! `stat` calls a second cost nothing next to a tool call.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::gateway::{Gateway, PolicySource, load_policy, upstreams};

/// How often the files are checked.
pub const POLL_INTERVAL: Duration = Duration::from_millis(300);
/// Folder depth searched, against symlink cycles.
const MAX_DEPTH: usize = 16;
/// Entries looked at per check, against huge trees.
const MAX_ENTRIES: usize = 20_000;

/// What the files looked like: (path, size, modified) of each, sorted.
pub(crate) type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

fn visit(path: &Path, depth: usize, out: &mut Fingerprint) {
    if out.len() >= MAX_ENTRIES {
        return;
    }
    let Ok(meta) = std::fs::metadata(path) else {
        out.push((path.to_path_buf(), u64::MAX, None));
        return;
    };
    if meta.is_dir() {
        if depth >= MAX_DEPTH {
            return;
        }
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            let is_yaml = child.extension().is_some_and(|e| e == "yaml" || e == "yml");
            if is_yaml || child.is_dir() {
                visit(&child, depth + 1, out);
            }
        }
    } else {
        out.push((path.to_path_buf(), meta.len(), meta.modified().ok()));
    }
}

/// What the files and folders `paths` look like: each YAML file's size and
/// modification time, and which are missing.
pub(crate) fn fingerprint_of(paths: &[PathBuf]) -> Fingerprint {
    let mut out = Vec::new();
    for p in paths {
        visit(p, 0, &mut out);
    }
    out
}

fn fingerprint(paths: &[PathBuf], lock: &Path) -> Fingerprint {
    let mut out = fingerprint_of(paths);
    match std::fs::metadata(lock) {
        Ok(m) => out.push((lock.to_path_buf(), m.len(), m.modified().ok())),
        Err(_) => out.push((lock.to_path_buf(), u64::MAX, None)),
    }
    out
}

/// Starts watching (nothing to watch for the built-in default).
pub fn spawn(gateway: &Arc<Gateway>) {
    let paths = match gateway.source.clone() {
        PolicySource::Paths(paths) => paths,
        PolicySource::Bundle(b) => {
            poll_url(gateway, &b);
            b.watched()
        }
        PolicySource::Builtin => return,
    };
    let lock = gateway.source.lock_path();
    let gateway = Arc::clone(gateway);
    tokio::spawn(async move {
        let mut seen = fingerprint(&paths, &lock);
        loop {
            tokio::select! {
                () = tokio::time::sleep(POLL_INTERVAL) => {}
                () = gateway.shutdown.cancelled() => return,
            }
            let now = fingerprint(&paths, &lock);
            if now == seen {
                continue;
            }
            seen = now;
            reload(&gateway).await;
        }
    });
}

/// For a bundle at a URL, fetches it again every poll interval into the
/// cache, whose files [`spawn`] watches: a new bundle that verifies is then
/// reloaded like a changed file. A failed fetch is noted, and the bundle in
/// force stays.
fn poll_url(gateway: &Arc<Gateway>, bundle: &crate::bundle::source::BundleSource) {
    let (Some(_), Some(root)) = (bundle.url(), crate::bundle::source::cache_root()) else {
        return;
    };
    let gateway = Arc::clone(gateway);
    let bundle = bundle.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(bundle.poll) => {}
                () = gateway.shutdown.cancelled() => return,
            }
            let (b, r) = (bundle.clone(), root.clone());
            match tokio::task::spawn_blocking(move || b.refresh(&r)).await {
                Ok(Ok(_)) => {}
                Ok(Err(why)) => gateway.note(&format!("kept the bundle in force: {why}")),
                Err(e) => gateway.note(&format!("kept the bundle in force: the fetch failed: {e}")),
            }
        }
    });
}

/// Loads the files again and swaps the policy in, or keeps the last good one.
pub async fn reload(gateway: &Arc<Gateway>) {
    if let PolicySource::Bundle(b) = &gateway.source {
        match crate::gateway::load_bundle(b) {
            // The bundle in force is the last good one: keep it.
            Ok(from) if from.note.is_some() => {
                gateway.note(from.note.as_deref().unwrap_or_default());
            }
            Ok(from) => match gateway.replace_policy(from.policy).await {
                Ok(()) => {
                    gateway.set_bundle(Some(from.version.clone()));
                    upstreams::reconcile(gateway);
                    crate::output::stderr(&format!(
                        "zero-policy serve: bundle `{}` is in force\n",
                        from.version
                    ));
                }
                Err(e) => gateway.note(&format!("kept the last good bundle: {e}")),
            },
            Err(e) => gateway.note(&format!("kept the last good bundle: {e}")),
        }
        return;
    }
    let loaded = load_policy(&gateway.source);
    match loaded {
        Ok(policy) => match gateway.replace_policy(policy).await {
            Ok(()) => {
                upstreams::reconcile(gateway);
                crate::output::stderr("zero-policy serve: reloaded the policy\n");
            }
            Err(e) => gateway.note(&format!("kept the last good policy: {e}")),
        },
        Err(e) => gateway.note(&format!("kept the last good policy: {e}")),
    }
}
