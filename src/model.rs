//! The document format: what a security team writes in YAML.
//!
//! These are the *raw* types, deserialized with source spans and nothing
//! checked beyond YAML and serde. [`crate::loader`] turns them into checked,
//! compiled types while collecting every diagnostic. The JSON Schema in
//! `schemas/zero-policy.schema.json` is generated from these types.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A value with the place in its file where it was written.
///
/// Read from YAML, the place is the one serde-saphyr gives (the use site of an
/// alias). Every document type also writes itself, places included, as the
/// JSON of the document cache ([`crate::loader::cache`]), and reads that
/// JSON back: a value is then `{"value": …, "at": [line, column, offset, len]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub referenced: Place,
}

impl<T> Spanned<T> {
    /// A value at a place.
    #[must_use]
    pub const fn new(value: T, referenced: Place) -> Self {
        Spanned { value, referenced }
    }
}

/// A place in a YAML file: 1-based line and column (in characters), and the
/// byte offset and length where the reader knew them (`len` counts
/// characters when `offset` is unknown). Line 0 is a place not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place {
    /// The 1-based line; 0 when not known.
    pub line: u32,
    /// The 1-based column, in characters.
    pub column: u32,
    /// The byte offset in the file, when known.
    pub offset: Option<usize>,
    /// The length: in bytes with `offset`, else in characters.
    pub len: usize,
}

impl From<serde_saphyr::Location> for Place {
    fn from(loc: serde_saphyr::Location) -> Place {
        let span = loc.span();
        let clamp = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        let offset = span.byte_offset().map(clamp);
        Place {
            line: u32::try_from(loc.line()).unwrap_or(u32::MAX),
            column: u32::try_from(loc.column()).unwrap_or(u32::MAX),
            offset,
            len: match (offset, span.byte_len()) {
                (Some(_), Some(len)) => clamp(len),
                _ => clamp(span.len()),
            },
        }
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let p = self.referenced;
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("value", &self.value)?;
        map.serialize_entry("at", &(p.line, p.column, p.offset, p.len))?;
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use std::marker::PhantomData;

        struct Outer<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Outer<T> {
            type Value = Spanned<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value")
            }
            fn visit_newtype_struct<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Spanned<T>, D::Error> {
                d.deserialize_any(Fields(PhantomData))
            }
        }

        // serde-saphyr answers the `__yaml_spanned` newtype with the map
        // `{<marker>: true, value, referenced, defined}`; the cache's JSON is
        // `{value, at}`.
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Fields<T> {
            type Value = Spanned<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value with its place")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Spanned<T>, A::Error> {
                let mut value = None;
                let mut place = None;
                while let Some(key) = a.next_key::<Field>()? {
                    match key {
                        Field::Value => value = Some(a.next_value::<T>()?),
                        Field::Referenced => {
                            place = Some(Place::from(a.next_value::<serde_saphyr::Location>()?));
                        }
                        Field::Defined => {
                            a.next_value::<serde_saphyr::Location>()?;
                        }
                        Field::At => {
                            let (line, column, offset, len) = a.next_value()?;
                            place = Some(Place {
                                line,
                                column,
                                offset,
                                len,
                            });
                        }
                        Field::Other => {
                            a.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                let value = value.ok_or_else(|| serde::de::Error::missing_field("value"))?;
                Ok(Spanned::new(value, place.unwrap_or_default()))
            }
        }

        /// A key of either map, told without allocating.
        enum Field {
            Value,
            Referenced,
            Defined,
            At,
            Other,
        }
        impl<'de> Deserialize<'de> for Field {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = Field;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a field name")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Field, E> {
                        Ok(match v {
                            "value" => Field::Value,
                            "referenced" => Field::Referenced,
                            "defined" => Field::Defined,
                            "at" => Field::At,
                            _ => Field::Other,
                        })
                    }
                }
                d.deserialize_identifier(V)
            }
        }

        d.deserialize_newtype_struct("__yaml_spanned", Outer(PhantomData))
    }
}

/// A permission, ordered from the most permissive to the strictest.
///
/// `Allow < Prompt < Deny`: the sandbox takes the `max` of every applicable
/// permission, so the strictest wins.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// The call runs without asking.
    Allow,
    /// A person must approve the call.
    Prompt,
    /// The call never runs.
    Deny,
}

impl Permission {
    /// The kebab-case name used in files and output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Prompt => "prompt",
            Permission::Deny => "deny",
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The decision for one call, ordered from the most permissive to the strictest.
///
/// `Reject` is the strictest: the call was refused before any permission was
/// considered (unknown tool, scope not granted, bad arguments, a reject rule).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The call may run.
    Allow,
    /// The call may run once a person approves it.
    Prompt,
    /// The call must not run.
    Deny,
    /// The call was refused before permissions were considered.
    Reject,
}

impl Decision {
    /// The name used in files and output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Prompt => "prompt",
            Decision::Deny => "deny",
            Decision::Reject => "reject",
        }
    }
}

impl From<Permission> for Decision {
    fn from(p: Permission) -> Self {
        match p {
            Permission::Allow => Decision::Allow,
            Permission::Prompt => Decision::Prompt,
            Permission::Deny => Decision::Deny,
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The broad kind of access a tool needs; a session grants a set of scopes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Reads the workspace and nothing else.
    ReadOnly,
    /// Changes files.
    Write,
    /// Runs commands.
    Shell,
    /// Reaches the network.
    Network,
}

impl Scope {
    /// Every scope, in order.
    pub const ALL: [Scope; 4] = [Scope::ReadOnly, Scope::Write, Scope::Shell, Scope::Network];

    /// The name used in files and output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ReadOnly => "read_only",
            Scope::Write => "write",
            Scope::Shell => "shell",
            Scope::Network => "network",
        }
    }

