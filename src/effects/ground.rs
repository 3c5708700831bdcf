//! Grounding in the host: where a call is decided on the machine it will run
//! on (`hook`, `run`, `serve`, `explain --host`), its paths are also checked as
//! the files they reach. See docs/effects.md.
//!
//! - A literal path is resolved link by link (`lstat`/`readlink`, never
//!   opening anything): when it reaches another file, that file joins the
//!   same effect, so `docs/key -> ~/.ssh/id_rsa` is also a read of the key.
//!   Where the folder folds case and the policy's globs do not, the path is
//!   added folded to lower case too.
//! - A tree or pattern that a call reads or lists (`rg TODO`, `grep -r x .`,
//!   `Glob **/*.ts`) is walked, bounded in entries and time, applying the
//!   search's own filter (its pattern, and hidden names where the command
//!   skips them). Every file it would reach that `settings.paths.credentials`
//!   names becomes a read (or listing) of that file, so rules on credential
//!   contents decide on it. A walk that completes removes the over-approximated
//!   tree; one that stops (a bound, an error, a folder it may not read) keeps
//!   it: grounding never narrows toward allow on what it did not see.
//!
//! The walk never follows a link and never opens a file: a link's target is
//! resolved by name to classify it (a folder's tree joins the effect unwalked,
//! a file joins it when a credential glob names it or it lies in `/proc`,
//! `/sys` or `/dev`). Hard links cannot be told by name: a hard link to a key
//! under another name is not recognised.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::globs::PathGlobs;
use super::{Effects, paths};

/// How far grounding may look on the host, for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    /// Folder entries a call's walks may visit in all.
    pub max_entries: usize,
    /// Time a call's grounding may take in all.
    pub max_time: Duration,
    /// Credential files and linked places one call may add before the walk
    /// stops (and keeps its over-approximation).
    pub max_reached: usize,
}

impl Host {
    /// The default bounds with a time bound of `max_time`
    /// (`settings.paths.walk_time`).
    #[must_use]
    pub fn within(max_time: Duration) -> Host {
        Host {
            max_time,
            ..Host::default()
        }
    }
}

impl Default for Host {
    fn default() -> Self {
        Host {
            max_entries: 20_000,
            max_time: Duration::from_millis(50),
            max_reached: 64,
        }
    }
}

/// What grounding saw, for `explain --host` and the decision's account.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Grounding {
    /// Paths that reach another file through links.
    pub links: Vec<Link>,
    /// Paths added folded to lower case, where their folder folds case.
    pub folded: Vec<String>,
    /// The trees and patterns walked, or not.
    pub walks: Vec<Walk>,
    /// How long grounding took, in microseconds.
    pub micros: u64,
}

/// A path resolved through links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// The path as the call names it.
    pub path: String,
    /// The file it reaches, or why it reaches none (`a loop of links`).
    pub reaches: String,
    /// Whether `reaches` is a file (false: an error, such as a loop).
    pub resolved: bool,
}

/// One tree or pattern of a read or listing, checked against the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Walk {
    /// The effect as computed without the host (`/ws/**`, `/ws/**/*.ts`).
    pub tree: String,
    /// `reads` or `lists`.
    pub effect: &'static str,
    /// The folder walked (links resolved).
    pub root: String,
    /// Names starting with `.` were skipped, as the search skips them.
    pub skips_hidden: bool,
    /// Folder entries seen.
    pub entries: usize,
    /// Folders among them.
    pub folders: usize,
    /// Links among them.
    pub links: usize,
    /// Credential files it would reach (each now an effect of its own).
    pub credentials: Vec<String>,
    /// Places reached through links inside the tree (each now an effect).
    pub linked: Vec<String>,
    /// Why the walk stopped before the end; `None`: it saw the whole tree.
    pub stopped: Option<String>,
    /// The over-approximated `tree` was removed (the walk was complete).
    pub narrowed: bool,
}

