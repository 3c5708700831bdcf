//! Checked, compiled policy: what the loader produces and the registry uses.
//!
//! Everything here is validated and compiled: CEL programs, glob sets,
//! JSON-Schema parameters. Nothing is parsed per call.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::call::Call;
use crate::cel::{CelEnv, Expression, PatternCache};
use crate::diagnostic::{Location, SourceFile, Span};
use crate::effects::catalog::Spec;
use crate::loader::scalar::ScalarMap;
use crate::model::{Decision, LogArgs, OnPrompt, Permission, Scope, SideEffect, Transport};

/// Where something was written.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The file.
    pub file: SourceFile,
    /// The byte range of the item's key node (a name or id).
    pub span: Span,
}

impl Origin {
    /// The 1-based line.
    #[must_use]
    pub fn line(&self) -> usize {
        self.file.line(self.span.offset)
    }

    /// As a diagnostic location.
    #[must_use]
    pub fn location(&self) -> Location {
        Location {
            file: self.file.clone(),
            span: self.span,
        }
    }
}

/// Where a shadow policy is read from (`settings.shadow`), its paths as
/// written (`~/` not expanded yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shadow {
    /// Policy and manifest files or folders.
    Paths(Vec<String>),
    /// A signed bundle: a file or an `https://` URL, the key, a CA.
    Bundle {
        /// The bundle file or URL.
        location: String,
        /// A `.pub` file or the key itself.
        key: String,
        /// A PEM file of CA certificates, for a URL.
        ca: Option<String>,
    },
}

/// Engine-wide settings with their defaults applied.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Deferral starts at this many deferral-eligible tools; 0 disables it.
    pub defer_threshold: u32,
    /// How MCP tools are named.
    pub mcp_name_format: String,
    /// Default connect timeout for MCP servers.
    pub connect_timeout: Duration,
    /// What a runtime without a person does with `prompt`.
    pub on_prompt: OnPrompt,
    /// Extra secret regexes.
    pub secret_patterns: Vec<String>,
    /// Environment variables whose values are scrubbed.
    pub secret_env: Vec<String>,
    /// What `~` and `$HOME` mean in effects and lists.
    pub home: String,
    /// Whether path globs ignore case (`settings.paths.case_insensitive`).
    pub case_insensitive: bool,
    /// `settings.paths.credentials` as written (globs or `lists.NAME`): the
    /// files a walk on the host turns into effects.
    pub credentials: Vec<String>,
    /// How long one call's walks on the host may take (`settings.paths.walk_time`).
    pub walk_time: Duration,
    /// What a hook answers for a tool that no manifest names.
    pub unknown_tool: Permission,
    /// The decision log as written (`~/` not expanded yet); empty turns it off.
    pub log_path: String,
    /// How the decision log records arguments.
    pub log_args: LogArgs,
    /// Whether decision log lines are hash-chained (`settings.log.chain`).
    pub log_chain: bool,
    /// Where decision records also go over syslog (`settings.log.syslog`).
    pub log_syslog: Option<crate::log::syslog::Target>,
    /// Where decision records also go as OTLP logs (`settings.log.otlp`).
    pub log_otlp: Option<crate::log::otlp::Target>,
    /// The decision floor for an MCP tool whose definition is not the pinned one.
    pub pinning: Permission,
    /// `settings.shadow`: a policy decided beside this one and only logged.
    pub shadow: Option<Shadow>,
    /// `settings.enforce`: the sandbox a confined call runs in.
    pub enforce: Enforce,
}

