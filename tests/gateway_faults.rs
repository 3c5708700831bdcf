//! Faults and bad input through the MCP gateway (`zero-policy serve`, SPEC §8,
//! §10), against the real binary: malformed and out-of-order JSON-RPC from a
//! client (raw lines on stdio) and from a server
//! (`tests/fixtures/gateway/faulty.py`, a hand-written server that misbehaves
//! on request), floods of log messages, progress and elicitation requests, a
//! 50 MB image, a server dying mid-progress, a client cancelling and a client
//! that disappears mid-request. Each is a clear protocol error or a bounded,
//! scrubbed relay, and the other clients and servers go on.
//!
//! Needs `.ci/mcp-deps.sh` (server-everything, the venv with PyPI `mcp`).

#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{everything_js, gateway_fixture, python};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_zero-policy");
const SECRET: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

/// A scratch folder with `policy/gateway.yaml`, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, servers: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("zp-faults-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("policy")).unwrap();
        let s = Scratch(dir);
        std::fs::write(
            s.policy().join("gateway.yaml"),
            format!(
                "version: 1\nsettings:\n  defer_threshold: 0\n  log: {{path: \"{}\"}}\nservers:\n{servers}",
                s.0.join("decisions.jsonl").display()
            ),
        )
        .unwrap();
        s
    }
    fn policy(&self) -> PathBuf {
        self.0.join("policy")
    }
    fn log_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(self.0.join("decisions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The misbehaving server, allowed to elicit, every tool allowed.
fn faulty(name: &str, marker: &Path) -> String {
    format!(
        r#"  - name: {name}
    transport: stdio
    command: "{}"
    args: ["{}"]
    env: {{HANG_MARKER: "{}"}}
    connect_timeout: 30s
    allow: [elicitation]
    safety: {{side_effect: none, permission: allow, reason: the fault fixture}}
"#,
        python(),
        gateway_fixture("faulty.py"),
        marker.display()
    )
}

fn everything() -> String {
    format!(
        r#"  - name: everything
    transport: stdio
    command: node
    args: ["{}", "stdio"]
    connect_timeout: 30s
    safety: {{side_effect: none, permission: allow, reason: the reference server}}
"#,
        everything_js()
    )
}

/// A client written by hand: JSON-RPC lines to `zero-policy serve` on stdio,
/// so it can send what no SDK would.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Messages read while waiting for something else.
    seen: Vec<Value>,
}

impl Raw {
    fn start(policy: &Path) -> Raw {
        let mut child = Command::new(BIN)
            .arg("serve")
            .arg(policy)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut raw = Raw {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        };
        let init = raw.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}),
        );
        assert_eq!(
            init["result"]["serverInfo"]["name"], "zero-policy",
            "{init}"
        );
        raw.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        raw
    }

    fn line(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message, or `None` after `secs` seconds.
    fn next(&mut self, secs: f64) -> Option<Value> {
        match self.lines.recv_timeout(Duration::from_secs_f64(secs)) {
            Ok(l) => Some(serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}"))),
            Err(_) => None,
        }
    }

    /// The answer to `id` (messages before it are kept in `seen`).
    fn answer(&mut self, id: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(40);
        while Instant::now() < deadline {
            if let Some(m) = self.next(0.5) {
                if m.get("id") == Some(id) && m.get("method").is_none() {
                    return m;
                }
                self.seen.push(m);
            }
        }
        panic!("no answer to {id}; seen {:?}", self.seen);
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(format!("r{}", self.seen.len() + rand_id()));
        self.line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.answer(&id)
    }

    /// Calls a tool, after waiting (re-listing) until it is listed.
    fn call(&mut self, name: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": args}))
    }

    fn until_listed(&mut self, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let listed = self.request("tools/list", json!({}));
            if listed["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == name)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{name} was never listed");
    }

    /// Closes stdin (the client goes) and waits for the gateway's exit status.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the gateway did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_id() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(1000);
    N.fetch_add(1, Ordering::Relaxed)
}