/// Where grounding looks from: the call's places, and the globs a walk looks for.
#[derive(Debug, Clone, Copy)]
pub struct Ground<'a> {
    /// The bounds.
    pub host: &'a Host,
    /// `settings.paths.credentials`: the files a walk turns into effects.
    pub credentials: &'a PathGlobs,
    /// `session.workspace` (cleaned, absolute).
    pub workspace: &'a str,
    /// `settings.paths.home`.
    pub home: &'a str,
}

/// Most links followed while resolving one path (as Linux's `MAXSYMLINKS`).
const MAX_HOPS: usize = 40;

/// The most literal paths of one call resolved through links. Resolving one
/// takes a few system calls (at most [`MAX_HOPS`] links), so this bound, not
/// the time bound, keeps it short: a wall-clock bound would turn a busy
/// machine's pause into "could reach any file", and so deny everyday calls
/// (a `Read` of `Cargo.toml` while the agent runs sixteen hooks at once).
const MAX_LITERALS: usize = 4096;

/// Checks the call's effects against the host, adding what it reaches and
/// removing over-approximations a complete walk disproved.
pub fn ground(fx: &mut Effects, g: &Ground<'_>) -> Grounding {
    let started = Instant::now();
    let deadline = started + g.host.max_time;
    let mut report = Grounding::default();
    let mut budget = Budget {
        entries: g.host.max_entries,
        deadline,
    };
    // Places the workspace and home are reached by: a path that reaches a file
    // through them is still named by them (macOS's `/tmp -> /private/tmp`).
    let aliases: Vec<(String, String)> = [g.workspace, g.home]
        .iter()
        .filter_map(|p| {
            let real = resolve(Path::new(p)).ok()?;
            let real = real.to_str()?.to_string();
            (real != *p).then(|| (real, (*p).to_string()))
        })
        .collect();

    links_and_case(fx, g, &aliases, &mut report);
    walks(fx, g, &aliases, &mut report, &mut budget);

    for c in &mut fx.commands {
        super::dedup(&mut c.reads);
        super::dedup(&mut c.lists);
        super::dedup(&mut c.writes);
    }
    super::dedup(&mut fx.reads);
    super::dedup(&mut fx.lists);
    super::dedup(&mut fx.writes);
    fx.paths = fx.reads.iter().chain(&fx.writes).cloned().collect();
    super::dedup(&mut fx.paths);
    report.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    report
}

/// The bounds left to the call's walks.
struct Budget {
    entries: usize,
    deadline: Instant,
}

/// Which effect list of an [`Effects`] or a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reads,
    Lists,
    Writes,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Reads => "reads",
            Kind::Lists => "lists",
            Kind::Writes => "writes",
        }
    }
}

fn list_of(fx: &mut Effects, kind: Kind) -> &mut Vec<String> {
    match kind {
        Kind::Reads => &mut fx.reads,
        Kind::Lists => &mut fx.lists,
        Kind::Writes => &mut fx.writes,
    }
}

fn command_list(c: &mut super::Command, kind: Kind) -> &mut Vec<String> {
    match kind {
        Kind::Reads => &mut c.reads,
        Kind::Lists => &mut c.lists,
        Kind::Writes => &mut c.writes,
    }
}

/// Adds `extra` next to `path` wherever `path` is an effect of `kind`.
fn add_beside(fx: &mut Effects, kind: Kind, path: &str, extra: &[String]) {
    for c in &mut fx.commands {
        let list = command_list(c, kind);
        if list.iter().any(|p| p == path) {
            list.extend(extra.iter().cloned());
        }
    }
    list_of(fx, kind).extend(extra.iter().cloned());
}

