//! `settings.log.chain` and `zero-policy log verify`, on logs written by real
//! hook processes (`zero-policy hook claude-code`, one event on stdin), some
//! of them at once.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;

/// A fresh folder with a home, an empty working folder and a settings file
/// turning the chain on; removed on drop.
struct Env {
    root: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        let root = std::env::temp_dir().join(format!("zp-chain-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        std::fs::create_dir_all(root.join("settings")).unwrap();
        std::fs::write(
            root.join("settings/log.yaml"),
            format!(
                "version: 1\nsettings:\n  log:\n    path: {}\n    chain: true\n",
                root.join("decisions.jsonl").display()
            ),
        )
        .unwrap();
        Env { root }
    }

    fn log(&self) -> PathBuf {
        self.root.join("decisions.jsonl")
    }

    fn hook(&self, command: &str) -> std::process::Child {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .arg("hook")
            .arg("claude-code")
            .arg(repo.join("policies"))
            .arg(repo.join("manifests"))
            .arg(self.root.join("settings"))
            .current_dir(self.root.join("work"))
            .env("HOME", self.root.join("home"))
            .env_remove("ZERO_POLICY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let event = serde_json::json!({
            "session_id": "s1",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": self.root.join("work"),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        });
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(event.to_string().as_bytes()).unwrap();
        drop(stdin);
        child
    }

    fn verify(&self, file: &Path, format: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .args(["log", "verify", "--format", format])
            .arg(file)
            .output()
            .unwrap()
    }

    /// Writes `lines` as a log file beside the real one and verifies it.
    fn verify_lines(&self, name: &str, lines: &[String]) -> (i32, String) {
        let file = self.root.join(name);
        std::fs::write(&file, format!("{}\n", lines.join("\n"))).unwrap();
        let out = self.verify(&file, "human");
        let text = String::from_utf8(out.stdout)
            .unwrap()
            .replace(&self.root.display().to_string(), "[DIR]");
        (out.status.code().unwrap(), text)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[test]
fn hooks_chain_their_lines_and_verify_finds_each_kind_of_tampering() {
    let env = Env::new("tamper");
    // Two rounds of four hooks at once, then one more: concurrent writers
    // must still leave one unbroken chain.
    let commands = ["git status", "rm -rf /", "cat .env", "ls -la"];
    for _ in 0..2 {
        let children: Vec<_> = commands.iter().map(|c| env.hook(c)).collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.code() == Some(0) || out.status.code() == Some(2),
                "{out:?}"
            );
        }
    }
    env.hook("git log").wait_with_output().unwrap();

    let text = std::fs::read_to_string(env.log()).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 9);
    let records: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=9).collect::<Vec<u64>>());
    let rm = records
        .iter()
        .find(|r| r["args"]["command"] == "rm -rf /")
        .unwrap();
    assert_eq!(rm["decision"], "deny");
    let rule = &rm["rules"][0];
    assert!(
        rule["id"].is_string() && rule["line"].as_u64().unwrap() > 0,
        "{rm}"
    );
    assert!(rule["file"].as_str().unwrap().ends_with(".yaml"), "{rm}");

    let out = env.verify(&env.log(), "human");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout)
            .unwrap()
            .replace(&env.root.display().to_string(), "[DIR]"),
        "[DIR]/decisions.jsonl: intact, 9 lines chained\n"
    );

    let mut removed = lines.clone();
    removed.remove(4);
    let mut swapped = lines.clone();
    swapped.swap(2, 3);
    let mut edited = lines.clone();
    edited[6] = edited[6].replacen("\"session\":\"s1\"", "\"session\":\"s2\"", 1);
    assert_ne!(edited[6], lines[6]);
    let mut unchained = lines.clone();
    unchained
        .push(r#"{"time":"2026-12-05T00:00:00.000Z","tool":"Bash","decision":"allow"}"#.into());
    let broken: Vec<(i32, String)> = [
        ("removed", &removed),
        ("swapped", &swapped),
        ("edited", &edited),
        ("unchained", &unchained),
    ]
    .iter()
    .map(|(name, lines)| env.verify_lines(&format!("{name}.jsonl"), lines))
    .collect();
    insta::assert_snapshot!(
        "verify_broken",
        broken
            .iter()
            .map(|(code, text)| format!("exit {code}\n{text}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(broken.iter().all(|(code, _)| *code == 1));

    let out = env.verify(&env.root.join("swapped.jsonl"), "json");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["intact"], false);
    assert_eq!(v["problem"]["line"], 3);
    assert_eq!(v["problem"]["kind"], "reordered");

    let out = env.verify(&env.root.join("missing.jsonl"), "human");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("cannot read the decision log"),
    );
}

#[test]
fn a_hook_that_cannot_load_its_policy_keeps_a_chained_log_chained() {
    let env = Env::new("fail");
    env.hook("git status").wait_with_output().unwrap();
    // A policy that does not load: the hook fails closed, logging to the
    // default path, which here is the chained one only if the setting is
    // read. Point the default at the chained file through HOME instead.
    let default_log = env
        .root
        .join("home/.local/state/zero-policy/decisions.jsonl");
    std::fs::create_dir_all(default_log.parent().unwrap()).unwrap();
    std::fs::copy(env.log(), &default_log).unwrap();
    std::fs::write(env.root.join("settings/bad.yaml"), "version: 1\nrules: 3\n").unwrap();
    let out = env.hook("git status").wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = std::fs::read_to_string(&default_log).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .contains("\"decision\":\"error\"")
    );
    let out = env.verify(&default_log, "human");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn run_chains_its_line_between_the_hooks_lines() {
    let env = Env::new("run");
    env.hook("git status").wait_with_output().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let policy = format!(
        "{}:{}:{}",
        repo.join("policies").display(),
        repo.join("manifests").display(),
        env.root.join("settings").display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["run", "--policy", &policy, "-c", "rm -rf /"])
        .current_dir(env.root.join("work"))
        .env("HOME", env.root.join("home"))
        .env_remove("ZERO_POLICY_PATH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    env.hook("ls").wait_with_output().unwrap();
    let text = std::fs::read_to_string(env.log()).unwrap();
    let fronts: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["front"].to_string())
        .collect();
    assert_eq!(
        fronts,
        [r#""hook:claude-code""#, r#""run""#, r#""hook:claude-code""#]
    );
    let out = env.verify(&env.log(), "human");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
