//! MCP tool names as each agent spells them, resolved to the declared server
//! and tool they stand for.
//!
//! The agents respell what a server calls its tools, each its own way:
//!
//! - Claude Code: `mcp__SERVER__TOOL`, characters outside `[A-Za-z0-9_-]` as `_`;
//! - Codex: `mcp__SERVER__TOOL`, `-` turned into `_` as well (`get-sum` is
//!   `get_sum`);
//! - Copilot CLI: `SERVER-TOOL`, with no prefix;
//! - Gemini CLI: `mcp_SERVER_TOOL` (see [`super::tool_name`]).
//!
//! A respelled name loses what told `get-sum` from `get_sum`, so names are
//! compared *folded* (ASCII lowercase, everything else but letters and digits
//! as `_`), and the tool is named the way the manifest writes it: the literal
//! override or `include:` pattern that folds the same, else a spelling the
//! override's glob matches. Where two declared spellings fold the same, the
//! one whose override is strictest wins, so a respelling never turns a
//! denied tool into an allowed one. A name that reaches no declared server,
//! or reaches two, is no declared tool at all: the hook answers it as an
//! unknown tool (`hooks.unknown_tool`), never with a server's default.

use crate::policy::ServerDef;
use crate::registry::{Registry, mcp_tool_name};