/// Resolves every literal path of the call through links, and folds case
/// where the folder does and the policy's globs do not.
fn links_and_case(
    fx: &mut Effects,
    g: &Ground<'_>,
    aliases: &[(String, String)],
    report: &mut Grounding,
) {
    let mut resolved: HashMap<String, Vec<String>> = HashMap::new();
    for kind in [Kind::Reads, Kind::Lists, Kind::Writes] {
        let literal: Vec<String> = list_of(fx, kind)
            .iter()
            .filter(|p| !paths::is_pattern(p))
            .cloned()
            .collect();
        for p in literal {
            if let Some(extra) = resolved.get(&p) {
                let extra = extra.clone();
                add_beside(fx, kind, &p, &extra);
                continue;
            }
            if resolved.len() >= MAX_LITERALS {
                // INVARIANT: a path left unresolved could reach any file.
                report.links.push(Link {
                    path: p.clone(),
                    reaches: format!(
                        "not resolved: more than {MAX_LITERALS} paths, so it could reach any file"
                    ),
                    resolved: false,
                });
                let any = vec![paths::ANY_PATH.to_string()];
                add_beside(fx, kind, &p, &any);
                resolved.insert(p, any);
                continue;
            }
            let mut extra = Vec::new();
            match resolve(Path::new(&p)) {
                Ok(real) => match real.to_str() {
                    Some(r) => {
                        let named = unalias(r, aliases);
                        let cleaned = paths::clean(&paths::escape(&named));
                        if cleaned != p {
                            report.links.push(Link {
                                path: p.clone(),
                                reaches: cleaned.clone(),
                                resolved: true,
                            });
                            extra.push(cleaned);
                        }
                        if !g.credentials.case_insensitive()
                            && let Some(folded) = case_folded(&real)
                        {
                            let folded = paths::clean(&paths::escape(&unalias(&folded, aliases)));
                            if folded != p && !extra.contains(&folded) {
                                report.folded.push(folded.clone());
                                extra.push(folded);
                            }
                        }
                    }
                    None => report.links.push(Link {
                        path: p.clone(),
                        reaches: "not resolved: it reaches a name that is not UTF-8".into(),
                        resolved: false,
                    }),
                },
                Err(why) => report.links.push(Link {
                    path: p.clone(),
                    reaches: format!("not resolved: {why}"),
                    resolved: false,
                }),
            }
            if !extra.is_empty() {
                add_beside(fx, kind, &p, &extra);
            }
            resolved.insert(p, extra);
        }
    }
}

/// `real` named from the workspace or home where it lies in their real place.
fn unalias(real: &str, aliases: &[(String, String)]) -> String {
    for (from, to) in aliases {
        if let Some(rest) = real.strip_prefix(from.as_str())
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return format!("{to}{rest}");
        }
    }
    real.to_string()
}

/// Whether a path lies in a virtual file system, where links name processes
/// and descriptors rather than files (`/proc/self` is this process, not the
/// agent's): it is never resolved or walked further.
fn is_virtual(p: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|v| p.starts_with(v) && p != Path::new("/"))
}

/// The file an absolute path reaches, resolving links component by component
/// (`lstat` and `readlink` only, nothing opened). A part that does not exist
/// is kept as written; inside `/proc`, `/sys` and `/dev` nothing is resolved.
///
/// # Errors
/// A loop of links (more than 40), or a folder that may not be read.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    fn parts(p: &Path) -> VecDeque<OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_os_string()),
                Component::ParentDir => Some(OsString::from("..")),
                _ => None,
            })
            .collect()
    }
    let mut out = PathBuf::from("/");
    let mut rest = parts(path);
    let mut hops = 0usize;
    while let Some(part) = rest.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        if is_virtual(&out) {
            out.push(part);
            continue;
        }
        out.push(&part);
        match fs::symlink_metadata(&out) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(format!("more than {MAX_HOPS} links (a loop of links)"));
                }
                let target = fs::read_link(&out)
                    .map_err(|e| format!("`{}` cannot be read: {}", out.display(), words(&e)))?;
                out.pop();
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                let mut next = parts(&target);
                next.extend(rest);
                rest = next;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                // Nothing there (yet): the rest is taken as written.
                for p in rest {
                    if p == ".." {
                        out.pop();
                    } else {
                        out.push(p);
                    }
                }
                return Ok(out);
            }
            Err(e) => {
                return Err(format!("`{}` cannot be read: {}", out.display(), words(&e)));
            }
        }
    }
    Ok(out)
}

