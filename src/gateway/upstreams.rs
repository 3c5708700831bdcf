//! One supervisor task per upstream MCP server.
//!
//! A supervisor connects and lists under the server's timeout, in the
//! background: the gateway serves at once, and a slow server's tools appear
//! when it answers (`notifications/tools/list_changed`). While connected it
//! re-lists every [`HEALTH_INTERVAL`] (a server that died, hung or changed a
//! tool's definition is seen without waiting for a call) and wakes at once when
//! a call finds the connection gone. A lost server's tools fail with an error
//! naming it until it is back; reconnects back off from [`FIRST_BACKOFF`] to
//! [`MAX_BACKOFF`]. Nothing an upstream does stops the gateway.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::gateway::{Gateway, Live, Status, lock_or_recover};
use crate::mcp::register::{self, Connection};
use crate::policy::ServerDef;
use crate::registry::SkippedServer;

/// How often a connected server is listed again.
pub const HEALTH_INTERVAL: Duration = Duration::from_secs(2);
/// The first wait before a reconnect.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait between reconnects.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The running supervisors, by server, with what they were started for.
#[derive(Default)]
pub struct Supervisors {
    running: Mutex<BTreeMap<String, (String, CancellationToken)>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Supervisors {
    /// Waits for every supervisor to stop (after the shutdown token is
    /// cancelled): each closes its connection and reaps its server.
    pub async fn join(&self, bound: Duration) {
        let tasks = std::mem::take(&mut *lock_or_recover(&self.tasks));
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        let _ = tokio::time::timeout(bound, all).await;
    }
}

impl std::fmt::Debug for Supervisors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisors").finish_non_exhaustive()
    }
}

/// What a server's connection depends on: a changed key restarts it.
fn connect_key(s: &ServerDef) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        s.transport, s.command, s.args, s.env, s.url, s.headers, s.connect_timeout, s.auth
    )
}