    /// Parses a scope name.
    #[must_use]
    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What running a tool does to the world, as declared by the host.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SideEffect {
    /// No effect outside the agent.
    None,
    /// Reads files or state.
    Read,
    /// Writes files.
    Write,
    /// Runs shell commands.
    Shell,
    /// Reaches the network.
    Network,
    /// Controls local processes or agents.
    LocalControl,
    /// Drives a local browser.
    LocalBrowser,
    /// Drives the local desktop.
    LocalDesktop,
    /// Drives a local terminal.
    LocalTerminal,
    /// Touches files outside the workspace.
    OutOfWorkspace,
}

impl SideEffect {
    /// The name used in files and output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffect::None => "none",
            SideEffect::Read => "read",
            SideEffect::Write => "write",
            SideEffect::Shell => "shell",
            SideEffect::Network => "network",
            SideEffect::LocalControl => "local_control",
            SideEffect::LocalBrowser => "local_browser",
            SideEffect::LocalDesktop => "local_desktop",
            SideEffect::LocalTerminal => "local_terminal",
            SideEffect::OutOfWorkspace => "out_of_workspace",
        }
    }
}

impl SideEffect {
    /// The scope a tool with this side effect needs, when nothing says otherwise
    /// (MCP tools and tools defined in code).
    #[must_use]
    pub fn default_scope(self) -> Scope {
        match self {
            SideEffect::None | SideEffect::Read => Scope::ReadOnly,
            SideEffect::Write | SideEffect::OutOfWorkspace => Scope::Write,
            SideEffect::Network => Scope::Network,
            SideEffect::Shell
            | SideEffect::LocalControl
            | SideEffect::LocalBrowser
            | SideEffect::LocalDesktop
            | SideEffect::LocalTerminal => Scope::Shell,
        }
    }
}

impl fmt::Display for SideEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an MCP server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// The legacy HTTP + server-sent events transport.
    Sse,
}

/// What a runtime without a person does with a `prompt` decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnPrompt {
    /// Treat `prompt` as `deny`.
    #[default]
    Deny,
    /// Ask the client (the agent's user interface) to ask a person.
    Ask,
}

/// One YAML file: any mix of settings, tools, servers, rules and tests.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "zero-policy document")]
pub struct Document {
    /// The format version; only `1` exists.
    #[schemars(with = "u32", range(min = 1, max = 1))]
    pub version: Spanned<u32>,
    /// The agent whose built-in tools this file describes (`claude-code`, `codex`, …);
    /// its tools are seen only by calls made for that agent.
    #[schemars(with = "Option<String>")]
    pub agent: Option<Spanned<String>>,
    /// Settings; each key may be set in one file only.
    #[serde(default)]
    pub settings: Option<RawSettings>,
    /// Tool manifests.
    #[serde(default)]
    pub tools: Vec<RawTool>,
    /// MCP server manifests.
    #[serde(default)]
    pub servers: Vec<RawServer>,
    /// Sandbox rules: they may only tighten (`prompt` or `deny`).
    #[serde(default)]
    pub rules: Vec<RawRule>,
    /// Relax rules: they may only move `prompt` to `allow`.
    #[serde(default)]
    pub relax: Vec<RawRelax>,
    /// Policy tests, run by `zero-policy test`.
    #[serde(default)]
    pub tests: Vec<RawTest>,
    /// Named lists shared by every rule as `lists.NAME`; names are unique across files.
    #[serde(default)]
    pub lists: BTreeMap<String, RawList>,
    /// Additions to the command catalog (see `docs/catalog.md`).
    #[serde(default)]
    pub commands: Vec<RawCommand>,
}

/// Engine-wide settings.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSettings {
    /// Deferral starts when at least this many visible tools are deferral-eligible; 0 disables it.
    #[schemars(with = "Option<u32>")]
    pub defer_threshold: Option<Spanned<u32>>,
    /// How an MCP tool is named: `{server}` and `{tool}` are replaced.
    #[schemars(with = "Option<String>")]
    pub mcp_name_format: Option<Spanned<String>>,
    /// How long a server may take to connect and list its tools (`8s`, `500ms`, `1m`).
    #[schemars(with = "Option<String>")]
    pub connect_timeout: Option<Spanned<String>>,
    /// What a runtime without a person does with `prompt`.
    #[schemars(with = "Option<OnPrompt>")]
    pub on_prompt: Option<Spanned<OnPrompt>>,
    /// Extra secret detectors for the scrubber.
    pub secrets: Option<RawSecrets>,
    /// How paths in effects and lists are read.
    pub paths: Option<RawPaths>,
    /// The decision log that `hook` appends to.
    pub log: Option<RawLog>,
    /// What agent hooks answer.
    pub hooks: Option<RawHooks>,
    /// The MCP gateway (`zero-policy serve`).
    pub gateway: Option<RawGateway>,
    /// Enforcement: the kernel sandbox an allowed call runs in (`zero-policy run`, section 11).
    pub enforce: Option<RawEnforce>,
    /// A second policy that decides every call beside the one in force and
    /// is only logged (the decision log's `shadow`), never obeyed.
    pub shadow: Option<RawShadow>,
}

/// `settings.shadow`: the policy a team means to roll out, decided beside the
/// one in force. Give `paths` (a whole policy: policies and manifests, as
/// `hook PATH…` reads them), or `bundle` with `key` (as `--bundle`/`--key`).
/// A shadow policy that cannot be read or does not load is noted in the log
/// and by `doctor`, and the policy in force decides alone.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawShadow {
    /// Policy and manifest files or folders: absolute, or starting with `~/`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub paths: Option<Vec<Spanned<String>>>,
    /// A signed bundle: an absolute file path (or `~/…`) or an `https://` URL.
    #[schemars(with = "Option<String>")]
    pub bundle: Option<Spanned<String>>,
    /// With `bundle`: the minisign public key, a `.pub` file (absolute or
    /// `~/…`) or the key itself (`RW…`).
    #[schemars(with = "Option<String>")]
    pub key: Option<Spanned<String>>,
    /// With an `https://` bundle: a PEM file of CA certificates to trust
    /// besides the system's; absolute or starting `~/`.
    #[schemars(with = "Option<String>")]
    pub ca: Option<Spanned<String>>,
}

