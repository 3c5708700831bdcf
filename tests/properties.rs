//! Properties of the decision (SPEC §3, §4), over small random policies and calls.
//!
//! Policies are generated as YAML text and loaded through `load_sources`, so the
//! loader, the registry and the dispatch path are all under test. Loading is the
//! expensive part (a debug build spends about a millisecond per load), so policies
//! stay small (one or two tools, a handful of rules) and each
//! case evaluates several calls against one load.
#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "a failed setup ends the test"
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use serde_json::{Map, Value, json};
use zero_policy::diagnostic::SourceFile;
use zero_policy::dispatch::{Outcome, Step, relax};
use zero_policy::loader::{Loaded, load_sources};
use zero_policy::policy::{RuleKind, Safety};
use zero_policy::runtime::{Executor, Tool, ToolError, ToolOutput};
use zero_policy::scrub::Scrubber;
use zero_policy::{
    Call, Code, Decision, Evaluation, Permission, Policy, Registry, Scope, Session, Severity,
    SideEffect,
};

const CASES: u32 = 10_000;

fn config() -> Config {
    Config {
        cases: CASES,
        // A failure is reported, not stored: these files are committed as they are.
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..Config::with_cases(CASES)
    }
}

// ------------------------------------------------------------------ conditions

/// A CEL condition over the call, from a small grammar. Some always fail at run
/// time (`Missing`), some fail when the optional argument is absent (`OptEq`).
#[derive(Debug, Clone)]
enum Cond {
    True,
    False,
    NumGt(i8),
    NumEq(i8),
    SContains(&'static str),
    SStarts(&'static str),
    HasOpt,
    OptEq(&'static str),
    Missing,
    Mode(&'static str),
    ToolName(u8),
    ToolPerm(Permission),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

impl Cond {
    /// The CEL text, with parentheses only where precedence needs them (the CEL
    /// parser is the dearest part of a load in a debug build).
    fn cel(&self) -> String {
        match self {
            Cond::True => "true".into(),
            Cond::False => "false".into(),
            Cond::NumGt(k) => format!("args.num > {k}"),
            Cond::NumEq(k) => format!("args.num == {k}"),
            Cond::SContains(c) => format!("args.s.contains(\"{c}\")"),
            Cond::SStarts(c) => format!("args.s.startsWith(\"{c}\")"),
            Cond::HasOpt => "has(args.opt)".into(),
            Cond::OptEq(c) => format!("args.opt == \"{c}\""),
            Cond::Missing => "args.missing_key == \"x\"".into(),
            Cond::Mode(m) => format!("session.mode == \"{m}\""),
            Cond::ToolName(i) => format!("tool.name == \"t{i}\""),
            Cond::ToolPerm(p) => format!("tool.permission == \"{p}\""),
            Cond::Not(a) => match **a {
                Cond::True | Cond::False | Cond::HasOpt => format!("!{}", a.cel()),
                _ => format!("!({})", a.cel()),
            },
            Cond::And(a, b) => format!("{} && {}", a.and_operand(), b.and_operand()),
            Cond::Or(a, b) => format!("{} || {}", a.cel(), b.cel()),
        }
    }

    fn and_operand(&self) -> String {
        match self {
            Cond::Or(..) => format!("({})", self.cel()),
            _ => self.cel(),
        }
    }
}

fn permission() -> impl Strategy<Value = Permission> {
    prop_oneof![
        Just(Permission::Allow),
        Just(Permission::Prompt),
        Just(Permission::Deny)
    ]
}

fn leaf() -> impl Strategy<Value = Cond> {
    prop_oneof![
        Just(Cond::True),
        Just(Cond::False),
        (-2i8..=2).prop_map(Cond::NumGt),
        (-2i8..=2).prop_map(Cond::NumEq),
        prop::sample::select(vec!["a", "b"]).prop_map(Cond::SContains),
        prop::sample::select(vec!["a", "b"]).prop_map(Cond::SStarts),
        Just(Cond::HasOpt),
        prop::sample::select(vec!["a", "b"]).prop_map(Cond::OptEq),
        Just(Cond::Missing),
        prop::sample::select(vec!["ask", "plan"]).prop_map(Cond::Mode),
        (0u8..3).prop_map(Cond::ToolName),
        permission().prop_map(Cond::ToolPerm),
    ]
}

/// A leaf, or one `!`, `&&` or `||` over leaves: deeper trees add little but
/// parse time (the CEL parser is slow in a debug build).
fn cond() -> impl Strategy<Value = Cond> {
    prop_oneof![
        3 => leaf(),
        1 => leaf().prop_map(|a| Cond::Not(Box::new(a))),
        1 => (leaf(), leaf()).prop_map(|(a, b)| Cond::And(Box::new(a), Box::new(b))),
        1 => (leaf(), leaf()).prop_map(|(a, b)| Cond::Or(Box::new(a), Box::new(b))),
    ]
}

// ------------------------------------------------------------------ policies

#[derive(Debug, Clone)]
struct ToolSpec {
    permission: Permission,
    /// Declares `parameters` (else any object is valid).
    typed: bool,
    scope: Scope,
    /// Reject rules: (id, condition).
    reject: Vec<(String, Cond)>,
    /// Which file the tool is written in (for shuffling).
    file: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sandbox(Permission),
    Relax,
}

#[derive(Debug, Clone)]
struct RuleSpec {
    id: String,
    kind: Kind,
    /// `None`: no `tools:` key (every tool); else indices into the tools.
    tools: Option<Vec<usize>>,
    when: Cond,
    file: usize,
}

#[derive(Debug, Clone)]
struct PolicySpec {
    tools: Vec<ToolSpec>,
    rules: Vec<RuleSpec>,
    files: usize,
}

fn scope() -> impl Strategy<Value = Scope> {
    prop::sample::select(Scope::ALL.to_vec())
}

fn tool_spec(files: usize) -> impl Strategy<Value = ToolSpec> {
    (
        permission(),
        prop::bool::weighted(0.3),
        scope(),
        prop::option::weighted(0.25, cond()),
        0..files,
    )
        .prop_map(|(permission, typed, scope, reject, file)| ToolSpec {
            permission,
            typed,
            scope,
            reject: reject.into_iter().map(|c| (String::new(), c)).collect(),
            file,
        })
}

fn rule_spec(files: usize) -> impl Strategy<Value = RuleSpec> {
    (
        prop_oneof![
            Just(Kind::Relax),
            Just(Kind::Sandbox(Permission::Prompt)),
            Just(Kind::Sandbox(Permission::Deny)),
        ],
        // Mostly named tools: a `*` glob costs a regex per load.
        prop::option::weighted(0.85, prop::collection::vec(0usize..3, 1..=2)),
        cond(),
        0..files,
    )
        .prop_map(|(kind, tools, when, file)| RuleSpec {
            id: String::new(),
            kind,
            tools,
            when,
            file,
        })
}

/// A small policy the loader accepts: tool names `t0`…, rule ids `s0` (sandbox),
/// `r1` (relax), `x2` (reject); relax rules never name a `deny` tool.
fn policy_spec(max_files: usize, max_tools: usize) -> impl Strategy<Value = PolicySpec> {
    (1usize..=max_files)
        .prop_flat_map(move |files| {
            (
                prop::collection::vec(tool_spec(files), 1..=max_tools),
                prop::collection::vec(rule_spec(files), 1..=3),
                Just(files),
            )
        })
        .prop_map(|(tools, rules, files)| {
            fix_up(PolicySpec {
                tools,
                rules,
                files,
            })
        })
}

/// Makes a generated policy loadable: ids, tool indices in range, relax rules
/// only over tools that are not `deny`.
fn fix_up(mut spec: PolicySpec) -> PolicySpec {
    let n = spec.tools.len();
    let mut next = 0;
    for t in &mut spec.tools {
        for (id, _) in &mut t.reject {
            *id = format!("x{next}");
            next += 1;
        }
    }
    let denied: Vec<usize> = (0..n)
        .filter(|&i| spec.tools[i].permission == Permission::Deny)
        .collect();
    let open: Vec<usize> = (0..n).filter(|i| !denied.contains(i)).collect();
    let mut rules = Vec::new();
    for mut r in spec.rules {
        if let Some(list) = &mut r.tools {
            for i in list.iter_mut() {
                *i %= n;
            }
            list.sort_unstable();
            list.dedup();
        }
        if r.kind == Kind::Relax && !denied.is_empty() {
            let list = r.tools.clone().unwrap_or_else(|| open.clone());
            let list: Vec<usize> = list.into_iter().filter(|i| !denied.contains(i)).collect();
            if list.is_empty() {
                continue;
            }
            r.tools = Some(list);
        }
        r.id = match r.kind {
            Kind::Relax => format!("r{next}"),
            Kind::Sandbox(_) => format!("s{next}"),
        };
        next += 1;
        rules.push(r);
    }
    spec.rules = rules;
    spec
}

/// Parameters are optional: a tool without them takes any object, and loading
/// them is a large part of the cost of a case.
const PARAMETERS: &str = "    parameters: {type: object, properties: {num: {type: integer}, s: {type: string}, opt: {type: string}}, required: [num, s]}\n";

/// How to write a policy: the order of the files, of the items in each file, and
/// a condition to put in place of a rule's.
#[derive(Default)]
struct Render<'a> {
    /// `file_order[k]` is the file written k-th.
    file_order: Vec<usize>,
    /// A permutation seed for the items within files; 0 keeps the written order.
    seed: u64,
    /// Replaces the condition of the rule with this id.
    replace: Option<(&'a str, &'a str)>,
}

/// A tiny deterministic generator for shuffles (the seed comes from proptest).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = usize::try_from(self.next() % (i as u64 + 1)).unwrap_or(0);
            v.swap(i, j);
        }
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl PolicySpec {
    fn tool_name(i: usize) -> String {
        format!("t{i}")
    }

    fn render(&self, how: &Render<'_>) -> Vec<(String, String)> {
        let mut rng = SplitMix(how.seed);
        let shuffle = how.seed != 0;
        let when = |id: &str, c: &Cond| -> String {
            match how.replace {
                Some((rid, text)) if rid == id => quote(text),
                _ => quote(&c.cel()),
            }
        };
        let order: Vec<usize> = if how.file_order.is_empty() {
            (0..self.files).collect()
        } else {
            how.file_order.clone()
        };
        let mut out = Vec::new();
        for f in order {
            let mut text = String::from("version: 1\n");
            let mut tools: Vec<usize> = (0..self.tools.len())
                .filter(|&i| self.tools[i].file == f)
                .collect();
            let mut rules: Vec<&RuleSpec> = self
                .rules
                .iter()
                .filter(|r| r.file == f && matches!(r.kind, Kind::Sandbox(_)))
                .collect();
            let mut relax: Vec<&RuleSpec> = self
                .rules
                .iter()
                .filter(|r| r.file == f && r.kind == Kind::Relax)
                .collect();
            if shuffle {
                rng.shuffle(&mut tools);
                rng.shuffle(&mut rules);
                rng.shuffle(&mut relax);
            }
            if !tools.is_empty() {
                text.push_str("tools:\n");
            }
            for i in tools {
                let t = &self.tools[i];
                let _ = writeln!(text, "  - name: {}", Self::tool_name(i));
                text.push_str("    description: a generated tool\n");
                let _ = writeln!(text, "    scope: {}", t.scope);
                if t.typed {
                    text.push_str(PARAMETERS);
                }
                let _ = writeln!(
                    text,
                    "    safety: {{side_effect: none, permission: {}, reason: because-t{i}}}",
                    t.permission
                );
                if !t.reject.is_empty() {
                    text.push_str("    reject:\n");
                    let mut rejects: Vec<&(String, Cond)> = t.reject.iter().collect();
                    if shuffle {
                        rng.shuffle(&mut rejects);
                    }
                    for (id, c) in rejects {
                        let _ = writeln!(text, "      - id: {id}");
                        let _ = writeln!(text, "        when: {}", when(id, c));
                        let _ = writeln!(text, "        message: rejected-by-{id}");
                    }
                }
            }
            for (key, list) in [("rules", rules), ("relax", relax)] {
                if list.is_empty() {
                    continue;
                }
                let _ = writeln!(text, "{key}:");
                for r in list {
                    let _ = writeln!(text, "  - id: {}", r.id);
                    if let Some(ts) = &r.tools {
                        let names: Vec<String> = ts.iter().map(|&i| Self::tool_name(i)).collect();
                        let _ = writeln!(text, "    tools: [{}]", names.join(", "));
                    }
                    let _ = writeln!(text, "    when: {}", when(&r.id, &r.when));
                    if let Kind::Sandbox(action) = r.kind {
                        let _ = writeln!(text, "    action: {action}");
                    }
                    let _ = writeln!(text, "    reason: because-{}", r.id);
                }
            }
            out.push((format!("f{f}.yaml"), text));
        }
        out
    }

    /// Every rule id with its kind, reject rules included.
    fn rule_ids(&self) -> Vec<(String, RuleKind)> {
        let mut out: Vec<(String, RuleKind)> = self
            .tools
            .iter()
            .flat_map(|t| {
                t.reject
                    .iter()
                    .map(|(id, _)| (id.clone(), RuleKind::Reject))
            })
            .collect();
        out.extend(self.rules.iter().map(|r| {
            let k = match r.kind {
                Kind::Relax => RuleKind::Relax,
                Kind::Sandbox(_) => RuleKind::Sandbox,
            };
            (r.id.clone(), k)
        }));
        out
    }
}

fn load(files: &[(String, String)]) -> Loaded {
    load_sources(
        files
            .iter()
            .map(|(name, text)| SourceFile::new(Path::new(name), text.clone()))
            .collect(),
    )
}

fn errors_of(loaded: &Loaded) -> Vec<String> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect()
}

fn policy(files: &[(String, String)]) -> Policy {
    let loaded = load(files);
    let errors = errors_of(&loaded);
    assert_eq!(errors, Vec::<String>::new(), "{files:#?}");
    loaded.policy.expect("no errors, so a policy")
}

/// The built-in scrubber is shared; `Registry::new` would compile it per case.
fn registry(policy: &Policy) -> Registry {
    Registry::with_scrubber(policy, Scrubber::builtin()).expect("registry")
}

// ------------------------------------------------------------------ calls

#[derive(Debug, Clone)]
struct CallSpec {
    /// Picks the tool: 7 is an unknown tool, else an index modulo the tools.
    tool: usize,
    num: Option<Value>,
    s: Option<&'static str>,
    opt: Option<&'static str>,
    mode: &'static str,
    all_scopes: bool,
    scopes: Vec<Scope>,
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (
        0usize..8,
        prop::option::weighted(
            0.95,
            prop_oneof![
                10 => (-3i64..=3).prop_map(Value::from),
                1 => Just(json!("3")),
            ],
        ),
        prop::option::weighted(
            0.95,
            prop::sample::select(vec!["", "a", "ab", "ba", "b", "x"]),
        ),
        prop::option::of(prop::sample::select(vec!["a", "b", "c"])),
        prop::sample::select(vec!["ask", "plan", "auto"]),
        prop::bool::weighted(0.9),
        prop::sample::subsequence(Scope::ALL.to_vec(), 0..=4),
    )
        .prop_map(|(tool, num, s, opt, mode, all_scopes, scopes)| CallSpec {
            tool,
            num,
            s,
            opt,
            mode,
            all_scopes,
            scopes,
        })
}

impl CallSpec {
    fn call(&self, tool: &str, labels: &[(&str, &str)]) -> Call {
        let mut args = Map::new();
        if let Some(n) = &self.num {
            args.insert("num".into(), n.clone());
        }
        if let Some(s) = self.s {
            args.insert("s".into(), s.into());
        }
        if let Some(o) = self.opt {
            args.insert("opt".into(), o.into());
        }
        Call {
            tool: tool.into(),
            args: Value::Object(args),
            session: Session {
                mode: self.mode.into(),
                workspace: "/w".into(),
                scopes: if self.all_scopes {
                    Scope::ALL.to_vec()
                } else {
                    self.scopes.clone()
                },
                labels: labels
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect::<BTreeMap<_, _>>(),
                agent: String::new(),
            },
            confined: false,
        }
    }

    fn tool_index(&self, tools: usize) -> Option<usize> {
        (self.tool != 7).then_some(self.tool % tools)
    }

    fn tool_name(&self, tools: usize) -> String {
        self.tool_index(tools)
            .map_or_else(|| "t9".into(), PolicySpec::tool_name)
    }
}

fn calls() -> impl Strategy<Value = Vec<CallSpec>> {
    prop::collection::vec(call_spec(), 2)
}

/// The decision's facts, without the sentences and lines (which move with order).
#[derive(Debug, PartialEq)]
struct Facts {
    decision: Decision,
    static_permission: Option<Permission>,
    effective_permission: Option<Permission>,
    reason: Option<String>,
    matched: Vec<(String, RuleKind, Decision, String)>,
    errors: Vec<(String, RuleKind, String, &'static str)>,
}

fn facts(ev: &Evaluation) -> Facts {
    Facts {
        decision: ev.decision,
        static_permission: ev.static_permission,
        effective_permission: ev.effective_permission,
        reason: ev.reason.clone(),
        matched: ev
            .matched
            .iter()
            .map(|m| (m.id.clone(), m.kind, m.action, m.file.clone()))
            .collect(),
        errors: ev
            .errors
            .iter()
            .map(|e| (e.id.clone(), e.kind, e.message.clone(), e.counted_as))
            .collect(),
    }
}

fn reached(ev: &Evaluation, step: Step) -> bool {
    ev.steps
        .iter()
        .any(|s| s.step == step && s.outcome != Outcome::Skipped)
}

// ------------------------------------------------------------------ (a) relax never tightens

proptest! {
    #![proptest_config(config())]

    /// The relax function never makes a permission stricter and never moves `deny`.
    #[test]
    fn relax_function_never_tightens(p in permission(), matched in any::<bool>()) {
        let effective = relax(p, matched);
        prop_assert!(effective <= p);
        let want = match (p, matched) {
            (Permission::Prompt, true) => Permission::Allow,
            (p, _) => p,
        };
        prop_assert_eq!(effective, want);
    }

    /// Over random policies and calls: effective ≤ static, effective = static
    /// unless static is `prompt`, and the decision is never below the effective
    /// permission.
    #[test]
    fn relax_never_tightens_and_sandbox_never_loosens(spec in policy_spec(1, 2), calls in calls()) {
        let reg = registry(&policy(&spec.render(&Render::default())));
        for c in &calls {
            let name = c.tool_name(spec.tools.len());
            let ev = reg.evaluate(&c.call(&name, &[]));
            if ev.decision == Decision::Reject {
                continue;
            }
            let declared = spec.tools[c.tool_index(spec.tools.len()).expect("known tool")].permission;
            let (Some(st), Some(eff)) = (ev.static_permission, ev.effective_permission) else {
                panic!("a decided call has both permissions: {ev:#?}");
            };
            prop_assert_eq!(st, declared);
            prop_assert!(eff <= st, "{:#?}", ev);
            if st != Permission::Prompt {
                prop_assert_eq!(eff, st);
            }
            prop_assert!(Decision::from(eff) <= ev.decision, "{:#?}", ev);
            prop_assert!(ev.decision != Decision::Reject);
            // A relax rule shows as matched exactly when it relaxed the call.
            let relaxed = ev.matched.iter().any(|m| m.kind == RuleKind::Relax);
            prop_assert_eq!(relaxed, st == Permission::Prompt && eff == Permission::Allow);
        }
    }
}

// ------------------------------------------------------------------ (b) deny never relaxes

/// A `deny` tool defined in code, registered after loading: the loader never saw
/// it, so only the registry's run-time check keeps relax rules off it.
struct DenyTool {
    side_effect: SideEffect,
}

impl Executor for DenyTool {
    fn execute(&self, _call: &Call) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("a deny tool never runs".into()))
    }
}

impl Tool for DenyTool {
    fn name(&self) -> &str {
        "t_deny"
    }
    fn description(&self) -> &str {
        "never runs"
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"num": {"type": "integer"}, "s": {"type": "string"}, "opt": {"type": "string"}},
            "required": ["num", "s"],
        })
    }
    fn safety(&self) -> Safety {
        Safety {
            side_effect: self.side_effect,
            permission: Permission::Deny,
            reason: Some("denied in code".into()),
        }
    }
}

