//! The loader: YAML files → raw documents → checked, compiled [`Policy`].
//!
//! Every problem becomes a [`Diagnostic`] with a code and a place; the loader
//! collects them all rather than stopping at the first. A policy is returned
//! only when there is no error.

pub mod cache;
pub mod catalog;
mod checks;
mod commands;
mod lists;
pub use crate::lock;
mod read;
mod rules;
pub mod scalar;
mod servers;
mod settings;
mod tools;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::policy::NameGlobs;

use crate::call::{Call, Session};
use crate::cel::{CelEnv, ExprErrorKind, PatternCache};
use crate::diagnostic::{Code, Diagnostic, Location, SourceFile, Span};
use crate::model::{
    Decision, Document, Permission, Place, RawCall, RawEffects, RawExamples, RawPartialSafety,
    RawRule, RawSafety, RawServer, RawSettings, RawTool, SideEffect, Spanned, Transport,
};
use crate::policy::{
    EnvString, Example, Origin, Override, Policy, Rule, RuleKind, Safety, ServerDef, Settings,
    TestCase, ToolDef, ToolEffects,
};
use scalar::ScalarMap;

/// Aliases allowed in one file; far above any real policy, far below a bomb.
const MAX_ALIASES: usize = 1_000;
/// Nodes allowed in one file.
const MAX_NODES: usize = 200_000;
/// Deepest nesting of mappings and sequences in one file.
const MAX_YAML_DEPTH: usize = 64;

pub use read::{MAX_FILE_BYTES, find_files, read_capped, read_file, read_file_writable};

/// A path as shown in a message: control and invisible characters escaped.
fn shown(p: &Path) -> String {
    crate::escape::escape(&p.display().to_string()).into_owned()
}

/// Why loading could not even start.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LoadError {
    /// A path does not exist.
    #[error("no such file or folder `{}`", shown(.0))]
    #[diagnostic(
        code(not_found),
        help("give files or folders of YAML policies and manifests")
    )]
    NotFound(PathBuf),
    /// A path exists but is a folder, device, FIFO or socket where a file was wanted.
    #[error("`{}` is not a regular file ({kind})", shown(.path))]
    #[diagnostic(code(not_regular))]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is instead: `a FIFO`, `a character device`, …
        kind: &'static str,
    },
    /// A file could not be read.
    #[error("cannot read `{}`: {message}", shown(.path))]
    #[diagnostic(code(unreadable))]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// A file is too large.
    #[error("`{}` is larger than {} MiB", shown(.path), .cap / (1024 * 1024))]
    #[diagnostic(code(too_large))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, in bytes.
        cap: u64,
    },
    /// A file is not UTF-8 text.
    #[error("`{}` is not UTF-8 text (invalid byte at offset {offset})", shown(.path))]
    #[diagnostic(code(not_utf8))]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The folders hold too many files.
    #[error("the folders hold more than {0} YAML files")]
    #[diagnostic(code(too_many_files))]
    TooManyFiles(usize),
    /// Folders nest too deep.
    #[error("`{}` is nested more than {max} folders deep", shown(.path))]
    #[diagnostic(code(too_deep))]
    TooDeep {
        /// The folder.
        path: PathBuf,
        /// The limit.
        max: usize,
    },
}

impl LoadError {
    /// The problem as a diagnostic, for the output formats (`lint --format json`).
    #[must_use]
    pub fn to_diagnostic(&self) -> Diagnostic {
        let help = match self {
            LoadError::NotFound(_) => "give files or folders of YAML policies and manifests",
            LoadError::NotRegular { .. } => {
                "policies and manifests are regular files; a device, FIFO or socket is refused"
            }
            LoadError::Unreadable { .. } => "check the file's permissions",
            LoadError::TooLarge { .. } => "split the file; a policy file is at most 16 MiB",
            LoadError::NotUtf8 { .. } => "save the file as UTF-8",
            LoadError::TooManyFiles(_) | LoadError::TooDeep { .. } => {
                "point at the folders that hold the policies and manifests"
            }
        };
        Diagnostic::new(Code::UnreadableFile, self.to_string()).help(help)
    }
}

