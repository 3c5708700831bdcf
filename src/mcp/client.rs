//! The MCP client layer: one [`ToolClient`] (list tools, call a tool, close) over
//! three transports — a child process on stdio, streamable HTTP, and the legacy
//! HTTP+SSE transport — built on `rmcp`.
//!
//! - The `initialize` handshake runs under [`ConnectSpec::timeout`]; so does each
//!   [`ToolClient::list_tools`]. A tool call is not bounded here: wrap it in
//!   `tokio::time::timeout` where a bound is wanted.
//! - `tools/list` is sent as a raw request and every page is read as plain JSON, so
//!   a tool without a name comes back as [`RemoteTool::name`] `None` instead of
//!   failing the whole listing, and annotations stay raw JSON. rmcp's client
//!   response cache is switched off: a dead server is never answered for by a stale
//!   list.
//! - A stdio server runs in its own process group with its stderr captured (the
//!   last [`STDERR_TAIL_BYTES`]) for error messages. [`ToolClient::close`] closes its
//!   stdin, waits, then sends SIGTERM and finally SIGKILL, and reaps it; dropping
//!   the client kills and reaps it. A server that died is reported as
//!   [`McpError::Closed`] with its exit status and stderr tail; it is never
//!   restarted behind the caller's back.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, ContentBlock,
    CustomRequest, Implementation, MetaObject, ProtocolVersion, ResourceContents, ServerResult,
};
use rmcp::service::{ClientInitializeError, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientCacheConfig, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{oneshot, watch};

/// How much of a stdio server's stderr is kept for error messages (the last bytes).
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// How long [`ToolClient::close`] lets a stdio server exit after its stdin closes,
/// before SIGTERM.
const GRACEFUL_EXIT: Duration = Duration::from_secs(2);
/// How long after SIGTERM before SIGKILL.
const TERM_EXIT: Duration = Duration::from_secs(1);
/// Bound on shutting rmcp's service task down.
const SERVICE_CLOSE: Duration = Duration::from_secs(3);
/// How long an error path waits for a dying server's exit status and last stderr.
const DEATH_GRACE: Duration = Duration::from_millis(500);
/// How long closing waits for `notifications/cancelled` still being sent.
const CANCEL_FLUSH: Duration = Duration::from_secs(1);
/// Upper bound on `tools/list` pages, against a server whose cursors never end.
const MAX_LIST_PAGES: usize = 10_000;

/// A boxed, sendable future (the same shape as `futures::future::BoxFuture`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What to connect to, with every `${env:NAME}` already resolved by the caller.
#[derive(Clone)]
pub struct ConnectSpec {
    /// The server's name in the manifest; used in error messages.
    pub server: String,
    /// How to reach it.
    pub transport: TransportSpec,
    /// Bound on the `initialize` handshake (and on each `tools/list`).
    pub timeout: Duration,
}

/// How to reach an MCP server.
#[derive(Clone)]
pub enum TransportSpec {
    /// Spawn `command` and speak JSON-RPC lines on its stdin/stdout.
    Stdio {
        /// Program to run, looked up on `PATH` when it has no `/`.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to (not replacing) the inherited environment.
        env: Vec<(String, String)>,
        /// Working directory; the current one when `None`.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (MCP 2025-03-26 and later).
    Http {
        /// The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra headers sent with every request.
        headers: Vec<(String, String)>,
        /// The server's authorization (`servers[].auth`), shared by its
        /// connections; `None` sends only `headers`.
        auth: Option<Arc<super::oauth::OAuth>>,
    },
    /// The legacy HTTP+SSE transport (MCP 2024-11-05).
    Sse {
        /// The event-stream URL, e.g. `http://127.0.0.1:8000/sse`.
        url: String,
        /// Extra headers sent with the GET and every POST.
        headers: Vec<(String, String)>,
    },
}

impl fmt::Debug for ConnectSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectSpec")
            .field("server", &self.server)
            .field("transport", &self.transport)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Names only: environment and header values often hold credentials.
impl fmt::Debug for TransportSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |pairs: &[(String, String)]| -> Vec<String> {
            pairs.iter().map(|(k, _)| format!("{k}=…")).collect()
        };
        match self {
            Self::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &names(env))
                .field("cwd", cwd)
                .finish(),
            Self::Http { url, headers, auth } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &names(headers))
                .field("auth", auth)
                .finish(),
            Self::Sse { url, headers } => f
                .debug_struct("Sse")
                .field("url", url)
                .field("headers", &names(headers))
                .finish(),
        }
    }
}

