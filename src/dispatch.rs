//! The one dispatch path: every call, from every front door, is decided here.
//!
//! [`Registry::evaluate`] takes a call through the steps of the contract in
//! order (lookup, scope, validate, reject, permission, relax, sandbox,
//! decision) and returns an [`Evaluation`] that explains itself.
//! [`Registry::dispatch`] adds step 9: it runs the tool, and its result and
//! every error leave through the secret scrubber. Executors are private to the
//! registry: there is no other way to reach one.

use std::sync::Arc;

pub use crate::call::{Call, Session};
use crate::cel;
use crate::effects::{self, Effects};
use crate::model::{Decision, OnPrompt, Permission};
use crate::policy::ToolEffects;
use crate::policy::{Rule, RuleKind};
use crate::registry::{Lookup, RegisteredTool, Registry};
pub use crate::report::{Evaluation, MatchedRule, Outcome, RuleError, Step, StepRecord};
use crate::runtime::{ToolError, ToolOutput};

/// The steps of one evaluation, recorded only when the account is asked for:
/// a detail sentence is written only then.
struct Recorder {
    account: bool,
    steps: Vec<StepRecord>,
}

impl Recorder {
    fn push(&mut self, step: Step, outcome: Outcome, detail: impl FnOnce() -> String) {
        if self.account {
            if self.steps.is_empty() {
                self.steps.reserve(Step::ALL.len());
            }
            self.steps.push(StepRecord {
                step,
                outcome,
                detail: detail(),
            });
        }
    }
}

/// Proof that a relaxation is allowed: it can only be made for `prompt`.
///
/// Relaxation is a function from this token, so tightening cannot be
/// written: there is no way to build a `Relaxation` that lands anywhere
/// but on `allow`, and none at all for `deny`.
#[derive(Debug, Clone, Copy)]
pub struct Relaxation(());

impl Relaxation {
    /// A relaxation for `permission`, if one may exist: only `prompt` relaxes.
    #[must_use]
    pub fn for_permission(permission: Permission) -> Option<Relaxation> {
        (permission == Permission::Prompt).then_some(Relaxation(()))
    }

    /// The relaxed permission: always `allow`, reached only from `prompt`.
    #[must_use]
    pub fn apply(self) -> Permission {
        Permission::Allow
    }
}

/// The effective permission: `static_permission`, relaxed if a relax rule matched.
///
/// INVARIANT: the result is never stricter than the input, and `deny` stays `deny`.
#[must_use]
pub fn relax(static_permission: Permission, relax_matched: bool) -> Permission {
    let effective = match Relaxation::for_permission(static_permission) {
        Some(r) if relax_matched => r.apply(),
        _ => static_permission,
    };
    debug_assert!(effective <= static_permission);
    debug_assert!(static_permission != Permission::Deny || effective == Permission::Deny);
    effective
}

/// Whether a rule matches, failing closed: an expression that errors counts as
/// matched for sandbox and reject rules and as not matched for relax rules,
/// so an error can only make a call stricter. The error is recorded.
fn fails_closed(scope: &cel::Scope<'_>, rule: &Rule, errors: &mut Vec<RuleError>) -> bool {
    match scope.eval_bool(&rule.when) {
        Ok(hit) => hit,
        Err(message) => {
            let counted_as_match = rule.kind != RuleKind::Relax;
            errors.push(RuleError {
                id: rule.id.clone(),
                kind: rule.kind,
                message,
                counted_as: if counted_as_match {
                    "matched"
                } else {
                    "not matched"
                },
            });
            counted_as_match
        }
    }
}

/// Whether rule `i` of a list matches: as its batch decided, or evaluated.
fn matches(
    decided: &[Option<bool>],
    i: usize,
    scope: &cel::Scope<'_>,
    rule: &Rule,
    errors: &mut Vec<RuleError>,
) -> bool {
    match decided.get(i) {
        Some(Some(hit)) => *hit,
        _ => fails_closed(scope, rule, errors),
    }
}

fn matched_rule(rule: &Rule) -> MatchedRule {
    MatchedRule {
        id: rule.id.clone(),
        kind: rule.kind,
        action: rule.action,
        file: rule.origin.file.name.clone(),
        line: rule.origin.line(),
    }
}

