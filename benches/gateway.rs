//! The gateway's cost, measured in one run, interleaved: each round calls
//! every path once, in an order that alternates, so the machine's drift
//! weighs on all alike.
//!
//! - **echo**: server-everything's `echo`, directly (stdio) and through
//!   `zero-policy serve` (stdio in, and streamable HTTP in);
//! - **1 MB image**: `tests/fixtures/gateway/faulty.py`'s `image` (1 MiB of
//!   bytes, 1.4 MB of base64, the same each call), directly and through the
//!   gateway;
//! - **throughput**: 8 concurrent callers of `echo`, directly (one stdio
//!   connection) and through the gateway (one stdio connection; 8 HTTP
//!   sessions), in alternating bursts.
//!
//! Prints each path's median and p99, the added median latency as a share of
//! direct, and the throughput ratio; asserts nothing about time. Needs
//! `.ci/mcp-deps.sh`.
//!
//! `cargo bench --bench gateway`
#![expect(clippy::unwrap_used, clippy::panic, reason = "benchmark harness")]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use zero_policy::mcp::client::{ConnectSpec, ToolClient, TransportSpec, connect};

const ECHO_ROUNDS: usize = 1_000;
const IMAGE_ROUNDS: usize = 200;
const WARM_UP: usize = 50;
const CLIENTS: usize = 8;
const BURSTS: usize = 6;
const PER_CLIENT: usize = 60;
/// 1 MiB of bytes as base64.
const IMAGE_BASE64: usize = 1_398_104;

fn deps() -> PathBuf {
    std::env::var_os("ZP_TEST_DEPS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-deps"),
        PathBuf::from,
    )
}

fn median(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[t.len() / 2]
}

fn p99(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[(t.len() * 99 / 100).min(t.len() - 1)]
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn stdio_spec(server: &str, command: &str, a: Vec<String>) -> ConnectSpec {
    ConnectSpec {
        server: server.into(),
        transport: TransportSpec::Stdio {
            command: command.into(),
            args: a,
            env: Vec::new(),
            cwd: None,
        },
        timeout: Duration::from_secs(60),
    }
}

type Client = Arc<Box<dyn ToolClient>>;

/// One path: a client and the name it calls the tool by.
struct Path_ {
    label: &'static str,
    client: Client,
    tool: &'static str,
}

/// What a call is, and how its answer is checked.
#[derive(Clone, Copy)]
enum Work {
    Echo,
    Image,
}

async fn one(client: &dyn ToolClient, tool: &str, work: Work, i: usize) {
    match work {
        Work::Echo => {
            let m = format!("m{i}");
            let out = client
                .call_tool(tool, object(json!({"message": m})))
                .await
                .unwrap();
            assert_eq!(out.text, format!("Echo: {m}"), "{tool}");
        }
        Work::Image => {
            let out = client
                .call_tool(tool, object(json!({"mb": 1})))
                .await
                .unwrap();
            assert!(!out.is_error, "{tool}: {}", out.text);
            let [rmcp::model::ContentBlock::Image(image)] = out.content.as_slice() else {
                panic!("{tool}: not one image");
            };
            assert_eq!(image.data.len(), IMAGE_BASE64);
        }
    }
}

async fn wait_until_up(client: &dyn ToolClient, tool: &str, args: Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = client.call_tool(tool, object(args.clone())).await.unwrap();
        if !out.is_error {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{tool} never answered: {}",
            out.text
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Each path's call times, interleaved round by round (the order alternates).
async fn interleaved(paths: &[Path_], work: Work, rounds: usize) -> Vec<Vec<Duration>> {
    for p in paths {
        for i in 0..WARM_UP {
            one(p.client.as_ref().as_ref(), p.tool, work, i).await;
        }
    }
    let mut times = vec![Vec::with_capacity(rounds); paths.len()];
    for round in 0..rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..paths.len()).collect()
        } else {
            (0..paths.len()).rev().collect()
        };
        for k in order {
            let p = &paths[k];
            let start = Instant::now();
            one(p.client.as_ref().as_ref(), p.tool, work, round).await;
            times[k].push(start.elapsed());
        }
    }
    times
}

