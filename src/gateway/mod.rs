//! The MCP gateway (`zero-policy serve`, SPEC §8): an MCP server in front of
//! the manifests' MCP servers, deciding every call through the one dispatch path.
//!
//! - [`handler`]: the MCP server side (rmcp `ServerHandler`): `tools/list`,
//!   `tool_search`, `tools/call` through [`Registry::dispatch_asking`], `prompt`
//!   asked by elicitation, one decision-log line per call.
//! - [`upstreams`]: one supervisor per upstream server: connect and list in
//!   the background, health checks, reconnect with backoff; each change
//!   rebuilds the registry and tells clients `notifications/tools/list_changed`.
//! - [`reload`]: watches the policy files and swaps in a new registry atomically;
//!   a file that no longer loads keeps the last good policy.
//! - [`http`]: streamable HTTP in (`--listen`), with the bearer token, `Host`
//!   and `Origin` checks.
//! - [`pin`]: `zero-policy pin`, the lock of upstream tool definitions.
//!
//! The registry in force is an `Arc` swapped whole: a call takes the current one
//! when it starts and finishes under it, whatever is swapped in meanwhile.

pub mod handler;
pub mod http;
pub mod pin;
pub mod relay;
pub mod reload;
pub mod surfaces;
pub mod upstreams;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::Tool as McpTool;
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::call::Session;
use crate::diagnostic::Severity;
use crate::loader::{self, Loaded};
use crate::lock::Lock;
use crate::log;
use crate::mcp::client::RemoteTool;
use crate::mcp::register::{self, Connection};
use crate::policy::Policy;
use crate::registry::{RegisteredTool, Registry, SkippedServer};

/// How long the first `tools/list` waits for servers still making their first
/// connection: clients that list once, right after `initialize`, see the
/// servers that start quickly; slower ones arrive with `list_changed`.
pub const STARTUP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The name of the gateway's own search tool, advertised when tools are deferred.
pub const TOOL_SEARCH: &str = "tool_search";

/// Where the gateway reads its policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// Files and folders on disk (watched for changes).
    Paths(Vec<PathBuf>),
    /// The shipped default, embedded in the binary (never changes).
    Builtin,
    /// A signed bundle (its file and signature watched for changes).
    Bundle(crate::bundle::source::BundleSource),
}

impl PolicySource {
    /// Reads and loads the files.
    ///
    /// # Errors
    /// A path does not exist or cannot be read.
    pub fn load(&self) -> Result<Loaded, String> {
        match self {
            PolicySource::Paths(p) => loader::load_paths(p).map_err(|e| e.to_string()),
            PolicySource::Builtin => Ok(loader::load_sources(crate::builtin::sources())),
            PolicySource::Bundle(b) => {
                let resolved = b.resolve(crate::bundle::source::cache_root().as_deref())?;
                Ok(loader::load_sources(resolved.bundle.sources()))
            }
        }
    }

    /// Where `zero-policy.lock` lives for this source.
    #[must_use]
    pub fn lock_path(&self) -> PathBuf {
        match self {
            PolicySource::Paths(p) => loader::lock::lock_path(p),
            PolicySource::Builtin | PolicySource::Bundle(_) => loader::lock::lock_path(&[]),
        }
    }

    /// Where this policy comes from, or could come from next
    /// ([`loader::policy_places`]).
    #[must_use]
    pub fn places(&self) -> Vec<PathBuf> {
        match self {
            PolicySource::Paths(p) => loader::policy_places(p),
            PolicySource::Builtin => loader::policy_places(&[]),
            PolicySource::Bundle(b) => b.places(),
        }
    }
}

/// A policy loaded from a bundle: the policy, the bundle's version, and the
/// note when the bundle at the location was refused and the last good one
/// was loaded instead.
#[derive(Debug)]
pub struct FromBundle {
    /// The loaded policy.
    pub policy: Policy,
    /// The version of the bundle it came from.
    pub version: String,
    /// Why the bundle at the location was refused, if it was.
    pub note: Option<String>,
}

