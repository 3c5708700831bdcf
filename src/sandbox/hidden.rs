//! Deny globs resolved to the paths that exist now, so that each can be covered by a mount.
//!
//! A mount covers one path, so a glob has to become the list of its existing matches
//! before the call runs. Each glob is walked from where it can match:
//!
//! - an anchored glob (`/home/u/.ssh/**`, `/home/u/.netrc`) from its literal prefix
//!   (`/home/u/.ssh`), wherever that is;
//! - a glob that begins with `**` (`**/.env`) from each of the envelope's `search`
//!   folders. These walks do not descend into `node_modules`, `target` or `.git/objects`
//!   (the folders themselves can still match): they hold build output and dependencies,
//!   are large, and walking them on every call would cost more than the call.
//!
//! Walks never follow symbolic links (so they cannot loop), and a match that is a link
//! is replaced by the file it points to: a mount follows links, and it is the real file
//! that must be hidden. A glob ending in `/**` also matches the folder itself, so the
//! whole folder is covered (and what is created in it later). A folder that matches is
//! not descended into: its mount covers everything below.
//!
//! A matched file that has other names (hard links) has them found too, in the `search`
//! folders: a mount covers one name, and a hard link is another name for the same file.
//!
//! The walks are bounded ([`Bounds`]): crossing a bound is an error, never a silent
//! pass, because an unvisited match would be an unprotected one.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::{Envelope, SandboxError};

/// The existing paths that the deny globs match, resolved through links.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Hidden {
    /// To hide: an empty read-only mount over each. No entry lies inside another.
    pub reads: Vec<PathBuf>,
    /// To make read-only. No entry lies inside another, or inside one of `reads`.
    pub writes: Vec<PathBuf>,
}

/// How far the walks may go before giving up (and failing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Folder entries looked at, over all walks.
    pub entries: usize,
    /// Folders below a walk's start.
    pub depth: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            entries: 200_000,
            depth: 64,
        }
    }
}

/// Folders that `**` walks do not descend into (by name, or for `objects` by parent).
const SKIPPED: [&str; 2] = ["node_modules", "target"];

/// The existing matches of the envelope's deny globs, within [`Bounds::default`].
///
/// # Errors
/// A glob that is neither absolute nor begins with `**`, or does not parse; a walk over
/// its bounds; a folder that cannot be listed for another reason than permission.
pub fn resolve(envelope: &Envelope) -> Result<Hidden, SandboxError> {
    resolve_within(envelope, Bounds::default())
}

/// [`resolve`] with other bounds.
///
/// # Errors
/// As [`resolve`].
pub fn resolve_within(envelope: &Envelope, bounds: Bounds) -> Result<Hidden, SandboxError> {
    let mut walks: Vec<Walk> = Vec::new();
    let mut floating = Sets::default();
    for (kind, globs) in [
        (Kind::Read, &envelope.deny_reads),
        (Kind::Write, &envelope.deny_writes),
    ] {
        for glob in globs {
            match anchor(glob)? {
                None => floating.add(kind, glob)?,
                Some(prefix) => {
                    let walk = match walks.iter_mut().find(|w| w.root == prefix) {
                        Some(w) => w,
                        None => {
                            walks.push(Walk {
                                root: prefix,
                                sets: Sets::default(),
                                skip_heavy: false,
                                shapes: Some(Vec::new()),
                            });
                            let last = walks.len() - 1;
                            &mut walks[last]
                        }
                    };
                    walk.sets.add(kind, glob)?;
                    if let Some(shapes) = &mut walk.shapes {
                        shapes.push(shape(glob)?);
                    }
                }
            }
        }
    }
    for walk in &mut walks {
        walk.sets.compile()?;
    }
    floating.compile()?;
    if !floating.is_empty() {
        for root in &envelope.search {
            walks.push(Walk {
                root: root.clone(),
                sets: floating.clone(),
                skip_heavy: true,
                shapes: None,
            });
        }
    }
    let mut found = Found::default();
    let mut budget = bounds.entries;
    for walk in &walks {
        walk.run(bounds, &mut budget, &mut found)?;
    }
    found.add_hard_links(&envelope.search, bounds, &mut budget)?;
    Ok(found.finish())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
}