fn side_effect() -> impl Strategy<Value = SideEffect> {
    prop::sample::select(vec![
        SideEffect::None,
        SideEffect::Read,
        SideEffect::Write,
        SideEffect::Shell,
        SideEffect::Network,
        SideEffect::OutOfWorkspace,
    ])
}

/// Policies for (b), kept small: one or two manifest tools, at most one other
/// rule, and one or two relax rules. Either every relax rule covers every tool
/// (no `tools:`) and no manifest tool is `deny` (`wildcard`), or relax rules name
/// tools and the first manifest tool is `deny`.
fn deny_spec() -> impl Strategy<Value = (PolicySpec, bool)> {
    (
        any::<bool>(),
        prop::collection::vec(tool_spec(1), 1..=2),
        prop::collection::vec(rule_spec(1), 0..=1),
        prop::collection::vec(cond(), 1..=2),
    )
        .prop_map(|(wildcard, tools, mut rules, relax_conds)| {
            for c in relax_conds {
                rules.push(RuleSpec {
                    id: String::new(),
                    kind: Kind::Relax,
                    tools: None,
                    when: c,
                    file: 0,
                });
            }
            let mut spec = PolicySpec {
                tools,
                rules,
                files: 1,
            };
            if wildcard {
                for t in &mut spec.tools {
                    if t.permission == Permission::Deny {
                        t.permission = Permission::Prompt;
                    }
                }
                for r in &mut spec.rules {
                    if r.kind == Kind::Relax {
                        r.tools = None;
                    }
                }
                // The most tempting rule of all, in place of the first relax rule's.
                if let Some(r) = spec.rules.iter_mut().find(|r| r.kind == Kind::Relax) {
                    r.when = Cond::True;
                }
            } else {
                spec.tools[0].permission = Permission::Deny;
            }
            (fix_up(spec), wildcard)
        })
}