fn error_of(answer: &Value) -> (i64, String) {
    (
        answer["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {answer}")),
        answer["error"]["message"].as_str().unwrap().to_string(),
    )
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("not a result: {answer}"))
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

// ------------------------------------------------------------ bad input from a client

#[test]
fn malformed_and_out_of_order_client_input_gets_protocol_errors_and_the_session_goes_on() {
    let s = Scratch::new("client-input", &faulty("faulty", Path::new("/dev/null")));
    // A request before `initialize` is refused, not served.
    let mut early = Command::new(BIN)
        .arg("serve")
        .arg(s.policy())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        let mut stdin = early.stdin.take().unwrap();
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
            .unwrap();
        let mut line = String::new();
        BufReader::new(early.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], 1, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
    assert!(early.wait().unwrap().success());

    let mut c = Raw::start(&s.policy());
    c.until_listed("mcp__faulty__echo");
    // Not JSON: JSON-RPC's parse error, id null.
    c.line("this is {not json");
    let m = c.next(10.0).unwrap();
    assert_eq!(m["id"], Value::Null, "{m}");
    assert_eq!(error_of(&m).0, -32700, "{m}");
    // Not UTF-8.
    c.stdin
        .as_mut()
        .unwrap()
        .write_all(b"\xff\xfe{}\n")
        .unwrap();
    c.stdin.as_mut().unwrap().flush().unwrap();
    assert_eq!(error_of(&c.next(10.0).unwrap()).0, -32700);
    // JSON, not JSON-RPC; a batch (MCP has none); an id that is an object;
    // the wrong version: each an invalid request.
    for bad in [
        r#"{"hello": 1}"#,
        r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
        r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
    ] {
        c.line(bad);
        let m = c.next(10.0).unwrap_or_else(|| panic!("no answer to {bad}"));
        assert_eq!(error_of(&m).0, -32600, "{bad}: {m}");
    }
    // Out of order: an answer to a request never sent, a cancellation of an
    // unknown request: nothing to say, and nothing breaks.
    c.line(r#"{"jsonrpc":"2.0","id":424242,"result":{}}"#);
    c.line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":31337}}"#);
    assert_eq!(c.next(1.0), None);
    // An unknown method; a known one with params of the wrong shape; no params.
    let (code, message) = error_of(&c.request("no/such/method", json!({})));
    assert_eq!(code, -32601, "{message}");
    assert!(message.contains("no/such/method"), "{message}");
    let (code, message) = error_of(&c.call("mcp__faulty__echo", json!(5)));
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("tools/call"), "{message}");
    let id = json!("no-params");
    c.line(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call"}).to_string());
    assert_eq!(error_of(&c.answer(&id)).0, -32602);
    let (code, message) = error_of(&c.request("resources/read", json!({"uri": 7})));
    assert_eq!(code, -32602, "{message}");
    // An unknown tool, and a secret in its name, scrubbed from the error.
    let (code, message) = error_of(&c.call(&format!("nope-{SECRET}"), json!({})));
    assert_eq!(code, -32602);
    assert!(!message.contains(SECRET), "{message}");
    // A message larger than the bound (128 MiB) is refused under its id,
    // without being held whole.
    let id = json!("huge");
    let head = r#"{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"mcp__faulty__echo","arguments":{"text":""#;
    {
        let stdin = c.stdin.as_mut().unwrap();
        stdin.write_all(head.as_bytes()).unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..130 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\"}}}\n").unwrap();
        stdin.flush().unwrap();
    }
    let (code, message) = error_of(&c.answer(&id));
    assert_eq!(code, -32600);
    assert!(message.contains("128 MiB"), "{message}");
    // After all of it, the session still serves.
    assert_eq!(
        text_of(&c.call("mcp__faulty__echo", json!({"text": "still here"}))),
        "echo: still here"
    );
    assert!(c.finish().success());
}

// ------------------------------------------------------------ a misbehaving server

