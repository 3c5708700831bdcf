//! Decision records reach a real rsyslog (`rsyslogd`, started by the test on
//! a loopback port, writing what it receives to a file) as RFC 5424 messages
//! over TCP with octet-counting framing; a receiver that is down never holds
//! up a decision.
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Rsyslog {
    child: Child,
    received: PathBuf,
    port: u16,
}

impl Rsyslog {
    /// Listens on a free loopback port; over TLS (rsyslog's `ossl` stream
    /// driver) with `tls`'s (CA, certificate, key).
    fn start(dir: &Path, tls: Option<&(PathBuf, PathBuf, PathBuf)>) -> Rsyslog {
        Rsyslog::start_on(dir, tls, free_port())
    }

    /// As [`Rsyslog::start`], on `port`.
    fn start_on(dir: &Path, tls: Option<&(PathBuf, PathBuf, PathBuf)>, port: u16) -> Rsyslog {
        let work = dir.join("rsyslog-work");
        std::fs::create_dir_all(&work).unwrap();
        let received = dir.join("received.log");
        let conf = dir.join("rsyslog.conf");
        let (global, module) = match tls {
            None => (String::new(), String::new()),
            Some((ca, cert, key)) => (
                format!(
                    r#" defaultNetstreamDriverCAFile="{}" defaultNetstreamDriverCertFile="{}" defaultNetstreamDriverKeyFile="{}""#,
                    ca.display(),
                    cert.display(),
                    key.display()
                ),
                r#" streamDriver.name="ossl" streamDriver.mode="1" streamDriver.authMode="anon""#
                    .to_string(),
            ),
        };
        std::fs::write(
            &conf,
            format!(
                r#"global(workDirectory="{work}"{global})
module(load="imtcp"{module})
template(name="raw" type="string" string="%rawmsg%\n")
ruleset(name="zp") {{
  action(type="omfile" file="{received}" template="raw" flushOnTXEnd="on" asyncWriting="off")
}}
input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="zp")
"#,
                work = work.display(),
                received = received.display(),
            ),
        )
        .unwrap();
        let child = Command::new("rsyslogd")
            .arg("-n")
            .arg("-f")
            .arg(&conf)
            .arg("-i")
            .arg(dir.join("rsyslog.pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("rsyslogd: {e} (apt-get install rsyslog)"));
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "rsyslogd did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Rsyslog {
            child,
            received,
            port,
        }
    }