/// One burst: `CLIENTS` callers, each `PER_CLIENT` echo calls; its duration.
async fn burst(clients: &[Client], tool: &'static str) -> Duration {
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..CLIENTS {
        let client = Arc::clone(&clients[c % clients.len()]);
        tasks.spawn(async move {
            for i in 0..PER_CLIENT {
                one(
                    client.as_ref().as_ref(),
                    tool,
                    Work::Echo,
                    c * PER_CLIENT + i,
                )
                .await;
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    start.elapsed()
}

fn report(title: &str, paths: &[Path_], times: &[Vec<Duration>], aim: f64) {
    println!("{title}");
    for (p, t) in paths.iter().zip(times) {
        println!(
            "  {:<44} median {:>8.3} ms   p99 {:>8.3} ms   ({} calls)",
            p.label,
            median(t.clone()).as_secs_f64() * 1e3,
            p99(t.clone()).as_secs_f64() * 1e3,
            t.len()
        );
    }
    let direct = median(times[0].clone()).as_secs_f64();
    for (p, t) in paths.iter().zip(times).skip(1) {
        let m = median(t.clone()).as_secs_f64();
        println!(
            "  added median latency, {:<22} {:+.3} ms = {:+.1}% of direct (aim: at most {aim:.0}%)",
            p.label.split(':').next().unwrap_or(""),
            (m - direct) * 1e3,
            (m - direct) / direct * 100.0
        );
    }
}

fn main() {
    let everything =
        deps().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let python = deps().join("venv/bin/python");
    if !everything.exists() || !python.exists() {
        eprintln!("server-everything or the venv is missing: run `.ci/mcp-deps.sh` first");
        std::process::exit(2);
    }
    let everything = everything.display().to_string();
    let python = python.display().to_string();
    let faulty = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gateway/faulty.py")
        .display()
        .to_string();
    let bin = env!("CARGO_BIN_EXE_zero-policy");
    let dir = std::env::temp_dir().join(format!("zp-bench-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gateway.yaml"),
        format!(
            "version: 1\nsettings:\n  defer_threshold: 0\n  log: {{path: \"{}\"}}\nservers:\n  - name: everything\n    transport: stdio\n    command: node\n    args: [\"{everything}\", stdio]\n    connect_timeout: 60s\n    overrides:\n      - tools: [echo]\n        safety: {{side_effect: none, permission: allow, reason: echoes}}\n  - name: images\n    transport: stdio\n    command: \"{python}\"\n    args: [\"{faulty}\"]\n    connect_timeout: 60s\n    overrides:\n      - tools: [image]\n        safety: {{side_effect: none, permission: allow, reason: a fixture image}}\n",
            dir.join("decisions.jsonl").display()
        ),
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let policy = dir.display().to_string();
        let direct: Client = Arc::new(
            connect(&stdio_spec("everything", "node", vec![everything.clone(), "stdio".into()]))
                .await
                .unwrap(),
        );
        let direct_images: Client = Arc::new(
            connect(&stdio_spec("images", &python, vec![faulty.clone()]))
                .await
                .unwrap(),
        );
        let via_stdio: Client = Arc::new(
            connect(&stdio_spec("gateway", bin, vec!["serve".into(), policy.clone()]))
                .await
                .unwrap(),
        );
        // The HTTP gateway prints the port it bound.
        let mut http = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", &policy])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = std::io::BufReader::new(http.stderr.take().unwrap());
        let url = loop {
            let mut l = String::new();
            assert!(err.read_line(&mut l).unwrap() > 0, "serve --listen ended");
            if let Some(rest) = l.trim().strip_prefix("zero-policy serve: listening on ") {
                break rest.to_string();
            }
        };
        std::thread::spawn(move || for _ in err.lines() {});
        let mut via_http: Vec<Client> = Vec::new();
        for n in 0..CLIENTS {
            let spec = ConnectSpec {
                server: format!("gateway-http-{n}"),
                transport: TransportSpec::Http {
                    url: url.clone(),
                    headers: Vec::new(),
                    auth: None,
                },
                timeout: Duration::from_secs(60),
            };
            via_http.push(Arc::new(connect(&spec).await.unwrap()));
        }
        let gw_echo = "mcp__everything__echo";
        let gw_image = "mcp__images__image";
        for c in [&via_stdio, &via_http[0]] {
            wait_until_up(c.as_ref().as_ref(), gw_echo, json!({"message": "up"})).await;
            wait_until_up(c.as_ref().as_ref(), gw_image, json!({"mb": 1})).await;
        }

        let echo_paths = [
            Path_ { label: "direct: client -stdio-> everything", client: Arc::clone(&direct), tool: "echo" },
            Path_ { label: "stdio: client -stdio-> serve -> everything", client: Arc::clone(&via_stdio), tool: gw_echo },
            Path_ { label: "http: client -http-> serve -> everything", client: Arc::clone(&via_http[0]), tool: gw_echo },
        ];
        let t = interleaved(&echo_paths, Work::Echo, ECHO_ROUNDS).await;
        report(&format!("echo, {ECHO_ROUNDS} interleaved rounds:"), &echo_paths, &t, 5.0);

        let image_paths = [
            Path_ { label: "direct: client -stdio-> faulty.py", client: Arc::clone(&direct_images), tool: "image" },
            Path_ { label: "stdio: client -stdio-> serve -> faulty.py", client: Arc::clone(&via_stdio), tool: gw_image },
            Path_ { label: "http: client -http-> serve -> faulty.py", client: Arc::clone(&via_http[0]), tool: gw_image },
        ];
        let t = interleaved(&image_paths, Work::Image, IMAGE_ROUNDS).await;
        report(&format!("\n1 MB image, {IMAGE_ROUNDS} interleaved rounds:"), &image_paths, &t, 10.0);

        // Throughput: alternating bursts of CLIENTS callers.
        let groups: [(&str, Vec<Client>, &'static str); 3] = [
            ("direct (one stdio connection)", vec![Arc::clone(&direct)], "echo"),
            ("gateway stdio (one connection)", vec![Arc::clone(&via_stdio)], gw_echo),
            ("gateway http (8 sessions)", via_http.clone(), gw_echo),
        ];
        for (_, clients, tool) in &groups {
            burst(clients, tool).await;
        }
        let mut spent = [Duration::ZERO; 3];
        for b in 0..BURSTS {
            let order: Vec<usize> = if b % 2 == 0 { vec![0, 1, 2] } else { vec![2, 1, 0] };
            for k in order {
                spent[k] += burst(&groups[k].1, groups[k].2).await;
            }
        }
        let calls = (BURSTS * CLIENTS * PER_CLIENT) as f64;
        let rate: Vec<f64> = spent.iter().map(|d| calls / d.as_secs_f64()).collect();
        println!("\nthroughput, {CLIENTS} concurrent callers of echo, {BURSTS} alternating bursts of {} calls:", CLIENTS * PER_CLIENT);
        for (k, (label, _, _)) in groups.iter().enumerate() {
            println!(
                "  {label:<36} {:>8.0} calls/s   {:>5.1}% of direct (aim: at least 90%)",
                rate[k],
                rate[k] / rate[0] * 100.0
            );
        }

        drop((echo_paths, image_paths, groups));
        for c in [direct, direct_images, via_stdio].into_iter().chain(via_http) {
            if let Ok(c) = Arc::try_unwrap(c) {
                c.close().await;
            }
        }
        let _ = Command::new("kill")
            .args(["-TERM", &http.id().to_string()])
            .status();
        let _ = http.wait();
    });
    let _ = std::fs::remove_dir_all(&dir);
}
