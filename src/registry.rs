//! The registry: every tool, manifest and MCP alike, with its rules resolved.
//!
//! For each tool, the reject, relax and sandbox rules that apply to it are
//! found once, when the tool is registered (the `tools:` globs are matched
//! then), so a call evaluates only its own rules.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::call::Call;
use crate::cel::batch::Batch;
use crate::effects::Catalog;
use crate::lock::{Lock, PinState};
use crate::model::{Permission, Scope};
use crate::policy::{Origin, Policy, Rule, RuleKind, Safety, ServerDef, Settings, ToolEffects};
use crate::runtime::{Dispatcher, Executor, Tool, ToolError, ToolOutput};
use crate::scrub::Scrubber;

/// Where a registered tool came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolSource {
    /// Declared in a manifest file.
    Manifest {
        /// The file.
        file: String,
        /// The line of its name.
        line: usize,
    },
    /// Served by an MCP server; safety imposed by the host's manifest.
    Mcp {
        /// The server's name.
        server: String,
        /// The server's own name for the tool.
        remote_name: String,
        /// The override entry that set the safety, if one did (`file:line`).
        safety_from: Option<String>,
    },
    /// Registered in code by the host.
    Builtin,
}

impl ToolSource {
    /// A short phrase for `explain`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            ToolSource::Manifest { file, line } => format!("manifest {file}:{line}"),
            ToolSource::Mcp {
                server,
                remote_name,
                ..
            } => format!("MCP server `{server}`, tool `{remote_name}`"),
            ToolSource::Builtin => "registered by the host".into(),
        }
    }

    /// Where the static permission was set, for `explain`.
    #[must_use]
    pub fn safety_origin(&self) -> String {
        match self {
            ToolSource::Manifest { file, line } => format!("the manifest ({file}:{line})"),
            ToolSource::Mcp {
                server,
                safety_from: Some(at),
                ..
            } => format!("the host's override for server `{server}` ({at})"),
            ToolSource::Mcp { server, .. } => {
                format!("the host's safety for server `{server}` (never the server's own hints)")
            }
            ToolSource::Builtin => "the host's tool definition".into(),
        }
    }

    /// `""` for manifest tools, the server for MCP tools.
    #[must_use]
    pub fn server(&self) -> &str {
        match self {
            ToolSource::Mcp { server, .. } => server,
            _ => "",
        }
    }

    /// The server's own name for the tool (MCP), or `""`.
    #[must_use]
    pub fn remote_name(&self) -> &str {
        match self {
            ToolSource::Mcp { remote_name, .. } => remote_name,
            _ => "",
        }
    }
}

/// A tool in the registry.
#[derive(Debug)]
pub struct RegisteredTool {
    /// The final name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Where it came from.
    pub source: ToolSource,
    /// The scope it needs.
    pub scope: Scope,
    /// Its safety (host-imposed for MCP tools).
    pub safety: Safety,
    /// JSON Schema for the arguments.
    pub parameters: Arc<serde_json::Value>,
    /// Left out of the advertised list when deferral is on.
    pub deferred: bool,
    /// Counts towards the deferral threshold.
    pub deferral_eligible: bool,
    /// The server's annotations: untrusted hints that change no decision.
    pub hints: Option<serde_json::Value>,
    /// Relax rules that match this tool by name but were not applied, with why.
    pub skipped_relax: Vec<(String, String)>,
    /// The agent whose tool it is; `None` for tools every agent shares.
    pub agent: Option<String>,
    /// What its calls do, as expressions.
    pub effects: Option<Arc<ToolEffects>>,
    /// Some rule of the tool reads `call`, so its effects are computed.
    pub needs_effects: bool,
    /// Resolved offline from its server's manifest: nothing connected.
    pub offline: bool,
    /// How its definition compares with `zero-policy.lock` (MCP tools, while a lock exists).
    pub pin: Option<PinState>,
    /// The compiled parameters schema; a manifest's, checked by the loader,
    /// is compiled on the first call that needs it.
    pub(crate) validator: std::sync::OnceLock<Option<jsonschema::Validator>>,
    /// The parameters' plain form ([`crate::arguments`]), compiled on the
    /// first call; `None` when the schema is not plain.
    plain: std::sync::OnceLock<Option<crate::arguments::Plain>>,
    pub(crate) reject: Vec<Arc<Rule>>,
    pub(crate) relax: Vec<Arc<Rule>>,
    pub(crate) sandbox: Vec<Arc<Rule>>,
    /// `tool` as a CEL value, and its sizes for the cost bound: built on
    /// the tool's first call (a hook calls one tool of the many it loads).
    cel: std::sync::OnceLock<(::cel::Value, crate::cel::budget::Sizes)>,
    pub(crate) dispatcher: Dispatcher,
    /// The three rule lists as batches, read on the tool's first call.
    batches: std::sync::OnceLock<Arc<RuleBatches>>,
}

