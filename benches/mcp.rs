//! MCP figures: connect time per server and transport, and the `tools/call`
//! round trip through the dispatch path against the same call made directly.
//! Needs `.ci/mcp-deps.sh`. Prints figures; asserts nothing about time.
//!
//! `cargo bench --bench mcp`
#![expect(clippy::unwrap_used, reason = "benchmark harness")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zero_policy::dispatch::{Call, Session};
use zero_policy::mcp::client::{ConnectSpec, TransportSpec, connect};
use zero_policy::mcp::register::register_servers;
use zero_policy::registry::Registry;

fn deps() -> PathBuf {
    std::env::var_os("ZP_TEST_DEPS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-deps"),
        PathBuf::from,
    )
}

fn stats(name: &str, mut t: Vec<Duration>) {
    t.sort();
    let n = t.len();
    println!(
        "{name:<52} median {:>8.3} ms   p99 {:>8.3} ms   ({n} calls)",
        t[n / 2].as_secs_f64() * 1e3,
        t[(n * 99 / 100).min(n - 1)].as_secs_f64() * 1e3
    );
}

fn main() {
    let everything =
        deps().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let python = deps().join("venv/bin/python");
    if !everything.exists() || !python.exists() {
        eprintln!("the MCP test servers are missing: run `.ci/mcp-deps.sh` first");
        std::process::exit(2);
    }
    let normal = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/normal.py");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let n = 500;

    // Connect time per server (connect + initialize + list), five times each.
    for (name, command, args) in [
        (
            "server-everything over stdio (node)",
            "node".to_string(),
            vec![everything.display().to_string(), "stdio".into()],
        ),
        (
            "normal.py over stdio (python mcp SDK)",
            python.display().to_string(),
            vec![normal.display().to_string()],
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..5 {
            let spec = ConnectSpec {
                server: "bench".into(),
                transport: TransportSpec::Stdio {
                    command: command.clone(),
                    args: args.clone(),
                    env: vec![],
                    cwd: None,
                },
                timeout: Duration::from_secs(30),
            };
            let t = Instant::now();
            let c = rt.block_on(connect(&spec)).unwrap();
            let _ = rt.block_on(c.list_tools()).unwrap();
            times.push(t.elapsed());
            rt.block_on(c.close());
        }
        stats(&format!("connect+list: {name}"), times);
    }

    // Direct client call.
    let spec = ConnectSpec {
        server: "everything".into(),
        transport: TransportSpec::Stdio {
            command: "node".into(),
            args: vec![everything.display().to_string(), "stdio".into()],
            env: vec![],
            cwd: None,
        },
        timeout: Duration::from_secs(30),
    };
    let client = rt.block_on(connect(&spec)).unwrap();
    let args: serde_json::Map<String, serde_json::Value> =
        serde_json::from_value(serde_json::json!({"message": "hello"})).unwrap();
    let mut direct = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let out = rt.block_on(client.call_tool("echo", args.clone())).unwrap();
        direct.push(t.elapsed());
        assert!(out.text.contains("hello"));
    }
    rt.block_on(client.close());
    stats("tools/call echo, direct client", direct);

    // The same call through the registry's dispatch path (decide + call + scrub).
    let dir = std::env::temp_dir().join(format!("zp-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("servers.yaml");
    std::fs::write(
        &manifest,
        format!(
            "version: 1\nservers:\n  - name: everything\n    transport: stdio\n    command: node\n    args: [\"{}\", stdio]\n    connect_timeout: 30s\n    safety: {{side_effect: none, permission: allow, reason: bench}}\n",
            everything.display()
        ),
    )
    .unwrap();
    let policy = zero_policy::loader::load_paths(&[manifest])
        .unwrap()
        .policy
        .unwrap();
    let mut registry = Registry::new(&policy).unwrap();
    let conns = rt.block_on(register_servers(&mut registry, &|_| {}));
    let call = Call {
        tool: "mcp__everything__echo".into(),
        args: serde_json::json!({"message": "hello"}),
        session: Session::default(),
        confined: false,
    };
    let mut through = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let d = rt.block_on(registry.dispatch(&call, None));
        through.push(t.elapsed());
        assert!(d.result.unwrap().text.contains("hello"));
    }
    stats("tools/call echo, through the dispatch path", through);
    let mut decide = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        std::hint::black_box(registry.evaluate(&call));
        decide.push(t.elapsed());
    }
    stats("  of which deciding (evaluate)", decide);
    rt.block_on(conns.close());

    // Registration of two servers beside one that never answers `initialize`:
    // bounded by the hanging server's 2 s timeout, not by the sum of the
    // servers' timeouts.
    let never = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/never_init.py");
    let hanging = dir.join("hanging.yaml");
    std::fs::write(
        &hanging,
        format!(
            "version: 1\nservers:\n  - name: one\n    transport: stdio\n    command: node\n    args: [\"{e}\", stdio]\n    connect_timeout: 30s\n    safety: {{side_effect: none, permission: allow, reason: bench}}\n  - name: two\n    transport: stdio\n    command: node\n    args: [\"{e}\", stdio]\n    connect_timeout: 30s\n    safety: {{side_effect: none, permission: allow, reason: bench}}\n  - name: hangs\n    transport: stdio\n    command: \"{p}\"\n    args: [\"{n}\"]\n    connect_timeout: 2s\n    safety: {{side_effect: none, permission: allow, reason: bench}}\n",
            e = everything.display(),
            p = python.display(),
            n = never.display()
        ),
    )
    .unwrap();
    let policy = zero_policy::loader::load_paths(&[hanging])
        .unwrap()
        .policy
        .unwrap();
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut registry = Registry::new(&policy).unwrap();
        let t = Instant::now();
        let conns = rt.block_on(register_servers(&mut registry, &|_| {}));
        times.push(t.elapsed());
        assert_eq!(registry.skipped_servers().len(), 1);
        rt.block_on(conns.close());
    }
    stats(
        "register two servers beside one that hangs (2 s timeout)",
        times,
    );
    let _ = std::fs::remove_dir_all(&dir);
}
