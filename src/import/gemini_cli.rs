//! Gemini CLI policy TOML (`[[rule]]` with `toolName`, `mcpName`, `commandPrefix`,
//! `commandRegex`, `argsPattern`, `decision`, `priority`) as a policy over effects.
//!
//! Gemini CLI decides by the highest-priority matching rule (the tier of the file
//! first: admin over user over workspace; then `priority`). Here the strictest
//! matching rule decides and nothing relaxes a deny, so the order is made explicit:
//! rules are read from the highest priority down, a rule that a higher one always
//! decides first is reported unreachable, and where a higher rule is less strict
//! than a lower one it overlaps (an allow above a deny or an ask, an ask above a
//! deny), the difference is reported.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;

use super::command::{CommandPattern, has_shell_syntax};
use super::{
    Action, EXAMPLE_WORKSPACE, Example, Finding, FindingKind, Import, ImportError, Rule, cel_str,
    slug,
};

const AGENT: &str = "gemini-cli";

/// The tools of the shipped `manifests/gemini-cli.yaml` and argument sets their schemas accept.
fn sample_args(tool: &str) -> Option<serde_json::Value> {
    let ws = EXAMPLE_WORKSPACE;
    Some(match tool {
        "run_shell_command" => json!({"command": "ls"}),
        "read_file" => json!({"absolute_path": format!("{ws}/README.md")}),
        "read_many_files" => json!({"paths": [format!("{ws}/README.md")]}),
        "write_file" => json!({"file_path": format!("{ws}/notes.txt"), "content": ""}),
        "replace" => {
            json!({"file_path": format!("{ws}/notes.txt"), "old_string": "a", "new_string": "b"})
        }
        "glob" => json!({"pattern": "**/*.rs"}),
        "grep_search" | "search_file_content" => json!({"pattern": "TODO"}),
        "list_directory" => json!({"path": ws}),
        "web_fetch" => json!({"prompt": "summarise https://example.com/"}),
        "google_web_search" => json!({"query": "rust globset"}),
        "save_memory" => json!({"fact": "the build uses cargo"}),
        _ => return None,
    })
}