/// The globs of one walk, compiled: each kind's globs, plus for `dir/**` the folder itself.
#[derive(Debug, Clone, Default)]
struct Sets {
    reads: Vec<String>,
    writes: Vec<String>,
    compiled: Option<(GlobSet, GlobSet)>,
}

impl Sets {
    fn add(&mut self, kind: Kind, glob: &str) -> Result<(), SandboxError> {
        let list = match kind {
            Kind::Read => &mut self.reads,
            Kind::Write => &mut self.writes,
        };
        list.push(glob.to_owned());
        if let Some(folder) = glob.strip_suffix("/**")
            && !folder.is_empty()
        {
            list.push(folder.to_owned());
        }
        // Each glob is parsed as it comes; the sets are compiled once, by
        // `compile` (compiling them at every glob cost tens of milliseconds).
        parse(glob)?;
        self.compiled = None;
        Ok(())
    }

    fn compile(&mut self) -> Result<(), SandboxError> {
        if self.compiled.is_none() {
            self.compiled = Some((build(&self.reads)?, build(&self.writes)?));
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }

    fn matches(&self, path: &Path) -> Option<Kind> {
        let (reads, writes) = self.compiled.as_ref()?;
        if reads.is_match(path) {
            Some(Kind::Read)
        } else if writes.is_match(path) {
            Some(Kind::Write)
        } else {
            None
        }
    }
}

/// A glob parsed (not compiled to an automaton) as the walk reads it.
fn parse(g: &str) -> Result<globset::Glob, SandboxError> {
    GlobBuilder::new(g)
        .literal_separator(true)
        .build()
        .map_err(|e| SandboxError::Glob {
            glob: g.to_owned(),
            reason: e.kind().to_string(),
        })
}

fn build(globs: &[String]) -> Result<GlobSet, SandboxError> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        set.add(parse(g)?);
    }
    set.build().map_err(|e| SandboxError::Glob {
        glob: globs.join(", "),
        reason: e.to_string(),
    })
}

/// The literal folder an anchored glob is walked from; `None` for a `**` glob.
fn anchor(glob: &str) -> Result<Option<PathBuf>, SandboxError> {
    if glob == "**" || glob.starts_with("**/") {
        return Ok(None);
    }
    if !glob.starts_with('/') {
        return Err(SandboxError::Glob {
            glob: glob.to_owned(),
            reason: "a deny glob must be absolute or begin with `**/`".to_owned(),
        });
    }
    let mut prefix = PathBuf::from("/");
    for part in glob.split('/').filter(|p| !p.is_empty()) {
        if part.contains(['*', '?', '[', '{', '\\']) {
            break;
        }
        if part == ".." || part == "." {
            return Err(SandboxError::Glob {
                glob: glob.to_owned(),
                reason: "a deny glob must be a clean path (no `.` or `..`)".to_owned(),
            });
        }
        prefix.push(part);
    }
    Ok(Some(prefix))
}

struct Walk {
    root: PathBuf,
    sets: Sets,
    skip_heavy: bool,
    /// For an anchored walk, each glob's segments (`None` for `**`): a folder
    /// is entered only where some glob can match below it, so
    /// `/home/u/.*_history` lists `/home/u` and nothing under it.
    shapes: Option<Vec<Vec<Option<Segment>>>>,
}

/// A glob's segments, each compiled on its own; `**` as `None`.
/// One segment of a glob's shape.
#[derive(Debug)]
enum Segment {
    /// A name without wildcards, compared as it is (no automaton to build).
    Literal(String),
    /// A name with wildcards.
    Glob(globset::GlobMatcher),
}

impl Segment {
    fn is_match(&self, name: &std::ffi::OsStr) -> bool {
        match self {
            Segment::Literal(l) => name == l.as_str(),
            Segment::Glob(m) => m.is_match(name),
        }
    }
}

fn shape(glob: &str) -> Result<Vec<Option<Segment>>, SandboxError> {
    glob.split('/')
        .filter(|p| !p.is_empty())
        .map(|seg| {
            if seg == "**" {
                return Ok(None);
            }
            if !seg.contains(['*', '?', '[', ']', '{', '}', '\\']) {
                return Ok(Some(Segment::Literal(seg.to_owned())));
            }
            parse(seg)
                .map(|g| Some(Segment::Glob(g.compile_matcher())))
                .map_err(|e| match e {
                    SandboxError::Glob { reason, .. } => SandboxError::Glob {
                        glob: glob.to_owned(),
                        reason,
                    },
                    other => other,
                })
        })
        .collect()
}