/// `settings.enforce` as written: path entries are globs or `lists.NAME`,
/// expanded against the lists when an envelope is computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforce {
    /// Hooks rewrite shell calls to run through `zero-policy run`.
    pub shell: bool,
    /// What `run` does where nothing can confine a call.
    pub unconfined: crate::model::Unconfined,
    /// Where a confined call may read.
    pub reads: Vec<String>,
    /// What it may never read.
    pub deny_reads: Vec<String>,
    /// How its writes are bounded.
    pub writes: crate::model::WriteScope,
    /// Always writable besides.
    pub write_also: Vec<String>,
    /// What it may never write.
    pub deny_writes: Vec<String>,
    /// Where programs may run from.
    pub exec: Vec<String>,
    /// Environment variables it does not get (name globs, case ignored).
    pub deny_env: Vec<String>,
    /// Its network.
    pub network: crate::model::NetworkScope,
    /// Whether it may open Unix sockets by path.
    pub unix_sockets: bool,
    /// Most processes at once.
    pub processes: Option<u64>,
    /// Largest file, in bytes.
    pub file_size: Option<u64>,
    /// Most CPU seconds.
    pub cpu_seconds: Option<u64>,
    /// Deny entries lifted per program.
    pub programs: std::collections::BTreeMap<String, EnforceProgram>,
}

/// `settings.enforce.programs.NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnforceProgram {
    /// `deny_reads` entries that do not apply to it.
    pub reads: Vec<String>,
    /// `deny_writes` entries that do not apply to it.
    pub writes: Vec<String>,
    /// Its network, when it is the call's only program.
    pub network: Option<crate::model::NetworkScope>,
}

/// `settings.enforce.deny_env` when not set: the names tokens, keys, secrets
/// and passwords go by (`GITHUB_TOKEN`, `OPENAI_API_KEY`,
/// `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `DATABASE_URL`, `SENTRY_DSN`), the
/// way Codex's `shell_environment_policy` leaves out `*KEY*`, `*SECRET*` and
/// `*TOKEN*` by default.
pub const DEFAULT_DENY_ENV: &[&str] = &[
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_KEY",
    "*_KEY_*",
    "*APIKEY*",
    "*API_KEY*",
    "*ACCESS_KEY*",
    "*PRIVATE_KEY*",
    "*CREDENTIAL*",
    "*_AUTH",
    "*DATABASE_URL*",
    "*_DSN",
];

impl Default for Enforce {
    /// Without `settings.enforce`: a confined call reads the system, the
    /// workspace and temp folders, writes what it is predicted to write, runs
    /// programs from the system and has no network.
    fn default() -> Self {
        let v = |xs: &[&str]| xs.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
        Enforce {
            shell: false,
            unconfined: crate::model::Unconfined::Refuse,
            reads: v(&[
                "/usr/**",
                "/bin/**",
                "/sbin/**",
                "/lib/**",
                "/lib32/**",
                "/lib64/**",
                "/etc/**",
                "/opt/**",
                "/proc/**",
                "/sys/**",
                "/tmp/**",
                "/var/tmp/**",
                "{workspace}/**",
            ]),
            deny_reads: Vec::new(),
            writes: crate::model::WriteScope::Predicted,
            write_also: v(&["/tmp/**", "/var/tmp/**"]),
            deny_writes: Vec::new(),
            exec: v(&[
                "/usr/**",
                "/bin/**",
                "/sbin/**",
                "/lib/**",
                "/lib32/**",
                "/lib64/**",
                "/opt/**",
            ]),
            deny_env: v(DEFAULT_DENY_ENV),
            network: crate::model::NetworkScope::Predicted,
            unix_sockets: false,
            processes: Some(1024),
            file_size: None,
            cpu_seconds: None,
            programs: std::collections::BTreeMap::new(),
        }
    }
}

/// The host's home folder: `$HOME`, else `/`.
#[must_use]
pub fn host_home() -> String {
    std::env::var("HOME")
        .ok()
        .filter(|h| h.starts_with('/'))
        .map_or_else(|| "/".to_string(), |h| crate::effects::paths::clean(&h))
}

/// Whether the host's file systems usually fold case (macOS, Windows).
#[must_use]
pub fn host_folds_case() -> bool {
    cfg!(any(target_os = "macos", target_os = "windows"))
}

/// Where the decision log goes unless `settings.log.path` says otherwise.
pub const DEFAULT_LOG_PATH: &str = "~/.local/state/zero-policy/decisions.jsonl";