impl Registry {
    /// Decides one call: steps 1–8 of the dispatch path. Never runs anything.
    #[must_use]
    pub fn evaluate(&self, call: &Call) -> Evaluation {
        self.decide(call, false, true)
    }

    /// As [`Registry::evaluate`], without the step-by-step account: the
    /// decision, its reason, the matched rules, errors and effects, and
    /// `steps` only when the call was rejected (they say where). What the
    /// front doors ask per call; `explain` and `test` ask for the account.
    #[must_use]
    pub fn decide_call(&self, call: &Call) -> Evaluation {
        self.decide(call, false, false)
    }

    /// As [`Registry::evaluate`], and the call's effects are computed even when
    /// no rule reads them, for `explain`.
    #[must_use]
    pub fn explain(&self, call: &Call) -> Evaluation {
        self.decide(call, true, true)
    }

    /// As [`Registry::decide_call`], and the call's effects are computed even
    /// when no rule reads them: a call that runs confined needs them for its
    /// envelope.
    #[must_use]
    pub fn decide_with_effects(&self, call: &Call) -> Evaluation {
        self.decide(call, true, false)
    }

    fn decide(&self, call: &Call, always_effects: bool, account: bool) -> Evaluation {
        let mut rec = Recorder {
            account,
            steps: Vec::new(),
        };
        // 1. lookup
        let tool = match self.lookup(&call.tool, &call.session.agent) {
            Lookup::Found(t) => t,
            Lookup::Unknown => {
                let hint = self
                    .closest_name(&call.tool)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                return Evaluation::rejected(
                    &call.tool,
                    Step::Lookup,
                    format!("unknown tool `{}`{hint}", call.tool),
                    rec.steps,
                );
            }
            Lookup::Ambiguous(agents) => {
                return Evaluation::rejected(
                    &call.tool,
                    Step::Lookup,
                    format!(
                        "`{}` is a tool of the agents {}; say which agent the call is for (`--agent`)",
                        call.tool,
                        backticked(&agents)
                    ),
                    rec.steps,
                );
            }
            Lookup::NotForAgent(agents) => {
                return Evaluation::rejected(
                    &call.tool,
                    Step::Lookup,
                    format!(
                        "unknown tool `{}` for agent `{}` (it is a tool of {})",
                        call.tool,
                        call.session.agent,
                        backticked(&agents)
                    ),
                    rec.steps,
                );
            }
        };
        let tool: &RegisteredTool = &tool;
        rec.push(Step::Lookup, Outcome::Pass, || {
            if tool.offline {
                format!(
                    "`{}` resolved offline from the manifest of server `{}` (nothing connected)",
                    tool.name,
                    tool.source.server()
                )
            } else {
                format!("`{}` is registered ({})", tool.name, tool.source.describe())
            }
        });
        // 2. scope
        if !call.session.scopes.contains(&tool.scope) {
            return Evaluation::rejected(
                &call.tool,
                Step::Scope,
                format!(
                    "scope `{}` is not granted to this session (granted: {})",
                    tool.scope,
                    call.session
                        .scopes
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                rec.steps,
            );
        }
        rec.push(Step::Scope, Outcome::Pass, || {
            format!("scope `{}` is granted", tool.scope)
        });
        // 3. validate
        if let Err(why) = tool.validate(&call.args) {
            return Evaluation::rejected(&call.tool, Step::Validate, why, rec.steps);
        }
        rec.push(Step::Validate, Outcome::Pass, || {
            if tool.offline {
                "not checked: the server is not connected, so its parameters are not known".into()
            } else {
                "the arguments match the parameters".into()
            }
        });

        let session = self.session_cel(&call.session);
        let (tool_value, tool_sizes) = tool.cel_value();
        let vars = cel::Vars {
            tool: tool_value.clone(),
            args: ::cel::Value::Null,
            session: session.session.clone(),
            workspace: session.workspace.clone(),
        };
        cel::functions::begin_call();
        let mut scope =
            cel::Scope::with_measured(&self.root, &vars, &call.args, *tool_sizes, session.sizes);
        let mut matched = Vec::new();
        let mut errors = Vec::new();

        // 4. effects: computed once, only when a rule reads `call`, the tool can
        // change files and the policy's own files are guarded, or `explain` asks.
        let fx = if tool.needs_effects
            || always_effects
            || (tool.effects.as_ref().is_some_and(|e| e.can_write()) && !self.guarded().is_empty())
        {
            let fx = self.effects_of(tool, &scope, call);
            scope.bind_call(effects_cel(&fx));
            Some(fx)
        } else {
            None
        };
        rec.push(Step::Effects, Outcome::Pass, || match &fx {
            None => "not computed: no rule of this tool reads `call`".into(),
            Some(f) => describe_effects(f),
        });

        // Conditions that are plain tests of arguments are decided together;
        // each rule they leave open is evaluated on its own. (Not while the
        // planned evaluator is off: then every rule is the `cel` crate's.)
        let batches = cel::planned().then(|| self.batches(tool));
        let mut decided = Vec::new();

        // 4. reject
        let mut first_reject: Option<&Arc<Rule>> = None;
        if let Some(b) = batches {
            b.reject.decide(&scope, &mut decided);
        }
        for (i, rule) in tool.reject.iter().enumerate() {
            if matches(&decided, i, &scope, rule, &mut errors) {
                matched.push(matched_rule(rule));
                // The lowest id gives the message, so rule order never changes it.
                if first_reject.is_none_or(|f| rule.id < f.id) {
                    first_reject = Some(rule);
                }
            }
        }
        if let Some(rule) = first_reject {
            let detail = format!(
                "reject rule `{}`: {}",
                rule.id,
                rule.reason.as_deref().unwrap_or("rejected")
            );
            let mut ev = Evaluation::rejected(&call.tool, Step::Reject, detail, rec.steps);
            matched.sort();
            errors.sort();
            ev.matched = matched;
            ev.errors = errors;
            ev.effects = fx;
            return ev;
        }
        rec.push(Step::Reject, Outcome::Pass, || {
            if tool.reject.is_empty() {
                "the tool has no reject rules".into()
            } else {
                format!("none of {} reject rules matched", tool.reject.len())
            }
        });

        // 5. permission
        let static_permission = tool.safety.permission;
        rec.push(
            Step::Permission,
            Decision::from(static_permission).into(),
            || {
                format!(
                    "static permission `{static_permission}` from {}{}",
                    tool.source.safety_origin(),
                    tool.safety
                        .reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                )
            },
        );

        // 6. relax: only a `prompt` can relax, so other permissions skip the rules.
        let mut relaxed_by = Vec::new();
        let mut relax_blocked = Vec::new();
        if Relaxation::for_permission(static_permission).is_some() {
            if let Some(b) = batches {
                b.relax.decide(&scope, &mut decided);
            }
            for (i, rule) in tool.relax.iter().enumerate() {
                // Relaxation needs certainty: a rule over `call` never relaxes a
                // call whose effects are not exactly known.
                // A rule that reads `call.confined` may relax a confined call
                // all the same: the kernel, not the prediction, holds it.
                if rule.when.reads_call
                    && let Some(f) = fx
                        .as_ref()
                        .filter(|f| !(f.exact || (f.confined && reads_confined(&rule.when.source))))
                {
                    relax_blocked.push((
                        rule.id.clone(),
                        f.unknown
                            .first()
                            .cloned()
                            .unwrap_or_else(|| "the effects are not exactly known".into()),
                    ));
                    continue;
                }
                if matches(&decided, i, &scope, rule, &mut errors) {
                    matched.push(matched_rule(rule));
                    relaxed_by.push(rule.id.clone());
                }
            }
        }
        let effective = relax(static_permission, !relaxed_by.is_empty());
        relaxed_by.sort();
        rec.push(Step::Relax, Decision::from(effective).into(), || match static_permission {
                Permission::Deny => "`deny` is never relaxed".into(),
                Permission::Allow => "already `allow`".into(),
                Permission::Prompt if relaxed_by.is_empty() => {
                    if tool.relax.is_empty() {
                        "no relax rule applies to this tool".into()
                    } else if !relax_blocked.is_empty() {
                        format!(
                            "none of {} relax rules matched; {} not applied because the effects are not exactly known ({})",
                            tool.relax.len(),
                            relax_blocked
                                .iter()
                                .map(|(id, _)| format!("`{id}`"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            relax_blocked[0].1
                        )
                    } else {
                        format!("none of {} relax rules matched", tool.relax.len())
                    }
                }
                Permission::Prompt => format!(
                    "`prompt` relaxed to `allow` by {}",
                    relaxed_by
                        .iter()
                        .map(|i| format!("`{i}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });

        // 7. sandbox: the strictest of the effective permission and every matching rule.
        let mut decision = Decision::from(effective);
        let mut reason = if effective == Permission::Allow && !relaxed_by.is_empty() {
            // A rule that holds without confinement says more than one that
            // leans on it: its reason is shown first.
            let relaxing = |r: &&Arc<Rule>| relaxed_by.contains(&r.id);
            let mut by: Vec<&Arc<Rule>> = tool.relax.iter().filter(relaxing).collect();
            by.sort_by_key(|r| (reads_confined(&r.when.source), r.id.clone()));
            by.first().and_then(|r| r.reason.clone())
        } else {
            tool.safety.reason.clone()
        };
        let mut strictest: Option<&Arc<Rule>> = None;
        let mut sandbox_hits = Vec::new();
        if let Some(b) = batches {
            b.sandbox.decide(&scope, &mut decided);
        }
        for (i, rule) in tool.sandbox.iter().enumerate() {
            if matches(&decided, i, &scope, rule, &mut errors) {
                matched.push(matched_rule(rule));
                sandbox_hits.push(rule.id.clone());
                // Ties are broken by id, so rule order never changes the reason shown.
                let stricter = match strictest {
                    None => true,
                    Some(s) => {
                        (rule.action, std::cmp::Reverse(&rule.id))
                            > (s.action, std::cmp::Reverse(&s.id))
                    }
                };
                if stricter {
                    strictest = Some(rule);
                }
            }
        }
        if let Some(rule) = strictest
            && rule.action >= decision
        {
            // The rule sets (or ties) the decision: its reason is the one to show.
            decision = rule.action;
            reason = rule.reason.clone();
        }
        // The policy's own files: no rule can let a call change them.
        let by_rules = decision;
        let own = fx.as_ref().and_then(|f| self.guarded_write(f));
        if let Some(path) = own
            && decision != Decision::Deny
        {
            decision = Decision::Deny;
            reason = Some(format!(
                "the call changes `{}`, where the policy governing this agent is read from",
                crate::effects::literal::snippet(path)
            ));
        }
        sandbox_hits.sort();
        rec.push(Step::Sandbox, decision.into(), || {
            let rules = if sandbox_hits.is_empty() {
                if tool.sandbox.is_empty() {
                    "no sandbox rule applies to this tool".to_string()
                } else {
                    format!("none of {} sandbox rules matched", tool.sandbox.len())
                }
            } else {
                format!(
                    "matched {}; the strictest is `{by_rules}`",
                    sandbox_hits
                        .iter()
                        .map(|i| format!("`{i}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            match own {
                Some(path) => format!(
                    "{rules}; it changes `{}`, where the policy is read from, so `deny`",
                    crate::effects::literal::snippet(path)
                ),
                None => rules,
            }
        });
        // 8. decision
        rec.push(Step::Decision, decision.into(), || {
            reason.clone().unwrap_or_else(|| format!("`{decision}`"))
        });
        matched.sort();
        errors.sort();
        Evaluation {
            tool: tool.name.clone(),
            decision,
            static_permission: Some(static_permission),
            effective_permission: Some(effective),
            reject_reason: None,
            reason,
            matched,
            steps: rec.steps,
            errors,
            effects: fx,
            relax_blocked,
        }
    }

    /// Computes a call's effects from its tool's `effects:` expressions.
    fn effects_of(&self, tool: &RegisteredTool, scope: &cel::Scope<'_>, call: &Call) -> Effects {
        let env = effects::Env {
            catalog: self.catalog(),
            home: &self.settings().home,
            workspace: &call.session.workspace,
        };
        let Some(te) = &tool.effects else {
            let mut fx = effects::compute(&effects::Input::default(), &env);
            fx.inexact(
                crate::effects::Reason::NoEffects,
                format!("tool `{}` declares no effects", tool.name),
            );
            return fx;
        };
        let mut fx = effects::compute(&eval_effects(scope, te), &env);
        // Only a script runs through `zero-policy run`: a tool that reads or
        // writes files itself runs in the agent, unconfined.
        fx.confined = call.confined && te.shell.is_some();
        if let Some((host, credentials)) = &self.host {
            let workspace = effects::paths::clean(&effects::paths::escape(&call.session.workspace));
            let ground = effects::ground::Ground {
                host,
                credentials,
                workspace: &workspace,
                home: &self.settings().home,
            };
            fx.grounding = Some(effects::ground::ground(&mut fx, &ground));
        }
        fx
    }

    /// Runs one call through the whole path: decide, resolve `prompt`, run, scrub.
    ///
    /// `approver` is asked when the decision is `prompt`; without one,
    /// `settings.on_prompt` decides (`deny`, or `ask` which still needs an approver).
    pub async fn dispatch(&self, call: &Call, approver: Option<&dyn Approver>) -> Dispatched {
        match approver {
            Some(a) => self.dispatch_asking(call, Some(&SyncApprover(a))).await,
            None => self.dispatch_asking(call, None).await,
        }
    }

    /// As [`Registry::dispatch`], with an approver that asks asynchronously
    /// (the gateway asks the person through MCP elicitation).
    pub async fn dispatch_asking(
        &self,
        call: &Call,
        approver: Option<&dyn AsyncApprover>,
    ) -> Dispatched {
        let mut evaluation = self.decide_call(call);
        let result = self.run_decided(call, &evaluation, approver).await;
        // The evaluation leaves too, and its texts may quote the arguments.
        crate::runtime::scrub_evaluation(self.scrubber(), &mut evaluation);
        let result = match result {
            Ok(mut out) => {
                crate::runtime::scrub_output(self.scrubber(), &mut out);
                Ok(out)
            }
            Err(e) => Err(crate::runtime::scrub_error(self.scrubber(), e)),
        };
        Dispatched { evaluation, result }
    }

    async fn run_decided(
        &self,
        call: &Call,
        evaluation: &Evaluation,
        approver: Option<&dyn AsyncApprover>,
    ) -> Result<ToolOutput, ToolError> {
        let tool: &RegisteredTool = match (evaluation.decision, self.get(&call.tool)) {
            (Decision::Reject, _) | (_, None) => {
                return Err(ToolError::Rejected(
                    evaluation
                        .reject_reason
                        .clone()
                        .unwrap_or_else(|| "rejected".into()),
                ));
            }
            (Decision::Deny, _) => {
                return Err(ToolError::Denied(
                    evaluation
                        .reason
                        .clone()
                        .unwrap_or_else(|| "denied by policy".into()),
                ));
            }
            (Decision::Prompt, Some(tool)) => {
                let approved = match (approver, self.settings().on_prompt) {
                    (Some(a), _) => a.approve(tool, call, evaluation).await,
                    (None, OnPrompt::Deny | OnPrompt::Ask) => false,
                };
                if !approved {
                    return Err(ToolError::NotApproved(
                        evaluation
                            .reason
                            .clone()
                            .unwrap_or_else(|| "the call needs approval".into()),
                    ));
                }
                tool
            }
            (Decision::Allow, Some(tool)) => tool,
        };
        tool.execute(call).await
    }
}

/// `a`, `b`: names for a message.
fn backticked(names: &[String]) -> String {
    names
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Evaluates a tool's effect expressions; a failure or a wrong type is an `Err`.
fn eval_effects(scope: &cel::Scope<'_>, te: &ToolEffects) -> effects::Input {
    let string = |e: &Option<cel::Expression>| {
        e.as_ref().map(|e| match scope.eval(e) {
            Ok(::cel::Value::String(s)) => Ok(s.to_string()),
            Ok(other) => Err(format!(
                "the expression gave {}, not a string",
                kind_of(&other)
            )),
            Err(err) => Err(err),
        })
    };
    let list = |e: &Option<cel::Expression>| {
        e.as_ref().map(|e| match scope.eval(e) {
            Ok(::cel::Value::String(s)) => Ok(vec![s.to_string()]),
            Ok(::cel::Value::List(items)) => items
                .iter()
                .map(|v| match v {
                    ::cel::Value::String(s) => Ok(s.to_string()),
                    other => Err(format!("the list holds {}, not a string", kind_of(other))),
                })
                .collect(),
            Ok(other) => Err(format!(
                "the expression gave {}, not a list",
                kind_of(&other)
            )),
            Err(err) => Err(err),
        })
    };
    effects::Input {
        shell: string(&te.shell),
        cwd: string(&te.cwd),
        reads: list(&te.reads),
        lists: list(&te.lists),
        writes: list(&te.writes),
        fetches: list(&te.fetches),
        patch: string(&te.patch),
        runs_code: te.runs_code.as_ref().map(|e| match scope.eval(e) {
            Ok(::cel::Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!(
                "the expression gave {}, not a bool",
                kind_of(&other)
            )),
            Err(err) => Err(err),
        }),
    }
}

fn kind_of(v: &::cel::Value) -> &'static str {
    match v {
        ::cel::Value::Null => "null",
        ::cel::Value::Bool(_) => "a bool",
        ::cel::Value::Int(_) | ::cel::Value::UInt(_) | ::cel::Value::Float(_) => "a number",
        ::cel::Value::String(_) => "a string",
        ::cel::Value::List(_) => "a list",
        ::cel::Value::Map(_) => "a map",
        _ => "a value of another type",
    }
}

/// The `call` variable's JSON: every field of SPEC §4.1.
#[must_use]
pub fn effects_json(fx: &Effects) -> serde_json::Value {
    serde_json::to_value(fx).unwrap_or(serde_json::Value::Null)
}

/// The `call` variable: [`effects_json`]'s value as CEL, built directly
/// rather than through JSON (a number is an `int`, as `cel::json` reads a
/// JSON integer).
#[must_use]
pub fn effects_cel(fx: &Effects) -> ::cel::Value {
    use ::cel::Value as V;
    use ::cel::objects::{Key, Map};
    fn s(v: &str) -> V {
        V::String(Arc::new(v.to_string()))
    }
    fn strings(v: &[String]) -> V {
        V::List(Arc::new(v.iter().map(|x| s(x)).collect()))
    }
    fn map<const N: usize>(fields: [(&str, V); N]) -> V {
        let mut m = std::collections::HashMap::with_capacity(N);
        for (k, v) in fields {
            m.insert(Key::String(Arc::new(k.to_string())), v);
        }
        V::Map(Map { map: Arc::new(m) })
    }
    fn fetches(v: &[effects::Fetch]) -> V {
        V::List(Arc::new(
            v.iter()
                .map(|f| {
                    let effects::Fetch {
                        url,
                        scheme,
                        host,
                        port,
                        path,
                    } = f;
                    map([
                        ("url", s(url)),
                        ("scheme", s(scheme)),
                        ("host", s(host)),
                        ("port", port.map_or(V::Null, |p| V::Int(i64::from(p)))),
                        ("path", s(path)),
                    ])
                })
                .collect(),
        ))
    }
    // Destructured, so that a field added to the effects is a compile error
    // here rather than missing from `call`.
    let command = |c: &effects::Command| {
        let effects::Command {
            program,
            path,
            argv,
            cwd,
            wrappers,
            known,
            read_only,
            exact,
            subcommand,
            options,
            operands,
            tags,
            reads,
            lists,
            writes,
            deletes,
            fetches: fetched,
            runs_code,
            fetched_input,
        } = c;
        map([
            ("program", s(program)),
            ("path", s(path)),
            ("argv", strings(argv)),
            ("cwd", s(cwd)),
            ("wrappers", strings(wrappers)),
            ("known", V::Bool(*known)),
            ("read_only", V::Bool(*read_only)),
            ("exact", V::Bool(*exact)),
            ("subcommand", s(subcommand)),
            ("options", strings(options)),
            ("operands", strings(operands)),
            ("tags", strings(tags)),
            ("reads", strings(reads)),
            ("lists", strings(lists)),
            ("writes", strings(writes)),
            ("deletes", strings(deletes)),
            ("fetches", fetches(fetched)),
            ("runs_code", V::Bool(*runs_code)),
            ("fetched_input", V::Bool(*fetched_input)),
        ])
    };
    let Effects {
        commands,
        reads,
        lists,
        writes,
        deletes,
        paths,
        fetches: fetched,
        runs_code,
        exact,
        unknown,
        inexact,
        confined,
        grounding: _,
    } = fx;
    map([
        (
            "commands",
            V::List(Arc::new(commands.iter().map(command).collect())),
        ),
        ("reads", strings(reads)),
        ("lists", strings(lists)),
        ("writes", strings(writes)),
        ("deletes", strings(deletes)),
        ("paths", strings(paths)),
        ("fetches", fetches(fetched)),
        ("runs_code", V::Bool(*runs_code)),
        ("exact", V::Bool(*exact)),
        ("unknown", strings(unknown)),
        (
            "inexact",
            V::List(Arc::new(inexact.iter().map(|r| s(r.code())).collect())),
        ),
        ("confined", V::Bool(*confined)),
    ])
}

/// Whether an expression reads `call.confined` (and so relies on confinement
/// rather than on an exact prediction).
fn reads_confined(source: &str) -> bool {
    source.match_indices("call.confined").any(|(i, m)| {
        !source[i + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !source[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// One sentence for the effects step.
fn describe_effects(fx: &Effects) -> String {
    let mut parts = Vec::new();
    if !fx.commands.is_empty() {
        parts.push(format!(
            "{} command{}",
            fx.commands.len(),
            if fx.commands.len() == 1 { "" } else { "s" }
        ));
    }
    for (n, what) in [
        (fx.reads.len(), "read"),
        (fx.lists.len(), "listing"),
        (fx.writes.len(), "write"),
        (fx.fetches.len(), "fetch"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}{}", if n == 1 { "" } else { "s" }));
        }
    }
    if fx.runs_code {
        parts.push("runs code".into());
    }
    let what = if parts.is_empty() {
        "no effects".to_string()
    } else {
        parts.join(", ")
    };
    if fx.exact {
        format!("{what}; exact")
    } else {
        format!(
            "{what}; not exact: {}",
            fx.unknown.first().cloned().unwrap_or_default()
        )
    }
}

/// Decides `prompt` decisions at run time: a person, or a client that asks one.
pub trait Approver: Send + Sync {
    /// True to let the call run.
    fn approve(&self, tool: &RegisteredTool, call: &Call, evaluation: &Evaluation) -> bool;
}

/// Decides `prompt` decisions at run time, asynchronously (a client asked over
/// the network).
pub trait AsyncApprover: Send + Sync {
    /// True to let the call run.
    fn approve<'a>(
        &'a self,
        tool: &'a RegisteredTool,
        call: &'a Call,
        evaluation: &'a Evaluation,
    ) -> crate::runtime::BoxFuture<'a, bool>;
}

/// A synchronous approver, asked from the asynchronous path.
struct SyncApprover<'s>(&'s dyn Approver);

impl AsyncApprover for SyncApprover<'_> {
    fn approve<'a>(
        &'a self,
        tool: &'a RegisteredTool,
        call: &'a Call,
        evaluation: &'a Evaluation,
    ) -> crate::runtime::BoxFuture<'a, bool> {
        let approved = self.0.approve(tool, call, evaluation);
        Box::pin(std::future::ready(approved))
    }
}

/// The outcome of [`Registry::dispatch`]: the decision and what running gave.
#[derive(Debug)]
pub struct Dispatched {
    /// The decision and its account.
    pub evaluation: Evaluation,
    /// The tool's scrubbed output, or a scrubbed error.
    pub result: Result<ToolOutput, ToolError>,
}
