//! The MCP server side of the gateway: what a client sees and how its calls
//! are decided.
//!
//! - `tools/list`: the snapshot's list (deny tools never; deferred tools behind
//!   `tool_search` past `defer_threshold`), sorted by name, computed when the
//!   registry is built, so no request changes it.
//! - `tool_search`: the registry's search among the tools the gateway can run
//!   and the caller may call, with their input schemas.
//! - `tools/call`: [`Registry::dispatch_asking`]; `prompt` is asked by a form
//!   elicitation when the client declared the capability, else
//!   `settings.on_prompt` decides; a refusal is a tool error with the reason;
//!   an unknown name is the protocol's `-32602`. A client's cancellation (and
//!   the gateway's shutdown) drops the upstream request, which sends
//!   `notifications/cancelled` upstream (tests/gateway_faults.rs).
//! - A request of a method served here whose params do not read is `-32602`
//!   naming the method, not "method not found".

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig,
    Tool as McpTool,
};
use rmcp::service::{ElicitationError, ElicitationMode, NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::Call;
use crate::dispatch::{AsyncApprover, Evaluation};
use crate::gateway::surfaces::{self, SurfaceError};
use crate::gateway::{Gateway, TOOL_SEARCH, mcp_tool};
use crate::log;
use crate::model::LogArgs;
use crate::registry::{Lookup, RegisteredTool};
use crate::runtime::{BoxFuture, ToolError};

/// How much of the arguments an approval form shows.
const FORM_ARGS_CHARS: usize = 2_000;

/// One client session's handler (stdio has one; HTTP one per session).
#[derive(Clone, Debug)]
pub struct Handler {
    gateway: Arc<Gateway>,
    /// This client session's number, for relays.
    session: u64,
}

impl Handler {
    /// A handler over the gateway's shared state.
    #[must_use]
    pub fn new(gateway: Arc<Gateway>) -> Handler {
        let session = gateway.relays.session();
        Handler { gateway, session }
    }
}

/// The `tool_search` tool the gateway advertises when tools are deferred.
#[must_use]
pub fn tool_search_tool() -> McpTool {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "`select:NAME,NAME` for tools by name, or keywords matched against names and descriptions"
            }
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let schema = match schema {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    McpTool::new(
        TOOL_SEARCH,
        "Find more tools: by `select:NAME,NAME` or by keywords (at most 10). Returns each tool's name, description and input schema; call a found tool by its name.",
        Arc::new(schema),
    )
}

/// The approval form's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Approval {
    /// Allow this one call.
    allow: bool,
}

rmcp::elicit_safe!(Approval);

/// What the person answered, for the reason and the log.
#[derive(Debug, Clone, Default)]
struct Asked(Option<String>);

/// Asks the person through MCP elicitation.
struct Elicitor {
    peer: Peer<RoleServer>,
    scrubber_args: Value,
    outcome: Mutex<Asked>,
}

impl AsyncApprover for Elicitor {
    fn approve<'a>(
        &'a self,
        tool: &'a RegisteredTool,
        _call: &'a Call,
        evaluation: &'a Evaluation,
    ) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let mut args = serde_json::to_string_pretty(&self.scrubber_args).unwrap_or_default();
            if args.chars().count() > FORM_ARGS_CHARS {
                args = args.chars().take(FORM_ARGS_CHARS).collect::<String>() + "…";
            }
            let reason = evaluation
                .reason
                .clone()
                .unwrap_or_else(|| "the call needs approval".into());
            let message = format!(
                "zero-policy: allow this one call?\n\ntool: {}\nreason: {reason}\narguments:\n{args}",
                tool.name
            );
            let (approved, said) = match self.peer.elicit::<Approval>(message).await {
                Ok(Some(Approval { allow: true })) => (true, "approved by the user"),
                Ok(_) => (false, "not allowed by the user"),
                Err(ElicitationError::UserDeclined) => (false, "declined by the user"),
                Err(ElicitationError::UserCancelled) => (false, "cancelled by the user"),
                Err(_) => (false, "the approval request failed"),
            };
            if let Ok(mut o) = self.outcome.lock() {
                o.0 = Some(said.to_string());
            }
            approved
        })
    }
}

