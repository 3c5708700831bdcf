//! Resources, prompts, completions and logging through the gateway
//! (docs/gateway.md, "Resources and prompts").
//!
//! - Listings (`resources/list`, `resources/templates/list`, `prompts/list`)
//!   gather every connected server's whole list (each server's cursors
//!   followed to the end), in server-name order, scrubbed.
//! - Prompt names are given as tool names are (the server's `mcp_name_format`, else the settings'):
//!   `mcp__{server}__{prompt}`. Resource URIs pass unchanged, so a link in a
//!   tool result still reads; a URI is routed to the server that lists it, or
//!   whose template matches it, or to the only server that offers resources.
//!   A URI two servers claim is refused, never guessed.
//! - What acts is decided: `resources/read` and `prompts/get` go through the
//!   dispatch path as `mcp__{server}__resources/read` and
//!   `mcp__{server}__prompts/get` ([`crate::mcp::register::register_surfaces`]).
//!   Completions and `logging/setLevel` read nothing and are forwarded.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::gateway::{Gateway, lock_or_recover};
use crate::mcp::client::McpError;
use crate::mcp::register::Connection;

/// Upper bound on pages per server and listing.
const MAX_PAGES: usize = 1_000;

/// A listing kind: its method, the array key of a page, and the capability a
/// server declares for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listing {
    pub method: &'static str,
    pub key: &'static str,
    pub capability: &'static str,
}

/// `resources/list`.
pub(crate) const RESOURCES: Listing = Listing {
    method: "resources/list",
    key: "resources",
    capability: "resources",
};
/// `resources/templates/list`.
pub(crate) const TEMPLATES: Listing = Listing {
    method: "resources/templates/list",
    key: "resourceTemplates",
    capability: "resources",
};
/// `prompts/list`.
pub(crate) const PROMPTS: Listing = Listing {
    method: "prompts/list",
    key: "prompts",
    capability: "prompts",
};

/// A failure to pass on to the client as a JSON-RPC error.
#[derive(Debug)]
pub(crate) enum SurfaceError {
    /// The client's request names nothing the gateway can route (`-32602`).
    Invalid(String),
    /// The server answered with this error, passed on.
    Upstream(rmcp::ErrorData),
    /// The server failed or is gone (`-32603`).
    Failed(String),
}

impl From<McpError> for SurfaceError {
    fn from(e: McpError) -> Self {
        match e {
            McpError::Rpc { error, .. } => SurfaceError::Upstream(error),
            other => SurfaceError::Failed(other.to_string()),
        }
    }
}

impl Gateway {
    /// The connected servers that declared `capability`, in name order.
    pub(crate) fn offering(&self, capability: &str) -> Vec<(String, Connection)> {
        lock_or_recover(&self.live)
            .iter()
            .filter(|(_, l)| l.capabilities.get(capability).is_some_and(|c| !c.is_null()))
            .map(|(name, l)| (name.clone(), l.connection.clone()))
            .collect()
    }

    /// Whether some connected server declared `capability` (and, with `flag`,
    /// that flag of it, e.g. `resources.subscribe`).
    pub(crate) fn offers(&self, capability: &str, flag: Option<&str>) -> bool {
        lock_or_recover(&self.live).values().any(|l| {
            let c = l.capabilities.get(capability);
            match flag {
                None => c.is_some_and(|c| !c.is_null()),
                Some(f) => c.and_then(|c| c.get(f)).and_then(Value::as_bool) == Some(true),
            }
        })
    }

