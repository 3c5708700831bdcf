//! Decision records sent as OTLP/HTTP logs, JSON or protobuf, over HTTP or
//! HTTPS, to a stand-in collector (tests/fixtures/otlp/collector.py, a real
//! HTTP server) that decodes each payload with the official OpenTelemetry
//! definitions (PyPI `opentelemetry-proto`), not with our own parser.
//!
//! Needs `.ci/mcp-deps.sh` (the venv with `opentelemetry-proto`).
#![expect(clippy::unwrap_used, reason = "tests")]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Collector {
    child: Child,
    port: u16,
    received: PathBuf,
}

impl Collector {
    /// Over TLS with `tls`'s (certificate, key) when given.
    fn start(dir: &Path, tls: Option<(&Path, &Path)>) -> Collector {
        let received = dir.join("received.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otlp/collector.py");
        let mut command = Command::new(common::python());
        command.arg(common::require(script)).arg(&received);
        if let Some((cert, key)) = tls {
            command.arg(cert).arg(key);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Collector {
            child,
            port,
            received,
        }
    }

    fn wait_for(&self, n: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(&self.received).unwrap_or_default();
            if text.lines().count() >= n || started.elapsed() > Duration::from_secs(20) {
                return text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hook(dir: &Path, endpoint: &str, command: &str) -> Output {
    common::claude_bash_hook(
        dir,
        &format!("    otlp:\n      endpoint: \"{endpoint}\"\n"),
        command,
    )
}

#[test]
fn the_collector_decodes_each_decision_with_its_rules_at_file_and_line() {
    let dir = std::env::temp_dir().join(format!("zp-otlp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let collector = Collector::start(&dir, None);
    let endpoint = format!("http://127.0.0.1:{}/v1/logs", collector.port);
    let out = hook(&dir, &endpoint, "rm -rf /");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let out = hook(&dir, &endpoint, "git status");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let got = collector.wait_for(2);
    assert_eq!(got.len(), 2, "{got:?}");

    let deny = &got[0];
    assert_eq!(deny["severity_number"], 13);
    assert_eq!(deny["severity_text"], "WARN");
    assert_eq!(deny["scope"], "zero-policy");
    assert_eq!(deny["resource"]["service.name"], "zero-policy");
    assert_eq!(deny["attributes"]["zero_policy.decision"], "deny");
    assert_eq!(deny["attributes"]["zero_policy.tool"], "Bash");
    assert_eq!(deny["attributes"]["zero_policy.front"], "hook:claude-code");
    let local =
        std::fs::read_to_string(dir.join("home/.local/state/zero-policy/decisions.jsonl")).unwrap();
    let first: Value = serde_json::from_str(local.lines().next().unwrap()).unwrap();
    // The body is the local log's line; its rules are the attribute's.
    assert_eq!(
        serde_json::from_str::<Value>(deny["body"].as_str().unwrap()).unwrap(),
        first
    );
    let rules: Vec<String> = first["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}@{}:{}",
                r["id"].as_str().unwrap(),
                r["file"].as_str().unwrap(),
                r["line"]
            )
        })
        .collect();
    assert!(!rules.is_empty());
    assert_eq!(
        deny["attributes"]["zero_policy.rules"],
        serde_json::json!(rules)
    );
    // The record's time, in nanoseconds: within a day of now.
    let nanos = deny["time_unix_nano"].as_u64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(now.abs_diff(nanos) < 86_400_000_000_000, "{nanos} vs {now}");

    assert_eq!(got[1]["severity_number"], 9);
    assert_eq!(got[1]["attributes"]["zero_policy.decision"], "allow");
    drop(collector);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn protobuf_over_https_reaches_the_collector_and_decodes_with_the_official_definitions() {
    let dir = std::env::temp_dir().join(format!("zp-otlp-pb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (ca, cert, key) = common::test_certificates(&dir);
    let collector = Collector::start(&dir, Some((&cert, &key)));
    let settings = |ca: &Path| {
        format!(
            "    otlp:\n      endpoint: \"https://127.0.0.1:{}/v1/logs\"\n      encoding: protobuf\n      ca: \"{}\"\n",
            collector.port,
            ca.display()
        )
    };
    let out = common::claude_bash_hook(&dir, &settings(&ca), "rm -rf /");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let got = collector.wait_for(1);
    assert_eq!(got.len(), 1, "{got:?}");
    let deny = &got[0];
    assert_eq!(deny["encoding"], "application/x-protobuf");
    assert_eq!(deny["severity_number"], 13);
    assert_eq!(deny["severity_text"], "WARN");
    assert_eq!(deny["scope"], "zero-policy");
    assert_eq!(deny["resource"]["service.name"], "zero-policy");
    assert_eq!(deny["attributes"]["zero_policy.decision"], "deny");
    let local =
        std::fs::read_to_string(dir.join("home/.local/state/zero-policy/decisions.jsonl")).unwrap();
    let first: Value = serde_json::from_str(local.lines().next().unwrap()).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(deny["body"].as_str().unwrap()).unwrap(),
        first
    );
    let rules = deny["attributes"]["zero_policy.rules"].as_array().unwrap();
    assert_eq!(rules.len(), first["rules"].as_array().unwrap().len());
    assert!(
        rules[0].as_str().unwrap().contains("@policies/")
            || rules[0].as_str().unwrap().contains("/policies/"),
        "{rules:?}"
    );

    // Trusting another CA: nothing reaches the collector; the answer stands,
    // and the record waits in the spool.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let (other_ca, _, _) = common::test_certificates(&other);
    let out = common::claude_bash_hook(&dir, &settings(&other_ca), "git log");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("within 300 ms; it waits in `"),
        "{out:?}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(collector.wait_for(1).len(), 1);

    // The CA set right again: the next decision sends the one that waited,
    // then its own, in order.
    let out = common::claude_bash_hook(&dir, &settings(&ca), "git status");
    assert!(out.stderr.is_empty(), "{out:?}");
    let all = collector.wait_for(3);
    let commands: Vec<String> = all
        .iter()
        .map(|r| {
            let body: serde_json::Value =
                serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
            body["args"]["command"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(commands, ["rm -rf /", "git log", "git status"], "{all:?}");
    drop(collector);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_endpoint_that_is_not_http_and_a_relative_ca_are_load_errors_and_the_hook_fails_closed() {
    let dir = std::env::temp_dir().join(format!("zp-otlp-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = hook(&dir, "ftp://collector.example/v1/logs", "git status");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("is not an `https://` or `http://` URL"),
        "{stderr}"
    );
    let out = common::claude_bash_hook(
        &dir,
        "    otlp:\n      endpoint: \"https://collector.example/v1/logs\"\n      ca: \"ca.pem\"\n",
        "git status",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`log.otlp.ca` `ca.pem` is relative"),
        "{out:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
