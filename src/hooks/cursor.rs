//! Cursor agent hooks (`.cursor/hooks.json`, <https://cursor.com/docs/agent/hooks>).
//!
//! Every event carries `hook_event_name`, `conversation_id`, `generation_id`
//! and `workspace_roots`. The four that gate a tool call:
//!
//! - `preToolUse`: `tool_name`, `tool_input` (an object), `cwd`: decided as is;
//! - `beforeShellExecution`: `command`, `cwd`: the tool `Shell` with `{"command": …}`;
//! - `beforeMCPExecution`: `tool_name`, `tool_input` (a JSON string), and the
//!   server's `url` or the `command` that starts it: the MCP tool of the
//!   declared server reached that way (see [`super::tool_name`]);
//! - `beforeReadFile`: `file_path` (and the `content`, unused): the tool
//!   `Read` with `{"file_path": …}`.
//!
//! The answer is `{"permission": "allow" | "ask" | "deny", "user_message": …,
//! "agent_message": …}`. Cursor honours `ask` on shell and MCP events only;
//! elsewhere a `prompt` follows `settings.on_prompt`. Exit 2 is a deny, and a
//! failure prints the JSON deny too.

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Parsed, ToolRef, Verdict, args_field, expect_event, opt_str, req_str};

/// The events this hook answers.
pub const EVENTS: [&str; 4] = [
    "preToolUse",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
];

/// Reads one Cursor event.
///
/// # Errors
/// Another event, or a field missing or of the wrong type.
pub fn parse(event: &Map<String, Value>) -> Result<Parsed, String> {
    let name = expect_event(event, Agent::Cursor, &EVENTS)?;
    let can_rewrite = name == "preToolUse";
    let (tool, args, can_ask) = match name.as_str() {
        "beforeShellExecution" => (
            ToolRef::Name("Shell".into()),
            json!({"command": req_str(event, "command")?}),
            true,
        ),
        "beforeMCPExecution" => (
            ToolRef::CursorMcp {
                tool: req_str(event, "tool_name")?,
                url: opt_str(event, "url")?,
                command: opt_str(event, "command")?,
            },
            args_field(event, "tool_input")?,
            true,
        ),
        "beforeReadFile" => (
            ToolRef::Name("Read".into()),
            json!({"file_path": req_str(event, "file_path")?}),
            false,
        ),
        _ => (
            ToolRef::Name(req_str(event, "tool_name")?),
            args_field(event, "tool_input")?,
            false,
        ),
    };
    let cwd = match opt_str(event, "cwd")? {
        Some(c) => Some(c),
        None => match event.get("workspace_roots") {
            Some(Value::Array(roots)) => roots.first().and_then(Value::as_str).map(String::from),
            _ => None,
        },
    };
    let session_id = match opt_str(event, "session_id")? {
        Some(s) => Some(s),
        None => opt_str(event, "conversation_id")?,
    };
    Ok(Parsed {
        tool,
        args,
        mode: "ask".into(),
        cwd,
        session_id,
        can_ask,
        can_rewrite,
        headless: None,
    })
}

/// The answer for a decided call.
#[must_use]
pub fn answer(verdict: Verdict, reason: &str) -> Answer {
    let permission = match verdict {
        Verdict::Allow => "allow",
        Verdict::Ask | Verdict::Defer => "ask",
        Verdict::Deny => "deny",
    };
    Answer::json(&json!({
        "permission": permission,
        "user_message": reason,
        "agent_message": reason,
    }))
}
