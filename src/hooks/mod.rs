//! Agent hooks: one pre-tool event in an agent's protocol, decided by the dispatch path.
//!
//! Each agent has its own file that reads its event into a [`Parsed`] call and
//! writes a [`Verdict`] back in its own words. Everything between, the
//! mapping of names, the decision, the treatment of unknown tools and of
//! `prompt`, lives here and is the same for every agent. The decision itself
//! is [`Registry::evaluate`]: the hook never decides on its own.
//!
//! Fail closed: an event that cannot be read, a policy that does not load, a
//! panic, any error, gets the agent's blocking answer ([`Agent::blocked`]).

pub mod claude_code;
pub mod codex;
pub mod confine;
pub mod copilot;
pub mod cursor;
pub mod gemini_cli;
pub mod headless;
pub mod names;

use std::io::Read;
use std::time::{Instant, SystemTime};

use serde_json::{Map, Value};

use crate::dispatch::{Call, Evaluation, Outcome, Session, Step};
use crate::log::{Record, policy_hash, rfc3339_utc};
use crate::model::{Decision, LogArgs, OnPrompt, Permission};
use crate::policy::{DEFAULT_LOG_PATH, Policy, ServerDef, Settings};
use crate::registry::{Registry, mcp_tool_name};
use crate::scrub::Scrubber;

/// The largest event read from standard input; a larger one is refused.
pub const MAX_EVENT_BYTES: u64 = 4 * 1024 * 1024;

/// The agents whose hooks zero-policy answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code, `PreToolUse` hooks in `.claude/settings.json`.
    ClaudeCode,
    /// OpenAI Codex CLI, `PreToolUse` hooks in `.codex/hooks.json`.
    Codex,
    /// Gemini CLI, `BeforeTool` hooks in `.gemini/settings.json`.
    GeminiCli,
    /// Cursor, agent hooks in `.cursor/hooks.json`.
    Cursor,
    /// GitHub Copilot CLI, `preToolUse` hooks in `.github/hooks/*.json`.
    Copilot,
}

impl Agent {
    /// Every agent.
    pub const ALL: [Agent; 5] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::GeminiCli,
        Agent::Cursor,
        Agent::Copilot,
    ];

    /// The name used on the command line and in `session.agent`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
        }
    }

    /// The agent's own name, for messages.
    #[must_use]
    pub fn display(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::GeminiCli => "Gemini CLI",
            Agent::Cursor => "Cursor",
            Agent::Copilot => "Copilot CLI",
        }
    }

    /// Reads one event in this agent's protocol.
    ///
    /// # Errors
    /// Not JSON, not an object, an event of another kind, or a field missing
    /// or of the wrong type: a message for stderr (not yet scrubbed).
    pub fn parse(self, input: &[u8]) -> Result<Parsed, String> {
        let event = match serde_json::from_slice::<Value>(input) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err("the event on standard input is not a JSON object".into()),
            Err(e) => return Err(format!("the event on standard input is not JSON: {e}")),
        };
        match self {
            Agent::ClaudeCode => claude_code::parse(&event),
            Agent::Codex => codex::parse(&event),
            Agent::GeminiCli => gemini_cli::parse(&event),
            Agent::Cursor => cursor::parse(&event),
            Agent::Copilot => copilot::parse(&event),
        }
    }

    /// The answer to a decided call, with its input rewritten (`updated`: the
    /// tool's whole new arguments) where the verdict lets it run.
    #[must_use]
    pub fn answer_rewritten(self, verdict: Verdict, reason: &str, updated: &Value) -> Answer {
        use serde_json::json;
        let permission = match verdict {
            Verdict::Allow => "allow",
            Verdict::Ask | Verdict::Defer => "ask",
            Verdict::Deny => return self.answer(verdict, reason),
        };
        match self {
            Agent::ClaudeCode | Agent::Codex => Answer::json(&json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": permission,
                    "permissionDecisionReason": reason,
                    "updatedInput": updated,
                }
            })),
            Agent::GeminiCli => Answer::json(&json!({
                "decision": permission,
                "reason": reason,
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": updated},
            })),
            Agent::Copilot => Answer::json(&json!({
                "permissionDecision": permission,
                "permissionDecisionReason": reason,
                "modifiedArgs": updated,
            })),
            Agent::Cursor => Answer::json(&json!({
                "permission": permission,
                "user_message": reason,
                "agent_message": reason,
                "updated_input": updated,
            })),
        }
    }

    /// The answer to a decided call, in this agent's protocol.
    #[must_use]
    pub fn answer(self, verdict: Verdict, reason: &str) -> Answer {
        match self {
            Agent::ClaudeCode => claude_code::answer(verdict, reason),
            Agent::Codex => codex::answer(verdict, reason),
            Agent::GeminiCli => gemini_cli::answer(verdict, reason),
            Agent::Cursor => cursor::answer(verdict, reason),
            Agent::Copilot => copilot::answer(verdict, reason),
        }
    }

    /// The agent's blocking form, for every failure: never an allow, never
    /// exit 0 without a deny.
    #[must_use]
    pub fn blocked(self, reason: &str) -> Answer {
        match self {
            Agent::ClaudeCode | Agent::Codex | Agent::GeminiCli => Answer {
                stdout: String::new(),
                stderr: format!("{reason}\n"),
                code: 2,
            },
            Agent::Cursor => Answer {
                code: 2,
                ..cursor::answer(Verdict::Deny, reason)
            },
            Agent::Copilot => copilot::answer(Verdict::Deny, reason),
        }
    }
}

