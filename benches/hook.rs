//! Whole-process wall time of `zero-policy hook claude-code` on the built-in
//! default, beside `zero-policy explain` for the same calls: a hook is one
//! process per tool call, so this is the latency the agent's user waits.
//! Prints figures; asserts nothing about time.
//!
//! `cargo bench --bench hook` (`ZP_BENCH_RUNS=N` sets the runs per event, default 200).
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "benchmark harness")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const EXE: &str = env!("CARGO_BIN_EXE_zero-policy");

/// A Claude Code `PreToolUse` event (the shape of the hooks reference's example).
fn event(tool: &str, input: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "abc123",
        "transcript_path": "/home/user/.claude/projects/x/t.jsonl",
        "cwd": "/home/user/my-project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_01",
    }))
    .unwrap()
}

/// Runs the command once, feeding `stdin`; returns its wall time and output.
fn run(cmd: &mut Command, stdin: &[u8]) -> (Duration, String) {
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = t.elapsed();
    (elapsed, String::from_utf8(out.stdout).unwrap())
}

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
        .unwrap_or(200);
    let root = std::env::temp_dir().join(format!("zp-bench-hook-{}", std::process::id()));
    let (home, work): (PathBuf, PathBuf) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let base = |args: &[&str]| {
        let mut c = Command::new(EXE);
        c.args(args)
            .current_dir(&work)
            .env("HOME", &home)
            .env_remove("ZERO_POLICY_PATH");
        c
    };
    let cases = [
        (
            "Bash `git status`",
            "Bash",
            json!({"command": "git status"}),
            "allow",
        ),
        (
            "Bash `rm -rf /`",
            "Bash",
            json!({"command": "rm -rf /"}),
            "deny",
        ),
        (
            "Read src/main.rs",
            "Read",
            json!({"file_path": "/home/user/my-project/src/main.rs"}),
            "allow",
        ),
        ("unknown tool", "mcp__memory__read_graph", json!({}), "ask"),
    ];
    println!(
        "zero-policy hook claude-code vs explain, built-in default, {runs} runs each (wall time per process)\n"
    );
    println!(
        "{:<20} {:>14} {:>12} {:>16} {:>14}",
        "event", "hook median", "hook p90", "explain median", "explain p90"
    );
    let mut all = Vec::new();
    for (label, tool, input, want) in &cases {
        let stdin = event(tool, input);
        // One warm-up run each, checking the answer is the expected one.
        let (_, out) = run(&mut base(&["hook", "claude-code"]), &stdin);
        assert!(
            out.contains(&format!("\"permissionDecision\":\"{want}\"")),
            "{label}: {out}"
        );
        let args = input.to_string();
        let explain_args = [
            "explain",
            "--tool",
            tool,
            "--args",
            &args,
            "--session",
            "workspace=/home/user/my-project",
        ];
        let _ = run(&mut base(&explain_args), b"");
        let mut hook = Vec::with_capacity(runs);
        let mut explain = Vec::with_capacity(runs);
        for _ in 0..runs {
            hook.push(run(&mut base(&["hook", "claude-code"]), &stdin).0);
            explain.push(run(&mut base(&explain_args), b"").0);
        }
        all.extend(hook.iter().copied());
        let (hm, h90) = stats(hook);
        let (em, e90) = stats(explain);
        println!("{label:<20} {hm:>11.2} ms {h90:>9.2} ms {em:>13.2} ms {e90:>11.2} ms");
    }
    let (m, p90) = stats(all);
    println!("{:<20} {m:>11.2} ms {p90:>9.2} ms", "all hook events");
    let log = home.join(".local/state/zero-policy/decisions.jsonl");
    let lines = std::fs::read_to_string(&log).map_or(0, |t| t.lines().count());
    println!("\n{lines} lines in the decision log");
    let _ = std::fs::remove_dir_all(Path::new(&root));
}