#[test]
fn a_server_that_sends_garbage_or_wrong_shapes_or_dies_mid_progress_fails_only_its_own_calls() {
    let s = Scratch::new(
        "server-input",
        &format!(
            "{}{}",
            faulty("faulty", Path::new("/dev/null")),
            everything()
        ),
    );
    let mut c = Raw::start(&s.policy());
    c.until_listed("mcp__faulty__echo");
    c.until_listed("mcp__everything__echo");
    // Lines that are not JSON, JSON that is not JSON-RPC, answers to requests
    // never made: skipped; the call's own answer still arrives.
    assert_eq!(
        text_of(&c.call("mcp__faulty__garbage", json!({}))),
        "after garbage"
    );
    // A result that is not a tool result: a tool error naming the server.
    let wrong = c.call("mcp__faulty__wrong_shape", json!({}));
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    assert!(text_of(&wrong).contains("mcp server faulty"), "{wrong}");
    // The server dies after three progress notifications: the call is a tool
    // error naming the server and its exit, the progress came first, under
    // the client's token.
    let id = json!("dying");
    c.line(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "mcp__faulty__progress_then_die", "arguments": {},
            "_meta": {"progressToken": "client-token"}}})
        .to_string(),
    );
    let died = c.answer(&id);
    assert_eq!(died["result"]["isError"], true, "{died}");
    let text = text_of(&died);
    assert!(text.contains("faulty") && text.contains("exit"), "{text}");
    let progress: Vec<&Value> = c
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() <= 3, "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "client-token"),
        "{progress:?}"
    );
    // The other server never noticed; the dead one comes back.
    assert_eq!(
        text_of(&c.call("mcp__everything__echo", json!({"message": "unaffected"}))),
        "Echo: unaffected"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let again = c.call("mcp__faulty__echo", json!({"text": "back"}));
        if again["result"]["isError"] == false {
            assert_eq!(text_of(&again), "echo: back");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server never came back: {again}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(c.finish().success());
}

// ------------------------------------------------------------ floods

#[test]
fn floods_of_log_messages_progress_and_elicitation_requests_are_bounded_and_scrubbed() {
    let s = Scratch::new(
        "floods",
        &format!(
            "{}{}",
            faulty("faulty", Path::new("/dev/null")),
            everything()
        ),
    );
    // The Python SDK's client: it declares elicitation and answers every form.
    let out = client(json!({
        "transport": "stdio",
        "command": [BIN, "serve", s.policy()],
        "elicitation": "accept",
        "steps": [
            {"op": "until_listed", "name": "mcp__faulty__flood_logs", "seconds": 30},
            {"op": "until_listed", "name": "mcp__everything__echo", "seconds": 30},
            {"op": "call", "name": "mcp__faulty__flood_logs", "args": {"count": 20000}},
            {"op": "call_progress", "name": "mcp__faulty__flood_progress", "args": {"count": 20000}},
            {"op": "call", "name": "mcp__faulty__flood_elicit", "args": {"count": 60}},
            {"op": "call", "name": "mcp__everything__echo", "args": {"message": "unaffected"}},
        ],
    }));
    let r = &out["results"];
    assert_eq!(r[2]["text"], "flooded", "{}", r[2]);
    // At most 100 log messages a second per server reach the client, scrubbed.
    let logs = out["logs"].as_array().unwrap();
    assert!(!logs.is_empty());
    assert!(logs.len() <= 300, "{} log messages relayed", logs.len());
    assert!(!out["logs"].to_string().contains(SECRET));
    // At most 10,000 progress notifications per call; the answer after them.
    assert_eq!(r[3]["text"], "progressed", "{}", r[3]);
    let progress = r[3]["progress"].as_array().unwrap();
    assert!(
        !progress.is_empty() && progress.len() <= 10_000,
        "{}",
        progress.len()
    );
    // Every one of the 60 elicitation requests was answered by the client or
    // refused by the gateway (at most 4 wait at once); none waits forever.
    let summary = r[4]["text"].as_str().unwrap();
    let counts: Vec<usize> = summary
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(counts.iter().sum::<usize>(), 60, "{summary}");
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), counts[0], "{summary}");
    assert!(!out["elicitations"].to_string().contains(SECRET));
    assert_eq!(r[5]["text"], "Echo: unaffected");
    eprintln!(
        "relayed of 20,000 each: {} log messages, {} progress notifications; 60 elicitations: {summary}",
        logs.len(),
        progress.len()
    );
    let log = s.log_lines();
    let elicit_lines = log
        .iter()
        .filter(|l| l["tool"] == "mcp__faulty__elicitation/create")
        .count();
    assert_eq!(
        elicit_lines, 60,
        "one decision-log line per relayed request"
    );
}

