//! zero-policy side by side with Cedar and a hand-written decider, on the
//! issue's workload: 200 tools, 1,000 rules (~50 per tool, 20 tool groups),
//! 10,000 calls. Prints figures; asserts nothing about time, only that every
//! decider decides every call the same.
//!
//! `cargo run --release` in `benches/peers` (add `-- --quick` for a short run).
//!
//! The rules are rendered three ways from one description
//! (`benches/shared/workload.rs`, also used by `cargo bench --bench decide`):
//!
//! - zero-policy: a manifest and a policy file, loaded as `zero-policy` loads files;
//! - Cedar, "sliced": one `PolicySet` per tool group, chosen by the caller from
//!   the tool's name (what a well-tuned Cedar deployment does);
//! - Cedar, "single": one `PolicySet` with every rule, each scoped to its group
//!   with `resource in Group::"gN"`;
//!
//! and checked by hand by the native decider (plain loops over each tool's rules).
//!
//! How zero-policy's decision maps onto Cedar's allow/deny (one authorization
//! per call):
//!
//! - a `deny` rule is a `forbid`: when one matches, Cedar denies and names it;
//! - a `prompt` rule is a `permit` annotated `@zp("prompt")`;
//! - a relax rule is a `permit` annotated `@zp("relax")`: it can only lift the
//!   tool's `prompt` to `allow`, never past a `forbid` or a prompt rule;
//! - the tool's static permission is the fallback: one `@zp("base")` permit
//!   satisfied when `resource.allow` (every third tool).
//!
//! So: Cedar deny with a determining policy → deny; deny with none → prompt (a
//! prompt tool that no relax rule lifted); allow with a `@zp("prompt")` policy
//! among the determining ones → prompt; any other allow → allow. That is
//! zero-policy's "the strictest of the relaxed permission and every matching
//! rule".
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "benchmark harness: a failed set-up is a bug in the harness"
)]

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::str::FromStr;
use std::time::{Duration, Instant};

use cedar_policy::{
    Authorizer, Context, Entities, Entity, EntityUid, PolicyId, PolicySet, Request,
    RestrictedExpression,
};
use zero_policy::dispatch::Call;
use zero_policy::model::Decision;
use zero_policy::registry::Registry;

#[path = "../../shared/workload.rs"]
mod workload;
use workload::{
    Cond, Native, NativeArgs, W_GROUPS, W_RULES, W_TOOLS, WRule, base_allow, quoted_list,
    registry_of, tool_name, workload_calls, workload_files, workload_rules, workload_zp_calls,
};