    /// Every item of a listing from every server offering it, each tagged with
    /// its server, in server-name order. A server that fails is left out and
    /// noted; the others still answer.
    pub(crate) async fn gather(&self, listing: Listing) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for (server, connection) in self.offering(listing.capability) {
            match list_all(&connection, listing).await {
                Ok(items) => out.extend(items.into_iter().map(|i| (server.clone(), i))),
                Err(e) => self.note(&format!(
                    "{} of server `{server}` failed: {e}",
                    listing.method
                )),
            }
        }
        out
    }

    /// The prompt names the gateway gives, each with its server and the
    /// server's own name, from a fresh listing.
    pub(crate) async fn prompt_names(&self) -> (Vec<Value>, BTreeMap<String, (String, String)>) {
        let snapshot = self.snapshot();
        let mut names = BTreeMap::new();
        let mut listed = Vec::new();
        for (server, mut item) in self.gather(PROMPTS).await {
            let Some(remote) = item.get("name").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            let name = crate::names::mcp_tool_name(
                snapshot.registry.name_format(&server),
                &server,
                &remote,
            );
            if let Some(taken) = names.get_mut(&name) {
                // Two prompts of one name: neither is reachable by it, both are dropped.
                listed.retain(|p: &Value| p.get("name").and_then(Value::as_str) != Some(&name));
                *taken = (String::new(), String::new());
                continue;
            }
            if let Value::Object(m) = &mut item {
                m.insert("name".into(), Value::String(name.clone()));
            }
            names.insert(name, (server, remote));
            listed.push(item);
        }
        names.retain(|_, (server, _)| !server.is_empty());
        (listed, names)
    }

    /// The server and own name of a prompt the gateway listed.
    pub(crate) async fn route_prompt(&self, name: &str) -> Result<(String, String), SurfaceError> {
        let (_, names) = self.prompt_names().await;
        names.get(name).cloned().ok_or_else(|| {
            SurfaceError::Invalid(format!("unknown prompt `{}`", name.escape_debug()))
        })
    }

    /// The server a resource URI belongs to: the one that lists it, else the
    /// one whose template matches it, else the only server offering resources.
    pub(crate) async fn route_uri(&self, uri: &str) -> Result<(String, Connection), SurfaceError> {
        let offering = self.offering("resources");
        let connection = |server: &str| {
            offering
                .iter()
                .find(|(s, _)| s == server)
                .map(|(_, c)| c.clone())
        };
        let pick = |servers: Vec<String>,
                    how: &str|
         -> Option<Result<(String, Connection), SurfaceError>> {
            let mut servers = servers;
            servers.dedup();
            match servers.as_slice() {
                [] => None,
                [one] => connection(one).map(|c| Ok((one.clone(), c))),
                many => Some(Err(SurfaceError::Invalid(format!(
                    "resource `{}` is {how} by several servers ({}); the gateway does not guess",
                    uri.escape_debug(),
                    many.join(", ")
                )))),
            }
        };
        if offering.len() == 1 {
            let (s, c) = offering[0].clone();
            return Ok((s, c));
        }
        let listed: Vec<String> = self
            .gather(RESOURCES)
            .await
            .into_iter()
            .filter(|(_, r)| r.get("uri").and_then(Value::as_str) == Some(uri))
            .map(|(s, _)| s)
            .collect();
        if let Some(r) = pick(listed, "listed") {
            return r;
        }
        let templated: Vec<String> = self
            .gather(TEMPLATES)
            .await
            .into_iter()
            .filter(|(_, t)| {
                t.get("uriTemplate")
                    .and_then(Value::as_str)
                    .is_some_and(|t| template_matches(t, uri))
            })
            .map(|(s, _)| s)
            .collect();
        if let Some(r) = pick(templated, "matched") {
            return r;
        }
        Err(SurfaceError::Invalid(format!(
            "no connected server lists resource `{}`",
            uri.escape_debug()
        )))
    }

    /// Forwards a request to one server, unchanged; its result scrubbed.
    pub(crate) async fn forward(
        &self,
        connection: &Connection,
        method: &str,
        params: Value,
    ) -> Result<Value, SurfaceError> {
        let mut result = connection.request(method, Some(params)).await?;
        self.snapshot().registry.scrubber().scrub_json(&mut result);
        Ok(result)
    }
}

/// Every item of one server's listing, following `nextCursor` (bounded).
async fn list_all(connection: &Connection, listing: Listing) -> Result<Vec<Value>, McpError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .as_ref()
            .map(|c| Value::Object(Map::from_iter([("cursor".to_string(), c.clone().into())])));
        let page = connection.request(listing.method, params).await?;
        if let Some(Value::Array(a)) = page.get(listing.key) {
            items.extend(a.iter().cloned());
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_string()),
            _ => return Ok(items),
        }
    }
    Ok(items)
}

/// Whether a URI fits an RFC 6570 template of simple `{name}` expressions:
/// the literal parts in order, each expression one or more characters (an
/// operator expression such as `{+path}` or `{/a,b}` may hold `/`).
#[must_use]
pub fn template_matches(template: &str, uri: &str) -> bool {
    let mut pattern = String::from("^");
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        pattern.push_str(&regex::escape(&rest[..open]));
        let Some(close) = rest[open..].find('}') else {
            return false;
        };
        let expr = &rest[open + 1..open + close];
        pattern.push_str(match expr.chars().next() {
            Some('+' | '#' | '/' | '.' | ';' | '?' | '&') => ".*",
            _ => "[^/?#]+",
        });
        rest = &rest[open + close + 1..];
    }
    pattern.push_str(&regex::escape(rest));
    pattern.push('$');
    regex::Regex::new(&pattern).is_ok_and(|r| r.is_match(uri))
}

/// The arguments a `resources/read` is decided with: the URI, and the
/// gateway's reading of it for the policy's effects: `path` for a `file:`
/// URI (percent-decoded, so `%2e%2e` is `..`), `url` for http(s).
#[must_use]
pub fn read_args(uri: &str) -> Value {
    let mut args = Map::new();
    args.insert("uri".into(), uri.into());
    if let Ok(parsed) = url::Url::parse(uri) {
        match parsed.scheme() {
            "file" => {
                let path = parsed.to_file_path().ok().map_or_else(
                    // A file URI with a remote host or an odd path: its path
                    // as written, decoded, still decided as a read.
                    || percent_decode(parsed.path()),
                    |p| p.display().to_string(),
                );
                args.insert("path".into(), path.into());
            }
            "http" | "https" => {
                args.insert("url".into(), uri.into());
            }
            _ => {}
        }
    }
    Value::Object(args)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(h, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_match_their_uris_only() {
        assert!(template_matches(
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/text/7"
        ));
        assert!(!template_matches(
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/blob/7"
        ));
        assert!(!template_matches(
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/text/7/x"
        ));
        assert!(template_matches("file:///{+path}", "file:///a/b/c"));
        assert!(!template_matches("a{", "a"));
    }

    #[test]
    fn reads_name_the_decoded_path() {
        assert_eq!(
            read_args("file:///home/u/%2essh/id_rsa"),
            json!({"uri": "file:///home/u/%2essh/id_rsa", "path": "/home/u/.ssh/id_rsa"})
        );
        assert_eq!(
            read_args("https://example.com/x"),
            json!({"uri": "https://example.com/x", "url": "https://example.com/x"})
        );
        assert_eq!(read_args("demo://r/1"), json!({"uri": "demo://r/1"}));
    }
}
