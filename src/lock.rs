//! `zero-policy.lock`: the approved definition of every upstream MCP tool.
//!
//! `zero-policy pin` writes one hash per tool: SHA-256 over the canonical JSON
//! (object keys sorted, no whitespace) of the tool's name, description, input
//! schema and annotations as the server lists them. While a lock exists, a tool
//! whose definition is not the one pinned is decided `settings.gateway.pinning`
//! (a "rug pull": a server that changes what a tool says or takes after it was
//! reviewed). The file is JSON with sorted keys and one entry a line, so a
//! review in git sees exactly which tool changed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The lock's file name.
pub const LOCK_FILE: &str = "zero-policy.lock";
/// The only lock format.
const LOCK_VERSION: u64 = 1;
/// Largest lock read; far above any real one.
const MAX_LOCK_BYTES: u64 = 8 * 1024 * 1024;

/// The approved definitions: server → remote tool name → hash.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    /// Where it was read from (or is to be written).
    pub path: PathBuf,
    /// server → tool → `sha256:…`.
    pub servers: BTreeMap<String, BTreeMap<String, String>>,
}

/// How a listed tool's definition compares with the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinState {
    /// The definition is the one pinned.
    Pinned,
    /// The lock pins another definition of this tool.
    Changed,
    /// The lock does not list this tool.
    Unpinned,
}

impl PinState {
    /// `pinned`, `changed`, `unpinned`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PinState::Pinned => "pinned",
            PinState::Changed => "changed",
            PinState::Unpinned => "unpinned",
        }
    }

    /// One sentence for `explain`, `tools --connect` and the log.
    #[must_use]
    pub fn describe(self, server: &str, tool: &str) -> String {
        match self {
            PinState::Pinned => format!("the definition of `{server}/{tool}` is pinned"),
            PinState::Changed => format!(
                "the definition of `{server}/{tool}` differs from the one in {LOCK_FILE}; review it and run `zero-policy pin`"
            ),
            PinState::Unpinned => format!(
                "`{server}/{tool}` is not in {LOCK_FILE}; review it and run `zero-policy pin`"
            ),
        }
    }
}