proptest! {
    #![proptest_config(config())]

    /// A tool whose static permission is `deny` gets `deny` or `reject`, whatever
    /// relax rules exist, for manifest tools and tools registered in code alike.
    #[test]
    fn deny_never_relaxes(
        (spec, wildcard) in deny_spec(),
        side_effect in side_effect(),
        calls in calls(),
        poison in prop::bool::weighted(0.05),
    ) {
        let files = spec.render(&Render::default());
        let relax_ids: Vec<String> = spec
            .rules
            .iter()
            .filter(|r| r.kind == Kind::Relax)
            .map(|r| r.id.clone())
            .collect();
        if wildcard && poison {
            // The loader refuses relax rules that match a `deny` manifest tool.
            let mut files = files;
            files.push((
                "deny.yaml".into(),
                "version: 1\ntools:\n  - name: t_manifest_deny\n    description: d\n    scope: write\n    safety: {side_effect: write, permission: deny, reason: no}\n".into(),
            ));
            let loaded = load(&files);
            prop_assert!(loaded.policy.is_none());
            let mut found: Vec<String> = loaded
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| {
                    prop_assert_eq!(d.code, Code::RelaxOnDeny, "{}", d.message);
                    Ok(d.message.clone())
                })
                .collect::<Result<_, TestCaseError>>()?;
            found.sort();
            let mut want: Vec<String> = relax_ids
                .iter()
                .map(|id| format!("relax rule `{id}` matches `t_manifest_deny` whose permission is `deny`"))
                .collect();
            want.sort();
            prop_assert_eq!(found, want);
            return Ok(());
        }
        let mut reg = registry(&policy(&files));
        reg.register_tool(Arc::new(DenyTool { side_effect })).expect("registers");
        let skipped: Vec<String> = reg
            .get("t_deny")
            .expect("registered")
            .skipped_relax
            .iter()
            .map(|(id, _)| id.clone())
            .collect();
        if wildcard {
            // Every relax rule covers every tool, so each was skipped for `t_deny`.
            let mut skipped = skipped;
            skipped.sort();
            let mut want = relax_ids.clone();
            want.sort();
            prop_assert_eq!(skipped, want);
        }
        let denied: Vec<String> = (0..spec.tools.len())
            .filter(|&i| spec.tools[i].permission == Permission::Deny)
            .map(PolicySpec::tool_name)
            .chain(["t_deny".to_string()])
            .collect();
        for c in &calls {
            for name in &denied {
                let ev = reg.evaluate(&c.call(name, &[]));
                prop_assert!(
                    matches!(ev.decision, Decision::Deny | Decision::Reject),
                    "{:#?}", ev
                );
                if ev.decision == Decision::Deny {
                    prop_assert_eq!(ev.static_permission, Some(Permission::Deny));
                    prop_assert_eq!(ev.effective_permission, Some(Permission::Deny));
                }
                prop_assert!(ev.matched.iter().all(|m| m.kind != RuleKind::Relax), "{:#?}", ev);
                prop_assert!(ev.errors.iter().all(|e| e.kind != RuleKind::Relax), "{:#?}", ev);
            }
        }
    }
}

