//! Best-effort registration of MCP servers' tools (SPEC §2.2).
//!
//! All servers connect and list **concurrently**, each under its own timeout.
//! Then, **serially in server-name order**, each server's tools are named,
//! filtered, given the host's safety, checked, and committed **all or none**.
//! A server that fails anywhere is skipped with a reason code. The result
//! never depends on which server answered first.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::RwLock;

use crate::call::Call;
use crate::lock::definition_hash;
use crate::mcp::client::{self, ConnectSpec, McpError, RemoteTool, ToolClient, TransportSpec};
use crate::model::Transport;
use crate::policy::ServerDef;
use crate::registry::{NewTool, Registry, SkippedServer, ToolSource, mcp_tool_name};
use crate::runtime::{AsyncExecutor, BoxFuture, Dispatcher, Executor, ToolError, ToolOutput};

/// A live connection, shared by the server's tools' executors and closed at the end.
#[derive(Clone)]
pub struct Connection {
    server: String,
    client: Arc<RwLock<Option<Box<dyn ToolClient>>>>,
    /// Signalled when a call finds the connection gone (the server exited or hung up).
    dead: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish()
    }
}

impl Connection {
    /// Wraps a connected client of `server`.
    #[must_use]
    pub fn new(server: &str, client: Box<dyn ToolClient>) -> Connection {
        Connection {
            server: server.to_string(),
            client: Arc::new(RwLock::new(Some(client))),
            dead: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Whether both are the same connection.
    #[must_use]
    pub fn ptr_eq(&self, other: &Connection) -> bool {
        Arc::ptr_eq(&self.client, &other.client)
    }

    /// The server's name.
    #[must_use]
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Completes when a call has found the connection gone.
    pub async fn died(&self) {
        self.dead.notified().await;
    }

    /// Lists the server's tools again (a health check that also sees changed definitions).
    ///
    /// # Errors
    /// The connection is closed, the server is gone, or it did not answer in time.
    pub async fn list(&self) -> Result<Vec<RemoteTool>, McpError> {
        let guard = self.client.read().await;
        let Some(client) = guard.as_ref() else {
            return Err(McpError::Closed {
                server: self.server.clone(),
                message: "the connection is closed".into(),
            });
        };
        client.list_tools().await
    }

    /// Closes the connection and reaps a stdio server; in-flight calls finish first.
    pub async fn close(&self) {
        let client = self.client.write().await.take();
        if let Some(client) = client {
            client.close().await;
        }
    }

    /// Sends any other request to the server (a listing, `completion/complete`,
    /// `logging/setLevel`); its result as plain JSON. Not decided here: the
    /// gateway decides what acts (reads, prompts) through the registry.
    ///
    /// # Errors
    /// The connection is closed, the server is gone, or it answered an error.
    pub async fn request(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, McpError> {
        let guard = self.client.read().await;
        let Some(client) = guard.as_ref() else {
            return Err(McpError::Closed {
                server: self.server.clone(),
                message: "the connection is closed".into(),
            });
        };
        let result = client.request(method, params).await;
        if matches!(result, Err(McpError::Closed { .. })) {
            self.dead.notify_one();
        }
        result
    }

    async fn call(&self, remote: &str, args: &serde_json::Value) -> Result<ToolOutput, ToolError> {
        let guard = self.client.read().await;
        let Some(client) = guard.as_ref() else {
            return Err(ToolError::Failed(format!(
                "the connection to MCP server `{}` is closed",
                self.server
            )));
        };
        let map = args.as_object().cloned().unwrap_or_default();
        match client.call_tool(remote, map).await {
            // A tool's own failure (`isError`) is its result, passed on whole.
            Ok(out) => Ok(ToolOutput {
                text: if out.is_error && out.text.is_empty() && out.content.is_empty() {
                    format!("MCP tool `{}/{remote}` reported an error", self.server)
                } else {
                    out.text
                },
                structured: out.structured,
                notes: out.non_text,
                is_error: out.is_error,
                content: out.content,
                meta: out.meta,
            }),
            Err(e) => {
                if matches!(e, McpError::Closed { .. }) {
                    self.dead.notify_one();
                }
                Err(ToolError::Failed(e.to_string()))
            }
        }
    }
}

/// Every live connection of a registration; close them when done.
#[derive(Debug, Default)]
pub struct Connections {
    connections: Vec<Connection>,
}

impl Connections {
    /// Closes every connection and reaps every child process.
    pub async fn close(self) {
        for c in self.connections {
            c.close().await;
        }
    }

    /// The number of live connections.
    #[must_use]
    pub fn len(&self) -> usize {
        self.connections.len()
    }

    /// True when nothing is connected.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.connections.is_empty()
    }
}

/// Runs an MCP tool; only the registry's dispatch path reaches it.
struct McpExecutor {
    connection: Connection,
    remote_name: String,
}

impl Executor for McpExecutor {
    fn execute(&self, _call: &Call) -> Result<ToolOutput, ToolError> {
        // INVARIANT: `as_async` is always Some, so the registry never calls this.
        Err(ToolError::Failed("MCP tools run asynchronously".into()))
    }

    fn as_async(&self) -> Option<&dyn AsyncExecutor> {
        Some(self)
    }
}

impl AsyncExecutor for McpExecutor {
    fn execute_async<'a>(&'a self, call: &'a Call) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.connection.call(&self.remote_name, &call.args))
    }
}

/// Runs a server's `resources/read` or `prompts/get`; like [`McpExecutor`],
/// only the registry's dispatch path reaches it, after the decision.
struct SurfaceExecutor {
    connection: Connection,
    surface: &'static str,
}

impl Executor for SurfaceExecutor {
    fn execute(&self, _call: &Call) -> Result<ToolOutput, ToolError> {
        // INVARIANT: `as_async` is always Some, so the registry never calls this.
        Err(ToolError::Failed("MCP requests run asynchronously".into()))
    }