/// `settings.enforce`: what a confined call may touch. Each entry of a path
/// list is a glob over absolute paths (`~/` is the home folder, `{workspace}`
/// the session's workspace) or `lists.NAME`, which stands for every entry of
/// that list.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEnforce {
    /// Hooks rewrite allowed and asked shell calls to run through `zero-policy run`.
    #[schemars(with = "Option<bool>")]
    pub shell: Option<Spanned<bool>>,
    /// Where nothing can confine a call: `refuse` (the default: exit 125) or `run` it unconfined.
    #[schemars(with = "Option<Unconfined>")]
    pub unconfined: Option<Spanned<Unconfined>>,
    /// Where a confined call may read (globs or `lists.NAME`); a glob grants its
    /// folder before the first wildcard (`~/.cargo/**` grants `~/.cargo`).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub reads: Option<Vec<Spanned<String>>>,
    /// What it may never read, even inside `reads`: matching files are hidden.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny_reads: Option<Vec<Spanned<String>>>,
    /// `predicted` (the call's own writes and deletes, the workspace for a call
    /// that runs code or whose writes are not exactly known) or `workspace`.
    #[schemars(with = "Option<WriteScope>")]
    pub writes: Option<Spanned<WriteScope>>,
    /// Always writable besides (temp folders, caches): globs or `lists.NAME`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub write_also: Option<Vec<Spanned<String>>>,
    /// What it may never write, even inside its writes: made read-only.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny_writes: Option<Vec<Spanned<String>>>,
    /// Folders programs may run from.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub exec: Option<Vec<Spanned<String>>>,
    /// Environment variables a confined call does not get: name globs (`*`
    /// matches any run of characters, case is ignored). The kernel cannot
    /// hide a secret the call already holds in its environment, so these are
    /// removed before it starts. Default: names of tokens, keys, secrets and
    /// passwords (`*TOKEN*`, `*_KEY`, `*SECRET*` …); `[]` keeps them all.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny_env: Option<Vec<Spanned<String>>>,
    /// `predicted` (no network unless the call fetches; then TCP to the fetched
    /// ports only), `none` or `any`.
    #[schemars(with = "Option<NetworkScope>")]
    pub network: Option<Spanned<NetworkScope>>,
    /// Whether a confined call may open Unix sockets by path (the Docker socket, ssh-agent).
    #[schemars(with = "Option<bool>")]
    pub unix_sockets: Option<Spanned<bool>>,
    /// Process limits for the whole confined tree.
    pub limits: Option<RawLimits>,
    /// Deny entries lifted for one program: when every command of a call is
    /// this program or touches no file, these entries of `deny_reads` and
    /// `deny_writes` (the same text) do not apply. `git` must read and write
    /// its own `.git`.
    #[serde(default)]
    pub programs: BTreeMap<String, RawEnforceProgram>,
}

/// `settings.enforce.programs.NAME`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEnforceProgram {
    /// Entries of `deny_reads` that do not apply to this program.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub reads: Vec<Spanned<String>>,
    /// Entries of `deny_writes` that do not apply to this program.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub writes: Vec<Spanned<String>>,
    /// Whether the program may reach the network (`any`) when it is the only program of the call.
    #[schemars(with = "Option<NetworkScope>")]
    pub network: Option<Spanned<NetworkScope>>,
}

/// `settings.enforce.limits`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    /// Most processes the confined tree may have at once.
    #[schemars(with = "Option<u64>")]
    pub processes: Option<Spanned<u64>>,
    /// Largest file it may write (`1GiB`, `500MiB`, or bytes).
    #[schemars(with = "Option<String>")]
    pub file_size: Option<Spanned<String>>,
    /// Most CPU seconds.
    #[schemars(with = "Option<u64>")]
    pub cpu_seconds: Option<Spanned<u64>>,
}

/// `settings.enforce.unconfined`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unconfined {
    /// Refuse the call (exit 125).
    #[default]
    Refuse,
    /// Run it without confinement, saying so on stderr.
    Run,
}

/// `settings.enforce.writes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteScope {
    /// The call's own predicted writes; the workspace where they are not known.
    #[default]
    Predicted,
    /// The whole workspace.
    Workspace,
}

/// `settings.enforce.network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NetworkScope {
    /// None unless the call fetches; then TCP to the fetched ports.
    #[default]
    Predicted,
    /// No network at all.
    None,
    /// Any.
    Any,
}

/// The MCP gateway's settings.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGateway {
    /// How a call is decided while `zero-policy.lock` exists and the upstream
    /// tool's definition is not the one pinned there: `allow`, `prompt` (the
    /// default) or `deny`. It can only make the decision stricter.
    #[schemars(with = "Option<Permission>")]
    pub pinning: Option<Spanned<Permission>>,
}

/// How paths in effects and lists are read.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPaths {
    /// What `~` and `$HOME` mean; default the host's home folder; `${env:NAME}` allowed.
    #[schemars(with = "Option<String>")]
    pub home: Option<Spanned<String>>,
    /// Whether path globs ignore case: `auto` (per host), `true` or `false`.
    #[schemars(with = "Option<CaseFolding>")]
    pub case_insensitive: Option<Spanned<CaseFolding>>,
    /// Where a call is decided on its host (hooks, `run`, `serve`, `explain --host`), a
    /// search or listing is walked, and each file it would reach that these globs (or
    /// `lists.NAME`) name becomes a read or listing of that file; empty: no walk.
    #[schemars(with = "Option<Vec<String>>")]
    pub credentials: Option<Vec<Spanned<String>>>,
    /// How long one call's walks on the host may take in all (`50ms`, the
    /// default; `1s`); past it a search keeps its over-approximation.
    #[schemars(with = "Option<String>")]
    pub walk_time: Option<Spanned<String>>,
}