/// A tool's reject, relax and sandbox rules decided together
/// ([`crate::cel::batch`]); tools with the same rules share one.
#[derive(Debug)]
pub(crate) struct RuleBatches {
    pub(crate) reject: Batch,
    pub(crate) relax: Batch,
    pub(crate) sandbox: Batch,
    /// Some tool with these rules has been called: the next call builds the
    /// glob and regex sets, which one call alone would not repay.
    called: std::sync::atomic::AtomicBool,
}

/// The rules of a tool's three lists, by identity: the key of shared [`RuleBatches`].
type BatchKey = [Vec<usize>; 3];

impl RegisteredTool {
    /// Checks the arguments against the parameters; the message names each failing path.
    pub(crate) fn validate(&self, args: &serde_json::Value) -> Result<(), String> {
        if !args.is_object() {
            return Err("the arguments are not a JSON object".into());
        }
        if self.offline {
            return Ok(());
        }
        // Plain schemas answer "valid" without the crate; anything else,
        // and every call they do not accept, goes to the crate.
        let plain = self
            .plain
            .get_or_init(|| crate::arguments::Plain::compile(&self.parameters));
        if plain.as_ref().is_some_and(|p| p.accepts(args)) {
            return Ok(());
        }
        let compiled = self
            .validator
            .get_or_init(|| jsonschema::draft202012::new(&self.parameters).ok());
        let Some(v) = compiled else {
            return Err("the tool's parameters are not a valid JSON Schema".into());
        };
        // The yes/no check is cheaper than collecting errors; errors are
        // collected only for a call that has some.
        if v.is_valid(args) {
            return Ok(());
        }
        let errors: Vec<String> = v
            .iter_errors(args)
            .take(5)
            .map(|e| {
                let path = e.instance_path().to_string();
                let text = e.to_string();
                let mut c = text.chars();
                let text: String = c
                    .next()
                    .map(|f| f.to_lowercase().chain(c).collect())
                    .unwrap_or_default();
                if path.is_empty() {
                    text
                } else {
                    format!("`{path}`: {text}")
                }
            })
            .collect();
        if errors.is_empty() {
            // `is_valid` said no: never an allow for want of a message.
            Err("invalid arguments: they do not match the parameters".into())
        } else {
            Err(format!("invalid arguments: {}", errors.join("; ")))
        }
    }

    /// `tool` as a CEL value, and its sizes for the cost bound.
    pub(crate) fn cel_value(&self) -> &(::cel::Value, crate::cel::budget::Sizes) {
        self.cel.get_or_init(|| {
            let v = tool_cel_value(
                &self.name,
                &self.source,
                self.scope,
                &self.safety,
                self.deferred,
            );
            let sizes = crate::cel::budget::Sizes::measure(&v);
            (v, sizes)
        })
    }

    /// The rules that apply to this tool, by kind.
    #[must_use]
    pub fn rules(&self, kind: RuleKind) -> &[Arc<Rule>] {
        match kind {
            RuleKind::Reject => &self.reject,
            RuleKind::Relax => &self.relax,
            RuleKind::Sandbox => &self.sandbox,
        }
    }

    /// The registry holds code to run it (an MCP connection, or an executor).
    #[must_use]
    pub fn runnable(&self) -> bool {
        !matches!(self.dispatcher, Dispatcher::None)
    }

    pub(crate) async fn execute(&self, call: &Call) -> Result<ToolOutput, ToolError> {
        self.dispatcher.run(&self.name, call).await
    }
}