/// Loads the policy of a bundle source.
///
/// # Errors
/// No good bundle (every call is to be denied), or its files have errors.
pub fn load_bundle(source: &crate::bundle::source::BundleSource) -> Result<FromBundle, String> {
    let resolved = source.resolve(crate::bundle::source::cache_root().as_deref())?;
    let loaded = loader::load_sources(resolved.bundle.sources());
    match loaded.policy {
        Some(policy) => Ok(FromBundle {
            policy,
            version: resolved.bundle.version().to_string(),
            note: resolved.note,
        }),
        None => Err(describe_errors(&loaded)),
    }
}

/// The loaded policy, or every error of a load that failed, as one message.
///
/// # Errors
/// The files could not be read, or have errors (the first few are quoted with file:line:col).
pub fn load_policy(source: &PolicySource) -> Result<Policy, String> {
    let loaded = source.load()?;
    match loaded.policy {
        Some(p) => Ok(p),
        None => Err(describe_errors(&loaded)),
    }
}

fn describe_errors(loaded: &Loaded) -> String {
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let place = d.place();
            format!("{place}{} [{}]", d.message, d.code.as_str())
        })
        .collect();
    let shown: Vec<&String> = errors.iter().take(5).collect();
    format!(
        "the policy does not load ({} error{}): {}",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" },
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// One upstream server that is connected, with the tools it listed.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub connection: Connection,
    pub tools: Vec<RemoteTool>,
    /// What the server declared at `initialize` (`resources`, `prompts`, …).
    pub capabilities: serde_json::Value,
}

/// What a server is doing, for error messages about its tools.
#[derive(Debug, Clone)]
pub(crate) enum Status {
    Connecting,
    Up,
    Down(SkippedServer),
}

/// The registry in force and what the gateway shows of it.
pub struct Snapshot {
    /// The registry every call of this snapshot is decided by.
    pub registry: Arc<Registry>,
    /// The hash of the loaded files, for the log.
    pub policy_hash: String,
    /// The `tools/list` answer.
    pub tools: Arc<Vec<McpTool>>,
    /// Deferred tools are behind `tool_search`.
    pub deferring: bool,
    /// The shadow policy (`settings.shadow`) with the same upstreams, or
    /// why it could not be loaded.
    pub shadow: Option<Result<Arc<crate::shadow::Shadow>, String>>,
}

/// The shadow policy `policy` names, loaded; or why it is ignored (also
/// said on stderr).
fn load_shadow(
    policy: &Policy,
    places: &[PathBuf],
) -> Option<Result<Arc<crate::shadow::Shadow>, String>> {
    let spec = policy.settings.shadow.as_ref()?;
    Some(
        match crate::shadow::load(spec, loader::Purpose::Check, places, false) {
            Ok(s) => {
                if let Some(note) = &s.note {
                    crate::output::stderr(&format!("zero-policy serve: shadow: {note}\n"));
                }
                Ok(Arc::new(s))
            }
            Err(why) => {
                let why = crate::shadow::failure(spec, &why);
                crate::output::stderr(&format!("zero-policy serve: {why}\n"));
                Err(why)
            }
        },
    )
}

/// The gateway's shared state.
pub struct Gateway {
    pub(crate) source: PolicySource,
    policy: Mutex<Arc<Policy>>,
    lock: Mutex<Option<Arc<Lock>>>,
    snapshot: RwLock<Arc<Snapshot>>,
    pub(crate) live: Mutex<BTreeMap<String, Live>>,
    pub(crate) status: Mutex<BTreeMap<String, Status>>,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Cancelled on shutdown: every in-flight call ends, every supervisor stops.
    pub shutdown: CancellationToken,
    pub(crate) session: Session,
    /// The shadow policy as loaded, before its upstreams' tools are added.
    shadow: Mutex<Option<Result<Arc<crate::shadow::Shadow>, String>>>,
    log: log_writer::LogWriter,
    /// Connections retired while calls may still use them; closed at shutdown.
    pub(crate) retired: Mutex<Vec<Connection>>,
    pub(crate) supervisors: upstreams::Supervisors,
    started: std::time::Instant,
    /// The version of the bundle in force, for the log.
    bundle: Mutex<Option<String>>,
    /// Calls in flight, for what servers say back during them.
    pub(crate) relays: relay::Relays,
}

