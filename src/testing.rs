//! The policy test runner: every `tests:` case and every rule example, run
//! through the one dispatch path.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::call::Call;
use crate::dispatch::RuleError;
use crate::model::Decision;
use crate::policy::{Origin, Policy};
use crate::registry::Registry;

/// What kind of check a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    /// A `tests:` case.
    Test,
    /// A rule's `examples.match` call.
    ExampleMatch,
    /// A rule's `examples.no_match` call.
    ExampleNoMatch,
}

/// The result of one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The test's name, or `example of RULE`.
    pub name: String,
    /// What kind of check.
    pub kind: CaseKind,
    /// The file.
    pub file: String,
    /// The line.
    pub line: usize,
    /// Whether it passed.
    pub passed: bool,
    /// The expected decision (tests only).
    pub expected_decision: Option<Decision>,
    /// The decision.
    pub actual_decision: Decision,
    /// The expected matched ids (tests that give them).
    pub expected_matched: Option<Vec<String>>,
    /// The matched ids.
    pub actual_matched: Vec<String>,
    /// Why the call was rejected, if it was.
    pub reject_reason: Option<String>,
    /// Rule errors.
    pub errors: Vec<RuleError>,
    /// A sentence saying what went wrong.
    pub failure: Option<String>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Each case.
    pub results: Vec<CaseResult>,
    /// Passed count.
    pub passed: usize,
    /// Failed count.
    pub failed: usize,
    /// Cases not run: they call a tool of an MCP server that is not connected.
    pub skipped: Vec<String>,
    /// Rule ids that no test or example matched.
    pub uncovered: Vec<String>,
    /// Every rule id.
    pub rules: usize,
}

impl Report {
    /// The share of rules matched by at least one case, in percent.
    #[must_use]
    pub fn coverage(&self) -> f64 {
        if self.rules == 0 {
            100.0
        } else {
            100.0 * (self.rules - self.uncovered.len()) as f64 / self.rules as f64
        }
    }
}

fn run_one(
    registry: &Registry,
    call: &Call,
    covered: &mut BTreeSet<String>,
) -> (Decision, Vec<String>, Option<String>, Vec<RuleError>) {
    let ev = registry.evaluate(call);
    let mut ids: Vec<String> = ev.matched.iter().map(|m| m.id.clone()).collect();
    ids.sort();
    ids.dedup();
    covered.extend(ids.iter().cloned());
    (ev.decision, ids, ev.reject_reason, ev.errors)
}

/// `name (file:line)`.
fn place(name: &str, origin: &Origin) -> String {
    format!("{name} ({}:{})", origin.file.name, origin.line())
}

/// Runs every test and example.
#[must_use]
pub fn run(policy: &Policy, registry: &Registry) -> Report {
    let mut covered = BTreeSet::new();
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    // A call to a tool of a declared server is resolved offline from its manifest;
    // one that resolves to nothing (its server is connected and does not list it)
    // is skipped rather than failed.
    let unconnected = |call: &Call| {
        registry.is_mcp_name(&call.tool)
            && matches!(
                registry.lookup(&call.tool, &call.session.agent),
                crate::registry::Lookup::Unknown
            )
    };
    for t in &policy.tests {
        if unconnected(&t.call) {
            skipped.push(place(&t.name, &t.origin));
            continue;
        }
        let (actual, ids, reject_reason, errors) = run_one(registry, &t.call, &mut covered);
        let mut failures = Vec::new();
        if actual != t.decision {
            failures.push(format!("expected `{}`, got `{actual}`", t.decision));
        }
        if let Some(want) = &t.matched {
            let mut w = want.clone();
            w.sort();
            w.dedup();
            if w != ids {
                failures.push(format!(
                    "expected matched [{}], got [{}]",
                    w.join(", "),
                    ids.join(", ")
                ));
            }
        }
        results.push(CaseResult {
            name: t.name.clone(),
            kind: CaseKind::Test,
            file: t.origin.file.name.clone(),
            line: t.origin.line(),
            passed: failures.is_empty(),
            expected_decision: Some(t.decision),
            actual_decision: actual,
            expected_matched: t.matched.clone(),
            actual_matched: ids,
            reject_reason,
            errors,
            failure: (!failures.is_empty()).then(|| failures.join("; ")),
        });
    }
    for rule in policy.all_rules() {
        for ex in &rule.examples {
            if unconnected(&ex.call) {
                skipped.push(place(&format!("example of `{}`", rule.id), &ex.origin));
                continue;
            }
            let (actual, ids, reject_reason, errors) = run_one(registry, &ex.call, &mut covered);
            let hit = ids.contains(&rule.id);
            let passed = hit == ex.should_match;
            results.push(CaseResult {
                name: format!(
                    "example of `{}` ({})",
                    rule.id,
                    if ex.should_match { "match" } else { "no_match" }
                ),
                kind: if ex.should_match {
                    CaseKind::ExampleMatch
                } else {
                    CaseKind::ExampleNoMatch
                },
                file: ex.origin.file.name.clone(),
                line: ex.origin.line(),
                passed,
                expected_decision: None,
                actual_decision: actual,
                expected_matched: None,
                actual_matched: ids,
                reject_reason,
                errors,
                failure: (!passed).then(|| {
                    if ex.should_match {
                        format!("`{}` did not match", rule.id)
                    } else {
                        format!("`{}` matched", rule.id)
                    }
                }),
            });
        }
    }
    let all: Vec<String> = policy.all_rules().map(|r| r.id.clone()).collect();
    let uncovered: Vec<String> = all
        .iter()
        .filter(|id| !covered.contains(*id))
        .cloned()
        .collect();
    let passed = results.iter().filter(|r| r.passed).count();
    Report {
        failed: results.len() - passed,
        passed,
        skipped,
        results,
        uncovered,
        rules: all.len(),
    }
}
