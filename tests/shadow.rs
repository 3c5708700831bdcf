//! Shadow mode: `settings.shadow` decides every call beside the policy in
//! force and is only logged; `zero-policy log diff` over the log it leaves.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

struct Env {
    root: PathBuf,
}

impl Env {
    /// `live/` is the shipped policy and manifests plus `shadow.yaml` naming
    /// `shadow` as its shadow; `next/` is the shipped policy and manifests
    /// plus a rule that denies `git`.
    fn new(name: &str, shadow: &str) -> Env {
        let root = std::env::temp_dir().join(format!("zp-shadow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["home", "work", "live", "next/policies"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (from, to) in [
            ("policies/default.yaml", "live/default.yaml"),
            ("policies/default.yaml", "next/policies/default.yaml"),
        ] {
            std::fs::copy(repo.join(from), root.join(to)).unwrap();
        }
        for entry in std::fs::read_dir(repo.join("manifests")).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap();
            std::fs::copy(&p, root.join("live").join(name)).unwrap();
            std::fs::create_dir_all(root.join("next/manifests")).unwrap();
            std::fs::copy(&p, root.join("next/manifests").join(name)).unwrap();
        }
        std::fs::write(
            root.join("next/policies/strict.yaml"),
            "version: 1\nrules:\n  - id: no-git\n    description: git waits for review\n    when: call.commands.exists(c, c.program == \"git\")\n    action: deny\n    reason: git waits for review in the new policy\n",
        )
        .unwrap();
        std::fs::write(
            root.join("live/shadow.yaml"),
            format!(
                "version: 1\nsettings:\n  shadow:\n    {}\n",
                shadow.replace("{root}", &root.display().to_string())
            ),
        )
        .unwrap();
        Env { root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_zero-policy"));
        c.args(args)
            .current_dir(self.path("work"))
            .env("HOME", self.path("home"))
            .env_remove("XDG_CACHE_HOME")
            .env_remove("ZERO_POLICY_CACHE")
            .env_remove("ZERO_POLICY_PATH")
            .env_remove("ZERO_POLICY_BUNDLE")
            .env_remove("ZERO_POLICY_BUNDLE_KEY");
        c
    }

    /// One Claude Code hook event on the live policy.
    fn hook(&self, command: &str) -> Output {
        let live = self.path("live");
        let mut child = self
            .command(&["hook", "claude-code", live.to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let event = serde_json::json!({
            "session_id": "s1",
            "cwd": self.path("work"),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.to_string().as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    fn log_path(&self) -> PathBuf {
        self.path("home/.local/state/zero-policy/decisions.jsonl")
    }

    fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn redact(&self, text: &[u8]) -> String {
        String::from_utf8_lossy(text).replace(&self.root.display().to_string(), "[DIR]")
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn answer(out: &Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_shadow_is_logged_beside_the_decision_and_never_changes_the_answer() {
    let env = Env::new("hook", "paths: [\"{root}/next\"]");
    let out = env.hook("git status");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(answer(&out), "allow");
    assert!(out.stderr.is_empty(), "{}", env.redact(&out.stderr));
    let out = env.hook("rm -rf /");
    assert_eq!(answer(&out), "deny");
    let log = env.log();
    assert_eq!(log[0]["decision"], "allow");
    let shadow = &log[0]["shadow"];
    assert_eq!(shadow["decision"], "deny", "{}", log[0]);
    assert_eq!(shadow["reason"], "git waits for review in the new policy");
    let rule = shadow["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "no-git")
        .unwrap();
    assert_eq!(
        env.redact(rule["file"].as_str().unwrap().as_bytes()),
        "[DIR]/next/policies/strict.yaml"
    );
    assert_eq!(rule["line"], 3);
    assert_ne!(shadow["policy"], log[0]["policy"]);
    assert!(shadow["policy"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(log[1]["decision"], "deny");
    assert_eq!(log[1]["shadow"]["decision"], "deny");
}

#[test]
fn a_shadow_that_does_not_load_is_reported_and_ignored() {
    // A shadow folder that is not there, then one whose rule does not compile.
    let env = Env::new("broken", "paths: [\"{root}/nowhere\"]");
    let out = env.hook("git status");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(answer(&out), "allow");
    let stderr = env.redact(&out.stderr);
    assert!(
        stderr.starts_with("zero-policy: the shadow policy ([DIR]/nowhere) is ignored: "),
        "{stderr}"
    );
    let log = env.log();
    assert_eq!(log[0]["decision"], "allow");
    assert_eq!(log[0]["shadow"]["decision"], "error");
    assert!(
        log[0]["shadow"]["error"]
            .as_str()
            .unwrap()
            .contains("is ignored"),
        "{}",
        log[0]
    );

    std::fs::write(
        env.path("live/shadow.yaml"),
        format!(
            "version: 1\nsettings:\n  shadow:\n    paths: [\"{}\"]\n",
            env.path("next").display()
        ),
    )
    .unwrap();
    std::fs::write(
        env.path("next/policies/strict.yaml"),
        "version: 1\nrules:\n  - id: no-git\n    reason: r\n    when: call.commands.exists(c, c.nam == \"git\")\n    action: deny\n",
    )
    .unwrap();
    let out = env.hook("rm -rf /");
    assert_eq!(answer(&out), "deny");
    let line = &env.log()[1];
    assert_eq!(line["shadow"]["decision"], "error");
    let why = env.redact(line["shadow"]["error"].as_str().unwrap().as_bytes());
    assert!(
        why.starts_with("the shadow policy ([DIR]/next) is ignored: it does not load (1 error: [DIR]/next/policies/strict.yaml:5:"),
        "{why}"
    );

    // `doctor` says so, as a warning: the policy in force still decides.
    let live = env.path("live");
    let out = env
        .command(&[
            "doctor",
            "claude-code",
            "--format",
            "json",
            live.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "shadow policy")
        .cloned()
        .unwrap();
    assert_eq!(check["level"], "warn");
    assert!(
        check["detail"]
            .as_str()
            .unwrap()
            .ends_with("; the policy in force decides alone"),
        "{check}"
    );
}

#[test]
fn a_malformed_shadow_setting_is_a_load_error_with_its_place() {
    let env = Env::new("malformed", "bundle: \"{root}/next.bundle\"");
    let live = env.path("live");
    let out = env
        .command(&["lint", live.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = env.redact(&[out.stdout, out.stderr].concat());
    assert!(
        text.contains("`shadow.bundle` has no `key`")
            && text.contains("[DIR]/live/shadow.yaml:4:13"),
        "{text}"
    );
}

#[test]
fn run_logs_the_shadow_decision_too() {
    let env = Env::new("run", "paths: [\"{root}/next\"]");
    let live = env.path("live");
    let out = env
        .command(&[
            "run",
            "--policy",
            live.to_str().unwrap(),
            "-c",
            "git --version",
        ])
        .output()
        .unwrap();
    let log = env.log();
    assert_eq!(log.len(), 1, "{out:?}");
    assert_eq!(log[0]["front"], "run");
    assert_eq!(log[0]["shadow"]["decision"], "deny", "{}", log[0]);
    assert_eq!(
        log[0]["shadow"]["matched"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| *m == "no-git")
            .count(),
        1
    );
}

/// The log made of these calls, with times and folders made constant.
fn recorded(env: &Env) -> PathBuf {
    for command in [
        "git status",
        "ls -la",
        "rm -rf /",
        "git push origin main",
        "cat README.md",
    ] {
        let out = env.hook(command);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let mut text = String::new();
    for (i, mut line) in env.log().into_iter().enumerate() {
        line["time"] = format!("2026-12-06T10:00:0{i}.000Z").into();
        line["duration_us"] = 0.into();
        text.push_str(&env.redact(line.to_string().as_bytes()));
        text.push('\n');
    }
    text.push_str("{\"torn\n");
    let path = env.path("recorded.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn log_diff_counts_and_lists_the_calls_that_change() {
    let env = Env::new("diff", "paths: [\"{root}/next\"]");
    let log = recorded(&env);
    let out = env
        .command(&["log", "diff", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    insta::assert_snapshot!("diff_human", env.redact(&out.stdout));
    assert_eq!(
        env.redact(&out.stderr),
        "warning: [DIR]/recorded.jsonl:6:6: skipped: not JSON: EOF while parsing a string\n"
    );
    let out = env
        .command(&["log", "diff", log.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    insta::assert_json_snapshot!("diff_json", report, {".file" => "[FILE]"});
}

#[test]
fn log_diff_exits_0_when_nothing_changes_and_2_without_a_shadow() {
    let env = Env::new("same", "paths: [\"{root}/next\"]");
    std::fs::remove_file(env.path("next/policies/strict.yaml")).unwrap();
    for command in ["git status", "rm -rf /"] {
        env.hook(command);
    }
    let out = env
        .command(&["log", "diff", env.log_path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        env.redact(&out.stdout),
        "[DIR]/home/.local/state/zero-policy/decisions.jsonl: 2 calls compared, 0 changed\n"
    );

    let plain = env.path("plain.jsonl");
    std::fs::write(&plain, "{\"decision\":\"allow\",\"tool\":\"Bash\"}\n").unwrap();
    let out = env
        .command(&["log", "diff", plain.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        env.redact(&out.stderr),
        "error: [DIR]/plain.jsonl: no line has a shadow decision; set `settings.shadow` (docs/fleet.md)\n"
    );
    let out = env
        .command(&["log", "diff", env.path("missing.jsonl").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// `serve --hooks` loads the shadow with the policy (not per request) and logs
/// its decision beside the one in force, as `hook` does.
#[test]
fn the_hook_service_logs_the_shadow_beside_its_decision() {
    use std::io::{BufRead, BufReader, Read};
    let env = Env::new("service", "paths: [\"{root}/next\"]");
    let live = env.path("live");
    let mut child = env
        .command(&["serve", "--hooks", "127.0.0.1:0", live.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let port: u16 = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(rest) = line
            .split("answering hook events on http://127.0.0.1:")
            .nth(1)
        {
            break rest.split('/').next().unwrap().parse().unwrap();
        }
    };
    let event = serde_json::json!({
        "session_id": "s1",
        "cwd": env.path("work"),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
    })
    .to_string();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /hooks/claude-code HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{event}",
        event.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"allow\""), "{response}");
    let log = env.log();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["decision"], "allow");
    assert_eq!(log[0]["shadow"]["decision"], "deny", "{:?}", log[0]);
    let matched = log[0]["shadow"]["matched"].as_array().unwrap();
    assert!(matched.iter().any(|m| m == "no-git"), "{:?}", log[0]);
}