/// The result of loading: diagnostics always, a policy when there was no error.
#[derive(Debug)]
pub struct Loaded {
    /// The checked policy, if there were no errors.
    pub policy: Option<Policy>,
    /// Every problem found, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

/// The places a policy read from `paths` comes from, or could come from on
/// the next call: the paths themselves (a file added to a folder given joins
/// the policy), their lock, each entry of `$ZERO_POLICY_PATH`,
/// `~/.config/zero-policy` (where a hook given no paths looks), and the
/// document cache ([`cache::folder`]), which stands in for the files' YAML.
/// Registries guard them ([`crate::Registry::guard`]).
#[must_use]
pub fn policy_places(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = paths.to_vec();
    if !paths.is_empty() {
        out.push(lock::lock_path(paths));
    }
    if let Some(value) = std::env::var_os("ZERO_POLICY_PATH") {
        out.extend(std::env::split_paths(&value).filter(|p| !p.as_os_str().is_empty()));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        out.push(PathBuf::from(home).join(".config/zero-policy"));
    }
    out.extend(cache::folder());
    out
}

/// What a load is for, and so what it reads and checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Purpose {
    /// Everything (`lint`, `test`, `tools`, the gateway): the tests are read and
    /// every tool's parameters are checked as a JSON Schema.
    #[default]
    Check,
    /// Deciding calls in a process that lives for one call or a few
    /// (`explain`): a file that holds only tests ([`holds_only_tests`]) is not
    /// read, rules' `examples` are neither built nor checked, and a tool's
    /// parameters are compiled when the tool is called, which refuses the call
    /// if they are not a valid schema. Every other check is made.
    Decide,
    /// Deciding the calls of one agent (its hook): as `Decide`, and a file that
    /// holds nothing but another agent's tools ([`holds_only_tools_of`]) is not
    /// read either, since a call made for this agent never sees them; so a
    /// rule's `tools:` pattern that matches no tool is not an error here (it
    /// may be meant for those tools, and changes no decision).
    DecideFor(&'static str),
}

impl Purpose {
    /// Whether the load is for deciding calls (not for `lint` or `test`).
    #[must_use]
    pub fn decides(self) -> bool {
        self != Purpose::Check
    }
}

/// Reads and loads files and folders.
///
/// # Errors
/// A path does not exist or cannot be read; problems *in* the files are diagnostics.
pub fn load_paths(paths: &[PathBuf]) -> Result<Loaded, LoadError> {
    load_paths_for(paths, Purpose::Check)
}

/// Reads and loads files and folders for `purpose`.
///
/// # Errors
/// A path does not exist or cannot be read; problems *in* the files are diagnostics.
pub fn load_paths_for(paths: &[PathBuf], purpose: Purpose) -> Result<Loaded, LoadError> {
    let files = find_files(paths)?;
    let mut sources = Vec::new();
    for f in files {
        let text = read_file(&f)?;
        sources.push(SourceFile::new(&f, text));
    }
    Ok(load_sources_for(sources, purpose))
}

/// Reads and loads files and folders for `purpose`, reading each file's YAML
/// from `cache` where it holds it and keeping it there otherwise. Only files
/// the user running the process may write are cached ([`cache`]).
///
/// # Errors
/// As [`load_paths_for`].
pub fn load_paths_cached(
    paths: &[PathBuf],
    purpose: Purpose,
    cache: &cache::Cache,
) -> Result<Loaded, LoadError> {
    let files = find_files(paths)?;
    let mut sources = Vec::new();
    for f in files {
        let (text, writable) = read_file_writable(&f)?;
        sources.push((SourceFile::new(&f, text), writable));
    }
    Ok(load(sources, purpose, Some(cache)))
}

/// Loads in-memory sources (used by tests and benchmarks too).
#[must_use]
pub fn load_sources(files: Vec<SourceFile>) -> Loaded {
    load_sources_for(files, Purpose::Check)
}

/// Loads in-memory sources for `purpose`.
#[must_use]
pub fn load_sources_for(files: Vec<SourceFile>, purpose: Purpose) -> Loaded {
    load(
        files.into_iter().map(|f| (f, false)).collect(),
        purpose,
        None,
    )
}

/// Loads in-memory sources for `purpose`, each file's YAML kept in `cache`
/// (the built-in default, which `~/.config/zero-policy/` would replace: its
/// cache is trusted as far as that folder is).
#[must_use]
pub fn load_sources_cached(
    files: Vec<SourceFile>,
    purpose: Purpose,
    cache: &cache::Cache,
) -> Loaded {
    let files = files.into_iter().map(|f| (f, true)).collect();
    load(files, purpose, Some(cache))
}

/// Loads sources, each with whether `cache` may stand in for its YAML.
fn load(
    sources: Vec<(SourceFile, bool)>,
    purpose: Purpose,
    cache: Option<&cache::Cache>,
) -> Loaded {
    let mut b = Builder {
        purpose,
        ..Builder::default()
    };
    // The shipped catalog's units go through the cache only where every file
    // does: its entries could then stand in for the catalog built into the
    // binary, which a policy the user may not write otherwise keeps.
    let all_cacheable = sources.iter().all(|(_, cacheable)| *cacheable);
    if let Some(c) = cache
        && all_cacheable
    {
        catalog::use_cache(c.clone());
    }
    let mut docs = Vec::new();
    let mut files = Vec::with_capacity(sources.len());
    for (file, cacheable) in sources {
        if let Some(doc) = b.parse(&file, cache.filter(|_| cacheable)) {
            docs.push((file.clone(), doc));
        }
        files.push(file);
    }
    // Settings and lists first: every rule of every file may use them.
    for (file, doc) in &docs {
        if let Some(settings) = &doc.settings {
            b.settings(file, settings);
        }
    }
    b.lists(&docs);
    for (file, doc) in &docs {
        if let Some(enforce) = doc.settings.as_ref().and_then(|s| s.enforce.as_ref()) {
            b.enforce_lists(file, enforce);
        }
        if let Some(paths) = doc.settings.as_ref().and_then(|s| s.paths.as_ref()) {
            b.paths_lists(file, paths);
        }
    }
    // A process that decides calls restores the expressions an earlier one
    // compiled for these lists, where every file may be cached (a compiled
    // expression stands for its file's text as the document does).
    let shelf = cache
        .filter(|_| all_cacheable && purpose.decides())
        .map(|c| {
            let key = crate::cel::stored::shelf_key(&b.lists, b.settings.case_insensitive);
            b.shelf = Some(c.shelf(&key));
            (c, key)
        });
    // Each document is dropped once read: what it held is in the builder, and
    // the next document's compiled rules reuse its memory.
    for (file, mut doc) in docs {
        b.document(&file, &mut doc);
    }
    b.cross_checks();
    if let (Some((c, key)), Some(kept)) = (shelf, &b.shelf)
        && kept.added() > 0
        && !crate::diagnostic::has_errors(&b.diags)
    {
        c.put_shelf(&key, kept);
    }
    let mut diagnostics = b.diags;
    crate::diagnostic::sort(&mut diagnostics);
    let policy = if crate::diagnostic::has_errors(&diagnostics) {
        None
    } else {
        Some(Policy {
            files,
            settings: b.settings,
            tools: b.tools,
            servers: b.servers,
            rules: b.rules,
            tests: b.tests,
            patterns: Arc::new(b.patterns),
            cel: b.cel,
            lists: b.lists,
            commands: b.commands,
            catalog: catalog::lookup,
        })
    };
    Loaded {
        policy,
        diagnostics,
    }
}

/// Reads one document's YAML, as every load does: a budget of aliases, nodes
/// and depth, tags refused, YAML 1.2 booleans.
///
/// # Errors
/// The text is not YAML, or not a document of this format.
pub fn read_document(text: &str) -> Result<Document, serde_saphyr::Error> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_aliases: MAX_ALIASES,
            max_nodes: MAX_NODES,
            max_depth: MAX_YAML_DEPTH,
        },
        with_snippet: false,
        // A tag (`!!python/object`, `!custom`) means something to other readers:
        // refused with a word rather than ignored.
        reject_unsupported_tags: true,
        reject_tagged_field_names: true,
        // YAML 1.2 booleans only: a parameter named `n`, `y`, `on` or `no` stays a string.
        strict_booleans: true,
    };
    serde_saphyr::from_str_with_options::<Document>(text, options)
}