/// JSON with every object's keys sorted and no whitespace: one text per value,
/// whatever order the server sent the keys in.
#[must_use]
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(value) = map.get(k) {
                    write_canonical(value, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The hash of one tool definition, as the server lists it.
#[must_use]
pub fn definition_hash(
    name: &str,
    description: Option<&str>,
    input_schema: &Value,
    annotations: Option<&Value>,
) -> String {
    let definition = serde_json::json!({
        "name": name,
        "description": description,
        "inputSchema": input_schema,
        "annotations": annotations,
    });
    let digest = Sha256::digest(canonical_json(&definition).as_bytes());
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// Where the lock of these paths lives: in the first folder given, else beside
/// the first file; with no paths (the built-in default), the current folder.
#[must_use]
pub fn lock_path(paths: &[PathBuf]) -> PathBuf {
    match paths.first() {
        Some(p) if p.is_dir() => p.join(LOCK_FILE),
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from(LOCK_FILE), |d| d.join(LOCK_FILE)),
        None => PathBuf::from(LOCK_FILE),
    }
}

impl Lock {
    /// How a tool's definition compares with the lock.
    #[must_use]
    pub fn state(&self, server: &str, tool: &str, hash: &str) -> PinState {
        match self.servers.get(server).and_then(|t| t.get(tool)) {
            Some(h) if h == hash => PinState::Pinned,
            Some(_) => PinState::Changed,
            None => PinState::Unpinned,
        }
    }

    /// The file's text: sorted, one tool a line, ending in a newline.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut servers = serde_json::Map::new();
        for (server, tools) in &self.servers {
            let tools: serde_json::Map<String, Value> = tools
                .iter()
                .map(|(t, h)| (t.clone(), Value::String(h.clone())))
                .collect();
            servers.insert(server.clone(), Value::Object(tools));
        }
        let doc = serde_json::json!({"version": LOCK_VERSION, "servers": servers});
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads the lock at `path`; `Ok(None)` when there is none.
    ///
    /// # Errors
    /// The file cannot be read, is too large, is not a regular file, or is not
    /// a lock (the message names the file, and the line and column of bad JSON).
    pub fn read(path: &Path) -> Result<Option<Lock>, String> {
        let shown = path.display();
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read `{shown}`: {e}")),
        };
        if !meta.is_file() {
            return Err(format!("`{shown}` is not a regular file"));
        }
        if meta.len() > MAX_LOCK_BYTES {
            return Err(format!(
                "`{shown}` is larger than {} MiB",
                MAX_LOCK_BYTES / 1024 / 1024
            ));
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_LOCK_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
        Self::parse(path, &text).map(Some)
    }

    /// Parses a lock's text.
    ///
    /// # Errors
    /// The text is not a version-1 lock; the message names the file.
    pub fn parse(path: &Path, text: &str) -> Result<Lock, String> {
        let shown = path.display();
        let doc: Value = serde_json::from_str(text)
            .map_err(|e| format!("`{shown}`:{}:{}: not valid JSON: {e}", e.line(), e.column()))?;
        let bad =
            |what: &str| format!("`{shown}`: {what}; run `zero-policy pin` to write a new lock");
        let Some(obj) = doc.as_object() else {
            return Err(bad("the lock is not a JSON object"));
        };
        if let Some(k) = obj.keys().find(|k| *k != "version" && *k != "servers") {
            return Err(bad(&format!("unknown key `{k}`")));
        }
        match obj.get("version").and_then(Value::as_u64) {
            Some(LOCK_VERSION) => {}
            _ => return Err(bad("`version` is not 1")),
        }
        let mut servers = BTreeMap::new();
        let Some(listed) = obj.get("servers").and_then(Value::as_object) else {
            return Err(bad("`servers` is not an object"));
        };
        for (server, tools) in listed {
            let Some(tools) = tools.as_object() else {
                return Err(bad(&format!("`servers.{server}` is not an object")));
            };
            let mut hashes = BTreeMap::new();
            for (tool, hash) in tools {
                match hash.as_str() {
                    Some(h) if h.starts_with("sha256:") => {
                        hashes.insert(tool.clone(), h.to_string());
                    }
                    _ => {
                        return Err(bad(&format!(
                            "the hash of `{server}/{tool}` is not a `sha256:` string"
                        )));
                    }
                }
            }
            servers.insert(server.clone(), hashes);
        }
        Ok(Lock {
            path: path.to_path_buf(),
            servers,
        })
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::path::Path;

    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":"é"}}"#).unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"é","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
    }

    #[test]
    fn the_hash_ignores_key_order_and_sees_every_field() {
        let s1: Value =
            serde_json::from_str(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#)
                .unwrap();
        let s2: Value =
            serde_json::from_str(r#"{"properties":{"a":{"type":"string"}},"type":"object"}"#)
                .unwrap();
        let h = definition_hash("echo", Some("Echo"), &s1, None);
        assert!(h.starts_with("sha256:") && h.len() == 71, "{h}");
        assert_eq!(h, definition_hash("echo", Some("Echo"), &s2, None));
        assert_ne!(h, definition_hash("echo", Some("Echo!"), &s1, None));
        assert_ne!(h, definition_hash("echo2", Some("Echo"), &s1, None));
        assert_ne!(h, definition_hash("echo", None, &s1, None));
        let hint = serde_json::json!({"readOnlyHint": true});
        assert_ne!(h, definition_hash("echo", Some("Echo"), &s1, Some(&hint)));
    }

    #[test]
    fn a_lock_round_trips_and_states_compare() {
        let mut lock = Lock {
            path: "x/zero-policy.lock".into(),
            ..Lock::default()
        };
        lock.servers
            .entry("b".into())
            .or_default()
            .insert("t".into(), "sha256:01".into());
        lock.servers
            .entry("a".into())
            .or_default()
            .insert("t".into(), "sha256:02".into());
        let text = lock.to_text();
        assert!(
            text.find("\"a\"").unwrap() < text.find("\"b\"").unwrap(),
            "{text}"
        );
        assert_eq!(
            Lock::parse(Path::new("x/zero-policy.lock"), &text).unwrap(),
            lock
        );
        assert_eq!(lock.state("a", "t", "sha256:02"), PinState::Pinned);
        assert_eq!(lock.state("a", "t", "sha256:03"), PinState::Changed);
        assert_eq!(lock.state("a", "u", "sha256:02"), PinState::Unpinned);
    }

    #[test]
    fn a_bad_lock_is_an_error_naming_the_file() {
        let p = Path::new("p/zero-policy.lock");
        for (text, want) in [
            ("{", "p/zero-policy.lock`:1:"),
            ("[]", "not a JSON object"),
            (r#"{"version":2,"servers":{}}"#, "`version` is not 1"),
            (r#"{"version":1,"servers":{},"x":1}"#, "unknown key `x`"),
            (r#"{"version":1,"servers":{"s":{"t":"md5:x"}}}"#, "`s/t`"),
        ] {
            let e = Lock::parse(p, text).unwrap_err();
            assert!(
                e.contains(want) && e.contains("p/zero-policy.lock"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn the_lock_lives_in_the_first_folder_or_beside_the_first_file() {
        let dir = std::env::temp_dir();
        assert_eq!(lock_path(std::slice::from_ref(&dir)), dir.join(LOCK_FILE));
        assert_eq!(
            lock_path(&["pol/a.yaml".into()]),
            Path::new("pol").join(LOCK_FILE)
        );
        assert_eq!(lock_path(&["a.yaml".into()]), PathBuf::from(LOCK_FILE));
        assert_eq!(lock_path(&[]), PathBuf::from(LOCK_FILE));
    }
}
