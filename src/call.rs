//! A tool call and the caller's context: what every front door hands the
//! dispatch path, and what files write in `tests:` and `examples:`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cel;
use crate::model::{RawSession, Scope};

/// The caller's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The agent's mode (`ask`, `plan`, `auto`, ...).
    #[serde(default = "default_mode")]
    pub mode: String,
    /// The workspace folder.
    #[serde(default = "default_workspace")]
    pub workspace: String,
    /// The scopes granted.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<Scope>,
    /// Free-form labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The front door's agent (`claude-code`, `codex`, …); `""` for explain and test.
    #[serde(default)]
    pub agent: String,
}

fn default_mode() -> String {
    "ask".into()
}

fn default_workspace() -> String {
    std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "/".into())
}

fn default_scopes() -> Vec<Scope> {
    Scope::ALL.to_vec()
}

impl Default for Session {
    fn default() -> Self {
        Session {
            mode: default_mode(),
            workspace: default_workspace(),
            scopes: default_scopes(),
            labels: BTreeMap::new(),
            agent: String::new(),
        }
    }
}

impl Session {
    /// From a session written in a file; missing keys take defaults.
    #[must_use]
    pub fn from_raw(raw: &RawSession) -> Session {
        let d = Session::default();
        Session {
            mode: raw.mode.clone().unwrap_or(d.mode),
            workspace: raw.workspace.clone().unwrap_or(d.workspace),
            scopes: raw.scopes.clone().unwrap_or(d.scopes),
            labels: raw.labels.clone().unwrap_or_default(),
            agent: raw.agent.clone().unwrap_or_default(),
        }
    }

    pub(crate) fn to_cel(&self) -> SessionCel {
        let session = serde_json::json!({
            "mode": self.mode,
            "workspace": self.workspace,
            "scopes": self.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "labels": self.labels,
            "agent": self.agent,
        });
        let session = cel::json::to_cel(&session);
        let workspace = ::cel::Value::String(Arc::new(self.workspace.clone()));
        SessionCel {
            sizes: cel::session_sizes(&session, &workspace),
            session,
            workspace,
        }
    }
}

/// A session as CEL values, built once per session and shared by its calls.
#[derive(Debug)]
pub(crate) struct SessionCel {
    /// `session`.
    pub(crate) session: ::cel::Value,
    /// `session.workspace`, for the path functions.
    pub(crate) workspace: ::cel::Value,
    /// Their sizes, for the cost bound.
    pub(crate) sizes: cel::budget::Sizes,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// The final tool name.
    pub tool: String,
    /// The arguments (a JSON object).
    #[serde(default = "empty_object")]
    pub args: serde_json::Value,
    /// The caller's context.
    #[serde(default)]
    pub session: Session,
    /// The front door will run this call confined by the kernel to the
    /// policy's `settings.enforce` envelope (`zero-policy run`, a hook's
    /// rewrite): `call.confined` for a tool whose effects are a shell script.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confined: bool,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}
