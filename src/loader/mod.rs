//! The loader: YAML files → raw documents → checked, compiled [`Policy`].
//!
//! Every problem becomes a [`Diagnostic`] with a code and a place; the loader
//! collects them all rather than stopping at the first. A policy is returned
//! only when there is no error.

pub mod scalar;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_saphyr::Spanned;

use crate::cel::{CelEnv, ExprErrorKind, PatternCache};
use crate::diagnostic::{Code, Diagnostic, Location, SourceFile, Span};
use crate::dispatch::{Call, Session};
use crate::model::{
    Decision, Document, Permission, RawCall, RawExamples, RawPartialSafety, RawRule, RawSafety,
    RawServer, RawSettings, RawTool, SideEffect, Transport,
};
use crate::policy::{
    EnvString, Example, Origin, Override, Policy, Rule, RuleKind, Safety, ServerDef, Settings,
    TestCase, ToolDef,
};
use scalar::ScalarMap;

/// Aliases allowed in one file; far above any real policy, far below a bomb.
const MAX_ALIASES: usize = 1_000;
/// Nodes allowed in one file.
const MAX_NODES: usize = 200_000;
/// Largest file read.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Why loading could not even start.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LoadError {
    /// A path does not exist.
    #[error("no such file or folder `{0}`")]
    #[diagnostic(
        code(not_found),
        help("give files or folders of YAML policies and manifests")
    )]
    NotFound(PathBuf),
    /// A file could not be read.
    #[error("cannot read `{path}`: {message}")]
    #[diagnostic(code(unreadable))]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// A file is too large.
    #[error("`{0}` is larger than 16 MiB")]
    #[diagnostic(code(too_large))]
    TooLarge(PathBuf),
}

/// The result of loading: diagnostics always, a policy when there was no error.
#[derive(Debug)]
pub struct Loaded {
    /// The checked policy, if there were no errors.
    pub policy: Option<Policy>,
    /// Every problem found, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

/// Finds the YAML files under the given paths (folders recursively), sorted.
///
/// # Errors
/// A path does not exist or a folder cannot be read.
pub fn find_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk_dir(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(LoadError::NotFound(p.clone()));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::Unreadable {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk_dir(&p, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e == "yaml" || e == "yml")
        {
            out.push(p);
        }
    }
    Ok(())
}

/// Reads and loads files and folders.
///
/// # Errors
/// A path does not exist or cannot be read; problems *in* the files are diagnostics.
pub fn load_paths(paths: &[PathBuf]) -> Result<Loaded, LoadError> {
    let files = find_files(paths)?;
    let mut sources = Vec::new();
    for f in files {
        let meta = std::fs::metadata(&f).map_err(|e| LoadError::Unreadable {
            path: f.clone(),
            message: e.to_string(),
        })?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(LoadError::TooLarge(f));
        }
        let text = std::fs::read_to_string(&f).map_err(|e| LoadError::Unreadable {
            path: f.clone(),
            message: e.to_string(),
        })?;
        sources.push(SourceFile::new(&f, text));
    }
    Ok(load_sources(sources))
}

/// Loads in-memory sources (used by tests and benchmarks too).
#[must_use]
pub fn load_sources(files: Vec<SourceFile>) -> Loaded {
    let mut b = Builder::default();
    let mut docs = Vec::new();
    for file in &files {
        if let Some(doc) = b.parse(file) {
            docs.push((file.clone(), doc));
        }
    }
    for (file, doc) in &docs {
        b.document(file, doc);
    }
    b.cross_checks();
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
        })
    };
    Loaded {
        policy,
        diagnostics,
    }
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
    tool_names: HashMap<String, Origin>,
}