/// Tools the shipped manifest already allows.
const ALLOWED_TOOLS: &[&str] = &[
    "read_file",
    "read_many_files",
    "glob",
    "grep_search",
    "search_file_content",
    "list_directory",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn list(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawRule {
    tool_name: Option<OneOrMany>,
    mcp_name: Option<String>,
    command_prefix: Option<OneOrMany>,
    command_regex: Option<String>,
    args_pattern: Option<String>,
    decision: String,
    #[serde(default)]
    priority: i64,
    deny_message: Option<String>,
    modes: Option<Vec<String>>,
    interactive: Option<bool>,
    allow_redirection: Option<bool>,
    subagent: Option<String>,
    tool_annotations: Option<toml::Table>,
}

/// What a rule matches, in terms that can be compared between rules.
#[derive(Debug, Clone)]
struct Match {
    /// Tool names (or globs); `*` for every tool.
    tools: Vec<String>,
    /// The MCP server, when the rule names one.
    server: Option<String>,
    /// Shell command prefixes (word lists); empty for none.
    prefixes: Vec<Vec<String>>,
    /// Other conditions that cannot be compared (a regex, modes): the rule matches
    /// only some calls of its tools.
    partial: bool,
}

struct Entry {
    raw: RawRule,
    file: String,
    line: usize,
    tier: u8,
    text: String,
    action: Action,
    m: Match,
}

/// Gemini CLI's tiers, from the file's place: admin (`/etc/gemini-cli/policies`,
/// macOS and Windows system folders) 5, user (`~/.gemini/policies`) 4, workspace
/// (`.gemini/policies` elsewhere) 3; other files are taken as user policies.
fn tier_of(path: &Path) -> (u8, &'static str) {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let s = abs.to_string_lossy().replace('\\', "/");
    if s.contains("/etc/gemini-cli/")
        || s.contains("/GeminiCli/policies/")
        || s.contains("/ProgramData/gemini-cli/")
    {
        return (5, "admin");
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home).join(".gemini/policies");
        if abs.starts_with(&home) {
            return (4, "user");
        }
    }
    if s.contains("/.gemini/policies/") {
        return (3, "workspace");
    }
    (4, "user")
}

fn decision(d: &str) -> Option<Action> {
    match d {
        "allow" => Some(Action::Relax),
        "ask_user" => Some(Action::Prompt),
        "deny" => Some(Action::Deny),
        _ => None,
    }
}

/// Reads the files and translates every rule, highest priority first.
///
/// # Errors
/// A file cannot be read or is not Gemini CLI policy TOML.
pub fn import(files: &[PathBuf]) -> Result<Import, ImportError> {
    let mut entries = Vec::new();
    let mut findings = Vec::new();
    let mut sources = Vec::new();
    for path in files {
        let text = super::read_input(path)?;
        let name = path.display().to_string();
        let parse_err = |span: Option<std::ops::Range<usize>>, message: String| {
            let (line, column) = super::line_column(&text, span.map_or(0, |s| s.start));
            ImportError::Parse {
                path: name.clone(),
                line,
                column,
                message,
            }
        };
        let file: File = toml::from_str(&text).map_err(|e| {
            parse_err(
                e.span(),
                format!("not a Gemini CLI policy file: {}", e.message()),
            )
        })?;
        let (tier, tier_name) = tier_of(path);
        sources.push(format!("{name} ({tier_name} tier)"));
        // Line of each `[[rule]]` header, in order.
        let headers: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim_start().starts_with("[[rule]]"))
            .map(|(i, _)| i + 1)
            .collect();
        for (i, raw) in file.rule.into_iter().enumerate() {
            let line = headers.get(i).copied().unwrap_or(1);
            let Some(action) = decision(&raw.decision) else {
                return Err(ImportError::Parse {
                    path: name.clone(),
                    line,
                    column: 1,
                    message: format!(
                        "`decision` must be `allow`, `deny` or `ask_user`, not `{}`",
                        raw.decision
                    ),
                });
            };
            if !(0..=999).contains(&raw.priority) {
                return Err(ImportError::Parse {
                    path: name.clone(),
                    line,
                    column: 1,
                    message: format!("`priority` must be 0 to 999, not {}", raw.priority),
                });
            }
            if raw.command_prefix.is_some() && raw.command_regex.is_some() {
                return Err(ImportError::Parse {
                    path: name.clone(),
                    line,
                    column: 1,
                    message: "a rule cannot have both `commandPrefix` and `commandRegex`".into(),
                });
            }
            let m = match_of(&raw);
            let text = describe(&raw);
            entries.push(Entry {
                raw,
                file: name.clone(),
                line,
                tier,
                text,
                action,
                m,
            });
        }
    }
    let rules_read = entries.len();
    // Highest priority first; in a tie, the stricter first (Gemini CLI gives no order).
    entries.sort_by(|a, b| {
        (b.tier, b.raw.priority, b.action).cmp(&(a.tier, a.raw.priority, a.action))
    });
    let mut rules = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let place = format!("{}:{}", e.file, e.line);
        let finding = |kind, reason: String| Finding {
            kind,
            file: place.clone(),
            rule: format!("`{}`", e.text),
            reason,
        };
        let higher = &entries[..i];
        // A higher rule that decides every call this one matches.
        if let Some(h) = higher.iter().find(|h| covers(&h.m, &e.m)) {
            findings.push(finding(
                FindingKind::Unreachable,
                format!(
                    "never decides in Gemini CLI: `{}` ({}:{}, priority {}) matches every call it does and ranks higher",
                    h.text, h.file, h.line, h.raw.priority
                ),
            ));
        }
        for h in higher
            .iter()
            .filter(|h| h.action < e.action && overlaps(&h.m, &e.m))
        {
            let (kind, what) = match (h.action, e.action) {
                (Action::Relax, Action::Deny) => (
                    FindingKind::Stricter,
                    "an allow that outranks a deny cannot be expressed (nothing relaxes a deny): here the deny wins",
                ),
                (Action::Relax, _) => (
                    FindingKind::Stricter,
                    "an allow that outranks an ask cannot be expressed: here the ask wins",
                ),
                _ => (
                    FindingKind::Stricter,
                    "a higher ask decides first in Gemini CLI: here the deny wins",
                ),
            };
            findings.push(finding(
                kind,
                format!(
                    "where `{}` ({}:{}) also matches, {what}",
                    h.text, h.file, h.line
                ),
            ));
        }
        translate(e, &mut rules, &mut findings, &place);
    }
    super::unique_ids(&mut rules);
    Ok(Import {
        agent: AGENT,
        sources,
        rules_read,
        rules,
        tests: Vec::new(),
        findings,
    })
}