impl Default for Settings {
    fn default() -> Self {
        Settings {
            defer_threshold: 3,
            mcp_name_format: "mcp__{server}__{tool}".into(),
            connect_timeout: Duration::from_secs(8),
            on_prompt: OnPrompt::Deny,
            secret_patterns: Vec::new(),
            secret_env: Vec::new(),
            home: host_home(),
            case_insensitive: host_folds_case(),
            credentials: Vec::new(),
            walk_time: Duration::from_millis(50),
            unknown_tool: Permission::Prompt,
            log_path: DEFAULT_LOG_PATH.into(),
            log_args: LogArgs::Scrubbed,
            log_chain: false,
            log_syslog: None,
            log_otlp: None,
            pinning: Permission::Prompt,
            enforce: Enforce::default(),
            shadow: None,
        }
    }
}

/// Declared safety.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Safety {
    /// What the tool does.
    pub side_effect: SideEffect,
    /// The static permission.
    pub permission: Permission,
    /// Why.
    pub reason: Option<String>,
}

/// The three kinds of rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// Refuses a call before permissions (declared on a tool).
    Reject,
    /// Moves `prompt` to `allow`.
    Relax,
    /// Tightens to `prompt` or `deny`.
    Sandbox,
}

impl RuleKind {
    /// The name used in output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Reject => "reject",
            RuleKind::Relax => "relax",
            RuleKind::Sandbox => "sandbox",
        }
    }
}

/// An example call of a rule.
#[derive(Debug, Clone)]
pub struct Example {
    /// The call.
    pub call: Call,
    /// Whether the rule must match it.
    pub should_match: bool,
    /// Where it was written.
    pub origin: Origin,
}

/// A compiled rule of any kind.
#[derive(Debug)]
pub struct Rule {
    /// The id, unique across all rules.
    pub id: String,
    /// Which kind.
    pub kind: RuleKind,
    /// What it is for.
    pub description: Option<String>,
    /// The `tools:` globs as written (reject rules: the tool's own name).
    pub tool_patterns: Vec<(String, Origin)>,
    /// The same globs, compiled.
    pub tools: NameGlobs,
    /// The condition.
    pub when: Expression,
    /// Where `when` was written.
    pub when_origin: Origin,
    /// The decision when it matches: `prompt`/`deny` (sandbox), `allow` (relax), `reject`.
    pub action: Decision,
    /// The reason (sandbox, relax) or message (reject).
    pub reason: Option<String>,
    /// Example calls.
    pub examples: Vec<Example>,
    /// Where the id was written.
    pub origin: Origin,
}

impl Rule {
    /// The file location of a byte range inside `when`.
    #[must_use]
    pub fn when_location(&self, start: usize, end: usize) -> Location {
        // Mapped when asked (a report), not for every rule that loads.
        let at = &self.when_origin.span;
        let map = ScalarMap::new(
            &self.when_origin.file.text,
            at.offset,
            at.offset + at.len,
            &self.when.source,
        );
        let (a, b) = map.range(start, end);
        Location {
            file: self.when_origin.file.clone(),
            span: Span {
                offset: a,
                len: b - a,
            },
        }
    }
}

/// A tool declared in a manifest.
#[derive(Debug)]
pub struct ToolDef {
    /// The final name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The scope.
    pub scope: Scope,
    /// Declared safety.
    pub safety: Safety,
    /// JSON Schema for the arguments.
    pub parameters: std::sync::Arc<serde_json::Value>,
    /// Left out of the advertised list when deferral is on.
    pub deferred: bool,
    /// Counts towards the deferral threshold.
    pub deferral_eligible: bool,
    /// Reject rules, in written order.
    pub reject: Vec<Arc<Rule>>,
    /// What its calls do.
    pub effects: Option<Arc<ToolEffects>>,
    /// The agent whose tool it is; `None` for tools every agent shares.
    pub agent: Option<String>,
    /// Where the name was written.
    pub origin: Origin,
}

/// A tool's effect expressions, compiled; each over `args` and `session`.
#[derive(Debug, Default)]
pub struct ToolEffects {
    /// A string: the shell script run.
    pub shell: Option<Expression>,
    /// A string: the working folder.
    pub cwd: Option<Expression>,
    /// A list of strings: paths read.
    pub reads: Option<Expression>,
    /// A list of strings: paths listed (names, sizes, times).
    pub lists: Option<Expression>,
    /// A list of strings: paths written.
    pub writes: Option<Expression>,
    /// A list of strings: URLs fetched.
    pub fetches: Option<Expression>,
    /// A string: a patch applied.
    pub patch: Option<Expression>,
    /// A bool: it runs code no rule can see.
    pub runs_code: Option<Expression>,
}