/// A tool as the server lists it. Nothing here is trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    /// The server's name for the tool; `None` when missing, not a string, or empty.
    pub name: Option<String>,
    /// Its description, if any.
    pub description: Option<String>,
    /// Its `inputSchema`, as sent; `{"type": "object"}` when the server sent none.
    pub input_schema: Value,
    /// Its `annotations` (`readOnlyHint`, …), as sent: untrusted hints.
    pub annotations: Option<Value>,
    /// The whole definition as sent (`title`, `outputSchema`, `icons`,
    /// `_meta`, …), for a gateway to pass on; nothing in it is trusted.
    pub definition: Value,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallOutput {
    /// The text content blocks, joined by `\n`.
    pub text: String,
    /// One note per other block, e.g. `image (image/png, 1234 bytes)`.
    pub non_text: Vec<String>,
    /// The server flagged the result as an error (`isError`).
    pub is_error: bool,
    /// Every content block as the server sent it, in order (moved, not copied:
    /// a large image is held once).
    pub content: Vec<ContentBlock>,
    /// The result's `structuredContent`, as sent.
    pub structured: Option<Value>,
    /// The result's `_meta`, as sent.
    pub meta: Option<MetaObject>,
}

/// An MCP client failure. Every message names the server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server could not be reached, or the handshake failed.
    #[error("mcp server {server}: connect failed: {message}")]
    Connect {
        /// The server's name.
        server: String,
        /// What went wrong, with the stderr tail of a stdio server.
        message: String,
    },
    /// The server did not answer in time.
    #[error("mcp server {server}: {operation} timed out after {timeout:?}{detail}")]
    Timeout {
        /// The server's name.
        server: String,
        /// `initialize` or `tools/list`.
        operation: &'static str,
        /// The bound that passed.
        timeout: Duration,
        /// Extra context (the stderr tail of a stdio server), empty or `; …`.
        detail: String,
    },
    /// `tools/list` failed or returned something unreadable.
    #[error("mcp server {server}: tools/list failed: {message}")]
    List {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// `tools/call` failed at the protocol level (a tool's own failure is a
    /// [`CallOutput`] with `is_error`).
    #[error("mcp server {server}: tools/call {tool} failed: {message}")]
    Call {
        /// The server's name.
        server: String,
        /// The tool called.
        tool: String,
        /// What went wrong.
        message: String,
    },
    /// The server answered a request with a JSON-RPC error, kept whole so a
    /// gateway can pass the code and message on.
    #[error("mcp server {server}: {method} failed: json-rpc error {}: {}", error.code.0, error.message)]
    Rpc {
        /// The server's name.
        server: String,
        /// The request's method.
        method: String,
        /// The error as the server sent it.
        error: rmcp::ErrorData,
    },
    /// The connection is gone: the server exited or hung up, or the client was
    /// closed. It is not restarted.
    #[error("mcp server {server}: connection closed: {message}")]
    Closed {
        /// The server's name.
        server: String,
        /// Why, with the exit status and stderr tail of a stdio server.
        message: String,
    },
}

impl McpError {
    /// The name of the server the error is about.
    pub fn server(&self) -> &str {
        match self {
            Self::Connect { server, .. }
            | Self::Timeout { server, .. }
            | Self::List { server, .. }
            | Self::Call { server, .. }
            | Self::Rpc { server, .. }
            | Self::Closed { server, .. } => server,
        }
    }
}

/// A connected MCP server.
pub trait ToolClient: Send + Sync {
    /// Every tool, following `nextCursor` to the last page, under the connect
    /// timeout. Always asks the server; nothing is cached.
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<RemoteTool>, McpError>>;

