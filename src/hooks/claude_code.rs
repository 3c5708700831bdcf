//! Claude Code `PreToolUse` hooks.
//!
//! Protocol (<https://code.claude.com/docs/en/hooks>, "PreToolUse"): stdin is
//! one object with `session_id`, `transcript_path`, `cwd`, `permission_mode`
//! (`default`, `plan`, `acceptEdits`, `auto`, `dontAsk`, `bypassPermissions`),
//! `hook_event_name`, `tool_name`, `tool_input` and `tool_use_id`. The answer
//! is `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//! "permissionDecision": "allow" | "ask" | "deny", "permissionDecisionReason": …}}`
//! on stdout with exit 0. Exit 2 blocks the call with stderr as the reason
//! (stdout is then ignored); any other failure, exit 1 included, and a hook
//! that times out, let the call go on, so every failure here is an exit 2.

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Parsed, ToolRef, Verdict, expect_event, opt_str, req_str};

/// `session.mode` for Claude Code's (and Codex's) `permission_mode`: `default`
/// is `ask`, the rest (`plan`, `acceptEdits`, `auto`, `dontAsk`,
/// `bypassPermissions`) keep their names. A missing mode is `ask`.
#[must_use]
pub fn mode(permission_mode: Option<&str>) -> String {
    match permission_mode {
        None | Some("" | "default") => "ask".into(),
        Some(m) => m.into(),
    }
}

/// Reads a `PreToolUse` event (Claude Code's, or Codex's with the same fields).
pub(crate) fn parse_pre_tool_use(
    event: &Map<String, Value>,
    agent: Agent,
    can_ask: bool,
) -> Result<Parsed, String> {
    expect_event(event, agent, &["PreToolUse"])?;
    let tool = req_str(event, "tool_name")?;
    let args = match event.get("tool_input") {
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err("`tool_input` is not an object".into()),
        None => return Err("`tool_input` is missing".into()),
    };
    Ok(Parsed {
        tool: ToolRef::Prefixed(tool),
        args,
        mode: mode(opt_str(event, "permission_mode")?.as_deref()),
        cwd: opt_str(event, "cwd")?,
        session_id: opt_str(event, "session_id")?,
        can_ask,
        can_rewrite: true,
        headless: None,
    })
}

/// Reads one Claude Code `PreToolUse` event.
///
/// # Errors
/// Another event, or a field missing or of the wrong type.
pub fn parse(event: &Map<String, Value>) -> Result<Parsed, String> {
    parse_pre_tool_use(event, Agent::ClaudeCode, true)
}

/// The `hookSpecificOutput` answer with a permission decision.
pub(crate) fn decision(permission: &str, reason: &str) -> Answer {
    Answer::json(&json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": permission,
            "permissionDecisionReason": reason,
        }
    }))
}

/// The answer for a decided call. Claude Code can always ask, so there is no
/// `Defer`; should one arrive, it is asked.
#[must_use]
pub fn answer(verdict: Verdict, reason: &str) -> Answer {
    match verdict {
        Verdict::Allow => decision("allow", reason),
        Verdict::Ask | Verdict::Defer => decision("ask", reason),
        Verdict::Deny => decision("deny", reason),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn permission_modes_map_to_session_modes() {
        for (given, mode) in [
            (None, "ask"),
            (Some("default"), "ask"),
            (Some("plan"), "plan"),
            (Some("acceptEdits"), "acceptEdits"),
            (Some("auto"), "auto"),
            (Some("dontAsk"), "dontAsk"),
            (Some("bypassPermissions"), "bypassPermissions"),
        ] {
            assert_eq!(super::mode(given), mode, "{given:?}");
        }
    }
}
