//! Gemini CLI `BeforeTool` hooks.
//!
//! Protocol (google-gemini/gemini-cli `docs/hooks/reference.md`; the types in
//! `packages/core/src/hooks/types.ts`): stdin has `session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `timestamp`, `tool_name`,
//! `tool_input` and, for MCP tools, `mcp_context` (`server_name`,
//! `tool_name`, ...). The answer is `{"decision": "allow" | "ask" | "deny",
//! "reason": …}` on stdout with exit 0 (`ask` is honoured by
//! `packages/core/src/scheduler/hook-utils.ts`). Exit 2 blocks with stderr as
//! the reason; exit 1 is only a warning.
//!
//! MCP tools are named `mcp__server__tool` in some documents and
//! `mcp_server_tool` in the code (`packages/core/src/tools/mcp-tool.ts`):
//! both are accepted, see [`super::tool_name`].

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Parsed, ToolRef, Verdict, expect_event, opt_str, req_str};

/// Reads one Gemini CLI `BeforeTool` event.
///
/// # Errors
/// Another event, or a field missing or of the wrong type.
pub fn parse(event: &Map<String, Value>) -> Result<Parsed, String> {
    expect_event(event, Agent::GeminiCli, &["BeforeTool"])?;
    let name = req_str(event, "tool_name")?;
    let args = match event.get("tool_input") {
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err("`tool_input` is not an object".into()),
        None => return Err("`tool_input` is missing".into()),
    };
    let (server, tool) = match event.get("mcp_context") {
        Some(Value::Object(ctx)) => (opt_str(ctx, "server_name")?, opt_str(ctx, "tool_name")?),
        Some(Value::Null) | None => (None, None),
        Some(_) => return Err("`mcp_context` is not an object".into()),
    };
    Ok(Parsed {
        tool: ToolRef::Gemini { name, server, tool },
        args,
        mode: "ask".into(),
        cwd: opt_str(event, "cwd")?,
        session_id: opt_str(event, "session_id")?,
        can_ask: true,
        can_rewrite: true,
        headless: None,
    })
}

/// The answer for a decided call.
#[must_use]
pub fn answer(verdict: Verdict, reason: &str) -> Answer {
    let decision = match verdict {
        Verdict::Allow => "allow",
        Verdict::Ask | Verdict::Defer => "ask",
        Verdict::Deny => "deny",
    };
    Answer::json(&json!({"decision": decision, "reason": reason}))
}