    /// Calls `name` with `args`. A tool that fails returns `Ok` with `is_error`.
    fn call_tool(
        &self,
        name: &str,
        args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<CallOutput, McpError>>;

    /// Sends any other request (`resources/read`, `prompts/get`, …) and
    /// returns its result as plain JSON. Dropping the future before the answer
    /// cancels the request upstream (`notifications/cancelled`).
    fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<Value, McpError>>;

    /// The capabilities the server declared at `initialize`, as JSON.
    fn capabilities(&self) -> Option<Value>;

    /// Ends the session. A stdio server gets its stdin closed, then SIGTERM, then
    /// SIGKILL, and is reaped before the future completes.
    fn close(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// Connects to the server and runs the `initialize` handshake under
/// `spec.timeout`. A stdio server that fails to start is killed and reaped
/// before this returns.
pub async fn connect(spec: &ConnectSpec) -> Result<Box<dyn ToolClient>, McpError> {
    connect_relayed(spec, None).await
}

/// As [`connect`], and what the server asks of its client (sampling,
/// elicitation, roots) and tells it (progress, log messages, list and
/// resource changes) goes to `downstream`; without one, requests are
/// refused and notifications dropped.
pub async fn connect_relayed(
    spec: &ConnectSpec,
    downstream: Option<Arc<dyn Downstream>>,
) -> Result<Box<dyn ToolClient>, McpError> {
    let server = spec.server.clone();
    let side = ClientSide {
        config: client_config(downstream.is_some()),
        server: spec.server.clone(),
        downstream,
        calls: Arc::new(Calls::default()),
    };
    let calls = Arc::clone(&side.calls);
    let connect_err = |message: String| McpError::Connect {
        server: server.clone(),
        message,
    };
    let timeout_err = |detail: String| McpError::Timeout {
        server: server.clone(),
        operation: "initialize",
        timeout: spec.timeout,
        detail,
    };
    let service = match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let (child, stdout, stdin) =
                ChildProc::spawn(command, args, env, cwd.as_deref()).map_err(connect_err)?;
            let transport = super::lines::Lines::<RoleClient, _, _>::new(stdout, stdin);
            let started = tokio::time::timeout(spec.timeout, side.serve(transport));
            match started.await {
                Ok(Ok(service)) => Service {
                    running: service,
                    child: Some(child),
                },
                Ok(Err(e)) => {
                    let message = match child.death_note(DEATH_GRACE).await {
                        Some(death) => format!("server exited during initialize ({death})"),
                        None => format!("initialize failed: {}", describe_init_error(&e)),
                    };
                    let detail = child.stop(Stop::Kill).await;
                    return Err(connect_err(format!("{message}{detail}")));
                }
                Err(_) => {
                    let detail = child.stop(Stop::Kill).await;
                    return Err(timeout_err(detail));
                }
            }
        }
        TransportSpec::Http { url, headers, auth } => {
            let headers = header_map(headers).map_err(connect_err)?;
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(
                    headers
                        .into_iter()
                        .filter_map(|(k, v)| Some((k?, v)))
                        .collect(),
                );
            crate::tls::install_provider();
            let started = match auth {
                Some(oauth) => {
                    let client = super::oauth::AuthorizedHttp::new(
                        reqwest::Client::default(),
                        Arc::clone(oauth),
                    );
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    tokio::time::timeout(spec.timeout, side.serve(transport)).await
                }
                None => {
                    let transport = StreamableHttpClientTransport::from_config(config);
                    tokio::time::timeout(spec.timeout, side.serve(transport)).await
                }
            };
            match started {
                Ok(Ok(running)) => Service {
                    running,
                    child: None,
                },
                Ok(Err(e)) => return Err(connect_err(describe_init_error(&e))),
                Err(_) => return Err(timeout_err(String::new())),
            }
        }
        TransportSpec::Sse { url, headers } => {
            let headers = header_map(headers).map_err(connect_err)?;
            let started = tokio::time::timeout(spec.timeout, async {
                let transport = super::sse::connect(url, headers).await?;
                side.serve(transport)
                    .await
                    .map_err(|e| describe_init_error(&e))
            });
            match started.await {
                Ok(Ok(running)) => Service {
                    running,
                    child: None,
                },
                Ok(Err(message)) => return Err(connect_err(message)),
                Err(_) => return Err(timeout_err(String::new())),
            }
        }
    };
    // Never answer for the server from a cache (rmcp serves stale lists on error).
    service
        .running
        .peer()
        .set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    Ok(Box::new(RmcpClient {
        server: spec.server.clone(),
        list_timeout: spec.timeout,
        service,
        calls,
        cancels: Arc::default(),
    }))
}

/// What this client tells servers about itself: the last protocol version that
/// has the `initialize` handshake; sampling, elicitation and roots when
/// someone downstream can answer them (whether a request is relayed is then
/// decided per request).
fn client_config(relays: bool) -> ClientConfig {
    let capabilities = if relays {
        serde_json::from_value(serde_json::json!({
            "sampling": {},
            "elicitation": {"form": {}, "url": {}},
            "roots": {"listChanged": true}
        }))
        .unwrap_or_default()
    } else {
        ClientCapabilities::default()
    };
    ClientConfig::new(
        capabilities,
        Implementation::new("zero-policy", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

tokio::task_local! {
    /// The downstream call a request to a server is made for: set by a
    /// gateway around the call, read when the request is sent, so the
    /// server's progress and requests during it reach that call's client.
    pub static CALLER: u64;
}

/// Where a server's requests and notifications to its client go: a gateway
/// relays them to its own clients. Every method is bounded by the
/// implementation; none may wait forever.
pub trait Downstream: Send + Sync {
    /// A request from `server` (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`) made while the calls `callers` were in flight to it.
    fn request<'a>(
        &'a self,
        server: &'a str,
        callers: Vec<u64>,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, rmcp::ErrorData>>;

    /// A progress notification for the call `caller`.
    fn progress<'a>(&'a self, server: &'a str, caller: u64, params: Value) -> BoxFuture<'a, ()>;

    /// Any other notification (log messages, list and resource changes).
    fn notify<'a>(&'a self, server: &'a str, method: &'a str, params: Value) -> BoxFuture<'a, ()>;
}

/// The downstream calls in flight on one connection: by the progress token
/// rmcp gave each request, and as a list for the server's requests.
#[derive(Default)]
struct Calls {
    by_token: Mutex<std::collections::HashMap<rmcp::model::ProgressToken, u64>>,
}

impl Calls {
    fn in_flight(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .by_token
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// Records a request's progress token for the downstream call in this task
/// (if any) while it is alive.
struct Tracked {
    calls: Arc<Calls>,
    token: Option<rmcp::model::ProgressToken>,
}

impl Tracked {
    fn new(calls: &Arc<Calls>, token: &rmcp::model::ProgressToken) -> Tracked {
        let token = CALLER.try_with(|id| *id).ok().map(|id| {
            calls
                .by_token
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(token.clone(), id);
            token.clone()
        });
        Tracked {
            calls: Arc::clone(calls),
            token,
        }
    }
}

/// How long a finished request's progress token still routes: a server's
/// last progress notification is handled on its own task, and may be behind
/// the answer it came before.
const PROGRESS_GRACE: Duration = Duration::from_millis(200);

impl Drop for Tracked {
    fn drop(&mut self) {
        let Some(t) = self.token.take() else { return };
        let calls = Arc::clone(&self.calls);
        let forget = move || {
            calls
                .by_token
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&t);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    tokio::time::sleep(PROGRESS_GRACE).await;
                    forget();
                });
            }
            Err(_) => forget(),
        }
    }
}

/// The client side of one connection: answers `ping`, hands the server's
/// requests and notifications to the [`Downstream`].
struct ClientSide {
    config: ClientConfig,
    server: String,
    downstream: Option<Arc<dyn Downstream>>,
    calls: Arc<Calls>,
}

/// A JSON-RPC message's `method` and `params`.
fn method_params<T: serde::Serialize>(message: &T) -> (String, Value) {
    let v = serde_json::to_value(message).unwrap_or(Value::Null);
    let method = v
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let params = v.get("params").cloned().unwrap_or(Value::Null);
    (method, params)
}

impl rmcp::Service<RoleClient> for ClientSide {
    async fn handle_request(
        &self,
        request: rmcp::model::ServerRequest,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ClientResult, rmcp::ErrorData> {
        if matches!(request, rmcp::model::ServerRequest::PingRequest(_)) {
            return Ok(rmcp::model::ClientResult::empty(()));
        }
        let (method, params) = method_params(&request);
        let Some(downstream) = &self.downstream else {
            return Err(rmcp::ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >());
        };
        let callers = self.calls.in_flight();
        let result = downstream
            .request(&self.server, callers, &method, params)
            .await?;
        Ok(rmcp::model::ClientResult::CustomResult(
            rmcp::model::CustomResult(result),
        ))
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ServerNotification,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) -> Result<(), rmcp::ErrorData> {
        let Some(downstream) = &self.downstream else {
            return Ok(());
        };
        if let rmcp::model::ServerNotification::ProgressNotification(p) = &notification {
            let caller = self
                .calls
                .by_token
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&p.params.progress_token)
                .copied();
            // Progress for no call in flight (late, or forged) goes nowhere.
            if let Some(caller) = caller {
                let (_, params) = method_params(&notification);
                downstream.progress(&self.server, caller, params).await;
            }
            return Ok(());
        }
        let (method, params) = method_params(&notification);
        downstream.notify(&self.server, &method, params).await;
        Ok(())
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// Parses header pairs; values are marked sensitive so they never show in logs.
fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid http header name {name:?}"))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| format!("invalid value for http header {name:?}"))?;
        value.set_sensitive(true);
        map.append(header, value);
    }
    Ok(map)
}

fn describe_init_error(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection during initialize".to_string()
        }
        ClientInitializeError::JsonRpcError(data) => format!(
            "the server rejected initialize: json-rpc error {}: {}",
            data.code.0, data.message
        ),
        ClientInitializeError::TransportError { error, context } => {
            format!("{context}: {}", error_chain(error.error.as_ref()))
        }
        other => error_chain(other),
    }
}

