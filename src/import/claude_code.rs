//! Claude Code settings (`permissions.allow`, `ask`, `deny` in `settings.json`,
//! `settings.local.json`, `managed-settings.json`) as a policy over effects.
//!
//! Lists merge across files; deny beats ask beats allow whatever the order, which
//! the engine gives for free (sandbox rules take the strictest, relax rules only
//! move prompt to allow). Deny and ask rules are written over the call's effects,
//! so they hold for every tool and behind every wrapper; allow rules relax only
//! the tool they name, and only when every command of the call matches.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;

use super::command::{CommandPattern, has_shell_syntax};
use super::{
    Action, EXAMPLE_WORKSPACE, Example, Finding, FindingKind, Import, ImportError, Rule, cel_str,
    slug,
};

const AGENT: &str = "claude-code";

/// Claude Code's tools that read files: `Read(...)` rules cover them all.
const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS"];
/// Claude Code's tools that edit files: `Edit(...)` rules cover them all.
const EDIT_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];
/// Tools the shipped manifest already allows: an allow rule for them changes nothing.
const ALLOWED_TOOLS: &[&str] = &[
    "Read",
    "LS",
    "Glob",
    "Grep",
    "TodoWrite",
    "AskUserQuestion",
    "BashOutput",
    "KillShell",
];

/// The tools of the shipped `manifests/claude-code.yaml`, with an argument set each
/// that the tool's schema accepts (for examples).
fn sample_args(tool: &str) -> Option<serde_json::Value> {
    let ws = EXAMPLE_WORKSPACE;
    Some(match tool {
        "Bash" => json!({"command": "ls"}),
        "Read" => json!({"file_path": format!("{ws}/README.md")}),
        "LS" => json!({"path": ws}),
        "Glob" => json!({"pattern": "**/*.rs"}),
        "Grep" => json!({"pattern": "TODO"}),
        "Write" => json!({"file_path": format!("{ws}/notes.txt"), "content": ""}),
        "Edit" => {
            json!({"file_path": format!("{ws}/notes.txt"), "old_string": "a", "new_string": "b"})
        }
        "MultiEdit" => {
            json!({"file_path": format!("{ws}/notes.txt"), "edits": [{"old_string": "a", "new_string": "b"}]})
        }
        "NotebookEdit" => {
            json!({"notebook_path": format!("{ws}/analysis.ipynb"), "new_source": ""})
        }
        "WebFetch" => json!({"url": "https://example.com/", "prompt": "summarise"}),
        "WebSearch" => json!({"query": "rust globset"}),
        "Task" | "Agent" => {
            json!({"description": "look around", "prompt": "look around", "subagent_type": "general-purpose"})
        }
        "ExitPlanMode" => json!({"plan": "the plan"}),
        "TodoWrite" => json!({"todos": []}),
        "AskUserQuestion" => json!({"questions": []}),
        "BashOutput" => json!({"bash_id": "1"}),
        "KillShell" => json!({"shell_id": "1"}),
        _ => return None,
    })
}