    fn as_async(&self) -> Option<&dyn AsyncExecutor> {
        Some(self)
    }
}

impl AsyncExecutor for SurfaceExecutor {
    fn execute_async<'a>(&'a self, call: &'a Call) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let params = match self.surface {
                // The server is sent its own URI; `path` and `url` are the
                // gateway's reading of it, for the policy.
                crate::names::RESOURCE_READ => serde_json::json!({"uri": call.args.get("uri")}),
                _ => call.args.clone(),
            };
            match self.connection.request(self.surface, Some(params)).await {
                Ok(result) => surface_output(self.surface, result),
                // The server's own refusal (an unknown URI, say) is its
                // answer: passed on with its code, as `isError` output.
                Err(McpError::Rpc { error, .. }) => {
                    let mut out = ToolOutput::text(error.message.to_string());
                    out.is_error = true;
                    out.structured = serde_json::to_value(&error).ok();
                    Ok(out)
                }
                Err(e) => Err(ToolError::Failed(e.to_string())),
            }
        })
    }
}

/// A surface's result as tool output, so the dispatch path scrubs it: a
/// read's contents as embedded-resource blocks (texts scrubbed, blobs left
/// whole), anything else as structured JSON (scrubbed as JSON).
fn surface_output(surface: &str, result: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let mut out = ToolOutput::text(String::new());
    if surface != crate::names::RESOURCE_READ {
        out.structured = Some(result);
        return Ok(out);
    }
    let serde_json::Value::Object(mut fields) = result else {
        return Err(ToolError::Failed(
            "the server's resources/read result is not an object".into(),
        ));
    };
    let contents = match fields.remove("contents") {
        Some(serde_json::Value::Array(items)) => items,
        _ => {
            return Err(ToolError::Failed(
                "the server's resources/read result has no `contents` array".into(),
            ));
        }
    };
    for (i, item) in contents.into_iter().enumerate() {
        let resource: rmcp::model::ResourceContents =
            serde_json::from_value(item).map_err(|e| {
                ToolError::Failed(format!(
                    "item {} of the server's resources/read contents is not readable: {e}",
                    i + 1
                ))
            })?;
        out.content.push(rmcp::model::ContentBlock::Resource(
            rmcp::model::EmbeddedResource::new(resource),
        ));
    }
    if let Some(meta) = fields.remove("_meta") {
        out.meta = serde_json::from_value(meta).ok();
    }
    Ok(out)
}