// ------------------------------------------------------------------ (c) a rule error never loosens

/// The condition put in place of the chosen rule's. Through the session label
/// `v` (which no other rule reads) it is `true`, `false`, or an expression that
/// fails at run time, so one load serves all three versions with the same args.
const SWITCH: &str =
    r#"session.labels.v == "t" || (session.labels.v == "e" && args.missing_key == "x")"#;

proptest! {
    #![proptest_config(config())]

    /// SPEC §3: a failing sandbox or reject rule counts as matched, a failing
    /// relax rule as not matched. Each is the stricter of the two outcomes, so
    /// the decision with a failing rule is exactly the strictest of the decisions
    /// with the rule `true` and with it `false` (never looser than either), and
    /// everything else equals the version it is counted as.
    #[test]
    fn a_rule_error_never_loosens(spec in policy_spec(1, 2), pick in any::<Index>(), calls in calls()) {
        let mut spec = spec;
        if spec.rule_ids().is_empty() {
            // Every relax rule named only `deny` tools and was dropped.
            spec.rules.push(RuleSpec {
                id: "s99".into(),
                kind: Kind::Sandbox(Permission::Prompt),
                tools: None,
                when: Cond::True,
                file: 0,
            });
        }
        let ids = spec.rule_ids();
        let (rid, kind) = ids[pick.index(ids.len())].clone();
        let files = spec.render(&Render { replace: Some((&rid, SWITCH)), ..Render::default() });
        let reg = registry(&policy(&files));
        for c in &calls {
            let name = c.tool_name(spec.tools.len());
            let t = reg.evaluate(&c.call(&name, &[("v", "t")]));
            let f = reg.evaluate(&c.call(&name, &[("v", "f")]));
            let e = reg.evaluate(&c.call(&name, &[("v", "e")]));
            let strictest = t.decision.max(f.decision);
            prop_assert_eq!(e.decision, strictest, "true {:#?}\nfalse {:#?}\nerror {:#?}", t, f, e);
            // The direction of each kind: matching tightens sandbox and reject rules
            // and loosens relax rules.
            match kind {
                RuleKind::Relax => prop_assert!(t.decision <= f.decision),
                RuleKind::Sandbox | RuleKind::Reject => prop_assert!(t.decision >= f.decision),
            }
            let (counted, like) = match kind {
                RuleKind::Relax => ("not matched", &f),
                RuleKind::Sandbox | RuleKind::Reject => ("matched", &t),
            };
            // Was the rule evaluated at all?
            let evaluated = match kind {
                RuleKind::Reject => reached(&e, Step::Reject),
                RuleKind::Relax => {
                    reached(&e, Step::Relax) && e.static_permission == Some(Permission::Prompt)
                }
                RuleKind::Sandbox => reached(&e, Step::Sandbox),
            } && reg.get(&name).is_some_and(|tool| tool.rules(kind).iter().any(|r| r.id == rid));
            let mut want = facts(like);
            if evaluated {
                want.errors.push((rid.clone(), kind, "no such key `missing_key`".into(), counted));
                want.errors.sort();
            }
            let mut got = facts(&e);
            got.errors.sort();
            prop_assert_eq!(got, want);
            prop_assert_eq!(&e.reject_reason, &like.reject_reason);
        }
    }
}

