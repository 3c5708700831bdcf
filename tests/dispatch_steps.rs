//! The dispatch path (SPEC §4), one step at a time, on policies written inline,
//! and the runtime half: `register_tool`, `attach_executor`, `dispatch`, approvers
//! and the secret scrubber.
#![expect(clippy::expect_used, reason = "a failed setup ends the test")]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use zero_policy::diagnostic::SourceFile;
use zero_policy::dispatch::{Approver, MatchedRule, Outcome, RuleError, Step};
use zero_policy::loader::{Loaded, load_sources};
use zero_policy::policy::{RuleKind, Safety};
use zero_policy::registry::{RegisteredTool, RegistryError};
use zero_policy::runtime::{AsyncExecutor, BoxFuture, Executor, Tool, ToolError, ToolOutput};
use zero_policy::{
    Call, Code, Decision, Evaluation, Permission, Policy, Registry, Scope, Session, Severity,
    SideEffect,
};

// ------------------------------------------------------------------ the policy

const FILE: &str = "policy.yaml";

/// One file holding every tool and rule the step tests use. Lines matter:
/// `matched` entries are checked against them with [`line_of`].
const POLICY: &str = r#"version: 1
tools:
  - name: bash
    description: Run a shell command in the workspace.
    scope: shell
    parameters:
      type: object
      properties:
        command: {type: string}
        timeout_ms: {type: integer, minimum: 1}
      required: [command]
      additionalProperties: false
    safety: {side_effect: shell, permission: prompt, reason: runs arbitrary commands}
    reject:
      - id: no-fork-bomb
        when: 'args.command.contains(":(){ :|:& };:")'
        message: refusing a fork bomb
      - id: probe-timeout
        when: 'args.command == "probe" && args.timeout_ms > 0'
        message: probes take no timeout
  - name: read_file
    description: Read a file.
    scope: read_only
    parameters:
      type: object
      properties:
        path: {type: string}
        options:
          type: object
          properties:
            limit: {type: integer}
      required: [path]
    safety: {side_effect: read, permission: allow}
  - name: write_file
    description: Write a file.
    scope: write
    parameters:
      type: object
      properties:
        path: {type: string}
        content: {type: string}
      required: [path, content]
    safety: {side_effect: write, permission: prompt, reason: changes files}
  - name: fetch
    description: Fetch a URL.
    scope: network
    parameters:
      type: object
      properties:
        url: {type: string}
    safety: {side_effect: network, permission: prompt, reason: reaches the network}
  - name: rm_rf
    description: Delete a tree.
    scope: write
    parameters: {type: object}
    safety: {side_effect: write, permission: deny, reason: never delete trees}
rules:
  - id: no-dotenv
    tools: [read_file, write_file]
    when: 'glob("**/.env*", args.path)'
    action: deny
    reason: .env files hold credentials
  - id: outside-workspace
    tools: [read_file, write_file]
    when: '!path_under(args.path, session.workspace)'
    action: prompt
    reason: the path is outside the workspace
  - id: plan-mode-read-only
    when: 'session.mode == "plan" && tool.scope != "read_only"'
    action: deny
    reason: plan mode only reads
  - id: plain-http
    tools: [fetch]
    when: 'args.url.startsWith("http://")'
    action: deny
    reason: plain http leaks what it sends
  - id: ci-cannot-ask
    when: 'session.mode == "ci" && tool.permission == "prompt"'
    action: deny
    reason: nobody answers prompts in ci
  - id: offline-no-fetch
    when: 'tool.name == "fetch" && has(session.labels.offline)'
    action: deny
    reason: the session is offline
  - id: interns-ask
    tools: [read_file]
    when: 'has(session.labels.team) && session.labels.team == "intern"'
    action: prompt
    reason: interns ask before reading
relax:
  - id: scratch-writes
    tools: [write_file, read_file]
    when: 'path_under(args.path, session.workspace + "/scratch")'
    reason: the scratch folder is disposable
  - id: docs-fetch
    tools: [fetch]
    when: 'args.url.startsWith("https://docs.rs/")'
    reason: documentation is safe to read
  - id: ls-is-fine
    tools: ["b*"]
    when: 'args.command == "ls"'
    reason: listing is harmless
"#;

/// The 1-based line of the only line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "`{needle}` should be on exactly one line");
    hits[0]
}

fn load(files: &[(&str, &str)]) -> Loaded {
    load_sources(
        files
            .iter()
            .map(|(name, text)| SourceFile::new(Path::new(name), (*text).to_string()))
            .collect(),
    )
}

fn policy_of(files: &[(&str, &str)]) -> Policy {
    let loaded = load(files);
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    assert_eq!(errors, Vec::<String>::new(), "the policy should load");
    loaded.policy.expect("no errors, so a policy")
}

fn registry_of(files: &[(&str, &str)]) -> Registry {
    Registry::new(&policy_of(files)).expect("registry")
}

fn registry() -> Registry {
    registry_of(&[(FILE, POLICY)])
}

const WORKSPACE: &str = "/work/repo";

fn session() -> Session {
    Session {
        mode: "ask".into(),
        workspace: WORKSPACE.into(),
        scopes: Scope::ALL.to_vec(),
        labels: BTreeMap::new(),
        agent: String::new(),
    }
}

fn call(tool: &str, args: Value) -> Call {
    call_in(tool, args, session())
}

fn call_in(tool: &str, args: Value, session: Session) -> Call {
    Call {
        tool: tool.into(),
        args,
        session,
        confined: false,
    }
}

fn with_labels(labels: &[(&str, &str)]) -> Session {
    Session {
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect(),
        ..session()
    }
}

fn with_mode(mode: &str) -> Session {
    Session {
        mode: mode.into(),
        ..session()
    }
}

/// Everything in an evaluation but the step sentences.
#[derive(Debug, PartialEq)]
struct Summary {
    decision: Decision,
    static_permission: Option<Permission>,
    effective_permission: Option<Permission>,
    reject_reason: Option<String>,
    reason: Option<String>,
    matched: Vec<MatchedRule>,
    errors: Vec<RuleError>,
    steps: Vec<(Step, Outcome)>,
}

fn summary(ev: &Evaluation) -> Summary {
    Summary {
        decision: ev.decision,
        static_permission: ev.static_permission,
        effective_permission: ev.effective_permission,
        reject_reason: ev.reject_reason.clone(),
        reason: ev.reason.clone(),
        matched: ev.matched.clone(),
        errors: ev.errors.clone(),
        steps: ev.steps.iter().map(|s| (s.step, s.outcome)).collect(),
    }
}