/// `e` and its sources, joined by `: `.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s = s.to_string();
        if !text.ends_with(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = source.and_then(|s| s.source());
    }
    text
}

/// The rmcp session and, for stdio, the server process.
struct Service {
    running: RunningService<RoleClient, ClientSide>,
    child: Option<ChildProc>,
}

/// The one [`ToolClient`] implementation, over any rmcp transport.
struct RmcpClient {
    server: String,
    list_timeout: Duration,
    service: Service,
    calls: Arc<Calls>,
    /// `notifications/cancelled` being sent for abandoned requests.
    cancels: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

/// How a [`ServiceError`] is reported.
enum Failure {
    /// The connection is gone.
    Closed(String),
    /// Anything else, as text.
    Other(String),
}

impl RmcpClient {
    fn classify(e: ServiceError) -> Failure {
        match e {
            ServiceError::TransportClosed => Failure::Closed("the connection ended".to_string()),
            ServiceError::TransportSend(e) => {
                Failure::Closed(format!("sending failed: {}", error_chain(e.error.as_ref())))
            }
            ServiceError::McpError(data) => {
                Failure::Other(format!("json-rpc error {}: {}", data.code.0, data.message))
            }
            ServiceError::UnexpectedResponse => {
                Failure::Other("the server sent an unexpected response".to_string())
            }
            other => Failure::Other(error_chain(&other)),
        }
    }