// ------------------------------------------------------------------ reject rules fail closed

/// One policy, loaded once: `guarded` has a reject rule that always fails at run
/// time and a sandbox rule that fails when `opt` is absent; `open` is the same
/// tool without the reject rule.
const FAIL_CLOSED: &str = r#"version: 1
tools:
  - name: guarded
    description: d
    scope: shell
    parameters:
      type: object
      properties:
        num: {type: integer}
        s: {type: string}
        opt: {type: string}
      required: [num, s]
    safety: {side_effect: shell, permission: prompt, reason: asks}
    reject:
      - id: never-ok
        when: 'args.num > 100 && args.missing_key == "x"'
        message: never matches unless it fails
      - id: always-fails
        when: 'args.missing_key == "x"'
        message: fails closed
  - name: open
    description: d
    scope: shell
    parameters:
      type: object
      properties:
        num: {type: integer}
        s: {type: string}
        opt: {type: string}
      required: [num, s]
    safety: {side_effect: shell, permission: prompt, reason: asks}
rules:
  - id: opt-is-a
    when: 'args.opt == "a"'
    action: deny
    reason: opt a
relax:
  - id: relax-by-opt
    when: 'args.opt == "b"'
    reason: opt b
"#;

proptest! {
    #![proptest_config(config())]

    /// A reject rule whose expression fails rejects every call that reaches it;
    /// an absent optional argument makes the sandbox rule match (deny) and the
    /// relax rule not match (prompt stays).
    #[test]
    fn failing_rules_fail_closed(c in call_spec()) {
        thread_local! {
            static REG: Registry = registry(&policy(&[("fail.yaml".to_string(), FAIL_CLOSED.to_string())]));
        }
        REG.with(|reg| {
            let g = reg.evaluate(&c.call("guarded", &[]));
            if reached(&g, Step::Reject) {
                prop_assert_eq!(g.decision, Decision::Reject);
                prop_assert_eq!(
                    g.reject_reason.as_deref(),
                    Some("reject rule `always-fails`: fails closed")
                );
                let hit: Vec<&str> = g.matched.iter().map(|m| m.id.as_str()).collect();
                prop_assert_eq!(hit, vec!["always-fails"]);
                let errs: Vec<(&str, &str)> =
                    g.errors.iter().map(|e| (e.id.as_str(), e.counted_as)).collect();
                // `never-ok` fails only when `num > 100` (never generated).
                prop_assert_eq!(errs, vec![("always-fails", "matched")]);
            } else {
                prop_assert_eq!(g.decision, Decision::Reject);
            }
            let o = reg.evaluate(&c.call("open", &[]));
            if o.decision != Decision::Reject {
                let want = match c.opt {
                    None | Some("a") => Decision::Deny,
                    Some("b") => Decision::Allow,
                    Some(_) => Decision::Prompt,
                };
                prop_assert_eq!(o.decision, want, "{:#?}", o);
                let errs: Vec<(&str, &str)> =
                    o.errors.iter().map(|e| (e.id.as_str(), e.counted_as)).collect();
                let want_errs = if c.opt.is_none() {
                    vec![("opt-is-a", "matched"), ("relax-by-opt", "not matched")]
                } else {
                    vec![]
                };
                prop_assert_eq!(errs, want_errs);
            }
            Ok(())
        })?;
    }
}

