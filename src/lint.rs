//! Checks that need the whole policy and the registry: argument names against
//! the tools' parameters, and rule examples run through the dispatch path.

use std::collections::BTreeSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::policy::{Policy, Rule, ToolDef};
use crate::registry::Registry;

/// Every lint check beyond loading.
#[must_use]
pub fn check(policy: &Policy, registry: &Registry) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in policy.all_rules() {
        check_args(policy, rule, &mut out);
        check_reasons(rule, &mut out);
        check_examples(registry, rule, &mut out);
    }
    out
}

fn properties(t: &ToolDef) -> Option<&serde_json::Map<String, serde_json::Value>> {
    t.parameters.get("properties").and_then(|p| p.as_object())
}

fn required(t: &ToolDef) -> BTreeSet<&str> {
    t.parameters
        .get("required")
        .and_then(|r| r.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}

fn check_args(policy: &Policy, rule: &Rule, out: &mut Vec<Diagnostic>) {
    let tools: Vec<&ToolDef> = policy
        .tools
        .iter()
        .filter(|t| rule.tools.is_match(&t.name))
        .collect();
    if tools.is_empty() {
        return;
    }
    // A tool whose schema lists no properties accepts any key.
    if tools.iter().any(|t| properties(t).is_none()) {
        return;
    }
    if rule.when.arg_keys().next().is_none() {
        return;
    }
    let mut seen = BTreeSet::new();
    for read in &rule.when.arg_reads() {
        if !seen.insert(read.key.as_str()) {
            continue;
        }
        let having: Vec<&&ToolDef> = tools
            .iter()
            .filter(|t| properties(t).is_some_and(|p| p.contains_key(&read.key)))
            .collect();
        let at = rule.when_location(read.start, read.end);
        if having.is_empty() {
            let names: BTreeSet<&str> = tools
                .iter()
                .filter_map(|t| properties(t))
                .flat_map(|p| p.keys().map(String::as_str))
                .collect();
            let help = match crate::loader::closest(&read.key, names.iter().copied()) {
                Some(s) => format!("did you mean `args.{s}`?"),
                None => format!(
                    "the matched tools take {}",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            out.push(
                Diagnostic::new(
                    Code::UnknownArg,
                    format!(
                        "{} `{}` reads `args.{}`, which no tool it matches has",
                        rule.kind.as_str(),
                        rule.id,
                        read.key
                    ),
                )
                .at(at)
                .label("not a parameter of any matched tool")
                .help(help),
            );
            continue;
        }
        if rule.when.guarded.contains(&read.key) {
            continue;
        }
        let optional: Vec<&str> = having
            .iter()
            .filter(|t| !required(t).contains(read.key.as_str()))
            .map(|t| t.name.as_str())
            .collect();
        let missing: Vec<&str> = tools
            .iter()
            .filter(|t| properties(t).is_some_and(|p| !p.contains_key(&read.key)))
            .map(|t| t.name.as_str())
            .collect();
        if !optional.is_empty() || !missing.is_empty() {
            let which: Vec<&str> = optional.iter().chain(missing.iter()).copied().collect();
            out.push(
                Diagnostic::new(
                    Code::UnguardedOptionalArg,
                    format!(
                        "{} `{}` reads `args.{}` without `has(args.{})`",
                        rule.kind.as_str(),
                        rule.id,
                        read.key,
                        read.key
                    ),
                )
                .at(at)
                .label("may be missing")
                .help(format!(
                    "`{}` is optional or absent for {}; calls without it fail closed. Write `has(args.{}) && ...`",
                    read.key,
                    which.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                    read.key
                )),
            );
        }
    }
}

/// A rule that compares why a call is not exact with words that are not a
/// code of `call.inexact`, or with the wording of `call.unknown`: a typo, or
/// a match that rewording a message would break.
fn check_reasons(rule: &Rule, out: &mut Vec<Diagnostic>) {
    use crate::cel::reasons::ReasonList;
    use crate::effects::Reason;
    for t in rule.when.reason_texts() {
        let at = rule.when_location(t.start, t.end);
        let d = match t.list {
            ReasonList::Codes if Reason::from_code(&t.text).is_some() => continue,
            ReasonList::Codes => {
                let help =
                    match crate::loader::closest(&t.text, Reason::ALL.iter().map(|r| r.code())) {
                        Some(c) => {
                            format!("did you mean `{c}`? The codes are listed in docs/cel.md")
                        }
                        None => "the codes are listed in docs/cel.md".to_string(),
                    };
                Diagnostic::new(
                    Code::UnknownReasonCode,
                    format!(
                        "{} `{}` compares a code of `call.inexact` with `{}`, which is not one",
                        rule.kind.as_str(),
                        rule.id,
                        t.text
                    ),
                )
                .at(at)
                .label("not a reason code")
                .help(help)
            }
            ReasonList::Sentences => Diagnostic::new(
                Code::UnknownReasonCode,
                format!(
                    "{} `{}` matches the wording of `call.unknown`, which may change",
                    rule.kind.as_str(),
                    rule.id
                ),
            )
            .at(at)
            .label("the wording of a message")
            .help("match the stable codes of `call.inexact` instead (docs/cel.md)"),
        };
        out.push(d);
    }
}

fn check_examples(registry: &Registry, rule: &Rule, out: &mut Vec<Diagnostic>) {
    for ex in &rule.examples {
        if !registry.has_tool(&ex.call.tool) {
            // An MCP tool before connecting, or an unknown tool (reported by the loader).
            continue;
        }
        let ev = registry.evaluate(&ex.call);
        let hit = ev.matched.iter().any(|m| m.id == rule.id);
        if hit == ex.should_match {
            continue;
        }
        let applies = rule.tools.is_match(&ex.call.tool);
        let why = if !applies {
            format!("the rule's `tools:` do not match `{}`", ex.call.tool)
        } else if let Some(r) = &ev.reject_reason {
            format!("the call was rejected before the rule ran: {r}")
        } else if let Some(e) = ev.errors.iter().find(|e| e.id == rule.id) {
            format!(
                "the expression failed: {} (counted as {})",
                e.message, e.counted_as
            )
        } else {
            format!("the expression gave `{hit}`")
        };
        out.push(
            Diagnostic::new(
                Code::ExampleMismatch,
                if ex.should_match {
                    format!("`{}` does not match its example call", rule.id)
                } else {
                    format!("`{}` matches its `no_match` example call", rule.id)
                },
            )
            .at(ex.origin.location())
            .label(if ex.should_match {
                "expected to match"
            } else {
                "expected not to match"
            })
            .help(why),
        );
    }
}