/// An I/O error in words, without the `(os error N)` tail.
fn words(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_lowercase(),
        None => s.to_lowercase(),
    }
}

/// The path folded to lower case from the outermost folder that folds case
/// down, if some folder on it does (`lstat` of the name with its case
/// swapped reaches the same file). `None` on a case-sensitive volume.
#[cfg(unix)]
fn case_folded(real: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let folds = |p: &Path| -> Option<bool> {
        let name = p.file_name()?.to_str()?;
        let swapped: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        if swapped == name {
            return None;
        }
        let a = fs::symlink_metadata(p).ok()?;
        let b = fs::symlink_metadata(p.with_file_name(swapped)).ok()?;
        Some(a.dev() == b.dev() && a.ino() == b.ino())
    };
    // The nearest existing part of the path that has letters to swap.
    let mut probe = real.to_path_buf();
    let mut found = None;
    while probe.parent().is_some() {
        if let Some(f) = folds(&probe) {
            found = Some(f);
            break;
        }
        probe.pop();
    }
    if found != Some(true) {
        return None;
    }
    // The outermost folder of the path that still folds.
    let mut top = probe.clone();
    let mut up = probe;
    while up.pop() && up.parent().is_some() {
        match folds(&up) {
            Some(true) => top = up.clone(),
            Some(false) => break,
            None => {}
        }
    }
    let keep = top.parent()?.to_str()?;
    let fold = real.strip_prefix(top.parent()?).ok()?.to_str()?;
    let folded = format!("{}/{}", keep.trim_end_matches('/'), fold.to_lowercase());
    (folded != real.to_str()?).then_some(folded)
}

#[cfg(not(unix))]
fn case_folded(_real: &Path) -> Option<String> {
    None
}

/// A tree or pattern of the call, and what its walk needs.
struct Tree {
    effect: String,
    kind: Kind,
    skips_hidden: bool,
}

/// The call's trees and patterns among reads and listings. A search skips
/// hidden names only when every command that reads the tree does (the catalog
/// tags it `skips-hidden`, and no option tagged `all-files` is given); a tree
/// the tool itself declares is walked whole.
fn trees(fx: &Effects) -> Vec<Tree> {
    let mut out = Vec::new();
    for kind in [Kind::Reads, Kind::Lists] {
        let all = match kind {
            Kind::Reads => &fx.reads,
            _ => &fx.lists,
        };
        for p in all.iter().filter(|p| paths::is_pattern(p)) {
            let mut by_commands = fx
                .commands
                .iter()
                .filter(|c| match kind {
                    Kind::Reads => c.reads.contains(p),
                    _ => c.lists.contains(p),
                })
                .peekable();
            let skips_hidden = by_commands.peek().is_some()
                && by_commands.all(|c| {
                    c.tags.iter().any(|t| t == "skips-hidden")
                        && !c.tags.iter().any(|t| t == "all-files")
                });
            out.push(Tree {
                effect: p.clone(),
                kind,
                skips_hidden,
            });
        }
    }
    out
}

/// The literal folder a pattern starts in, and how deep below it the pattern
/// reaches (`None`: any depth).
fn root_of(pattern: &str) -> (String, Option<usize>) {
    let mut root = Vec::new();
    let mut depth = Some(0usize);
    let mut literal = true;
    for seg in pattern.split('/').filter(|s| !s.is_empty()) {
        if literal && !paths::is_pattern(seg) {
            root.push(seg);
            continue;
        }
        literal = false;
        if seg.contains("**") {
            depth = None;
        } else if let Some(d) = depth.as_mut() {
            *d += 1;
        }
    }
    // A pattern's braces or brackets may hold a `/`: walk it at any depth.
    if pattern.contains(['{', '[']) {
        depth = None;
    }
    (format!("/{}", root.join("/")), depth)
}