/// A tool's (scrubbed) output as an MCP result. An MCP tool's content blocks
/// pass on as its server sent them, in order, moved rather than copied; a
/// tool of the gateway's own says its text and then one block per note.
fn call_result(tool: &RegisteredTool, out: crate::runtime::ToolOutput) -> CallToolResult {
    let crate::runtime::ToolOutput {
        text,
        structured,
        notes,
        is_error,
        content,
        meta,
    } = out;
    let content = if matches!(tool.source, crate::registry::ToolSource::Mcp { .. }) {
        if content.is_empty() && !text.is_empty() {
            vec![ContentBlock::text(text)]
        } else {
            content
        }
    } else {
        let mut blocks = vec![ContentBlock::text(text)];
        blocks.extend(notes.into_iter().map(ContentBlock::text));
        blocks
    };
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured;
    result.meta = meta;
    result
}

fn text_result(text: String, is_error: bool) -> CallToolResponse {
    let content = vec![ContentBlock::text(text)];
    CallToolResponse::Complete(if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    })
}

impl Handler {
    fn search(&self, args: &Value) -> CallToolResponse {
        let snapshot = self.gateway.snapshot();
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return text_result("`tool_search` needs a string argument `query`".into(), true);
        };
        let found: Vec<Value> = snapshot
            .registry
            .search_where(query, super::served)
            .into_iter()
            .map(|t| {
                let tool = mcp_tool(t);
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": Value::Object((*tool.input_schema).clone()),
                })
            })
            .collect();
        let body = json!({ "tools": found });
        let mut result = CallToolResult::success(vec![ContentBlock::text(body.to_string())]);
        result.structured_content = Some(body);
        CallToolResponse::Complete(result)
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let mut snapshot = self.gateway.snapshot();
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default());
        if name == TOOL_SEARCH && snapshot.deferring && !snapshot.registry.has_tool(TOOL_SEARCH) {
            return Ok(self.search(&args));
        }
        // A call right after `initialize` waits for the first connection of
        // the server it names (or, for a name not known yet, of every server
        // still connecting), as `tools/list` does, then is looked up again.
        let waits_for = match snapshot.registry.lookup(&name, "") {
            Lookup::Found(t) if t.offline => Some(Some(t.source.server().to_string())),
            Lookup::Unknown => Some(None),
            _ => None,
        };
        if let Some(server) = waits_for {
            let waited = tokio::select! {
                w = self.gateway.await_first_connection(server.as_deref()) => w,
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("the request was cancelled", None));
                }
            };
            if waited {
                snapshot = self.gateway.snapshot();
            }
        }
        let registry = Arc::clone(&snapshot.registry);
        let tool = match registry.lookup(&name, "") {
            // A protocol surface (`…/resources/read`) is not a tool.
            Lookup::Found(t) if !crate::names::is_surface_name(&t.name) => t,
            Lookup::Found(_) | Lookup::Unknown | Lookup::Ambiguous(_) | Lookup::NotForAgent(_) => {
                let shown = registry.scrubber().scrub_str(&name).into_owned();
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{}`", shown.escape_debug()),
                    None,
                ));
            }
        };
        let call = Call {
            tool: name.clone(),
            args,
            session: self.gateway.session.clone(),
            confined: false,
        };
        let mut scrubbed_args = call.args.clone();
        registry.scrubber().scrub_json(&mut scrubbed_args);
        if tool.offline {
            // The server is declared but not connected: decide (for the reason and
            // the log), run nothing, and say why it cannot run.
            let mut ev = registry.decide_call(&call);
            crate::runtime::scrub_evaluation(registry.scrubber(), &mut ev);
            let text = match ev.decision {
                crate::model::Decision::Deny | crate::model::Decision::Reject => ev
                    .reason
                    .clone()
                    .or_else(|| ev.reject_reason.clone())
                    .unwrap_or_default(),
                _ => self.gateway.server_status(tool.source.server()),
            };
            let text = registry.scrubber().scrub_str(&text).into_owned();
            self.log_call(
                &snapshot.policy_hash,
                &tool,
                &call,
                Some(&ev),
                false,
                &text,
                &scrubbed_args,
                started,
            );
            return Ok(text_result(text, true));
        }
        let Relayed {
            dispatched,
            asked,
            note,
            ran,
        } = self
            .dispatch_relayed(&context, &snapshot, &tool, &call, &scrubbed_args, started)
            .await?;
        let ev = &dispatched.evaluation;
        let response = match dispatched.result {
            Ok(out) => CallToolResponse::Complete(call_result(&tool, out)),
            Err(e) => {
                let mut text = e.to_string();
                if let (ToolError::NotApproved(_), Some(said)) = (&e, &asked) {
                    text = format!("{text} ({said})");
                } else if matches!(e, ToolError::NotApproved(_)) {
                    text = format!(
                        "{text} (the client cannot ask: it did not declare elicitation, and `settings.on_prompt` is `{}`)",
                        match registry.settings().on_prompt {
                            crate::model::OnPrompt::Deny => "deny",
                            crate::model::OnPrompt::Ask => "ask",
                        }
                    );
                }
                text_result(text, true)
            }
        };
        self.log_call(
            &snapshot.policy_hash,
            &tool,
            &call,
            Some(ev),
            ran,
            &note,
            &scrubbed_args,
            started,
        );
        Ok(response)
    }

    /// Decides and runs one protocol surface (`resources/read`,
    /// `prompts/get`) of `server` through the dispatch path, as a tool call
    /// is: asked by elicitation on `prompt`, logged, its output scrubbed.
    async fn surface(
        &self,
        server: &str,
        surface: &str,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<crate::runtime::ToolOutput, ErrorData> {
        let started = Instant::now();
        let snapshot = self.gateway.snapshot();
        let registry = Arc::clone(&snapshot.registry);
        let name = crate::names::mcp_surface_name(registry.name_format(server), server, surface);
        let tool = match registry.lookup(&name, "") {
            Lookup::Found(t) if !t.offline => t,
            _ => {
                return Err(ErrorData::internal_error(
                    self.gateway.server_status(server),
                    None,
                ));
            }
        };
        let call = Call {
            tool: name,
            args,
            session: self.gateway.session.clone(),
            confined: false,
        };
        let mut scrubbed_args = call.args.clone();
        registry.scrubber().scrub_json(&mut scrubbed_args);
        let Relayed {
            dispatched,
            asked,
            note,
            ran,
        } = self
            .dispatch_relayed(context, &snapshot, &tool, &call, &scrubbed_args, started)
            .await?;
        let ev = &dispatched.evaluation;
        self.log_call(
            &snapshot.policy_hash,
            &tool,
            &call,
            Some(ev),
            ran,
            &note,
            &scrubbed_args,
            started,
        );
        let out = dispatched.result.map_err(|e| {
            let mut text = e.to_string();
            if let Some(said) = &asked {
                text = format!("{text} ({said})");
            }
            match e {
                // The server's own failure.
                ToolError::Failed(_) | ToolError::NoExecutor(_) => {
                    ErrorData::internal_error(text, None)
                }
                // The policy's refusal.
                _ => ErrorData::invalid_request(text, None),
            }
        })?;
        if out.is_error {
            // The server's JSON-RPC error, scrubbed, passed on whole.
            return Err(out
                .structured
                .and_then(|e| serde_json::from_value(e).ok())
                .unwrap_or_else(|| ErrorData::internal_error(out.text, None)));
        }
        Ok(out)
    }

    /// Runs a decided call through the dispatch path for a client: asked by
    /// elicitation where the client can answer, registered for relays (the
    /// server's progress and requests during it come back to this client),
    /// and ended early, logged, when the client cancels or the gateway stops.
    async fn dispatch_relayed(
        &self,
        context: &RequestContext<RoleServer>,
        snapshot: &crate::gateway::Snapshot,
        tool: &RegisteredTool,
        call: &Call,
        scrubbed_args: &Value,
        started: Instant,
    ) -> Result<Relayed, ErrorData> {
        let registry = &snapshot.registry;
        let elicits = context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form);
        let elicitor = elicits.then(|| Elicitor {
            peer: context.peer.clone(),
            scrubber_args: scrubbed_args.clone(),
            outcome: Mutex::new(Asked::default()),
        });
        let approver: Option<&dyn AsyncApprover> = elicitor.as_ref().map(|e| e as _);
        // The call is registered for relays: the server's progress and
        // requests during it come back to this client.
        let caller = self.gateway.relays.enter(
            self.session,
            context.peer.clone(),
            context.meta.get_progress_token(),
        );
        let dispatch =
            crate::mcp::client::CALLER.scope(caller.id, registry.dispatch_asking(call, approver));
        let dispatched = tokio::select! {
            d = dispatch => d,
            () = context.ct.cancelled() => {
                self.log_call(&snapshot.policy_hash, tool, call, None, false, "cancelled by the client", scrubbed_args, started);
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
            () = self.gateway.shutdown.cancelled() => {
                self.log_call(&snapshot.policy_hash, tool, call, None, false, "the gateway is stopping", scrubbed_args, started);
                return Err(ErrorData::internal_error("the gateway is stopping", None));
            }
        };
        caller.settle().await;
        drop(caller);
        let asked = elicitor.and_then(|e| e.outcome.lock().ok().and_then(|o| o.0.clone()));
        let ev = &dispatched.evaluation;
        let mut note = ev
            .reason
            .clone()
            .or_else(|| ev.reject_reason.clone())
            .unwrap_or_default();
        if let Some(said) = &asked {
            note = format!("{note} ({said})");
        }
        let ran =
            dispatched.result.is_ok() || matches!(dispatched.result, Err(ToolError::Failed(_)));
        Ok(Relayed {
            dispatched,
            asked,
            note,
            ran,
        })
    }

    /// Every upstream's items of one listing (`resources`, `resourceTemplates`),
    /// after the first connections, gathered under `key` and scrubbed.
    async fn listed(&self, key: &str, what: surfaces::Listing) -> Value {
        self.gateway.settle().await;
        let mut v = listing(
            key,
            self.gateway
                .gather(what)
                .await
                .into_iter()
                .map(|(_, r)| r)
                .collect(),
        );
        self.gateway
            .snapshot()
            .registry
            .scrubber()
            .scrub_json(&mut v);
        v
    }

    #[expect(clippy::too_many_arguments, reason = "one log line's parts")]
    fn log_call(
        &self,
        policy_hash: &str,
        tool: &RegisteredTool,
        call: &Call,
        evaluation: Option<&Evaluation>,
        ran: bool,
        reason: &str,
        scrubbed_args: &Value,
        started: Instant,
    ) {
        let snapshot = self.gateway.snapshot();
        let registry = &snapshot.registry;
        let mut reason = reason.to_string();
        if let Some(pin) = tool.pin
            && pin != crate::lock::PinState::Pinned
        {
            let why = pin.describe(tool.source.server(), tool.source.remote_name());
            if !reason.contains(&why) {
                reason = if reason.is_empty() {
                    why
                } else {
                    format!("{reason}; {why}")
                };
            }
        }
        let shadow = evaluation.and(snapshot.shadow.as_ref()).map(|s| match s {
            Ok(sh) => sh.decide(call),
            Err(why) => crate::shadow::failed(why, registry.scrubber()),
        });
        let (decision, matched, rules, answer) = match evaluation {
            Some(ev) => (
                ev.decision.as_str().to_string(),
                ev.matched.iter().map(|m| m.id.clone()).collect(),
                log::RuleAt::of(&ev.matched),
                if ran { "allow" } else { "deny" },
            ),
            None => ("cancelled".to_string(), Vec::new(), Vec::new(), "deny"),
        };
        self.gateway.log(log::Record {
            time: log::rfc3339_utc(SystemTime::now()),
            front: "serve".into(),
            session: String::new(),
            tool: call.tool.clone(),
            decision,
            answer: answer.into(),
            reason: registry.scrubber().scrub_str(&reason).into_owned(),
            matched,
            rules,
            policy: policy_hash.to_string(),
            bundle: self.gateway.bundle(),
            duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            args: match registry.settings().log_args {
                LogArgs::Scrubbed => Some(scrubbed_args.clone()),
                LogArgs::Omit => None,
            },
            shadow,
            ..log::Record::default()
        });
    }
}

/// A surface failure as the client's JSON-RPC error; the text scrubbed.
fn surface_error(gateway: &Gateway, e: SurfaceError) -> ErrorData {
    let scrub = |t: &str| {
        gateway
            .snapshot()
            .registry
            .scrubber()
            .scrub_str(t)
            .into_owned()
    };
    match e {
        SurfaceError::Invalid(m) => ErrorData::invalid_params(scrub(&m), None),
        SurfaceError::Failed(m) => ErrorData::internal_error(scrub(&m), None),
        SurfaceError::Upstream(mut data) => {
            data.message = scrub(&data.message).into();
            if let Some(d) = &mut data.data {
                gateway.snapshot().registry.scrubber().scrub_json(d);
            }
            data
        }
    }
}

/// A JSON value as an rmcp result type; a result that does not fit is the
/// server's fault, said plainly.
fn typed<T: serde::de::DeserializeOwned>(what: &str, v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| {
        ErrorData::internal_error(
            format!("the server's {what} result is not readable: {e}"),
            None,
        )
    })
}

/// A listing's items as one result page (the gateway pages nothing: each
/// server's whole list was read).
fn listing(key: &str, items: Vec<Value>) -> Value {
    json!({ key: items })
}

impl Handler {
    /// What the gateway offers: tools always; resources, prompts, completions
    /// and logging when a connected server offers them.
    fn capabilities(&self) -> ServerCapabilities {
        let g = &self.gateway;
        let mut caps = serde_json::Map::new();
        caps.insert("tools".into(), json!({"listChanged": true}));
        if g.offers("resources", None) {
            let mut r = serde_json::Map::new();
            if g.offers("resources", Some("subscribe")) {
                r.insert("subscribe".into(), true.into());
            }
            if g.offers("resources", Some("listChanged")) {
                r.insert("listChanged".into(), true.into());
            }
            caps.insert("resources".into(), Value::Object(r));
        }
        if g.offers("prompts", None) {
            let listed = g.offers("prompts", Some("listChanged"));
            caps.insert(
                "prompts".into(),
                if listed {
                    json!({"listChanged": true})
                } else {
                    json!({})
                },
            );
        }
        for plain in ["completions", "logging"] {
            if g.offers(plain, None) {
                caps.insert(plain.into(), json!({}));
            }
        }
        serde_json::from_value(Value::Object(caps)).unwrap_or_else(|_| {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        })
    }
}

/// Why a request of a method the gateway serves did not read as that
/// method's request: rmcp hands such a request on as a custom one, which
/// would be answered "method not found"; it is the client's params that are
/// wrong (`-32602`). `None` for a method the gateway does not serve.
#[expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577, and still spoken by the servers"
)]
fn invalid_params(method: &str, params: Option<&Value>) -> Option<String> {
    fn why<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> String {
        match params {
            None => "the request has no params".into(),
            Some(p) => match serde_json::from_value::<T>(p.clone()) {
                Err(e) => e.to_string(),
                Ok(_) => "they do not fit the method".into(),
            },
        }
    }
    Some(match method {
        "tools/call" => why::<CallToolRequestParams>(params),
        "resources/read" => why::<ReadResourceRequestParams>(params),
        "resources/subscribe" | "resources/unsubscribe" => {
            why::<rmcp::model::SubscribeRequestParams>(params)
        }
        "prompts/get" => why::<GetPromptRequestParams>(params),
        "completion/complete" => why::<CompleteRequestParams>(params),
        "logging/setLevel" => why::<rmcp::model::SetLevelRequestParams>(params),
        "initialize" => why::<InitializeRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            why::<PaginatedRequestParams>(params)
        }
        "ping" => "they do not fit the method".into(),
        _ => return None,
    })
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(self.capabilities())
        .with_server_info(Implementation::new("zero-policy", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "zero-policy gateway: every tool call is decided by the policy; refused calls return a tool error with the reason.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.gateway.settle().await;
        let snapshot = self.gateway.snapshot();
        Ok(ListToolsResult::with_all_items((*snapshot.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        let method = request.method.escape_debug().to_string();
        match invalid_params(&request.method, request.params.as_ref()) {
            Some(why) => Err(ErrorData::invalid_params(
                format!("invalid params for `{method}`: {why}"),
                None,
            )),
            None => Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: `{method}`"),
                None,
            )),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.gateway.add_peer(context.peer);
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // What is offered depends on the servers: let the first connections
        // land (bounded, as for the first `tools/list`).
        self.gateway.settle().await;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        typed(
            "resources/list",
            self.listed("resources", surfaces::RESOURCES).await,
        )
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        typed(
            "resources/templates/list",
            self.listed("resourceTemplates", surfaces::TEMPLATES).await,
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.gateway.settle().await;
        let (server, _) = self
            .gateway
            .route_uri(&request.uri)
            .await
            .map_err(|e| surface_error(&self.gateway, e))?;
        let out = self
            .surface(
                &server,
                crate::names::RESOURCE_READ,
                surfaces::read_args(&request.uri),
                &context,
            )
            .await?;
        let contents: Vec<ResourceContents> = out
            .content
            .into_iter()
            .filter_map(|b| match b {
                ContentBlock::Resource(r) => Some(r.resource),
                _ => None,
            })
            .collect();
        let mut result = ReadResourceResult::new(contents);
        result.meta = out.meta;
        Ok(ReadResourceResponse::Complete(result))
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (_, connection) = self
            .gateway
            .route_uri(&request.uri)
            .await
            .map_err(|e| surface_error(&self.gateway, e))?;
        // The server is asked once per URI; each client is told of updates
        // to what it subscribed to.
        if self
            .gateway
            .relays
            .subscribe(&request.uri, self.session, context.peer.clone())
            && let Err(e) = self
                .gateway
                .forward(
                    &connection,
                    "resources/subscribe",
                    json!({"uri": request.uri}),
                )
                .await
        {
            self.gateway.relays.unsubscribe(&request.uri, self.session);
            return Err(surface_error(&self.gateway, e));
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.gateway.relays.unsubscribe(&request.uri, self.session) {
            let (_, connection) = self
                .gateway
                .route_uri(&request.uri)
                .await
                .map_err(|e| surface_error(&self.gateway, e))?;
            self.gateway
                .forward(
                    &connection,
                    "resources/unsubscribe",
                    json!({"uri": request.uri}),
                )
                .await
                .map_err(|e| surface_error(&self.gateway, e))?;
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.gateway.settle().await;
        let (items, _) = self.gateway.prompt_names().await;
        let mut v = listing("prompts", items);
        self.gateway
            .snapshot()
            .registry
            .scrubber()
            .scrub_json(&mut v);
        typed("prompts/list", v)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.gateway.settle().await;
        let (server, remote) = self
            .gateway
            .route_prompt(&request.name)
            .await
            .map_err(|e| surface_error(&self.gateway, e))?;
        let mut args = serde_json::Map::new();
        args.insert("name".into(), remote.into());
        if let Some(a) = request.arguments {
            args.insert("arguments".into(), Value::Object(a));
        }
        let out = self
            .surface(
                &server,
                crate::names::PROMPT_GET,
                Value::Object(args),
                &context,
            )
            .await?;
        let result: GetPromptResult = typed("prompts/get", out.structured.unwrap_or(Value::Null))?;
        Ok(GetPromptResponse::Complete(result))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.gateway.settle().await;
        let mut params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let reference = params.get("ref").cloned().unwrap_or(Value::Null);
        let connection = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
                let (server, remote) = self
                    .gateway
                    .route_prompt(name)
                    .await
                    .map_err(|e| surface_error(&self.gateway, e))?;
                if let Some(r) = params.get_mut("ref").and_then(Value::as_object_mut) {
                    r.insert("name".into(), remote.into());
                }
                self.gateway
                    .offering("prompts")
                    .into_iter()
                    .find(|(s, _)| *s == server)
                    .map(|(_, c)| c)
            }
            Some("ref/resource") => {
                let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
                // A template is completed by the server that lists it.
                let listed = self
                    .gateway
                    .gather(surfaces::TEMPLATES)
                    .await
                    .into_iter()
                    .find(|(_, t)| t.get("uriTemplate").and_then(Value::as_str) == Some(uri))
                    .map(|(s, _)| s);
                match listed {
                    Some(server) => self
                        .gateway
                        .offering("resources")
                        .into_iter()
                        .find(|(s, _)| *s == server)
                        .map(|(_, c)| c),
                    None => Some(
                        self.gateway
                            .route_uri(uri)
                            .await
                            .map_err(|e| surface_error(&self.gateway, e))?
                            .1,
                    ),
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "`ref` must be a `ref/prompt` or a `ref/resource`",
                    None,
                ));
            }
        };
        let Some(connection) = connection else {
            return Err(ErrorData::invalid_params(
                "no connected server offers what `ref` names",
                None,
            ));
        };
        let result = self
            .gateway
            .forward(&connection, "completion/complete", params)
            .await
            .map_err(|e| surface_error(&self.gateway, e))?;
        typed("completion/complete", result)
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577, and still spoken by the servers"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let offering = self.gateway.offering("logging");
        if offering.is_empty() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        // Every server that logs is told; the first failure is passed on.
        let mut first_error = None;
        for (_, connection) in offering {
            if let Err(e) = self
                .gateway
                .forward(&connection, "logging/setLevel", params.clone())
                .await
            {
                first_error.get_or_insert(surface_error(&self.gateway, e));
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// What [`Handler::dispatch_relayed`] gave: the dispatch, what the person
/// said when asked, the log's note, and whether the call ran.
struct Relayed {
    dispatched: crate::dispatch::Dispatched,
    asked: Option<String>,
    note: String,
    ran: bool,
}