/// The byte span of a spanned value.
fn span_of(file: &SourceFile, loc: &serde_saphyr::Location) -> Span {
    let s = loc.span();
    let offset = match s.byte_offset() {
        Some(b) => b as usize,
        None => file.offset_of(loc.line() as usize, loc.column() as usize),
    };
    let len = s.byte_len().map_or(s.len() as usize, |l| l as usize);
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

/// The closest candidate by edit distance, if close enough to be a typo.
#[must_use]
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(word, c);
        if d <= (word.len().max(c.len()) / 3).max(1)
            && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc))
        {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

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
) -> (GlobSet, Vec<(String, Origin)>) {
    let mut set = GlobSetBuilder::new();
    let mut written = Vec::new();
    for p in patterns {
        match Glob::new(&p.value) {
            Ok(g) => {
                set.add(g);
                written.push((p.value.clone(), origin(file, p)));
            }
            Err(e) => b.diags.push(
                Diagnostic::new(Code::InvalidGlob, format!("invalid glob `{}`", p.value))
                    .at(origin(file, p).location())
                    .label(e.kind().to_string())
                    .help("`*` matches any characters; escape a literal `*`, `?`, `[` or `{` with `[...]`"),
            ),
        }
    }
    let set = set.build().unwrap_or_else(|_| GlobSet::empty());
    (set, written)
}

impl Builder {
    fn parse(&mut self, file: &SourceFile) -> Option<Document> {
        let options = serde_saphyr::options! {
            budget: serde_saphyr::budget! { max_aliases: MAX_ALIASES, max_nodes: MAX_NODES },
            with_snippet: false,
            // YAML 1.2 booleans only: a parameter named `n`, `y`, `on` or `no` stays a string.
            strict_booleans: true,
        };
        match serde_saphyr::from_str_with_options::<Document>(&file.text, options) {
            Ok(doc) => Some(doc),
            Err(err) => {
                self.diags.push(yaml_diagnostic(file, &err));
                None
            }
        }
    }

    fn setting<T>(&mut self, key: &'static str, file: &SourceFile, s: &Spanned<T>) -> bool {
        let here = origin(file, s);
        if let Some(first) = self.settings_origin.get(key) {
            self.diags.push(
                Diagnostic::new(
                    Code::SettingsConflict,
                    format!("setting `{key}` is also set in `{}`", first.file.name),
                )
                .at(here.location())
                .label("set again here")
                .help(format!(
                    "`{key}` is first set at {}:{}; keep it in one file",
                    first.file.name,
                    first.line()
                )),
            );
            return false;
        }
        self.settings_origin.insert(key, here);
        true
    }

    fn settings(&mut self, file: &SourceFile, raw: &RawSettings) {
        if let Some(v) = &raw.defer_threshold
            && self.setting("defer_threshold", file, v)
        {
            self.settings.defer_threshold = v.value;
        }
        if let Some(v) = &raw.mcp_name_format
            && self.setting("mcp_name_format", file, v)
        {
            if v.value.contains("{tool}") {
                self.settings.mcp_name_format = v.value.clone();
            } else {
                self.diags.push(
                    Diagnostic::new(Code::InvalidValue, "`mcp_name_format` has no `{tool}`")
                        .at(origin(file, v).location())
                        .help("MCP tools would all get the same name; include `{tool}`, e.g. `mcp__{server}__{tool}`"),
                );
            }
        }
        if let Some(v) = &raw.connect_timeout
            && self.setting("connect_timeout", file, v)
        {
            match parse_duration(&v.value) {
                Ok(d) => self.settings.connect_timeout = d,
                Err(e) => self
                    .diags
                    .push(Diagnostic::new(Code::InvalidValue, e).at(origin(file, v).location())),
            }
        }
        if let Some(v) = &raw.on_prompt
            && self.setting("on_prompt", file, v)
        {
            self.settings.on_prompt = v.value;
        }
        if let Some(secrets) = &raw.secrets {
            for p in &secrets.patterns {
                match regex::Regex::new(&p.value) {
                    Ok(_) => self.settings.secret_patterns.push(p.value.clone()),
                    Err(e) => self.diags.push(
                        Diagnostic::new(
                            Code::InvalidRegex,
                            format!("invalid secret pattern `{}`", p.value),
                        )
                        .at(origin(file, p).location())
                        .label(
                            e.to_string()
                                .lines()
                                .last()
                                .unwrap_or("")
                                .trim()
                                .to_string(),
                        ),
                    ),
                }
            }
            for e in &secrets.env {
                self.settings.secret_env.push(e.value.clone());
            }
        }
        if let Some(log) = &raw.log {
            if let Some(v) = &log.path
                && self.setting("log.path", file, v)
            {
                let p = v.value.as_str();
                if p.is_empty() || p.starts_with("~/") || Path::new(p).is_absolute() {
                    self.settings.log_path = v.value.clone();
                } else {
                    self.diags.push(
                        Diagnostic::new(Code::InvalidValue, format!("`log.path` `{p}` is relative"))
                            .at(origin(file, v).location())
                            .help("hooks run in the agent's working folder; give an absolute path, one starting with `~/`, or `\"\"` to turn the log off"),
                    );
                }
            }
            if let Some(v) = &log.args
                && self.setting("log.args", file, v)
            {
                self.settings.log_args = v.value;
            }
        }
        if let Some(hooks) = &raw.hooks
            && let Some(v) = &hooks.unknown_tool
            && self.setting("hooks.unknown_tool", file, v)
        {
            self.settings.unknown_tool = v.value;
        }
    }