/// A server that registered no tools, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedServer {
    /// The server.
    pub server: String,
    /// A stable reason code: `connect-failed`, `timeout`, `list-failed`,
    /// `nameless-tool`, `name-conflict`, `invalid-schema`.
    pub reason: String,
    /// Details.
    pub detail: String,
}

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name is taken.
    #[error("tool `{0}` is already registered")]
    Duplicate(String),
    /// No such tool.
    #[error("no tool `{0}`")]
    Unknown(String),
    /// The tool's parameters are not a valid JSON Schema.
    #[error("the parameters of `{0}` are not a valid JSON Schema: {1}")]
    InvalidSchema(String, String),
    /// The registry is shared already; attach executors before sharing it.
    #[error("tool `{0}` is in use; attach executors before sharing the registry")]
    InUse(String),
    /// A setting cannot be used (a bad secret pattern).
    #[error("{0}")]
    Settings(String),
}

/// Every tool, with its rules resolved; the home of the one dispatch path.
pub struct Registry {
    tools: Vec<Arc<RegisteredTool>>,
    /// Tool positions by name: one per agent that defines it, and the shared one.
    /// (Hashed with foldhash, seeded per process: a name is looked up on every call.)
    index: HashMap<String, Vec<usize>, foldhash::fast::RandomState>,
    commands: Vec<(Arc<crate::effects::catalog::Spec>, Vec<String>)>,
    /// The shipped catalog the additions are laid over.
    catalog_base: crate::effects::catalog::Fallback,
    catalog: std::sync::OnceLock<Arc<Catalog>>,
    rules: Vec<Arc<Rule>>,
    /// The rules by the tool names they name: built once, read per tool.
    rule_index: RuleIndex,
    settings: Settings,
    servers: Vec<ServerDef>,
    skipped: Vec<SkippedServer>,
    scrubber: Scrubber,
    lock: Option<Arc<Lock>>,
    pub(crate) root: crate::cel::Root,
    /// The sessions seen lately, as CEL values, most recent first: a session
    /// is converted once, not once per call.
    sessions: std::sync::Mutex<Vec<(crate::call::Session, Arc<crate::call::SessionCel>)>>,
    /// The rule batches made so far, shared by tools with the same rules.
    batches: std::sync::Mutex<HashMap<BatchKey, Arc<RuleBatches>>>,
    /// Where the policy is read from: a call that changes one of these is
    /// denied, whatever the rules say ([`Registry::guard`]).
    pub(crate) guard: crate::guard::Guard,
    /// Where calls are decided on their host: the bounds, and the files a
    /// walk looks for ([`Registry::ground_in_host`]).
    pub(crate) host: Option<(
        crate::effects::ground::Host,
        crate::effects::globs::PathGlobs,
    )>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.len())
            .field("rules", &self.rules.len())
            .finish_non_exhaustive()
    }
}

/// The rules' `tools:` patterns, indexed once for the registry: exact names
/// in a map, every distinct glob once in one set, so a tool's rules are found
/// without matching each rule's patterns against it.
#[derive(Debug, Default)]
struct RuleIndex {
    exact: HashMap<String, Vec<usize>>,
    globs: globset::GlobSet,
    /// The rules of each glob of `globs` (rules often share a pattern).
    glob_rules: Vec<Vec<usize>>,
}

impl RuleIndex {
    fn new(rules: &[Arc<Rule>]) -> RuleIndex {
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut slots: HashMap<&str, usize> = HashMap::new();
        let mut builder = globset::GlobSetBuilder::new();
        let mut glob_rules: Vec<Vec<usize>> = Vec::new();
        for (k, rule) in rules.iter().enumerate() {
            for (pattern, _) in &rule.tool_patterns {
                if !pattern.contains(['*', '?', '[', ']', '{', '}', '\\']) {
                    exact.entry(pattern.clone()).or_default().push(k);
                } else if let Some(&slot) = slots.get(pattern.as_str()) {
                    glob_rules[slot].push(k);
                } else if let Ok(g) = globset::Glob::new(pattern) {
                    builder.add(g);
                    slots.insert(pattern, glob_rules.len());
                    glob_rules.push(vec![k]);
                }
            }
        }
        RuleIndex {
            exact,
            globs: builder
                .build()
                .unwrap_or_else(|_| globset::GlobSet::empty()),
            glob_rules,
        }
    }

