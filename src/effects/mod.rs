//! The effects engine: one account of what a call does, computed before any
//! rule runs, so a rule is written once against effects and holds for every
//! tool and agent.
//!
//! A tool's manifest says how its arguments map to effects (`effects:` CEL
//! expressions, evaluated by the dispatch path); [`compute`] turns those values
//! into [`Effects`]: it analyses the shell script a call runs ([`shell`]) with
//! the command [`catalog`], reads the patch it applies ([`patch`]), makes every
//! path absolute and clean ([`paths`]) and every URL normalised ([`urls`]).
//! What cannot be known exactly makes the account inexact and widens it: an
//! unknown path is a pattern that stands for every path it could be.

pub mod catalog;
pub mod globs;
pub mod ground;
pub mod literal;
pub mod patch;
pub mod paths;
pub mod programs;
pub mod reason;
pub mod shell;
pub mod tags;
pub mod urls;
pub mod word;

use serde::Serialize;

pub use catalog::Catalog;
pub use reason::Reason;
pub use urls::Fetch;

/// Everything a call may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// Every command the call may run.
    pub commands: Vec<Command>,
    /// Absolute, cleaned paths or patterns it reads.
    pub reads: Vec<String>,
    /// Paths or patterns whose names, sizes and times it reads, not their
    /// contents (`ls`, `stat`, `du`, `find` without actions, a Glob tool).
    pub lists: Vec<String>,
    /// Paths or patterns it creates, changes or deletes.
    pub writes: Vec<String>,
    /// Paths or patterns it deletes (also in `writes`).
    pub deletes: Vec<String>,
    /// `reads` and `writes` together.
    pub paths: Vec<String>,
    /// URLs it fetches or sends to.
    pub fetches: Vec<Fetch>,
    /// Some command runs code no rule can see.
    pub runs_code: bool,
    /// The account is exact: nothing was guessed.
    pub exact: bool,
    /// Why not, one sentence each, for people: the wording may change.
    pub unknown: Vec<String>,
    /// Why not, as stable codes rules match: `inexact[i]` is the code of
    /// `unknown[i]` (INVARIANT: the two have the same length).
    pub inexact: Vec<Reason>,
    /// The call's script runs confined by the kernel to the policy's
    /// envelope (`settings.enforce`), so a relax rule that reads
    /// `call.confined` may allow it even where it is not exact.
    pub confined: bool,
    /// What the host showed, where the call was decided on it (not part of
    /// `call`: its findings are already in the fields above).
    #[serde(skip)]
    pub grounding: Option<ground::Grounding>,
}

impl Default for Effects {
    fn default() -> Self {
        Effects {
            commands: Vec::new(),
            reads: Vec::new(),
            lists: Vec::new(),
            writes: Vec::new(),
            deletes: Vec::new(),
            paths: Vec::new(),
            fetches: Vec::new(),
            runs_code: false,
            exact: true,
            unknown: Vec::new(),
            inexact: Vec::new(),
            confined: false,
            grounding: None,
        }
    }
}

/// One command a call may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The basename of what runs (`rm` for `sudo /bin/rm`).
    pub program: String,
    /// The program as written.
    pub path: String,
    /// The words after the wrappers, as written.
    pub argv: Vec<String>,
    /// The working folder (an absolute path or pattern).
    pub cwd: String,
    /// The commands that led to it (`["sudo", "sh -c"]`).
    pub wrappers: Vec<String>,
    /// The catalog has the program (and it is not the workspace's own).
    pub known: bool,
    /// The catalog says it changes nothing, and no option or effect says otherwise.
    pub read_only: bool,
    /// Every word literal, every option known.
    pub exact: bool,
    /// The subcommand path (`stash drop`), or `""`.
    pub subcommand: String,
    /// The options given, by their long names where they have one.
    pub options: Vec<String>,
    /// The operands, as written.
    pub operands: Vec<String>,
    /// Tags from the catalog and the options given.
    pub tags: Vec<String>,
    /// What this command reads.
    pub reads: Vec<String>,
    /// What it lists: names, sizes and times, not contents.
    pub lists: Vec<String>,
    /// What it writes.
    pub writes: Vec<String>,
    /// What it deletes.
    pub deletes: Vec<String>,
    /// What it fetches.
    pub fetches: Vec<Fetch>,
    /// It runs code no rule can see.
    pub runs_code: bool,
    /// Its input or one of its words comes from a command that fetched.
    pub fetched_input: bool,
}

impl Command {
    /// Whether the command makes a link to what it reads (`ln`, `link`, `cp
    /// -s`/`-l`): a link to a place opens it to every later write through the
    /// link.
    #[must_use]
    pub fn makes_link(&self) -> bool {
        matches!(self.program.as_str(), "ln" | "link")
            || (self.program == "cp"
                && self
                    .options
                    .iter()
                    .any(|o| matches!(o.as_str(), "--symbolic-link" | "--link" | "-s" | "-l")))
    }
}

