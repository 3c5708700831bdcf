//! The workload: 200 tools, 1,000 rules (~50 per tool), 10,000 calls.
//!
//! Shared by `benches/decide.rs` and the side-by-side crate `benches/peers`
//! (each includes it with `#[path = "..."] mod workload;`): the rules as data,
//! their rendering as zero-policy files, the hand-written native decider and
//! the call generator.

use std::fmt::Write as _;
use std::path::PathBuf;

use zero_policy::diagnostic::SourceFile;
use zero_policy::dispatch::{Call, Session};
use zero_policy::model::Decision;
use zero_policy::registry::Registry;

pub const W_TOOLS: usize = 200;
pub const W_RULES: usize = 1_000;
pub const W_GROUPS: usize = 20;

/// Loads rendered files and builds their registry; a file that does not load
/// stops the benchmark with its first diagnostic.
pub fn registry_of(files: Vec<SourceFile>) -> Registry {
    let loaded = zero_policy::loader::load_sources(files);
    let policy = loaded
        .policy
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics.first()));
    Registry::new(&policy).unwrap()
}

/// The name of tool `i`: `t{i}_g{group}`, so that `t*_gN` selects a group.
pub fn tool_name(i: usize) -> String {
    format!("t{i}_g{}", i % W_GROUPS)
}

/// Whether tool `i`'s static permission is `allow` (every third tool); else `prompt`.
pub fn base_allow(i: usize) -> bool {
    i.is_multiple_of(3)
}

/// One rule's condition, as data: rendered as CEL for zero-policy and checked
/// by hand for the native decider.
#[derive(Clone)]
pub enum Cond {
    /// `glob("/data/R/**", args.path)`
    Glob(String, globset::GlobMatcher),
    /// `args.command.contains("danger-R") || args.path.startsWith("/srv/R/")`
    ContainsOrPrefix(String, String),
    /// `args.command.matches("^rm\\s+-rf\\s+/xR\\b")`
    Regex(String, regex::Regex),
    /// `args.user in ["uR", "vR", "adminR"]`
    InList(Vec<String>),
    /// `session.mode == "plan" && args.n > R`
    Session(i64),
}

impl Cond {
    pub fn cel(&self) -> String {
        match self {
            Cond::Glob(g, _) => format!("glob(\"{g}\", args.path)"),
            Cond::ContainsOrPrefix(c, p) => {
                format!("args.command.contains(\"{c}\") || args.path.startsWith(\"{p}\")")
            }
            Cond::Regex(r, _) => format!("args.command.matches(\"{}\")", r.replace('\\', "\\\\")),
            Cond::InList(items) => format!("args.user in [{}]", quoted_list(items)),
            Cond::Session(n) => format!("session.mode == \"plan\" && args.n > {n}"),
        }
    }

    pub fn check(&self, a: &NativeArgs, mode: &str) -> bool {
        match self {
            Cond::Glob(_, m) => m.is_match(&a.path),
            Cond::ContainsOrPrefix(c, p) => {
                a.command.contains(c.as_str()) || a.path.starts_with(p.as_str())
            }
            Cond::Regex(_, r) => r.is_match(&a.command),
            Cond::InList(items) => items.contains(&a.user),
            Cond::Session(n) => mode == "plan" && a.n > *n,
        }
    }
}

pub struct WRule {
    pub id: String,
    pub relax: bool,
    pub deny: bool,
    pub group: usize,
    pub cond: Cond,
}

/// `rules` rules (the workload has [`W_RULES`]; the load benchmarks also render 10,000).
pub fn workload_rules(rules: usize) -> Vec<WRule> {
    (0..rules)
        .map(|r| {
            let cond = match r % 5 {
                0 => {
                    let g = format!("/data/{r}/**");
                    let m = globset::GlobBuilder::new(&g)
                        .literal_separator(true)
                        .build()
                        .unwrap()
                        .compile_matcher();
                    Cond::Glob(g, m)
                }
                1 => Cond::ContainsOrPrefix(format!("danger-{r}"), format!("/srv/{r}/")),
                2 => {
                    let re = format!("^rm\\s+-rf\\s+/x{r}\\b");
                    Cond::Regex(re.clone(), regex::Regex::new(&re).unwrap())
                }
                3 => Cond::InList(vec![format!("u{r}"), format!("v{r}"), format!("admin{r}")]),
                _ => Cond::Session(r as i64),
            };
            WRule {
                id: format!("r{r:04}"),
                relax: r % 10 == 7,
                deny: r % 2 == 0,
                group: r % W_GROUPS,
                cond,
            }
        })
        .collect()
}

