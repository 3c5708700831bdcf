//! Codex `PreToolUse` hooks (codex-rs `hooks` crate).
//!
//! Input: the fields Codex serializes in `command_input_json`
//! (openai/codex `codex-rs/hooks/src/events/pre_tool_use.rs`): `session_id`,
//! `turn_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`,
//! `permission_mode`, `tool_name`, `tool_input`, `tool_use_id`. Shell tools
//! arrive as `tool_name: "Bash"` with `tool_input.command`; `apply_patch`
//! arrives under its own name with the patch text in `tool_input.command`.
//! Names are passed through unchanged.
//!
//! Output, as Codex reads it (`codex-rs/hooks/src/engine/output_parser.rs`,
//! `parse_pre_tool_use` and `unsupported_pre_tool_use_hook_specific_output`):
//! only `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//! "permissionDecision": "deny", "permissionDecisionReason": "<non-empty>"}}`
//! blocks. `permissionDecision: "allow"` (without `updatedInput`) and `"ask"`
//! are reported as hook errors and the call goes on, so an allow prints
//! nothing, and a `prompt` cannot be asked: `settings.on_prompt` decides.
//! Exit 2 blocks only with a non-empty reason on stderr (`parse_completed` in
//! `pre_tool_use.rs`); every other exit code is a failure that does not block.

use serde_json::{Map, Value};

use super::{Agent, Answer, Parsed, Verdict, claude_code};

/// Reads one Codex `PreToolUse` event.
///
/// # Errors
/// Another event, or a field missing or of the wrong type.
pub fn parse(event: &Map<String, Value>) -> Result<Parsed, String> {
    claude_code::parse_pre_tool_use(event, Agent::Codex, false)
}

/// The answer for a decided call: a deny, or nothing.
#[must_use]
pub fn answer(verdict: Verdict, reason: &str) -> Answer {
    match verdict {
        // Codex rejects a reason-less deny as a hook error: never send one.
        Verdict::Deny if reason.trim().is_empty() => {
            claude_code::decision("deny", "zero-policy: denied by policy")
        }
        Verdict::Deny => claude_code::decision("deny", reason),
        // `allow` and `ask` would be hook errors; silence lets Codex go on
        // (Allow) or apply its own approval policy (Defer).
        Verdict::Allow | Verdict::Ask | Verdict::Defer => Answer::silent(),
    }
}
