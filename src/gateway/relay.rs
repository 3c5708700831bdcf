//! What an upstream server says to its client, relayed to the gateway's
//! clients (docs/gateway.md, "Relayed requests and notifications").
//!
//! - Progress of a call goes to the client that made the call, under the
//!   client's own progress token; at most [`MAX_PROGRESS`] per call.
//! - Sampling and elicitation go to the client whose call is in flight to that
//!   server, when the manifest lets the server ask (`servers[].allow`) and the
//!   client declared the capability; `roots/list` likewise, or to the only
//!   client when no call is in flight. Two clients with calls in flight to the
//!   server: the request is refused, never sent to the wrong person. At most
//!   [`MAX_RELAYED`] requests per server wait at once, each for at most
//!   [`RELAY_TIMEOUT`].
//! - Log messages and list changes go to every client, log messages at most
//!   [`LOGS_PER_SECOND`] a second per server.
//!
//! Everything relayed to a client is scrubbed; a client's answer to its
//! server is not (it is the person's).

// Logging is deprecated by SEP-2577 and still spoken by the servers.
#![expect(
    deprecated,
    reason = "log messages are relayed while servers send them"
)]

use std::collections::HashMap;
use std::sync::Weak;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{
    CustomRequest, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use crate::gateway::{Gateway, lock_or_recover};
use crate::log;
use crate::mcp::client::{BoxFuture, Downstream};
use crate::model::ServerAllow;

/// Progress notifications relayed per call at most.
pub const MAX_PROGRESS: usize = 10_000;
/// Requests from one server waiting for a client at once, at most.
pub const MAX_RELAYED: usize = 4;
/// How long a relayed request waits for the client.
pub const RELAY_TIMEOUT: Duration = Duration::from_secs(600);
/// Log messages relayed per server and second, at most.
pub const LOGS_PER_SECOND: usize = 100;
/// How long one notification may wait for a slow client before it is dropped.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(1);

/// A downstream call in flight: who made it, with which progress token.
pub(crate) struct Caller {
    session: u64,
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    progress_sent: AtomicUsize,
    /// Progress notifications being sent to the client now.
    relaying: AtomicUsize,
}

/// The client sessions subscribed to one resource, with their peers.
type Subscribers = Vec<(u64, Peer<RoleServer>)>;

/// The relay's state, kept by the gateway.
#[derive(Default)]
pub(crate) struct Relays {
    next: AtomicU64,
    callers: std::sync::Mutex<HashMap<u64, std::sync::Arc<Caller>>>,
    waiting: std::sync::Mutex<HashMap<String, usize>>,
    logs: std::sync::Mutex<HashMap<String, (Instant, usize)>>,
    /// Resource URIs and the client sessions subscribed to each.
    subscriptions: std::sync::Mutex<HashMap<String, Subscribers>>,
}

/// A call registered for relays while it is alive.
pub(crate) struct CallGuard<'a> {
    relays: &'a Relays,
    /// The id the mcp layer carries ([`crate::mcp::client::CALLER`]).
    pub id: u64,
}

impl CallGuard<'_> {
    /// Before the answer leaves: lets the server's last progress
    /// notifications (handled on their own tasks) reach the client first, so
    /// the client sees them in the order the server sent them. Only a call
    /// with a progress token waits, and at most a few milliseconds.
    pub(crate) async fn settle(&self) {
        let caller = lock_or_recover(&self.relays.callers).get(&self.id).cloned();
        let Some(caller) = caller.filter(|c| c.progress_token.is_some()) else {
            return;
        };
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        let deadline = Instant::now() + Duration::from_millis(50);
        while caller.relaying.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        lock_or_recover(&self.relays.callers).remove(&self.id);
    }
}

impl Relays {
    /// Registers a call of client `session` (its peer and progress token).
    pub(crate) fn enter(
        &self,
        session: u64,
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
    ) -> CallGuard<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        lock_or_recover(&self.callers).insert(
            id,
            std::sync::Arc::new(Caller {
                session,
                peer,
                progress_token,
                progress_sent: AtomicUsize::new(0),
                relaying: AtomicUsize::new(0),
            }),
        );
        CallGuard { relays: self, id }
    }

    /// Records that `session` subscribed to `uri`; whether it is the first.
    pub(crate) fn subscribe(&self, uri: &str, session: u64, peer: Peer<RoleServer>) -> bool {
        let mut subs = lock_or_recover(&self.subscriptions);
        let list = subs.entry(uri.to_string()).or_default();
        let first = list.is_empty();
        if !list.iter().any(|(s, _)| *s == session) {
            list.push((session, peer));
        }
        first
    }

    /// Forgets `session`'s subscription to `uri`; whether none is left.
    pub(crate) fn unsubscribe(&self, uri: &str, session: u64) -> bool {
        let mut subs = lock_or_recover(&self.subscriptions);
        let Some(list) = subs.get_mut(uri) else {
            return true;
        };
        list.retain(|(s, p)| *s != session && !p.is_transport_closed());
        let last = list.is_empty();
        if last {
            subs.remove(uri);
        }
        last
    }

    /// How many calls are in flight.
    pub(crate) fn in_flight(&self) -> usize {
        lock_or_recover(&self.callers).len()
    }

    /// A new client session's number.
    pub(crate) fn session(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The gateway as the [`Downstream`] of its upstream connections.
pub(crate) struct Relay {
    pub gateway: Weak<Gateway>,
}

/// Takes a slot among a server's waiting requests; frees it when dropped.
struct Slot<'a> {
    relays: &'a Relays,
    server: String,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some(n) = lock_or_recover(&self.relays.waiting).get_mut(&self.server) {
            *n = n.saturating_sub(1);
        }
    }
}