    fn document(&mut self, file: &SourceFile, doc: &Document) {
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
        if let Some(s) = &doc.settings {
            self.settings(file, s);
        }
        for t in &doc.tools {
            self.tool(file, t);
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

    fn check_id(&mut self, file: &SourceFile, id: &Spanned<String>) {
        let here = origin(file, id);
        if !valid_id(&id.value) {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("invalid rule id `{}`", id.value),
                )
                .at(here.location())
                .help("ids are lowercase: `[a-z0-9][a-z0-9_.-]*`"),
            );
        }
        if let Some(first) = self.ids.get(&id.value) {
            self.diags.push(
                Diagnostic::new(Code::DuplicateId, format!("duplicate rule id `{}`", id.value))
                    .at(here.location())
                    .label("used again here")
                    .help(format!(
                        "first used at {}:{}; ids are unique across rules, relax rules and reject rules",
                        first.file.name,
                        first.line()
                    )),
            );
        } else {
            self.ids.insert(id.value.clone(), here);
        }
    }

    fn safety(&mut self, file: &SourceFile, raw: &RawSafety, what: &str) -> Safety {
        let reason = raw.reason.as_ref().map(|r| r.value.clone());
        if raw.permission.value != Permission::Allow
            && reason.as_deref().is_none_or(|r| r.trim().is_empty())
        {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingReason,
                    format!(
                        "{what} has permission `{}` but no reason",
                        raw.permission.value
                    ),
                )
                .at(origin(file, &raw.permission).location())
                .help("add `reason:`; it is what a person sees when asked or refused"),
            );
        }
        Safety {
            side_effect: raw.side_effect.value,
            permission: raw.permission.value,
            reason,
        }
    }

    fn compile_rule(
        &mut self,
        file: &SourceFile,
        id: &Spanned<String>,
        kind: RuleKind,
        when: &Spanned<String>,
    ) -> Option<(crate::cel::Expression, ScalarMap, Origin)> {
        let when_origin = origin(file, when);
        let map = ScalarMap::new(
            &file.text,
            when_origin.span.offset,
            when_origin.span.offset + when_origin.span.len,
            &when.value,
        );
        match self.cel.compile(&when.value, &mut self.patterns) {
            Ok(expr) => Some((expr, map, when_origin)),
            Err(errors) => {
                for e in errors {
                    let (a, b) = map.range(e.start, e.end);
                    let code = match e.kind {
                        ExprErrorKind::Syntax => Code::CelSyntax,
                        ExprErrorKind::UnknownVariable => Code::CelUnknownVariable,
                        ExprErrorKind::UnknownFunction => Code::CelUnknownFunction,
                        ExprErrorKind::InvalidGlob => Code::InvalidGlob,
                        ExprErrorKind::InvalidRegex => Code::InvalidRegex,
                    };
                    let help = match e.kind {
                        ExprErrorKind::Syntax => "check the CEL syntax near the marked position; strings in CEL use double quotes inside a single-quoted YAML value".to_string(),
                        ExprErrorKind::UnknownVariable => "the variables are `tool`, `args` and `session`".to_string(),
                        ExprErrorKind::UnknownFunction => {
                            let name = e.message.split('`').nth(1).unwrap_or("");
                            let all = crate::cel::functions::FUNCTIONS;
                            match closest(name, all.iter().copied()) {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "zero-policy adds `glob`, `path_clean`, `path_under`, `shell_parses` and `shell_commands` to standard CEL".to_string(),
                            }
                        }
                        ExprErrorKind::InvalidGlob => "`*` stays in one path segment, `**` crosses them; escape literal metacharacters with `[...]`".to_string(),
                        ExprErrorKind::InvalidRegex => "the syntax is RE2's (Rust `regex` crate); escape backslashes once for CEL".to_string(),
                    };
                    self.diags.push(
                        Diagnostic::new(
                            code,
                            format!("{} `{}`: {}", kind.as_str(), id.value, e.message),
                        )
                        .at(Location {
                            file: file.clone(),
                            span: Span {
                                offset: a,
                                len: b - a,
                            },
                        })
                        .label(match e.kind {
                            ExprErrorKind::Syntax => "the expression breaks here".to_string(),
                            _ => e.message.clone(),
                        })
                        .help(help),
                    );
                }
                None
            }
        }
    }

    fn tool(&mut self, file: &SourceFile, raw: &RawTool) {
        let here = origin(file, &raw.name);
        let name = raw.name.value.clone();
        if !valid_tool_name(&name) {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, format!("invalid tool name `{name}`"))
                    .at(here.location())
                    .help("tool names are 1 to 128 of `A-Z a-z 0-9 _ . -`"),
            );
        }
        if let Some(first) = self.tool_names.get(&name) {
            self.diags.push(
                Diagnostic::new(Code::DuplicateTool, format!("duplicate tool `{name}`"))
                    .at(here.location())
                    .label("declared again here")
                    .help(format!(
                        "first declared at {}:{}; tool names are unique across all files",
                        first.file.name,
                        first.line()
                    )),
            );
        } else {
            self.tool_names.insert(name.clone(), here.clone());
        }
        let parameters = raw.parameters.as_ref().map_or_else(
            || serde_json::json!({"type": "object"}),
            |p| p.value.clone(),
        );
        if let Err(e) = jsonschema::draft202012::new(&parameters) {
            let at = raw
                .parameters
                .as_ref()
                .map_or_else(|| here.clone(), |p| origin(file, p));
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidSchema,
                    format!("parameters of `{name}` are not a valid JSON Schema"),
                )
                .at(at.location())
                .label(e.to_string())
                .help("`parameters` is a JSON Schema (draft 2020-12) for the arguments object"),
            );
        }
        let safety = self.safety(file, &raw.safety, &format!("tool `{name}`"));
        let mut reject = Vec::new();
        for r in &raw.reject {
            self.check_id(file, &r.id);
            if let Some((when, when_map, when_origin)) =
                self.compile_rule(file, &r.id, RuleKind::Reject, &r.when)
            {
                let mut set = GlobSetBuilder::new();
                if let Ok(g) = Glob::new(&globset::escape(&name)) {
                    set.add(g);
                }
                reject.push(Arc::new(Rule {
                    id: r.id.value.clone(),
                    kind: RuleKind::Reject,
                    description: None,
                    tool_patterns: vec![(name.clone(), here.clone())],
                    tools: set.build().unwrap_or_else(|_| GlobSet::empty()),
                    when,
                    when_map,
                    when_origin,
                    action: Decision::Reject,
                    reason: Some(r.message.clone()),
                    examples: Vec::new(),
                    origin: origin(file, &r.id),
                }));
            }
        }
        let deferred = raw.deferred.unwrap_or(false);
        self.tools.push(ToolDef {
            name,
            description: raw.description.clone(),
            scope: raw.scope.value,
            safety,
            parameters,
            deferred,
            deferral_eligible: raw.deferral_eligible.unwrap_or(deferred),
            reject,
            origin: here,
        });
    }

    fn env_string(&mut self, file: &SourceFile, v: &Spanned<String>, what: &str) -> EnvString {
        let mut rest = v.value.as_str();
        while let Some(i) = rest.find("${") {
            let after = &rest[i + 2..];
            let ok = after.strip_prefix("env:").and_then(|a| {
                let end = a.find('}')?;
                let name = &a[..end];
                (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                    .then_some(&a[end + 1..])
            });
            match ok {
                Some(r) => rest = r,
                None => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidEnvReference,
                            format!("malformed `${{...}}` in {what}"),
                        )
                        .at(origin(file, v).location())
                        .help("write `${env:NAME}` with NAME made of letters, digits and `_`"),
                    );
                    break;
                }
            }
        }
        EnvString(v.value.clone())
    }

    fn check_literal_secret(
        &mut self,
        file: &SourceFile,
        key: &str,
        v: &Spanned<String>,
        what: &str,
    ) {
        let without_refs = strip_env_refs(&v.value);
        if crate::scrub::Scrubber::builtin().contains_secret(&format!("{key}={without_refs}"))
            || crate::scrub::Scrubber::builtin().contains_secret(&format!("{key}: {without_refs}"))
        {
            self.diags.push(
                Diagnostic::new(
                    Code::LiteralSecret,
                    format!("{what} `{key}` holds a literal credential"),
                )
                .at(origin(file, v).location())
                .label("literal secret")
                .help({
                    let var = key.to_uppercase().replace('-', "_");
                    let scheme = v
                        .value
                        .split_once(' ')
                        .filter(|(s, _)| matches!(s.to_ascii_lowercase().as_str(), "bearer" | "basic" | "token"))
                        .map(|(s, _)| format!("{s} "))
                        .unwrap_or_default();
                    format!("read it from the host environment instead: `{key}: \"{scheme}${{env:{var}}}\"`")
                }),
            );
        }
    }

    fn partial_safety(raw: Option<&RawPartialSafety>, base: &Safety) -> Safety {
        let Some(raw) = raw else {
            return base.clone();
        };
        Safety {
            side_effect: raw
                .side_effect
                .as_ref()
                .map_or(base.side_effect, |s| s.value),
            permission: raw.permission.as_ref().map_or(base.permission, |s| s.value),
            reason: raw
                .reason
                .as_ref()
                .map(|r| r.value.clone())
                .or_else(|| base.reason.clone()),
        }
    }

    fn server(&mut self, file: &SourceFile, raw: &RawServer) {
        let here = origin(file, &raw.name);
        let name = raw.name.value.clone();
        if !valid_server_name(&name) {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, format!("invalid server name `{name}`"))
                    .at(here.location())
                    .help("server names are lowercase: `[a-z0-9][a-z0-9_-]*`"),
            );
        }
        if let Some(first) = self.servers.iter().find(|s| s.name == name) {
            self.diags.push(
                Diagnostic::new(Code::DuplicateTool, format!("duplicate server `{name}`"))
                    .at(here.location())
                    .help(format!(
                        "first declared at {}:{}",
                        first.origin.file.name,
                        first.origin.line()
                    )),
            );
        }
        let transport = raw.transport.value;
        match transport {
            Transport::Stdio => {
                if raw.command.is_none() {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("stdio server `{name}` has no `command`"),
                        )
                        .at(origin(file, &raw.transport).location())
                        .help("a stdio server is a program to start: add `command:` (and `args:`)"),
                    );
                }
                if let Some(u) = &raw.url {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("stdio server `{name}` has a `url`"),
                        )
                        .at(origin(file, u).location())
                        .help("`url` is for `transport: http` or `sse`"),
                    );
                }
            }
            Transport::Http | Transport::Sse => {
                if raw.url.is_none() {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("server `{name}` has no `url`"),
                        )
                        .at(origin(file, &raw.transport).location())
                        .help("an http or sse server is reached at a `url:`"),
                    );
                }
                if let Some(c) = &raw.command {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("server `{name}` has a `command` but is not stdio"),
                        )
                        .at(origin(file, c).location())
                        .help("`command` is for `transport: stdio`"),
                    );
                }
            }
        }
        let mut env = BTreeMap::new();
        for (k, v) in &raw.env {
            self.check_literal_secret(file, k, v, "environment variable");
            env.insert(k.clone(), self.env_string(file, v, "`env`"));
        }
        let mut headers = BTreeMap::new();
        for (k, v) in &raw.headers {
            self.check_literal_secret(file, k, v, "header");
            headers.insert(k.clone(), self.env_string(file, v, "`headers`"));
        }
        let url = raw.url.as_ref().map(|u| self.env_string(file, u, "`url`"));
        let connect_timeout = match &raw.connect_timeout {
            Some(t) => match parse_duration(&t.value) {
                Ok(d) => d,
                Err(e) => {
                    self.diags.push(
                        Diagnostic::new(Code::InvalidValue, e).at(origin(file, t).location()),
                    );
                    self.settings.connect_timeout
                }
            },
            // INVARIANT: settings are read before servers only within one file; a
            // zero duration marks "use settings.connect_timeout" and is resolved in cross_checks.
            None => Duration::ZERO,
        };
        let default_include = [Spanned::new(
            "*".to_string(),
            raw.name.referenced,
            raw.name.defined,
        )];
        let include_src: Vec<&Spanned<String>> = match &raw.include {
            Some(v) => v.iter().collect(),
            None => default_include.iter().collect(),
        };
        let (include, include_written) = name_globset(self, file, include_src);
        let (exclude, _) = name_globset(self, file, raw.exclude.iter());
        let base = Safety {
            side_effect: SideEffect::Network,
            permission: Permission::Prompt,
            reason: None,
        };
        let safety = Self::partial_safety(raw.safety.as_ref(), &base);
        let mut overrides = Vec::new();
        for o in &raw.overrides {
            let (tools, written) = name_globset(self, file, o.tools.iter());
            let s = Self::partial_safety(Some(&o.safety), &safety);
            let at = o
                .tools
                .first()
                .map_or_else(|| here.clone(), |t| origin(file, t));
            overrides.push(Override {
                patterns: written.into_iter().map(|(p, _)| p).collect(),
                tools,
                safety: s,
                origin: at,
            });
        }
        self.servers.push(ServerDef {
            name,
            transport,
            command: raw.command.as_ref().map(|c| c.value.clone()),
            args: raw.args.clone(),
            env,
            url,
            headers,
            connect_timeout,
            include_patterns: include_written.into_iter().map(|(p, _)| p).collect(),
            include,
            exclude,
            safety,
            overrides,
            origin: here,
        });
    }

    fn call(&mut self, file: &SourceFile, raw: &RawCall) -> Call {
        let args = raw
            .args
            .clone()
            .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new()));
        if !args.is_object() {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidCall,
                    format!(
                        "the arguments of a call to `{}` are not a mapping",
                        raw.tool.value
                    ),
                )
                .at(origin(file, &raw.tool).location())
                .help("write `args: {name: value, ...}`"),
            );
        }
        Call {
            tool: raw.tool.value.clone(),
            args,
            session: raw
                .session
                .as_ref()
                .map_or_else(Session::default, Session::from_raw),
        }
    }

    fn examples(&mut self, file: &SourceFile, raw: Option<&RawExamples>) -> Vec<Example> {
        let Some(raw) = raw else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (calls, should_match) in [(&raw.matches, true), (&raw.no_match, false)] {
            for c in calls {
                let call = self.call(file, c);
                out.push(Example {
                    call,
                    should_match,
                    origin: origin(file, &c.tool),
                });
            }
        }
        out
    }

    fn sandbox_rule(&mut self, file: &SourceFile, raw: &RawRule) {
        self.check_id(file, &raw.id);
        let id = raw.id.value.clone();
        let action = match raw.action.value {
            Permission::Allow => {
                self.diags.push(
                    Diagnostic::new(
                        Code::SandboxAllows,
                        format!("sandbox rule `{id}` has action `allow`"),
                    )
                    .at(origin(file, &raw.action).location())
                    .label("sandbox rules may only tighten")
                    .help("use `action: prompt` or `action: deny`; to allow, write a relax rule under `relax:`"),
                );
                Decision::Deny
            }
            p => Decision::from(p),
        };
        if raw
            .reason
            .as_ref()
            .is_none_or(|r| r.value.trim().is_empty())
        {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingReason,
                    format!("sandbox rule `{id}` has no reason"),
                )
                .at(origin(file, &raw.id).location())
                .help("add `reason:`; it is what a person sees when asked or refused"),
            );
        }
        let examples = self.examples(file, raw.examples.as_ref());
        self.push_rule(
            file,
            &raw.id,
            RuleKind::Sandbox,
            raw.tools.as_ref(),
            &raw.when,
            action,
            raw.reason.as_ref().map(|r| r.value.clone()),
            raw.description.clone(),
            examples,
        );
    }

    fn relax_rule(&mut self, file: &SourceFile, raw: &crate::model::RawRelax) {
        self.check_id(file, &raw.id);
        let id = raw.id.value.clone();
        if let Some(to) = &raw.to
            && to.value != Permission::Allow
        {
            self.diags.push(
                Diagnostic::new(
                    Code::RelaxTightens,
                    format!("relax rule `{id}` has `to: {}`", to.value),
                )
                .at(origin(file, to).location())
                .label("relax rules may only move `prompt` to `allow`")
                .help("remove `to:` (it can only be `allow`); to tighten, write a sandbox rule under `rules:`"),
            );
        }
        let examples = self.examples(file, raw.examples.as_ref());
        self.push_rule(
            file,
            &raw.id,
            RuleKind::Relax,
            raw.tools.as_ref(),
            &raw.when,
            Decision::Allow,
            raw.reason.as_ref().map(|r| r.value.clone()),
            raw.description.clone(),
            examples,
        );
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one call per rule kind, named at the call"
    )]
    fn push_rule(
        &mut self,
        file: &SourceFile,
        id: &Spanned<String>,
        kind: RuleKind,
        tools: Option<&Vec<Spanned<String>>>,
        when: &Spanned<String>,
        action: Decision,
        reason: Option<String>,
        description: Option<String>,
        examples: Vec<Example>,
    ) {
        let default_tools = [Spanned::new("*".to_string(), id.referenced, id.defined)];
        let patterns: Vec<&Spanned<String>> = match tools {
            Some(t) => t.iter().collect(),
            None => default_tools.iter().collect(),
        };
        let (set, written) = name_globset(self, file, patterns);
        if let Some((when, when_map, when_origin)) = self.compile_rule(file, id, kind, when) {
            self.rules.push(Arc::new(Rule {
                id: id.value.clone(),
                kind,
                description,
                tool_patterns: written,
                tools: set,
                when,
                when_map,
                when_origin,
                action,
                reason,
                examples,
                origin: origin(file, id),
            }));
        }
    }

    /// Checks that need every file: relax rules against tools, connect timeouts.
    fn cross_checks(&mut self) {
        let default_timeout = self.settings.connect_timeout;
        for s in &mut self.servers {
            if s.connect_timeout.is_zero() {
                s.connect_timeout = default_timeout;
            }
        }
        for rule in &self.rules {
            if rule.kind != RuleKind::Relax {
                continue;
            }
            let matched: Vec<&ToolDef> = self
                .tools
                .iter()
                .filter(|t| rule.tools.is_match(&t.name))
                .collect();
            let denied: Vec<&str> = matched
                .iter()
                .filter(|t| t.safety.permission == Permission::Deny)
                .map(|t| t.name.as_str())
                .collect();
            if !denied.is_empty() {
                self.diags.push(
                    Diagnostic::new(
                        Code::RelaxOnDeny,
                        format!(
                            "relax rule `{}` matches {} whose permission is `deny`",
                            rule.id,
                            backticked(&denied)
                        ),
                    )
                    .at(rule.origin.location())
                    .label("nothing relaxes a deny")
                    .help("narrow the rule's `tools:` so it matches only tools whose permission is `prompt`"),
                );
            } else if !matched.is_empty()
                && matched
                    .iter()
                    .all(|t| t.safety.permission == Permission::Allow)
                && !self.could_match_mcp(&rule.tool_patterns)
            {
                self.diags.push(
                    Diagnostic::new(
                        Code::RelaxNoop,
                        format!(
                            "relax rule `{}` matches only tools that are already `allow`",
                            rule.id
                        ),
                    )
                    .at(rule.origin.location())
                    .label("never changes a decision")
                    .help(
                        "point `tools:` at tools whose permission is `prompt`, or remove the rule",
                    ),
                );
            }
        }
        let mut unknown = Vec::new();
        for rule in &self.rules {
            for (pattern, at) in &rule.tool_patterns {
                let Ok(g) = Glob::new(pattern) else { continue };
                let m = g.compile_matcher();
                if self.tools.iter().any(|t| m.is_match(&t.name))
                    || self.could_match_mcp(std::slice::from_ref(&(pattern.clone(), at.clone())))
                {
                    continue;
                }
                let help = match closest(pattern, self.tools.iter().map(|t| t.name.as_str())) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "`tools:` globs are matched against final tool names (MCP tools are named by `settings.mcp_name_format`)".to_string(),
                };
                unknown.push(
                    Diagnostic::new(
                        Code::UnknownToolPattern,
                        format!(
                            "`{pattern}` in the `tools:` of `{}` matches no tool",
                            rule.id
                        ),
                    )
                    .at(at.location())
                    .help(help),
                );
            }
        }
        self.diags.extend(unknown);
        let mut calls = Vec::new();
        for rule in &self.rules {
            for ex in &rule.examples {
                calls.push((ex.call.tool.clone(), ex.origin.clone()));
            }
        }
        // Tests may name unknown tools on purpose (to test the rejection); examples may not.
        for (tool, at) in calls {
            if self.tools.iter().any(|t| t.name == tool) || self.could_be_mcp_tool(&tool) {
                continue;
            }
            let help = match closest(&tool, self.tools.iter().map(|t| t.name.as_str())) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "name a tool declared in a manifest".to_string(),
            };
            self.diags.push(
                Diagnostic::new(Code::InvalidCall, format!("call to unknown tool `{tool}`"))
                    .at(at.location())
                    .help(help),
            );
        }
    }

    /// The literal name prefix of each server's MCP tools: `mcp__{server}__`.
    fn mcp_prefixes(&self) -> Vec<String> {
        self.servers
            .iter()
            .map(|s| crate::registry::mcp_name_prefix(&self.settings.mcp_name_format, &s.name))
            .collect()
    }

    /// Whether a glob could match some MCP tool name of a declared server.
    fn could_match_mcp(&self, patterns: &[(String, Origin)]) -> bool {
        let prefixes = self.mcp_prefixes();
        patterns.iter().any(|(p, _)| {
            let literal: String = p
                .chars()
                .take_while(|c| !matches!(c, '*' | '?' | '[' | '{'))
                .collect();
            prefixes
                .iter()
                .any(|pre| pre.starts_with(&literal) || literal.starts_with(pre.as_str()))
        })
    }

    fn could_be_mcp_tool(&self, name: &str) -> bool {
        self.mcp_prefixes()
            .iter()
            .any(|p| name.starts_with(p.as_str()))
    }
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
        E::Budget { .. }
        | E::AliasExpansionLimitExceeded { .. }
        | E::AliasReplayLimitExceeded { .. }
        | E::AliasReplayStackDepthExceeded { .. }
        | E::AliasReplayCounterOverflow { .. } => (
            Code::YamlBudget,
            "the file exceeds the YAML alias and node budget".to_string(),
            format!(
                "at most {MAX_ALIASES} aliases and {MAX_NODES} nodes per file; an alias expansion bomb is refused"
            ),
        ),
        other => {
            let text = other.to_string();
            let first = text.lines().next().unwrap_or("invalid YAML").to_string();
            let first = first
                .split(" at line ")
                .next()
                .unwrap_or(&first)
                .to_string();
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
