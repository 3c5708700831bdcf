//! Properties of the effects engine over random scripts, with the shipped policy.
//!
//! What is not known only widens what sandbox rules see and blocks relaxation,
//! so replacing any word of a script by an expansion can only make its decision
//! stricter, never looser.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;
use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::json;
use zero_policy::call::{Call, Session};
use zero_policy::{Decision, Registry, loader};

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let loaded = loader::load_paths(&[root.join("policies"), root.join("manifests")]).unwrap();
    Registry::new(&loaded.policy.unwrap()).unwrap()
});

const WORDS: &[&str] = &[
    "src",
    ".",
    "..",
    "/",
    "~",
    "target",
    ".env",
    "README.md",
    "/etc/passwd",
    "build",
    "a.txt",
    "-r",
    "-rf",
    "-f",
    "-la",
    "-n",
    "--force",
    "HEAD",
    "main",
    "https://example.com/x",
    "http://169.254.169.254/",
];
const PROGRAMS: &[&str] = &[
    "rm",
    "cat",
    "ls",
    "git",
    "cp",
    "mv",
    "grep",
    "find",
    "curl",
    "cd",
    "echo",
    "sudo",
    "timeout 5",
    "sh -c",
    "cargo",
    "chmod",
    "tee",
    "head",
    "xargs",
    "env",
];
const SUBCOMMANDS: &[&str] = &[
    "status", "log", "diff", "show", "reset", "push", "test", "build", "add",
];
const OPERATORS: &[&str] = &[" && ", " ; ", " | ", " || "];

fn decide(script: &str) -> Decision {
    let call = Call {
        tool: "bash".into(),
        args: json!({ "command": script }),
        session: Session {
            workspace: "/home/dev/project".into(),
            ..Session::default()
        },
        confined: false,
    };
    REGISTRY.evaluate(&call).decision
}

/// The evaluation of `script` as the shared shell tool, run confined or not.
fn evaluate(script: &str, confined: bool) -> zero_policy::Evaluation {
    let call = Call {
        tool: "bash".into(),
        args: json!({ "command": script }),
        session: Session {
            workspace: "/home/dev/project".into(),
            ..Session::default()
        },
        confined,
    };
    REGISTRY.evaluate(&call)
}

fn strictness(d: Decision) -> u8 {
    match d {
        Decision::Allow => 0,
        Decision::Prompt => 1,
        Decision::Deny | Decision::Reject => 2,
    }
}

/// A script as a list of commands, each a list of words.
fn script() -> impl Strategy<Value = (Vec<Vec<String>>, Vec<usize>)> {
    let command = (
        0..PROGRAMS.len(),
        proptest::option::of(0..SUBCOMMANDS.len()),
        proptest::collection::vec(0..WORDS.len(), 0..4),
    )
        .prop_map(|(p, sub, args)| {
            let mut words: Vec<String> = PROGRAMS[p].split(' ').map(str::to_string).collect();
            if let Some(s) = sub {
                words.push(SUBCOMMANDS[s].to_string());
            }
            words.extend(args.into_iter().map(|a| WORDS[a].to_string()));
            words
        });
    (
        proptest::collection::vec(command, 1..4),
        proptest::collection::vec(0..OPERATORS.len(), 3),
    )
}

fn render(commands: &[Vec<String>], ops: &[usize]) -> String {
    let mut s = String::new();
    for (i, c) in commands.iter().enumerate() {
        if i > 0 {
            s.push_str(OPERATORS[ops[i - 1] % OPERATORS.len()]);
        }
        s.push_str(&c.join(" "));
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn an_expansion_never_loosens_a_decision(
        (commands, ops) in script(),
        pick in any::<proptest::sample::Index>(),
        kind in 0usize..5,
    ) {
        let before = decide(&render(&commands, &ops));
        let total: usize = commands.iter().map(Vec::len).sum();
        let mut k = pick.index(total);
        let mut changed = commands.clone();
        'outer: for c in &mut changed {
            for w in c.iter_mut() {
                if k == 0 {
                    *w = match kind {
                        0 => "$X".to_string(),
                        1 => format!("\"$X\"{w}"),
                        2 => format!("$(echo {w})"),
                        3 => format!("{w}$Y"),
                        _ => format!("`printf %s {w}`"),
                    };
                    break 'outer;
                }
                k -= 1;
            }
        }
        let script = render(&changed, &ops);
        let after = decide(&script);
        prop_assert!(
            strictness(after) >= strictness(before),
            "`{}` is {:?} but `{}` is {:?}",
            render(&commands, &ops), before, script, after
        );
    }

    /// A call neither exact nor confined is never relaxed; a confined one only
    /// by rules that read `call.confined`; and confinement never makes a
    /// decision stricter.
    #[test]
    fn only_exact_or_confined_calls_relax(
        (commands, ops) in script(),
        pick in any::<proptest::sample::Index>(),
        expand in any::<bool>(),
    ) {
        let mut commands = commands;
        if expand {
            let total: usize = commands.iter().map(Vec::len).sum();
            let mut k = pick.index(total);
            'outer: for c in &mut commands {
                for w in c.iter_mut() {
                    if k == 0 {
                        *w = format!("{w}$X");
                        break 'outer;
                    }
                    k -= 1;
                }
            }
        }
        let script = render(&commands, &ops);
        let plain = evaluate(&script, false);
        let confined = evaluate(&script, true);
        let fx = plain.effects.clone().expect("effects");
        let relaxed = |ev: &zero_policy::Evaluation| {
            ev.static_permission == Some(zero_policy::Permission::Prompt)
                && ev.effective_permission == Some(zero_policy::Permission::Allow)
        };
        if !fx.exact {
            prop_assert!(!relaxed(&plain), "`{}` is not exact and not confined, yet relaxed", script);
        }
        if !fx.exact && relaxed(&confined) {
            for m in confined.matched.iter().filter(|m| m.kind == zero_policy::policy::RuleKind::Relax) {
                let rule = REGISTRY.get("bash").expect("bash").rules(zero_policy::policy::RuleKind::Relax).iter().find(|r| r.id == m.id).expect("rule");
                prop_assert!(rule.when.source.contains("call.confined"), "`{}` relaxed by `{}`", script, m.id);
            }
        }
        prop_assert!(strictness(confined.decision) <= strictness(plain.decision), "`{}`", script);
    }
}