// ------------------------------------------------------------------ (d) order never matters

/// The order property is only as good as its shuffles: two seeds do give
/// different texts, and the same seed the same text.
#[test]
fn shuffled_renders_differ() {
    let tool = |file| ToolSpec {
        permission: Permission::Prompt,
        typed: false,
        scope: Scope::Write,
        reject: vec![],
        file,
    };
    let rule = |id: &str, kind, file| RuleSpec {
        id: id.into(),
        kind,
        tools: None,
        when: Cond::True,
        file,
    };
    let spec = PolicySpec {
        tools: vec![tool(0), tool(1), tool(1)],
        rules: vec![
            rule("s0", Kind::Sandbox(Permission::Deny), 0),
            rule("s1", Kind::Sandbox(Permission::Prompt), 0),
            rule("s2", Kind::Sandbox(Permission::Deny), 1),
            rule("r3", Kind::Relax, 0),
            rule("r4", Kind::Relax, 0),
        ],
        files: 2,
    };
    let render = |seed| {
        spec.render(&Render {
            file_order: file_order(2, seed),
            seed,
            ..Render::default()
        })
    };
    let texts: std::collections::BTreeSet<Vec<(String, String)>> = (1..=20).map(render).collect();
    assert!(texts.len() > 5, "only {} distinct orders", texts.len());
    assert_eq!(render(7), render(7));
    let files: std::collections::BTreeSet<Vec<String>> = (1..=20)
        .map(|seed| render(seed).into_iter().map(|(name, _)| name).collect())
        .collect();
    assert_eq!(files.len(), 2, "both file orders occur");
}

fn file_order(files: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..files).collect();
    SplitMix(seed ^ 0x5151).shuffle(&mut v);
    v
}

proptest! {
    #![proptest_config(config())]

    /// Writing the same policy with its files, tools and rules in another order
    /// changes no decision, permission, matched rule, reason or rule error.
    #[test]
    fn order_never_changes_the_decision(
        spec in policy_spec(3, 2),
        seeds in (1u64.., 1u64..),
        calls in calls(),
    ) {
        let a = spec.render(&Render { file_order: file_order(spec.files, seeds.0), seed: seeds.0, ..Render::default() });
        let b = spec.render(&Render { file_order: file_order(spec.files, seeds.1), seed: seeds.1, ..Render::default() });
        let (ra, rb) = (registry(&policy(&a)), registry(&policy(&b)));
        for c in &calls {
            let name = c.tool_name(spec.tools.len());
            let call = c.call(&name, &[]);
            let (ea, eb) = (ra.evaluate(&call), rb.evaluate(&call));
            prop_assert_eq!(facts(&ea), facts(&eb), "{:#?}\n{:#?}", a, b);
            // Each tool has at most one reject rule here, so the rejection text is
            // order-free too; an unknown tool's "did you mean" may pick any of
            // several equally close names, so it is left out.
            if c.tool_index(spec.tools.len()).is_some() {
                prop_assert_eq!(&ea.reject_reason, &eb.reject_reason);
            }
        }
    }
}