/// What a tool's `effects:` expressions gave for one call; an `Err` is an
/// expression that failed (the effect is then unknown and widened).
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// `shell`.
    pub shell: Option<Result<String, String>>,
    /// `cwd`.
    pub cwd: Option<Result<String, String>>,
    /// `reads`.
    pub reads: Option<Result<Vec<String>, String>>,
    /// `lists`.
    pub lists: Option<Result<Vec<String>, String>>,
    /// `writes`.
    pub writes: Option<Result<Vec<String>, String>>,
    /// `fetches`.
    pub fetches: Option<Result<Vec<String>, String>>,
    /// `patch`.
    pub patch: Option<Result<String, String>>,
    /// `runs_code`.
    pub runs_code: Option<Result<bool, String>>,
}

/// What effects are computed against.
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    /// The command catalog.
    pub catalog: &'a Catalog,
    /// What `~` and `$HOME` mean.
    pub home: &'a str,
    /// `session.workspace`: the default working folder.
    pub workspace: &'a str,
}

/// Computes a call's effects from its tool's evaluated `effects:` values.
#[must_use]
pub fn compute(input: &Input, env: &Env<'_>) -> Effects {
    let mut fx = Effects::default();
    let workspace = paths::clean(&paths::escape(env.workspace));
    let cwd = match &input.cwd {
        None => workspace.clone(),
        Some(Ok(c)) => paths::tool_path(c, &workspace, env.home),
        Some(Err(e)) => {
            fx.inexact(
                Reason::EffectError,
                format!("the working folder is unknown: {e}"),
            );
            paths::ANY_PATH.to_string()
        }
    };
    let list = |value: &Option<Result<Vec<String>, String>>,
                what: &str,
                fx: &mut Effects,
                out: fn(&mut Effects) -> &mut Vec<String>| {
        match value {
            None => {}
            Some(Ok(items)) => {
                for p in items {
                    let p = paths::tool_path(p, &cwd, env.home);
                    out(fx).push(p);
                }
            }
            Some(Err(e)) => {
                fx.inexact(Reason::EffectError, format!("the {what} are unknown: {e}"));
                out(fx).push(paths::ANY_PATH.to_string());
            }
        }
    };
    list(&input.reads, "reads", &mut fx, |f| &mut f.reads);
    list(&input.lists, "listings", &mut fx, |f| &mut f.lists);
    list(&input.writes, "writes", &mut fx, |f| &mut f.writes);
    match &input.fetches {
        None => {}
        Some(Ok(urls)) => {
            for u in urls {
                fx.fetches.push(urls::parse_fetch(u));
            }
        }
        Some(Err(e)) => {
            fx.inexact(Reason::EffectError, format!("the fetches are unknown: {e}"));
            fx.fetches.push(urls::parse_fetch("*"));
        }
    }
    match &input.patch {
        None => {}
        Some(Ok(text)) => match patch::patch_files(text) {
            Ok(files) => {
                for p in &files.reads {
                    fx.reads.push(paths::join(&cwd, &paths::escape(p)));
                }
                for p in &files.writes {
                    fx.writes.push(paths::join(&cwd, &paths::escape(p)));
                }
                for p in &files.deletes {
                    fx.deletes.push(paths::join(&cwd, &paths::escape(p)));
                }
            }
            Err(e) => {
                fx.inexact(Reason::PatchError, format!("the patch does not parse: {e}"));
                fx.writes.push(paths::ANY_PATH.to_string());
            }
        },
        Some(Err(e)) => {
            fx.inexact(Reason::EffectError, format!("the patch is unknown: {e}"));
            fx.writes.push(paths::ANY_PATH.to_string());
        }
    }
    match &input.runs_code {
        None | Some(Ok(false)) => {}
        Some(Ok(true)) => fx.runs_code = true,
        Some(Err(e)) => {
            fx.inexact(
                Reason::EffectError,
                format!("whether it runs code is unknown: {e}"),
            );
            fx.runs_code = true;
        }
    }
    match &input.shell {
        None => {}
        Some(Ok(script)) => shell::analyse(script, &cwd, env, &mut fx),
        Some(Err(e)) => {
            fx.inexact(Reason::EffectError, format!("the script is unknown: {e}"));
            fx.runs_code = true;
        }
    }
    fx.finish();
    fx
}