    /// The positions of the rules that may name `tool`, in rule order.
    fn candidates(&self, tool: &str) -> Vec<usize> {
        let mut hits: Vec<usize> = self.exact.get(tool).cloned().unwrap_or_default();
        for i in self.globs.matches(tool) {
            hits.extend_from_slice(&self.glob_rules[i]);
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }
}

pub use crate::names::{mcp_name_prefix, mcp_tool_name, sanitize_name_part};

fn tool_cel_value(
    name: &str,
    source: &ToolSource,
    scope: Scope,
    safety: &Safety,
    deferred: bool,
) -> ::cel::Value {
    let v = serde_json::json!({
        "name": name,
        "server": source.server(),
        "remote_name": source.remote_name(),
        "scope": scope.as_str(),
        "side_effect": safety.side_effect.as_str(),
        "permission": safety.permission.as_str(),
        "deferred": deferred,
    });
    crate::cel::json::to_cel(&v)
}

/// What is needed to register one tool.
pub(crate) struct NewTool {
    pub name: String,
    pub description: String,
    pub source: ToolSource,
    pub scope: Scope,
    pub safety: Safety,
    pub parameters: Arc<serde_json::Value>,
    pub deferred: bool,
    pub deferral_eligible: bool,
    pub hints: Option<serde_json::Value>,
    pub reject: Vec<Arc<Rule>>,
    pub effects: Option<Arc<ToolEffects>>,
    pub agent: Option<String>,
    pub dispatcher: Dispatcher,
    pub pin: Option<PinState>,
}

/// How many sessions the registry keeps converted.
const SESSIONS_KEPT: usize = 16;

impl Registry {
    /// The session's CEL values: converted on its first call, then shared.
    pub(crate) fn session_cel(
        &self,
        session: &crate::call::Session,
    ) -> Arc<crate::call::SessionCel> {
        let mut kept = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = kept.iter().position(|(s, _)| s == session) {
            kept[..=i].rotate_right(1);
            return Arc::clone(&kept[0].1);
        }
        let built = Arc::new(session.to_cel());
        kept.truncate(SESSIONS_KEPT - 1);
        kept.insert(0, (session.clone(), Arc::clone(&built)));
        built
    }

    /// Builds the registry of a loaded policy's manifest tools.
    ///
    /// # Errors
    /// A setting the scrubber cannot use, or the CEL function library failed to register.
    pub fn new(policy: &Policy) -> Result<Registry, RegistryError> {
        let secret_values: Vec<String> = policy
            .settings
            .secret_env
            .iter()
            .filter_map(|n| std::env::var(n).ok())
            .collect();
        let scrubber = Scrubber::new(&policy.settings.secret_patterns, secret_values)
            .map_err(|e| RegistryError::Settings(e.to_string()))?;
        Self::with_scrubber(policy, scrubber)
    }

    /// As [`Registry::new`] with a given scrubber.
    ///
    /// # Errors
    /// The CEL function library failed to register (a bug).
    pub fn with_scrubber(policy: &Policy, scrubber: Scrubber) -> Result<Registry, RegistryError> {
        let root = policy
            .cel
            .root_context(
                &policy.patterns,
                &policy.lists,
                policy.settings.case_insensitive,
            )
            .map_err(RegistryError::Settings)?;
        let mut reg = Registry {
            tools: Vec::new(),
            index: HashMap::default(),
            commands: policy.commands.clone(),
            catalog_base: policy.catalog,
            catalog: std::sync::OnceLock::new(),
            rule_index: RuleIndex::new(&policy.rules),
            rules: policy.rules.clone(),
            settings: policy.settings.clone(),
            servers: policy.servers.clone(),
            skipped: Vec::new(),
            scrubber,
            lock: None,
            root,
            sessions: std::sync::Mutex::new(Vec::new()),
            batches: std::sync::Mutex::new(HashMap::new()),
            guard: crate::guard::Guard::default(),
            host: None,
        };
        // The folder a hook reads when it is given no paths: an agent that wrote
        // one there would be governed by its own policy from its next call on.
        let home = reg.settings.home.clone();
        reg.guard([format!(
            "{}/.config/zero-policy",
            home.trim_end_matches('/')
        )]);
        for t in &policy.tools {
            let source = ToolSource::Manifest {
                file: t.origin.file.name.clone(),
                line: t.origin.line(),
            };
            reg.insert(NewTool {
                name: t.name.clone(),
                description: t.description.clone(),
                source,
                scope: t.scope,
                safety: t.safety.clone(),
                parameters: t.parameters.clone(),
                deferred: t.deferred,
                deferral_eligible: t.deferral_eligible,
                hints: None,
                reject: t.reject.clone(),
                effects: t.effects.clone(),
                agent: t.agent.clone(),
                dispatcher: Dispatcher::None,
                pin: None,
            })?;
        }
        Ok(reg)
    }

