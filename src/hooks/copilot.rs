//! GitHub Copilot CLI `preToolUse` hooks.
//!
//! Protocol (github/docs `content/copilot/reference/hooks-configuration.md`,
//! "Pre-tool use hook"): stdin is `{"timestamp", "cwd", "toolName",
//! "toolArgs"}` where `toolArgs` is a JSON **string** of the arguments. The
//! answer is `{"permissionDecision": "deny", "permissionDecisionReason": …}`;
//! no output allows. `allow` and `ask` are accepted values but "only `deny` is
//! currently processed", so a `prompt` follows `settings.on_prompt`. Copilot
//! ignores a hook that fails, so even a failure prints the deny, with exit 0.

use serde_json::{Map, Value, json};

use super::{Agent, Answer, Parsed, ToolRef, Verdict, args_field, opt_str, req_str};

/// Reads one Copilot CLI `preToolUse` event.
///
/// # Errors
/// A post-tool event, or a field missing or of the wrong type.
pub fn parse(event: &Map<String, Value>) -> Result<Parsed, String> {
    // Copilot's events carry no event name: a `toolResult` marks a postToolUse.
    if event.contains_key("toolResult") {
        return Err(format!(
            "the event has a `toolResult`: it is a `postToolUse` event, but `zero-policy hook {}` answers only `preToolUse`",
            Agent::Copilot.as_str()
        ));
    }
    for key in ["hookEventName", "hook_event_name"] {
        if let Some(name) = opt_str(event, key)?
            && !name.eq_ignore_ascii_case("preToolUse")
        {
            return Err(format!(
                "`{key}` is `{name}`, but `zero-policy hook {}` answers only `preToolUse`",
                Agent::Copilot.as_str()
            ));
        }
    }
    Ok(Parsed {
        tool: ToolRef::Dashed(req_str(event, "toolName")?),
        args: args_field(event, "toolArgs")?,
        mode: "ask".into(),
        cwd: opt_str(event, "cwd")?,
        session_id: opt_str(event, "sessionId")?,
        can_ask: false,
        can_rewrite: true,
        headless: None,
    })
}

/// The answer for a decided call: a deny, or nothing.
#[must_use]
pub fn answer(verdict: Verdict, reason: &str) -> Answer {
    match verdict {
        Verdict::Deny => Answer::json(&json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        })),
        // Honoured where Copilot can ask; elsewhere its own permission check decides.
        Verdict::Ask | Verdict::Defer => Answer::json(&json!({
            "permissionDecision": "ask",
            "permissionDecisionReason": reason,
        })),
        Verdict::Allow => Answer::silent(),
    }
}