/// `settings.paths.case_insensitive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(untagged)]
pub enum CaseFolding {
    /// As the host's file systems usually do.
    #[schemars(with = "AutoWord")]
    Auto,
    /// Always (`true`) or never (`false`).
    Fixed(bool),
}

/// The word `auto` (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[expect(dead_code, reason = "only describes the schema of `auto`")]
enum AutoWord {
    Auto,
}

impl Serialize for CaseFolding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CaseFolding::Auto => s.serialize_str("auto"),
            CaseFolding::Fixed(b) => s.serialize_bool(*b),
        }
    }
}

impl<'de> Deserialize<'de> for CaseFolding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = CaseFolding;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`auto`, `true` or `false`")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<CaseFolding, E> {
                Ok(CaseFolding::Fixed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CaseFolding, E> {
                match v {
                    "auto" => Ok(CaseFolding::Auto),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The decision log: one JSON line per decision made by `hook`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLog {
    /// The file to append to: absolute, or starting with `~/` (the home folder);
    /// `""` turns the log off. Default `~/.local/state/zero-policy/decisions.jsonl`.
    #[schemars(with = "Option<String>")]
    pub path: Option<Spanned<String>>,
    /// How a call's arguments are logged; default `scrubbed`.
    #[schemars(with = "Option<LogArgs>")]
    pub args: Option<Spanned<LogArgs>>,
    /// Whether each line carries `seq` and `prev` (the SHA-256 of the line
    /// before it), so that `zero-policy log verify` finds a removed,
    /// reordered or edited line; default `false`.
    #[schemars(with = "Option<bool>")]
    pub chain: Option<Spanned<bool>>,
    /// Also send each decision to a syslog receiver (RFC 5424 over TCP).
    pub syslog: Option<RawSyslog>,
    /// Also send each decision as an OpenTelemetry log (OTLP/HTTP, JSON).
    pub otlp: Option<RawOtlp>,
}

/// An OTLP/HTTP logs endpoint for decision records.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawOtlp {
    /// The logs endpoint: `https://HOST[:PORT]/v1/logs`, or `http://…` for a
    /// collector on the machine or the network's edge.
    #[schemars(with = "String")]
    pub endpoint: Spanned<String>,
    /// Records held while the collector is slow or down; past this, new
    /// records are dropped and counted. Default 1024.
    #[schemars(with = "Option<usize>")]
    pub queue: Option<Spanned<usize>>,
    /// The payload's encoding: `json` (the default) or `protobuf`.
    #[schemars(with = "Option<OtlpEncoding>")]
    pub encoding: Option<Spanned<OtlpEncoding>>,
    /// With an `https://` endpoint: a PEM file of CA certificates to trust
    /// besides the system's, for a private CA; an absolute path or one
    /// starting `~/`.
    #[schemars(with = "Option<String>")]
    pub ca: Option<Spanned<String>>,
}

/// How OTLP/HTTP payloads are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OtlpEncoding {
    /// OTLP's JSON encoding, `application/json`.
    #[default]
    Json,
    /// Binary protobuf, `application/x-protobuf`.
    Protobuf,
}

/// A syslog receiver for decision records.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSyslog {
    /// `HOST:PORT` of a receiver speaking RFC 5424 over TCP with
    /// octet-counting framing (RFC 6587), such as rsyslog's `imtcp`.
    #[schemars(with = "String")]
    pub address: Spanned<String>,
    /// Records held while the receiver is slow or down; past this, new
    /// records are dropped and counted. Default 1024.
    #[schemars(with = "Option<usize>")]
    pub queue: Option<Spanned<usize>>,
    /// Send over TLS (RFC 5425, as rsyslog's `imtcp` with a TLS stream
    /// driver receives it), checking the receiver's certificate against the
    /// system's roots and `ca`, for the host name in `address`. Default false.
    #[schemars(with = "Option<bool>")]
    pub tls: Option<Spanned<bool>>,
    /// With `tls`: a PEM file of CA certificates to trust besides the
    /// system's, for a private CA; an absolute path or one starting `~/`.
    #[schemars(with = "Option<String>")]
    pub ca: Option<Spanned<String>>,
}

/// How the decision log records a call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogArgs {
    /// Logged, with every secret the scrubber finds replaced by `[REDACTED]`.
    #[default]
    Scrubbed,
    /// Not logged.
    Omit,
}

/// What agent hooks answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawHooks {
    /// The answer for a tool that no manifest names: `allow`, `prompt` (the
    /// default: the person is asked, or `on_prompt` decides) or `deny`.
    #[schemars(with = "Option<Permission>")]
    pub unknown_tool: Option<Spanned<Permission>>,
}

/// Extra secret detectors.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSecrets {
    /// Regular expressions; every match is replaced by `[REDACTED]`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub patterns: Vec<Spanned<String>>,
    /// Environment variables whose values are scrubbed wherever they appear.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub env: Vec<Spanned<String>>,
}

/// Declared safety of a tool.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSafety {
    /// What the tool does to the world.
    #[schemars(with = "SideEffect")]
    pub side_effect: Spanned<SideEffect>,
    /// The static permission.
    #[schemars(with = "Permission")]
    pub permission: Spanned<Permission>,
    /// Why; required unless the permission is `allow`.
    #[schemars(with = "Option<String>")]
    pub reason: Option<Spanned<String>>,
}