    /// What it has written once it holds `n` messages (or after 20 s).
    fn wait_for(&self, n: usize) -> String {
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(&self.received).unwrap_or_default();
            if text.lines().count() >= n || started.elapsed() > Duration::from_secs(20) {
                return text;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zp-syslog-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("home")).unwrap();
    std::fs::create_dir_all(d.join("work")).unwrap();
    std::fs::create_dir_all(d.join("settings")).unwrap();
    d
}

fn hook(dir: &Path, address: &str, command: &str) -> Output {
    common::claude_bash_hook(
        dir,
        &format!("    syslog:\n      address: \"{address}\"\n"),
        command,
    )
}

#[test]
fn rsyslog_receives_each_decision_with_its_rules_at_file_and_line() {
    let d = dir("rsyslog");
    let rsyslog = Rsyslog::start(&d, None);
    let address = format!("127.0.0.1:{}", rsyslog.port);
    let out = hook(&d, &address, "rm -rf /");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let out = hook(&d, &address, "git status");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let received = rsyslog.wait_for(2);
    let lines: Vec<&str> = received.lines().collect();
    assert_eq!(lines.len(), 2, "{received}");

    // The deny: severity warning (13*8+4), the structured data, and the log line.
    let deny = lines[0];
    assert!(deny.starts_with("<108>1 "), "{deny}");
    assert!(deny.contains(" zero-policy "), "{deny}");
    assert!(
        deny.contains(r#"[zero-policy@32473 decision="deny" tool="Bash" front="hook:claude-code" policy="sha256:"#),
        "{deny}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&deny[deny.find("] {").unwrap() + 2..]).unwrap();
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["args"]["command"], "rm -rf /");
    // Every matched rule, as id@file:line in the structured data.
    let rules = json["rules"].as_array().unwrap();
    assert!(!rules.is_empty(), "{json}");
    for r in rules {
        let at = format!(
            "{}@{}:{}",
            r["id"].as_str().unwrap(),
            r["file"].as_str().unwrap(),
            r["line"]
        );
        assert!(
            at.contains("/policies/") && deny.contains(&at),
            "{at} in {deny}"
        );
    }
    // The same record as the local log's.
    let local =
        std::fs::read_to_string(d.join("home/.local/state/zero-policy/decisions.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(local.lines().next().unwrap()).unwrap();
    assert_eq!(first, json);

    // The allow: informational (13*8+6).
    assert!(lines[1].starts_with("<110>1 "), "{}", lines[1]);
    assert!(lines[1].contains(r#"decision="allow""#), "{}", lines[1]);
    drop(rsyslog);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn rsyslog_receives_decisions_over_tls_and_a_receiver_with_an_untrusted_certificate_gets_none() {
    let d = dir("tls");
    let certs = common::test_certificates(&d);
    let rsyslog = Rsyslog::start(&d, Some(&certs));
    let address = format!("127.0.0.1:{}", rsyslog.port);
    let settings = |ca: &Path| {
        format!(
            "    syslog:\n      address: \"{address}\"\n      tls: true\n      ca: \"{}\"\n",
            ca.display()
        )
    };
    let out = common::claude_bash_hook(&d, &settings(&certs.0), "rm -rf /");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let received = rsyslog.wait_for(1);
    assert!(received.starts_with("<108>1 "), "{received}");
    assert!(received.contains(r#"decision="deny""#), "{received}");

    // Trusting another CA: the receiver is refused, so the record waits in
    // the spool (and is in the local log), and the answer is the same.
    let other = d.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let (other_ca, _, _) = common::test_certificates(&other);
    let out = common::claude_bash_hook(&d, &settings(&other_ca), "rm -rf /");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("within 300 ms; it waits in `"),
        "{out:?}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(rsyslog.wait_for(1).lines().count(), 1);
    let local =
        std::fs::read_to_string(d.join("home/.local/state/zero-policy/decisions.jsonl")).unwrap();
    assert_eq!(local.lines().count(), 2);

    // A relative CA path is a load error at its place: the hook blocks.
    let out = common::claude_bash_hook(
        &d,
        &format!(
            "    syslog:\n      address: \"{address}\"\n      tls: true\n      ca: \"ca.pem\"\n"
        ),
        "git status",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`log.syslog.ca` `ca.pem` is relative"),
        "{out:?}"
    );
    drop(rsyslog);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_receiver_that_is_down_does_not_change_the_answer_and_what_it_missed_reaches_it_in_order_when_it_is_back()
 {
    let d = dir("down");
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let spool_root = d.join("home/.local/state/zero-policy/spool");
    let down = ["rm -rf /", "git status", "cat ~/.ssh/id_rsa"];
    for (i, command) in down.iter().enumerate() {
        let out = hook(&d, &address, command);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let expected = if *command == "git status" {
            "allow"
        } else {
            "deny"
        };
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], expected,
            "{command}: {answer}"
        );
        let stderr = String::from_utf8(out.stderr).unwrap();
        let spool = std::fs::read_dir(&spool_root)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert!(
            spool
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("syslog-"),
            "{}",
            spool.display()
        );
        assert_eq!(
            stderr,
            format!(
                "zero-policy: the decision did not reach syslog `{address}` within 300 ms; it waits in `{}` ({} waiting) and leaves with a later decision\n",
                spool.display(),
                i + 1
            )
        );
    }
    let local =
        std::fs::read_to_string(d.join("home/.local/state/zero-policy/decisions.jsonl")).unwrap();
    assert_eq!(local.lines().count(), 3);

    // Back: the next decision sends the three that waited, oldest first,
    // then its own, and says nothing.
    let rsyslog = Rsyslog::start_on(&d, None, port);
    let out = hook(&d, &address, "ls");
    assert!(out.stderr.is_empty(), "{out:?}");
    let received = rsyslog.wait_for(4);
    let commands: Vec<String> = received
        .lines()
        .map(|l| {
            let json: serde_json::Value =
                serde_json::from_str(&l[l.find("] {").unwrap() + 2..]).unwrap();
            json["args"]["command"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        commands,
        ["rm -rf /", "git status", "cat ~/.ssh/id_rsa", "ls"],
        "{received}"
    );
    // Each reached it once, as in the local log.
    let local =
        std::fs::read_to_string(d.join("home/.local/state/zero-policy/decisions.jsonl")).unwrap();
    let logged: Vec<serde_json::Value> = local
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (line, record) in received.lines().zip(&logged) {
        let json: serde_json::Value =
            serde_json::from_str(&line[line.find("] {").unwrap() + 2..]).unwrap();
        assert_eq!(&json, record);
    }
    drop(rsyslog);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn run_sends_its_record_with_what_the_sandbox_refused() {
    // A home outside /tmp: a confined call may not run programs from there.
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("syslog-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("home/project")).unwrap();
    std::fs::create_dir_all(d.join("settings")).unwrap();
    let rsyslog = Rsyslog::start(&d, None);
    std::fs::write(
        d.join("settings/log.yaml"),
        format!(
            "version: 1\nsettings:\n  log:\n    syslog:\n      address: \"127.0.0.1:{}\"\n",
            rsyslog.port
        ),
    )
    .unwrap();
    let profile = d.join("home/.profile");
    std::fs::write(&profile, "export X=1\n").unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let policy = format!(
        "{}:{}:{}",
        repo.join("policies").display(),
        repo.join("manifests").display(),
        d.join("settings").display()
    );
    // Code the analysis cannot read writes a shell start-up file: the kernel refuses.
    let script = format!("sh -c \"$(printf 'echo evil >> {}')\"", profile.display());
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["run", "--findings", "--policy", &policy, "-c", &script])
        .current_dir(d.join("home/project"))
        .env("HOME", d.join("home"))
        .env_remove("ZERO_POLICY_PATH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&profile).unwrap(), "export X=1\n");
    let received = rsyslog.wait_for(1);
    let line = received.lines().next().unwrap_or_default();
    assert!(line.contains(r#"front="run""#), "{received}");
    let json: serde_json::Value =
        serde_json::from_str(&line[line.find("] {").unwrap() + 2..]).unwrap();
    assert_eq!(json["decision"], "allow", "{json}");
    assert!(
        json["blocked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b == &serde_json::json!(format!("write {} (EACCES)", profile.display()))),
        "{json}"
    );
    drop(rsyslog);
    let _ = std::fs::remove_dir_all(&d);
}