/// What the hook tells the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Run the tool.
    Allow,
    /// Ask the person (only where the agent can).
    Ask,
    /// Do not run the tool.
    Deny,
    /// Leave the call to the agent's own permission check: a `prompt` the
    /// agent cannot ask for, with `on_prompt: ask`.
    Defer,
}

impl Verdict {
    /// The name used in the decision log.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
            Verdict::Defer => "defer",
        }
    }
}

/// What the hook process prints and returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Standard output: the agent's JSON answer, or nothing.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code.
    pub code: u8,
}

impl Answer {
    /// Exit 0 and print nothing: the agent goes on as if there were no hook.
    #[must_use]
    pub fn silent() -> Answer {
        Answer {
            stdout: String::new(),
            stderr: String::new(),
            code: 0,
        }
    }

    /// Exit 0 with one line of JSON.
    #[must_use]
    pub fn json(value: &Value) -> Answer {
        Answer {
            stdout: format!("{value}\n"),
            stderr: String::new(),
            code: 0,
        }
    }
}

/// How an event names its tool, before the policy's servers resolve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRef {
    /// A name decided as is.
    Name(String),
    /// A Claude Code or Codex tool: MCP tools are `mcp__server__tool`, respelled
    /// by the agent (see [`names`]).
    Prefixed(String),
    /// A Copilot CLI tool: MCP tools are `server-tool` (see [`names`]).
    Dashed(String),
    /// A Gemini CLI tool: MCP tools are `mcp__server__tool` in its documents and
    /// `mcp_server_tool` in its code; `mcp_context` names the server and tool.
    Gemini {
        /// The name Gemini sent.
        name: String,
        /// `mcp_context.server_name`, when sent.
        server: Option<String>,
        /// `mcp_context.tool_name`, when sent.
        tool: Option<String>,
    },
    /// A Cursor MCP tool, known by its bare name and how its server is reached.
    CursorMcp {
        /// The server's own name for the tool.
        tool: String,
        /// The server's URL, for a remote server.
        url: Option<String>,
        /// The command line that starts a local server.
        command: Option<String>,
    },
}

/// One event, read but not yet decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The tool.
    pub tool: ToolRef,
    /// The arguments.
    pub args: Value,
    /// `session.mode`.
    pub mode: String,
    /// The working folder the agent sent (`session.workspace`).
    pub cwd: Option<String>,
    /// The agent's session (or conversation) id.
    pub session_id: Option<String>,
    /// Whether the agent can ask a person for this event.
    pub can_ask: bool,
    /// Whether the agent runs a rewritten input for this event (SPEC §7,
    /// "Rewrite to enforce").
    pub can_rewrite: bool,
    /// Why nobody can answer the agent's `ask` in this run (Gemini CLI under
    /// `-p`), when the hook found so.
    pub headless: Option<String>,
}