impl ToolEffects {
    /// Whether a call can change files: it runs a script, writes or patches.
    #[must_use]
    pub fn can_write(&self) -> bool {
        self.shell.is_some() || self.writes.is_some() || self.patch.is_some()
    }
}

/// Per-tool safety for an MCP server's tools.
#[derive(Debug, Clone)]
pub struct Override {
    /// Globs over the server's own tool names, as written.
    pub patterns: Vec<String>,
    /// The same, compiled.
    pub tools: NameGlobs,
    /// The safety.
    pub safety: Safety,
    /// What the matching tools' calls do.
    pub effects: Option<Arc<ToolEffects>>,
    /// Where the entry was written.
    pub origin: Origin,
}

/// A value that may name a host environment variable: `${env:NAME}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvString(pub String);

impl EnvString {
    /// Replaces each `${env:NAME}` with the variable's value from `lookup`.
    ///
    /// # Errors
    /// A variable that is not set.
    pub fn resolve(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = self.0.as_str();
        while let Some(i) = rest.find("${env:") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 6..];
            let Some(end) = after.find('}') else {
                return Err("unterminated `${env:`".into());
            };
            let name = &after[..end];
            match lookup(name) {
                Some(v) => out.push_str(&v),
                None => return Err(format!("environment variable `{name}` is not set")),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// A checked MCP server manifest.
#[derive(Debug, Clone)]
pub struct ServerDef {
    /// The name.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// The program (stdio).
    pub command: Option<String>,
    /// Its arguments (stdio).
    pub args: Vec<String>,
    /// Its environment.
    pub env: BTreeMap<String, EnvString>,
    /// The endpoint (http, sse).
    pub url: Option<EnvString>,
    /// Request headers (http, sse).
    pub headers: BTreeMap<String, EnvString>,
    /// How long to connect and list.
    pub connect_timeout: Duration,
    /// Include globs as written.
    pub include_patterns: Vec<String>,
    /// Include globs.
    pub include: NameGlobs,
    /// Exclude globs.
    pub exclude: NameGlobs,
    /// Safety imposed on every tool.
    pub safety: Safety,
    /// Per-tool safety; the first match wins.
    pub overrides: Vec<Override>,
    /// The envelope a stdio server runs confined to (`servers[].sandbox`).
    pub sandbox: Option<crate::sandbox::Envelope>,
    /// The effects of a `resources/read` through the gateway when no override
    /// gives any: a read of a `file:` URI's path, a fetch of an http(s) URI.
    pub resource_effects: Option<Arc<ToolEffects>>,
    /// What it may ask of the client through the gateway (`servers[].allow`).
    pub allow: Vec<crate::model::ServerAllow>,
    /// Its own `mcp_name_format` and where it was written; `None` follows
    /// `settings.mcp_name_format`.
    pub mcp_name_format: Option<(String, Origin)>,
    /// How the gateway authorizes itself to it (`servers[].auth`); `None`
    /// sends only `headers`.
    pub auth: Option<ServerAuth>,
    /// Where the name was written.
    pub origin: Origin,
}

/// `servers[].auth`, checked: the gateway as an OAuth client of an http server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAuth {
    /// Which grant obtains tokens.
    pub grant: crate::model::AuthGrant,
    /// A client registered in advance.
    pub client_id: Option<EnvString>,
    /// Its secret (always `${env:NAME}`).
    pub client_secret: Option<EnvString>,
    /// The https URL of this client's metadata document.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; empty: the server's.
    pub scopes: Vec<String>,
    /// The loopback port of the redirect; `None`: any free port.
    pub redirect_port: Option<u16>,
    /// The program (and arguments) that opens the authorization page.
    pub open: Vec<String>,
    /// Where registration and tokens are kept between runs, `~/` expanded.
    pub token_cache: Option<std::path::PathBuf>,
}

impl ServerDef {
    /// How this server's tools are named: its own format, else `default`
    /// (`settings.mcp_name_format`).
    #[must_use]
    pub fn name_format<'a>(&'a self, default: &'a str) -> &'a str {
        self.mcp_name_format
            .as_ref()
            .map_or(default, |(f, _)| f.as_str())
    }

