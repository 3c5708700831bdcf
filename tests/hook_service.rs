//! `zero-policy serve --hooks ADDR`, the warm decision service, against the
//! real binary over real TCP: the same answers and log lines as `hook AGENT`
//! for every agent, the `http` hooks' native answers, the `hook --via`
//! client, and bad input (oversized and garbled bodies, slow clients,
//! hundreds of parallel clients, a reload under load), each answered in the
//! agent's blocking form with one log line per decision.
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const AGENTS: [&str; 5] = ["claude-code", "codex", "gemini-cli", "cursor", "copilot"];

/// A fresh home (the log and `~/.config/zero-policy` are the test's own: the
/// shipped policy without the rewrite to `run`, as in `tests/hooks.rs`) and
/// an empty working folder.
struct Env {
    root: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        let root = std::env::temp_dir().join(format!("zp-hooksvc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("work")).unwrap();
        let config = root.join("home/.config/zero-policy");
        std::fs::create_dir_all(&config).unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR"));
        for entry in std::fs::read_dir(shipped.join("manifests")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), config.join(entry.file_name())).unwrap();
        }
        let policy = std::fs::read_to_string(shipped.join("policies/default.yaml")).unwrap();
        std::fs::write(
            config.join("default.yaml"),
            policy.replacen("\n    shell: true\n", "\n    shell: false\n", 1),
        )
        .unwrap();
        Env { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn config(&self) -> PathBuf {
        self.home().join(".config/zero-policy")
    }

    fn log(&self) -> PathBuf {
        self.home().join(".local/state/zero-policy/decisions.jsonl")
    }

    fn log_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn clear_log(&self) {
        let _ = std::fs::remove_file(self.log());
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_zero-policy"));
        cmd.args(args)
            .current_dir(self.root.join("work"))
            .env("HOME", self.home())
            .env_remove("ZERO_POLICY_PATH")
            .env_remove("ZERO_POLICY_HOOK_TOKEN")
            .env_remove("ZERO_POLICY_BUNDLE")
            .env_remove("ZERO_POLICY_BUNDLE_KEY");
        cmd
    }

    /// `zero-policy ARGS` with `input` on stdin.
    fn run(&self, args: &[&str], input: &[u8]) -> Answer {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(input);
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        Answer {
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
            code: out.status.code().unwrap_or(-1),
        }
    }

    /// Starts `serve --hooks 127.0.0.1:0 EXTRA...`.
    fn serve(&self, extra: &[&str], env: &[(&str, &str)]) -> Service {
        let mut args = vec!["serve", "--hooks", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = self
            .command(&args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let said = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Arc::clone(&said);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line
                    .split("answering hook events on http://127.0.0.1:")
                    .nth(1)
                {
                    let port: u16 = rest.split('/').next().unwrap().parse().unwrap();
                    let _ = tx.send(port);
                }
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the service did not start: {}", said.lock().unwrap()));
        Service { child, port, said }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What a hook printed and returned.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    stdout: String,
    stderr: String,
    code: i32,
}

struct Service {
    child: Child,
    port: u16,
    said: Arc<Mutex<String>>,
}

impl Service {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn stderr(&self) -> String {
        self.said.lock().unwrap().clone()
    }

    /// Stops it with SIGTERM; its exit code.
    fn stop(mut self) -> Option<i32> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        self.child.wait().unwrap().code()
    }

    /// Posts `body` to `/hooks/AGENT` asking for the process form: what
    /// `hook AGENT` would have printed and returned.
    fn process(&self, agent: &str, body: &[u8]) -> Answer {
        let (status, body) = post(
            self.port,
            &format!("/hooks/{agent}"),
            &[("zero-policy-answer", "process")],
            body,
        );
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        Answer {
            stdout: v["stdout"].as_str().unwrap().into(),
            stderr: v["stderr"].as_str().unwrap().into(),
            code: i32::try_from(v["code"].as_i64().unwrap()).unwrap(),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request over a fresh connection: the status and the body.
fn post(port: u16, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    raw(port, &[head.as_bytes(), body].concat())
}

/// Sends bytes as they are; the status and body of the answer (status 0: none).
fn raw(port: u16, bytes: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(bytes);
    read_response(&mut s)
}

fn read_response(s: &mut TcpStream) -> (u16, String) {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn fixtures(agent: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(agent);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn event(agent: &str, name: &str) -> Vec<u8> {
    fixtures(agent)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap()
        .1
}

/// A log line without what differs from run to run.
fn stable(mut line: Value) -> Value {
    let o = line.as_object_mut().unwrap();
    o.remove("time");
    o.remove("duration_us");
    line
}

/// The reason of a blocking answer in `agent`'s protocol (as `hook` gives it).
fn blocked_reason(agent: &str, a: &Answer) -> String {
    match agent {
        "cursor" => {
            assert_eq!(a.code, 2, "{a:?}");
            let v: Value = serde_json::from_str(&a.stdout).unwrap();
            assert_eq!(v["permission"], "deny", "{a:?}");
            v["agent_message"].as_str().unwrap().to_string()
        }
        "copilot" => {
            assert_eq!(a.code, 0, "{a:?}");
            let v: Value = serde_json::from_str(&a.stdout).unwrap();
            assert_eq!(v["permissionDecision"], "deny", "{a:?}");
            v["permissionDecisionReason"].as_str().unwrap().to_string()
        }
        _ => {
            assert_eq!(a.code, 2, "{a:?}");
            assert_eq!(a.stdout, "", "{a:?}");
            a.stderr.trim_end().to_string()
        }
    }
}

/// The reason of a native (`http` hook) answer that denies, in any agent's JSON.
fn native_deny(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let text = v.to_string();
    assert!(text.contains("\"deny\""), "{text}");
    assert!(!text.contains("\"allow\""), "{text}");
    for path in [
        "/hookSpecificOutput/permissionDecisionReason",
        "/permissionDecisionReason",
        "/reason",
        "/agent_message",
    ] {
        if let Some(r) = v.pointer(path).and_then(Value::as_str) {
            return r.to_string();
        }
    }
    panic!("no reason in {text}");
}

fn bad_bodies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("not json", b"not json".to_vec()),
        ("empty", Vec::new()),
        ("an array", b"[1, 2]".to_vec()),
        ("no fields", b"{}".to_vec()),
        ("not UTF-8", vec![0xff, 0xfe, b'{', 0x80]),
    ]
}

// ── the same answers as `hook` ───────────────────────────────────────────────

#[test]
fn every_agents_events_get_the_hooks_answers_and_log_lines_through_the_service_and_via() {
    let env = Env::new("same");
    let service = env.serve(&[], &[]);
    let url = service.url();
    let mut cases = 0;
    for agent in AGENTS {
        let mut inputs = fixtures(agent);
        inputs.extend(bad_bodies().into_iter().map(|(n, b)| (n.to_string(), b)));
        for (name, input) in inputs {
            env.clear_log();
            let by_hook = env.run(&["hook", agent], &input);
            let hook_log = env.log_lines();
            env.clear_log();
            let by_service = service.process(agent, &input);
            let service_log = env.log_lines();
            env.clear_log();
            let by_via = env.run(&["hook", agent, "--via", &url], &input);
            let via_log = env.log_lines();
            assert_eq!(by_service, by_hook, "{agent} {name}");
            assert_eq!(by_via, by_hook, "{agent} {name}");
            assert_eq!(hook_log.len(), 1, "{agent} {name}: {hook_log:?}");
            assert_eq!(
                service_log.into_iter().map(stable).collect::<Vec<_>>(),
                hook_log.iter().cloned().map(stable).collect::<Vec<_>>(),
                "{agent} {name}"
            );
            assert_eq!(
                via_log.into_iter().map(stable).collect::<Vec<_>>(),
                hook_log.into_iter().map(stable).collect::<Vec<_>>(),
                "{agent} {name}"
            );
            cases += 1;
        }
    }
    assert!(cases > 50, "{cases}");
    assert_eq!(service.stop(), Some(0));
}

#[test]
fn claude_code_and_copilot_http_hooks_get_their_native_answers() {
    let env = Env::new("native");
    let service = env.serve(&[], &[]);
    // Decided: the body is what `hook` prints.
    for (agent, name) in [
        ("claude-code", "bash-git-status.json"),
        ("claude-code", "bash-rm-rf-root.json"),
        ("claude-code", "unknown-tool.json"),
        ("copilot", "bash-rm-rf-root.json"),
    ] {
        let input = event(agent, name);
        let by_hook = env.run(&["hook", agent], &input);
        let (status, body) = post(service.port, &format!("/hooks/{agent}"), &[], &input);
        assert_eq!(status, 200);
        let a: Value = serde_json::from_str(&body).unwrap();
        let b: Value = serde_json::from_str(&by_hook.stdout).unwrap();
        assert_eq!(a, b, "{agent} {name}");
    }
    // Copilot allows by saying nothing: an empty object.
    let (status, body) = post(
        service.port,
        "/hooks/copilot",
        &[],
        &event("copilot", "bash-git-status.json"),
    );
    assert_eq!((status, body.as_str()), (200, "{}"));
    // Where `hook` exits 2 with the reason on stderr, the body is a deny.
    for agent in AGENTS {
        let (status, body) = post(service.port, &format!("/hooks/{agent}"), &[], b"not json");
        assert_eq!(status, 200, "{agent}");
        let reason = native_deny(&body);
        assert!(
            reason.starts_with("zero-policy: the call is blocked: cannot read the"),
            "{agent}: {reason}"
        );
    }
    let claude: Value =
        serde_json::from_str(&post(service.port, "/hooks/claude-code", &[], b"{").1).unwrap();
    assert_eq!(
        claude["hookSpecificOutput"]["permissionDecision"], "deny",
        "{claude}"
    );
    // Anything but an agent's endpoint is not found, and not logged.
    let before = env.log_lines().len();
    assert_eq!(post(service.port, "/hooks/nobody", &[], b"{}").0, 404);
    assert_eq!(post(service.port, "/mcp", &[], b"{}").0, 404);
    assert_eq!(env.log_lines().len(), before);
}

// ── bad input ────────────────────────────────────────────────────────────────

#[test]
fn oversized_garbled_and_refused_requests_are_blocked_and_logged_once_each() {
    let env = Env::new("bad");
    let service = env.serve(&[], &[]);
    let port = service.port;
    let good = event("claude-code", "bash-git-status.json");
    let big = {
        let mut v = b"{\"pad\": \"".to_vec();
        v.resize(4 * 1024 * 1024 + 10, b'x');
        v.extend_from_slice(b"\"}");
        v
    };
    let chunked = {
        // No length given: the cap is found while reading.
        let mut v = format!(
            "POST /hooks/codex HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\nzero-policy-answer: process\r\nConnection: close\r\n\r\n"
        )
        .into_bytes();
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..5 {
            v.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            v.extend_from_slice(&chunk);
            v.extend_from_slice(b"\r\n");
        }
        v.extend_from_slice(b"0\r\n\r\n");
        v
    };
    let get = format!(
        "GET /hooks/codex HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nzero-policy-answer: process\r\nConnection: close\r\n\r\n"
    );
    let cases: Vec<(&str, (u16, String), &str)> = vec![
        (
            "codex",
            post(port, "/hooks/codex", &[("zero-policy-answer", "process")], &big),
            "larger than 4 MiB",
        ),
        ("codex", raw(port, &chunked), "larger than 4 MiB"),
        ("codex", raw(port, get.as_bytes()), "answers only POST"),
        (
            "codex",
            post(
                port,
                "/hooks/codex",
                &[("zero-policy-answer", "process"), ("Origin", "https://evil.example")],
                &good,
            ),
            "from a web page",
        ),
        (
            "codex",
            raw(
                port,
                &[
                    format!(
                        "POST /hooks/codex HTTP/1.1\r\nHost: evil.example:{port}\r\nzero-policy-answer: process\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        good.len()
                    )
                    .as_bytes(),
                    &good,
                ]
                .concat(),
            ),
            "DNS rebinding",
        ),
        (
            "claude-code",
            post(port, "/hooks/claude-code", &[], &big),
            "larger than 4 MiB",
        ),
    ];
    for (agent, (status, body), why) in &cases {
        assert_eq!(*status, 200, "{why}: {body}");
        let reason = if body.contains("\"code\"") {
            let v: Value = serde_json::from_str(body).unwrap();
            blocked_reason(
                agent,
                &Answer {
                    stdout: v["stdout"].as_str().unwrap().into(),
                    stderr: v["stderr"].as_str().unwrap().into(),
                    code: i32::try_from(v["code"].as_i64().unwrap()).unwrap(),
                },
            )
        } else {
            native_deny(body)
        };
        assert!(
            reason.starts_with("zero-policy: the call is blocked: "),
            "{reason}"
        );
        assert!(reason.contains(why), "{why}: {reason}");
    }
    // Not HTTP at all: refused by the HTTP layer, and the service goes on.
    let (status, _) = raw(port, b"\x16\x03\x01 hello there\r\n\r\n");
    assert_ne!(status, 200);
    let after = service.process("claude-code", &good);
    assert_eq!(after.code, 0, "{after:?}");
    // One line per request that reached an agent's endpoint.
    let log = env.log_lines();
    assert_eq!(log.len(), cases.len() + 1, "{log:#?}");
    assert!(
        log[..cases.len()]
            .iter()
            .all(|l| l["decision"] == "error" && l["answer"] == "deny"),
        "{log:#?}"
    );
    assert_eq!(log[cases.len()]["decision"], "allow");
}

#[test]
fn slow_clients_are_answered_blocked_and_hold_up_nobody() {
    let env = Env::new("slow");
    let service = env.serve(&[], &[]);
    let port = service.port;
    let good = event("codex", "bash-rm-rf-root.json");
    // Headers and the start of the body, then nothing more.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.write_all(
        format!(
            "POST /hooks/codex HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nzero-policy-answer: process\r\nContent-Length: {}\r\n\r\n",
            good.len()
        )
        .as_bytes(),
    )
    .unwrap();
    slow.write_all(&good[..10]).unwrap();
    // Headers never finished.
    let mut stalled = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stalled
        .write_all(b"POST /hooks/codex HTTP/1.1\r\nHost: 127.0.0.1")
        .unwrap();
    // Meanwhile others are answered, while the slow one still waits.
    let others: Vec<Answer> = (0..20).map(|_| service.process("codex", &good)).collect();
    slow.set_nonblocking(true).unwrap();
    let mut probe = [0u8; 1];
    assert!(
        matches!(slow.read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the slow client was answered before the others"
    );
    slow.set_nonblocking(false).unwrap();
    for a in &others {
        assert_eq!(a.code, 0, "{a:?}");
        let v: Value = serde_json::from_str(&a.stdout).unwrap();
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    }
    // Then the slow one gets the blocking answer.
    slow.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (status, body) = read_response(&mut slow);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["code"], 2, "{v}");
    assert!(
        v["stderr"]
            .as_str()
            .unwrap()
            .contains("the event did not arrive within"),
        "{v}"
    );
    // The one that never finished its headers is closed, never allowed.
    stalled
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let (status, _) = read_response(&mut stalled);
    assert_ne!(status, 200);
    let log = env.log_lines();
    assert_eq!(log.len(), 21, "{log:#?}");
    assert_eq!(
        log.iter().filter(|l| l["decision"] == "error").count(),
        1,
        "{log:#?}"
    );
}

#[test]
fn the_via_client_blocks_when_the_service_is_down_or_does_not_answer() {
    let env = Env::new("via-down");
    let input = event("gemini-cli", "bash-git-status.json");
    // Nothing listens there.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    // A listener that accepts and never answers.
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mute_port = mute.local_addr().unwrap().port();
    let _held = std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in mute.incoming().take(1) {
            held.push(s);
            std::thread::sleep(Duration::from_secs(30));
        }
    });
    for (url, why) in [
        (format!("http://127.0.0.1:{port}"), "cannot connect"),
        (format!("http://127.0.0.1:{mute_port}"), "no answer within"),
        ("https://127.0.0.1:1".to_string(), "plain `http://`"),
    ] {
        for agent in AGENTS {
            if agent != "gemini-cli" && why == "no answer within" {
                continue;
            }
            let a = env.run(
                &["hook", agent, "--via", &url],
                &event(agent, &fixtures(agent)[0].0),
            );
            let reason = blocked_reason(agent, &a);
            assert!(reason.contains(why), "{agent} {url}: {reason}");
        }
    }
    let a = env.run(&["hook", "gemini-cli", "--via", "127.0.0.1:1"], &input);
    assert!(blocked_reason("gemini-cli", &a).contains("gave no answer"));
    // Each blocked call is logged, by the client, to the default log.
    let log = env.log_lines();
    assert_eq!(log.len(), 5 + 1 + 5 + 1, "{log:#?}");
    assert!(
        log.iter()
            .all(|l| l["decision"] == "error" && l["answer"] == "deny")
    );
}

#[test]
fn hundreds_of_parallel_clients_each_get_their_answer_and_one_log_line() {
    let env = Env::new("parallel");
    let service = env.serve(&[], &[]);
    let port = service.port;
    const CLIENTS: usize = 300;
    let threads: Vec<_> = (0..CLIENTS)
        .map(|i| {
            std::thread::spawn(move || {
                let command = if i.is_multiple_of(2) {
                    "git status"
                } else {
                    "rm -rf /"
                };
                let body = json!({
                    "session_id": format!("s{i}"),
                    "cwd": "/tmp",
                    "permission_mode": "default",
                    "hook_event_name": "PreToolUse",
                    "tool_name": "Bash",
                    "tool_input": {"command": command},
                })
                .to_string();
                let (status, answer) = post(port, "/hooks/claude-code", &[], body.as_bytes());
                (i, status, answer)
            })
        })
        .collect();
    for t in threads {
        let (i, status, answer) = t.join().unwrap();
        assert_eq!(status, 200, "{i}: {answer}");
        let v: Value = serde_json::from_str(&answer).unwrap();
        let want = if i.is_multiple_of(2) { "allow" } else { "deny" };
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], want,
            "{i}: {answer}"
        );
    }
    let log = env.log_lines();
    assert_eq!(log.len(), CLIENTS);
    let mut sessions: Vec<String> = log
        .iter()
        .map(|l| l["session"].as_str().unwrap().to_string())
        .collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), CLIENTS);
    for l in &log {
        let i: usize = l["session"].as_str().unwrap()[1..].parse().unwrap();
        assert_eq!(
            l["answer"],
            if i.is_multiple_of(2) { "allow" } else { "deny" }
        );
    }
    assert_eq!(service.stop(), Some(0));
}