pub(crate) mod log_writer;

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Whether a tool is one the gateway can serve as a tool: it has code to run
/// it, and is not a protocol surface (`resources/read`, `prompts/get`).
fn served(t: &RegisteredTool) -> bool {
    t.runnable() && !crate::names::is_surface_name(&t.name)
}

impl Gateway {
    /// A gateway over a loaded policy; nothing is connected yet (see
    /// [`upstreams::start`]).
    ///
    /// # Errors
    /// The lock cannot be read, or the registry cannot be built.
    pub fn new(source: PolicySource, policy: Policy) -> Result<Arc<Gateway>, String> {
        let lock = Lock::read(&source.lock_path())?.map(Arc::new);
        let shadow = load_shadow(&policy, &source.places());
        let snapshot = build_snapshot(
            &policy,
            lock.clone(),
            (&BTreeMap::new(), &BTreeMap::new()),
            &source.places(),
            shadow.as_ref(),
        )?;
        let log = log_writer::LogWriter::start(
            policy.settings.log_path.clone(),
            policy.settings.log_chain,
            (
                policy.settings.log_syslog.clone(),
                policy.settings.log_otlp.clone(),
            ),
        );
        Ok(Arc::new(Gateway {
            source,
            policy: Mutex::new(Arc::new(policy)),
            lock: Mutex::new(lock),
            snapshot: RwLock::new(Arc::new(snapshot)),
            live: Mutex::new(BTreeMap::new()),
            status: Mutex::new(BTreeMap::new()),
            peers: Mutex::new(Vec::new()),
            shutdown: CancellationToken::new(),
            session: Session::default(),
            shadow: Mutex::new(shadow),
            log,
            retired: Mutex::new(Vec::new()),
            supervisors: upstreams::Supervisors::default(),
            started: std::time::Instant::now(),
            bundle: Mutex::new(None),
            relays: relay::Relays::default(),
        }))
    }