    /// Decides every later call on this host (a front door that runs where the
    /// call will: `hook`, `run`, `serve`, `explain --host`): its paths are also
    /// checked as the files they reach, and its searches against the tree they
    /// would walk, within `host`'s bounds (docs/effects.md). Without it, a
    /// call is decided the same on every machine.
    ///
    /// # Errors
    /// An entry of `settings.paths.credentials` names no list or is not a glob.
    pub fn ground_in_host(
        &mut self,
        host: crate::effects::ground::Host,
        lists: &std::collections::BTreeMap<String, Vec<String>>,
    ) -> Result<(), RegistryError> {
        let home = self.settings.home.trim_end_matches('/').to_string();
        let mut globs = Vec::new();
        for entry in &self.settings.credentials {
            match entry.strip_prefix("lists.") {
                Some(name) => globs.extend(
                    lists
                        .get(name)
                        .ok_or_else(|| {
                            RegistryError::Settings(format!(
                                "`settings.paths.credentials` names `lists.{name}`, which no file defines"
                            ))
                        })?
                        .iter()
                        .cloned(),
                ),
                None => globs.push(match entry.strip_prefix("~/") {
                    Some(rest) => format!("{home}/{rest}"),
                    None => entry.clone(),
                }),
            }
        }
        let compiled =
            crate::effects::globs::PathGlobs::deferred(&globs, self.settings.case_insensitive)
                .map_err(|e| {
                    RegistryError::Settings(format!("`settings.paths.credentials`: {e}"))
                })?;
        self.host = Some((host, compiled));
        Ok(())
    }

    /// Whether calls are decided on their host ([`Registry::ground_in_host`]).
    #[must_use]
    pub fn grounded(&self) -> bool {
        self.host.is_some()
    }

    /// Adds one tool, resolving its rules. Relax rules that would relax a
    /// `deny` tool are not applied to it, and that is recorded.
    pub(crate) fn insert(&mut self, t: NewTool) -> Result<(), RegistryError> {
        if self
            .index
            .get(&t.name)
            .is_some_and(|v| v.iter().any(|&i| self.tools[i].agent == t.agent))
        {
            return Err(RegistryError::Duplicate(t.name));
        }
        let tool = self.build_tool(t)?;
        self.push(tool);
        Ok(())
    }

    fn push(&mut self, tool: RegisteredTool) {
        self.index
            .entry(tool.name.clone())
            .or_default()
            .push(self.tools.len());
        self.tools.push(Arc::new(tool));
    }

    /// Resolves a new tool's rules and compiles its schema.
    fn build_tool(&self, mut t: NewTool) -> Result<RegisteredTool, RegistryError> {
        // A definition that is not the pinned one is decided at least
        // `settings.gateway.pinning`, and no relax rule may undo that.
        let pin_floor = match t.pin {
            Some(PinState::Changed | PinState::Unpinned)
                if self.settings.pinning > Permission::Allow =>
            {
                let why = t
                    .pin
                    .map(|p| p.describe(t.source.server(), t.source.remote_name()));
                if t.safety.permission < self.settings.pinning {
                    t.safety.permission = self.settings.pinning;
                    t.safety.reason.clone_from(&why);
                }
                why
            }
            _ => None,
        };
        // A manifest's schema compiled when it loaded; any other is compiled now,
        // and one that does not compile is refused.
        let validator = std::sync::OnceLock::new();
        if !matches!(t.source, ToolSource::Manifest { .. }) {
            let Ok(v) = jsonschema::draft202012::new(&t.parameters) else {
                return Err(RegistryError::InvalidSchema(
                    t.name,
                    "it does not compile".into(),
                ));
            };
            let _ = validator.set(Some(v));
        }
        let mut relax = Vec::new();
        let mut sandbox = Vec::new();
        let mut skipped_relax = Vec::new();
        for k in self.rule_index.candidates(&t.name) {
            let rule = &self.rules[k];
            // The index finds candidates; each rule's own patterns decide.
            if !rule.tools.is_match(&t.name) {
                continue;
            }
            match rule.kind {
                RuleKind::Sandbox => sandbox.push(Arc::clone(rule)),
                RuleKind::Relax => {
                    if let Some(why) = &pin_floor {
                        skipped_relax.push((rule.id.clone(), why.clone()));
                    } else if t.safety.permission == Permission::Deny {
                        skipped_relax.push((
                            rule.id.clone(),
                            "the tool's permission is `deny`, which nothing relaxes".into(),
                        ));
                    } else {
                        relax.push(Arc::clone(rule));
                    }
                }
                RuleKind::Reject => {}
            }
        }
        let needs_effects = t
            .reject
            .iter()
            .chain(&relax)
            .chain(&sandbox)
            .any(|r| r.when.reads_call);
        Ok(RegisteredTool {
            agent: t.agent,
            effects: t.effects,
            needs_effects,
            offline: false,
            pin: t.pin,
            name: t.name.clone(),
            description: t.description,
            source: t.source,
            scope: t.scope,
            safety: t.safety,
            parameters: t.parameters,
            deferred: t.deferred,
            deferral_eligible: t.deferral_eligible,
            hints: t.hints,
            skipped_relax,
            validator,
            plain: std::sync::OnceLock::new(),
            reject: t.reject,
            relax,
            sandbox,
            cel: std::sync::OnceLock::new(),
            dispatcher: t.dispatcher,
            batches: std::sync::OnceLock::new(),
        })
    }