    /// The safety, its origin (`file:line` of the override) and the effects the
    /// host imposes on the server's tool `remote`: the first matching override, else the server's.
    #[must_use]
    pub fn host_tool(&self, remote: &str) -> (Safety, Option<String>, Option<Arc<ToolEffects>>) {
        let (safety, from, effects) = match self.overrides.iter().find(|o| o.tools.is_match(remote))
        {
            Some(o) => (
                o.safety.clone(),
                Some(format!("{}:{}", o.origin.file.name, o.origin.line())),
                o.effects.clone(),
            ),
            None => (self.safety.clone(), None, None),
        };
        let effects = match effects {
            None if remote == crate::names::RESOURCE_READ => self.resource_effects.clone(),
            e => e,
        };
        let safety = Safety {
            reason: Some(safety.reason.clone().unwrap_or_else(|| {
                format!(
                    "MCP tool `{}/{remote}` runs through the configured `{}` server",
                    self.name, self.name
                )
            })),
            ..safety
        };
        (safety, from, effects)
    }
}

/// A policy test.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// Its name.
    pub name: String,
    /// The call.
    pub call: Call,
    /// The expected decision.
    pub decision: Decision,
    /// The exact rule ids expected to match, if given.
    pub matched: Option<Vec<String>>,
    /// Where the name was written.
    pub origin: Origin,
}

/// Everything loaded, checked and compiled.
#[derive(Debug)]
pub struct Policy {
    /// The files read, in path order.
    pub files: Vec<SourceFile>,
    /// Settings.
    pub settings: Settings,
    /// Manifest tools.
    pub tools: Vec<ToolDef>,
    /// MCP servers.
    pub servers: Vec<ServerDef>,
    /// Sandbox and relax rules (reject rules live on their tools).
    pub rules: Vec<Arc<Rule>>,
    /// Policy tests.
    pub tests: Vec<TestCase>,
    /// Literal globs and regexes compiled at load.
    pub patterns: Arc<PatternCache>,
    /// The CEL environment the rules were compiled with.
    pub cel: CelEnv,
    /// The named lists (`lists.NAME`), extensions resolved and `~/` expanded.
    pub lists: std::sync::Arc<BTreeMap<String, Vec<String>>>,
    /// Additions to the command catalog, with their aliases.
    pub commands: Vec<(Arc<Spec>, Vec<String>)>,
    /// Where the shipped catalog's specifications come from (the loader's
    /// embedded catalog): what the additions are laid over.
    pub catalog: crate::effects::catalog::Fallback,
}

impl Policy {
    /// Every rule: sandbox, relax, and the reject rules of every tool.
    pub fn all_rules(&self) -> impl Iterator<Item = &Arc<Rule>> {
        self.rules
            .iter()
            .chain(self.tools.iter().flat_map(|t| t.reject.iter()))
    }
}

/// Globs over tool names (`*` matches any characters, as globset's `Glob`
/// with its defaults). A plain name is compared and a pattern whose only
/// syntax is `*` and `?` is matched by hand; any other pattern is compiled
/// into a matcher the first time it is asked, so loading many rules builds
/// no automata.
#[derive(Debug, Clone, Default)]
pub struct NameGlobs {
    globs: Vec<NameGlob>,
}

#[derive(Debug, Clone)]
enum NameGlob {
    Exact(String),
    /// A pattern whose only syntax is `*` and `?`.
    Wildcard(Vec<u8>),
    Glob(globset::Glob, std::sync::OnceLock<globset::GlobMatcher>),
}