    /// A [`McpError::Closed`] for a dead connection, with the exit status and
    /// stderr tail of a stdio server.
    async fn closed(&self, during: &str, why: String) -> McpError {
        let message = match &self.service.child {
            Some(child) => match child.death_note(DEATH_GRACE).await {
                Some(death) => format!("server exited during {during} ({death}){}", child.tail()),
                None => format!("{during}: {why}{}", child.tail()),
            },
            None => format!("{during}: {why}"),
        };
        McpError::Closed {
            server: self.server.clone(),
            message,
        }
    }

    async fn list_all(&self) -> Result<Vec<RemoteTool>, McpError> {
        let list_err = |message: String| McpError::List {
            server: self.server.clone(),
            message,
        };
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor
                .as_ref()
                .map(|c| Value::Object(Map::from_iter([("cursor".to_string(), c.clone().into())])));
            let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
            let page = match self.service.running.peer().send_request(request).await {
                Ok(result) => result_json(result).map_err(list_err)?,
                Err(e) => {
                    return Err(match Self::classify(e) {
                        Failure::Closed(why) => self.closed("tools/list", why).await,
                        Failure::Other(message) => list_err(message),
                    });
                }
            };
            let Some(items) = page.get("tools").and_then(Value::as_array) else {
                return Err(list_err("the result has no `tools` array".to_string()));
            };
            tools.extend(items.iter().map(remote_tool));
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok(tools),
                Some(Value::String(next)) => {
                    if !seen.insert(next.clone()) {
                        return Err(list_err(format!("the server repeated cursor {next:?}")));
                    }
                    cursor = Some(next.clone());
                }
                Some(other) => {
                    return Err(list_err(format!("`nextCursor` is not a string: {other}")));
                }
            }
        }
        Err(list_err(format!("more than {MAX_LIST_PAGES} pages")))
    }

    /// Sends one request and waits for its answer, with its progress
    /// tracked. Dropped before the answer (the client cancelled or went), the
    /// server is told to stop.
    async fn send(&self, request: ClientRequest) -> Result<ServerResult, ServiceError> {
        let peer = self.service.running.peer();
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
            sending: Arc::clone(&self.cancels),
        };
        let _tracked = Tracked::new(&self.calls, &handle.progress_token);
        let answered = handle.await_response().await;
        guard.id = None;
        answered
    }

    async fn raw(&self, method: &str, params: Option<Value>) -> Result<Value, McpError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method.to_string(), params));
        let answered = self.send(request).await;
        match answered {
            Ok(result) => result_json(result).map_err(|message| McpError::Call {
                server: self.server.clone(),
                tool: method.to_string(),
                message,
            }),
            Err(ServiceError::McpError(error)) => Err(McpError::Rpc {
                server: self.server.clone(),
                method: method.to_string(),
                error,
            }),
            Err(e) => Err(match Self::classify(e) {
                Failure::Closed(why) => self.closed(method, why).await,
                Failure::Other(message) => McpError::Call {
                    server: self.server.clone(),
                    tool: method.to_string(),
                    message,
                },
            }),
        }
    }

    async fn call(&self, name: &str, args: Map<String, Value>) -> Result<CallOutput, McpError> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let answered = self.send(request).await;
        let result = match answered {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(ServiceError::UnexpectedResponse),
            Err(e) => Err(e),
        };
        match result {
            Ok(result) => {
                let mut out = CallOutput {
                    is_error: result.is_error.unwrap_or(false),
                    ..CallOutput::default()
                };
                let mut texts = Vec::new();
                for block in &result.content {
                    match content_text(block) {
                        Ok(text) => texts.push(text),
                        Err(note) => out.non_text.push(note),
                    }
                }
                out.text = texts.join("\n");
                out.content = result.content;
                out.structured = result.structured_content;
                out.meta = result.meta;
                Ok(out)
            }
            Err(e) => Err(match Self::classify(e) {
                Failure::Closed(why) => self.closed(&format!("tools/call {name}"), why).await,
                Failure::Other(message) => McpError::Call {
                    server: self.server.clone(),
                    tool: name.to_string(),
                    message,
                },
            }),
        }
    }
}