/// Checks one example of a catalog entry (`examples:`, docs/catalog.md)
/// against what the engine reads from its command line with `catalog`: the
/// first command named `names` (the entry's name and aliases) is the one
/// checked. The failures, one sentence each.
#[must_use]
pub fn check_example(
    names: &[String],
    example: &crate::model::RawCommandExample,
    catalog: &Catalog,
) -> Vec<String> {
    let env = Env {
        catalog,
        home: "/home/dev",
        workspace: "/home/dev/project",
    };
    let input = Input {
        shell: Some(Ok(example.run.clone())),
        ..Input::default()
    };
    let fx = compute(&input, &env);
    let mut failures = Vec::new();
    let Some(c) = fx.commands.iter().find(|c| names.contains(&c.program)) else {
        return vec![format!(
            "runs no `{}`",
            names.first().map_or("", String::as_str)
        )];
    };
    let mut expect = |what: &str, want: bool, got: bool| {
        if want != got {
            failures.push(format!("`{what}` is {got}, the example says {want}"));
        }
    };
    if let Some(want) = example.read_only {
        expect("read_only", want, c.read_only);
    }
    if let Some(want) = example.runs_code {
        expect("runs_code", want, c.runs_code);
    }
    for t in &example.tags {
        if !c.tags.contains(t) {
            failures.push(format!("it has no tag `{t}` (tags: {:?})", c.tags));
        }
    }
    for t in &example.not_tags {
        if c.tags.contains(t) {
            failures.push(format!("it has the tag `{t}`"));
        }
    }
    for h in &example.fetches {
        if !fx.fetches.iter().any(|f| &f.host == h) {
            let hosts: Vec<&str> = fx.fetches.iter().map(|f| f.host.as_str()).collect();
            failures.push(format!("it reaches no host `{h}` (hosts: {hosts:?})"));
        }
    }
    for w in &example.writes {
        if !fx.writes.contains(w) {
            failures.push(format!("it writes no `{w}` (writes: {:?})", fx.writes));
        }
    }
    if !example.commands.is_empty() {
        let programs: Vec<&str> = fx.commands.iter().map(|c| c.program.as_str()).collect();
        if programs != example.commands {
            failures.push(format!(
                "it runs {programs:?}, the example says {:?}",
                example.commands
            ));
        }
    }
    failures
}

/// Checks every example of `spec` and of its subcommands; failures as
/// `` `RUN`: WHY ``.
#[must_use]
pub fn check_examples(names: &[String], spec: &catalog::Spec, catalog: &Catalog) -> Vec<String> {
    let mut out = Vec::new();
    for ex in &spec.examples {
        for why in check_example(names, ex, catalog) {
            out.push(format!("example `{}`: {why}", ex.run));
        }
    }
    for sub in spec.subcommands.values() {
        out.extend(check_examples(names, sub, catalog));
    }
    out
}

impl Effects {
    /// Records why the account is not exact: the code rules match and the
    /// sentence people read.
    ///
    /// Every reason is kept, however many: a rule may look for any one of
    /// them, and a cap would let 32 harmless ones hide the one it looks for.
    /// A script's size and command count bound how many there can be.
    pub fn inexact(&mut self, reason: Reason, why: String) {
        self.exact = false;
        if !self.unknown.contains(&why) {
            self.unknown.push(why);
            self.inexact.push(reason);
        }
    }

    /// Folds the commands' effects in, deduplicates, and fills `paths`.
    fn finish(&mut self) {
        // A `file:` URL is a read of that file (`curl file:///etc/shadow`).
        for c in &mut self.commands {
            let files = file_reads(&c.fetches);
            c.reads.extend(files);
        }
        let files = file_reads(&self.fetches);
        self.reads.extend(files);
        for c in &self.commands {
            self.reads.extend(c.reads.iter().cloned());
            self.lists.extend(c.lists.iter().cloned());
            self.writes.extend(c.writes.iter().cloned());
            self.deletes.extend(c.deletes.iter().cloned());
            self.fetches.extend(c.fetches.iter().cloned());
            self.runs_code |= c.runs_code;
            self.exact &= c.exact;
        }
        for d in self.deletes.clone() {
            self.writes.push(d);
        }
        dedup(&mut self.reads);
        dedup(&mut self.lists);
        dedup(&mut self.writes);
        dedup(&mut self.deletes);
        let mut seen = std::collections::HashSet::new();
        self.fetches.retain(|f| seen.insert(f.url.clone()));
        self.paths = self.reads.iter().chain(&self.writes).cloned().collect();
        dedup(&mut self.paths);
    }
}

/// The files that `file:` URLs among `fetches` read: the decoded path, or any
/// path when it cannot be told (`file://host/…`, a URL that does not parse).
fn file_reads(fetches: &[urls::Fetch]) -> Vec<String> {
    fetches
        .iter()
        .filter(|f| f.scheme == "file")
        .map(|f| {
            url::Url::parse(&f.url)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .and_then(|p| p.to_str().map(|s| paths::join("/", &paths::escape(s))))
                .unwrap_or_else(|| paths::ANY_PATH.to_string())
        })
        .collect()
}

/// Removes repeats, keeping the first of each.
pub(crate) fn dedup(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.clone()));
}

#[cfg(test)]
mod reason_tests {
    use super::{Effects, Reason};

    #[test]
    fn every_reason_is_kept_past_the_thirty_second_and_a_repeat_is_not() {
        let mut fx = Effects::default();
        for i in 0..40 {
            fx.inexact(Reason::DynamicWord, format!("harmless reason {i}"));
        }
        fx.inexact(Reason::ParseError, "the reason a rule looks for".into());
        fx.inexact(Reason::DynamicWord, "harmless reason 3".into());
        assert!(!fx.exact);
        assert_eq!(fx.unknown.len(), 41);
        assert_eq!(fx.unknown[40], "the reason a rule looks for");
        assert_eq!(fx.inexact.len(), 41);
        assert_eq!(fx.inexact[40], Reason::ParseError);
        assert_eq!(fx.inexact[3], Reason::DynamicWord);
    }
}