/// A tool manifest.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTool {
    /// The tool's name, unique across all files: `[A-Za-z0-9_.-]{1,128}`.
    #[schemars(with = "String", regex(pattern = r"^[A-Za-z0-9_.-]{1,128}$"))]
    pub name: Spanned<String>,
    /// What the tool does, shown to the model.
    pub description: String,
    /// The access the tool needs.
    #[schemars(with = "Scope")]
    pub scope: Spanned<Scope>,
    /// JSON Schema (draft 2020-12) for the arguments; default: any object.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub parameters: Option<Spanned<serde_json::Value>>,
    /// Declared safety.
    pub safety: RawSafety,
    /// Left out of the advertised list when deferral is on; default false.
    #[serde(default)]
    pub deferred: Option<bool>,
    /// Counts towards the deferral threshold; default: the value of `deferred`.
    #[serde(default)]
    pub deferral_eligible: Option<bool>,
    /// Rejections checked before permissions.
    #[serde(default)]
    pub reject: Vec<RawReject>,
    /// What a call does, as CEL expressions over `args` and `session`.
    #[serde(default)]
    pub effects: Option<RawEffects>,
}

/// How a tool's arguments map to what the call does; each value is a CEL
/// expression over `args` and `session`, and a missing key means "none".
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEffects {
    /// A string: a shell script the call runs, analysed into commands.
    #[schemars(with = "Option<String>")]
    pub shell: Option<Spanned<String>>,
    /// A string: the folder relative paths and the script start from; default `session.workspace`.
    #[schemars(with = "Option<String>")]
    pub cwd: Option<Spanned<String>>,
    /// A list of strings: paths or path globs the call reads (`DIR/**` for a recursive read).
    #[schemars(with = "Option<String>")]
    pub reads: Option<Spanned<String>>,
    /// A list of strings: paths or path globs whose names, sizes and times the
    /// call reads, not their contents (a listing, a Glob).
    #[schemars(with = "Option<String>")]
    #[serde(default)]
    pub lists: Option<Spanned<String>>,
    /// A list of strings: paths or path globs the call creates, changes or deletes.
    #[schemars(with = "Option<String>")]
    pub writes: Option<Spanned<String>>,
    /// A list of strings: URLs the call fetches or sends to.
    #[schemars(with = "Option<String>")]
    pub fetches: Option<Spanned<String>>,
    /// A string: a patch the call applies (Codex `*** Begin Patch` or a unified diff).
    #[schemars(with = "Option<String>")]
    pub patch: Option<Spanned<String>>,
    /// A bool: the call runs code no rule can see.
    #[schemars(with = "Option<String>")]
    pub runs_code: Option<Spanned<String>>,
}

/// A reject rule: a local, deterministic refusal before permissions.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReject {
    /// Unique across rules, relax rules and reject rules.
    #[schemars(with = "String", regex(pattern = r"^[a-z0-9][a-z0-9_.-]*$"))]
    pub id: Spanned<String>,
    /// A CEL condition.
    #[schemars(with = "String")]
    pub when: Spanned<String>,
    /// What the caller is told.
    pub message: String,
}

/// An MCP server manifest.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    /// The server's name: `[a-z0-9][a-z0-9_-]*`, unique.
    #[schemars(with = "String", regex(pattern = r"^[a-z0-9][a-z0-9_-]*$"))]
    pub name: Spanned<String>,
    /// How to reach it.
    #[schemars(with = "Transport")]
    pub transport: Spanned<Transport>,
    /// The program to start (stdio only).
    #[schemars(with = "Option<String>")]
    pub command: Option<Spanned<String>>,
    /// Its arguments (stdio only).
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment; `${env:NAME}` is read from the host environment.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: BTreeMap<String, Spanned<String>>,
    /// The endpoint (http and sse only).
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
    /// Request headers (http and sse only); `${env:NAME}` allowed.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub headers: BTreeMap<String, Spanned<String>>,
    /// How long to connect and list; default `settings.connect_timeout`.
    #[schemars(with = "Option<String>")]
    pub connect_timeout: Option<Spanned<String>>,
    /// Globs over the server's own tool names; default `["*"]`.
    #[schemars(with = "Option<Vec<String>>")]
    pub include: Option<Vec<Spanned<String>>>,
    /// Globs over the server's own tool names to leave out.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exclude: Vec<Spanned<String>>,
    /// Safety imposed on every tool of this server.
    #[serde(default)]
    pub safety: Option<RawPartialSafety>,
    /// Per-tool safety; the first matching entry wins.
    #[serde(default)]
    pub overrides: Vec<RawOverride>,
    /// Run a stdio server confined by the kernel (SPEC §11): what it may read
    /// and write besides what `settings.enforce` lets every confined call read,
    /// and its network.
    pub sandbox: Option<RawServerSandbox>,
    /// What the server may ask of the gateway's client through it, beyond
    /// tools: `sampling` (the client's model), `elicitation` (a question to
    /// the person). Neither unless listed; `roots` are always answered.
    #[serde(default)]
    pub allow: Vec<ServerAllow>,
    /// How this server's tools and prompts are named, overriding
    /// `settings.mcp_name_format` (`{tool}` keeps the server's own names).
    /// Two servers whose names could collide are a load error.
    #[schemars(with = "Option<String>")]
    pub mcp_name_format: Option<Spanned<String>>,
    /// How the gateway authorizes itself to an http server that asks for it
    /// (MCP authorization: OAuth 2.1 with PKCE); without it, only `headers`
    /// are sent.
    pub auth: Option<RawServerAuth>,
}

