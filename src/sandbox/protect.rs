//! Protected paths that do not exist yet.
//!
//! A mount can make an existing `.claude/settings.json` read-only, but not
//! one that is not there: Landlock grants creation in a whole folder, so a
//! confined call that may create `out.txt` in the workspace may also create
//! `.claude/settings.json` when the agent has none yet. So `run` notes, before
//! the call, which protected places are missing in each searched folder, and
//! after it removes what the call created there, and says so: the place is
//! as it was before the call.

use std::path::{Path, PathBuf};

use super::Envelope;

/// The protected places that were missing before the call.
#[derive(Debug, Clone, Default)]
pub struct Missing {
    paths: Vec<PathBuf>,
}

/// The literal path a `**/…` deny glob names below a searched folder
/// (`**/.claude/settings.json`, `**/.git/hooks/**`), if it is literal.
fn literal_tail(glob: &str) -> Option<&str> {
    let tail = glob.strip_prefix("**/")?;
    let tail = tail.strip_suffix("/**").unwrap_or(tail);
    (!tail.is_empty() && !tail.contains(['*', '?', '[', '{', '\\'])).then_some(tail)
}

/// What of `deny_writes` is missing now in the envelope's searched folders.
#[must_use]
pub fn missing(envelope: &Envelope) -> Missing {
    let mut paths = Vec::new();
    for root in &envelope.search {
        for glob in &envelope.deny_writes {
            let Some(tail) = literal_tail(glob) else {
                continue;
            };
            let p = root.join(tail);
            if std::fs::symlink_metadata(&p).is_err() && !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    Missing { paths }
}

impl Missing {
    /// Removes each of these places the call created, and returns them.
    #[must_use]
    pub fn undo(&self) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        for p in &self.paths {
            let Ok(meta) = std::fs::symlink_metadata(p) else {
                continue;
            };
            // A link is removed itself, never what it points to.
            let gone = if meta.is_dir() {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            };
            if gone.is_ok() {
                removed.push(p.clone());
            }
        }
        removed
    }

    /// Whether nothing was missing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The places, for a report.
    #[must_use]
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }
}

/// Whether `path` is one of the places `missing` watches (for tests).
#[must_use]
pub fn watches(missing: &Missing, path: &Path) -> bool {
    missing.paths.iter().any(|p| p == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_literal_tails_below_a_search_folder_are_watched() {
        assert_eq!(
            literal_tail("**/.claude/settings.json"),
            Some(".claude/settings.json")
        );
        assert_eq!(literal_tail("**/.git/hooks/**"), Some(".git/hooks"));
        assert_eq!(literal_tail("**/.claude/*.json"), None);
        assert_eq!(literal_tail("/etc/**"), None);
    }

    #[test]
    fn what_the_call_created_in_a_missing_place_is_removed_and_nothing_else() {
        let root = std::env::temp_dir().join(format!("zp-protect-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap_or_default();
        std::fs::write(root.join("keep.txt"), "x").unwrap_or_default();
        let envelope = Envelope {
            search: vec![root.clone()],
            deny_writes: vec![
                "**/.claude/settings.json".into(),
                "**/.git/hooks/**".into(),
                "**/.mcp.json".into(),
            ],
            ..Envelope::default()
        };
        let m = missing(&envelope);
        assert!(watches(&m, &root.join(".claude/settings.json")));
        assert!(watches(&m, &root.join(".mcp.json")));
        assert!(
            !watches(&m, &root.join(".git/hooks")),
            "it exists: the mount holds it"
        );
        // The call creates two protected files, one through a link.
        std::fs::create_dir_all(root.join(".claude")).unwrap_or_default();
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap_or_default();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("keep.txt"), root.join(".mcp.json"))
            .unwrap_or_default();
        let removed = m.undo();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(!root.join(".claude/settings.json").exists());
        assert!(std::fs::symlink_metadata(root.join(".mcp.json")).is_err());
        assert!(
            root.join("keep.txt").exists(),
            "a link's target is never removed"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