/// The steps of a call rejected at `at`: passes before, skipped after.
fn rejected_at(at: Step) -> Vec<(Step, Outcome)> {
    Step::ALL
        .iter()
        .map(|&s| {
            let o = if s == Step::Decision || s == at {
                Outcome::Reject
            } else if s < at {
                Outcome::Pass
            } else {
                Outcome::Skipped
            };
            (s, o)
        })
        .collect()
}

/// The steps of a call that got through: five passes, then the permissions.
fn decided(
    static_p: Permission,
    effective: Permission,
    decision: Decision,
) -> Vec<(Step, Outcome)> {
    vec![
        (Step::Lookup, Outcome::Pass),
        (Step::Scope, Outcome::Pass),
        (Step::Validate, Outcome::Pass),
        (Step::Effects, Outcome::Pass),
        (Step::Reject, Outcome::Pass),
        (Step::Permission, Decision::from(static_p).into()),
        (Step::Relax, Decision::from(effective).into()),
        (Step::Sandbox, decision.into()),
        (Step::Decision, decision.into()),
    ]
}

fn hit(id: &str, kind: RuleKind, action: Decision) -> MatchedRule {
    MatchedRule {
        id: id.into(),
        kind,
        action,
        file: FILE.into(),
        line: line_of(POLICY, &format!("id: {id}")),
    }
}

fn rule_error(id: &str, kind: RuleKind, message: &str, counted_as: &'static str) -> RuleError {
    RuleError {
        id: id.into(),
        kind,
        message: message.into(),
        counted_as,
    }
}

fn step_detail(ev: &Evaluation, step: Step) -> String {
    ev.steps
        .iter()
        .find(|s| s.step == step)
        .map(|s| s.detail.clone())
        .expect("every step is recorded")
}

// ------------------------------------------------------------------ 1. lookup

#[test]
fn lookup_unknown_tool_is_rejected_with_did_you_mean() {
    let ev = registry().evaluate(&call("bsh", json!({"command": "ls"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Reject,
            static_permission: None,
            effective_permission: None,
            reject_reason: Some("unknown tool `bsh`; did you mean `bash`?".into()),
            reason: None,
            matched: vec![],
            errors: vec![],
            steps: rejected_at(Step::Lookup),
        }
    );
    assert_eq!(ev.tool, "bsh");
}

#[test]
fn lookup_unknown_tool_without_a_close_name_has_no_hint() {
    let ev = registry().evaluate(&call("completely_different_thing", json!({})));
    assert_eq!(
        ev.reject_reason.as_deref(),
        Some("unknown tool `completely_different_thing`")
    );
    assert_eq!(summary(&ev).steps, rejected_at(Step::Lookup));
}

// ------------------------------------------------------------------ 2. scope

#[test]
fn scope_not_granted_is_rejected_before_validation() {
    let session = Session {
        scopes: vec![Scope::ReadOnly, Scope::Write],
        ..session()
    };
    // The arguments are invalid too: scope comes first.
    let ev = registry().evaluate(&call_in("bash", json!({}), session));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Reject,
            static_permission: None,
            effective_permission: None,
            reject_reason: Some(
                "scope `shell` is not granted to this session (granted: `read_only`, `write`)"
                    .into()
            ),
            reason: None,
            matched: vec![],
            errors: vec![],
            steps: rejected_at(Step::Scope),
        }
    );
}

#[test]
fn scope_granted_passes() {
    let session = Session {
        scopes: vec![Scope::ReadOnly],
        ..session()
    };
    let ev = registry().evaluate(&call_in(
        "read_file",
        json!({"path": "src/lib.rs"}),
        session,
    ));
    assert_eq!(
        summary(&ev).steps,
        decided(Permission::Allow, Permission::Allow, Decision::Allow)
    );
}

// ------------------------------------------------------------------ 3. validate

fn validate_reason(tool: &str, args: Value) -> (Option<String>, Vec<(Step, Outcome)>) {
    let ev = registry().evaluate(&call(tool, args));
    assert_eq!(ev.decision, Decision::Reject);
    assert_eq!(ev.static_permission, None);
    (ev.reject_reason.clone(), summary(&ev).steps)
}