    /// Adds several tools, all or none: nothing is added if any name is taken
    /// (by a registered tool or by another of the same batch) or any schema is invalid.
    pub(crate) fn insert_all(&mut self, tools: Vec<NewTool>) -> Result<(), RegistryError> {
        let mut names = std::collections::HashSet::new();
        let mut built = Vec::with_capacity(tools.len());
        for t in tools {
            if self.index.contains_key(&t.name) || !names.insert(t.name.clone()) {
                return Err(RegistryError::Duplicate(t.name));
            }
            // Builds (and so compiles the schema) once; nothing is added yet.
            built.push(self.build_tool(t)?);
        }
        for tool in built {
            self.push(tool);
        }
        Ok(())
    }

    /// Registers a tool defined in code; its rules are resolved like any other's.
    ///
    /// # Errors
    /// The name is taken or the parameters are not a valid schema.
    pub fn register_tool(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let safety = tool.safety();
        let scope = tool.scope();
        let name = tool.name().to_string();
        self.insert(NewTool {
            name,
            description: tool.description().to_string(),
            source: ToolSource::Builtin,
            scope,
            safety,
            parameters: Arc::new(tool.parameters()),
            deferred: false,
            deferral_eligible: false,
            hints: None,
            reject: Vec::new(),
            effects: None,
            agent: None,
            dispatcher: Dispatcher::new(tool),
            pin: None,
        })
    }

    /// Attaches the code that runs a tool declared in a manifest.
    ///
    /// # Errors
    /// No such tool.
    pub fn attach_executor(
        &mut self,
        name: &str,
        executor: Arc<dyn Executor>,
    ) -> Result<(), RegistryError> {
        // The shared tool of that name, as `get` finds it (an agent's own tool
        // of the same name is another tool).
        let i = self
            .index
            .get(name)
            .and_then(|v| {
                v.iter()
                    .find(|&&i| self.tools[i].agent.is_none())
                    .or(if v.len() == 1 { v.first() } else { None })
                    .copied()
            })
            .ok_or_else(|| RegistryError::Unknown(name.to_string()))?;
        let slot = &mut self.tools[i];
        match Arc::get_mut(slot) {
            Some(t) => {
                t.dispatcher = Dispatcher::new(executor);
                Ok(())
            }
            None => Err(RegistryError::InUse(name.to_string())),
        }
    }

    /// A tool by final name: the shared one, or the only one of that name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        let v = self.index.get(name)?;
        v.iter()
            .find(|&&i| self.tools[i].agent.is_none())
            .or(if v.len() == 1 { v.first() } else { None })
            .map(|&i| self.tools[i].as_ref())
    }

    /// The tool a call made for `agent` names: the agent's own tool first, then
    /// the shared one, then a tool of a declared MCP server resolved offline.
    #[must_use]
    pub fn lookup(&self, name: &str, agent: &str) -> Lookup {
        if let Some(v) = self.index.get(name) {
            if let Some(&i) = v
                .iter()
                .find(|&&i| self.tools[i].agent.as_deref() == Some(agent))
            {
                return Lookup::Found(Arc::clone(&self.tools[i]));
            }
            if let Some(&i) = v.iter().find(|&&i| self.tools[i].agent.is_none()) {
                return Lookup::Found(Arc::clone(&self.tools[i]));
            }
            let mut agents: Vec<String> = v
                .iter()
                .filter_map(|&i| self.tools[i].agent.clone())
                .collect();
            agents.sort();
            return if agent.is_empty() {
                Lookup::Ambiguous(agents)
            } else {
                Lookup::NotForAgent(agents)
            };
        }
        match self.offline_tool(name) {
            Some(t) => Lookup::Found(Arc::new(t)),
            None => Lookup::Unknown,
        }
    }