#[test]
fn a_reload_under_load_swaps_the_policy_whole_and_a_broken_one_keeps_the_last_good() {
    let env = Env::new("reload");
    let rule = env.config().join("zz-git.yaml");
    let deny_git = "version: 1\nrules:\n  - id: no-git-status\n    tools: [Bash]\n    when: call.commands.exists(c, c.program == \"git\")\n    action: deny\n    reason: no git here\n";
    let service = env.serve(&[], &[]);
    let port = service.port;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let body = event("claude-code", "bash-git-status.json");
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let stop = Arc::clone(&stop);
            let body = body.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (status, answer) = post(port, "/hooks/claude-code", &[], &body);
                    assert_eq!(status, 200, "{answer}");
                    let v: Value = serde_json::from_str(&answer).unwrap();
                    seen.push(
                        v["hookSpecificOutput"]["permissionDecision"]
                            .as_str()
                            .unwrap()
                            .to_string(),
                    );
                }
                seen
            })
        })
        .collect();
    let wait_for = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (_, answer) = post(port, "/hooks/claude-code", &[], &body);
            let v: Value = serde_json::from_str(&answer).unwrap();
            if v["hookSpecificOutput"]["permissionDecision"] == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "still {answer}: {}",
                service.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for("allow");
    std::fs::write(&rule, deny_git).unwrap();
    wait_for("deny");
    // A policy that no longer loads: the last good one stays.
    std::fs::write(&rule, "version: 1\nrules: [\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !service.stderr().contains("kept the last good policy") {
        assert!(Instant::now() < deadline, "{}", service.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    wait_for("deny");
    std::fs::remove_file(&rule).unwrap();
    wait_for("allow");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answers = Vec::new();
    for c in clients {
        answers.extend(c.join().unwrap());
    }
    // Every answer was a decision, never a failure.
    assert!(
        answers.iter().all(|a| a == "allow" || a == "deny"),
        "{answers:?}"
    );
    assert!(answers.len() > 20, "{}", answers.len());
    assert_eq!(service.stop(), Some(0));
    // Every decision has its one line; the broken policy one note.
    let log = env.log_lines();
    let decisions: Vec<&Value> = log
        .iter()
        .filter(|l| l["front"] == "hook:claude-code")
        .collect();
    assert!(
        decisions.len() >= answers.len(),
        "{} < {}",
        decisions.len(),
        answers.len()
    );
    assert!(decisions.iter().all(|l| l["decision"] != "error"));
    let notes: Vec<&Value> = log.iter().filter(|l| l["front"] == "serve:hooks").collect();
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert!(
        notes[0]["reason"]
            .as_str()
            .unwrap()
            .contains("kept the last good policy")
    );
}

#[test]
fn a_policy_that_does_not_load_blocks_every_call_as_the_hook_does() {
    let env = Env::new("broken");
    std::fs::write(env.config().join("broken.yaml"), "version: 1\nrules: [\n").unwrap();
    let service = env.serve(&[], &[]);
    assert!(
        service
            .stderr()
            .contains("every call is blocked until the policy loads")
    );
    for agent in AGENTS {
        let input = &fixtures(agent)[0].1;
        let by_hook = env.run(&["hook", agent], input);
        let by_service = service.process(agent, input);
        assert_eq!(by_service, by_hook, "{agent}");
        assert!(blocked_reason(agent, &by_service).contains("the policy does not load"));
    }
}

// ── the token ────────────────────────────────────────────────────────────────

#[test]
fn a_public_address_needs_a_token_and_a_token_is_checked() {
    let env = Env::new("token");
    let out = env
        .command(&["serve", "--hooks", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));

    let token = "t0k3n-for-the-test";
    let service = env.serve(&[], &[("ZERO_POLICY_HOOK_TOKEN", token)]);
    let input = event("claude-code", "bash-git-status.json");
    let bearer = format!("Bearer {token}");
    let (_, ok) = post(
        service.port,
        "/hooks/claude-code",
        &[("Authorization", &bearer)],
        &input,
    );
    let v: Value = serde_json::from_str(&ok).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
    for given in [
        None,
        Some("Bearer wrong"),
        Some("Bearer t0k3n-for-the-tesT"),
    ] {
        let headers: Vec<(&str, &str)> = given.iter().map(|g| ("Authorization", *g)).collect();
        let (status, body) = post(service.port, "/hooks/claude-code", &headers, &input);
        assert_eq!(status, 200);
        assert!(native_deny(&body).contains("unauthorized"), "{body}");
    }
    // The client sends the token from the same variable.
    let a = env.run(&["hook", "claude-code", "--via", &service.url()], &input);
    assert!(
        blocked_reason("claude-code", &a).contains("unauthorized"),
        "{a:?}"
    );
    let mut with = env.command(&["hook", "claude-code", "--via", &service.url()]);
    with.env("ZERO_POLICY_HOOK_TOKEN", token)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = with.spawn().unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
}

// ── init --http ──────────────────────────────────────────────────────────────

#[test]
fn init_http_wires_http_hooks_and_via_clients_idempotently_keeping_other_keys() {
    let env = Env::new("init");
    let work = env.root.join("work");
    std::fs::create_dir_all(work.join(".claude")).unwrap();
    std::fs::write(
        work.join(".claude/settings.json"),
        r#"{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}}"#,
    )
    .unwrap();
    let init = |args: &[&str]| {
        let out = env.command(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(work.join(p)).unwrap()).unwrap()
    };
    init(&["init", "claude-code"]);
    let said = init(&["init", "claude-code", "--http", "127.0.0.1:8787"]);
    assert!(
        said.contains(
            "updated the `PreToolUse` hook `POST http://127.0.0.1:8787/hooks/claude-code`"
        ),
        "{said}"
    );
    let again = init(&["init", "claude-code", "--http", "http://127.0.0.1:8787/"]);
    assert!(again.contains("nothing to change"), "{again}");
    let v = read(".claude/settings.json");
    assert_eq!(v["model"], "opus");
    let groups = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{v}");
    assert_eq!(groups[0]["hooks"][0]["command"], "echo mine");
    assert_eq!(
        groups[1]["hooks"][0],
        json!({"type": "http", "url": "http://127.0.0.1:8787/hooks/claude-code", "timeout": 30, "onFailure": "block"})
    );
    // And back to the command.
    init(&["init", "claude-code"]);
    let v = read(".claude/settings.json");
    assert_eq!(v["hooks"]["PreToolUse"][1]["hooks"][0]["type"], "command");
    assert!(
        v.to_string().matches("/hooks/claude-code").count() == 0,
        "{v}"
    );

    // Copilot CLI skips a loopback `http://` hook unless a variable is set:
    // it gets the client, which always fires.
    let said = init(&["init", "copilot", "--http", "127.0.0.1:8787"]);
    assert!(said.contains("COPILOT_HOOK_ALLOW_LOCALHOST=1"), "{said}");
    for (agent, file) in [
        ("copilot", ".github/hooks/zero-policy.json"),
        ("codex", ".codex/hooks.json"),
        ("gemini-cli", ".gemini/settings.json"),
        ("cursor", ".cursor/hooks.json"),
    ] {
        init(&["init", agent, "--http", "127.0.0.1:8787"]);
        init(&["init", agent, "--http", "127.0.0.1:8787"]);
        let text = std::fs::read_to_string(work.join(file)).unwrap();
        let via = format!("hook {agent} --via http://127.0.0.1:8787");
        assert!(text.contains(&via), "{text}");
        // One entry per event, whatever the runs.
        let v: Value = serde_json::from_str(&text).unwrap();
        let events = v["hooks"].as_object().unwrap();
        for (event, list) in events {
            assert_eq!(
                list.to_string().matches(&via).count(),
                1,
                "{agent} {event}: {text}"
            );
        }
    }
    let bad = env
        .command(&["init", "codex", "--http", "https://127.0.0.1:8787"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

// ── bundles ──────────────────────────────────────────────────────────────────

fn minisign_keygen(dir: &Path) -> (PathBuf, PathBuf) {
    let (public, secret) = (dir.join("team.pub"), dir.join("team.key"));
    let out = Command::new("minisign")
        .args(["-G", "-W", "-f", "-p"])
        .arg(&public)
        .arg("-s")
        .arg(&secret)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (public, secret)
}

#[test]
fn a_bundle_is_served_and_a_new_signed_one_is_taken_on_the_fly() {
    let env = Env::new("bundle");
    let (public, secret) = minisign_keygen(&env.root);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bundle = env.root.join("team.bundle");
    let extra = env.root.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let build = |version: &str, with_rule: bool| {
        let mut args: Vec<String> = vec![
            "bundle".into(),
            "build".into(),
            repo.join("policies").display().to_string(),
            repo.join("manifests").display().to_string(),
        ];
        if with_rule {
            std::fs::write(
                extra.join("git.yaml"),
                "version: 1\nrules:\n  - id: no-git\n    tools: [Bash]\n    when: call.commands.exists(c, c.program == \"git\")\n    action: deny\n    reason: no git here\n",
            )
            .unwrap();
            args.push(extra.display().to_string());
        }
        args.extend([
            "-o".into(),
            bundle.display().to_string(),
            "--version".into(),
            version.into(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = env.command(&args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let out = Command::new("minisign")
            .arg("-S")
            .arg("-m")
            .arg(&bundle)
            .arg("-s")
            .arg(&secret)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    build("v1", false);
    let bundle_arg = bundle.display().to_string();
    let key_arg = public.display().to_string();
    let flags = ["--bundle", bundle_arg.as_str(), "--key", key_arg.as_str()];
    let service = env.serve(&flags, &[]);
    let input = event("claude-code", "bash-git-status.json");
    let by_hook = env.run(&[&["hook", "claude-code"][..], &flags[..]].concat(), &input);
    env.clear_log();
    // The shipped policy rewrites the call to `run`, through a file of its own each time.
    let same = |a: &Answer| {
        regex::Regex::new("/cwd/[0-9a-f]+\\.cwd")
            .unwrap()
            .replace_all(&a.stdout, "/cwd/X.cwd")
            .into_owned()
    };
    let by_service = service.process("claude-code", &input);
    assert_eq!(same(&by_service), same(&by_hook));
    assert_eq!(
        (&by_service.stderr, by_service.code),
        (&by_hook.stderr, by_hook.code)
    );
    assert!(
        by_service
            .stdout
            .contains("zero-policy run --agent claude-code"),
        "{by_service:?}"
    );
    assert_eq!(env.log_lines()[0]["bundle"], "v1");
    build("v2", true);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let a = service.process("claude-code", &input);
        if a.stdout.contains("no git here") {
            break;
        }
        assert!(Instant::now() < deadline, "{a:?} {}", service.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(service.stderr().contains("bundle `v2` is in force"));
    assert_eq!(env.log_lines().last().unwrap()["bundle"], "v2");
}

#[test]
fn doctor_probes_an_http_hook_through_the_service_and_says_when_it_is_down() {
    let env = Env::new("doctor");
    let service = env.serve(&[], &[]);
    let out = env
        .command(&["init", "claude-code", "--http", &service.url()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doctor = || {
        let out = env.command(&["doctor", "claude-code"]).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let text = doctor();
    let line = |text: &str, what: &str| -> String {
        text.lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no `{what}` in {text}"))
            .to_string()
    };
    assert!(
        line(&text, "hook claude-code  ").starts_with("ok"),
        "{text}"
    );
    let probe = line(&text, "hook claude-code probe");
    assert!(
        probe.starts_with("ok") && probe.ends_with("(a deny)"),
        "{text}"
    );
    assert!(!text.contains("nothing answers"), "{text}");
    assert_eq!(service.stop(), Some(0));
    let text = doctor();
    assert!(
        line(&text, "hook claude-code service").starts_with("warn"),
        "{text}"
    );
    assert!(
        line(&text, "hook claude-code probe").ends_with("(exit 2)"),
        "{text}"
    );
}
