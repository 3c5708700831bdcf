//! A decision through `zero-policy serve --hooks` from a loopback HTTP
//! client, against `zero-policy hook claude-code` as a process, interleaved
//! in one run: each round makes one call of each kind per event, in a
//! shuffled order, so the machine's drift weighs on all alike (the first
//! rounds are a warm-up). Prints medians and p90s; asserts nothing about time.
//!
//! Kinds of call:
//! - `http new conn`: a fresh TCP connection per decision, as an agent that
//!   keeps no connection open would;
//! - `http keep-alive`: one connection reused, as Node's HTTP agent does by
//!   default (Claude Code's and Copilot's `http` hooks);
//! - `hook --via`: the tiny client process, as Codex, Gemini CLI and Cursor
//!   run it;
//! - `hook process`: the hook as a process that loads the policy.
//!
//! `cargo bench --bench hook_service` (`ZP_BENCH_ROUNDS=N`, default 200;
//! `ZP=path` measures that binary instead of the one cargo built).
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "benchmark harness")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A Claude Code `PreToolUse` event.
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

fn request(port: u16, body: &[u8], close: bool) -> Vec<u8> {
    let mut r = format!(
        "POST /hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// Reads one response with a `content-length` from a kept-alive connection.
fn read_one(reader: &mut BufReader<TcpStream>) -> String {
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}

fn process(cmd: &mut Command, stdin: &[u8]) -> (Duration, String) {
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (t.elapsed(), String::from_utf8(out.stdout).unwrap())
}

fn stats(mut t: Vec<Duration>) -> (f64, f64) {
    t.sort();
    let n = t.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(t[n / 2]), ms(t[(n * 9 / 10).min(n - 1)]))
}

/// A small xorshift, for the order of each round.
fn shuffle<T>(v: &mut [T], seed: &mut u64) {
    for i in (1..v.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let j = usize::try_from(*seed % (i as u64 + 1)).unwrap();
        v.swap(i, j);
    }
}

const KINDS: [&str; 4] = [
    "http new conn",
    "http keep-alive",
    "hook --via",
    "hook process",
];

fn main() {
    let rounds: usize = std::env::var("ZP_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let exe: PathBuf = std::env::var_os("ZP").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_zero-policy")),
        PathBuf::from,
    );
    let root = std::env::temp_dir().join(format!("zp-bench-hooksvc-{}", std::process::id()));
    let (home, work): (PathBuf, PathBuf) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let base = |args: &[&str]| {
        let mut c = Command::new(&exe);
        c.args(args)
            .current_dir(&work)
            .env("HOME", &home)
            .env_remove("ZERO_POLICY_PATH")
            .env_remove("ZERO_POLICY_HOOK_TOKEN");
        c
    };
    let mut service = base(&["serve", "--hooks", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve --hooks");
    let mut err = BufReader::new(service.stderr.take().unwrap());
    let port: u16 = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "the service did not start"
        );
        if let Some(rest) = line.split("on http://127.0.0.1:").nth(1) {
            break rest.split('/').next().unwrap().parse().unwrap();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let url = format!("http://127.0.0.1:{port}");
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
    let mut kept = TcpStream::connect(("127.0.0.1", port)).unwrap();
    kept.set_nodelay(true).unwrap();
    let mut kept_reader = BufReader::new(kept.try_clone().unwrap());
    // times[case][kind]
    let mut times: Vec<Vec<Vec<Duration>>> = vec![vec![Vec::new(); KINDS.len()]; cases.len()];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let warmup = 10;
    for round in 0..rounds + warmup {
        let mut order: Vec<(usize, usize)> = (0..cases.len())
            .flat_map(|c| (0..KINDS.len()).map(move |k| (c, k)))
            .collect();
        shuffle(&mut order, &mut seed);
        for (c, k) in order {
            let (_, tool, input, want) = &cases[c];
            let body = event(tool, input);
            let (took, answer) = match k {
                0 => {
                    let t = Instant::now();
                    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                    s.set_nodelay(true).unwrap();
                    s.write_all(&request(port, &body, true)).unwrap();
                    let mut out = Vec::new();
                    s.read_to_end(&mut out).unwrap();
                    (t.elapsed(), String::from_utf8(out).unwrap())
                }
                1 => {
                    let t = Instant::now();
                    kept.write_all(&request(port, &body, false)).unwrap();
                    let answer = read_one(&mut kept_reader);
                    (t.elapsed(), answer)
                }
                2 => process(&mut base(&["hook", "claude-code", "--via", &url]), &body),
                _ => process(&mut base(&["hook", "claude-code"]), &body),
            };
            assert!(
                answer.contains(&format!("\"permissionDecision\":\"{want}\"")),
                "{} via {}: {answer}",
                cases[c].0,
                KINDS[k]
            );
            if round >= warmup {
                times[c][k].push(took);
            }
        }
    }
    println!(
        "zero-policy serve --hooks vs hook as a process, claude-code events, built-in default,\n{rounds} interleaved rounds (wall time per decision, median / p90 in ms)\n"
    );
    print!("{:<20}", "event");
    for k in KINDS {
        print!(" {k:>20}");
    }
    println!();
    let mut all: Vec<Vec<Duration>> = vec![Vec::new(); KINDS.len()];
    for (c, (label, ..)) in cases.iter().enumerate() {
        print!("{label:<20}");
        for k in 0..KINDS.len() {
            all[k].extend(times[c][k].iter().copied());
            let (m, p) = stats(times[c][k].clone());
            print!(" {:>20}", format!("{m:.3} / {p:.3}"));
        }
        println!();
    }
    print!("{:<20}", "all events");
    let mut medians = Vec::new();
    for a in &all {
        let (m, p) = stats(a.clone());
        medians.push(m);
        print!(" {:>20}", format!("{m:.3} / {p:.3}"));
    }
    println!();
    println!(
        "\nhook process / http new conn: {:.1}x; hook process / http keep-alive: {:.1}x; target: http median <= 0.5 ms",
        medians[3] / medians[0],
        medians[3] / medians[1]
    );
    let lines = std::fs::read_to_string(home.join(".local/state/zero-policy/decisions.jsonl"))
        .map_or(0, |t| t.lines().count());
    println!(
        "{lines} lines in the decision log ({} decisions made)",
        (rounds + warmup) * cases.len() * KINDS.len()
    );
    let _ = service.kill();
    let _ = service.wait();
    let _ = std::fs::remove_dir_all(&root);
}