impl ToolClient for RmcpClient {
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<RemoteTool>, McpError>> {
        Box::pin(async move {
            match tokio::time::timeout(self.list_timeout, self.list_all()).await {
                Ok(result) => result,
                Err(_) => Err(McpError::Timeout {
                    server: self.server.clone(),
                    operation: "tools/list",
                    timeout: self.list_timeout,
                    detail: self
                        .service
                        .child
                        .as_ref()
                        .map(ChildProc::tail)
                        .unwrap_or_default(),
                }),
            }
        })
    }

    fn call_tool(
        &self,
        name: &str,
        args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<CallOutput, McpError>> {
        let name = name.to_string();
        Box::pin(async move { self.call(&name, args).await })
    }

    fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> BoxFuture<'_, Result<Value, McpError>> {
        let method = method.to_string();
        Box::pin(async move { self.raw(&method, params).await })
    }

    fn capabilities(&self) -> Option<Value> {
        let info = self.service.running.peer().peer_info()?;
        serde_json::to_value(&info.capabilities).ok()
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        let Service { running, child } = self.service;
        let cancels = std::mem::take(&mut *self.cancels.lock().unwrap_or_else(|p| p.into_inner()));
        Box::pin(async move {
            // Cancellations of abandoned requests leave before the session ends.
            let _ = tokio::time::timeout(CANCEL_FLUSH, async {
                for c in cancels {
                    let _ = c.await;
                }
            })
            .await;
            // Ending the service closes the transport: a stdio server sees EOF.
            let _ = tokio::time::timeout(SERVICE_CLOSE, running.cancel()).await;
            if let Some(child) = child {
                child.stop(Stop::Graceful).await;
            }
        })
    }
}

/// Cancels an abandoned request upstream: dropped while `id` is set, it
/// sends `notifications/cancelled` (a client that cancels, or goes, before
/// the answer leaves no work running on the server).
struct CancelOnDrop {
    peer: rmcp::Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
    /// Where the sending task is kept, so closing the connection waits for it.
    sending: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let task = rt.spawn(async move {
                let _ = peer
                    .send_notification(rmcp::model::ClientNotification::CancelledNotification(
                        rmcp::model::CancelledNotification::new(
                            rmcp::model::CancelledNotificationParam::new(
                                Some(id),
                                Some("the request was cancelled".into()),
                            ),
                        ),
                    ))
                    .await;
            });
            let mut sending = self.sending.lock().unwrap_or_else(|p| p.into_inner());
            sending.retain(|t| !t.is_finished());
            sending.push(task);
        }
    }
}

/// A result as plain JSON, whichever way rmcp's untyped union decoded it (a
/// listing rmcp's `Tool` rejects, e.g. a nameless tool, arrives as a custom result).
fn result_json(result: ServerResult) -> Result<Value, String> {
    match result {
        ServerResult::CustomResult(custom) => Ok(custom.0),
        other => serde_json::to_value(&other).map_err(|e| format!("cannot read the result: {e}")),
    }
}