#[derive(Debug, Default, Deserialize)]
struct Settings {
    #[serde(default)]
    permissions: Option<Permissions>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Permissions {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    default_mode: Option<String>,
    #[serde(default)]
    additional_directories: Vec<String>,
}

/// One rule of one file.
struct Entry {
    action: Action,
    text: String,
    file: String,
    line: usize,
    /// What `/path` means in this file.
    root: Root,
}

/// What a path starting with one `/` is relative to.
#[derive(Clone)]
enum Root {
    /// The project (a settings file in `PROJECT/.claude/`): the workspace.
    Workspace,
    /// The home folder (`~/.claude/settings.json`).
    Home,
    /// The folder of a settings file elsewhere.
    Folder(String),
}

fn root_of(path: &Path) -> Root {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let Some(dir) = abs.parent() else {
        return Root::Workspace;
    };
    if dir.file_name().is_some_and(|n| n == ".claude") {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if home.as_deref().is_some_and(|h| dir.parent() == Some(h)) {
            return Root::Home;
        }
        return Root::Workspace;
    }
    Root::Folder(dir.display().to_string())
}

/// Reads the files, merges their lists, and translates every rule.
///
/// # Errors
/// A file cannot be read or is not a Claude Code settings file.
pub fn import(files: &[PathBuf]) -> Result<Import, ImportError> {
    let mut entries = Vec::new();
    let mut findings = Vec::new();
    let mut sources = Vec::new();
    for path in files {
        let text = super::read_input(path)?;
        let name = path.display().to_string();
        let settings: Settings = serde_json::from_str(&text).map_err(|e| ImportError::Parse {
            path: name.clone(),
            line: e.line(),
            column: e.column(),
            message: format!("not a Claude Code settings file: {e}"),
        })?;
        sources.push(name.clone());
        let root = root_of(path);
        let Some(p) = settings.permissions else {
            continue;
        };
        if let Some(mode) = &p.default_mode {
            findings.push(Finding {
                kind: FindingKind::Note,
                file: name.clone(),
                rule: format!("`defaultMode: {mode}`"),
                reason: "not imported: the mode is the agent's own; the hook passes it as `session.mode`".into(),
            });
        }
        for dir in &p.additional_directories {
            findings.push(Finding {
                kind: FindingKind::Note,
                file: name.clone(),
                rule: format!("`additionalDirectories: {dir}`"),
                reason: "not imported: folders outside the workspace stay governed by the policy's rules".into(),
            });
        }
        for (action, list) in [
            (Action::Deny, &p.deny),
            (Action::Prompt, &p.ask),
            (Action::Relax, &p.allow),
        ] {
            for text_rule in list {
                let line = serde_json::to_string(text_rule)
                    .ok()
                    .and_then(|q| text.find(&q))
                    .map_or(1, |at| super::line_column(&text, at).0);
                entries.push(Entry {
                    action,
                    text: text_rule.clone(),
                    file: name.clone(),
                    line,
                    root: root.clone(),
                });
            }
        }
    }
    let rules_read = entries.len();
    // The same rule in two files (or twice in one) is one rule.
    let mut seen = std::collections::BTreeSet::new();
    entries.retain(|e| seen.insert((e.action, e.text.clone())));
    let mut rules = Vec::new();
    let mut bash_allows = Vec::new();
    for e in &entries {
        translate(e, &mut rules, &mut findings, &mut bash_allows);
    }
    // A compound whose commands are each allowed by some rule is allowed.
    if bash_allows.len() > 1 {
        let any: Vec<String> = bash_allows
            .iter()
            .map(|(p, _): &(CommandPattern, String)| format!("({})", p.relax_cel()))
            .collect();
        let (a, b) = (&bash_allows[0], &bash_allows[1]);
        let first = |p: &CommandPattern| p.matching_examples().into_iter().next();
        let mut matches = Vec::new();
        if let (Some(x), Some(y)) = (first(&a.0), first(&b.0)) {
            matches.push(Example::shell(AGENT, "Bash", &format!("{x} && {y}")));
        }
        let listed: Vec<&str> = bash_allows.iter().map(|(_, t)| t.as_str()).collect();
        rules.push(Rule {
            id: "claude-allow-bash-combined".into(),
            action: Action::Relax,
            tools: vec!["Bash".into()],
            when: format!(
                "call.commands.size() > 0 && call.commands.all(c, {})",
                any.join(" || ")
            ),
            description: format!(
                "Every command of the call is allowed by one of {}.",
                listed.join(", ")
            ),
            reason: "each command is allowed by a Claude Code allow rule".into(),
            source: format!("{}: allow {}", entries[0].file, listed.join(", ")),
            matches,
            no_matches: vec![Example::shell(
                AGENT,
                "Bash",
                &format!("{} && rm -rf build", first(&a.0).unwrap_or_default()),
            )],
            lists: Vec::new(),
        });
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

/// `Tool` or `Tool(specifier)`.
fn split_rule(text: &str) -> Option<(&str, Option<&str>)> {
    let text = text.trim();
    match text.find('(') {
        None => Some((text, None)),
        Some(open) => {
            let inner = text[open + 1..].strip_suffix(')')?;
            Some((&text[..open], Some(inner)))
        }
    }
}

fn verb(action: Action) -> &'static str {
    match action {
        Action::Deny => "deny",
        Action::Prompt => "ask",
        Action::Relax => "allow",
    }
}

fn translate(
    e: &Entry,
    rules: &mut Vec<Rule>,
    findings: &mut Vec<Finding>,
    bash_allows: &mut Vec<(CommandPattern, String)>,
) {
    let original = format!("{} `{}`", verb(e.action), e.text);
    let place = format!("{}:{}", e.file, e.line);
    let finding = |kind, reason: String| Finding {
        kind,
        file: place.clone(),
        rule: original.clone(),
        reason,
    };
    let Some((tool, spec)) = split_rule(&e.text) else {
        findings.push(finding(
            FindingKind::Dropped,
            "not a rule Claude Code reads (`Tool` or `Tool(specifier)`)".into(),
        ));
        return;
    };
    let spec = spec
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*" && *s != "**");
    let base = Rule {
        id: format!("claude-{}-{}", verb(e.action), slug(&e.text)),
        action: e.action,
        tools: Vec::new(),
        when: String::new(),
        description: String::new(),
        reason: match e.action {
            Action::Deny => format!("denied by the Claude Code rule `{}`", e.text),
            Action::Prompt => format!("the Claude Code rule `{}` asks first", e.text),
            Action::Relax => format!("allowed by the Claude Code rule `{}`", e.text),
        },
        source: format!("{place}: {original}"),
        matches: Vec::new(),
        no_matches: Vec::new(),
        lists: Vec::new(),
    };
    if let Some(server) = tool.strip_prefix("mcp__") {
        if spec.is_some() {
            findings.push(finding(
                FindingKind::Dropped,
                "MCP rules take no specifier: name `mcp__server`, `mcp__server__*` or `mcp__server__tool`".into(),
            ));
            return;
        }
        rules.push(mcp_rule(base, server));
        return;
    }
    match (tool, spec) {
        ("Bash", Some(spec)) => bash_rule(e, base, spec, rules, findings, &place, bash_allows),
        ("Read", Some(spec)) => path_rule(e, base, spec, true, rules, findings, &place),
        ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", Some(spec)) => {
            path_rule(e, base, spec, false, rules, findings, &place);
        }
        ("WebFetch", Some(spec)) => fetch_rule(e, base, spec, rules, findings, &place),
        ("Task" | "Agent", Some(agent)) => {
            let mut r = base;
            r.tools = vec!["Task".into(), "Agent".into()];
            r.when = format!("args.subagent_type == {}", cel_str(agent));
            r.description = format!("The sub-agent `{agent}`.");
            r.matches = vec![Example::new(
                AGENT,
                "Task",
                json!({"description": "look", "prompt": "look", "subagent_type": agent}),
            )];
            r.no_matches = vec![Example::new(
                AGENT,
                "Task",
                json!({"description": "look", "prompt": "look", "subagent_type": format!("{agent}-other")}),
            )];
            push_tool_rule(r, e, rules, findings, &place);
        }
        (_, None) => {
            let Some(args) = sample_args(tool) else {
                findings.push(finding(
                    FindingKind::Dropped,
                    format!(
                        "no tool `{tool}` in the claude-code manifest; a call of a tool no manifest names is rejected (the hook answers it by `settings.hooks.unknown_tool`, default prompt)"
                    ),
                ));
                return;
            };
            let mut r = base;
            r.tools = match tool {
                "Read" => READ_TOOLS.iter().map(|s| s.to_string()).collect(),
                "Edit" => EDIT_TOOLS.iter().map(|s| s.to_string()).collect(),
                _ => vec![tool.to_string()],
            };
            r.when = "true".into();
            r.description = format!("Every call of {}.", r.tools.join(", "));
            r.matches = vec![Example::new(AGENT, tool, args)];
            let other = if tool == "LS" { "Read" } else { "LS" };
            if !r.tools.iter().any(|t| t == other) {
                r.no_matches = vec![Example::new(AGENT, other, sample_args(other).unwrap_or_default())];
            }
            push_tool_rule(r, e, rules, findings, &place);
        }
        (_, Some(_)) => findings.push(finding(
            FindingKind::Dropped,
            format!("`{tool}(...)` specifiers have no translation; only Bash, Read, Edit, WebFetch and Task take one"),
        )),
    }
}

/// A rule over whole tools; an allow for a tool the manifest already allows is left out.
fn push_tool_rule(
    r: Rule,
    e: &Entry,
    rules: &mut Vec<Rule>,
    findings: &mut Vec<Finding>,
    place: &str,
) {
    if e.action == Action::Relax && r.tools.iter().all(|t| ALLOWED_TOOLS.contains(&t.as_str())) {
        findings.push(Finding {
            kind: FindingKind::Note,
            file: place.to_string(),
            rule: format!("{} `{}`", verb(e.action), e.text),
            reason: format!(
                "nothing to relax: {} is `allow` in the claude-code manifest (rules that ask or deny still apply)",
                r.tools.join(", ")
            ),
        });
        return;
    }
    rules.push(r);
}

fn mcp_rule(mut r: Rule, rest: &str) -> Rule {
    let (server, tool) = match rest.split_once("__") {
        Some((s, t)) if !t.is_empty() && t != "*" => (s, Some(t)),
        Some((s, _)) => (s, None),
        None => (rest, None),
    };
    r.when = match tool {
        Some(t) => format!(
            "tool.server == {} && tool.remote_name == {}",
            cel_str(server),
            cel_str(t)
        ),
        None => format!("tool.server == {}", cel_str(server)),
    };
    r.description = match tool {
        Some(t) => format!("The tool `{t}` of the MCP server `{server}`."),
        None => format!("Every tool of the MCP server `{server}`."),
    };
    let name = format!("mcp__{server}__{}", tool.unwrap_or("any_tool"));
    r.matches = vec![Example::new(AGENT, &name, json!({}))];
    r
}

fn bash_rule(
    e: &Entry,
    mut r: Rule,
    spec: &str,
    rules: &mut Vec<Rule>,
    findings: &mut Vec<Finding>,
    place: &str,
    bash_allows: &mut Vec<(CommandPattern, String)>,
) {
    let finding = |kind, reason: String| Finding {
        kind,
        file: place.to_string(),
        rule: format!("{} `{}`", verb(e.action), e.text),
        reason,
    };
    let pattern = CommandPattern::claude(spec);
    let exact_text = matches!(pattern, CommandPattern::Exact(_));
    if has_shell_syntax(spec) && !exact_text {
        // Quoting, operators or expansions inside a prefix: the words cannot be
        // compared one by one.
        if e.action == Action::Relax {
            findings.push(finding(
                FindingKind::Dropped,
                "the pattern holds shell syntax (quotes, operators or expansions); an allow over it cannot be checked command by command".into(),
            ));
            return;
        }
        let first = spec
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(|c: char| {
                !c.is_ascii_alphanumeric() && c != '/' && c != '.' && c != '-' && c != '_'
            });
        if first.is_empty() {
            findings.push(finding(
                FindingKind::Dropped,
                "the pattern names no program".into(),
            ));
            return;
        }
        findings.push(finding(
            FindingKind::Stricter,
            format!("the pattern holds shell syntax; every `{first}` command is matched instead"),
        ));
        let p = CommandPattern::Prefix(vec![first.to_string()]);
        r.when = format!("call.commands.exists(c, {})", p.sandbox_cel());
        r.description = format!("Any `{first}` command (from `{spec}`).");
        r.matches = vec![Example::shell(AGENT, "Bash", first)];
        rules.push(r);
        return;
    }
    match e.action {
        Action::Relax => {
            r.tools = vec!["Bash".into()];
            r.when = match &pattern {
                // Exactly that line, as Claude Code compares it.
                CommandPattern::Exact(_) => format!("args.command.trim() == {}", cel_str(spec)),
                CommandPattern::Any => "true".into(),
                p => format!(
                    "call.commands.size() > 0 && call.commands.all(c, {})",
                    p.relax_cel()
                ),
            };
            r.description = match &pattern {
                CommandPattern::Exact(_) => format!("Exactly the command `{spec}`."),
                CommandPattern::Any => "Every Bash command.".into(),
                _ => format!("Every command of the call matches `{spec}`, with no wrapper."),
            };
            let examples = pattern.matching_examples();
            r.matches = examples
                .iter()
                .map(|x| Example::shell(AGENT, "Bash", x))
                .collect();
            if let Some(x) = examples.first()
                && pattern != CommandPattern::Any
            {
                let mut no = vec![
                    format!("{x} && rm -rf build"),
                    format!("{x} $(rm -rf build)"),
                    format!("timeout 5 {x}"),
                ];
                if let Some(p) = pattern.program()
                    && matches!(pattern, CommandPattern::Prefix(_))
                    && x == p
                {
                    no.push(format!("{p}x"));
                }
                r.no_matches = no
                    .iter()
                    .map(|x| Example::shell(AGENT, "Bash", x))
                    .collect();
            }
            if !matches!(pattern, CommandPattern::Exact(_) | CommandPattern::Any) {
                bash_allows.push((pattern.clone(), e.text.clone()));
            }
            rules.push(r);
        }
        Action::Deny | Action::Prompt => {
            r.when = format!("call.commands.exists(c, {})", pattern.sandbox_cel());
            r.description = format!(
                "A command matching `{spec}`, behind any wrapper, in any part of a compound, by any tool."
            );
            let examples = pattern.matching_examples();
            let mut m: Vec<String> = examples.clone();
            if let Some(x) = examples.first()
                && pattern != CommandPattern::Any
            {
                m.push(format!("git status && {x}"));
                m.push(format!("timeout 5 {x}"));
                m.push(format!("env {x}"));
                m.push(format!("echo $({x})"));
                if let Some(p) = pattern.program() {
                    m.push(format!("/usr/bin/{p}{}", &x[p.len()..]));
                }
                r.no_matches = vec![Example::shell(
                    AGENT,
                    "Bash",
                    &format!("echo '{}'", x.replace('\'', "")),
                )];
                if let Some(p) = pattern.program()
                    && matches!(pattern, CommandPattern::Prefix(_))
                    && x == p
                {
                    r.no_matches
                        .push(Example::shell(AGENT, "Bash", &format!("{p}x")));
                }
            }
            r.matches = m.iter().map(|x| Example::shell(AGENT, "Bash", x)).collect();
            rules.push(r);
        }
    }
}

/// Claude Code's gitignore-style path specifier as globs: over fixed places
/// (absolute or `~/`), and relative to the workspace.
#[derive(Debug, Default, PartialEq)]
struct Globs {
    fixed: Vec<String>,
    in_workspace: Vec<String>,
}

fn path_globs(spec: &str, root: &Root) -> Result<Globs, String> {
    if spec.starts_with('!') {
        return Err("negated patterns (`!`) have no translation".into());
    }
    let (dir_only, spec) = match spec.strip_suffix('/') {
        Some(s) => (true, s),
        None => (false, spec),
    };
    // (in the workspace?, the glob)
    let (ws, glob) = if let Some(abs) = spec.strip_prefix("//") {
        (false, format!("/{abs}"))
    } else if spec == "~" || spec.starts_with("~/") {
        (false, spec.to_string())
    } else if let Some(rel) = spec.strip_prefix('/') {
        match root {
            Root::Workspace => (true, rel.to_string()),
            Root::Home => (false, format!("~/{rel}")),
            Root::Folder(dir) => (false, format!("{}/{rel}", dir.trim_end_matches('/'))),
        }
    } else if let Some(rel) = spec.strip_prefix("./") {
        (true, rel.to_string())
    } else if spec.contains('/') {
        // gitignore: a slash inside anchors the pattern to its base.
        (true, spec.to_string())
    } else {
        // gitignore: a bare name matches at any depth.
        (true, format!("**/{spec}"))
    };
    // gitignore: a pattern that names a folder covers everything inside it.
    let globs = if dir_only {
        vec![format!("{glob}/**")]
    } else if glob.ends_with("/**") {
        vec![glob]
    } else {
        vec![glob.clone(), format!("{glob}/**")]
    };
    for g in &globs {
        if let Err(e) = globset::GlobBuilder::new(g).literal_separator(true).build() {
            return Err(format!(
                "`{spec}` is not a valid path pattern: {}",
                e.kind()
            ));
        }
    }
    Ok(if ws {
        Globs {
            fixed: Vec::new(),
            in_workspace: globs,
        }
    } else {
        Globs {
            fixed: globs,
            in_workspace: Vec::new(),
        }
    })
}

/// The CEL condition `path_matches(VAR, ...)` over the globs, and the lists it reads.
fn globs_cel(var: &str, globs: &Globs, name: &str) -> (String, Vec<(String, Vec<String>)>) {
    let mut parts = Vec::new();
    let mut lists = Vec::new();
    if !globs.fixed.is_empty() {
        parts.push(format!("path_matches({var}, lists.{name})"));
        lists.push((name.to_string(), globs.fixed.clone()));
    }
    if !globs.in_workspace.is_empty() {
        let n = format!("{name}_in_workspace");
        parts.push(format!(
            "path_matches({var}, lists.{n}.map(g, path_ancestors(session.workspace)[0] + \"/\" + g))"
        ));
        lists.push((n, globs.in_workspace.clone()));
    }
    (parts.join(" || "), lists)
}

/// A concrete path the spec matches, for examples.
fn example_path(spec: &str, root: &Root) -> Option<String> {
    if spec.contains(['[', '{', '!']) {
        return None;
    }
    let dir_only = spec.ends_with('/');
    let spec = spec.trim_end_matches('/');
    let spec = &if dir_only {
        format!("{spec}/x")
    } else {
        spec.to_string()
    };
    let concrete = |s: &str| {
        s.replace("**/", "")
            .replace("/**", "/x")
            .replace("**", "x")
            .replace(['*', '?'], "x")
    };
    let ws = EXAMPLE_WORKSPACE;
    Some(if let Some(abs) = spec.strip_prefix("//") {
        format!("/{}", concrete(abs))
    } else if let Some(home) = spec.strip_prefix("~/") {
        format!("~/{}", concrete(home))
    } else if let Some(rel) = spec.strip_prefix('/') {
        match root {
            Root::Workspace => format!("{ws}/{}", concrete(rel)),
            Root::Home => format!("~/{}", concrete(rel)),
            Root::Folder(dir) => format!("{dir}/{}", concrete(rel)),
        }
    } else {
        format!("{ws}/{}", concrete(spec.trim_start_matches("./")))
    })
}

fn path_rule(
    e: &Entry,
    mut r: Rule,
    spec: &str,
    read: bool,
    rules: &mut Vec<Rule>,
    findings: &mut Vec<Finding>,
    place: &str,
) {
    let (tool, _) = split_rule(&e.text).unwrap_or(("Edit", None));
    let globs = match path_globs(spec, &e.root) {
        Ok(g) => g,
        Err(why) => {
            findings.push(Finding {
                kind: FindingKind::Dropped,
                file: place.to_string(),
                rule: format!("{} `{}`", verb(e.action), e.text),
                reason: why,
            });
            return;
        }
    };
    let name = format!(
        "claude_{}_{}",
        rules.len() + 1,
        slug(spec).replace('-', "_")
    );
    let example = example_path(spec, &e.root);
    let elsewhere = format!("{EXAMPLE_WORKSPACE}/unrelated-zz/other.txt");
    match e.action {
        Action::Relax if read => {
            findings.push(Finding {
                kind: FindingKind::Note,
                file: place.to_string(),
                rule: format!("{} `{}`", verb(e.action), e.text),
                reason: "nothing to relax: Claude Code's read tools are `allow` in the claude-code manifest (rules that ask or deny still apply)".into(),
            });
        }
        Action::Relax => {
            r.tools = if tool == "Edit" {
                EDIT_TOOLS.iter().map(|s| s.to_string()).collect()
            } else {
                vec![tool.to_string()]
            };
            let (cond, lists) = globs_cel("w", &globs, &name);
            r.lists = lists;
            r.when = format!("call.writes.size() > 0 && call.writes.all(w, {cond})");
            r.description = format!("{} of files matching `{spec}`.", r.tools.join(", "));
            if let Some(p) = &example {
                r.matches = vec![edit_call(tool, p)];
            }
            r.no_matches = vec![edit_call(tool, &elsewhere)];
            rules.push(r);
        }
        Action::Deny | Action::Prompt => {
            let effects = if read { "call.paths" } else { "call.writes" };
            let (cond, lists) = globs_cel("p", &globs, &name);
            r.lists = lists;
            r.when = format!("{effects}.exists(p, {cond})");
            r.description = if read {
                format!("A read or a write of a path matching `{spec}`, by any tool.")
            } else {
                format!("A write of a path matching `{spec}`, by any tool.")
            };
            if let Some(p) = &example {
                let mut m = vec![
                    edit_call("Edit", p),
                    Example::shell(AGENT, "Bash", &format!("echo x > {p}")),
                ];
                if read {
                    m.insert(0, Example::new(AGENT, "Read", json!({"file_path": p})));
                    m.push(Example::shell(AGENT, "Bash", &format!("cat {p}")));
                } else {
                    r.no_matches
                        .push(Example::new(AGENT, "Read", json!({"file_path": p})));
                }
                r.matches = m;
            }
            r.no_matches
                .push(Example::new(AGENT, "Read", json!({"file_path": elsewhere})));
            rules.push(r);
        }
    }
}

fn edit_call(tool: &str, path: &str) -> Example {
    let args = match tool {
        "Write" => json!({"file_path": path, "content": ""}),
        "NotebookEdit" => json!({"notebook_path": path, "new_source": ""}),
        "MultiEdit" => {
            json!({"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]})
        }
        _ => json!({"file_path": path, "old_string": "a", "new_string": "b"}),
    };
    Example::new(AGENT, if tool == "Read" { "Edit" } else { tool }, args)
}

fn fetch_rule(
    e: &Entry,
    mut r: Rule,
    spec: &str,
    rules: &mut Vec<Rule>,
    findings: &mut Vec<Finding>,
    place: &str,
) {
    let Some(domain) = spec
        .strip_prefix("domain:")
        .map(|d| d.trim().to_ascii_lowercase())
    else {
        findings.push(Finding {
            kind: FindingKind::Dropped,
            file: place.to_string(),
            rule: format!("{} `{}`", verb(e.action), e.text),
            reason: "WebFetch rules name a domain: `WebFetch(domain:example.com)`".into(),
        });
        return;
    };
    let (host_cel, example_host, other_host) = match domain.strip_prefix("*.") {
        Some(parent) => (
            format!("f.host.endsWith({})", cel_str(&format!(".{parent}"))),
            format!("docs.{parent}"),
            format!("{parent}.evil.example"),
        ),
        None => (
            format!("f.host == {}", cel_str(&domain)),
            domain.clone(),
            format!("{domain}.evil.example"),
        ),
    };
    let fetch = |host: &str| {
        Example::new(
            AGENT,
            "WebFetch",
            json!({"url": format!("https://{host}/page"), "prompt": "summarise"}),
        )
    };
    match e.action {
        Action::Relax => {
            r.tools = vec!["WebFetch".into()];
            r.when = format!("call.fetches.size() > 0 && call.fetches.all(f, {host_cel})");
            r.description = format!("WebFetch of `{domain}`.");
            r.matches = vec![fetch(&example_host)];
            r.no_matches = vec![fetch(&other_host)];
        }
        Action::Deny | Action::Prompt => {
            // A host that is not known (`curl $URL`) could be this one.
            r.when = format!("call.fetches.exists(f, {host_cel} || f.host == \"*\")");
            r.description =
                format!("A fetch of `{domain}` by any tool, or of a host that is not known.");
            r.matches = vec![
                fetch(&example_host),
                Example::shell(AGENT, "Bash", &format!("curl -s https://{example_host}/x")),
            ];
            r.no_matches = vec![fetch(&other_host)];
        }
    }
    rules.push(r);
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn g(spec: &str, root: &Root) -> Globs {
        path_globs(spec, root).unwrap()
    }

    fn ws(items: &[&str]) -> Globs {
        Globs {
            fixed: Vec::new(),
            in_workspace: items.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn fixed(items: &[&str]) -> Globs {
        Globs {
            fixed: items.iter().map(|s| s.to_string()).collect(),
            in_workspace: Vec::new(),
        }
    }

    #[test]
    fn gitignore_style_paths() {
        let project = Root::Workspace;
        assert_eq!(
            g("//etc/shadow", &project),
            fixed(&["/etc/shadow", "/etc/shadow/**"])
        );
        assert_eq!(g("~/.aws/**", &project), fixed(&["~/.aws/**"]));
        assert_eq!(g("/src/**", &project), ws(&["src/**"]));
        assert_eq!(g("/src/**", &Root::Home), fixed(&["~/src/**"]));
        assert_eq!(
            g("/x", &Root::Folder("/etc/claude".into())),
            fixed(&["/etc/claude/x", "/etc/claude/x/**"])
        );
        assert_eq!(g("./.env", &project), ws(&[".env", ".env/**"]));
        // A bare name matches at any depth; a slash inside anchors it.
        assert_eq!(g("*.lock", &project), ws(&["**/*.lock", "**/*.lock/**"]));
        assert_eq!(g("docs/*.md", &project), ws(&["docs/*.md", "docs/*.md/**"]));
        // A trailing slash names a folder only.
        assert_eq!(g("secrets/", &project), ws(&["**/secrets/**"]));
        assert!(path_globs("!keep", &project).is_err());
        assert!(path_globs("src/[a", &project).is_err());
    }

    #[test]
    fn example_paths_match_their_specs() {
        let project = Root::Workspace;
        assert_eq!(
            example_path("./.env", &project).unwrap(),
            "/home/dev/project/.env"
        );
        assert_eq!(
            example_path("secrets/", &project).unwrap(),
            "/home/dev/project/secrets/x"
        );
        assert_eq!(example_path("~/.aws/**", &project).unwrap(), "~/.aws/x");
        assert_eq!(
            example_path("/src/**/*.ts", &project).unwrap(),
            "/home/dev/project/src/x.ts"
        );
        assert_eq!(example_path("src/{a,b}", &project), None);
    }

    #[test]
    fn rule_text_splits_into_tool_and_specifier() {
        assert_eq!(
            split_rule("Bash(git log:*)"),
            Some(("Bash", Some("git log:*")))
        );
        assert_eq!(split_rule("WebSearch"), Some(("WebSearch", None)));
        assert_eq!(split_rule("Bash(unclosed"), None);
    }

    #[test]
    fn every_tool_with_sample_args_is_in_the_shipped_manifest() {
        let manifest = include_str!("../../manifests/claude-code.yaml");
        for tool in READ_TOOLS.iter().chain(EDIT_TOOLS).chain(ALLOWED_TOOLS) {
            assert!(sample_args(tool).is_some(), "{tool}");
            assert!(manifest.contains(&format!("  - name: {tool}\n")), "{tool}");
        }
    }
}