/// `servers[].auth`: the gateway as an OAuth client of an http server
/// (docs/gateway.md, "Authorization").
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawServerAuth {
    /// `oauth`, the only kind.
    #[serde(rename = "type")]
    #[schemars(with = "AuthKind")]
    pub kind: Spanned<AuthKind>,
    /// `authorization_code` (the default: a person authorizes in a browser)
    /// or `client_credentials` (a machine client with `client_id` and
    /// `client_secret`).
    #[schemars(with = "Option<AuthGrant>")]
    pub grant: Option<Spanned<AuthGrant>>,
    /// A client registered in advance with the authorization server; without
    /// one, a client metadata document (`client_metadata_url`) or dynamic
    /// registration is used.
    #[schemars(with = "Option<String>")]
    pub client_id: Option<Spanned<String>>,
    /// The registered client's secret: `${env:NAME}`, never written literally.
    #[schemars(with = "Option<String>")]
    pub client_secret: Option<Spanned<String>>,
    /// An https URL where this client's metadata document is published, used
    /// as the client id where the authorization server supports it.
    #[schemars(with = "Option<String>")]
    pub client_metadata_url: Option<Spanned<String>>,
    /// Scopes to ask for; default: those the server names in its challenge,
    /// else in its protected resource metadata, else none.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The loopback port the browser is sent back to
    /// (`http://127.0.0.1:PORT/callback`); default: any free port. A client
    /// registered in advance needs the port it was registered with.
    pub redirect_port: Option<u16>,
    /// The program that opens the authorization page, with its arguments; the
    /// URL is added last (e.g. `[xdg-open]`). Without it the URL is written to
    /// stderr for the person to open.
    #[serde(default)]
    pub open: Vec<String>,
    /// A file that keeps the client registration and tokens between runs
    /// (written with mode 0600; `~/` allowed). Without it they are kept in
    /// memory only.
    #[schemars(with = "Option<String>")]
    pub token_cache: Option<Spanned<String>>,
}

/// `servers[].auth.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthKind {
    /// MCP authorization: OAuth 2.1 with PKCE.
    Oauth,
}

/// `servers[].auth.grant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthGrant {
    /// A person authorizes in a browser; the code comes back to a loopback port.
    AuthorizationCode,
    /// The client authenticates as itself, with no person.
    ClientCredentials,
}

/// A request a server may make of the client through the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerAllow {
    /// `sampling/createMessage`: the client's model answers the server.
    Sampling,
    /// `elicitation/create`: the person answers the server.
    Elicitation,
}

/// `servers[].sandbox`: a stdio server runs inside the same kind of envelope
/// as a confined shell call.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawServerSandbox {
    /// Files and folders it may read besides `settings.enforce.reads` (absolute, `~/`, or
    /// relative to the folder the gateway runs in).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub reads: Vec<Spanned<String>>,
    /// Files and folders it may write (and read).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub writes: Vec<Spanned<String>>,
    /// `none` (the default) or `any`.
    #[schemars(with = "Option<NetworkScope>")]
    pub network: Option<Spanned<NetworkScope>>,
}

/// Safety where every field falls back to a default.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPartialSafety {
    /// What the tool does to the world.
    #[schemars(with = "Option<SideEffect>")]
    pub side_effect: Option<Spanned<SideEffect>>,
    /// The static permission.
    #[schemars(with = "Option<Permission>")]
    pub permission: Option<Spanned<Permission>>,
    /// Why.
    #[schemars(with = "Option<String>")]
    pub reason: Option<Spanned<String>>,
}

/// Safety for the server's tools whose names match.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawOverride {
    /// Globs over the server's own tool names.
    #[schemars(with = "Vec<String>")]
    pub tools: Vec<Spanned<String>>,
    /// The safety for them; missing fields come from the server's safety.
    #[serde(default)]
    pub safety: Option<RawPartialSafety>,
    /// What their calls do, as for manifest tools.
    #[serde(default)]
    pub effects: Option<RawEffects>,
}

/// A sandbox rule: it may only tighten.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// Unique across rules, relax rules and reject rules.
    #[schemars(with = "String", regex(pattern = r"^[a-z0-9][a-z0-9_.-]*$"))]
    pub id: Spanned<String>,
    /// What the rule is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Globs over final tool names; default `["*"]`.
    #[schemars(with = "Option<Vec<String>>")]
    pub tools: Option<Vec<Spanned<String>>>,
    /// A CEL condition.
    #[schemars(with = "String")]
    pub when: Spanned<String>,
    /// `deny` or `prompt`.
    #[schemars(with = "RuleAction")]
    pub action: Spanned<Permission>,
    /// Why; shown to the caller.
    #[schemars(with = "Option<String>")]
    pub reason: Option<Spanned<String>>,
    /// Example calls, checked by `lint` and `test`.
    #[serde(default)]
    pub examples: Option<RawExamples>,
}

/// The two actions a sandbox rule may take (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[expect(dead_code, reason = "only describes the schema of `action`")]
enum RuleAction {
    Prompt,
    Deny,
}

/// The one target a relax rule may have (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[expect(dead_code, reason = "only describes the schema of `to`")]
enum RelaxTarget {
    Allow,
}

/// A relax rule: it may only move `prompt` to `allow`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRelax {
    /// Unique across rules, relax rules and reject rules.
    #[schemars(with = "String", regex(pattern = r"^[a-z0-9][a-z0-9_.-]*$"))]
    pub id: Spanned<String>,
    /// What the rule is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Globs over final tool names; default `["*"]`.
    #[schemars(with = "Option<Vec<String>>")]
    pub tools: Option<Vec<Spanned<String>>>,
    /// A CEL condition.
    #[schemars(with = "String")]
    pub when: Spanned<String>,
    /// `allow`, the only legal value.
    #[schemars(with = "Option<RelaxTarget>")]
    pub to: Option<Spanned<Permission>>,
    /// Why.
    #[schemars(with = "Option<String>")]
    pub reason: Option<Spanned<String>>,
    /// Example calls, checked by `lint` and `test`.
    #[serde(default)]
    pub examples: Option<RawExamples>,
}

/// Example calls of a rule.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExamples {
    /// Calls the rule must match.
    #[serde(default, rename = "match")]
    pub matches: Vec<RawCall>,
    /// Calls the rule must not match.
    #[serde(default)]
    pub no_match: Vec<RawCall>,
}