fn remote_tool(raw: &Value) -> RemoteTool {
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_string);
    RemoteTool {
        name: text("name").filter(|n| !n.is_empty()),
        description: text("description"),
        input_schema: raw
            .get("inputSchema")
            .filter(|s| !s.is_null())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"})),
        annotations: raw.get("annotations").filter(|a| !a.is_null()).cloned(),
        definition: raw.clone(),
    }
}

/// The text of a `text` content block, or a note describing any other block.
fn content_text(block: &ContentBlock) -> Result<String, String> {
    let base64_len = |data: &str| data.trim_end_matches('=').len() * 3 / 4;
    match block {
        ContentBlock::Text(t) => Ok(t.text.clone()),
        ContentBlock::Image(i) => Err(format!(
            "image ({}, {} bytes)",
            i.mime_type,
            base64_len(&i.data)
        )),
        ContentBlock::Audio(a) => Err(format!(
            "audio ({}, {} bytes)",
            a.mime_type,
            base64_len(&a.data)
        )),
        ContentBlock::Resource(r) => {
            let (uri, mime, size) = match &r.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => (uri, mime_type, text.len()),
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => (uri, mime_type, base64_len(blob)),
                _ => return Err("resource (unknown kind)".to_string()),
            };
            Err(format!(
                "resource {uri} ({}, {size} bytes)",
                mime.as_deref().unwrap_or("unknown type")
            ))
        }
        ContentBlock::ResourceLink(l) => Err(format!("resource link {}", l.uri)),
        _ => Err("unknown content".to_string()),
    }
}

/// How to stop a stdio server.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// Its stdin is closed already: wait, then SIGTERM, then SIGKILL.
    Graceful,
    /// SIGKILL now.
    Kill,
}

#[cfg(unix)]
const SIGTERM: i32 = 15;

/// A stdio server process: its process group, a monitor task that owns and reaps
/// it, and its stderr tail.
struct ChildProc {
    stderr: Arc<StderrTail>,
    /// The exit status, once the monitor has reaped the process.
    exited: watch::Receiver<Option<String>>,
    /// Tells the monitor to stop the process; dropping it kills the process.
    stop: Option<oneshot::Sender<Stop>>,
    monitor: Option<tokio::task::JoinHandle<()>>,
}

impl ChildProc {
    fn spawn(
        command: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
    ) -> Result<(Self, ChildStdout, ChildStdin), String> {
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
        }
        let mut wrap = CommandWrap::from(cmd);
        #[cfg(unix)]
        wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
        wrap.wrap(KillOnDrop);
        let mut child = wrap
            .spawn()
            .map_err(|e| format!("cannot start {command:?}: {e}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (
            child.stdin().take(),
            child.stdout().take(),
            child.stderr().take(),
        ) else {
            let _ = child.start_kill();
            return Err(format!("cannot start {command:?}: its stdio was not piped"));
        };
        let tail = Arc::new(StderrTail::default());
        tokio::spawn(read_stderr(stderr, tail.clone()));
        let (stop_tx, stop_rx) = oneshot::channel();
        let (exit_tx, exited) = watch::channel(None);
        let monitor = tokio::spawn(monitor(child, stop_rx, exit_tx));
        let proc = Self {
            stderr: tail,
            exited,
            stop: Some(stop_tx),
            monitor: Some(monitor),
        };
        Ok((proc, stdout, stdin))
    }

    /// `; stderr: …` with the captured tail, or nothing when it is empty.
    fn tail(&self) -> String {
        let tail = self.stderr.text();
        if tail.is_empty() {
            String::new()
        } else {
            format!("; stderr: {tail}")
        }
    }

    /// The exit status, if the process exits within `grace`; waits a little for
    /// its last stderr too.
    async fn death_note(&self, grace: Duration) -> Option<String> {
        let mut exited = self.exited.clone();
        let status = tokio::time::timeout(grace, exited.wait_for(Option::is_some))
            .await
            .ok()?
            .ok()?
            .clone()?;
        self.stderr.wait_eof(grace).await;
        Some(status)
    }

    /// Stops and reaps the process; returns [`ChildProc::tail`].
    async fn stop(mut self, how: Stop) -> String {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(how);
        }
        if let Some(monitor) = self.monitor.take() {
            let _ = monitor.await;
        }
        self.stderr.wait_eof(Duration::from_millis(200)).await;
        self.tail()
    }
}