impl Parsed {
    /// The call to decide: the tool's final name against the registry's servers,
    /// and the session the hook saw.
    #[must_use]
    pub fn call(&self, agent: Agent, registry: &Registry) -> Call {
        let mut session = Session {
            mode: self.mode.clone(),
            agent: agent.as_str().into(),
            ..Session::default()
        };
        if let Some(cwd) = self.cwd.as_ref().filter(|c| !c.is_empty()) {
            session.workspace.clone_from(cwd);
        }
        if let Some(id) = &self.session_id {
            session.labels.insert("session_id".into(), id.clone());
        }
        Call {
            tool: tool_name(&self.tool, registry),
            args: self.args.clone(),
            session,
            confined: false,
        }
    }
}

/// The final name of an event's tool.
#[must_use]
pub fn tool_name(tool: &ToolRef, registry: &Registry) -> String {
    match tool {
        ToolRef::Name(n) => n.clone(),
        ToolRef::Prefixed(n) => names::prefixed(n, registry),
        ToolRef::Dashed(n) => names::dashed(n, registry),
        ToolRef::Gemini { name, server, tool } => {
            if let (Some(s), Some(t)) = (server, tool)
                && !s.is_empty()
                && !t.is_empty()
            {
                return names::from_context(s, t, registry);
            }
            if name.starts_with("mcp__") {
                return names::prefixed(name, registry);
            }
            if let Some(rest) = name.strip_prefix("mcp_")
                && !registry.has_tool(name)
            {
                // `mcp_S_T` is ambiguous when S holds `_`: the longest declared
                // server name that fits wins.
                if let Some(n) = names::gemini_single(rest, registry) {
                    return n;
                }
            }
            name.clone()
        }
        ToolRef::CursorMcp { tool, url, command } => {
            let found: Vec<&ServerDef> = registry
                .servers()
                .iter()
                .filter(|s| {
                    url.as_deref().is_some_and(|u| url_matches(s, u))
                        || command.as_deref().is_some_and(|c| command_matches(s, c))
                })
                .collect();
            match found.as_slice() {
                [one] => mcp_tool_name(registry.name_format(&one.name), &one.name, tool),
                // No declared server (or more than one) is reached this way: a
                // name no tool can have, so the call is an unknown tool.
                _ => format!("mcp__<undeclared>__{tool}"),
            }
        }
    }
}

fn url_matches(server: &ServerDef, url: &str) -> bool {
    let Some(declared) = &server.url else {
        return false;
    };
    declared
        .resolve(|n| std::env::var(n).ok())
        .is_ok_and(|d| d.trim_end_matches('/') == url.trim().trim_end_matches('/'))
}

fn command_matches(server: &ServerDef, command: &str) -> bool {
    let Some(program) = &server.command else {
        return false;
    };
    let declared: Vec<&str> = std::iter::once(program.as_str())
        .chain(server.args.iter().map(String::as_str))
        .collect();
    command.split_whitespace().eq(declared.iter().copied())
}

/// Whether the call was rejected at lookup: no manifest names the tool.
#[must_use]
pub fn is_unknown_tool(ev: &Evaluation) -> bool {
    ev.decision == Decision::Reject
        && ev
            .steps
            .iter()
            .any(|s| s.step == Step::Lookup && s.outcome == Outcome::Reject)
}