/// A tool call as written in a file.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCall {
    /// The final tool name.
    #[schemars(with = "String")]
    pub tool: Spanned<String>,
    /// The arguments.
    #[serde(default)]
    pub args: Option<serde_json::Value>,
    /// The caller's context.
    #[serde(default)]
    pub session: Option<RawSession>,
    /// The call runs confined by the kernel (`zero-policy run`, a hook's rewrite):
    /// `call.confined` for a shell tool; default false.
    #[serde(default)]
    pub confined: bool,
}

/// The caller's context as written in a file.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSession {
    /// The agent's mode, e.g. `ask`, `plan`, `auto`; default `ask`.
    pub mode: Option<String>,
    /// The workspace folder; default the current folder.
    pub workspace: Option<String>,
    /// The scopes granted; default all four.
    pub scopes: Option<Vec<Scope>>,
    /// Free-form labels.
    pub labels: Option<BTreeMap<String, String>>,
    /// The agent the call is made for (`claude-code`, `codex`, …); default none.
    pub agent: Option<String>,
}

/// A policy test.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTest {
    /// What the test checks.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The call.
    pub call: RawCall,
    /// What must come out.
    pub expect: RawExpect,
}

/// The expected outcome of a policy test.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    /// The decision.
    pub decision: Decision,
    /// Exactly these rule ids matched, in any order.
    #[serde(default)]
    pub matched: Option<Vec<String>>,
}

/// A named list: the strings, or another list extended with more.
#[derive(Debug)]
pub enum RawList {
    /// The strings themselves.
    Items(Vec<Spanned<String>>),
    /// Another list's strings plus these.
    Extends {
        /// The list extended.
        extends: Spanned<String>,
        /// The strings added.
        add: Vec<Spanned<String>>,
    },
}

/// The schema of a list (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "only describes the schema of a list")]
enum RawListSchema {
    Items(Vec<String>),
    Extends(RawListExtends),
}

/// `{extends: NAME, add: [...]}` (schema only).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "only describes the schema of a list")]
struct RawListExtends {
    /// The list extended.
    extends: String,
    /// The strings added.
    #[serde(default)]
    add: Vec<String>,
}

impl JsonSchema for RawList {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RawList".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        RawListSchema::json_schema(generator)
    }
}

impl Serialize for RawList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            RawList::Items(items) => items.serialize(s),
            RawList::Extends { extends, add } => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("extends", extends)?;
                map.serialize_entry("add", add)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for RawList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of strings, or `{extends: NAME, add: [...]}`")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<RawList, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = a.next_element::<Spanned<String>>()? {
                    items.push(v);
                }
                Ok(RawList::Items(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<RawList, A::Error> {
                let mut extends = None;
                let mut add = Vec::new();
                while let Some(k) = a.next_key::<String>()? {
                    match k.as_str() {
                        "extends" => extends = Some(a.next_value::<Spanned<String>>()?),
                        "add" => add = a.next_value::<Vec<Spanned<String>>>()?,
                        other => {
                            return Err(serde::de::Error::unknown_field(
                                other,
                                &["extends", "add"],
                            ));
                        }
                    }
                }
                match extends {
                    Some(extends) => Ok(RawList::Extends { extends, add }),
                    None => Err(serde::de::Error::missing_field("extends")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// How a program's options are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ParseStyle {
    /// GNU getopt: `-rf`, `-ofile`, `--long=value`, `--`.
    #[default]
    Gnu,
    /// find and Go's flag package: `-name X`, `-name=X`, `--name`; no bundling.
    SingleDash,
    /// No options: every word is an operand.
    None,
}

/// What a program does with its standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StdinKind {
    /// Runs it as code when no script or code is given.
    Code,
    /// Runs it as a shell script when no script or code is given (`sh`,
    /// `bash`): a literal here-document, here-string or piped text is
    /// analysed as that script.
    Script,
    /// Runs it as SQL and client commands when none is given (`psql`,
    /// `sqlite3`): literal text is read as a `sql` value.
    Sql,
}

/// One or more strings: `"-p, --pid"` or `["-p, --pid", "-c, --class"]`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings.
    #[must_use]
    pub fn items(&self) -> &[String] {
        match self {
            OneOrMany::One(s) => std::slice::from_ref(s),
            OneOrMany::Many(v) => v,
        }
    }
}

/// A conditional change of a command specification (`docs/catalog.md`,
/// "Conditions"): when every condition given holds, the changes apply.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWhen {
    /// Options given: each string lists spellings (`"-p, --pid"`), one of
    /// which is given; with a list, every string holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<OneOrMany>,
    /// Spellings of options none of which is given (`"-l, --list"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unless: Option<String>,
    /// A glob (`*`, `?`, `[…]`) some operand matches (`"*=*"`); an operand
    /// not known before the command runs matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operand: Option<String>,
    /// At least this many operands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operands: Option<usize>,
    /// `false`: the command is not read-only; `true`: it is read-only (its
    /// effects may still make it not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Tags added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tags removed (the entry's own and its options').
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untags: Vec<String>,
    /// `true`: the command runs code no rule can see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_code: Option<bool>,
}

/// An example of a command line and what the entry says it does; `test`
/// checks it against the entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCommandExample {
    /// The command line, as a shell reads it.
    pub run: String,
    /// Whether the command is read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Whether it runs code no rule can see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_code: Option<bool>,
    /// Tags the command has.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tags it does not have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_tags: Vec<String>,
    /// Hosts it reaches (each fetch's host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fetches: Vec<String>,
    /// Paths it writes (patterns as `explain` shows them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
    /// Programs of the commands it runs, in order (the command and what it
    /// runs: `sh <<< 'rm x'` lists `sh`, `rm`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// `false`: the strace harness (`tests/catalog_strace.rs`) does not run
    /// it, because it would change the machine outside its throwaway world
    /// (the clock, the host name, the clipboard, a kernel setting) or needs
    /// what the world has not (a server, a display). Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strace: Option<bool>,
}