/// Starts a supervisor for every server of the policy in force, stops those of
/// servers no longer declared, and restarts those whose connection changed.
pub fn reconcile(gateway: &Arc<Gateway>) {
    let supervisors = &gateway.supervisors;
    let policy = gateway.policy();
    let mut running = lock_or_recover(&supervisors.running);
    let wanted: BTreeMap<String, &ServerDef> =
        policy.servers.iter().map(|s| (s.name.clone(), s)).collect();
    let stale: Vec<String> = running
        .iter()
        .filter(|(name, (key, _))| wanted.get(*name).is_none_or(|s| connect_key(s) != *key))
        .map(|(name, _)| name.clone())
        .collect();
    for name in stale {
        if let Some((_, stop)) = running.remove(&name) {
            stop.cancel();
        }
    }
    for (name, server) in wanted {
        if running.contains_key(&name) {
            continue;
        }
        let stop = gateway.shutdown.child_token();
        running.insert(name.clone(), (connect_key(server), stop.clone()));
        lock_or_recover(&gateway.status).insert(name, Status::Connecting);
        let task = tokio::spawn(supervise(Arc::clone(gateway), server.clone(), stop));
        let mut tasks = lock_or_recover(&supervisors.tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}

async fn set_down(gateway: &Gateway, server: &str, why: SkippedServer) {
    lock_or_recover(&gateway.status).insert(server.to_string(), Status::Down(why));
    gateway.rebuild().await;
}

/// Keeps one server connected until `stop`.
async fn supervise(gateway: Arc<Gateway>, server: ServerDef, stop: CancellationToken) {
    let lookup = |name: &str| std::env::var(name).ok();
    let mut backoff = FIRST_BACKOFF;
    // One spec for every attempt: a server's authorization (its token, its
    // scope step-ups) outlives a lost connection.
    let spec = register::connect_spec(&server, &lookup);
    loop {
        let spec = match spec.clone() {
            Ok(spec) => spec,
            Err(e) => {
                // A missing variable does not fix itself: report it once and wait.
                gateway.note(&format!("MCP server `{}` cannot connect: {e}", server.name));
                set_down(
                    &gateway,
                    &server.name,
                    SkippedServer {
                        server: server.name.clone(),
                        reason: "connect-failed".into(),
                        detail: e,
                    },
                )
                .await;
                stop.cancelled().await;
                return;
            }
        };
        let attempt = tokio::select! {
            r = register::connect_and_list_relayed(spec, Some(std::sync::Arc::new(
                super::relay::Relay { gateway: std::sync::Arc::downgrade(&gateway) },
            ))) => r,
            () = stop.cancelled() => return,
        };
        match attempt {
            Ok((client, tools)) => {
                let capabilities = client.capabilities().unwrap_or_default();
                let connection = Connection::new(&server.name, client);
                lock_or_recover(&gateway.live).insert(
                    server.name.clone(),
                    Live {
                        connection: connection.clone(),
                        tools,
                        capabilities,
                    },
                );
                // INVARIANT: the registry with its tools is in force before
                // the status says `Up`, so a call that waited for the first
                // connection finds them.
                gateway.rebuild().await;
                lock_or_recover(&gateway.status).insert(server.name.clone(), Status::Up);
                backoff = FIRST_BACKOFF;
                let lost = watch(&gateway, &server.name, &connection, &stop).await;
                lock_or_recover(&gateway.live).remove(&server.name);
                match lost {
                    None => {
                        // Stopped: close it and reap the server (in-flight calls end first;
                        // at shutdown they are cancelled).
                        connection.close().await;
                        if !gateway.shutdown.is_cancelled() {
                            lock_or_recover(&gateway.status).remove(&server.name);
                            gateway.rebuild().await;
                        }
                        return;
                    }
                    Some(why) => {
                        gateway.note(&format!(
                            "MCP server `{}` was lost ({}); reconnecting",
                            server.name, why.detail
                        ));
                        retire(&gateway, connection);
                        set_down(&gateway, &server.name, why).await;
                    }
                }
            }
            Err(why) => {
                gateway.note(&format!(
                    "MCP server `{}` did not connect ({}: {}); retrying in {} ms",
                    server.name,
                    why.reason,
                    why.detail,
                    backoff.as_millis()
                ));
                set_down(&gateway, &server.name, why).await;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = stop.cancelled() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Closes a connection in the background; it stays listed for shutdown until closed.
fn retire(gateway: &Arc<Gateway>, connection: Connection) {
    lock_or_recover(&gateway.retired).push(connection.clone());
    let gateway = Arc::clone(gateway);
    tokio::spawn(async move {
        connection.close().await;
        lock_or_recover(&gateway.retired).retain(|c| !same(c, &connection));
    });
}

fn same(a: &Connection, b: &Connection) -> bool {
    a.ptr_eq(b)
}

/// Watches a live connection; `None` when stopped, else why it was lost.
async fn watch(
    gateway: &Gateway,
    server: &str,
    connection: &Connection,
    stop: &CancellationToken,
) -> Option<SkippedServer> {
    loop {
        tokio::select! {
            () = stop.cancelled() => return None,
            () = connection.died() => {
                return Some(SkippedServer {
                    server: server.to_string(),
                    reason: "connection-lost".into(),
                    detail: "a call found the connection closed".into(),
                });
            }
            () = tokio::time::sleep(HEALTH_INTERVAL) => {
                let listed = tokio::select! {
                    r = connection.list() => r,
                    () = stop.cancelled() => return None,
                };
                match listed {
                    Ok(tools) => {
                        let changed = {
                            let mut live = lock_or_recover(&gateway.live);
                            match live.get_mut(server) {
                                Some(l) if l.tools != tools => {
                                    l.tools = tools;
                                    true
                                }
                                _ => false,
                            }
                        };
                        if changed {
                            gateway.rebuild().await;
                        }
                    }
                    Err(e) => {
                        return Some(SkippedServer {
                            server: server.to_string(),
                            reason: "connection-lost".into(),
                            detail: e.to_string(),
                        });
                    }
                }
            }
        }
    }
}