#[derive(Default)]
struct Builder {
    diags: Vec<Diagnostic>,
    cel: CelEnv,
    patterns: PatternCache,
    settings: Settings,
    settings_origin: HashMap<&'static str, Origin>,
    tools: Vec<ToolDef>,
    servers: Vec<ServerDef>,
    rules: Vec<Arc<Rule>>,
    tests: Vec<TestCase>,
    ids: HashMap<String, Origin>,
    /// Tool names by (agent, name): unique within an agent.
    tool_names: HashMap<(Option<String>, String), Origin>,
    lists: Arc<BTreeMap<String, Vec<String>>>,
    commands: Vec<(Arc<crate::effects::catalog::Spec>, Vec<String>)>,
    command_names: HashMap<String, Origin>,
    /// The agent of the document being read.
    agent: Option<String>,
    /// The shipped catalog is being compiled (no `command-replaced` warnings).
    loading_builtin_catalog: bool,
    /// What the load is for.
    purpose: Purpose,
    /// Compiled expressions kept from earlier loads, when the load restores them.
    shelf: Option<crate::cel::stored::Shelf>,
}

/// The byte span of a spanned value.
fn span_of(file: &SourceFile, place: &Place) -> Span {
    let offset = match place.offset {
        Some(b) => b,
        None => file.offset_of(place.line as usize, place.column as usize),
    };
    let len = place.len;
    Span {
        offset: offset.min(file.text.len()),
        len: len.min(file.text.len().saturating_sub(offset)),
    }
}