#[test]
fn validate_missing_required_argument_is_rejected_naming_it() {
    let (reason, steps) = validate_reason("bash", json!({"timeout_ms": 5}));
    assert_eq!(steps, rejected_at(Step::Validate));
    assert_eq!(
        reason.as_deref(),
        Some(r#"invalid arguments: "command" is a required property"#)
    );
}

#[test]
fn validate_wrong_type_is_rejected_naming_the_path() {
    let (reason, steps) = validate_reason("bash", json!({"command": "ls", "timeout_ms": "soon"}));
    assert_eq!(steps, rejected_at(Step::Validate));
    assert_eq!(
        reason.as_deref(),
        Some(r#"invalid arguments: `/timeout_ms`: "soon" is not of type "integer""#)
    );
}

#[test]
fn validate_nested_wrong_type_names_the_nested_path() {
    let (reason, steps) = validate_reason(
        "read_file",
        json!({"path": "a", "options": {"limit": "all"}}),
    );
    assert_eq!(steps, rejected_at(Step::Validate));
    assert_eq!(
        reason.as_deref(),
        Some(r#"invalid arguments: `/options/limit`: "all" is not of type "integer""#)
    );
}

#[test]
fn validate_additional_property_is_rejected_naming_it() {
    let (reason, steps) = validate_reason("bash", json!({"command": "ls", "cwd": "/"}));
    assert_eq!(steps, rejected_at(Step::Validate));
    assert_eq!(
        reason.as_deref(),
        Some("invalid arguments: additional properties are not allowed ('cwd' was unexpected)")
    );
}

#[test]
fn validate_arguments_that_are_not_an_object_are_rejected() {
    let (reason, steps) = validate_reason("read_file", json!(["a"]));
    assert_eq!(steps, rejected_at(Step::Validate));
    assert_eq!(
        reason.as_deref(),
        Some("the arguments are not a JSON object")
    );
}

#[test]
fn validate_minimum_is_enforced() {
    let (reason, _) = validate_reason("bash", json!({"command": "ls", "timeout_ms": 0}));
    assert_eq!(
        reason.as_deref(),
        Some("invalid arguments: `/timeout_ms`: 0 is less than the minimum of 1")
    );
}

/// YAML 1.2 (which the format is written in) reads plain `n`, `y`, `no`, `on` as
/// strings. Parameter names like these must survive into the JSON Schema.
#[test]
fn validate_plain_scalars_n_and_y_stay_strings_in_parameters() {
    let yaml = r#"version: 1
tools:
  - name: plot
    description: Plot a point.
    scope: read_only
    parameters:
      type: object
      properties:
        x: {type: integer}
        y: {type: integer}
        n: {type: integer}
      required: [x, y, n]
    safety: {side_effect: none, permission: allow}
"#;
    let loaded = load(&[("plot.yaml", yaml)]);
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    assert_eq!(errors, Vec::<String>::new());
    let reg = Registry::new(&loaded.policy.expect("loads")).expect("registry");
    let ev = reg.evaluate(&call("plot", json!({"x": 1, "y": 2, "n": 3})));
    assert_eq!(ev.decision, Decision::Allow);
    let ev = reg.evaluate(&call("plot", json!({"x": 1})));
    assert_eq!(ev.decision, Decision::Reject);
}

// ------------------------------------------------------------------ 4. reject

#[test]
fn reject_rule_match_rejects_with_its_message() {
    let ev = registry().evaluate(&call("bash", json!({"command": "echo; :(){ :|:& };:"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Reject,
            static_permission: None,
            effective_permission: None,
            reject_reason: Some("reject rule `no-fork-bomb`: refusing a fork bomb".into()),
            reason: None,
            matched: vec![hit("no-fork-bomb", RuleKind::Reject, Decision::Reject)],
            errors: vec![],
            steps: rejected_at(Step::Reject),
        }
    );
    assert_eq!(
        step_detail(&ev, Step::Reject),
        "reject rule `no-fork-bomb`: refusing a fork bomb"
    );
}

#[test]
fn reject_rule_matching_without_error_rejects() {
    let ev = registry().evaluate(&call("bash", json!({"command": "probe", "timeout_ms": 5})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Reject,
            static_permission: None,
            effective_permission: None,
            reject_reason: Some("reject rule `probe-timeout`: probes take no timeout".into()),
            reason: None,
            matched: vec![hit("probe-timeout", RuleKind::Reject, Decision::Reject)],
            errors: vec![],
            steps: rejected_at(Step::Reject),
        }
    );
}

#[test]
fn reject_rule_that_errors_at_run_time_rejects() {
    // `args.timeout_ms` is optional: without it the expression fails, and the
    // reject rule fails closed (matched).
    let ev = registry().evaluate(&call("bash", json!({"command": "probe"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Reject,
            static_permission: None,
            effective_permission: None,
            reject_reason: Some("reject rule `probe-timeout`: probes take no timeout".into()),
            reason: None,
            matched: vec![hit("probe-timeout", RuleKind::Reject, Decision::Reject)],
            errors: vec![rule_error(
                "probe-timeout",
                RuleKind::Reject,
                "no such key `timeout_ms`",
                "matched"
            )],
            steps: rejected_at(Step::Reject),
        }
    );
}

#[test]
fn reject_rule_not_matching_passes() {
    let ev = registry().evaluate(&call("bash", json!({"command": "git push"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Prompt,
            static_permission: Some(Permission::Prompt),
            effective_permission: Some(Permission::Prompt),
            reject_reason: None,
            reason: Some("runs arbitrary commands".into()),
            matched: vec![],
            errors: vec![],
            steps: decided(Permission::Prompt, Permission::Prompt, Decision::Prompt),
        }
    );
    assert_eq!(
        step_detail(&ev, Step::Reject),
        "none of 2 reject rules matched"
    );
}

/// SPEC §4: rule order never changes a decision. When two reject rules match, the
/// rejection shown (and printed by `explain`) should not depend on which one is
/// written first either; sandbox ties are already broken by id for this reason.
#[test]
fn reject_reason_does_not_depend_on_rule_order() {
    let tool = |first: (&str, &str), second: (&str, &str)| {
        format!(
            "version: 1
tools:
  - name: run
    description: Run.
    scope: shell
    safety: {{side_effect: shell, permission: prompt, reason: runs}}
    reject:
      - id: {}
        when: 'true'
        message: {}
      - id: {}
        when: 'true'
        message: {}
",
            first.0, first.1, second.0, second.1
        )
    };
    let a = ("alpha", "refused by alpha");
    let b = ("beta", "refused by beta");
    let written_ab = registry_of(&[("ab.yaml", &tool(a, b))]).evaluate(&call("run", json!({})));
    let written_ba = registry_of(&[("ba.yaml", &tool(b, a))]).evaluate(&call("run", json!({})));
    assert_eq!(
        (written_ab.decision, written_ba.decision),
        (Decision::Reject, Decision::Reject)
    );
    let ids = |ev: &Evaluation| ev.matched.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&written_ab), ids(&written_ba));
    assert_eq!(written_ab.reject_reason, written_ba.reject_reason);
}

// ------------------------------------------------------------------ 5. permission

#[test]
fn permission_step_shows_the_static_permission_and_its_origin() {
    let reg = registry();
    let ev = reg.evaluate(&call("fetch", json!({"url": "https://example.com/"})));
    assert_eq!(ev.static_permission, Some(Permission::Prompt));
    let line = line_of(POLICY, "name: fetch");
    assert_eq!(
        step_detail(&ev, Step::Permission),
        format!(
            "static permission `prompt` from the manifest ({FILE}:{line}): reaches the network"
        )
    );
    let ev = reg.evaluate(&call("rm_rf", json!({})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Deny,
            static_permission: Some(Permission::Deny),
            effective_permission: Some(Permission::Deny),
            reject_reason: None,
            reason: Some("never delete trees".into()),
            matched: vec![],
            errors: vec![],
            steps: decided(Permission::Deny, Permission::Deny, Decision::Deny),
        }
    );
}

// ------------------------------------------------------------------ 6. relax

#[test]
fn relax_moves_prompt_to_allow_when_matched() {
    let ev = registry().evaluate(&call(
        "write_file",
        json!({"path": "scratch/notes.md", "content": "x"}),
    ));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Allow,
            static_permission: Some(Permission::Prompt),
            effective_permission: Some(Permission::Allow),
            reject_reason: None,
            reason: Some("the scratch folder is disposable".into()),
            matched: vec![hit("scratch-writes", RuleKind::Relax, Decision::Allow)],
            errors: vec![],
            steps: decided(Permission::Prompt, Permission::Allow, Decision::Allow),
        }
    );
    assert_eq!(
        step_detail(&ev, Step::Relax),
        "`prompt` relaxed to `allow` by `scratch-writes`"
    );
}

#[test]
fn relax_not_matched_keeps_prompt() {
    let ev = registry().evaluate(&call("bash", json!({"command": "ls -la"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Prompt,
            static_permission: Some(Permission::Prompt),
            effective_permission: Some(Permission::Prompt),
            reject_reason: None,
            reason: Some("runs arbitrary commands".into()),
            matched: vec![],
            errors: vec![],
            steps: decided(Permission::Prompt, Permission::Prompt, Decision::Prompt),
        }
    );
    assert_eq!(
        step_detail(&ev, Step::Relax),
        "none of 1 relax rules matched"
    );
    let ev = registry().evaluate(&call("bash", json!({"command": "ls"})));
    assert_eq!(ev.decision, Decision::Allow);
    assert_eq!(
        ev.matched,
        vec![hit("ls-is-fine", RuleKind::Relax, Decision::Allow)]
    );
}

#[test]
fn relax_never_touches_allow() {
    // `scratch-writes` also names `read_file`, which is `allow` already: the rule is
    // not even evaluated, so it is not listed as matched.
    let ev = registry().evaluate(&call("read_file", json!({"path": "scratch/notes.md"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Allow,
            static_permission: Some(Permission::Allow),
            effective_permission: Some(Permission::Allow),
            reject_reason: None,
            reason: None,
            matched: vec![],
            errors: vec![],
            steps: decided(Permission::Allow, Permission::Allow, Decision::Allow),
        }
    );
    assert_eq!(step_detail(&ev, Step::Relax), "already `allow`");
}

#[test]
fn relax_rule_matching_a_deny_manifest_tool_is_a_load_error() {
    let yaml = r#"version: 1
tools:
  - name: nuke
    description: Delete everything.
    scope: write
    safety: {side_effect: write, permission: deny, reason: never}
  - name: ask_me
    description: Asks.
    scope: read_only
    safety: {side_effect: read, permission: prompt, reason: asks}
relax:
  - id: everything-goes
    when: 'true'
"#;
    let loaded = load(&[("relax.yaml", yaml)]);
    assert!(loaded.policy.is_none());
    type Found = (Code, String, Option<(String, usize)>);
    let found: Vec<Found> = loaded
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code,
                d.message.clone(),
                d.location
                    .as_ref()
                    .map(|l| (l.file.name.clone(), l.file.line_col(l.span.offset).0)),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![(
            Code::RelaxOnDeny,
            "relax rule `everything-goes` matches `nuke` whose permission is `deny`".into(),
            Some(("relax.yaml".into(), 12)),
        )]
    );
}

/// A tool registered in code after loading is checked again at registration:
/// relax rules whose globs name it are not applied to a `deny` tool.
#[test]
fn relax_never_touches_deny_even_for_tools_registered_later() {
    let mut reg = registry();
    let calls = Arc::new(AtomicUsize::new(0));
    reg.register_tool(Arc::new(Counted::new(
        "bulldozer",
        Permission::Deny,
        Arc::clone(&calls),
    )))
    .expect("registers");
    let tool = reg.get("bulldozer").expect("registered");
    assert_eq!(
        tool.skipped_relax,
        vec![(
            "ls-is-fine".to_string(),
            "the tool's permission is `deny`, which nothing relaxes".to_string()
        )]
    );
    // `ls-is-fine` would match this call if it applied.
    let ev = reg.evaluate(&call("bulldozer", json!({"command": "ls"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Deny,
            static_permission: Some(Permission::Deny),
            effective_permission: Some(Permission::Deny),
            reject_reason: None,
            reason: Some("bulldozer is not allowed".into()),
            matched: vec![],
            errors: vec![],
            steps: decided(Permission::Deny, Permission::Deny, Decision::Deny),
        }
    );
    assert_eq!(step_detail(&ev, Step::Relax), "`deny` is never relaxed");
    // A prompt tool of the same shape does get the rule.
    reg.register_tool(Arc::new(Counted::new(
        "backhoe",
        Permission::Prompt,
        Arc::clone(&calls),
    )))
    .expect("registers");
    assert_eq!(
        reg.get("backhoe").expect("registered").skipped_relax,
        vec![]
    );
    let ev = reg.evaluate(&call("backhoe", json!({"command": "ls"})));
    assert_eq!(ev.decision, Decision::Allow);
}

#[test]
fn relax_rule_that_errors_is_not_matched_and_the_error_is_recorded() {
    // `url` is optional: `docs-fetch` fails (not matched, recorded) and so does
    // `plain-http` (a sandbox rule: matched, deny).
    let ev = registry().evaluate(&call("fetch", json!({})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Deny,
            static_permission: Some(Permission::Prompt),
            effective_permission: Some(Permission::Prompt),
            reject_reason: None,
            reason: Some("plain http leaks what it sends".into()),
            matched: vec![hit("plain-http", RuleKind::Sandbox, Decision::Deny)],
            errors: vec![
                rule_error(
                    "docs-fetch",
                    RuleKind::Relax,
                    "no such key `url`",
                    "not matched"
                ),
                rule_error(
                    "plain-http",
                    RuleKind::Sandbox,
                    "no such key `url`",
                    "matched"
                ),
            ],
            steps: decided(Permission::Prompt, Permission::Prompt, Decision::Deny),
        }
    );
}

// ------------------------------------------------------------------ 7. sandbox

#[test]
fn sandbox_takes_the_strictest_and_deny_beats_prompt() {
    // Outside the workspace (prompt) and a .env file (deny).
    let ev = registry().evaluate(&call("read_file", json!({"path": "/etc/app/.env"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Deny,
            static_permission: Some(Permission::Allow),
            effective_permission: Some(Permission::Allow),
            reject_reason: None,
            reason: Some(".env files hold credentials".into()),
            matched: vec![
                hit("no-dotenv", RuleKind::Sandbox, Decision::Deny),
                hit("outside-workspace", RuleKind::Sandbox, Decision::Prompt),
            ],
            errors: vec![],
            steps: decided(Permission::Allow, Permission::Allow, Decision::Deny),
        }
    );
    assert_eq!(
        step_detail(&ev, Step::Sandbox),
        "matched `no-dotenv`, `outside-workspace`; the strictest is `deny`"
    );
}

#[test]
fn sandbox_prompt_tightens_allow() {
    let ev = registry().evaluate(&call("read_file", json!({"path": "/etc/hosts"})));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Prompt,
            static_permission: Some(Permission::Allow),
            effective_permission: Some(Permission::Allow),
            reject_reason: None,
            reason: Some("the path is outside the workspace".into()),
            matched: vec![hit(
                "outside-workspace",
                RuleKind::Sandbox,
                Decision::Prompt
            )],
            errors: vec![],
            steps: decided(Permission::Allow, Permission::Allow, Decision::Prompt),
        }
    );
}

#[test]
fn sandbox_rule_that_errors_counts_as_matched() {
    let ev = registry().evaluate(&call("fetch", json!({"url": 7})));
    // A wrong type is a validation error, not a rule error.
    assert_eq!(ev.decision, Decision::Reject);
    let ev = registry().evaluate(&call("fetch", json!({})));
    assert_eq!(ev.decision, Decision::Deny);
    assert!(
        ev.errors
            .iter()
            .any(|e| e.id == "plain-http" && e.counted_as == "matched")
    );
    assert!(ev.matched.iter().any(|m| m.id == "plain-http"));
}

#[test]
fn sandbox_deny_beats_a_relaxed_allow() {
    let ev = registry().evaluate(&call(
        "write_file",
        json!({"path": "scratch/.env", "content": "TOKEN=1"}),
    ));
    assert_eq!(
        summary(&ev),
        Summary {
            decision: Decision::Deny,
            static_permission: Some(Permission::Prompt),
            effective_permission: Some(Permission::Allow),
            reject_reason: None,
            reason: Some(".env files hold credentials".into()),
            matched: vec![
                hit("no-dotenv", RuleKind::Sandbox, Decision::Deny),
                hit("scratch-writes", RuleKind::Relax, Decision::Allow),
            ],
            errors: vec![],
            steps: decided(Permission::Prompt, Permission::Allow, Decision::Deny),
        }
    );
}

#[test]
fn path_under_folds_dotdot_before_relaxing() {
    let ev = registry().evaluate(&call_in(
        "write_file",
        json!({"path": "/elsewhere/scratch/x", "content": "x"}),
        Session {
            workspace: "/elsewhere".into(),
            ..session()
        },
    ));
    // Inside the workspace: relaxed, nothing tightens.
    assert_eq!(ev.decision, Decision::Allow);
    let ev = registry().evaluate(&call(
        "write_file",
        json!({"path": "/work/repo/scratch/../../other/x", "content": "x"}),
    ));
    // `path_under` cleans `..`: outside the workspace and outside scratch.
    assert_eq!(
        (ev.decision, ev.effective_permission),
        (Decision::Prompt, Some(Permission::Prompt))
    );
}

// ------------------------------------------------------------------ session and tool variables

#[test]
fn session_mode_and_tool_scope() {
    let reg = registry();
    let ev = reg.evaluate(&call_in(
        "write_file",
        json!({"path": "scratch/a", "content": "x"}),
        with_mode("plan"),
    ));
    assert_eq!(
        (ev.decision, ev.reason.as_deref()),
        (Decision::Deny, Some("plan mode only reads"))
    );
    assert_eq!(
        ev.matched,
        vec![
            hit("plan-mode-read-only", RuleKind::Sandbox, Decision::Deny),
            hit("scratch-writes", RuleKind::Relax, Decision::Allow),
        ]
    );
    // A read_only tool is untouched in plan mode.
    let ev = reg.evaluate(&call_in(
        "read_file",
        json!({"path": "a"}),
        with_mode("plan"),
    ));
    assert_eq!((ev.decision, ev.matched), (Decision::Allow, vec![]));
}

#[test]
fn session_workspace_with_path_under() {
    let reg = registry();
    let inside = reg.evaluate(&call("read_file", json!({"path": "/work/repo/src/lib.rs"})));
    let relative = reg.evaluate(&call("read_file", json!({"path": "src/lib.rs"})));
    let escapes = reg.evaluate(&call(
        "read_file",
        json!({"path": "src/../../other/lib.rs"}),
    ));
    let sibling = reg.evaluate(&call("read_file", json!({"path": "/work/repository/x"})));
    let moved = reg.evaluate(&call_in(
        "read_file",
        json!({"path": "/work/repository/x"}),
        Session {
            workspace: "/work/repository".into(),
            ..session()
        },
    ));
    assert_eq!(
        [inside, relative, escapes, sibling, moved].map(|e| e.decision),
        [
            Decision::Allow,
            Decision::Allow,
            Decision::Prompt,
            Decision::Prompt,
            Decision::Allow
        ]
    );
}

#[test]
fn session_labels() {
    let reg = registry();
    let intern = reg.evaluate(&call_in(
        "read_file",
        json!({"path": "a"}),
        with_labels(&[("team", "intern")]),
    ));
    assert_eq!(
        (intern.decision, intern.matched),
        (
            Decision::Prompt,
            vec![hit("interns-ask", RuleKind::Sandbox, Decision::Prompt)]
        )
    );
    let staff = reg.evaluate(&call_in(
        "read_file",
        json!({"path": "a"}),
        with_labels(&[("team", "staff")]),
    ));
    assert_eq!((staff.decision, staff.errors), (Decision::Allow, vec![]));
    let offline = reg.evaluate(&call_in(
        "fetch",
        json!({"url": "https://docs.rs/x"}),
        with_labels(&[("offline", "1")]),
    ));
    assert_eq!(
        (
            offline.decision,
            offline.reason.as_deref(),
            offline.effective_permission
        ),
        (
            Decision::Deny,
            Some("the session is offline"),
            Some(Permission::Allow)
        )
    );
}

#[test]
fn tool_permission_and_tool_name() {
    let reg = registry();
    // `ci-cannot-ask` reads `tool.permission`: only the static `prompt` tools.
    let prompt_tool = reg.evaluate(&call_in("bash", json!({"command": "ls"}), with_mode("ci")));
    let allow_tool = reg.evaluate(&call_in("read_file", json!({"path": "a"}), with_mode("ci")));
    assert_eq!(
        (prompt_tool.decision, prompt_tool.effective_permission),
        (Decision::Deny, Some(Permission::Allow))
    );
    assert_eq!(
        prompt_tool.matched,
        vec![
            hit("ci-cannot-ask", RuleKind::Sandbox, Decision::Deny),
            hit("ls-is-fine", RuleKind::Relax, Decision::Allow),
        ]
    );
    assert_eq!(allow_tool.decision, Decision::Allow);
    // `offline-no-fetch` reads `tool.name`.
    let offline_write = reg.evaluate(&call_in(
        "write_file",
        json!({"path": "scratch/a", "content": ""}),
        with_labels(&[("offline", "1")]),
    ));
    assert_eq!(offline_write.decision, Decision::Allow);
}

// ------------------------------------------------------------------ matched: file and line

#[test]
fn matched_rules_carry_their_file_and_line_across_files() {
    let tools = r#"version: 1
tools:
  - name: edit
    description: Edit a file.
    scope: write
    parameters:
      type: object
      properties:
        path: {type: string}
    safety: {side_effect: write, permission: prompt, reason: edits files}
"#;
    let rules = r#"version: 1

rules:
  # a comment, so the line is not just the index
  - description: keys
    id: no-keys
    when: 'args.path.endsWith(".pem")'
    action: prompt
    reason: key files
relax:
  - tools: [edit]
    id: edit-docs
    when: 'args.path.startsWith("docs/")'
"#;
    let reg = registry_of(&[
        ("manifests/tools.yaml", tools),
        ("policies/rules.yaml", rules),
    ]);
    let ev = reg.evaluate(&call("edit", json!({"path": "docs/cert.pem"})));
    assert_eq!(
        (ev.decision, ev.matched),
        (
            Decision::Prompt,
            vec![
                MatchedRule {
                    id: "edit-docs".into(),
                    kind: RuleKind::Relax,
                    action: Decision::Allow,
                    file: "policies/rules.yaml".into(),
                    line: 12,
                },
                MatchedRule {
                    id: "no-keys".into(),
                    kind: RuleKind::Sandbox,
                    action: Decision::Prompt,
                    file: "policies/rules.yaml".into(),
                    line: 6,
                },
            ]
        )
    );
    assert_eq!(
        reg.get("edit").map(|t| t.source.describe()),
        Some("manifest manifests/tools.yaml:3".to_string())
    );
}

#[test]
fn matched_line_of_the_shared_policy_is_the_id_line() {
    // A hard-coded check of `line_of`, so the helper cannot drift with the code.
    assert_eq!(line_of(POLICY, "id: no-dotenv"), 58);
    let ev = registry().evaluate(&call("read_file", json!({"path": ".env"})));
    assert_eq!(
        ev.matched,
        vec![MatchedRule {
            id: "no-dotenv".into(),
            kind: RuleKind::Sandbox,
            action: Decision::Deny,
            file: FILE.into(),
            line: 58,
        }]
    );
}

// ------------------------------------------------------------------ steps

#[test]
fn steps_are_always_the_eight_in_order() {
    let reg = registry();
    let calls = [
        call("nope", json!({})),
        call_in(
            "fetch",
            json!({}),
            Session {
                scopes: vec![],
                ..session()
            },
        ),
        call("bash", json!({})),
        call("bash", json!({"command": "probe"})),
        call("bash", json!({"command": "ls"})),
        call("read_file", json!({"path": ".env"})),
        call("rm_rf", json!({})),
    ];
    for c in calls {
        let ev = reg.evaluate(&c);
        let names: Vec<Step> = ev.steps.iter().map(|s| s.step).collect();
        assert_eq!(names, Step::ALL.to_vec(), "{}", c.tool);
        let last = ev.steps.last().expect("eight steps");
        assert_eq!(last.outcome, Outcome::from(ev.decision), "{}", c.tool);
    }
}

// ------------------------------------------------------------------ the runtime

/// A tool defined in code that counts its runs.
struct Counted {
    name: String,
    permission: Permission,
    calls: Arc<AtomicUsize>,
}

impl Counted {
    fn new(name: &str, permission: Permission, calls: Arc<AtomicUsize>) -> Counted {
        Counted {
            name: name.into(),
            permission,
            calls,
        }
    }
}

impl Executor for Counted {
    fn execute(&self, call: &Call) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text(format!(
            "{} ran with {}",
            self.name, call.args
        )))
    }
}

impl Tool for Counted {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "counts its runs"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    fn safety(&self) -> Safety {
        Safety {
            side_effect: SideEffect::Write,
            permission: self.permission,
            reason: match self.permission {
                Permission::Allow => None,
                _ => Some(format!("{} is not allowed", self.name)),
            },
        }
    }
}

/// An executor for a manifest tool: returns a fixed result and records which
/// path ran it.
struct Fixed {
    result: Result<ToolOutput, ToolError>,
    offer_async: bool,
    paths: Arc<Mutex<Vec<&'static str>>>,
}

impl Fixed {
    fn ok(text: &str) -> (Arc<Fixed>, Arc<Mutex<Vec<&'static str>>>) {
        Fixed::new(Ok(ToolOutput::text(text)), false)
    }

    fn new(
        result: Result<ToolOutput, ToolError>,
        offer_async: bool,
    ) -> (Arc<Fixed>, Arc<Mutex<Vec<&'static str>>>) {
        let paths = Arc::new(Mutex::new(Vec::new()));
        let e = Arc::new(Fixed {
            result,
            offer_async,
            paths: Arc::clone(&paths),
        });
        (e, paths)
    }
}

impl Executor for Fixed {
    fn execute(&self, _call: &Call) -> Result<ToolOutput, ToolError> {
        self.paths.lock().expect("lock").push("sync");
        self.result.clone()
    }

    fn as_async(&self) -> Option<&dyn AsyncExecutor> {
        if self.offer_async { Some(self) } else { None }
    }
}

impl AsyncExecutor for Fixed {
    fn execute_async<'a>(
        &'a self,
        _call: &'a Call,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.paths.lock().expect("lock").push("async");
            self.result.clone()
        })
    }
}

/// Approves or refuses, and records what it was asked.
struct Person {
    answer: bool,
    asked: Mutex<Vec<(String, Decision)>>,
}

impl Person {
    fn new(answer: bool) -> Person {
        Person {
            answer,
            asked: Mutex::new(Vec::new()),
        }
    }

    fn asked(&self) -> Vec<(String, Decision)> {
        self.asked.lock().expect("lock").clone()
    }
}

impl Approver for Person {
    fn approve(&self, tool: &RegisteredTool, _call: &Call, evaluation: &Evaluation) -> bool {
        self.asked
            .lock()
            .expect("lock")
            .push((tool.name.clone(), evaluation.decision));
        self.answer
    }
}

fn count(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}

/// The shared policy plus three tools in code: `echo` (allow), `nuke` (deny)
/// and `ask` (prompt), all counting into one counter.
fn runtime() -> (Registry, Arc<AtomicUsize>) {
    let mut reg = registry();
    let calls = Arc::new(AtomicUsize::new(0));
    for (name, p) in [
        ("echo", Permission::Allow),
        ("nuke", Permission::Deny),
        ("ask", Permission::Prompt),
    ] {
        reg.register_tool(Arc::new(Counted::new(name, p, Arc::clone(&calls))))
            .expect("registers");
    }
    (reg, calls)
}

#[tokio::test]
async fn dispatch_allow_runs_the_tool() {
    let (reg, calls) = runtime();
    let out = reg.dispatch(&call("echo", json!({"a": 1})), None).await;
    assert_eq!(out.evaluation.decision, Decision::Allow);
    assert_eq!(out.result, Ok(ToolOutput::text(r#"echo ran with {"a":1}"#)));
    assert_eq!(count(&calls), 1);
}

#[tokio::test]
async fn dispatch_deny_never_runs_the_tool() {
    let (reg, calls) = runtime();
    let person = Person::new(true);
    let out = reg.dispatch(&call("nuke", json!({})), Some(&person)).await;
    assert_eq!(out.evaluation.decision, Decision::Deny);
    assert_eq!(
        out.result,
        Err(ToolError::Denied("nuke is not allowed".into()))
    );
    assert_eq!(count(&calls), 0);
    assert_eq!(person.asked(), vec![], "nobody is asked about a deny");
}

#[tokio::test]
async fn dispatch_sandbox_deny_never_runs_an_allowed_tool() {
    let (mut reg, _) = runtime();
    let (exec, paths) = Fixed::ok("contents");
    reg.attach_executor("read_file", exec).expect("attaches");
    let out = reg
        .dispatch(&call("read_file", json!({"path": ".env"})), None)
        .await;
    assert_eq!(
        out.result,
        Err(ToolError::Denied(".env files hold credentials".into()))
    );
    assert_eq!(*paths.lock().expect("lock"), Vec::<&str>::new());
    let out = reg
        .dispatch(&call("read_file", json!({"path": "a"})), None)
        .await;
    assert_eq!(out.result, Ok(ToolOutput::text("contents")));
    assert_eq!(*paths.lock().expect("lock"), vec!["sync"]);
}

#[tokio::test]
async fn dispatch_reject_never_runs_the_tool() {
    let (mut reg, calls) = runtime();
    let (exec, paths) = Fixed::ok("ran");
    reg.attach_executor("bash", exec).expect("attaches");
    let person = Person::new(true);
    let cases = [
        (
            call("bash", json!({"command": ":(){ :|:& };:"})),
            "reject rule `no-fork-bomb`: refusing a fork bomb",
        ),
        (
            call("bash", json!({"command": "probe"})),
            "reject rule `probe-timeout`: probes take no timeout",
        ),
        (
            call("bash", json!({"command": 1})),
            r#"invalid arguments: `/command`: 1 is not of type "string""#,
        ),
        (
            call_in(
                "echo",
                json!({}),
                Session {
                    scopes: vec![Scope::ReadOnly],
                    ..session()
                },
            ),
            "scope `write` is not granted to this session (granted: `read_only`)",
        ),
        (
            call("ech0", json!({})),
            "unknown tool `ech0`; did you mean `echo`?",
        ),
    ];
    for (c, why) in cases {
        let out = reg.dispatch(&c, Some(&person)).await;
        assert_eq!(out.evaluation.decision, Decision::Reject);
        assert_eq!(out.result, Err(ToolError::Rejected(why.into())));
    }
    assert_eq!(count(&calls), 0);
    assert_eq!(*paths.lock().expect("lock"), Vec::<&str>::new());
    assert_eq!(person.asked(), vec![]);
}

#[tokio::test]
async fn dispatch_prompt_without_approver_follows_on_prompt_deny() {
    let (reg, calls) = runtime();
    assert_eq!(
        reg.settings().on_prompt,
        zero_policy::model::OnPrompt::Deny,
        "the default"
    );
    let out = reg.dispatch(&call("ask", json!({})), None).await;
    assert_eq!(out.evaluation.decision, Decision::Prompt);
    assert_eq!(
        out.result,
        Err(ToolError::NotApproved("ask is not allowed".into()))
    );
    assert_eq!(count(&calls), 0);
}

#[tokio::test]
async fn dispatch_prompt_with_on_prompt_ask_and_no_approver_does_not_run() {
    let settings = "version: 1\nsettings:\n  on_prompt: ask\n";
    let mut reg = registry_of(&[(FILE, POLICY), ("settings.yaml", settings)]);
    assert_eq!(reg.settings().on_prompt, zero_policy::model::OnPrompt::Ask);
    let calls = Arc::new(AtomicUsize::new(0));
    reg.register_tool(Arc::new(Counted::new(
        "ask",
        Permission::Prompt,
        Arc::clone(&calls),
    )))
    .expect("registers");
    let out = reg.dispatch(&call("ask", json!({})), None).await;
    assert_eq!(
        out.result,
        Err(ToolError::NotApproved("ask is not allowed".into()))
    );
    assert_eq!(count(&calls), 0);
}

#[tokio::test]
async fn dispatch_prompt_runs_when_the_approver_approves() {
    let (reg, calls) = runtime();
    let yes = Person::new(true);
    let out = reg
        .dispatch(&call("ask", json!({"x": true})), Some(&yes))
        .await;
    assert_eq!(
        out.result,
        Ok(ToolOutput::text(r#"ask ran with {"x":true}"#))
    );
    assert_eq!(count(&calls), 1);
    assert_eq!(yes.asked(), vec![("ask".to_string(), Decision::Prompt)]);

    let no = Person::new(false);
    let out = reg.dispatch(&call("ask", json!({})), Some(&no)).await;
    assert_eq!(
        out.result,
        Err(ToolError::NotApproved("ask is not allowed".into()))
    );
    assert_eq!(count(&calls), 1);
    assert_eq!(no.asked(), vec![("ask".to_string(), Decision::Prompt)]);
}

#[tokio::test]
async fn dispatch_allow_does_not_ask_the_approver() {
    let (mut reg, _) = runtime();
    let (exec, paths) = Fixed::ok("listed");
    reg.attach_executor("bash", exec).expect("attaches");
    let person = Person::new(false);
    // Relaxed to allow: runs without asking, even though this person says no.
    let out = reg
        .dispatch(&call("bash", json!({"command": "ls"})), Some(&person))
        .await;
    assert_eq!(out.result, Ok(ToolOutput::text("listed")));
    assert_eq!(person.asked(), vec![]);
    assert_eq!(*paths.lock().expect("lock"), vec!["sync"]);
}

#[tokio::test]
async fn dispatch_manifest_tool_without_executor() {
    let reg = registry();
    let out = reg
        .dispatch(&call("read_file", json!({"path": "a"})), None)
        .await;
    assert_eq!(out.result, Err(ToolError::NoExecutor("read_file".into())));
}

#[test]
fn register_and_attach_errors() {
    let (mut reg, calls) = runtime();
    assert_eq!(
        reg.register_tool(Arc::new(Counted::new("bash", Permission::Allow, calls))),
        Err(RegistryError::Duplicate("bash".into()))
    );
    let (exec, _) = Fixed::ok("x");
    assert_eq!(
        reg.attach_executor("missing", exec),
        Err(RegistryError::Unknown("missing".into()))
    );
}

// Secrets of the shapes the built-in detectors know. Built from parts so that
// this file holds no literal credential.
fn github_token() -> String {
    format!("ghp_{}", "Zq8Rw3Tt6Yy1Uu4Ii7Oo0Pp2Aa5Ss9Dd3Ff6")
}
fn openai_key() -> String {
    format!("sk-{}", "proj-Hh8Jj2Kk5Ll9Zz3Xx7Cc1Vv4Bb6Nn0Mm")
}
fn aws_key_id() -> String {
    format!("AKIA{}", "Q7W2E9R4T6Y1U3I8")
}

#[tokio::test]
async fn dispatch_scrubs_secrets_from_the_output() {
    let (gh, sk, aws) = (github_token(), openai_key(), aws_key_id());
    assert_eq!(gh.len(), 4 + 36);
    let output = ToolOutput {
        text: format!("token {gh} and key {sk}\naws {aws} done"),
        structured: Some(json!({"nested": {"list": [format!("id={aws}")]}, "plain": "kept"})),
        notes: vec![format!("note {gh}")],
        is_error: false,
        content: vec![
            rmcp::model::ContentBlock::text(format!("block {sk}")),
            rmcp::model::ContentBlock::image(format!("{gh}AAAA"), "image/png"),
        ],
        meta: None,
    };
    let (exec, _) = Fixed::new(Ok(output), false);
    let mut reg = registry();
    reg.attach_executor("read_file", exec).expect("attaches");
    let out = reg
        .dispatch(&call("read_file", json!({"path": "a"})), None)
        .await;
    assert_eq!(
        out.result,
        Ok(ToolOutput {
            text: "token [REDACTED] and key [REDACTED]\naws [REDACTED] done".into(),
            structured: Some(json!({"nested": {"list": ["id=[REDACTED]"]}, "plain": "kept"})),
            notes: vec!["note [REDACTED]".into()],
            is_error: false,
            // Text blocks are scrubbed; base64 data is left whole (a detector
            // cannot see through it, and scrubbing would corrupt it).
            content: vec![
                rmcp::model::ContentBlock::text("block [REDACTED]"),
                rmcp::model::ContentBlock::image(format!("{gh}AAAA"), "image/png"),
            ],
            meta: None,
        })
    );
}

#[tokio::test]
async fn dispatch_scrubs_secrets_from_tool_errors() {
    let (gh, sk, aws) = (github_token(), openai_key(), aws_key_id());
    let (exec, _) = Fixed::new(
        Err(ToolError::Failed(format!(
            "push failed for {gh}; retry with {sk} or {aws}"
        ))),
        true,
    );
    let mut reg = registry();
    reg.attach_executor("read_file", exec).expect("attaches");
    let out = reg
        .dispatch(&call("read_file", json!({"path": "a"})), None)
        .await;
    assert_eq!(
        out.result,
        Err(ToolError::Failed(
            "push failed for [REDACTED]; retry with [REDACTED] or [REDACTED]".into()
        ))
    );
}

#[tokio::test]
async fn dispatch_scrubs_secrets_from_rejections() {
    // The validation error echoes the offending value: a token.
    let reg = registry();
    let gh = github_token();
    let out = reg
        .dispatch(
            &call("bash", json!({"command": "ls", "timeout_ms": gh})),
            None,
        )
        .await;
    assert_eq!(out.evaluation.decision, Decision::Reject);
    assert_eq!(
        out.result,
        Err(ToolError::Rejected(
            r#"invalid arguments: `/timeout_ms`: "[REDACTED]" is not of type "integer""#.into()
        ))
    );
    // An unknown tool named like a token.
    let out = reg.dispatch(&call(&aws_key_id(), json!({})), None).await;
    assert_eq!(
        out.result,
        Err(ToolError::Rejected("unknown tool `[REDACTED]`".into()))
    );
}

/// Step 9 says every error on every path leaves through the scrubber; the
/// evaluation returned with a dispatch carries the same rejection text.
#[tokio::test]
async fn dispatch_scrubs_secrets_from_the_returned_evaluation() {
    let reg = registry();
    let gh = github_token();
    let out = reg
        .dispatch(
            &call("bash", json!({"command": "ls", "timeout_ms": gh})),
            None,
        )
        .await;
    let text = format!("{:?}", out.evaluation);
    assert!(!text.contains(&gh), "{text}");
}

#[tokio::test]
async fn dispatch_uses_the_async_path_when_offered() {
    let mut reg = registry();
    let (sync_exec, sync_paths) = Fixed::ok("s");
    let (async_exec, async_paths) = Fixed::new(Ok(ToolOutput::text("a")), true);
    reg.attach_executor("read_file", sync_exec)
        .expect("attaches");
    reg.attach_executor("fetch", async_exec).expect("attaches");
    let out = reg
        .dispatch(&call("read_file", json!({"path": "a"})), None)
        .await;
    assert_eq!(out.result, Ok(ToolOutput::text("s")));
    let out = reg
        .dispatch(
            &call("fetch", json!({"url": "https://docs.rs/tokio"})),
            None,
        )
        .await;
    assert_eq!(out.evaluation.decision, Decision::Allow);
    assert_eq!(out.result, Ok(ToolOutput::text("a")));
    assert_eq!(*sync_paths.lock().expect("lock"), vec!["sync"]);
    assert_eq!(*async_paths.lock().expect("lock"), vec!["async"]);
}

#[tokio::test]
async fn dispatch_uses_the_async_path_for_tools_registered_in_code() {
    struct AsyncTool(Arc<Mutex<Vec<&'static str>>>);
    impl Executor for AsyncTool {
        fn execute(&self, _: &Call) -> Result<ToolOutput, ToolError> {
            self.0.lock().expect("lock").push("sync");
            Ok(ToolOutput::text("sync"))
        }
        fn as_async(&self) -> Option<&dyn AsyncExecutor> {
            Some(self)
        }
    }
    impl AsyncExecutor for AsyncTool {
        fn execute_async<'a>(
            &'a self,
            _: &'a Call,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            Box::pin(async move {
                self.0.lock().expect("lock").push("async");
                Ok(ToolOutput::text("async"))
            })
        }
    }
    impl Tool for AsyncTool {
        fn name(&self) -> &str {
            "remote"
        }
        fn description(&self) -> &str {
            "runs elsewhere"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn safety(&self) -> Safety {
            Safety {
                side_effect: SideEffect::Network,
                permission: Permission::Allow,
                reason: None,
            }
        }
    }
    let paths = Arc::new(Mutex::new(Vec::new()));
    let mut reg = registry();
    reg.register_tool(Arc::new(AsyncTool(Arc::clone(&paths))))
        .expect("registers");
    assert_eq!(reg.get("remote").map(|t| t.scope), Some(Scope::Network));
    let out = reg.dispatch(&call("remote", json!({})), None).await;
    assert_eq!(out.result, Ok(ToolOutput::text("async")));
    assert_eq!(*paths.lock().expect("lock"), vec!["async"]);
}