/// The verdict for a decided call, and why (not yet scrubbed).
///
/// A tool no manifest names is answered by `hooks.unknown_tool`, every other
/// reject is a deny; a `prompt` is asked where the agent can ask, and
/// follows `on_prompt` where it cannot.
#[must_use]
pub fn verdict(
    ev: &Evaluation,
    settings: &Settings,
    agent: Agent,
    can_ask: bool,
) -> (Verdict, String) {
    let (permission, reason) = if is_unknown_tool(ev) {
        let why = ev
            .reject_reason
            .clone()
            .unwrap_or_else(|| format!("unknown tool `{}`", ev.tool));
        let reason = match settings.unknown_tool {
            Permission::Prompt => format!("{why}; no manifest describes it, so it needs approval"),
            other => format!("{why}; no manifest describes it (`hooks.unknown_tool: {other}`)"),
        };
        (settings.unknown_tool, reason)
    } else {
        match ev.decision {
            Decision::Allow => (
                Permission::Allow,
                ev.reason.clone().unwrap_or_else(|| "allowed".into()),
            ),
            Decision::Prompt => (
                Permission::Prompt,
                ev.reason.clone().unwrap_or_else(|| "needs approval".into()),
            ),
            Decision::Deny => (
                Permission::Deny,
                ev.reason
                    .clone()
                    .unwrap_or_else(|| "denied by policy".into()),
            ),
            Decision::Reject => (
                Permission::Deny,
                ev.reject_reason
                    .clone()
                    .unwrap_or_else(|| "rejected".into()),
            ),
        }
    };
    let verdict = match permission {
        Permission::Allow => Verdict::Allow,
        Permission::Deny => Verdict::Deny,
        Permission::Prompt if can_ask => Verdict::Ask,
        Permission::Prompt => match settings.on_prompt {
            OnPrompt::Deny => {
                return (
                    Verdict::Deny,
                    format!(
                        "{reason}; {} cannot be asked for approval here, and `on_prompt` is `deny`",
                        agent.display()
                    ),
                );
            }
            OnPrompt::Ask => Verdict::Defer,
        },
    };
    (verdict, reason)
}

/// Every text the hook prints starts with this, so the person knows who answered.
#[must_use]
pub fn message(reason: &str, scrubber: &Scrubber) -> String {
    format!("zero-policy: {}", scrubber.scrub_str(reason))
}

/// Reads standard input up to [`MAX_EVENT_BYTES`], never more.
///
/// # Errors
/// Standard input is a terminal, cannot be read, or is larger than the cap.
pub fn read_event(input: impl Read) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    input
        .take(MAX_EVENT_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read the event on standard input: {e}"))?;
    if buf.len() as u64 > MAX_EVENT_BYTES {
        return Err(format!(
            "the event on standard input is larger than {} MiB",
            MAX_EVENT_BYTES / (1024 * 1024)
        ));
    }
    Ok(buf)
}

/// The outcome of one hook run: what to print, and what to log where.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// What the process prints and returns.
    pub answer: Answer,
    /// The decision log's line.
    pub record: Record,
    /// `settings.log.path` as written (the default when no policy loaded).
    pub log_path: String,
    /// `settings.log.chain`; `None` when no policy loaded, and then the line
    /// is chained if the file's last line is ([`crate::log::Chain::Follow`]).
    pub log_chain: Option<bool>,
    /// `settings.log.syslog`, when the policy loaded and sets it.
    pub syslog: Option<crate::log::syslog::Target>,
    /// `settings.log.otlp`, likewise.
    pub otlp: Option<crate::log::otlp::Target>,
}