/// A generated call: tool index, arguments, session mode.
type WCall = (usize, NativeArgs, &'static str);

// ---- Cedar rendering ----

/// One rule's condition in Cedar, over `context.{path, command, user, n, mode}`.
///
/// Cedar has neither globs nor regular expressions; each rendering decides the
/// generated calls as the original does (checked before anything is timed):
///
/// - `glob("/data/R/**", path)` → `context.path like "/data/R/*"`. Cedar's `*`
///   also crosses `/`, as `**` does here; the two differ only on `/data/R/`
///   itself, which no call has.
/// - `command.contains("danger-R") || path.startsWith("/srv/R/")` →
///   `like "*danger-R*" || like "/srv/R/*"`: exact.
/// - `command.matches("^rm\s+-rf\s+/xR\b")` → `== "rm -rf /xR" || like
///   "rm -rf /xR *"`: an approximation. Cedar cannot say "one or more blanks"
///   or "a word boundary", so this holds for single spaces and a boundary at
///   the end or before a space only; the generated commands are exactly
///   `rm -rf /xN`, where both agree.
/// - `user in [..]` → `[..].contains(context.user)`: exact.
/// - `session.mode == "plan" && n > R` → the same over `context.mode`: exact.
fn cedar_cond(cond: &Cond) -> String {
    match cond {
        Cond::Glob(g, _) => {
            let prefix = g.strip_suffix("**").expect("globs are `/data/R/**`");
            format!("context.path like \"{prefix}*\"")
        }
        Cond::ContainsOrPrefix(c, p) => {
            format!("context.command like \"*{c}*\" || context.path like \"{p}*\"")
        }
        Cond::Regex(re, _) => {
            let r = re
                .strip_prefix("^rm\\s+-rf\\s+/x")
                .and_then(|s| s.strip_suffix("\\b"))
                .expect("regexes are `^rm\\s+-rf\\s+/xR\\b`");
            format!(
                "context.command == \"rm -rf /x{r}\" || context.command like \"rm -rf /x{r} *\""
            )
        }
        Cond::InList(items) => format!("[{}].contains(context.user)", quoted_list(items)),
        Cond::Session(n) => format!("context.mode == \"plan\" && context.n > {n}"),
    }
}

/// The fallback: a tool whose static permission is `allow`.
const BASE: &str = "@zp(\"base\")\npermit(principal, action == Action::\"call\", resource)\nwhen { resource.allow };\n";

/// One rule as a Cedar policy; `scoped` adds `resource in Group::"gN"`.
fn cedar_policy(rule: &WRule, scoped: bool, out: &mut String) {
    let (effect, kind) = match (rule.relax, rule.deny) {
        (true, _) => ("permit", "relax"),
        (false, true) => ("forbid", "deny"),
        (false, false) => ("permit", "prompt"),
    };
    let resource = if scoped {
        format!("resource in Group::\"g{}\"", rule.group)
    } else {
        "resource".to_string()
    };
    writeln!(
        out,
        "@rule(\"{}\")\n@zp(\"{kind}\")\n{effect}(principal, action == Action::\"call\", {resource})\nwhen {{ {} }};",
        rule.id,
        cedar_cond(&rule.cond)
    )
    .unwrap();
}

/// Every rule in one text, each scoped to its group, and the fallback.
fn cedar_single_text(rules: &[WRule]) -> String {
    let mut out = String::from(BASE);
    for r in rules {
        cedar_policy(r, true, &mut out);
    }
    out
}

/// One text per tool group: that group's rules (no scope needed) and the fallback.
fn cedar_sliced_texts(rules: &[WRule]) -> Vec<String> {
    let mut out = vec![String::from(BASE); W_GROUPS];
    for r in rules {
        cedar_policy(r, false, &mut out[r.group]);
    }
    out
}

/// The tools as entities: `Tool::"tI_gN"` with `allow` and parent `Group::"gN"`.
fn cedar_entities() -> Entities {
    let tools = (0..W_TOOLS).map(|i| {
        let attrs = HashMap::from([(
            "allow".to_string(),
            RestrictedExpression::new_bool(base_allow(i)),
        )]);
        let parents = HashSet::from([group_uid(i % W_GROUPS)]);
        Entity::new(tool_uid(i), attrs, parents).unwrap()
    });
    let groups = (0..W_GROUPS).map(|g| Entity::new_no_attrs(group_uid(g), HashSet::new()));
    Entities::from_entities(tools.chain(groups), None).unwrap()
}

fn tool_uid(i: usize) -> EntityUid {
    EntityUid::from_str(&format!("Tool::\"{}\"", tool_name(i))).unwrap()
}

fn group_uid(g: usize) -> EntityUid {
    EntityUid::from_str(&format!("Group::\"g{g}\"")).unwrap()
}

/// A Cedar decider: one or more policy sets, the entities, and which policies
/// are prompt rules.
struct Cedar {
    /// One set (single) or one per group (sliced).
    sets: Vec<PolicySet>,
    /// Per set, the ids of its `@zp("prompt")` policies.
    prompt: Vec<HashSet<PolicyId>>,
    entities: Entities,
    authorizer: Authorizer,
    principal: EntityUid,
    action: EntityUid,
    tools: Vec<EntityUid>,
}

impl Cedar {
    fn new(texts: &[String]) -> Cedar {
        let sets: Vec<PolicySet> = texts
            .iter()
            .map(|t| PolicySet::from_str(t).unwrap_or_else(|e| panic!("{e:?}")))
            .collect();
        let prompt = sets
            .iter()
            .map(|s| {
                s.policies()
                    .filter(|p| p.annotation("zp") == Some("prompt"))
                    .map(|p| p.id().clone())
                    .collect()
            })
            .collect();
        Cedar {
            sets,
            prompt,
            entities: cedar_entities(),
            authorizer: Authorizer::new(),
            principal: EntityUid::from_str("Agent::\"agent\"").unwrap(),
            action: EntityUid::from_str("Action::\"call\"").unwrap(),
            tools: (0..W_TOOLS).map(tool_uid).collect(),
        }
    }

    /// The set that decides `tool`.
    fn set_of(&self, tool: usize) -> usize {
        if self.sets.len() == 1 {
            0
        } else {
            tool % W_GROUPS
        }
    }

    /// The request for one call, built from its arguments and session.
    fn request(&self, tool: usize, a: &NativeArgs, mode: &str) -> Request {
        let context = Context::from_pairs([
            (
                "path".to_string(),
                RestrictedExpression::new_string(a.path.clone()),
            ),
            (
                "command".to_string(),
                RestrictedExpression::new_string(a.command.clone()),
            ),
            (
                "user".to_string(),
                RestrictedExpression::new_string(a.user.clone()),
            ),
            ("n".to_string(), RestrictedExpression::new_long(a.n)),
            (
                "mode".to_string(),
                RestrictedExpression::new_string(mode.to_string()),
            ),
        ])
        .unwrap();
        Request::new(
            self.principal.clone(),
            self.action.clone(),
            self.tools[tool].clone(),
            context,
            None,
        )
        .unwrap()
    }

    /// From the call to the decision: build the request, authorize, map.
    fn decide(&self, tool: usize, a: &NativeArgs, mode: &str) -> Decision {
        self.decide_request(tool, &self.request(tool, a, mode)).0
    }

    /// Authorize a built request; the decision and the number of evaluation errors.
    fn decide_request(&self, tool: usize, request: &Request) -> (Decision, usize) {
        let set = self.set_of(tool);
        let response = self
            .authorizer
            .is_authorized(request, &self.sets[set], &self.entities);
        let diagnostics = response.diagnostics();
        let decision = match response.decision() {
            cedar_policy::Decision::Deny if diagnostics.reason().next().is_some() => Decision::Deny,
            cedar_policy::Decision::Deny => Decision::Prompt,
            cedar_policy::Decision::Allow
                if diagnostics.reason().any(|id| self.prompt[set].contains(id)) =>
            {
                Decision::Prompt
            }
            cedar_policy::Decision::Allow => Decision::Allow,
        };
        (decision, diagnostics.errors().count())
    }
}

// ---- timing ----

fn stats(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let n = times.len();
    (
        times[n / 2].as_secs_f64() * 1e6,
        times[(n * 99 / 100).min(n - 1)].as_secs_f64() * 1e6,
    )
}

/// Times `decide` on every call once.
fn time_calls<T>(calls: &[T], mut decide: impl FnMut(&T) -> Decision) -> Vec<Duration> {
    calls
        .iter()
        .map(|c| {
            let t = Instant::now();
            std::hint::black_box(decide(std::hint::black_box(c)));
            t.elapsed()
        })
        .collect()
}

/// The median of `reps` runs of `f`, in ms.
fn median_ms(reps: usize, mut f: impl FnMut() -> Duration) -> f64 {
    let mut times: Vec<Duration> = (0..reps).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn zero_policy_registry(rules: &[WRule]) -> Registry {
    registry_of(workload_files(rules))
}

/// Every decider decides every call the same, or the process ends here.
fn check_agreement(
    calls: &[WCall],
    zp_calls: &[Call],
    native: &Native,
    registry: &Registry,
    sliced: &Cedar,
    single: &Cedar,
) -> [usize; 3] {
    let mut counts = [0; 3];
    for (k, ((tool, a, mode), c)) in calls.iter().zip(zp_calls).enumerate() {
        let (n, _) = native.decide(*tool, a, mode);
        let ev = registry.decide_call(c);
        assert_eq!(registry.evaluate(c).decision, ev.decision, "{c:?}");
        let (s, s_errors) = sliced.decide_request(*tool, &sliced.request(*tool, a, mode));
        let (g, g_errors) = single.decide_request(*tool, &single.request(*tool, a, mode));
        if !ev.errors.is_empty() || s_errors + g_errors > 0 || [ev.decision, s, g] != [n; 3] {
            eprintln!(
                "the deciders disagree on call #{k}: tool {}, args {}, session mode {mode}\n  native {n}, zero-policy {} (errors {:?}), cedar sliced {s} ({s_errors} errors), cedar single {g} ({g_errors} errors)",
                c.tool, c.args, ev.decision, ev.errors
            );
            std::process::exit(1);
        }
        counts[n as usize] += 1;
    }
    counts
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 1 } else { 5 };
    let load_reps = if quick { 1 } else { 5 };

    let rules = workload_rules(W_RULES);
    let registry = zero_policy_registry(&rules);
    let sliced = Cedar::new(&cedar_sliced_texts(&rules));
    let single = Cedar::new(&[cedar_single_text(&rules)]);
    let relax = rules.iter().filter(|r| r.relax).count();
    let deny = rules.iter().filter(|r| !r.relax && r.deny).count();
    let native = Native::new(rules);
    let calls = workload_calls();
    let zp_calls = workload_zp_calls(&calls);

    let [allow, prompt, denied] =
        check_agreement(&calls, &zp_calls, &native, &registry, &sliced, &single);
    println!(
        "workload: {W_TOOLS} tools in {W_GROUPS} groups, {W_RULES} rules ({deny} deny, {} prompt, {relax} relax), {} calls",
        W_RULES - deny - relax,
        calls.len()
    );
    println!(
        "all four deciders agree on every call: {allow} allow, {prompt} prompt, {denied} deny"
    );
    println!("per decision, {rounds} round(s) of {} calls:", calls.len());

    let sliced_requests: Vec<(usize, Request)> = calls
        .iter()
        .map(|(tool, a, mode)| (*tool, sliced.request(*tool, a, mode)))
        .collect();
    let single_requests: Vec<(usize, Request)> = calls
        .iter()
        .map(|(tool, a, mode)| (*tool, single.request(*tool, a, mode)))
        .collect();

    // Round by round, each decider over every call in turn, so that a slow
    // moment of the machine falls on all of them alike.
    let mut t: [Vec<Duration>; 7] = Default::default();
    for _ in 0..rounds {
        t[0].extend(time_calls(&calls, |(tool, a, mode)| {
            native.decide(*tool, a, mode).0
        }));
        t[1].extend(time_calls(&zp_calls, |c| registry.decide_call(c).decision));
        t[6].extend(time_calls(&zp_calls, |c| registry.evaluate(c).decision));
        t[2].extend(time_calls(&calls, |(tool, a, mode)| {
            sliced.decide(*tool, a, mode)
        }));
        t[3].extend(time_calls(&calls, |(tool, a, mode)| {
            single.decide(*tool, a, mode)
        }));
        t[4].extend(time_calls(&sliced_requests, |(tool, r)| {
            sliced.decide_request(*tool, r).0
        }));
        t[5].extend(time_calls(&single_requests, |(tool, r)| {
            single.decide_request(*tool, r).0
        }));
    }
    let [
        native_t,
        zp_t,
        sliced_t,
        single_t,
        sliced_auth_t,
        single_auth_t,
        zp_account_t,
    ] = t.map(stats);
    let line = |name: &str, (m, p): (f64, f64)| {
        println!("  {name:<52} median {m:>8.2} µs   p99 {p:>8.2} µs");
    };
    line("native Rust decider", native_t);
    line(
        "zero-policy (Registry::decide_call, the front doors')",
        zp_t,
    );
    line(
        "zero-policy (Registry::evaluate, with the step account)",
        zp_account_t,
    );
    line("Cedar sliced (build request + authorize)", sliced_t);
    line("Cedar single (build request + authorize)", single_t);
    line("Cedar sliced (authorize a built request)", sliced_auth_t);
    line("Cedar single (authorize a built request)", single_auth_t);
    println!(
        "  median ratios: zero-policy/native {:.2}×   zero-policy/Cedar-sliced {:.2}×   zero-policy/Cedar-single {:.2}×",
        zp_t.0 / native_t.0,
        zp_t.0 / sliced_t.0,
        zp_t.0 / single_t.0
    );
    println!(
        "  p99 ratios:    zero-policy/native {:.2}×   zero-policy/Cedar-sliced {:.2}×   zero-policy/Cedar-single {:.2}×",
        zp_t.1 / native_t.1,
        zp_t.1 / sliced_t.1,
        zp_t.1 / single_t.1
    );

    println!("load (median of {load_reps}):");
    for n in [W_RULES, 10 * W_RULES] {
        let rules = workload_rules(n);
        let zp = median_ms(load_reps, || {
            let files = workload_files(&rules);
            let t = Instant::now();
            std::hint::black_box(registry_of(files));
            t.elapsed()
        });
        let single_text = cedar_single_text(&rules);
        let sliced_texts = cedar_sliced_texts(&rules);
        let single = median_ms(load_reps, || {
            let t = Instant::now();
            std::hint::black_box(PolicySet::from_str(&single_text).unwrap());
            t.elapsed()
        });
        let sliced = median_ms(load_reps, || {
            let t = Instant::now();
            for text in &sliced_texts {
                std::hint::black_box(PolicySet::from_str(text).unwrap());
            }
            t.elapsed()
        });
        println!(
            "  {n:>6} rules: zero-policy load+compile+registry {zp:>8.1} ms   Cedar parse single {single:>7.1} ms   sliced ({W_GROUPS} sets) {sliced:>7.1} ms   ratio zero-policy/Cedar-single {:.2}×",
            zp / single
        );
    }
}