// ------------------------------------------------------------ a 50 MB image

/// `zero-policy serve --listen 127.0.0.1:0`, with the port it printed.
struct Listening {
    child: Child,
    port: u16,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(policy: &Path) -> Listening {
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg(policy)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let port = loop {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "serve ended before listening"
        );
        if let Some(rest) = line
            .trim()
            .strip_prefix("zero-policy serve: listening on http://127.0.0.1:")
        {
            break rest.trim_end_matches("/mcp").parse().unwrap();
        }
    };
    std::thread::spawn(move || for _ in err.lines() {});
    Listening { child, port }
}

/// A process's peak and current resident size, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    (field("VmHWM:"), field("VmRSS:"))
}

#[test]
fn a_50_mb_image_passes_whole_and_the_gateway_holds_it_at_most_twice_at_once() {
    let s = Scratch::new("image", &faulty("faulty", Path::new("/dev/null")));
    // Over stdio: PyPI `mcp`'s HTTP client refuses SSE events over 1 MiB.
    let mut c = Raw::start(&s.policy());
    c.until_listed("mcp__faulty__image");
    let sizes = |answer: &Value| -> Vec<(String, usize)> {
        answer["result"]["content"]
            .as_array()
            .unwrap_or_else(|| panic!("not a result: {}", &answer.to_string()[..200]))
            .iter()
            .map(|b| {
                (
                    format!(
                        "{} {}",
                        b["type"].as_str().unwrap(),
                        b["mimeType"].as_str().unwrap()
                    ),
                    b["data"].as_str().unwrap().len(),
                )
            })
            .collect()
    };
    let warm = c.call("mcp__faulty__image", json!({"mb": 1}));
    assert_eq!(sizes(&warm), [("image image/png".to_string(), 1_398_104)]);
    let pid = c.child.id();
    let (before, _) = rss_kib(pid);
    let image = c.call("mcp__faulty__image", json!({"mb": 50}));
    // The whole image: 50 MiB is 69,905,068 bytes of base64.
    assert_eq!(image["result"]["isError"], false);
    assert_eq!(sizes(&image), [("image image/png".to_string(), 69_905_068)]);
    drop(image);
    assert_eq!(
        text_of(&c.call("mcp__faulty__echo", json!({"text": "after"}))),
        "echo: after"
    );
    let (peak, now) = rss_kib(pid);
    let image_kib = 69_905_068 / 1024;
    eprintln!(
        "gateway resident size: {before} KiB before, peak {peak} KiB with the 50 MB image \
         (+{:.2} × its base64), {now} KiB after",
        (peak - before) as f64 / image_kib as f64
    );
    // Read, then decoded while the line is dropped, then encoded for the
    // client: about two copies at once at the peak (a copy per step would be
    // four or more), and given back after.
    assert!(
        peak - before < 3 * image_kib,
        "peak {peak} KiB, before {before} KiB"
    );
    assert!(
        now < before + image_kib / 2,
        "{now} KiB kept after the call (before {before})"
    );
    assert!(c.finish().success());
}

// ------------------------------------------------------------ cancelling and going