fn refused(message: String) -> ErrorData {
    ErrorData::invalid_request(message, None)
}

impl Relay {
    async fn relay_request(
        &self,
        server: &str,
        callers: Vec<u64>,
        method: &str,
        mut params: Value,
    ) -> Result<Value, ErrorData> {
        let Some(gateway) = self.gateway.upgrade() else {
            return Err(refused("the gateway is stopping".into()));
        };
        let needs = match method {
            "sampling/createMessage" => Some((ServerAllow::Sampling, "sampling")),
            "elicitation/create" => Some((ServerAllow::Elicitation, "elicitation")),
            "roots/list" => None,
            _ => {
                return Err(ErrorData::method_not_found::<
                    rmcp::model::CreateMessageRequestMethod,
                >());
            }
        };
        let decided = |allowed: bool, why: &str| {
            gateway.log(log::Record {
                time: log::rfc3339_utc(SystemTime::now()),
                front: "serve".into(),
                session: String::new(),
                tool: crate::names::mcp_surface_name(
                    gateway.snapshot().registry.name_format(server),
                    server,
                    method,
                ),
                decision: if allowed { "allow" } else { "deny" }.into(),
                answer: if allowed { "allow" } else { "deny" }.into(),
                reason: why.to_string(),
                policy: gateway.snapshot().policy_hash.clone(),
                bundle: gateway.bundle(),
                ..log::Record::default()
            });
        };
        if let Some((allow, word)) = needs {
            let allowed = gateway
                .policy()
                .servers
                .iter()
                .find(|s| s.name == server)
                .is_some_and(|s| s.allow.contains(&allow));
            if !allowed {
                let why = format!(
                    "server `{server}` may not ask for {word} through the gateway (`servers[].allow` does not list `{word}`)"
                );
                decided(false, &why);
                return Err(refused(why));
            }
        }
        let relays = &gateway.relays;
        // The client to ask: the one whose call is in flight to this server.
        let caller = {
            let callers_now = lock_or_recover(&relays.callers);
            let mut found: Vec<std::sync::Arc<Caller>> = callers
                .iter()
                .filter_map(|id| callers_now.get(id).cloned())
                .collect();
            found.sort_by_key(|c| c.session);
            found.dedup_by_key(|c| c.session);
            match found.len() {
                1 => found.pop(),
                0 => None,
                _ => {
                    let why = format!(
                        "{method} from server `{server}` while several clients have calls in flight to it; the gateway cannot tell which client it is for"
                    );
                    drop(callers_now);
                    decided(false, &why);
                    return Err(refused(why));
                }
            }
        };
        let peer = match caller {
            Some(c) => c.peer.clone(),
            None => {
                let peers = gateway.live_peers();
                match (method, peers.as_slice()) {
                    ("roots/list", [only]) => only.clone(),
                    _ => {
                        let why = format!(
                            "{method} from server `{server}` outside any call of one client"
                        );
                        decided(false, &why);
                        return Err(refused(why));
                    }
                }
            }
        };
        let declared = peer.peer_info().is_some_and(|info| {
            let caps = serde_json::to_value(&info.capabilities).unwrap_or(Value::Null);
            let key = match method {
                "sampling/createMessage" => "sampling",
                "elicitation/create" => "elicitation",
                _ => "roots",
            };
            caps.get(key).is_some_and(|c| !c.is_null())
        });
        if !declared {
            let why = format!("{method} from server `{server}`: the client did not declare it");
            decided(false, &why);
            return Err(refused(why));
        }
        let _slot = {
            let mut waiting = lock_or_recover(&relays.waiting);
            let n = waiting.entry(server.to_string()).or_insert(0);
            if *n >= MAX_RELAYED {
                drop(waiting);
                let why = format!(
                    "server `{server}` already has {MAX_RELAYED} requests waiting for the client"
                );
                decided(false, &why);
                return Err(refused(why));
            }
            *n += 1;
            Slot {
                relays,
                server: server.to_string(),
            }
        };
        decided(true, &format!("{method} relayed to the client"));
        // What the server shows the person leaves through the scrubber.
        gateway
            .snapshot()
            .registry
            .scrubber()
            .scrub_json(&mut params);
        let request =
            ServerRequest::CustomRequest(CustomRequest::new(method.to_string(), Some(params)));
        let answer = tokio::select! {
            a = tokio::time::timeout(RELAY_TIMEOUT, peer.send_request(request)) => a,
            () = gateway.shutdown.cancelled() => return Err(refused("the gateway is stopping".into())),
        };
        match answer {
            Err(_) => Err(refused(format!(
                "the client did not answer {method} within {}s",
                RELAY_TIMEOUT.as_secs()
            ))),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(e),
            Ok(Err(e)) => Err(ErrorData::internal_error(
                format!("relaying {method} to the client failed: {e}"),
                None,
            )),
            Ok(Ok(result)) => match result {
                rmcp::model::ClientResult::CustomResult(c) => Ok(c.0),
                other => serde_json::to_value(&other)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            },
        }
    }