/// Decides one event: the whole hook, without its input and output.
///
/// `input` is the event read from standard input, `loaded` the policy and
/// its registry; either may have failed, and then the answer is the agent's
/// blocking form. Every text in the answer and the record has been through
/// the scrubber (the policy's, or the built-in one when none loaded).
/// `hook_policy` is where the policy was read from, for the `zero-policy run`
/// a rewritten shell call goes through; `None` where `run` cannot read the
/// same policy: then no call is rewritten or decided as confined.
/// `shadow` is the shadow policy (`settings.shadow`), or why it could not
/// be loaded: its decision goes into the record only.
/// `asker` says how to tell whether anyone can answer the agent's `ask`.
#[must_use]
pub fn decide(
    agent: Agent,
    input: Result<Vec<u8>, String>,
    loaded: Result<(&Policy, &Registry), String>,
    hook_policy: Option<confine::RunPolicy<'_>>,
    shadow: Option<Result<&crate::shadow::Shadow, &str>>,
    asker: &headless::Asker,
    started: Instant,
) -> Decided {
    let parsed = input.and_then(|bytes| agent.parse(&bytes));
    let (policy, registry) = match loaded {
        Ok(x) => x,
        Err(why) => {
            return fail(
                agent,
                &Scrubber::builtin(),
                (DEFAULT_LOG_PATH, None),
                "",
                parsed.ok(),
                &why,
                started,
            );
        }
    };
    let settings = registry.settings();
    let hash = policy_hash(&policy.files);
    let parsed = match parsed {
        Ok(p) => p,
        Err(why) => {
            let why = format!("cannot read the {} hook event: {why}", agent.display());
            return fail(
                agent,
                registry.scrubber(),
                (&settings.log_path, Some(settings.log_chain)),
                &hash,
                None,
                &why,
                started,
            );
        }
    };
    let mut parsed = parsed;
    if parsed.can_ask
        && let Some(why) = asker.nobody_to_ask(agent)
    {
        // Gemini CLI would wait for ever for an answer nobody can give.
        parsed.can_ask = false;
        parsed.headless = Some(why);
    }
    let mut call = parsed.call(agent, registry);
    // A shell call runs confined where the agent runs a rewritten input and
    // the kernel can confine it: it is decided so (`call.confined`), and an
    // allowed or asked call is rewritten to go through `zero-policy run`.
    let confine = settings.enforce.shell && parsed.can_rewrite && hook_policy.is_some();
    let key = confine
        .then(|| confine::shell_key(registry, &call.tool))
        .flatten()
        .filter(|k| call.args.get(k).is_some_and(Value::is_string))
        .filter(|_| crate::sandbox::probe().available());
    call.confined = key.is_some();
    let ev = registry.decide_call(&call);
    // The shadow decides the same call, named as its own manifests name it,
    // and confined as the call in force will be.
    let shadowed = shadow.map(|s| match s {
        Ok(sh) => {
            let mut c = parsed.call(agent, &sh.registry);
            c.confined = call.confined;
            sh.decide(&c)
        }
        Err(why) => crate::shadow::failed(why, registry.scrubber()),
    });
    let (verdict, mut reason) = verdict(&ev, settings, agent, parsed.can_ask);
    if let (Some(why), Verdict::Deny | Verdict::Defer) = (&parsed.headless, verdict)
        && ev.decision != Decision::Deny
        && reason.contains("cannot be asked")
    {
        reason.push_str(&format!(" ({why})"));
    }
    let scrubber = registry.scrubber();
    let text = message(&reason, scrubber);
    let answer = match (&key, verdict) {
        (Some(key), Verdict::Allow | Verdict::Ask) => {
            match rewrite(
                agent,
                &call,
                key,
                verdict,
                hook_policy.unwrap_or(confine::RunPolicy::Builtin),
            ) {
                Ok(updated) => agent.answer_rewritten(verdict, &text, &updated),
                Err(why) => {
                    let why = format!("cannot run the call confined: {why}");
                    return fail(
                        agent,
                        scrubber,
                        (&settings.log_path, Some(settings.log_chain)),
                        &hash,
                        Some(parsed),
                        &why,
                        started,
                    );
                }
            }
        }
        _ => agent.answer(verdict, &text),
    };
    let mut matched: Vec<String> = ev.matched.iter().map(|m| m.id.clone()).collect();
    matched.dedup();
    let args = match settings.log_args {
        LogArgs::Omit => None,
        LogArgs::Scrubbed => {
            let mut a = call.args.clone();
            scrubber.scrub_json(&mut a);
            Some(a)
        }
    };
    let record = Record {
        time: rfc3339_utc(SystemTime::now()),
        front: format!("hook:{}", agent.as_str()),
        session: scrubber
            .scrub_str(parsed.session_id.as_deref().unwrap_or(""))
            .into_owned(),
        tool: scrubber.scrub_str(&call.tool).into_owned(),
        decision: ev.decision.as_str().into(),
        answer: verdict.as_str().into(),
        reason: text,
        matched,
        rules: crate::log::RuleAt::of(&ev.matched),
        policy: hash,
        duration_us: elapsed_us(started),
        args,
        shadow: shadowed,
        ..Record::default()
    };
    Decided {
        answer,
        record,
        log_path: settings.log_path.clone(),
        log_chain: Some(settings.log_chain),
        syslog: settings.log_syslog.clone(),
        otlp: settings.log_otlp.clone(),
    }
}