// ------------------------------------------------------------------ tool-name globs

proptest! {
    #![proptest_config(Config { cases: 4_000, ..config() })]

    /// A `tools:` glob is refused exactly where globset refuses it, and
    /// matches a name exactly where globset's matcher does (most patterns
    /// are matched without globset, and only some are parsed by it).
    #[test]
    fn tool_name_globs_are_globsets(
        pattern in "[ab*?/\\[\\]{},\\\\!._é\n-]{0,7}",
        names in prop::collection::vec("[ab/._é\n*?-]{0,6}", 8),
    ) {
        let ours = zero_policy::policy::NameGlobs::new([pattern.as_str()]);
        let theirs = globset::Glob::new(&pattern);
        prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "`{}`", pattern.escape_debug());
        if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
            let theirs = theirs.compile_matcher();
            for name in &names {
                prop_assert_eq!(
                    ours.is_match(name),
                    theirs.is_match(name),
                    "`{}` against `{}`", pattern.escape_debug(), name.escape_debug()
                );
            }
        }
    }
}

// ------------------------------------------------------------------ files of tests only

/// Pieces of documents, each whole lines: the ones `holds_only_tests` takes,
/// ones that look like them, ones that continue a scalar at column 0, and
/// blocks that add a rule, a relax rule, a tool, a list, an agent or settings.
const DOC_PIECES: &[&str] = &[
    "version: 1",
    "version: 1 # the format",
    "version: 2",
    "version: 1\r",
    "tests:",
    "tests: # the tests",
    "tests: []",
    "tests:\n  - name: a\n    call: {tool: t, args: {}}\n    expect: {decision: prompt}",
    "tests:\n- name: b\n  call: {\"tool\": \"t\",\n    \"args\": {}}\n  expect:\n    decision: deny",
    "- name: c\n  call: {tool: t}\n  expect: {decision: allow}",
    "- {name: d, call: {tool: t}, expect: {decision: deny}}",
    "-",
    "-name: a",
    "  - name: e\n    call: {tool: t}\n    expect: {decision: deny}",
    "---",
    "...",
    "%YAML 1.2",
    "\t- name: f",
    "# a comment",
    "",
    "   ",
    "rules:\n  - id: r\n    description: d\n    tools: [\"*\"]\n    when: \"true\"\n    action: deny",
    "rules:\n- id: r2\n  description: d\n  tools: [\"*\"]\n  when: \"true\"\n  action: prompt",
    "rules: [{id: q, description: d, tools: [\"*\"], when: \"true\", action: deny}]",
    "- id: r3\n  description: d\n  tools: [\"*\"]\n  when: \"true\"\n  action: deny",
    "relax:\n  - id: x\n    description: d\n    tools: [\"*\"]\n    when: \"true\"",
    "tools:\n  - name: t\n    description: a tool\n    parameters: {type: object}\n    safety: {permission: prompt, side_effect: read}",
    "tools:\n- name: u\n  description: a tool\n  safety: {permission: allow, side_effect: none}",
    "lists:\n  l: [a]",
    "agent: codex",
    "settings:\n  audit: {enabled: false}",
    "\"rules\": []",
    "? rules\n: []",
    "{version: 1, rules: []}",
    "tests: \"a\nrules: []\"",
    "a\"",
    "\u{feff}version: 1",
    // A lone carriage return, and the other line breaks of YAML 1.1, end a line too.
    "- a\rrules: [{id: q, description: d, tools: [\"*\"], when: \"true\", action: deny}]",
    "  - b\rlists: {l: [a]}",
    "- c\u{85}lists: {l: [a]}",
    "- d\u{2028}lists: {l: [a]}",
    "- e\u{2029}agent: codex",
];

proptest! {
    #![proptest_config(Config { cases: 3_000, ..config() })]

    /// A document `holds_only_tests` calls so has no top-level key but
    /// `version` and `tests`, and a full load of it either fails or adds no
    /// tool, server, rule, list or command. (A load that decides calls does
    /// not read it.)
    #[test]
    fn a_file_said_to_hold_only_tests_holds_nothing_else(
        pieces in prop::collection::vec(prop::sample::select(DOC_PIECES), 0..7),
        headed in any::<bool>(),
    ) {
        // Half the documents start as a tests file does, so that what follows is judged.
        let head = if headed { "version: 1\ntests:\n" } else { "" };
        let text = format!("{head}{}", pieces.join("\n"));
        if zero_policy::loader::holds_only_tests(&text) {
            // Read as any YAML: a mapping has no key but these two.
            if let Ok(Value::Object(map)) = serde_saphyr::from_str::<Value>(&text) {
                prop_assert!(
                    map.keys().all(|k| k == "version" || k == "tests"),
                    "{}", text.escape_debug()
                );
            }
            // And loaded, it adds nothing.
            let loaded = load_sources(vec![SourceFile::new(Path::new("t.yaml"), text.clone())]);
            if let Some(p) = loaded.policy {
                prop_assert!(
                    p.tools.is_empty() && p.servers.is_empty() && p.rules.is_empty()
                        && p.lists.is_empty() && p.commands.is_empty(),
                    "{}", text.escape_debug()
                );
            }
        }
    }
}