#[test]
fn a_client_that_cancels_or_goes_mid_request_stops_the_upstream_call_and_no_one_else_notices() {
    let s = Scratch::new(
        "going",
        &format!(
            "{}{}",
            faulty("faulty", &Scratch::marker_path()),
            everything()
        ),
    );
    let _ = std::fs::remove_file(Scratch::marker_path());
    // Cancelled: the upstream is told, the call is logged so, and the session goes on.
    let mut c = Raw::start(&s.policy());
    c.until_listed("mcp__faulty__hang");
    c.until_listed("mcp__everything__echo");
    let id = json!("to-cancel");
    c.line(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "mcp__faulty__hang", "arguments": {}}})
        .to_string(),
    );
    std::thread::sleep(Duration::from_millis(300));
    c.line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id, "reason": "the user pressed stop"}})
        .to_string(),
    );
    wait_for_marker(&Scratch::marker_path());
    assert_eq!(
        text_of(&c.call("mcp__everything__echo", json!({"message": "after cancel"}))),
        "Echo: after cancel"
    );
    // No answer is sent for a cancelled request.
    assert!(!c.seen.iter().any(|m| m["id"] == id), "{:?}", c.seen);
    // Gone: the client's end closes mid-call; the upstream is told, the
    // gateway exits 0.
    std::fs::remove_file(Scratch::marker_path()).unwrap();
    let id = json!("abandoned");
    c.line(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "mcp__faulty__hang", "arguments": {}}})
        .to_string(),
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(c.finish().success());
    wait_for_marker(&Scratch::marker_path());
    let log = s.log_lines();
    let hangs: Vec<&Value> = log
        .iter()
        .filter(|l| l["tool"] == "mcp__faulty__hang")
        .collect();
    assert_eq!(hangs.len(), 2, "{log:?}");
    assert!(hangs.iter().all(|l| l["answer"] == "deny"), "{hangs:?}");

    // Over HTTP, a client whose connection drops mid-call leaves the other
    // clients' calls, to the same server, unaffected.
    let gw = listen(&s.policy());
    let url = format!("http://127.0.0.1:{}/mcp", gw.port);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", gw.port)).unwrap();
    let session = http_initialize(gw.port);
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "mcp__faulty__hang", "arguments": {}}})
    .to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{body}",
        gw.port,
        body.len()
    )
    .unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    drop(stream);
    let out = client(json!({
    "transport": "http", "url": url, "steps": [
        {"op": "call", "name": "mcp__faulty__echo", "args": {"text": "other client"}},
        {"op": "call", "name": "mcp__everything__echo", "args": {"message": "other client"}},
    ]}));
    assert_eq!(out["results"][0]["text"], "echo: other client");
    assert_eq!(out["results"][1]["text"], "Echo: other client");
}

impl Scratch {
    fn marker_path() -> PathBuf {
        std::env::temp_dir().join(format!("zp-faults-hang-marker-{}", std::process::id()))
    }
}

fn wait_for_marker(marker: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::fs::read_to_string(marker).unwrap_or_default() != "cancelled" {
        assert!(
            Instant::now() < deadline,
            "the upstream call was never cancelled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `initialize` and `notifications/initialized` over raw HTTP; the session id.
fn http_initialize(port: u16) -> String {
    let post = |body: &str, session: Option<&str>| -> String {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let session = session
            .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
            .unwrap_or_default();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut head = Vec::new();
        let mut reader = BufReader::new(s);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                break;
            }
            head.push(line);
        }
        head.iter()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .starts_with("mcp-session-id:")
                    .then(|| l.split_once(':').unwrap().1.trim().to_string())
            })
            .unwrap_or_default()
    };
    let id = post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string(),
        None,
    );
    assert!(!id.is_empty(), "no session id");
    post(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        Some(&id),
    );
    id
}

/// Runs the Python SDK client (tests/fixtures/gateway/client.py) with a script.
fn client(script: Value) -> Value {
    let mut child = Command::new(python())
        .arg(gateway_fixture("client.py"))
        .arg(script.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            pipe.read_to_string(&mut s).unwrap();
            s
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the client did not finish in time: {script}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = stdout.join().unwrap();
    let err = stderr.join().unwrap();
    assert!(
        child.wait().unwrap().success(),
        "the client failed:\n{err}\nstdout: {out}"
    );
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"))
}