/// The call's arguments with its script run through `zero-policy run`; an
/// asked call gets a ticket so that the person's approval holds there.
fn rewrite(
    agent: Agent,
    call: &Call,
    key: &str,
    verdict: Verdict,
    policy: confine::RunPolicy<'_>,
) -> Result<Value, String> {
    let script = call
        .args
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let ticket = match verdict {
        Verdict::Ask => Some(confine::issue(script, &call.session.workspace)?),
        _ => None,
    };
    let cwd_file = confine::cwd_file()?;
    let line = confine::command_line(
        &exe,
        agent.as_str(),
        &call.session.workspace,
        policy,
        ticket.as_deref(),
        &cwd_file,
        script,
    );
    Ok(confine::rewritten(&call.args, key, line))
}

/// The blocking answer and its log line, for any failure before a decision.
#[must_use]
pub fn fail(
    agent: Agent,
    scrubber: &Scrubber,
    (log_path, log_chain): (&str, Option<bool>),
    policy: &str,
    parsed: Option<Parsed>,
    why: &str,
    started: Instant,
) -> Decided {
    let text = message(&format!("the call is blocked: {why}"), scrubber);
    let (tool, session) = match &parsed {
        Some(p) => (
            match &p.tool {
                ToolRef::Name(n)
                | ToolRef::Prefixed(n)
                | ToolRef::Dashed(n)
                | ToolRef::Gemini { name: n, .. } => n.clone(),
                ToolRef::CursorMcp { tool, .. } => tool.clone(),
            },
            p.session_id.clone().unwrap_or_default(),
        ),
        None => (String::new(), String::new()),
    };
    Decided {
        answer: agent.blocked(&text),
        record: Record {
            time: rfc3339_utc(SystemTime::now()),
            front: format!("hook:{}", agent.as_str()),
            session: scrubber.scrub_str(&session).into_owned(),
            tool: scrubber.scrub_str(&tool).into_owned(),
            decision: "error".into(),
            answer: Verdict::Deny.as_str().into(),
            reason: text,
            matched: Vec::new(),
            policy: policy.into(),
            duration_us: elapsed_us(started),
            ..Record::default()
        },
        log_path: log_path.into(),
        log_chain,
        syslog: None,
        otlp: None,
    }
}

fn elapsed_us(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}

// ── shared field readers, for the agent files ────────────────────────────────

/// A string field that must be there.
pub(crate) fn req_str(event: &Map<String, Value>, key: &str) -> Result<String, String> {
    match event.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("`{key}` is not a string")),
        None => Err(format!("`{key}` is missing")),
    }
}

/// A string field that may be missing or null.
pub(crate) fn opt_str(event: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match event.get(key) {
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Null) | None => Ok(None),
        Some(_) => Err(format!("`{key}` is not a string")),
    }
}

/// Tool arguments: an object, or (Cursor's MCP events, Copilot) a string of JSON holding one.
pub(crate) fn args_field(event: &Map<String, Value>, key: &str) -> Result<Value, String> {
    match event.get(key) {
        Some(Value::Object(o)) => Ok(Value::Object(o.clone())),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) => Err(format!("`{key}` is not a JSON object")),
            Err(e) => Err(format!("`{key}` is not JSON: {e}")),
        },
        Some(_) => Err(format!("`{key}` is not an object")),
        None => Err(format!("`{key}` is missing")),
    }
}