/// Whether a glob of this shape can match something inside `folder`.
fn could_contain(shape: &[Option<Segment>], folder: &Path) -> bool {
    let parts: Vec<_> = folder.components().skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        match shape.get(i) {
            None => return false,
            Some(None) => return true,
            Some(Some(m)) => {
                if !m.is_match(part.as_os_str()) {
                    return false;
                }
            }
        }
    }
    shape.len() > parts.len()
}

#[derive(Default)]
struct Found {
    reads: BTreeSet<PathBuf>,
    writes: BTreeSet<PathBuf>,
}

impl Found {
    /// Records a match, resolved through links; a dangling link hides nothing.
    fn add(&mut self, kind: Kind, path: &Path) -> Result<(), SandboxError> {
        let real = match fs::canonicalize(path) {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(SandboxError::Walk {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        match kind {
            Kind::Read => self.reads.insert(real),
            Kind::Write => self.writes.insert(real),
        };
        Ok(())
    }

    /// Adds the other names, in the search folders, of every matched file (or file in a
    /// matched folder) that has more than one: a mount covers a name, and a hard link is
    /// another name for the same file. The search folders are walked again only when some
    /// such file has other names (its link count says so).
    fn add_hard_links(
        &mut self,
        search: &[PathBuf],
        bounds: Bounds,
        budget: &mut usize,
    ) -> Result<(), SandboxError> {
        let reads = linked_within(&self.reads, bounds, budget)?;
        let writes = linked_within(&self.writes, bounds, budget)?;
        if reads.is_empty() && writes.is_empty() {
            return Ok(());
        }
        for root in search {
            let mut stack = vec![(root.clone(), 0usize)];
            while let Some((folder, depth)) = stack.pop() {
                let Ok(entries) = fs::read_dir(&folder) else {
                    continue;
                };
                for entry in entries.flatten() {
                    if *budget == 0 {
                        return Err(SandboxError::WalkBound {
                            root: root.clone(),
                            what: format!(
                                "passed {} entries looking for hard links",
                                bounds.entries
                            ),
                        });
                    }
                    *budget -= 1;
                    let path = entry.path();
                    let Ok(file_type) = entry.file_type() else {
                        continue;
                    };
                    if file_type.is_dir() {
                        if !heavy(&path) && depth < bounds.depth {
                            stack.push((path, depth + 1));
                        }
                        continue;
                    }
                    if !file_type.is_file() {
                        continue;
                    }
                    let Some(id) = entry.metadata().ok().and_then(|m| linked_id(&m)) else {
                        continue;
                    };
                    if reads.contains(&id) {
                        self.add(Kind::Read, &path)?;
                    } else if writes.contains(&id) {
                        self.add(Kind::Write, &path)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Drops paths inside another of their kind, and read-only paths inside hidden ones.
    fn finish(self) -> Hidden {
        let reads = outermost(self.reads.into_iter().collect(), &[]);
        let writes = outermost(self.writes.into_iter().collect(), &reads);
        Hidden { reads, writes }
    }
}

/// Sorted `paths` without those inside another of them or inside one of `covered`.
fn outermost(paths: Vec<PathBuf>, covered: &[PathBuf]) -> Vec<PathBuf> {
    let mut kept: Vec<PathBuf> = Vec::new();
    for p in paths {
        // INVARIANT: `paths` is sorted, so a folder comes before everything inside it.
        let inside_kept = kept.last().is_some_and(|k| p.starts_with(k));
        let inside_covered = covered.iter().any(|c| p.starts_with(c));
        if !inside_kept && !inside_covered {
            kept.push(p);
        }
    }
    kept
}

impl Walk {
    fn run(
        &self,
        bounds: Bounds,
        budget: &mut usize,
        found: &mut Found,
    ) -> Result<(), SandboxError> {
        // The start is the glob's literal prefix, so it is followed if it is a link.
        let Ok(meta) = fs::metadata(&self.root) else {
            return Ok(());
        };
        let kind = self.sets.matches(&self.root);
        if let Some(kind) = kind {
            found.add(kind, &self.root)?;
        }
        if kind == Some(Kind::Read) || !meta.is_dir() {
            return Ok(());
        }
        let read_only = kind == Some(Kind::Write);
        let mut stack: Vec<(PathBuf, usize, bool)> = vec![(self.root.clone(), 0, read_only)];
        while let Some((folder, depth, read_only)) = stack.pop() {
            let entries = match fs::read_dir(&folder) {
                Ok(entries) => entries,
                // What cannot be listed here cannot be listed by the call either (same user),
                // and what vanished is not there to hide.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound
                    ) =>
                {
                    continue;
                }
                Err(source) => {
                    return Err(SandboxError::Walk {
                        path: folder,
                        source,
                    });
                }
            };
            for entry in entries {
                let entry = entry.map_err(|source| SandboxError::Walk {
                    path: folder.clone(),
                    source,
                })?;
                if *budget == 0 {
                    return Err(SandboxError::WalkBound {
                        root: self.root.clone(),
                        what: format!("passed {} entries", bounds.entries),
                    });
                }
                *budget -= 1;
                let path = entry.path();
                let Ok(file_type) = entry.file_type() else {
                    continue;
                };
                let mut read_only = read_only;
                match self.sets.matches(&path) {
                    Some(Kind::Read) => {
                        found.add(Kind::Read, &path)?;
                        continue;
                    }
                    Some(Kind::Write) if !read_only => {
                        found.add(Kind::Write, &path)?;
                        read_only = true;
                    }
                    _ => {}
                }
                // Links are not followed: a walk cannot loop, and cannot leave its tree.
                if !file_type.is_dir() || (self.skip_heavy && heavy(&path)) {
                    continue;
                }
                if let Some(shapes) = &self.shapes
                    && !shapes.iter().any(|s| could_contain(s, &path))
                {
                    continue;
                }
                if depth + 1 > bounds.depth {
                    return Err(SandboxError::WalkBound {
                        root: self.root.clone(),
                        what: format!(
                            "went deeper than {} folders (at `{}`)",
                            bounds.depth,
                            path.display()
                        ),
                    });
                }
                stack.push((path, depth + 1, read_only));
            }
        }
        Ok(())
    }
}

/// The identities of the files with more than one name at or below `paths` (a matched
/// folder covers the files in it; links are not followed).
fn linked_within(
    paths: &BTreeSet<PathBuf>,
    bounds: Bounds,
    budget: &mut usize,
) -> Result<HashSet<(u64, u64)>, SandboxError> {
    let mut ids = HashSet::new();
    for path in paths {
        let mut stack = vec![(path.clone(), 0usize)];
        while let Some((current, depth)) = stack.pop() {
            let Ok(meta) = fs::symlink_metadata(&current) else {
                continue;
            };
            if meta.is_file() {
                ids.extend(linked_id(&meta));
                continue;
            }
            if !meta.is_dir() || depth > bounds.depth {
                continue;
            }
            let Ok(entries) = fs::read_dir(&current) else {
                continue;
            };
            for entry in entries.flatten() {
                if *budget == 0 {
                    return Err(SandboxError::WalkBound {
                        root: path.clone(),
                        what: format!("passed {} entries looking for hard links", bounds.entries),
                    });
                }
                *budget -= 1;
                stack.push((entry.path(), depth + 1));
            }
        }
    }
    Ok(ids)
}

/// The identity (device, inode) of a file that has more than one name.
#[cfg(unix)]
fn linked_id(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    (meta.nlink() > 1).then(|| (meta.dev(), meta.ino()))
}

/// Hard links are not looked for where files have no inode numbers to compare.
#[cfg(not(unix))]
fn linked_id(_meta: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Whether a `**` walk skips this folder's contents.
fn heavy(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    SKIPPED.contains(&name)
        || (name == "objects"
            && path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|p| p == ".git"))
}

#[cfg(test)]
mod tests {
    #![expect(clippy::expect_used, reason = "tests")]
    use super::*;
    use pretty_assertions::assert_eq;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        for folder in [
            "home/.ssh",
            "home/.aws",
            "ws/src",
            "ws/.git/hooks",
            "ws/.git/objects/ab",
            "ws/node_modules/pkg",
            "ws/sub/deeper",
        ] {
            fs::create_dir_all(root.join(folder)).expect("mkdir");
        }
        for file in [
            "home/.ssh/id_rsa",
            "home/.aws/credentials",
            "home/.netrc",
            "ws/.env",
            "ws/src/main.rs",
            "ws/sub/deeper/.env",
            "ws/.git/hooks/pre-commit",
            "ws/.git/objects/ab/.env",
            "ws/node_modules/pkg/.env",
        ] {
            fs::write(root.join(file), "x").expect("write");
        }
        dir
    }

    fn real(dir: &tempfile::TempDir, rel: &str) -> PathBuf {
        fs::canonicalize(dir.path()).expect("canonical").join(rel)
    }

    fn glob(dir: &tempfile::TempDir, rel: &str) -> String {
        format!("{}/{rel}", dir.path().display())
    }

    #[test]
    fn anchored_and_floating_globs_find_what_exists() {
        let dir = tree();
        let envelope = Envelope {
            deny_reads: vec![
                glob(&dir, "home/.ssh/**"),
                glob(&dir, "home/.aws/credentials"),
                glob(&dir, "home/.missing/**"),
                "**/.env".to_owned(),
            ],
            deny_writes: vec!["**/.git/hooks/**".to_owned()],
            search: vec![dir.path().join("ws")],
            ..Envelope::default()
        };
        let hidden = resolve(&envelope).expect("resolve");
        assert_eq!(
            hidden,
            Hidden {
                reads: vec![
                    real(&dir, "home/.aws/credentials"),
                    // The folder itself, so files created in it later are hidden too.
                    real(&dir, "home/.ssh"),
                    real(&dir, "ws/.env"),
                    real(&dir, "ws/sub/deeper/.env"),
                    // Not ws/.git/objects/ab/.env nor ws/node_modules/pkg/.env: skipped.
                ],
                writes: vec![real(&dir, "ws/.git/hooks")],
            }
        );
    }

    #[test]
    fn a_floating_glob_does_not_reach_outside_the_search_folders() {
        let dir = tree();
        let envelope = Envelope {
            deny_reads: vec!["**/credentials".to_owned()],
            search: vec![dir.path().join("ws")],
            ..Envelope::default()
        };
        assert_eq!(resolve(&envelope).expect("resolve"), Hidden::default());
    }

    #[test]
    fn an_anchored_glob_walks_skipped_folders_too() {
        let dir = tree();
        let envelope = Envelope {
            deny_reads: vec![glob(&dir, "ws/**/.env")],
            ..Envelope::default()
        };
        let hidden = resolve(&envelope).expect("resolve");
        assert_eq!(
            hidden.reads,
            vec![
                real(&dir, "ws/.env"),
                real(&dir, "ws/.git/objects/ab/.env"),
                real(&dir, "ws/node_modules/pkg/.env"),
                real(&dir, "ws/sub/deeper/.env"),
            ]
        );
    }

    #[test]
    fn links_are_not_followed_but_a_matching_link_hides_its_target() {
        let dir = tree();
        let root = dir.path();
        // A loop, and a link out of the workspace to the home folder.
        std::os::unix::fs::symlink(root.join("ws"), root.join("ws/sub/loop")).expect("link");
        std::os::unix::fs::symlink(root.join("home"), root.join("ws/home")).expect("link");
        // A link named like a secret, pointing at another file.
        std::os::unix::fs::symlink(root.join("ws/src/main.rs"), root.join("ws/sub/.env.link"))
            .expect("link");
        let envelope = Envelope {
            deny_reads: vec!["**/id_rsa".to_owned(), "**/.env.link".to_owned()],
            search: vec![root.join("ws")],
            ..Envelope::default()
        };
        let hidden = resolve(&envelope).expect("resolve");
        // id_rsa is reached only through ws/home, which is not followed; the link that
        // matches is replaced by the file it points to.
        assert_eq!(hidden.reads, vec![real(&dir, "ws/src/main.rs")]);
    }

    #[test]
    fn an_anchored_literal_path_that_is_a_link_hides_the_real_file() {
        let dir = tree();
        let root = dir.path();
        std::os::unix::fs::symlink(root.join("home/.netrc"), root.join("home/.netrc-link"))
            .expect("link");
        let envelope = Envelope {
            deny_reads: vec![glob(&dir, "home/.netrc-link")],
            ..Envelope::default()
        };
        assert_eq!(
            resolve(&envelope).expect("resolve").reads,
            vec![real(&dir, "home/.netrc")]
        );
    }

    #[test]
    fn hard_links_to_a_match_in_the_search_folders_are_covered_too() {
        let dir = tree();
        let root = dir.path();
        fs::hard_link(root.join("home/.ssh/id_rsa"), root.join("ws/src/key.txt")).expect("link");
        fs::hard_link(
            root.join("ws/.git/hooks/pre-commit"),
            root.join("ws/sub/hook"),
        )
        .expect("link");
        fs::hard_link(root.join("home/.aws/credentials"), root.join("ws/creds")).expect("link");
        let envelope = Envelope {
            deny_reads: vec![glob(&dir, "home/.ssh/id_rsa"), glob(&dir, "home/.aws/**")],
            deny_writes: vec![glob(&dir, "ws/.git/hooks/pre-commit")],
            search: vec![root.join("ws")],
            ..Envelope::default()
        };
        let hidden = resolve(&envelope).expect("resolve");
        assert_eq!(
            hidden,
            Hidden {
                reads: vec![
                    real(&dir, "home/.aws"),
                    real(&dir, "home/.ssh/id_rsa"),
                    real(&dir, "ws/creds"),
                    real(&dir, "ws/src/key.txt"),
                ],
                writes: vec![
                    real(&dir, "ws/.git/hooks/pre-commit"),
                    real(&dir, "ws/sub/hook")
                ],
            }
        );
    }

    #[test]
    fn crossing_a_bound_is_an_error() {
        let dir = tree();
        let envelope = Envelope {
            deny_reads: vec!["**/.env".to_owned()],
            search: vec![dir.path().join("ws")],
            ..Envelope::default()
        };
        let few = Bounds {
            entries: 5,
            depth: 64,
        };
        let err = resolve_within(&envelope, few).expect_err("too many entries");
        assert!(matches!(err, SandboxError::WalkBound { .. }), "{err}");
        let shallow = Bounds {
            entries: 1000,
            depth: 1,
        };
        let err = resolve_within(&envelope, shallow).expect_err("too deep");
        assert!(err.to_string().contains("deeper than 1"), "{err}");
    }

    #[test]
    fn globs_must_be_anchored_and_clean() {
        for bad in ["*.pem", ".env", "/home/../etc/shadow"] {
            let envelope = Envelope {
                deny_reads: vec![bad.to_owned()],
                ..Envelope::default()
            };
            let err = resolve(&envelope).expect_err(bad);
            assert!(matches!(err, SandboxError::Glob { .. }), "{bad}: {err}");
        }
        let envelope = Envelope {
            deny_writes: vec!["/a/{b".to_owned()],
            ..Envelope::default()
        };
        assert!(matches!(resolve(&envelope), Err(SandboxError::Glob { .. })));
    }

    #[test]
    fn star_does_not_cross_folders() {
        let dir = tree();
        let envelope = Envelope {
            deny_reads: vec![glob(&dir, "ws/*/main.rs"), glob(&dir, "ws/*.rs")],
            ..Envelope::default()
        };
        assert_eq!(
            resolve(&envelope).expect("resolve").reads,
            vec![real(&dir, "ws/src/main.rs")]
        );
    }

    #[test]
    fn read_only_inside_hidden_is_dropped_and_nested_entries_merge() {
        let dir = tree();
        let envelope = Envelope {
            deny_reads: vec![glob(&dir, "home/.ssh/**")],
            deny_writes: vec![
                glob(&dir, "home/**"),
                glob(&dir, "home/.ssh/id_rsa"),
                glob(&dir, "ws/.git/**"),
                glob(&dir, "ws/.git/hooks/**"),
            ],
            ..Envelope::default()
        };
        let hidden = resolve(&envelope).expect("resolve");
        assert_eq!(hidden.reads, vec![real(&dir, "home/.ssh")]);
        assert_eq!(
            hidden.writes,
            vec![real(&dir, "home"), real(&dir, "ws/.git")]
        );
    }
}
