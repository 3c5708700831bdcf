//! Decision time of hook calls with and without grounding in the host, on a
//! real workspace (this repository, its `target/` included): the same
//! Claude Code calls decided by the shipped policy through the library, once
//! as `explain` decides them (no host) and once as `hook` does (grounded).
//! Prints figures; asserts nothing about time.
//!
//! `cargo bench --bench grounding` (`ZP_BENCH_RUNS=N` sets the runs per call, default 50).
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "benchmark harness")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zero_policy::call::{Call, Session};
use zero_policy::effects::ground::Host;
use zero_policy::{Registry, loader};

fn stats(mut t: Vec<Duration>) -> (f64, f64) {
    t.sort();
    let n = t.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(t[n / 2]), ms(t[(n * 9 / 10).min(n - 1)]))
}

fn main() {
    let runs: usize = std::env::var("ZP_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let loaded = loader::load_paths_for(
        &[root.join("policies/default.yaml"), root.join("manifests")],
        loader::Purpose::DecideFor("claude-code"),
    )
    .unwrap();
    let policy = loaded.policy.expect("the shipped policy loads");
    let plain = Registry::new(&policy).unwrap();
    let mut grounded = Registry::new(&policy).unwrap();
    grounded
        .ground_in_host(Host::default(), &policy.lists)
        .unwrap();
    let ws = root.to_str().unwrap().to_string();
    let calls: Vec<(&str, &str, Value)> = vec![
        (
            "Read src/lib.rs",
            "Read",
            json!({"file_path": format!("{ws}/src/lib.rs")}),
        ),
        (
            "Bash grep -rn TODO src",
            "Bash",
            json!({"command": "grep -rn TODO src"}),
        ),
        (
            "Grep TODO in src",
            "Grep",
            json!({"pattern": "TODO", "path": "src"}),
        ),
        (
            "Glob src/**/*.rs",
            "Glob",
            json!({"pattern": "src/**/*.rs"}),
        ),
        (
            "Bash rg TODO (whole repo)",
            "Bash",
            json!({"command": "rg TODO"}),
        ),
        (
            "Bash grep -r TODO . (whole repo)",
            "Bash",
            json!({"command": "grep -r TODO ."}),
        ),
    ];
    println!("decision time per call, {runs} runs each, workspace {ws}");
    println!(
        "{:<34} {:>12} {:>12} {:>12} {:>12}  walk",
        "call", "plain p50", "plain p90", "host p50", "host p90"
    );
    for (label, tool, args) in calls {
        let call = Call {
            tool: tool.into(),
            args,
            session: Session {
                workspace: ws.clone(),
                agent: "claude-code".into(),
                ..Session::default()
            },
            confined: false,
        };
        let time = |reg: &Registry| {
            let mut t = Vec::with_capacity(runs);
            let mut last = None;
            for _ in 0..runs {
                let start = Instant::now();
                let ev = reg.decide_call(&call);
                t.push(start.elapsed());
                last = Some(ev);
            }
            (stats(t), last.unwrap())
        };
        let ((p50, p90), _) = time(&plain);
        let ((g50, g90), ev) = time(&grounded);
        let walk = ev
            .effects
            .as_ref()
            .and_then(|f| f.grounding.as_ref())
            .map_or_else(
                || "no effects".to_string(),
                |g| {
                    g.walks
                        .iter()
                        .map(|w| {
                            format!(
                                "{} entries, {}",
                                w.entries,
                                w.stopped.as_deref().unwrap_or("complete")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                },
            );
        println!(
            "{label:<34} {p50:>9.3} ms {p90:>9.3} ms {g50:>9.3} ms {g90:>9.3} ms  {walk} ({})",
            ev.decision
        );
    }
}