/// Checks `hook_event_name`.
pub(crate) fn expect_event(
    event: &Map<String, Value>,
    agent: Agent,
    expected: &[&str],
) -> Result<String, String> {
    let name = req_str(event, "hook_event_name")?;
    if expected.contains(&name.as_str()) {
        Ok(name)
    } else {
        Err(format!(
            "`hook_event_name` is `{name}`, but `zero-policy hook {}` answers only {}; install it on {}",
            agent.as_str(),
            expected
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if expected.len() == 1 {
                "that event"
            } else {
                "those events"
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    const SERVERS: &str = r#"version: 1
servers:
  - name: a
    transport: stdio
    command: npx
    args: [-y, server-a]
  - name: a_b
    transport: stdio
    command: /usr/local/bin/server-ab
  - name: remote
    transport: http
    url: https://mcp.example.com/mcp/
"#;

    fn registry() -> Registry {
        let loaded = crate::loader::load_sources(vec![crate::diagnostic::SourceFile::new(
            std::path::Path::new("servers.yaml"),
            SERVERS.into(),
        )]);
        Registry::new(&loaded.policy.unwrap()).unwrap()
    }

    fn gemini(name: &str, server: Option<&str>, tool: Option<&str>) -> ToolRef {
        ToolRef::Gemini {
            name: name.into(),
            server: server.map(String::from),
            tool: tool.map(String::from),
        }
    }

    #[test]
    fn gemini_mcp_names_resolve_in_both_spellings_and_by_context() {
        let r = registry();
        for (tool, want) in [
            (gemini("mcp_a_b_list", None, None), "mcp__a_b__list"),
            (gemini("mcp_a_list", None, None), "mcp__a__list"),
            (gemini("mcp__a_b__list", None, None), "mcp__a_b__list"),
            (gemini("mcp_zzz_list", None, None), "mcp_zzz_list"),
            (gemini("mcp_a_", None, None), "mcp_a_"),
            (
                gemini("mcp_whatever", Some("remote"), Some("Fetch Page")),
                "mcp__remote__fetch_page",
            ),
            (gemini("read_file", None, None), "read_file"),
        ] {
            assert_eq!(tool_name(&tool, &r), want, "{tool:?}");
        }
    }

    #[test]
    fn cursor_mcp_tools_belong_to_the_server_reached_by_their_url_or_command() {
        let r = registry();
        let cursor = |url: Option<&str>, command: Option<&str>| ToolRef::CursorMcp {
            tool: "list".into(),
            url: url.map(String::from),
            command: command.map(String::from),
        };
        for (tool, want) in [
            (
                cursor(Some("https://mcp.example.com/mcp"), None),
                "mcp__remote__list",
            ),
            (cursor(None, Some("npx -y server-a")), "mcp__a__list"),
            (
                cursor(None, Some("/usr/local/bin/server-ab")),
                "mcp__a_b__list",
            ),
            (cursor(None, Some("npx")), "mcp__<undeclared>__list"),
            (
                cursor(Some("https://evil.example.com/mcp"), None),
                "mcp__<undeclared>__list",
            ),
        ] {
            assert_eq!(tool_name(&tool, &r), want, "{tool:?}");
        }
    }

    #[test]
    fn read_event_refuses_more_than_the_cap() {
        let big = vec![b' '; usize::try_from(MAX_EVENT_BYTES).unwrap() + 1];
        assert!(read_event(big.as_slice()).unwrap_err().contains("4 MiB"));
        let ok = vec![b' '; usize::try_from(MAX_EVENT_BYTES).unwrap()];
        assert_eq!(read_event(ok.as_slice()).unwrap().len(), ok.len());
    }

    #[test]
    fn args_field_reads_objects_and_strings_of_json() {
        let event: Map<String, Value> = serde_json::from_str(
            r#"{"a": {"x": 1}, "b": "{\"x\": 1}", "c": "[1]", "d": "{", "e": 3}"#,
        )
        .unwrap();
        assert_eq!(
            args_field(&event, "a").unwrap(),
            serde_json::json!({"x": 1})
        );
        assert_eq!(
            args_field(&event, "b").unwrap(),
            serde_json::json!({"x": 1})
        );
        assert!(
            args_field(&event, "c")
                .unwrap_err()
                .contains("not a JSON object")
        );
        assert!(args_field(&event, "d").unwrap_err().contains("not JSON"));
        assert!(
            args_field(&event, "e")
                .unwrap_err()
                .contains("not an object")
        );
        assert!(args_field(&event, "f").unwrap_err().contains("missing"));
    }
}