/// Registers the protocol surfaces a connected server offers (its
/// `resources/read` and `prompts/get`, by its declared capabilities) as
/// names the dispatch path decides: `mcp__{server}__resources/read` with
/// arguments `uri` (and `path` or `url`), `mcp__{server}__prompts/get` with
/// `name` and `arguments`. Their safety and effects come from the manifest
/// (`server.host_tool`), as a tool's do. They are never listed as tools.
///
/// # Errors
/// A name is already registered.
pub fn register_surfaces(
    registry: &mut Registry,
    server: &ServerDef,
    capabilities: &serde_json::Value,
    connection: &Connection,
) -> Result<(), SkippedServer> {
    let format = registry.name_format(&server.name).to_string();
    let mut out = Vec::new();
    for (capability, surface, schema) in [
        (
            "resources",
            crate::names::RESOURCE_READ,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "uri": {"type": "string"},
                    "path": {"type": "string"},
                    "url": {"type": "string"}
                },
                "required": ["uri"]
            }),
        ),
        (
            "prompts",
            crate::names::PROMPT_GET,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {"type": "object"}
                },
                "required": ["name"]
            }),
        ),
    ] {
        if capabilities
            .get(capability)
            .is_none_or(serde_json::Value::is_null)
        {
            continue;
        }
        let (safety, safety_from, effects) = server.host_tool(surface);
        out.push(NewTool {
            pin: None,
            name: crate::names::mcp_surface_name(&format, &server.name, surface),
            description: format!("MCP {surface} of server {}", server.name),
            source: ToolSource::Mcp {
                server: server.name.clone(),
                remote_name: surface.to_string(),
                safety_from,
            },
            scope: safety.side_effect.default_scope(),
            safety,
            parameters: Arc::new(schema),
            deferred: true,
            deferral_eligible: false,
            hints: None,
            reject: Vec::new(),
            effects,
            agent: None,
            dispatcher: Dispatcher::new(Arc::new(SurfaceExecutor {
                connection: connection.clone(),
                surface,
            })),
        });
    }
    registry
        .insert_all(out)
        .map_err(|e| skipped(&server.name, "name-conflict", e.to_string()))
}

/// What one server's connect-and-list gave.
enum Listed {
    Ok(Box<dyn ToolClient>, Vec<RemoteTool>, Duration),
    Skipped(SkippedServer),
}

/// Progress events, for a terminal.
#[derive(Debug, Clone)]
pub enum Progress {
    /// Connecting to a server.
    Connecting(String),
    /// A server listed its tools.
    Listed {
        /// The server.
        server: String,
        /// How many tools it listed.
        tools: usize,
        /// How long connect and list took.
        elapsed: Duration,
    },
    /// A server was skipped.
    Skipped(SkippedServer),
}

fn skipped(server: &str, reason: &str, detail: impl Into<String>) -> SkippedServer {
    SkippedServer {
        server: server.to_string(),
        reason: reason.to_string(),
        detail: detail.into(),
    }
}