/// Walks each tree and pattern, adding what it reaches and narrowing what a
/// complete walk disproved.
fn walks(
    fx: &mut Effects,
    g: &Ground<'_>,
    aliases: &[(String, String)],
    report: &mut Grounding,
    budget: &mut Budget,
) {
    if g.credentials.is_empty() {
        return;
    }
    let mut reached_total = 0usize;
    for tree in trees(fx) {
        let (root, depth) = root_of(&tree.effect);
        let mut walk = Walk {
            tree: tree.effect.clone(),
            effect: tree.kind.name(),
            root: root.clone(),
            skips_hidden: tree.skips_hidden,
            entries: 0,
            folders: 0,
            links: 0,
            credentials: Vec::new(),
            linked: Vec::new(),
            stopped: None,
            narrowed: false,
        };
        // What the walk sees is the tree before the call: a call that may
        // change it first (a link made, a file written) is not narrowed.
        if let Some(why) = changes_tree(fx, &root) {
            walk.stopped = Some(format!("not walked: {why}"));
            report.walks.push(walk);
            continue;
        }
        // The pattern the walk's files must match: none for a whole tree.
        let filter = if paths::is_tree(&tree.effect) {
            None
        } else {
            match PathGlobs::new(
                std::slice::from_ref(&tree.effect),
                g.credentials.case_insensitive(),
            ) {
                Ok(f) => Some(f),
                Err(e) => {
                    walk.stopped = Some(format!("not walked: the pattern cannot be matched ({e})"));
                    report.walks.push(walk);
                    continue;
                }
            }
        };
        let mut w = Walker {
            g,
            filter: filter.as_ref(),
            skips_hidden: tree.skips_hidden,
            budget,
            aliases,
            walk: &mut walk,
            max_reached: g.host.max_reached.saturating_sub(reached_total),
        };
        w.run(&root, depth);
        reached_total += walk.credentials.len() + walk.linked.len();
        let mut extra: Vec<String> = walk.credentials.clone();
        extra.extend(walk.linked.iter().cloned());
        if walk.stopped.is_none() {
            walk.narrowed = true;
            // The folder itself is still what the search starts from.
            extra.push(paths::escape(&root));
        } else if walk.root != root && paths::is_tree(&tree.effect) {
            // Not seen whole: the tree is also what its folder's links reach.
            extra.push(format!("{}/**", paths::clean(&paths::escape(&walk.root))));
        }
        add_beside(fx, tree.kind, &tree.effect, &extra);
        if walk.narrowed {
            let gone = tree.effect.clone();
            for c in &mut fx.commands {
                command_list(c, tree.kind).retain(|p| *p != gone);
            }
            list_of(fx, tree.kind).retain(|p| *p != gone);
        }
        report.walks.push(walk);
    }
}

/// Why the tree at `root` may change before the call's search reads it:
/// the call runs code no rule can see, runs a program the catalog does not
/// know, or writes inside the tree (or the folders that hold it).
fn changes_tree(fx: &Effects, root: &str) -> Option<String> {
    if fx.runs_code {
        return Some("the call runs code that could change the tree first".into());
    }
    if let Some(c) = fx.commands.iter().find(|c| !c.known) {
        return Some(format!(
            "`{}` is not a known program, and could change the tree first",
            c.program
        ));
    }
    let literal_prefix = |p: &str| -> String {
        let (r, _) = root_of(p);
        r
    };
    let within = |a: &str, b: &str| {
        a == b || b == "/" || a.strip_prefix(b).is_some_and(|rest| rest.starts_with('/'))
    };
    fx.writes.iter().find_map(|w| {
        let w_root = if paths::is_pattern(w) {
            literal_prefix(w)
        } else {
            w.clone()
        };
        (within(&w_root, root) || within(root, &w_root))
            .then(|| format!("the call writes `{w}`, which could change the tree first"))
    })
}

/// One walk in progress.
struct Walker<'w, 'g> {
    g: &'w Ground<'g>,
    filter: Option<&'w PathGlobs>,
    skips_hidden: bool,
    budget: &'w mut Budget,
    aliases: &'w [(String, String)],
    walk: &'w mut Walk,
    max_reached: usize,
}