fn describe(r: &RawRule) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &r.tool_name {
        parts.push(format!("toolName={}", t.list().join("|")));
    }
    if let Some(m) = &r.mcp_name {
        parts.push(format!("mcpName={m}"));
    }
    if let Some(p) = &r.command_prefix {
        parts.push(format!("commandPrefix={}", p.list().join("|")));
    }
    if let Some(x) = &r.command_regex {
        parts.push(format!("commandRegex={x}"));
    }
    if let Some(x) = &r.args_pattern {
        parts.push(format!("argsPattern={x}"));
    }
    parts.push(format!("decision={}", r.decision));
    parts.push(format!("priority={}", r.priority));
    parts.join(" ")
}

fn match_of(r: &RawRule) -> Match {
    let shell = r.command_prefix.is_some() || r.command_regex.is_some();
    let tools = match (&r.mcp_name, &r.tool_name, shell) {
        // MCP tools by server: `mcp_SERVER_TOOL`, as Gemini CLI names them.
        (Some(server), names, _) => {
            let names = names.as_ref().map(OneOrMany::list).unwrap_or_default();
            if names.is_empty() || names.iter().any(|n| n == "*") {
                vec![format!("mcp_{server}_*")]
            } else {
                names.iter().map(|n| format!("mcp_{server}_{n}")).collect()
            }
        }
        (None, Some(t), _) => t.list(),
        (None, None, true) => vec!["run_shell_command".into()],
        (None, None, false) => vec!["*".into()],
    };
    let mut prefixes: Vec<Vec<String>> = r
        .command_prefix
        .as_ref()
        .map(|p| {
            p.list()
                .iter()
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .collect()
        })
        .unwrap_or_default();
    if let Some(re) = &r.command_regex {
        // The regex's literal words before its first special character, when they
        // end at a space: a command it matches starts with them.
        let head: String = re
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || " -_./".contains(*c))
            .collect();
        if let Some(at) = head.rfind(' ') {
            let words: Vec<String> = head[..at].split_whitespace().map(str::to_string).collect();
            if !words.is_empty() {
                prefixes.push(words);
            }
        }
    }
    Match {
        tools,
        server: r.mcp_name.clone(),
        prefixes,
        partial: r.command_regex.is_some()
            || r.args_pattern.is_some()
            || r.modes.as_ref().is_some_and(|m| !m.is_empty())
            || r.interactive.is_some()
            || r.subagent.is_some()
            || r.tool_annotations.is_some(),
    }
}

fn tool_covers(h: &str, l: &str) -> bool {
    h == "*" || h == l || (h.ends_with('*') && l.starts_with(h.trim_end_matches('*')))
}

/// Every call `l` matches, `h` matches.
fn covers(h: &Match, l: &Match) -> bool {
    if h.partial {
        return false;
    }
    if h.server.is_some() && h.server != l.server && h.server.as_deref() != Some("*") {
        return false;
    }
    if !l
        .tools
        .iter()
        .all(|lt| h.tools.iter().any(|ht| tool_covers(ht, lt)))
    {
        return false;
    }
    if h.prefixes.is_empty() {
        return true;
    }
    !l.prefixes.is_empty()
        && l.prefixes
            .iter()
            .all(|lp| h.prefixes.iter().any(|hp| lp.starts_with(hp)))
}

/// Some call both match (judged by names and prefixes; a regex is taken to overlap).
fn overlaps(a: &Match, b: &Match) -> bool {
    let server_ok = match (&a.server, &b.server) {
        (Some(x), Some(y)) => x == y || x == "*" || y == "*",
        _ => true,
    };
    let tools_ok = a.tools.iter().any(|x| {
        b.tools
            .iter()
            .any(|y| tool_covers(x, y) || tool_covers(y, x))
    });
    let prefixes_ok = a.prefixes.is_empty()
        || b.prefixes.is_empty()
        || a.prefixes.iter().any(|x| {
            b.prefixes
                .iter()
                .any(|y| x.starts_with(y) || y.starts_with(x))
        });
    server_ok && tools_ok && prefixes_ok
}