    /// The snapshot in force.
    #[must_use]
    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.snapshot.read() {
            Ok(s) => Arc::clone(&s),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// The last policy that loaded.
    pub(crate) fn policy(&self) -> Arc<Policy> {
        lock_or_recover(&self.policy).clone()
    }

    /// Whether a lock is in force.
    #[must_use]
    pub fn has_lock(&self) -> bool {
        lock_or_recover(&self.lock).is_some()
    }

    /// Swaps in a new policy (and re-reads the lock), then rebuilds.
    ///
    /// # Errors
    /// The lock cannot be read or the registry cannot be built; nothing changed.
    pub(crate) async fn replace_policy(&self, policy: Policy) -> Result<(), String> {
        let lock = Lock::read(&self.source.lock_path())?.map(Arc::new);
        // Check it builds before anything is swapped.
        let live = lock_or_recover(&self.live).clone();
        let status = lock_or_recover(&self.status).clone();
        let shadow = load_shadow(&policy, &self.source.places());
        let snapshot = build_snapshot(
            &policy,
            lock.clone(),
            (&live, &status),
            &self.source.places(),
            shadow.as_ref(),
        )?;
        *lock_or_recover(&self.shadow) = shadow;
        self.log.set_path(
            policy.settings.log_path.clone(),
            policy.settings.log_chain,
            (
                policy.settings.log_syslog.clone(),
                policy.settings.log_otlp.clone(),
            ),
        );
        *lock_or_recover(&self.policy) = Arc::new(policy);
        *lock_or_recover(&self.lock) = lock;
        self.install(snapshot).await;
        Ok(())
    }

    /// Rebuilds the registry from the policy in force and the live upstreams,
    /// and tells clients when the tool list changed.
    pub(crate) async fn rebuild(&self) {
        let policy = self.policy();
        let lock = lock_or_recover(&self.lock).clone();
        let live = lock_or_recover(&self.live).clone();
        let status = lock_or_recover(&self.status).clone();
        let shadow = lock_or_recover(&self.shadow).clone();
        match build_snapshot(
            &policy,
            lock,
            (&live, &status),
            &self.source.places(),
            shadow.as_ref(),
        ) {
            Ok(s) => self.install(s).await,
            Err(e) => self.note(&format!("cannot rebuild the registry: {e}")),
        }
    }

    async fn install(&self, snapshot: Snapshot) {
        let changed = {
            let mut slot = match self.snapshot.write() {
                Ok(s) => s,
                Err(poisoned) => poisoned.into_inner(),
            };
            let changed = slot.tools != snapshot.tools;
            *slot = Arc::new(snapshot);
            changed
        };
        if changed {
            self.notify_list_changed().await;
        }
    }

    /// Waits, up to [`STARTUP_GRACE`] after the start, while some server is
    /// still making its first connection.
    pub(crate) async fn settle(&self) {
        loop {
            let connecting = lock_or_recover(&self.status)
                .values()
                .any(|s| matches!(s, Status::Connecting));
            if !connecting
                || self.started.elapsed() >= STARTUP_GRACE
                || self.shutdown.is_cancelled()
            {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Waits while servers are making their first connection, so a call made
    /// right after `initialize` is not refused as "still connecting": `server`
    /// alone when given, else every server still connecting. Each wait is
    /// bounded by the server's `connect_timeout`, counted from now (its
    /// connect is bounded by the same). Returns whether anything was waited for.
    pub(crate) async fn await_first_connection(&self, server: Option<&str>) -> bool {
        let policy = self.policy();
        let connecting = |status: &BTreeMap<String, Status>| -> Vec<String> {
            status
                .iter()
                .filter(|(name, s)| {
                    matches!(s, Status::Connecting) && server.is_none_or(|w| w == name.as_str())
                })
                .map(|(name, _)| name.clone())
                .collect()
        };
        let waiting = connecting(&lock_or_recover(&self.status));
        if waiting.is_empty() {
            return false;
        }
        let bound = policy
            .servers
            .iter()
            .filter(|s| waiting.contains(&s.name))
            .map(|s| s.connect_timeout)
            .max()
            .unwrap_or(policy.settings.connect_timeout);
        let deadline = tokio::time::Instant::now() + bound;
        while !connecting(&lock_or_recover(&self.status)).is_empty()
            && tokio::time::Instant::now() < deadline
            && !self.shutdown.is_cancelled()
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }

    /// Registers a client session, to be told when the tool list changes.
    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        lock_or_recover(&self.peers).push(peer);
    }

    /// The client sessions connected now.
    pub(crate) fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        lock_or_recover(&self.peers)
            .iter()
            .filter(|p| !p.is_transport_closed())
            .cloned()
            .collect()
    }

    async fn notify_list_changed(&self) {
        let peers: Vec<Peer<RoleServer>> = lock_or_recover(&self.peers).clone();
        let mut gone = Vec::new();
        for (i, p) in peers.iter().enumerate() {
            if p.notify_tool_list_changed().await.is_err() {
                gone.push(i);
            }
        }
        if !gone.is_empty() {
            let mut kept = lock_or_recover(&self.peers);
            let mut i = 0;
            kept.retain(|_| {
                let keep = !gone.contains(&i);
                i += 1;
                keep
            });
        }
    }

    /// A note on stderr and, as an `error` line, in the decision log.
    pub(crate) fn note(&self, message: &str) {
        let scrubbed = self
            .snapshot()
            .registry
            .scrubber()
            .scrub_str(message)
            .into_owned();
        crate::output::stderr(&format!("zero-policy serve: {scrubbed}\n"));
        self.log.write(log::Record {
            time: log::rfc3339_utc(std::time::SystemTime::now()),
            front: "serve".into(),
            session: String::new(),
            tool: String::new(),
            decision: "error".into(),
            answer: String::new(),
            reason: scrubbed,
            matched: Vec::new(),
            policy: self.snapshot().policy_hash.clone(),
            bundle: self.bundle(),
            duration_us: 0,
            ..log::Record::default()
        });
    }

    /// The version of the bundle in force, if the policy came from one.
    pub(crate) fn bundle(&self) -> Option<String> {
        lock_or_recover(&self.bundle).clone()
    }

    /// Records the version of the bundle now in force.
    pub(crate) fn set_bundle(&self, version: Option<String>) {
        *lock_or_recover(&self.bundle) = version;
    }

    /// Appends a decision to the log (in the background, in order).
    pub(crate) fn log(&self, record: log::Record) {
        self.log.write(record);
    }

    /// Why a server's tools cannot run now, for a call to one of them.
    pub(crate) fn server_status(&self, server: &str) -> String {
        match lock_or_recover(&self.status).get(server) {
            Some(Status::Connecting) | None => {
                format!("MCP server `{server}` is still connecting; try again shortly")
            }
            Some(Status::Up) => format!("MCP server `{server}` is connected"),
            Some(Status::Down(s)) => format!(
                "MCP server `{server}` is not connected ({}: {}); the gateway keeps trying to reconnect",
                s.reason, s.detail
            ),
        }
    }

    /// Connects to every declared server in the background.
    pub fn start_upstreams(self: &Arc<Self>) {
        upstreams::reconcile(self);
    }

    /// Stops everything: in-flight calls end, supervisors stop, every upstream
    /// connection is closed and every child process reaped, and the log is flushed.
    pub async fn stop(&self) {
        self.shutdown.cancel();
        // In-flight calls unwind first (bounded), so the cancellations they
        // send upstream leave before the connections close.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
        while self.relays.in_flight() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // Each supervisor closes its own connection; bounded, in case one is stuck.
        self.supervisors
            .join(std::time::Duration::from_secs(10))
            .await;
        let live: Vec<Connection> = std::mem::take(&mut *lock_or_recover(&self.live))
            .into_values()
            .map(|l| l.connection)
            .collect();
        let retired: Vec<Connection> = std::mem::take(&mut *lock_or_recover(&self.retired));
        let closing = live
            .into_iter()
            .chain(retired)
            .map(|c| async move { c.close().await });
        let mut set = tokio::task::JoinSet::new();
        for c in closing {
            set.spawn(c);
        }
        while set.join_next().await.is_some() {}
        self.log.flush().await;
    }
}

/// Builds a registry from a policy and the live upstreams, in server-name
/// order, and what `tools/list` shows of it.
fn build_snapshot(
    policy: &Policy,
    lock: Option<Arc<Lock>>,
    (live, status): (&BTreeMap<String, Live>, &BTreeMap<String, Status>),
    places: &[PathBuf],
    shadow: Option<&Result<Arc<crate::shadow::Shadow>, String>>,
) -> Result<Snapshot, String> {
    let registry = build_registry(policy, lock.clone(), live, status, places)?;
    // The shadow decides MCP calls with the tools of the same upstreams (the
    // servers it declares by the same names); it guards what the policy in
    // force guards, and its own files.
    let shadow = shadow.map(|s| {
        let s = s.as_ref().map_err(Clone::clone)?;
        let guarded: Vec<PathBuf> = places.iter().chain(&s.places).cloned().collect();
        build_registry(&s.policy, lock, live, status, &guarded)
            .map(|r| Arc::new(s.with_registry(r)))
            .map_err(|e| format!("the shadow policy is ignored: it cannot be used: {e}"))
    });
    let (listed, deferring) = registry.advertised_where(served);
    let mut tools: Vec<McpTool> = listed.iter().map(|t| listed_tool(t, live)).collect();
    if deferring {
        tools.push(handler::tool_search_tool());
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Snapshot {
        registry: Arc::new(registry),
        policy_hash: log::policy_hash(&policy.files),
        tools: Arc::new(tools),
        deferring,
        shadow,
    })
}

/// A registry of `policy` with the tools of the live upstreams it declares.
fn build_registry(
    policy: &Policy,
    lock: Option<Arc<Lock>>,
    live: &BTreeMap<String, Live>,
    status: &BTreeMap<String, Status>,
    places: &[PathBuf],
) -> Result<Registry, String> {
    let mut registry = Registry::new(policy).map_err(|e| e.to_string())?;
    registry.set_lock(lock);
    registry.guard(places);
    // The gateway runs where its tools do: calls are grounded in this host.
    registry
        .ground_in_host(
            crate::effects::ground::Host::within(policy.settings.walk_time),
            &policy.lists,
        )
        .map_err(|e| e.to_string())?;
    let mut servers: Vec<&crate::policy::ServerDef> = policy.servers.iter().collect();
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    for s in servers {
        match live.get(&s.name) {
            Some(l) => {
                let registered = register::register_listed(
                    &mut registry,
                    s,
                    &l.tools,
                    &l.connection,
                )
                .and_then(|()| {
                    register::register_surfaces(&mut registry, s, &l.capabilities, &l.connection)
                });
                if let Err(sk) = registered {
                    registry.skip_server(sk);
                }
            }
            None => registry.skip_server(match status.get(&s.name) {
                Some(Status::Down(sk)) => sk.clone(),
                _ => SkippedServer {
                    server: s.name.clone(),
                    reason: "connecting".into(),
                    detail: "the gateway is still connecting to it".into(),
                },
            }),
        }
    }
    Ok(registry)
}

/// A registered tool as `tool_search` shows it: name, description, input
/// schema (`tools/list` shows more, see `listed_tool`).
pub(crate) fn mcp_tool(t: &RegisteredTool) -> McpTool {
    let schema = match &*t.parameters {
        serde_json::Value::Object(m) => m.clone(),
        _ => serde_json::Map::from_iter([("type".to_string(), "object".into())]),
    };
    McpTool::new(t.name.clone(), t.description.clone(), Arc::new(schema))
}

/// A registered tool as `tools/list` shows it: for an MCP tool, its server's
/// whole definition (`title`, `outputSchema`, `icons`, `annotations`, `_meta`)
/// under the registered name, description and input schema. Annotations are
/// passed on for the client to show; no decision here reads them.
fn listed_tool(t: &RegisteredTool, live: &BTreeMap<String, Live>) -> McpTool {
    let minimal = mcp_tool(t);
    let crate::registry::ToolSource::Mcp {
        server,
        remote_name,
        ..
    } = &t.source
    else {
        return minimal;
    };
    let Some(definition) = live.get(server).and_then(|l| {
        l.tools
            .iter()
            .find(|r| r.name.as_deref() == Some(remote_name.as_str()))
            .map(|r| &r.definition)
    }) else {
        return minimal;
    };
    let serde_json::Value::Object(fields) = definition else {
        return minimal;
    };
    let mut fields = fields.clone();
    fields.insert("name".into(), minimal.name.to_string().into());
    if let Some(d) = &minimal.description {
        fields.insert("description".into(), d.to_string().into());
    }
    fields.insert(
        "inputSchema".into(),
        serde_json::Value::Object((*minimal.input_schema).clone()),
    );
    // A definition rmcp cannot read (an odd `icons` entry, say) is shown minimal.
    serde_json::from_value(serde_json::Value::Object(fields)).unwrap_or(minimal)
}

/// A poisoned lock still holds good data here: every writer replaces whole values.
pub(crate) fn lock_or_recover<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// How `serve` takes clients.
#[derive(Debug, Clone)]
pub enum Transport {
    /// One client on standard input and output.
    Stdio,
    /// Streamable HTTP.
    Http(http::HttpOptions),
}

/// Completes on SIGINT or SIGTERM.
pub(crate) async fn signalled() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs the gateway until the client goes (stdio: standard input ends), or
/// SIGINT or SIGTERM; then stops every upstream and reaps every child.
///
/// # Errors
/// The transport could not start (an address that cannot be bound, a refused
/// `--listen`); the upstreams are stopped all the same.
pub async fn run(gateway: Arc<Gateway>, transport: Transport) -> Result<(), String> {
    gateway.start_upstreams();
    reload::spawn(&gateway);
    let result = match transport {
        Transport::Stdio => {
            use rmcp::ServiceExt;
            let handler = handler::Handler::new(Arc::clone(&gateway));
            let served = async {
                let (read, write) = rmcp::transport::stdio_pipes();
                let transport = crate::mcp::lines::Lines::<RoleServer, _, _>::new(read, write);
                match handler.serve(transport).await {
                    Ok(running) => {
                        let _ = running.waiting().await;
                        Ok(())
                    }
                    // The client went before `initialize` finished: a clean stop.
                    Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
                    Err(e) => Err(format!("the MCP session failed to start: {e}")),
                }
            };
            tokio::select! {
                r = served => r,
                () = signalled() => Ok(()),
            }
        }
        Transport::Http(options) => {
            tokio::select! {
                r = http::serve(Arc::clone(&gateway), options) => r,
                () = signalled() => Ok(()),
            }
        }
    };
    gateway.stop().await;
    result
}