/// A command specification of the catalog (`docs/catalog.md`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCommand {
    /// The program's basename; required at the top level, absent in subcommands.
    #[schemars(with = "Option<String>")]
    pub name: Option<Spanned<String>>,
    /// Other basenames with the same specification.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// One line.
    #[serde(default)]
    pub description: Option<String>,
    /// The command changes nothing; default false.
    #[serde(default)]
    pub read_only: Option<bool>,
    /// Words rules can test in `c.tags`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// How options are spelled; default `gnu`.
    #[serde(default)]
    pub parse: Option<ParseStyle>,
    /// Unambiguous prefixes of long options are accepted; default true with `gnu`.
    #[serde(default)]
    pub abbreviations: Option<bool>,
    /// Options may follow operands; default true unless the operands hold `command`, `script` or `code`.
    #[serde(default)]
    pub permute: Option<bool>,
    /// Subcommand names match case-insensitively.
    #[serde(default)]
    pub ignore_case: Option<bool>,
    /// The first operand selects a subcommand only when it names one; any
    /// other is read with the rest as `operands` says (`npm run SCRIPT`, where
    /// the subcommand `env` is npm's own script).
    #[serde(default)]
    pub subcommand_optional: Option<bool>,
    /// A path operand written `HOST:PATH`, `USER@HOST:PATH` or `scp://HOST/PATH`
    /// names a file on HOST: a connection to HOST, not a local path (`scp`,
    /// `rsync`). As the program does, a `:` before any `/` makes it remote.
    #[serde(default)]
    pub remote_operands: Option<bool>,
    /// The first word may be short options without a dash (`tar czf A`, `ar rcs`).
    #[serde(default)]
    pub traditional: Option<bool>,
    /// Spellings (`"-r, --recursive"`) to what the option is.
    #[serde(default)]
    pub options: BTreeMap<String, RawOption>,
    /// The kinds of the operands (`[read..., write]`); default `[value...]`.
    #[serde(default)]
    pub operands: Option<Vec<String>>,
    /// What the program does with its standard input.
    #[serde(default)]
    pub stdin: Option<StdinKind>,
    /// Variables the program reads, by name, to the kind of their value
    /// (`KUBECTL_EXTERNAL_DIFF: script`, `DOCKER_HOST: fetch`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Conditional changes: tags, read-only, code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<RawWhen>,
    /// Command lines and what the entry says they do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<RawCommandExample>,
    /// The program's own files, which it reads and writes as its bookkeeping
    /// whatever the command line says (git's `.git/**`, a tool's cache under
    /// `~/`): path globs, relative to the working folder, starting `~/`, or absolute.
    /// Not effects a rule sees; the strace harness accepts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<String>,
    /// Subcommands by name.
    #[serde(default)]
    pub subcommands: BTreeMap<String, RawCommand>,
}

/// What an option is: a kind (string shorthand) or the full form.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawOptionSpec {
    /// The kind of its value; absent for a flag.
    #[serde(default)]
    pub value: Option<String>,
    /// The value is given only as `--opt=value` or attached to a short option.
    #[serde(default)]
    pub optional: Option<bool>,
    /// Tags added to the command when the option is given.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Operand paths are whole trees.
    #[serde(default)]
    pub recursive: Option<bool>,
    /// Replaces the operand kinds when the option is given.
    #[serde(default)]
    pub operands: Option<Vec<String>>,
    /// `false`: the command is not read-only with this option.
    #[serde(default)]
    pub read_only: Option<bool>,
    /// The option makes the program run code no rule can see.
    #[serde(default)]
    pub runs_code: Option<bool>,
    /// The program edits its input files in place: every `read` operand is
    /// written too, whichever option set the operands. An option with a value
    /// takes it as a backup suffix (`sed -i.bak`): the copy is written too.
    #[serde(default)]
    pub in_place: Option<bool>,
    /// For a `command` value: the words that end it.
    #[serde(default)]
    pub end: Vec<String>,
}

/// An option: `flag`, a kind, or a map.
#[derive(Debug)]
pub struct RawOption(pub RawOptionSpec);

/// The schema of an option (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "only describes the schema of an option")]
enum RawOptionSchema {
    Kind(String),
    Full(RawOptionSpec),
}

impl JsonSchema for RawOption {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RawOption".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        RawOptionSchema::json_schema(generator)
    }
}

impl Serialize for RawOption {
    /// The shorthand the reader takes (`flag`, or the kind alone) where it
    /// says everything: most of a catalog entry's options, which the
    /// document cache then keeps in a fifth of the space.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let RawOptionSpec {
            value,
            optional,
            tags,
            recursive,
            operands,
            read_only,
            runs_code,
            in_place,
            end,
        } = &self.0;
        let value_only = optional.is_none()
            && tags.is_empty()
            && recursive.is_none()
            && operands.is_none()
            && read_only.is_none()
            && runs_code.is_none()
            && in_place.is_none()
            && end.is_empty();
        match value {
            None if value_only => s.serialize_str("flag"),
            Some(kind) if value_only && kind != "flag" => s.serialize_str(kind),
            _ => self.0.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RawOption {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawOption;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`flag`, a kind such as `read`, or a map such as `{value: write}`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawOption, E> {
                Ok(RawOption(if v == "flag" {
                    RawOptionSpec::default()
                } else {
                    RawOptionSpec {
                        value: Some(v.to_string()),
                        ..RawOptionSpec::default()
                    }
                }))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<RawOption, A::Error> {
                RawOptionSpec::deserialize(serde::de::value::MapAccessDeserializer::new(a))
                    .map(RawOption)
            }
        }
        d.deserialize_any(V)
    }
}