    async fn relay_progress(&self, caller: u64, params: Value) {
        let Some(gateway) = self.gateway.upgrade() else {
            return;
        };
        let Some(c) = lock_or_recover(&gateway.relays.callers)
            .get(&caller)
            .cloned()
        else {
            return;
        };
        let Some(token) = c.progress_token.clone() else {
            return;
        };
        if c.progress_sent.fetch_add(1, Ordering::Relaxed) >= MAX_PROGRESS {
            return;
        }
        c.relaying.fetch_add(1, Ordering::AcqRel);
        struct Done<'a>(&'a AtomicUsize);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _done = Done(&c.relaying);
        let Ok(mut p) = serde_json::from_value::<ProgressNotificationParam>(params) else {
            return;
        };
        p.progress_token = token;
        if let Some(m) = &mut p.message {
            *m = gateway
                .snapshot()
                .registry
                .scrubber()
                .scrub_str(m)
                .into_owned();
        }
        let _ = tokio::time::timeout(NOTIFY_TIMEOUT, c.peer.notify_progress(p)).await;
    }

    async fn relay_notification(&self, server: &str, method: &str, mut params: Value) {
        let Some(gateway) = self.gateway.upgrade() else {
            return;
        };
        let peers = gateway.live_peers();
        match method {
            "notifications/message" => {
                {
                    let mut logs = lock_or_recover(&gateway.relays.logs);
                    let now = Instant::now();
                    let (start, count) = logs.entry(server.to_string()).or_insert((now, 0));
                    if now.duration_since(*start) >= Duration::from_secs(1) {
                        *start = now;
                        *count = 0;
                    }
                    *count += 1;
                    if *count > LOGS_PER_SECOND {
                        return;
                    }
                }
                gateway
                    .snapshot()
                    .registry
                    .scrubber()
                    .scrub_json(&mut params);
                let Ok(p) = serde_json::from_value::<LoggingMessageNotificationParam>(params)
                else {
                    return;
                };
                for peer in peers {
                    let _ = tokio::time::timeout(
                        NOTIFY_TIMEOUT,
                        peer.notify_logging_message(p.clone()),
                    )
                    .await;
                }
            }
            // Only the clients that subscribed to the resource hear of it.
            "notifications/resources/updated" => {
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    return;
                };
                let subscribed: Vec<Peer<RoleServer>> =
                    lock_or_recover(&gateway.relays.subscriptions)
                        .get(uri)
                        .map(|l| l.iter().map(|(_, p)| p.clone()).collect())
                        .unwrap_or_default();
                let Ok(p) =
                    serde_json::from_value::<rmcp::model::ResourceUpdatedNotificationParam>(params)
                else {
                    return;
                };
                for peer in subscribed {
                    let _ = tokio::time::timeout(
                        NOTIFY_TIMEOUT,
                        peer.notify_resource_updated(p.clone()),
                    )
                    .await;
                }
            }
            "notifications/resources/list_changed" => {
                for peer in peers {
                    let _ =
                        tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_resource_list_changed())
                            .await;
                }
            }
            "notifications/prompts/list_changed" => {
                for peer in peers {
                    let _ = tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_prompt_list_changed())
                        .await;
                }
            }
            // Tool list changes reach clients when the gateway's own list
            // changes (the server is listed again by its health check);
            // anything else is not relayed.
            _ => {}
        }
    }
}

impl Downstream for Relay {
    fn request<'a>(
        &'a self,
        server: &'a str,
        callers: Vec<u64>,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, ErrorData>> {
        Box::pin(self.relay_request(server, callers, method, params))
    }

    fn progress<'a>(&'a self, _server: &'a str, caller: u64, params: Value) -> BoxFuture<'a, ()> {
        Box::pin(self.relay_progress(caller, params))
    }

    fn notify<'a>(&'a self, server: &'a str, method: &'a str, params: Value) -> BoxFuture<'a, ()> {
        Box::pin(self.relay_notification(server, method, params))
    }
}