impl Walker<'_, '_> {
    fn stop(&mut self, why: String) {
        if self.walk.stopped.is_none() {
            self.walk.stopped = Some(why);
        }
    }

    fn reached(&self) -> usize {
        self.walk.credentials.len() + self.walk.linked.len()
    }

    /// Whether a file of the walk is one the call would reach and a
    /// credential glob names; an error stops the walk (the tree is kept).
    fn is_credential(&mut self, path: &str) -> bool {
        if let Some(f) = self.filter {
            match f.is_match(path) {
                Ok(true) => {}
                Ok(false) => return false,
                Err(e) => {
                    self.stop(format!("a path could not be matched: {e}"));
                    return false;
                }
            }
        }
        match self.g.credentials.is_match(path) {
            Ok(hit) => hit,
            Err(e) => {
                self.stop(format!("a path could not be matched: {e}"));
                false
            }
        }
    }

    fn add(&mut self, credential: bool, path: String) {
        if self.reached() >= self.max_reached {
            self.stop(format!(
                "more than {} credential files and linked places were reached",
                self.max_reached
            ));
            return;
        }
        let list = if credential {
            &mut self.walk.credentials
        } else {
            &mut self.walk.linked
        };
        if !list.contains(&path) {
            list.push(path);
        }
    }

    fn run(&mut self, root: &str, depth: Option<usize>) {
        if root == "/" {
            self.stop("not walked: the whole file system".into());
            return;
        }
        let real = match resolve(Path::new(root)) {
            Ok(r) => r,
            Err(why) => {
                self.stop(format!("not walked: {why}"));
                return;
            }
        };
        let Some(real_str) = real.to_str().map(str::to_string) else {
            self.stop("not walked: the folder's real name is not UTF-8".into());
            return;
        };
        self.walk.root = unalias(&real_str, self.aliases);
        if is_virtual(&real) {
            self.stop(format!(
                "not walked: `{real_str}` is a virtual file system (processes, devices)"
            ));
            return;
        }
        if real_str == "/" {
            self.stop("not walked: the whole file system".into());
            return;
        }
        // The root itself: a search given a file reads that file.
        match fs::symlink_metadata(&real) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                let named = unalias(&real_str, self.aliases);
                if self.is_credential(&named) {
                    self.add(true, paths::escape(&named));
                }
                return;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.stop(format!("`{real_str}` cannot be read: {}", words(&e)));
                return;
            }
        }
        let root_named = PathBuf::from(unalias(&real_str, self.aliases));
        let mut stack: Vec<(PathBuf, PathBuf, usize)> = vec![(real.clone(), root_named, 0)];
        while let Some((dir, named_dir, level)) = stack.pop() {
            if self.walk.stopped.is_some() {
                return;
            }
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                // Gone since it was listed: the tree changed; nothing to read there.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    self.stop(format!("`{}` cannot be read: {}", dir.display(), words(&e)));
                    return;
                }
            };
            for entry in entries {
                if self.walk.stopped.is_some() {
                    return;
                }
                if self.budget.entries == 0 {
                    self.stop(format!(
                        "the bound of {} entries was reached",
                        self.g.host.max_entries
                    ));
                    return;
                }
                if Instant::now() > self.budget.deadline {
                    self.stop(format!(
                        "the time bound of {} ms was reached",
                        self.g.host.max_time.as_millis()
                    ));
                    return;
                }
                self.budget.entries -= 1;
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        self.stop(format!("`{}` cannot be read: {}", dir.display(), words(&e)));
                        return;
                    }
                };
                self.walk.entries += 1;
                let name = entry.file_name();
                let Some(name_str) = name.to_str() else {
                    self.stop(format!(
                        "a name in `{}` is not UTF-8, so no glob can be checked on it",
                        dir.display()
                    ));
                    return;
                };
                if self.skips_hidden && name_str.starts_with('.') {
                    continue;
                }
                let path = dir.join(&name);
                let named = named_dir.join(&name);
                let Some(named_str) = named.to_str().map(str::to_string) else {
                    continue;
                };
                // The type from the folder entry (no link followed); a
                // name gone since the listing is skipped.
                let kind = match entry.file_type() {
                    Ok(k) => k,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        self.stop(format!(
                            "`{}` cannot be read: {}",
                            path.display(),
                            words(&e)
                        ));
                        return;
                    }
                };
                if kind.is_dir() {
                    self.walk.folders += 1;
                    if depth.is_none_or(|d| level < d) {
                        stack.push((path, named, level + 1));
                    }
                } else if kind.is_symlink() {
                    self.walk.links += 1;
                    self.link(&path, named_str);
                } else if self.is_credential(&named_str) {
                    // Files, FIFOs, sockets and devices: classified by name,
                    // never opened.
                    self.add(true, paths::escape(&named_str));
                }
            }
        }
    }

    /// A link inside the tree: the link by its name, and what it reaches.
    fn link(&mut self, path: &Path, named: String) {
        if self.is_credential(&named) {
            self.add(true, paths::escape(&named));
        }
        let Ok(target) = resolve(path) else {
            // A loop or an unreadable link reaches no file.
            return;
        };
        let Some(t) = target.to_str() else {
            self.stop(format!("`{named}` reaches a name that is not UTF-8"));
            return;
        };
        let t = unalias(t, self.aliases);
        // A search whose pattern passes over the link's name does not read
        // the file it reaches (a folder's files may still match below it).
        let named_matches = match self.filter {
            None => true,
            Some(f) => f.is_match(&named).unwrap_or(true),
        };
        let is_dir = fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir());
        if !named_matches && !is_dir {
            return;
        }
        if is_virtual(&target) {
            // A descriptor, a device or a process's files: the rules decide.
            self.add(false, paths::clean(&paths::escape(&t)));
            return;
        }
        match fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => {
                // A folder: a search that follows links reads its whole tree;
                // it is not walked (a link may lead back up the tree).
                self.add(false, format!("{}/**", paths::clean(&paths::escape(&t))));
            }
            Ok(_) => {
                if self.g.credentials.is_match(&t).unwrap_or(true) {
                    self.add(false, paths::clean(&paths::escape(&t)));
                }
            }
            // A dangling link reaches nothing.
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::expect_used, reason = "tests")]
    use super::*;

    #[test]
    fn roots_of_patterns() {
        assert_eq!(root_of("/ws/**"), ("/ws".into(), None));
        assert_eq!(root_of("/ws/**/*.ts"), ("/ws".into(), None));
        assert_eq!(root_of("/ws/src/*.rs"), ("/ws/src".into(), Some(1)));
        assert_eq!(root_of("/ws/*/x/*.rs"), ("/ws".into(), Some(3)));
        assert_eq!(root_of("/**"), ("/".into(), None));
        assert_eq!(root_of("/ws/{a,b/c}/x"), ("/ws".into(), None));
    }

    #[test]
    fn resolves_links_and_stops_at_proc() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        fs::create_dir(d.join("real")).expect("mkdir");
        fs::write(d.join("real/f"), "x").expect("write");
        std::os::unix::fs::symlink(d.join("real"), d.join("link")).expect("link");
        std::os::unix::fs::symlink("link/../real/f", d.join("rel")).expect("link");
        std::os::unix::fs::symlink("loop2", d.join("loop1")).expect("link");
        std::os::unix::fs::symlink("loop1", d.join("loop2")).expect("link");
        std::os::unix::fs::symlink("/proc/self/environ", d.join("env")).expect("link");
        let real = resolve(d).expect("tempdir resolves");
        assert_eq!(resolve(&d.join("link/f")), Ok(real.join("real/f")));
        assert_eq!(resolve(&d.join("rel")), Ok(real.join("real/f")));
        assert_eq!(resolve(&d.join("link/new/x")), Ok(real.join("real/new/x")));
        assert!(
            resolve(&d.join("loop1"))
                .expect_err("a loop")
                .contains("loop")
        );
        assert_eq!(
            resolve(&d.join("env")),
            Ok(PathBuf::from("/proc/self/environ"))
        );
    }
}