/// `s` folded: ASCII letters lowercased, digits kept, every other character `_`.
/// One character out for each character in, so positions carry over.
#[must_use]
pub fn fold(s: &str) -> Vec<char> {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn folds_equal(a: &str, b: &str) -> bool {
    fold(a) == fold(b)
}

const GLOB_META: [char; 7] = ['*', '?', '[', ']', '{', '}', '!'];

fn is_literal(pattern: &str) -> bool {
    !pattern.contains(GLOB_META)
}

/// A glob pattern folded as names are, its syntax kept.
fn fold_pattern(pattern: &str) -> String {
    pattern
        .chars()
        .map(|c| {
            if GLOB_META.contains(&c) || c == ',' {
                c
            } else if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn glob_matches(pattern: &str, name: &str) -> bool {
    globset::Glob::new(pattern).is_ok_and(|g| g.compile_matcher().is_match(name))
}

/// The server's own name for the tool an agent spelled `sent`.
#[must_use]
pub fn canonical_remote(server: &ServerDef, sent: &str, registry: &Registry) -> String {
    let patterns = server
        .overrides
        .iter()
        .flat_map(|o| o.patterns.iter())
        .chain(server.include_patterns.iter());
    let registered: Vec<String> = registry
        .tools()
        .filter(|t| t.source.server() == server.name)
        .filter_map(|t| match &t.source {
            crate::registry::ToolSource::Mcp { remote_name, .. } => Some(remote_name.clone()),
            _ => None,
        })
        .collect();
    let literals: Vec<&str> = patterns
        .clone()
        .map(String::as_str)
        .filter(|p| is_literal(p))
        .chain(registered.iter().map(String::as_str))
        .collect();
    let mut same: Vec<&str> = literals
        .iter()
        .copied()
        .filter(|c| folds_equal(c, sent))
        .collect();
    same.sort_unstable();
    same.dedup();
    if let Some(strictest) = same.iter().max_by_key(|c| server.host_tool(c).0.permission) {
        return (*strictest).to_string();
    }
    let folded: String = fold(sent).into_iter().collect();
    for pattern in patterns.filter(|p| !is_literal(p)) {
        if !glob_matches(&fold_pattern(pattern), &folded) {
            continue;
        }
        for spelling in [sent.to_string(), sent.replace('_', "-")] {
            if glob_matches(pattern, &spelling) {
                return spelling;
            }
        }
    }
    sent.to_string()
}

/// The declared servers whose (folded) name `folded_server` is.
fn servers_named<'r>(registry: &'r Registry, server: &str) -> Vec<&'r ServerDef> {
    registry
        .servers()
        .iter()
        .filter(|s| folds_equal(&s.name, server))
        .collect()
}

/// A name no declared tool has: the call is an unknown tool.
fn undeclared(name: &str) -> String {
    format!("mcp__<undeclared>__{name}")
}

/// `mcp__SERVER__TOOL` (Claude Code, Codex) as the registry names that tool.
/// A name of a registered tool, or not of that shape, is kept.
#[must_use]
pub fn prefixed(name: &str, registry: &Registry) -> String {
    if registry.has_tool(name) {
        return name.to_string();
    }
    let Some((server, tool)) = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
    else {
        return name.to_string();
    };
    match servers_named(registry, server).as_slice() {
        [one] => mcp_tool_name(
            registry.name_format(&one.name),
            &one.name,
            &canonical_remote(one, tool, registry),
        ),
        [] => name.to_string(),
        _ => undeclared(name),
    }
}

/// Copilot CLI's `SERVER-TOOL` as the registry names that tool; a built-in
/// tool's name (one a manifest registers) is kept.
#[must_use]
pub fn dashed(name: &str, registry: &Registry) -> String {
    if registry.has_tool(name) || name.starts_with("mcp__") {
        return prefixed(name, registry);
    }
    let folded = fold(name);
    let fits: Vec<&ServerDef> = registry
        .servers()
        .iter()
        .filter(|s| {
            let f = fold(&s.name);
            folded.len() > f.len() + 1 && folded.starts_with(&f) && folded[f.len()] == '_'
        })
        .collect();
    match fits.as_slice() {
        [] => name.to_string(),
        [one] => {
            let skip = one.name.chars().count() + 1;
            let tool: String = name.chars().skip(skip).collect();
            mcp_tool_name(
                registry.name_format(&one.name),
                &one.name,
                &canonical_remote(one, &tool, registry),
            )
        }
        // `a-b-c` with servers `a` and `a-b`: which tool it is cannot be told.
        _ => undeclared(name),
    }
}

/// Gemini CLI's `mcp_SERVER_TOOL`: the declared server whose folded name
/// starts it (longest wins, as Gemini itself cannot hold two that clash).
#[must_use]
pub fn gemini_single(rest: &str, registry: &Registry) -> Option<String> {
    let folded = fold(rest);
    let server = registry
        .servers()
        .iter()
        .filter(|s| {
            let f = fold(&s.name);
            folded.len() > f.len() + 1 && folded.starts_with(&f) && folded[f.len()] == '_'
        })
        .max_by_key(|s| s.name.chars().count())?;
    let tool: String = rest.chars().skip(server.name.chars().count() + 1).collect();
    Some(mcp_tool_name(
        registry.name_format(&server.name),
        &server.name,
        &canonical_remote(server, &tool, registry),
    ))
}

/// The server and tool from Gemini's `mcp_context`, named by the registry.
#[must_use]
pub fn from_context(server: &str, tool: &str, registry: &Registry) -> String {
    match servers_named(registry, server).as_slice() {
        [one] => mcp_tool_name(
            registry.name_format(&one.name),
            &one.name,
            &canonical_remote(one, tool, registry),
        ),
        [] => mcp_tool_name(&registry.settings().mcp_name_format, server, tool),
        _ => undeclared(&format!("{server}__{tool}")),
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    const SERVERS: &str = r#"version: 1
servers:
  - name: everything
    transport: stdio
    command: npx
    args: [-y, server-everything]
    safety: {side_effect: network, permission: allow, reason: permissive default}
    overrides:
      - tools: [get-sum, echo, get_env]
        safety: {side_effect: none, permission: allow, reason: harmless}
      - tools: [get-env]
        safety: {side_effect: read, permission: deny, reason: dumps the environment}
      - tools: ["zip-*"]
        safety: {side_effect: write, permission: deny, reason: writes archives}
  - name: my-server
    transport: stdio
    command: /bin/my-server
  - name: my
    transport: stdio
    command: /bin/my
  - name: other-srv
    transport: stdio
    command: /bin/other
"#;

    fn registry() -> Registry {
        let loaded = crate::loader::load_sources(vec![crate::diagnostic::SourceFile::new(
            std::path::Path::new("servers.yaml"),
            SERVERS.into(),
        )]);
        assert!(loaded.policy.is_some(), "{:?}", loaded.diagnostics);
        Registry::new(&loaded.policy.unwrap()).unwrap()
    }

    #[test]
    fn codex_and_claude_code_spellings_reach_the_override_as_written() {
        let r = registry();
        for (sent, want) in [
            ("mcp__everything__get_sum", "mcp__everything__get-sum"),
            ("mcp__everything__get-sum", "mcp__everything__get-sum"),
            // Both spellings are declared (`get_env` allowed, `get-env`
            // denied): the strictest override wins.
            ("mcp__everything__get_env", "mcp__everything__get-env"),
            (
                "mcp__everything__zip_all_files",
                "mcp__everything__zip-all-files",
            ),
            (
                "mcp__everything__unlisted_tool",
                "mcp__everything__unlisted_tool",
            ),
            ("mcp__other_srv__run", "mcp__other-srv__run"),
            ("mcp__nowhere__run", "mcp__nowhere__run"),
            ("Bash", "Bash"),
        ] {
            assert_eq!(prefixed(sent, &r), want, "{sent}");
        }
    }

    #[test]
    fn copilot_spellings_split_at_the_declared_server() {
        let r = registry();
        for (sent, want) in [
            ("everything-get-sum", "mcp__everything__get-sum"),
            ("everything-get-env", "mcp__everything__get-env"),
            ("other_srv-run", "mcp__other-srv__run"),
            // `my-server-x` could be server `my` (tool `server-x`) or `my-server`.
            ("my-server-x", "mcp__<undeclared>__my-server-x"),
            ("my-x", "mcp__my__x"),
            ("bash", "bash"),
            ("nowhere-run", "nowhere-run"),
        ] {
            assert_eq!(dashed(sent, &r), want, "{sent}");
        }
    }

    #[test]
    fn a_glob_override_is_reached_through_a_spelling_it_matches() {
        let r = registry();
        let server = &r.servers()[0];
        assert_eq!(canonical_remote(server, "zip_files", &r), "zip-files");
        let (safety, ..) = server.host_tool(&canonical_remote(server, "zip_files", &r));
        assert_eq!(safety.permission, crate::model::Permission::Deny);
    }
}