fn translate(e: &Entry, rules: &mut Vec<Rule>, findings: &mut Vec<Finding>, place: &str) {
    let r = &e.raw;
    let finding = |kind, reason: String| Finding {
        kind,
        file: place.to_string(),
        rule: format!("`{}`", e.text),
        reason,
    };
    let verb = match e.action {
        Action::Relax => "allow",
        Action::Prompt => "ask",
        Action::Deny => "deny",
    };
    let mut conds: Vec<String> = Vec::new();
    let mut tools: Vec<String> = Vec::new();
    // The tool or server.
    if let Some(server) = &r.mcp_name {
        if server != "*" {
            conds.push(format!("tool.server == {}", cel_str(server)));
        } else {
            conds.push("tool.server != \"\"".into());
        }
        if let Some(t) = &r.tool_name {
            let names: Vec<String> = t.list().into_iter().filter(|n| n != "*").collect();
            if !names.is_empty() {
                conds.push(format!("tool.remote_name in {}", super::cel_list(&names)));
            }
        }
    } else {
        for t in &e.m.tools {
            if t == "*" {
                tools.clear();
                break;
            }
            if let Some(rest) = t.strip_prefix("mcp_") {
                // Gemini CLI splits `mcp_SERVER_TOOL` at the first `_` after `mcp_`:
                // `mcp_*` any MCP tool, `mcp_server_*` a server, `mcp_*_tool` a tool
                // of any server.
                let (server, tool) = rest.split_once('_').unwrap_or((rest, "*"));
                let mut c = Vec::new();
                if server == "*" || server.is_empty() {
                    c.push("tool.server != \"\"".to_string());
                } else {
                    c.push(format!("tool.server == {}", cel_str(server)));
                }
                if tool != "*" && !tool.is_empty() {
                    c.push(format!("tool.remote_name == {}", cel_str(tool)));
                }
                conds.push(c.join(" && "));
                continue;
            }
            if sample_args(t).is_none() {
                findings.push(finding(
                    FindingKind::Dropped,
                    format!("no tool `{t}` in the gemini-cli manifest"),
                ));
                return;
            }
            tools.push(t.clone());
        }
    }
    // The command.
    let shell_examples: Vec<String>;
    let mut partial_widened = Vec::new();
    if let Some(prefixes) = &r.command_prefix {
        let mut pats = Vec::new();
        for p in prefixes.list() {
            if has_shell_syntax(&p) {
                if e.action == Action::Relax {
                    findings.push(finding(
                        FindingKind::Dropped,
                        format!("the prefix `{p}` holds shell syntax; an allow over it cannot be checked command by command"),
                    ));
                    return;
                }
                let first: String = p
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
                    .collect();
                findings.push(finding(
                    FindingKind::Stricter,
                    format!("the prefix `{p}` holds shell syntax; every `{first}` command is matched instead"),
                ));
                pats.push(CommandPattern::Prefix(vec![first]));
            } else {
                let words: Vec<String> = p.split_whitespace().map(str::to_string).collect();
                if words.is_empty() {
                    pats.push(CommandPattern::Any);
                } else {
                    pats.push(CommandPattern::Prefix(words));
                }
            }
        }
        conds.push(command_cond(e.action, &pats));
        shell_examples = pats
            .iter()
            .flat_map(|p| p.matching_examples().into_iter().take(1))
            .collect();
    } else if let Some(re) = &r.command_regex {
        if regex::Regex::new(re).is_err() {
            findings.push(finding(
                FindingKind::Dropped,
                format!("`{re}` is not a regular expression"),
            ));
            return;
        }
        let anchored = format!("^(?:{re})");
        conds.push(match e.action {
            Action::Relax => format!(
                "call.commands.size() > 0 && call.commands.all(c, c.wrappers.size() == 0 && c.argv.join(\" \").matches({}))",
                cel_str(&anchored)
            ),
            _ => format!(
                "(args.command.matches({re}) || call.commands.exists(c, c.argv.join(\" \").matches({re})))",
                re = cel_str(&anchored)
            ),
        });
        if e.action == Action::Relax {
            findings.push(finding(
                FindingKind::Narrower,
                "the regex is matched against each command of the call (as its words, joined by spaces), not the whole line".into(),
            ));
        }
        shell_examples = Vec::new();
    } else {
        shell_examples = Vec::new();
    }
    if let Some(p) = &r.args_pattern {
        if e.action == Action::Relax {
            findings.push(finding(
                FindingKind::Dropped,
                format!("`argsPattern` `{p}` tests a JSON text of the arguments; no rule here sees that text, so the allow is left out"),
            ));
            return;
        }
        partial_widened.push(format!(
            "`argsPattern` `{p}` is left out: the rule matches every call of its tools"
        ));
    }
    if let Some(modes) = r.modes.as_ref().filter(|m| !m.is_empty()) {
        let ours: Vec<String> = modes
            .iter()
            .map(|m| {
                if m == "default" {
                    "ask".to_string()
                } else {
                    m.clone()
                }
            })
            .collect();
        if e.action == Action::Relax {
            conds.push(format!("session.mode in {}", super::cel_list(&ours)));
        } else {
            partial_widened.push(format!(
                "`modes` {} are left out: the rule holds in every mode",
                modes.join(", ")
            ));
        }
    }
    if let Some(i) = r.interactive {
        if e.action == Action::Relax {
            findings.push(finding(
                FindingKind::Dropped,
                format!("`interactive = {i}` has no counterpart here; the allow is left out"),
            ));
            return;
        }
        partial_widened.push(format!(
            "`interactive = {i}` is left out: the rule holds everywhere"
        ));
    }
    if r.subagent.is_some() || r.tool_annotations.is_some() {
        if e.action == Action::Relax {
            findings.push(finding(
                FindingKind::Dropped,
                "`subagent` and `toolAnnotations` have no counterpart here; the allow is left out"
                    .into(),
            ));
            return;
        }
        partial_widened.push(
            "`subagent`/`toolAnnotations` are left out: the rule holds for every call of its tools"
                .into(),
        );
    }
    for w in partial_widened {
        findings.push(finding(FindingKind::Stricter, w));
    }
    if e.action == Action::Relax && r.command_prefix.is_some() && r.allow_redirection != Some(true)
    {
        // Gemini CLI asks when a command redirects, unless the rule says otherwise.
        conds.push(r#"!args.command.matches("[<>]")"#.to_string());
    }
    if e.action == Action::Relax
        && conds.is_empty()
        && !tools.is_empty()
        && tools.iter().all(|t| ALLOWED_TOOLS.contains(&t.as_str()))
    {
        findings.push(finding(
            FindingKind::Note,
            format!(
                "nothing to relax: {} is `allow` in the gemini-cli manifest",
                tools.join(", ")
            ),
        ));
        return;
    }
    if e.action == Action::Relax && tools.is_empty() && r.mcp_name.is_none() && conds.is_empty() {
        findings.push(finding(
            FindingKind::Dropped,
            "an allow of every tool is not imported: name the tools it should relax".into(),
        ));
        return;
    }
    let when = if conds.is_empty() {
        "true".to_string()
    } else {
        conds.join(" && ")
    };
    let id = format!(
        "gemini-{verb}-{}",
        slug(&format!(
            "{} {} {}",
            r.mcp_name.as_deref().unwrap_or(""),
            r.tool_name
                .as_ref()
                .map(|t| t.list().join(" "))
                .unwrap_or_default(),
            r.command_prefix
                .as_ref()
                .map(|p| p.list().join(" "))
                .unwrap_or_default()
        ))
    );
    let mut rule = Rule {
        id,
        action: e.action,
        tools: tools.clone(),
        when,
        description: format!("Gemini CLI rule {} (priority {}).", e.text, r.priority),
        reason: match (&r.deny_message, e.action) {
            (Some(m), Action::Deny) => m.clone(),
            (_, Action::Deny) => format!("denied by the Gemini CLI rule `{}`", e.text),
            (_, Action::Prompt) => format!("the Gemini CLI rule `{}` asks first", e.text),
            (_, Action::Relax) => format!("allowed by the Gemini CLI rule `{}`", e.text),
        },
        source: format!("{place}: `{}`", e.text),
        matches: Vec::new(),
        no_matches: Vec::new(),
        lists: Vec::new(),
    };
    let shell_tool = tools.iter().any(|t| t == "run_shell_command")
        || (tools.is_empty() && r.mcp_name.is_none());
    if !shell_examples.is_empty() && shell_tool {
        for x in &shell_examples {
            rule.matches
                .push(Example::shell(AGENT, "run_shell_command", x));
        }
        let x = &shell_examples[0];
        if e.action == Action::Relax {
            rule.no_matches.push(Example::shell(
                AGENT,
                "run_shell_command",
                &format!("{x} && rm -rf build"),
            ));
            rule.no_matches.push(Example::shell(
                AGENT,
                "run_shell_command",
                &format!("{x} > /tmp/out.txt"),
            ));
        } else {
            rule.matches.push(Example::shell(
                AGENT,
                "run_shell_command",
                &format!("git status && {x}"),
            ));
            rule.matches.push(Example::shell(
                AGENT,
                "run_shell_command",
                &format!("timeout 5 {x}"),
            ));
            rule.no_matches.push(Example::shell(
                AGENT,
                "run_shell_command",
                &format!("echo '{}'", x.replace('\'', "")),
            ));
        }
    } else if r.command_regex.is_none() && r.args_pattern.is_none() {
        if let Some(server) = r.mcp_name.as_deref().filter(|s| *s != "*") {
            let t = r
                .tool_name
                .as_ref()
                .map(|t| t.list())
                .and_then(|l| l.into_iter().next())
                .filter(|t| t != "*")
                .unwrap_or_else(|| "any_tool".into());
            rule.matches.push(Example::new(
                AGENT,
                &format!("mcp__{server}__{t}"),
                json!({}),
            ));
        } else if let Some((server, tool)) =
            e.m.tools
                .first()
                .and_then(|t| t.strip_prefix("mcp_"))
                .and_then(|rest| rest.split_once('_'))
                .filter(|(server, _)| *server != "*")
        {
            let tool = if tool == "*" { "any_tool" } else { tool };
            rule.matches.push(Example::new(
                AGENT,
                &format!("mcp__{server}__{tool}"),
                json!({}),
            ));
        } else if let Some(t) = tools.first() {
            rule.matches
                .push(Example::new(AGENT, t, sample_args(t).unwrap_or_default()));
            let other = if t == "list_directory" {
                "read_file"
            } else {
                "list_directory"
            };
            if !tools.iter().any(|x| x == other) && !tools.is_empty() {
                rule.no_matches.push(Example::new(
                    AGENT,
                    other,
                    sample_args(other).unwrap_or_default(),
                ));
            }
        }
    }
    rules.push(rule);
}

fn command_cond(action: Action, pats: &[CommandPattern]) -> String {
    match action {
        Action::Relax => {
            let any: Vec<String> = pats
                .iter()
                .map(|p| format!("({})", p.relax_cel()))
                .collect();
            format!(
                "call.commands.size() > 0 && call.commands.all(c, {})",
                any.join(" || ")
            )
        }
        _ => {
            let any: Vec<String> = pats
                .iter()
                .map(|p| format!("({})", p.sandbox_cel()))
                .collect();
            format!("call.commands.exists(c, {})", any.join(" || "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(tools: &[&str], prefixes: &[&str]) -> Match {
        Match {
            tools: tools.iter().map(|s| s.to_string()).collect(),
            server: None,
            prefixes: prefixes
                .iter()
                .map(|p| p.split(' ').map(str::to_string).collect())
                .collect(),
            partial: false,
        }
    }

    #[test]
    fn a_broader_rule_covers_a_narrower_one() {
        let git = m(&["run_shell_command"], &["git"]);
        let git_log = m(&["run_shell_command"], &["git log"]);
        assert!(covers(&git, &git_log));
        assert!(!covers(&git_log, &git));
        assert!(covers(&m(&["*"], &[]), &git));
        assert!(!covers(&m(&["write_file"], &[]), &git));
        // A regex or a mode makes a rule match only some calls: it covers nothing.
        let mut partial = git.clone();
        partial.partial = true;
        assert!(!covers(&partial, &git_log));
    }

    #[test]
    fn overlap_is_judged_by_tools_and_prefixes() {
        let git = m(&["run_shell_command"], &["git"]);
        let npm = m(&["run_shell_command"], &["npm publish"]);
        assert!(!overlaps(&git, &npm));
        assert!(overlaps(&git, &m(&["run_shell_command"], &["git push"])));
        assert!(overlaps(
            &m(&["mcp_srv_*"], &[]),
            &m(&["mcp_srv_search"], &[])
        ));
        assert!(!overlaps(&m(&["mcp_srv_*"], &[]), &git));
    }

    #[test]
    fn tiers_come_from_the_file_place() {
        assert_eq!(tier_of(Path::new("/etc/gemini-cli/policies/a.toml")).0, 5);
        assert_eq!(tier_of(Path::new("/repo/.gemini/policies/a.toml")).0, 3);
        assert_eq!(tier_of(Path::new("/tmp/a.toml")).0, 4);
    }
}