impl NameGlobs {
    /// Parses the patterns.
    ///
    /// # Errors
    /// The first pattern that is not a valid glob, with globset's error.
    pub fn new<'a>(
        patterns: impl IntoIterator<Item = &'a str>,
    ) -> Result<NameGlobs, (String, globset::Error)> {
        let mut globs = Vec::new();
        for p in patterns {
            globs.push(NameGlob::new(p).map_err(|e| (p.to_string(), e))?);
        }
        Ok(NameGlobs { globs })
    }

    /// Adds one pattern (already parsed by the caller's own check).
    ///
    /// # Errors
    /// The pattern is not a valid glob.
    pub fn push(&mut self, pattern: &str) -> Result<(), globset::Error> {
        self.globs.push(NameGlob::new(pattern)?);
        Ok(())
    }

    /// Only the one literal name.
    #[must_use]
    pub fn exact(name: &str) -> NameGlobs {
        NameGlobs {
            globs: vec![NameGlob::Exact(name.to_string())],
        }
    }

    /// Whether every pattern is a literal name (no glob syntax).
    #[must_use]
    pub fn is_literal(&self) -> bool {
        self.globs.iter().all(|g| matches!(g, NameGlob::Exact(_)))
    }

    /// Whether some pattern matches the name.
    #[must_use]
    pub fn is_match(&self, name: &str) -> bool {
        self.globs.iter().any(|g| g.is_match(name))
    }

    /// Whether there are no patterns.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }
}

impl NameGlob {
    fn new(p: &str) -> Result<NameGlob, globset::Error> {
        let special = |c: char| matches!(c, '[' | ']' | '{' | '}' | '\\');
        // Without `[`, `]`, `{`, `}`, `\` or `**` globset has nothing to
        // reject (classes, alternates, escapes, misplaced `**`), so only the
        // other patterns are parsed (`tests/properties.rs` checks both).
        Ok(if p.contains(special) || p.contains("**") {
            NameGlob::Glob(globset::Glob::new(p)?, std::sync::OnceLock::new())
        } else if p.contains(['*', '?']) {
            NameGlob::Wildcard(p.as_bytes().to_vec())
        } else {
            NameGlob::Exact(p.to_string())
        })
    }

    fn is_match(&self, name: &str) -> bool {
        match self {
            NameGlob::Exact(n) => n == name,
            NameGlob::Wildcard(w) => wildcard_match(w, name.as_bytes()),
            NameGlob::Glob(g, m) => m.get_or_init(|| g.compile_matcher()).is_match(name),
        }
    }
}

/// globset's `*` (any bytes) and `?` (one byte) over a name, with one
/// backtrack point: the last `*` seen.
fn wildcard_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod name_glob_tests {
    #![expect(clippy::unwrap_used, reason = "tests")]
    use super::NameGlobs;
    use proptest::prelude::*;

    fn globset(p: &str) -> globset::GlobMatcher {
        globset::Glob::new(p).unwrap().compile_matcher()
    }

    #[test]
    fn plain_names_and_stars() {
        let g = NameGlobs::new(["t*_g5", "exact", "mcp__*", "*"]).unwrap();
        assert!(g.is_match("t17_g5") && g.is_match("exact") && g.is_match("anything"));
        let g = NameGlobs::new(["t*_g5", "a*b*c"]).unwrap();
        assert!(g.is_match("t_g5") && !g.is_match("t17_g50") && !g.is_match("x_g5"));
        assert!(g.is_match("abc") && g.is_match("a-b-c") && !g.is_match("acb"));
        // `ab*ba` needs four characters, however the pieces overlap.
        let g = NameGlobs::new(["ab*ba"]).unwrap();
        assert!(!g.is_match("aba") && g.is_match("abba"));
        // Other syntax is globset's.
        let g = NameGlobs::new(["read_{file,dir}", "t?", "x[0-9]"]).unwrap();
        assert!(g.is_match("read_dir") && g.is_match("t1") && g.is_match("x7"));
        assert!(!g.is_match("read_x") && !g.is_match("t12") && !g.is_match("xa"));
        assert!(NameGlobs::new(["a{b"]).is_err());
        assert!(!NameGlobs::default().is_match(""));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn agrees_with_globset(
            p in "[ab_*?é]{0,7}",
            name in "[ab_/é\n]{0,8}",
        ) {
            let ours = NameGlobs::new([p.as_str()]).unwrap();
            prop_assert_eq!(ours.is_match(&name), globset(&p).is_match(&name), "{:?} vs {:?}", p, name);
        }
    }
}