    /// A tool of a declared server that registered nothing, resolved from the
    /// manifest alone: its safety, overrides and effects, no parameters. A
    /// server whose names have no prefix (`mcp_name_format: "{tool}"`) is left
    /// out: every unknown name would be taken for one of its tools; its
    /// tools are known once it has listed them.
    fn offline_tool(&self, name: &str) -> Option<RegisteredTool> {
        let (server, remote) = self.servers.iter().find_map(|s| {
            let format = s.name_format(&self.settings.mcp_name_format);
            let prefix = mcp_name_prefix(format, &s.name);
            if prefix.is_empty() {
                return None;
            }
            let suffix = format.split("{tool}").nth(1).unwrap_or("");
            let rest = name.strip_prefix(&prefix)?.strip_suffix(suffix)?;
            (!rest.is_empty()).then_some((s, rest.to_string()))
        })?;
        if self.tools.iter().any(|t| t.source.server() == server.name) {
            // The server is connected: its tools are the ones it listed.
            return None;
        }
        let (safety, safety_from, effects) = server.host_tool(&remote);
        let mut tool = self
            .build_tool(NewTool {
                name: name.to_string(),
                description: format!("Call MCP tool {}/{remote}", server.name),
                source: ToolSource::Mcp {
                    server: server.name.clone(),
                    remote_name: remote,
                    safety_from,
                },
                scope: safety.side_effect.default_scope(),
                safety,
                parameters: Arc::new(serde_json::json!({"type": "object"})),
                deferred: true,
                deferral_eligible: true,
                hints: None,
                reject: Vec::new(),
                effects,
                agent: None,
                dispatcher: Dispatcher::None,
                pin: None,
            })
            .ok()?;
        tool.offline = true;
        Some(tool)
    }