/// Owns the child: reaps it when it exits on its own, or stops it when asked (or
/// when the [`ChildProc`] is dropped), then kills whatever is left in its group.
async fn monitor(
    mut child: Box<dyn ChildWrapper>,
    mut stop: oneshot::Receiver<Stop>,
    exited: watch::Sender<Option<String>>,
) {
    let status_text = |status: std::io::Result<std::process::ExitStatus>| match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("exit status unknown: {e}"),
    };
    let request = tokio::select! {
        status = child.wait() => {
            let _ = exited.send(Some(status_text(status)));
            None
        }
        how = &mut stop => Some(how.unwrap_or(Stop::Kill)),
    };
    if let Some(how) = request {
        let status = match how {
            Stop::Graceful => match tokio::time::timeout(GRACEFUL_EXIT, child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    #[cfg(unix)]
                    let _ = child.signal(SIGTERM);
                    match tokio::time::timeout(TERM_EXIT, child.wait()).await {
                        Ok(status) => status,
                        Err(_) => {
                            let _ = child.start_kill();
                            child.wait().await
                        }
                    }
                }
            },
            Stop::Kill => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        let _ = exited.send(Some(status_text(status)));
    }
    // The leader is reaped; SIGKILL anything it left behind in its process group.
    let _ = child.start_kill();
}

/// The last [`STDERR_TAIL_BYTES`] a server wrote to stderr.
#[derive(Default)]
struct StderrTail {
    bytes: Mutex<VecDeque<u8>>,
    eof: watch::Sender<bool>,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        bytes.extend(chunk);
        let excess = bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        bytes.drain(..excess);
    }

    fn text(&self) -> String {
        let bytes = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        text.trim().to_string()
    }

    async fn wait_eof(&self, grace: Duration) {
        let mut eof = self.eof.subscribe();
        let _ = tokio::time::timeout(grace, eof.wait_for(|done| *done)).await;
    }
}

async fn read_stderr(mut stderr: ChildStderr, tail: Arc<StderrTail>) {
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => tail.push(&buf[..n]),
        }
    }
    tail.eof.send_replace(true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nameless_and_empty_names_are_none() {
        assert_eq!(remote_tool(&json!({"inputSchema": {}})).name, None);
        assert_eq!(remote_tool(&json!({"name": ""})).name, None);
        assert_eq!(remote_tool(&json!({"name": 7})).name, None);
        let tool =
            remote_tool(&json!({"name": "x", "annotations": {"readOnlyHint": true, "z": 1}}));
        assert_eq!(tool.name.as_deref(), Some("x"));
        assert_eq!(tool.input_schema, json!({"type": "object"}));
        assert_eq!(
            tool.annotations,
            Some(json!({"readOnlyHint": true, "z": 1}))
        );
    }

    fn block(v: Value) -> ContentBlock {
        serde_json::from_value(v).unwrap_or_else(|e| ContentBlock::text(format!("bad block: {e}")))
    }

    #[test]
    fn content_notes() {
        assert_eq!(
            content_text(&block(json!({"type": "text", "text": "hi"}))),
            Ok("hi".into())
        );
        assert_eq!(
            content_text(&block(
                json!({"type": "image", "mimeType": "image/png", "data": "AAAA"})
            )),
            Err("image (image/png, 3 bytes)".into())
        );
        assert_eq!(
            content_text(&block(
                json!({"type": "resource_link", "uri": "file:///x", "name": "x"})
            )),
            Err("resource link file:///x".into())
        );
        assert_eq!(
            content_text(&block(
                json!({"type": "resource", "resource": {"uri": "file:///y", "text": "abc"}})
            )),
            Err("resource file:///y (unknown type, 3 bytes)".into())
        );
    }

    #[test]
    fn stderr_tail_keeps_the_end() {
        let tail = StderrTail::default();
        tail.push(&vec![b'a'; STDERR_TAIL_BYTES]);
        tail.push(b"the end");
        let text = tail.text();
        assert_eq!(text.len(), STDERR_TAIL_BYTES);
        assert!(text.ends_with("the end"));
    }

    #[test]
    fn debug_hides_secrets() {
        let spec = TransportSpec::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer sekrit".into())],
            auth: Some(Arc::new(super::super::oauth::OAuth::new(
                "s",
                "http://127.0.0.1:1/mcp",
                super::super::oauth::OAuthSpec {
                    grant: crate::model::AuthGrant::ClientCredentials,
                    client_id: Some("id".into()),
                    client_secret: Some("sekrit-too".into()),
                    client_metadata_url: None,
                    scopes: vec![],
                    redirect_port: None,
                    open: vec![],
                    token_cache: None,
                },
                Duration::ZERO,
            ))),
        };
        assert!(!format!("{spec:?}").contains("sekrit"));
    }
}