/// The connect spec of a server, with `${env:NAME}` read from the host.
///
/// # Errors
/// A referenced environment variable is not set.
pub fn connect_spec(
    server: &ServerDef,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ConnectSpec, String> {
    let resolve_map = |m: &BTreeMap<String, crate::policy::EnvString>| {
        m.iter()
            .map(|(k, v)| v.resolve(lookup).map(|v| (k.clone(), v)))
            .collect::<Result<Vec<_>, String>>()
    };
    let transport = match server.transport {
        Transport::Stdio => {
            let command = server.command.clone().unwrap_or_default();
            let mut env = resolve_map(&server.env)?;
            match &server.sandbox {
                // Started through `zero-policy __confine`, which confines
                // itself to the envelope and then runs the server.
                Some(envelope) => {
                    let confined =
                        crate::sandbox::plan::confined_command(envelope, &command, &server.args)
                            .map_err(|e| e.to_string())?;
                    env.push(confined.env);
                    TransportSpec::Stdio {
                        command: confined.program,
                        args: confined.args,
                        env,
                        cwd: None,
                    }
                }
                None => TransportSpec::Stdio {
                    command,
                    args: server.args.clone(),
                    env,
                    cwd: None,
                },
            }
        }
        Transport::Http | Transport::Sse => {
            let url = server
                .url
                .as_ref()
                .map(|u| u.resolve(lookup))
                .transpose()?
                .unwrap_or_default();
            let headers = resolve_map(&server.headers)?;
            if server.transport == Transport::Http {
                let auth = match &server.auth {
                    Some(a) => {
                        let resolve = |v: &Option<crate::policy::EnvString>| {
                            v.as_ref().map(|v| v.resolve(lookup)).transpose()
                        };
                        let spec = crate::mcp::oauth::OAuthSpec {
                            grant: a.grant,
                            client_id: resolve(&a.client_id)?,
                            client_secret: resolve(&a.client_secret)?,
                            client_metadata_url: a.client_metadata_url.clone(),
                            scopes: a.scopes.clone(),
                            redirect_port: a.redirect_port,
                            open: a.open.clone(),
                            token_cache: a.token_cache.clone(),
                        };
                        Some(Arc::new(crate::mcp::oauth::OAuth::new(
                            &server.name,
                            &url,
                            spec,
                            server.connect_timeout,
                        )))
                    }
                    None => None,
                };
                TransportSpec::Http { url, headers, auth }
            } else {
                TransportSpec::Sse { url, headers }
            }
        }
    };
    Ok(ConnectSpec {
        server: server.name.clone(),
        transport,
        timeout: server.connect_timeout,
    })
}

/// Connects to one server and lists its tools, the whole under the server's
/// timeout; a failure is the skip reason `register_servers` records.
///
/// # Errors
/// The server could not be reached, timed out, or its listing failed.
pub async fn connect_and_list(
    spec: ConnectSpec,
) -> Result<(Box<dyn ToolClient>, Vec<RemoteTool>), SkippedServer> {
    connect_and_list_relayed(spec, None).await
}

/// As [`connect_and_list`], with what the server asks of its client and
/// tells it going to `downstream` ([`client::connect_relayed`]).
///
/// # Errors
/// The server could not be reached, timed out, or its listing failed.
pub async fn connect_and_list_relayed(
    spec: ConnectSpec,
    downstream: Option<Arc<dyn client::Downstream>>,
) -> Result<(Box<dyn ToolClient>, Vec<RemoteTool>), SkippedServer> {
    match connect_and_list_timed(spec, downstream).await {
        Listed::Ok(c, tools, _) => Ok((c, tools)),
        Listed::Skipped(s) => Err(s),
    }
}

async fn connect_and_list_timed(
    spec: ConnectSpec,
    downstream: Option<Arc<dyn client::Downstream>>,
) -> Listed {
    let server = spec.server.clone();
    let started = Instant::now();
    let budget = spec.timeout;
    let work = async {
        let c = client::connect_relayed(&spec, downstream).await?;
        match c.list_tools().await {
            Ok(tools) => Ok((c, tools)),
            Err(e) => {
                c.close().await;
                Err(e)
            }
        }
    };
    // The whole connect-and-list is bounded by the server's timeout (plus a margin
    // for the client's own, tighter bounds to fire first with a better message).
    match tokio::time::timeout(budget + Duration::from_millis(250), work).await {
        Ok(Ok((c, tools))) => Listed::Ok(c, tools, started.elapsed()),
        Ok(Err(e)) => Listed::Skipped(match &e {
            McpError::Connect { .. } => skipped(&server, "connect-failed", e.to_string()),
            McpError::Timeout { .. } => skipped(&server, "timeout", e.to_string()),
            McpError::List { .. }
            | McpError::Closed { .. }
            | McpError::Call { .. }
            | McpError::Rpc { .. } => skipped(&server, "list-failed", e.to_string()),
        }),
        Err(_) => Listed::Skipped(skipped(
            &server,
            "timeout",
            format!("no answer within {}", humantime(budget)),
        )),
    }
}

fn humantime(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Connects to every declared server and registers their tools.
///
/// Returns the live connections; close them when done. Skipped servers are
/// recorded in the registry ([`Registry::skipped_servers`]).
pub async fn register_servers(
    registry: &mut Registry,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Connections {
    let lookup = |name: &str| std::env::var(name).ok();
    let mut servers: Vec<ServerDef> = registry.servers().to_vec();
    servers.sort_by(|a, b| a.name.cmp(&b.name));

    // 1. Connect and list, concurrently.
    let mut tasks = tokio::task::JoinSet::new();
    let mut results: BTreeMap<String, Listed> = BTreeMap::new();
    for s in &servers {
        match connect_spec(s, &lookup) {
            Ok(spec) => {
                progress(Progress::Connecting(s.name.clone()));
                let name = s.name.clone();
                tasks.spawn(async move { (name, connect_and_list_timed(spec, None).await) });
            }
            Err(e) => {
                results.insert(
                    s.name.clone(),
                    Listed::Skipped(skipped(&s.name, "connect-failed", e)),
                );
            }
        }
    }
    while let Some(joined) = tasks.join_next().await {
        if let Ok((name, listed)) = joined {
            match &listed {
                Listed::Ok(_, tools, elapsed) => progress(Progress::Listed {
                    server: name.clone(),
                    tools: tools.len(),
                    elapsed: *elapsed,
                }),
                Listed::Skipped(s) => progress(Progress::Skipped(s.clone())),
            }
            results.insert(name, listed);
        }
    }

    // 2. Register, serially, in server-name order: all or none per server.
    let mut connections = Connections::default();
    for s in &servers {
        let Some(listed) = results.remove(&s.name) else {
            registry.skip_server(skipped(
                &s.name,
                "connect-failed",
                "the connection task failed",
            ));
            continue;
        };
        let (client, tools) = match listed {
            Listed::Ok(c, t, _) => (c, t),
            Listed::Skipped(sk) => {
                registry.skip_server(sk);
                continue;
            }
        };
        let connection = Connection::new(&s.name, client);
        match register_listed(registry, s, &tools, &connection) {
            Ok(()) => connections.connections.push(connection),
            Err(sk) => {
                registry.skip_server(sk);
                connection.close().await;
            }
        }
    }
    connections
}

/// Registers one connected server's listed tools, all or none.
///
/// # Errors
/// Why the server registered nothing (`nameless-tool`, `name-conflict`,
/// `invalid-schema`); the caller records it and closes the connection.
pub fn register_listed(
    registry: &mut Registry,
    server: &ServerDef,
    tools: &[RemoteTool],
    connection: &Connection,
) -> Result<(), SkippedServer> {
    let new_tools = plan(registry, server, tools, connection)?;
    registry
        .insert_all(new_tools)
        .map_err(|e| skipped(&server.name, "name-conflict", e.to_string()))
}

/// Checks one server's tools and builds what to register, or says why not.
fn plan(
    registry: &Registry,
    server: &ServerDef,
    tools: &[RemoteTool],
    connection: &Connection,
) -> Result<Vec<NewTool>, SkippedServer> {
    let format = registry.name_format(&server.name).to_string();
    if let Some(i) = tools
        .iter()
        .position(|t| t.name.as_deref().is_none_or(|n| n.trim().is_empty()))
    {
        return Err(skipped(
            &server.name,
            "nameless-tool",
            format!("tool #{} in the server's list has no name", i + 1),
        ));
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for t in tools {
        let remote = t.name.clone().unwrap_or_default();
        if !server.include.is_match(&remote) || server.exclude.is_match(&remote) {
            continue;
        }
        let name = mcp_tool_name(&format, &server.name, &remote);
        if registry.has_tool(&name) {
            return Err(skipped(
                &server.name,
                "name-conflict",
                format!("tool `{remote}` would be named `{name}`, which is already registered"),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(skipped(
                &server.name,
                "name-conflict",
                format!("two of the server's tools would both be named `{name}`"),
            ));
        }
        if let Err(e) = jsonschema::draft202012::new(&t.input_schema) {
            return Err(skipped(
                &server.name,
                "invalid-schema",
                format!("the inputSchema of tool `{remote}` is not a valid JSON Schema: {e}"),
            ));
        }
        let (safety, safety_from, effects) = server.host_tool(&remote);
        let pin = registry.lock().map(|lock| {
            let hash = definition_hash(
                &remote,
                t.description.as_deref(),
                &t.input_schema,
                t.annotations.as_ref(),
            );
            lock.state(&server.name, &remote, &hash)
        });
        out.push(NewTool {
            pin,
            name,
            description: t
                .description
                .clone()
                .filter(|d| !d.trim().is_empty())
                .unwrap_or_else(|| format!("Call MCP tool {}/{remote}", server.name)),
            source: ToolSource::Mcp {
                server: server.name.clone(),
                remote_name: remote.clone(),
                safety_from,
            },
            scope: safety.side_effect.default_scope(),
            safety,
            parameters: std::sync::Arc::new(t.input_schema.clone()),
            deferred: true,
            deferral_eligible: true,
            hints: t.annotations.clone(),
            reject: Vec::new(),
            effects,
            agent: None,
            dispatcher: Dispatcher::new(Arc::new(McpExecutor {
                connection: connection.clone(),
                remote_name: remote,
            })),
        });
    }
    Ok(out)
}