    /// The tool's rules as batches: made on its first call (shared with every
    /// tool of the same rules), their glob and regex sets on the next.
    pub(crate) fn batches<'t>(&self, tool: &'t RegisteredTool) -> &'t RuleBatches {
        let b = tool.batches.get_or_init(|| {
            let ids = |rules: &[Arc<Rule>]| rules.iter().map(|r| Arc::as_ptr(r) as usize).collect();
            let key = [ids(&tool.reject), ids(&tool.relax), ids(&tool.sandbox)];
            let mut made = self
                .batches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(made.entry(key).or_insert_with(|| {
                let of = |rules: &[Arc<Rule>]| Batch::new(rules.iter().map(|r| &r.when));
                Arc::new(RuleBatches {
                    reject: of(&tool.reject),
                    relax: of(&tool.relax),
                    sandbox: of(&tool.sandbox),
                    called: std::sync::atomic::AtomicBool::new(false),
                })
            }))
        });
        if b.called.swap(true, std::sync::atomic::Ordering::Relaxed) {
            b.reject.index();
            b.relax.index();
            b.sandbox.index();
        }
        b
    }

    /// The command catalog calls are analysed with (the shipped one plus the
    /// policy's `commands:`), built the first time a script is analysed.
    pub fn catalog(&self) -> &Catalog {
        self.catalog
            .get_or_init(|| Arc::new(Catalog::with_additions(self.catalog_base, &self.commands)))
    }

    /// Every tool, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter().map(AsRef::as_ref)
    }

    /// The settings in force.
    #[must_use]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// How the tools of MCP server `server` are named: its own
    /// `mcp_name_format`, else the settings' (also for an undeclared server).
    #[must_use]
    pub fn name_format(&self, server: &str) -> &str {
        self.servers
            .iter()
            .find(|s| s.name == server)
            .map_or(self.settings.mcp_name_format.as_str(), |s| {
                s.name_format(&self.settings.mcp_name_format)
            })
    }

    /// The declared MCP servers.
    #[must_use]
    pub fn servers(&self) -> &[ServerDef] {
        &self.servers
    }

    /// Servers that registered nothing, with reasons.
    #[must_use]
    pub fn skipped_servers(&self) -> &[SkippedServer] {
        &self.skipped
    }

    pub(crate) fn skip_server(&mut self, s: SkippedServer) {
        self.skipped.push(s);
    }

    /// Sets the lock MCP tools are checked against when they register; `None` turns pinning off.
    pub fn set_lock(&mut self, lock: Option<Arc<Lock>>) {
        self.lock = lock;
    }

    /// The lock in force, if any.
    #[must_use]
    pub fn lock(&self) -> Option<&Lock> {
        self.lock.as_deref()
    }

    /// The secret scrubber every output leaves through.
    #[must_use]
    pub fn scrubber(&self) -> &Scrubber {
        &self.scrubber
    }

    /// The closest registered name, for "did you mean".
    #[must_use]
    pub fn closest_name(&self, name: &str) -> Option<&str> {
        crate::diagnostic::closest(name, self.tools.iter().map(|t| t.name.as_str()))
    }

    /// Whether `name` would be a tool of a declared MCP server (registered or not).
    #[must_use]
    pub fn is_mcp_name(&self, name: &str) -> bool {
        self.servers.iter().any(|s| {
            name.starts_with(&mcp_name_prefix(
                s.name_format(&self.settings.mcp_name_format),
                &s.name,
            ))
        })
    }

    /// Whether a tool of that name is registered.
    #[must_use]
    pub fn has_tool(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Tools advertised to a model: `deny` tools never; deferred ones left out
    /// (behind `tool_search`) when at least `defer_threshold` visible tools are
    /// deferral-eligible.
    #[must_use]
    pub fn advertised(&self) -> (Vec<&RegisteredTool>, bool) {
        self.advertised_where(|_| true)
    }

    /// As [`Registry::advertised`], among the tools `keep` accepts only (the
    /// gateway keeps the tools it can run).
    #[must_use]
    pub fn advertised_where(
        &self,
        keep: impl Fn(&RegisteredTool) -> bool,
    ) -> (Vec<&RegisteredTool>, bool) {
        let visible: Vec<&RegisteredTool> = self
            .tools()
            .filter(|t| t.safety.permission != Permission::Deny && keep(t))
            .collect();
        let threshold = self.settings.defer_threshold as usize;
        let eligible = visible.iter().filter(|t| t.deferral_eligible).count();
        let defer = threshold > 0 && eligible >= threshold;
        if defer {
            (visible.into_iter().filter(|t| !t.deferred).collect(), true)
        } else {
            (visible, false)
        }
    }

    /// Finds deferred tools by `select:a,b` or keywords; at most 10.
    #[must_use]
    pub fn search(&self, query: &str) -> Vec<&RegisteredTool> {
        self.search_where(query, |_| true)
    }

    /// As [`Registry::search`], among the tools `keep` accepts only.
    #[must_use]
    pub fn search_where(
        &self,
        query: &str,
        keep: impl Fn(&RegisteredTool) -> bool,
    ) -> Vec<&RegisteredTool> {
        let candidates = self
            .tools()
            .filter(|t| t.safety.permission != Permission::Deny && keep(t));
        if let Some(list) = query.trim().strip_prefix("select:") {
            let names: Vec<&str> = list.split(',').map(str::trim).collect();
            return candidates
                .filter(|t| names.contains(&t.name.as_str()))
                .take(10)
                .collect();
        }
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut scored: Vec<(usize, &RegisteredTool)> = candidates
            .filter_map(|t| {
                let hay = format!("{} {}", t.name, t.description).to_lowercase();
                let score = words.iter().filter(|w| hay.contains(w.as_str())).count();
                (score > 0).then_some((score, t))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        scored.into_iter().take(10).map(|(_, t)| t).collect()
    }

    /// A rule by id, of any kind.
    #[must_use]
    pub fn rule(&self, id: &str) -> Option<&Arc<Rule>> {
        self.rules.iter().find(|r| r.id == id).or_else(|| {
            self.tools
                .iter()
                .flat_map(|t| t.reject.iter())
                .find(|r| r.id == id)
        })
    }
}

/// What a tool name resolves to for one call.
#[derive(Debug)]
pub enum Lookup {
    /// The tool.
    Found(Arc<RegisteredTool>),
    /// Only agents define the name, and the call names no agent.
    Ambiguous(Vec<String>),
    /// Only other agents define the name.
    NotForAgent(Vec<String>),
    /// No such tool.
    Unknown,
}

/// For `explain`: the origin of a rule as `file:line`.
#[must_use]
pub fn origin_text(o: &Origin) -> String {
    format!("{}:{}", o.file.name, o.line())
}
