//! The gateway's cost, measured in one run: server-everything's `echo` called
//! directly (stdio) and through `zero-policy serve` (stdio in, and streamable
//! HTTP in), 1,000 sequential calls each, then 8 concurrent clients. Prints the
//! added median latency and the throughput ratio; asserts nothing about time.
//! Needs `.ci/mcp-deps.sh`.
//!
//! `cargo bench --bench gateway`
#![expect(clippy::unwrap_used, reason = "benchmark harness")]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use zero_policy::mcp::client::{ConnectSpec, ToolClient, TransportSpec, connect};

const SEQUENTIAL: usize = 1_000;
const CLIENTS: usize = 8;
const PER_CLIENT: usize = 250;

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

fn args(message: &str) -> Map<String, Value> {
    let Value::Object(m) = json!({"message": message}) else {
        unreachable!()
    };
    m
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

async fn wait_for_echo(client: &dyn ToolClient, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = client.call_tool(name, args("warm")).await.unwrap();
        if !out.is_error {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} never answered: {}",
            out.text
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sequential(client: &dyn ToolClient, name: &str) -> Vec<Duration> {
    for i in 0..50 {
        client
            .call_tool(name, args(&format!("w{i}")))
            .await
            .unwrap();
    }
    let mut t = Vec::with_capacity(SEQUENTIAL);
    for i in 0..SEQUENTIAL {
        let m = format!("m{i}");
        let start = Instant::now();
        let out = client.call_tool(name, args(&m)).await.unwrap();
        t.push(start.elapsed());
        assert_eq!(out.text, format!("Echo: {m}"), "{name}");
    }
    t
}

/// Calls per second with `clients` callers sharing or owning connections.
async fn concurrent(clients: Vec<Arc<Box<dyn ToolClient>>>, name: &'static str) -> f64 {
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..CLIENTS {
        let client = Arc::clone(&clients[c % clients.len()]);
        tasks.spawn(async move {
            for i in 0..PER_CLIENT {
                let m = format!("c{c}-{i}");
                let out = client.call_tool(name, args(&m)).await.unwrap();
                assert_eq!(out.text, format!("Echo: {m}"));
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    (CLIENTS * PER_CLIENT) as f64 / start.elapsed().as_secs_f64()
}

fn line(name: &str, t: &[Duration]) {
    println!(
        "{name:<44} median {:>7.3} ms   p99 {:>7.3} ms   ({} calls)",
        median(t.to_vec()).as_secs_f64() * 1e3,
        p99(t.to_vec()).as_secs_f64() * 1e3,
        t.len()
    );
}

fn main() {
    let everything =
        deps().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !everything.exists() {
        eprintln!("server-everything is missing: run `.ci/mcp-deps.sh` first");
        std::process::exit(2);
    }
    let everything = everything.display().to_string();
    let bin = env!("CARGO_BIN_EXE_zero-policy");
    let dir = std::env::temp_dir().join(format!("zp-bench-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gateway.yaml"),
        format!(
            "version: 1\nsettings:\n  defer_threshold: 0\n  log: {{path: \"{}\"}}\nservers:\n  - name: everything\n    transport: stdio\n    command: node\n    args: [\"{everything}\", stdio]\n    connect_timeout: 60s\n    overrides:\n      - tools: [echo]\n        safety: {{side_effect: none, permission: allow, reason: echoes}}\n",
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
        let direct: Arc<Box<dyn ToolClient>> = Arc::new(
            connect(&stdio_spec(
                "everything",
                "node",
                vec![everything.clone(), "stdio".into()],
            ))
            .await
            .unwrap(),
        );
        let via_stdio: Arc<Box<dyn ToolClient>> = Arc::new(
            connect(&stdio_spec(
                "gateway",
                bin,
                vec!["serve".into(), policy.clone()],
            ))
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
        let http_spec = |n: usize| ConnectSpec {
            server: format!("gateway-http-{n}"),
            transport: TransportSpec::Http {
                url: url.clone(),
                headers: Vec::new(),
            },
            timeout: Duration::from_secs(60),
        };
        let via_http: Vec<Arc<Box<dyn ToolClient>>> = {
            let mut v = Vec::new();
            for n in 0..CLIENTS {
                v.push(Arc::new(connect(&http_spec(n)).await.unwrap()));
            }
            v
        };
        let gw_echo = "mcp__everything__echo";
        wait_for_echo(via_stdio.as_ref().as_ref(), gw_echo).await;
        wait_for_echo(via_http[0].as_ref().as_ref(), gw_echo).await;

        println!("sequential echo calls, {SEQUENTIAL} each (one client):");
        let d = sequential(direct.as_ref().as_ref(), "echo").await;
        let s = sequential(via_stdio.as_ref().as_ref(), gw_echo).await;
        let h = sequential(via_http[0].as_ref().as_ref(), gw_echo).await;
        line("direct: client -> server-everything (stdio)", &d);
        line("gateway: client -stdio-> serve -> everything", &s);
        line("gateway: client -http-> serve -> everything", &h);
        let md = median(d.clone()).as_secs_f64() * 1e3;
        println!(
            "added median latency: stdio {:+.3} ms, http {:+.3} ms (aim: under 0.2 ms)",
            median(s).as_secs_f64() * 1e3 - md,
            median(h).as_secs_f64() * 1e3 - md
        );

        println!("\nconcurrent: {CLIENTS} callers x {PER_CLIENT} echo calls:");
        let td = concurrent(vec![Arc::clone(&direct)], "echo").await;
        let ts = concurrent(vec![Arc::clone(&via_stdio)], gw_echo).await;
        let th = concurrent(via_http.clone(), gw_echo).await;
        println!("direct (one stdio connection)            {td:>9.0} calls/s");
        println!(
            "gateway stdio (one connection)           {ts:>9.0} calls/s   {:.0}% of direct",
            ts / td * 100.0
        );
        println!(
            "gateway http ({CLIENTS} sessions)                {th:>9.0} calls/s   {:.0}% of direct",
            th / td * 100.0
        );
        println!("(aim: at least 90% of direct)");

        for c in [direct, via_stdio] {
            if let Ok(c) = Arc::try_unwrap(c) {
                c.close().await;
            }
        }
        for c in via_http {
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