pub fn workload_files(rules: &[WRule]) -> Vec<SourceFile> {
    let mut manifest = String::from("version: 1\ntools:\n");
    for i in 0..W_TOOLS {
        let perm = if base_allow(i) { "allow" } else { "prompt" };
        writeln!(
            manifest,
            "  - name: {}\n    description: generated tool {i}\n    scope: write\n    parameters:\n      type: object\n      properties:\n        path: {{type: string}}\n        command: {{type: string}}\n        user: {{type: string}}\n        n: {{type: integer}}\n      required: [path, command, user, n]\n    safety: {{side_effect: write, permission: {perm}, reason: generated}}",
            tool_name(i)
        )
        .unwrap();
    }
    let mut policy = String::from("version: 1\nrules:\n");
    let mut relax = String::from("relax:\n");
    for r in rules {
        let glob = format!("t*_g{}", r.group);
        let when = r.cond.cel().replace('\'', "\'\'");
        if r.relax {
            writeln!(
                relax,
                "  - id: {}\n    tools: [\"{glob}\"]\n    when: '{when}'\n    reason: generated",
                r.id
            )
            .unwrap();
        } else {
            let action = if r.deny { "deny" } else { "prompt" };
            writeln!(policy, "  - id: {}\n    tools: [\"{glob}\"]\n    when: '{when}'\n    action: {action}\n    reason: generated", r.id).unwrap();
        }
    }
    policy.push_str(&relax);
    vec![
        SourceFile::new(&PathBuf::from("work/manifest.yaml"), manifest),
        SourceFile::new(&PathBuf::from("work/policy.yaml"), policy),
    ]
}

pub struct NativeArgs {
    pub path: String,
    pub command: String,
    pub user: String,
    pub n: i64,
}

/// The hand-written decider of the same rules: per tool its rules, plain loops.
pub struct Native {
    /// Per tool: (static permission is prompt, allow?; relax rules; sandbox rules).
    tools: Vec<(bool, bool, Vec<usize>, Vec<usize>)>,
    rules: Vec<WRule>,
}

impl Native {
    pub fn new(rules: Vec<WRule>) -> Native {
        let tools = (0..W_TOOLS)
            .map(|i| {
                let g = i % W_GROUPS;
                let mine = |relax: bool| {
                    rules
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.group == g && r.relax == relax)
                        .map(|(k, _)| k)
                        .collect::<Vec<_>>()
                };
                (!base_allow(i), base_allow(i), mine(true), mine(false))
            })
            .collect();
        Native { tools, rules }
    }

    /// (decision, matched ids sorted)
    pub fn decide(&self, tool: usize, a: &NativeArgs, mode: &str) -> (Decision, Vec<&str>) {
        let (prompt, _, relax, sandbox) = &self.tools[tool];
        let mut matched = Vec::new();
        let mut decision = if *prompt {
            Decision::Prompt
        } else {
            Decision::Allow
        };
        if *prompt {
            for &k in relax {
                if self.rules[k].cond.check(a, mode) {
                    matched.push(self.rules[k].id.as_str());
                }
            }
            if !matched.is_empty() {
                decision = Decision::Allow;
            }
        }
        for &k in sandbox {
            let r = &self.rules[k];
            if r.cond.check(a, mode) {
                matched.push(r.id.as_str());
                let action = if r.deny {
                    Decision::Deny
                } else {
                    Decision::Prompt
                };
                decision = decision.max(action);
            }
        }
        matched.sort_unstable();
        (decision, matched)
    }
}

/// 10,000 calls: each tool, arguments that hit some of its rules and miss most.
pub fn workload_calls() -> Vec<(usize, NativeArgs, &'static str)> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    (0..10_000)
        .map(|_| {
            let tool = next(W_TOOLS as u64) as usize;
            let r = next(W_RULES as u64 + 200);
            let path = match next(3) {
                0 => format!("/data/{r}/file.txt"),
                1 => format!("/srv/{r}/x"),
                _ => format!("/home/dev/project/src/{r}.rs"),
            };
            let command = match next(3) {
                0 => format!("rm -rf /x{r}"),
                1 => format!("make danger-{r}"),
                _ => "cargo build".to_string(),
            };
            let user = match next(3) {
                0 => format!("u{r}"),
                1 => format!("admin{}", next(W_RULES as u64)),
                _ => "dev".to_string(),
            };
            let mode = if next(4) == 0 { "plan" } else { "ask" };
            (
                tool,
                NativeArgs {
                    path,
                    command,
                    user,
                    n: next(1200) as i64,
                },
                mode,
            )
        })
        .collect()
}

/// One generated call as zero-policy's [`Call`] to tool `tool`.
/// The items, each in double quotes, joined by `, ` (a CEL or Cedar list's inside).
pub fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("\"{i}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every workload call, as zero-policy's calls.
pub fn workload_zp_calls(calls: &[(usize, NativeArgs, &str)]) -> Vec<Call> {
    calls
        .iter()
        .map(|(tool, a, mode)| workload_call(*tool, a, mode))
        .collect()
}

pub fn workload_call(tool: usize, a: &NativeArgs, mode: &str) -> Call {
    Call {
        tool: tool_name(tool),
        args: serde_json::json!({"path": a.path, "command": a.command, "user": a.user, "n": a.n}),
        session: Session {
            workspace: "/home/dev/project".into(),
            mode: mode.to_string(),
            ..Session::default()
        },
        confined: false,
    }
}