fn origin<T>(file: &SourceFile, s: &Spanned<T>) -> Origin {
    Origin {
        file: file.clone(),
        span: span_of(file, &s.referenced),
    }
}

fn loc_of(file: &SourceFile, loc: Option<serde_saphyr::Location>) -> Option<Location> {
    let loc = loc?;
    if loc.line() == 0 {
        return None;
    }
    let offset = file.offset_of(loc.line() as usize, loc.column() as usize);
    let len = file
        .text
        .get(offset..)
        .and_then(|r| r.chars().next())
        .map_or(0, char::len_utf8);
    Some(Location {
        file: file.clone(),
        span: Span { offset, len },
    })
}

fn backticked(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub use crate::diagnostic::closest;

fn valid_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn valid_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-'))
}

fn valid_agent_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn valid_server_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

/// Parses `8s`, `500ms`, `1m`, `2.5s`.
///
/// # Errors
/// Not a duration.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((s, ""), |i| s.split_at(i));
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "" => return Err(format!("`{s}` has no unit; write `{s}s` or `{s}ms`")),
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}`; use `ms`, `s` or `m`"
            ));
        }
    };
    if !(0.0..=3600.0).contains(&secs) || secs == 0.0 {
        return Err(format!("`{s}` is out of range (more than 0, at most 1h)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Compiles globs over tool names (`*` matches any characters).
fn name_globset<'a>(
    b: &mut Builder,
    file: &SourceFile,
    patterns: impl IntoIterator<Item = &'a Spanned<String>>,
) -> (NameGlobs, Vec<(String, Origin)>) {
    let mut set = NameGlobs::default();
    let mut written = Vec::new();
    for p in patterns {
        match set.push(&p.value) {
            Ok(()) => written.push((p.value.clone(), origin(file, p))),
            Err(e) => b.diags.push(
                Diagnostic::new(Code::InvalidGlob, format!("invalid glob `{}`", p.value))
                    .at(origin(file, p).location())
                    .label(e.kind().to_string())
                    .help("`*` matches any characters; escape a literal `*`, `?`, `[` or `{` with `[...]`"),
            ),
        }
    }
    (set, written)
}

/// Whether a document holds nothing but `version: 1` and `tests:`, judged from
/// its lines alone and only where that is certain; a load that decides calls
/// does not read such a file.
///
/// A top-level key of a document is a line that starts at column 0, so the
/// document holds only those two when every line is blank, a comment, indented
/// by a space, a `-` item (at column 0 only the top-level `tests:` can hold
/// one), `version: 1` or `tests:`, each of those two once, with `version`
/// present and nothing indented under it. Any other line (another key, a
/// quoted key, a flow collection, `---`, a directive, a tab, a byte-order mark,
/// a scalar continued at column 0) and the file is read as usual. A line ends
/// where YAML ends one: at `\n`, at `\r\n`, and at a lone `\r`.
#[must_use]
pub fn holds_only_tests(text: &str) -> bool {
    let Some(lines) = top_level_lines(text) else {
        return false;
    };
    let (mut version, mut tests, mut under_version) = (false, false, false);
    for line in lines {
        let fits = match line {
            // The value of the key above, which must be `tests:`.
            Line::Indented | Line::Item => tests && !under_version,
            Line::Key("version: 1") if !version => {
                (version, under_version) = (true, true);
                true
            }
            Line::Key("tests:") if !tests => {
                (tests, under_version) = (true, false);
                true
            }
            Line::Key(_) => false,
        };
        if !fits {
            return false;
        }
    }
    version
}

/// The agent of a file that holds nothing but that agent's built-in tools,
/// decided from its lines as [`holds_only_tests`] decides: every line is
/// blank, a comment, or indented or a `-` item after `tools:`, except
/// `version: 1`, `agent: NAME` (a name YAML reads as a string: a letter,
/// then letters, digits, `-`, `_` and `.`; not `null`, `true` or `false`)
/// and `tools:`, once each. `None` for any other file, which is read
/// as usual.
#[must_use]
pub fn holds_only_tools_of(text: &str) -> Option<&str> {
    let (mut version, mut agent, mut tools) = (false, None, false);
    // Whether the last key at column 0 was `tools:` (only its value may be
    // indented: under another key an indented line continues its scalar).
    let mut in_tools = false;
    for line in top_level_lines(text)? {
        let bare = match line {
            Line::Indented | Line::Item if in_tools => continue,
            Line::Indented | Line::Item => return None,
            Line::Key(bare) => bare,
        };
        in_tools = false;
        match bare {
            "version: 1" if !version => version = true,
            "tools:" if !tools => (tools, in_tools) = (true, true),
            _ => {
                let name = bare.strip_prefix("agent: ")?;
                // A name YAML reads as a string: `null`, `true` or a number
                // would not be one.
                let plain = name.starts_with(|c: char| c.is_ascii_alphabetic())
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                    && !["null", "true", "false"]
                        .iter()
                        .any(|w| name.eq_ignore_ascii_case(w));
                if agent.is_some() || !plain {
                    return None;
                }
                agent = Some(name);
            }
        }
    }
    if version { agent } else { None }
}

/// A line of a document that says something, as the line scans see it.
enum Line<'a> {
    /// Indented by spaces: the value of the key above.
    Indented,
    /// A `-` item at column 0.
    Item,
    /// Anything else at column 0, without a trailing comment.
    Key(&'a str),
}

/// The lines of `text` that are neither blank nor comments; `None` when it
/// holds NEL, LS or PS, which end a line in YAML 1.1 and are refused rather
/// than weighed. A line ends where YAML ends one: at `\n`, `\r\n` and a lone
/// `\r`.
fn top_level_lines(text: &str) -> Option<impl Iterator<Item = Line<'_>>> {
    if text.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return None;
    }
    Some(text.split(['\n', '\r']).filter_map(|line| {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return None;
        }
        if trimmed.len() < line.len() {
            return Some(Line::Indented);
        }
        let bare = match line.find(" #") {
            Some(i) => &line[..i],
            None => line,
        }
        .trim_end_matches(' ');
        Some(if bare == "-" || line.starts_with("- ") {
            Line::Item
        } else {
            Line::Key(bare)
        })
    }))
}

impl Builder {
    fn parse(&mut self, file: &SourceFile, cache: Option<&cache::Cache>) -> Option<Document> {
        let kept = cache.and_then(|c| c.get_of(&file.digest()));
        // With a cache, the scans are kept with the document (a miss makes both).
        let scans = match (&kept, cache) {
            (Some(k), _) => Some(k.scans.clone()),
            (None, Some(_)) => Some(cache::Scans {
                tests_only: holds_only_tests(&file.text),
                tools_of: holds_only_tools_of(&file.text).map(str::to_string),
            }),
            (None, None) => None,
        };
        // A process that decides calls never runs the tests; a hook never
        // looks at another agent's tools.
        let tests_only = || {
            scans
                .as_ref()
                .map_or_else(|| holds_only_tests(&file.text), |s| s.tests_only)
        };
        let skipped = (self.purpose.decides() && tests_only())
            || match (self.purpose, &scans) {
                (Purpose::DecideFor(agent), Some(s)) => {
                    s.tools_of.as_deref().is_some_and(|a| a != agent)
                }
                (Purpose::DecideFor(agent), None) => {
                    holds_only_tools_of(&file.text).is_some_and(|a| a != agent)
                }
                _ => false,
            };
        if skipped {
            // The next load skips it from the entry, without scanning.
            if let (Some(c), Some(s), None) = (cache, &scans, &kept) {
                c.put_of(&file.digest(), s, None);
            }
            return None;
        }
        // An entry is written only for a document read without error.
        if let Some(doc) = kept.and_then(|k| k.document(!self.purpose.decides())) {
            return Some(doc);
        }
        // `!!binary` is a tag the YAML reader knows and decodes silently into a
        // string field: refused like the unknown ones.
        if let Some(offset) = binary_tag(&file.text) {
            self.diags.push(
                Diagnostic::new(Code::YamlTag, "unsupported YAML tag `!!binary`")
                    .at(Location {
                        file: file.clone(),
                        span: Span {
                            offset,
                            len: "!!binary".len(),
                        },
                    })
                    .help("write the text itself; binary values are not read"),
            );
            return None;
        }
        match read_document(&file.text) {
            Ok(doc) => {
                if let (Some(c), Some(scans)) = (cache, &scans) {
                    c.put_of(&file.digest(), scans, Some(&doc));
                }
                Some(doc)
            }
            Err(err) => {
                self.diags.push(yaml_diagnostic(file, &err));
                None
            }
        }
    }

    fn document(&mut self, file: &SourceFile, doc: &mut Document) {
        if doc.version.value != 1 {
            self.diags.push(
                Diagnostic::new(
                    Code::UnsupportedVersion,
                    format!("unsupported version `{}`", doc.version.value),
                )
                .at(origin(file, &doc.version).location())
                .help("only `version: 1` exists"),
            );
        }
        self.agent = doc.agent.as_ref().map(|a| a.value.clone());
        if let Some(a) = &doc.agent
            && !valid_agent_name(&a.value)
        {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, format!("invalid agent name `{}`", a.value))
                    .at(origin(file, a).location())
                    .help("agent names are lowercase: `[a-z0-9][a-z0-9-]*` (`claude-code`, `codex`, `gemini-cli`, `cursor`, `copilot`)"),
            );
        }
        for c in &doc.commands {
            self.command(file, c);
        }
        for t in &mut doc.tools {
            // A load that decides calls neither checks nor lints a tool's
            // schema, so it takes the schema rather than copying it.
            let schema = self
                .purpose
                .decides()
                .then(|| t.parameters.as_mut().map(|p| p.value.take()))
                .flatten();
            self.tool(file, t, schema);
        }
        for s in &doc.servers {
            self.server(file, s);
        }
        for r in &doc.rules {
            self.sandbox_rule(file, r);
        }
        for r in &doc.relax {
            self.relax_rule(file, r);
        }
        for t in &doc.tests {
            let call = self.call(file, &t.call);
            self.tests.push(TestCase {
                name: t.name.value.clone(),
                call,
                decision: t.expect.decision,
                matched: t.expect.matched.clone(),
                origin: origin(file, &t.name),
            });
        }
    }
}

/// The offset of a `!!binary` tag outside quotes and comments, if any.
fn binary_tag(text: &str) -> Option<usize> {
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let (mut single, mut double) = (false, false);
        let bytes = line.as_bytes();
        for (i, &c) in bytes.iter().enumerate() {
            match c {
                b'\'' if !double => single = !single,
                b'"' if !single && (i == 0 || bytes[i - 1] != b'\\') => double = !double,
                b'#' if !single && !double && (i == 0 || bytes[i - 1].is_ascii_whitespace()) => {
                    break;
                }
                b'!' if !single
                    && !double
                    && line[i..].starts_with("!!binary")
                    && (i == 0
                        || matches!(
                            bytes[i - 1],
                            b' ' | b'\t' | b'[' | b'{' | b',' | b'-' | b':'
                        )) =>
                {
                    return Some(line_start + i);
                }
                _ => {}
            }
        }
        line_start += line.len();
    }
    None
}

fn strip_env_refs(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${env:") {
        out.push_str(&rest[..i]);
        match rest[i..].find('}') {
            Some(end) => rest = &rest[i + end + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn yaml_diagnostic(file: &SourceFile, err: &serde_saphyr::Error) -> Diagnostic {
    use serde_saphyr::Error as E;
    let mut err = err.without_snippet();
    // Errors raised while replaying an alias come wrapped: the kind is inside, the
    // place to show is where the alias is used (the outermost location).
    let outer = loc_of(file, err.location());
    while let E::AliasError { error, .. } = err {
        err = error.without_snippet();
    }
    let location = outer.or_else(|| loc_of(file, err.location()));
    let location = match err {
        // Underline the whole key, not its first character.
        E::SerdeUnknownField { .. } | E::DuplicateMappingKey { .. } => location.map(|mut l| {
            let rest = l.file.text.get(l.span.offset..).unwrap_or("");
            let len = rest.find([':', '\n', ',', '}']).unwrap_or(rest.len());
            l.span.len = rest[..len].trim_end().len().max(l.span.len);
            l
        }),
        // Underline the tag itself: the parser places it at the tagged node.
        E::UnsupportedTag { tag, .. } | E::TaggedStructFieldName { tag, .. } => {
            location.map(|mut l| {
                let before = l.file.text.get(..l.span.offset).unwrap_or("");
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                if let Some(i) = before[line_start..].rfind(tag.as_str()) {
                    l.span.offset = line_start + i;
                    l.span.len = tag.len();
                }
                l
            })
        }
        _ => location,
    };
    let (code, message, help) = match err {
        E::SerdeUnknownField {
            field, expected, ..
        } => {
            let help = match closest(field, expected.iter().copied()) {
                Some(s) => format!("did you mean `{s}`? allowed here: {}", backticked(expected)),
                None => format!("allowed here: {}", backticked(expected)),
            };
            (Code::UnknownField, format!("unknown field `{field}`"), help)
        }
        E::SerdeMissingField { field, .. } => (
            Code::MissingField,
            format!("missing field `{field}`"),
            if *field == "version" {
                "every file starts with `version: 1`".to_string()
            } else {
                format!("add `{field}:` here")
            },
        ),
        E::SerdeUnknownVariant {
            variant, expected, ..
        } => (
            Code::InvalidType,
            format!("unknown value `{variant}`"),
            format!("expected one of {}", backticked(expected)),
        ),
        E::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | E::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => (
            Code::InvalidType,
            format!("invalid type: {unexpected}, expected {expected}"),
            format!("write {expected} here"),
        ),
        E::DuplicateMappingKey { key, .. } => (
            Code::DuplicateKey,
            match key {
                Some(k) => format!("duplicate key `{k}`"),
                None => "duplicate key".to_string(),
            },
            "a key may appear once per mapping; YAML parsers disagree on which copy wins".into(),
        ),
        E::Budget { breach, .. } => {
            use serde_saphyr::budget::BudgetBreach as B;
            let (what, help) = match breach {
                B::Depth { .. } => (
                    format!("the file nests mappings and sequences deeper than {MAX_YAML_DEPTH} levels"),
                    "flatten the structure; no policy needs this depth".to_string(),
                ),
                B::Aliases { .. } | B::Anchors { .. } => (
                    format!("the file uses more than {MAX_ALIASES} aliases"),
                    "write the values out or split the file; an alias expansion bomb is refused".to_string(),
                ),
                B::Nodes { .. } => (
                    format!("the file has more than {MAX_NODES} nodes"),
                    "split the file; an alias expansion bomb is refused".to_string(),
                ),
                B::Documents { .. } => (
                    "the file holds too many YAML documents".to_string(),
                    "one document per file".to_string(),
                ),
                _ => (
                    "the file exceeds the YAML parsing budget".to_string(),
                    format!(
                        "at most {MAX_ALIASES} aliases, {MAX_NODES} nodes and {MAX_YAML_DEPTH} levels per file"
                    ),
                ),
            };
            (Code::YamlBudget, what, help)
        }
        E::AliasExpansionLimitExceeded { .. }
        | E::AliasReplayLimitExceeded { .. }
        | E::AliasReplayStackDepthExceeded { .. }
        | E::AliasReplayCounterOverflow { .. } => (
            Code::YamlBudget,
            "the file exceeds the YAML alias budget".to_string(),
            format!(
                "at most {MAX_ALIASES} aliases and {MAX_NODES} nodes per file; an alias expansion bomb is refused"
            ),
        ),
        E::UnsupportedTag { tag, .. } | E::TaggedStructFieldName { tag, .. } => (
            Code::YamlTag,
            format!("unsupported YAML tag `{tag}`"),
            "remove the tag; only the core tags (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map`) are read".to_string(),
        ),
        E::InvalidBinaryBase64 { .. }
        | E::BinaryNotUtf8 { .. }
        | E::BytesNotSupportedMissingBinaryTag { .. } => (
            Code::YamlTag,
            "unsupported YAML tag `!!binary`".to_string(),
            "write the text itself; binary values are not read".to_string(),
        ),
        E::MultipleDocuments { .. } => (
            Code::YamlSyntax,
            "the file holds more than one YAML document".to_string(),
            "one document per file: split it where `---` starts the next".to_string(),
        ),
        E::SerdeInvalidLength { len, expected, .. } => (
            Code::InvalidType,
            format!("{len} items where {expected} were expected"),
            "give the number of items expected here".to_string(),
        ),
        E::InvalidScalar { ty, .. } => {
            let what = match *ty {
                "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64"
                | "isize" | "u128" | "i128" => "a whole number in range",
                "f32" | "f64" => "a number",
                "bool" => "`true` or `false`",
                _ => "a value of the expected type",
            };
            (
                Code::InvalidValue,
                format!("not {what}"),
                format!("write {what} here"),
            )
        }
        E::NonFiniteFloat { .. } => (
            Code::InvalidValue,
            "not a finite number".to_string(),
            "`.nan` and `.inf` are not accepted".to_string(),
        ),
        other => {
            let text = other.to_string();
            let first = text.lines().next().unwrap_or("invalid YAML").to_string();
            let first = first
                .split(" at line ")
                .next()
                .unwrap_or(&first)
                .to_string();
            // Text from the parser may name its own API; keep it out of the message.
            let first = if first.contains("from_str") || first.contains("serde") {
                "invalid YAML".to_string()
            } else {
                first
            };
            (
                Code::YamlSyntax,
                lowercase_first(&first),
                "fix the YAML syntax here".into(),
            )
        }
    };
    Diagnostic::new(code, message)
        .at_opt(location.or_else(|| {
            Some(Location {
                file: file.clone(),
                span: Span { offset: 0, len: 0 },
            })
        }))
        .help(help)
}

fn lowercase_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