/// Pieces of an agent's manifest, and of what must not pass for one.
const AGENT_PIECES: &[&str] = &[
    "agent: codex",
    "agent: codex # its tools",
    "agent: cursor",
    "agent: \"codex\"",
    "agent: null",
    "agent: Null",
    "agent: ~",
    "agent: true",
    "agent: 12",
    "agent: .inf",
    "agent:\n  codex",
    "agent: co\n  dex",
    "agent: [codex]",
    "agent: codex\r  x",
    "servers:\n  - name: s\n    command: [echo]",
];

proptest! {
    #![proptest_config(Config { cases: 3_000, ..config() })]

    /// A document `holds_only_tools_of` gives an agent has no top-level key
    /// but `version`, `agent` and `tools`, its `agent` is that name, and a
    /// full load of it either fails or adds only that agent's tools.
    #[test]
    fn a_file_said_to_hold_one_agents_tools_holds_nothing_else(
        pieces in prop::collection::vec(
            prop_oneof![prop::sample::select(DOC_PIECES), prop::sample::select(AGENT_PIECES)],
            0..7,
        ),
        headed in any::<bool>(),
    ) {
        // Half the documents start as an agent's manifest does.
        let head = if headed { "version: 1\nagent: gemini-cli\ntools:\n" } else { "" };
        let text = format!("{head}{}", pieces.join("\n"));
        if let Some(agent) = zero_policy::loader::holds_only_tools_of(&text) {
            if let Ok(Value::Object(map)) = serde_saphyr::from_str::<Value>(&text) {
                prop_assert!(
                    map.keys().all(|k| ["version", "agent", "tools"].contains(&k.as_str())),
                    "{}", text.escape_debug()
                );
                prop_assert_eq!(map.get("agent"), Some(&Value::String(agent.to_string())));
            }
            let loaded = load_sources(vec![SourceFile::new(Path::new("t.yaml"), text.clone())]);
            if let Some(p) = loaded.policy {
                prop_assert!(
                    p.tools.iter().all(|t| t.agent.as_deref() == Some(agent))
                        && p.servers.is_empty() && p.rules.is_empty()
                        && p.lists.is_empty() && p.commands.is_empty() && p.tests.is_empty(),
                    "{}", text.escape_debug()
                );
            }
        }
    }
}

/// The shipped tests file is the kind a deciding load skips, the policy is not,
/// and the shipped tests decide the same against a registry loaded to decide
/// (tests skipped, schemas compiled when called) as against a full one.
#[test]
fn a_load_that_decides_skips_tests_and_decides_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect("shipped file");
    assert!(zero_policy::loader::holds_only_tests(&read(
        "policies/default.test.yaml"
    )));
    assert!(!zero_policy::loader::holds_only_tests(&read(
        "policies/default.yaml"
    )));
    for m in ["claude-code", "codex", "zero-core", "mcp-servers"] {
        assert!(!zero_policy::loader::holds_only_tests(&read(&format!(
            "manifests/{m}.yaml"
        ))));
    }
    let paths = [root.join("policies"), root.join("manifests")];
    let full = zero_policy::loader::load_paths(&paths).expect("readable");
    let full = full.policy.expect("the shipped files load");
    let decide = zero_policy::loader::load_paths_for(&paths, zero_policy::loader::Purpose::Decide)
        .expect("readable");
    assert_eq!(errors_of(&decide), Vec::<String>::new());
    let decide = decide.policy.expect("the shipped files load to decide");
    assert!(decide.tests.is_empty());
    assert!(full.tests.len() > 100, "{}", full.tests.len());
    assert_eq!(full.rules.len(), decide.rules.len());
    assert_eq!(full.tools.len(), decide.tools.len());
    let (a, b) = (registry(&full), registry(&decide));
    let ids = |e: &Evaluation| e.matched.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    for t in &full.tests {
        let (ea, eb) = (a.evaluate(&t.call), b.evaluate(&t.call));
        assert_eq!(ea.decision, eb.decision, "{}", t.name);
        assert_eq!(ids(&ea), ids(&eb), "{}", t.name);
    }
    // A hook's load skips the other agents' manifests, and nothing else: the
    // calls made for its agent, or for none, decide the same.
    for m in ["codex", "copilot", "cursor", "gemini-cli"] {
        assert_eq!(
            zero_policy::loader::holds_only_tools_of(&read(&format!("manifests/{m}.yaml"))),
            Some(m)
        );
    }
    for m in ["zero-core", "mcp-servers"] {
        let text = read(&format!("manifests/{m}.yaml"));
        assert_eq!(zero_policy::loader::holds_only_tools_of(&text), None, "{m}");
    }
    let hook = zero_policy::loader::load_paths_for(
        &paths,
        zero_policy::loader::Purpose::DecideFor("claude-code"),
    )
    .expect("readable")
    .policy
    .expect("the shipped files load for a hook");
    let kept = |p: &zero_policy::Policy| {
        p.tools
            .iter()
            .filter(|t| t.agent.as_deref().is_none_or(|a| a == "claude-code"))
            .count()
    };
    assert_eq!(hook.tools.len(), kept(&full));
    assert!(hook.tools.len() < full.tools.len());
    assert_eq!(hook.rules.len(), full.rules.len());
    let c = registry(&hook);
    let mut compared = 0;
    for t in &full.tests {
        if !matches!(t.call.session.agent.as_str(), "" | "claude-code") {
            continue;
        }
        compared += 1;
        let (ea, ec) = (a.evaluate(&t.call), c.evaluate(&t.call));
        assert_eq!(ea.decision, ec.decision, "{}", t.name);
        assert_eq!(ids(&ea), ids(&ec), "{}", t.name);
    }
    assert!(compared > 50, "{compared}");
}
