//! `zero-policy doctor [AGENT]`: each installed hook checked where the agent
//! reads it: fail-closed where the agent can, trusted where the agent asks
//! for that, and blocking a probe call when run as written; human and JSON
//! output; exit 1 on a problem, with the fix.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_zero-policy");

struct Env {
    root: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let root = tempfile::Builder::new()
            .prefix("zp-doctor-")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        std::fs::create_dir_all(root.path().join("project")).unwrap();
        Env { root }
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("project")).unwrap()
    }

    fn zp(&self, args: &[&str]) -> (i32, String) {
        let out = Command::new(EXE)
            .args(args)
            .current_dir(self.project())
            .env_clear()
            .env("HOME", self.home())
            // No agent on `PATH`: the version checks say so.
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// The output with the test's own folder, and this machine's
    /// confinement, written the same way on every run.
    fn stable(&self, text: &str) -> String {
        let root = std::fs::canonicalize(self.root.path()).unwrap();
        text.replace(&root.display().to_string(), "[TMP]")
            .replace(EXE, "[ZERO-POLICY]")
            .lines()
            .map(|l| {
                if l.contains(" confinement ") || l.contains(" confined probe ") {
                    format!("{}[this machine]", &l[..31.min(l.len())])
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[test]
fn a_hook_installed_as_init_writes_it_passes() {
    let env = Env::new();
    for agent in ["claude-code", "codex", "gemini-cli", "copilot", "cursor"] {
        let (code, out) = env.zp(&["init", agent, "--trust"]);
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = env.zp(&["doctor"]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("doctor_all_good", env.stable(&out));
}

#[test]
fn a_hook_that_would_be_skipped_or_fail_open_is_a_problem_with_the_fix() {
    let env = Env::new();
    // Copilot without folder trust skips a project hook; Codex without trust too.
    for agent in ["copilot", "codex"] {
        let (code, out) = env.zp(&["init", agent]);
        assert_eq!(code, 0, "{out}");
    }
    // A Claude Code entry written by hand, without `onFailure: "block"`.
    let settings = env.project().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let entry = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": format!("{EXE} hook claude-code"), "timeout": 30}
    ]}]}});
    std::fs::write(&settings, entry.to_string()).unwrap();
    let mut human = String::new();
    for agent in ["copilot", "codex", "claude-code"] {
        let (code, out) = env.zp(&["doctor", agent]);
        assert_eq!(code, 1, "{out}");
        human.push_str(&format!(
            "$ zero-policy doctor {agent}\n{}\n",
            env.stable(&out)
        ));
    }
    insta::assert_snapshot!("doctor_problems", human);
    // JSON: the same checks; `ok` is false.
    let (code, out) = env.zp(&["doctor", "copilot", "--format", "json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["ok"], false);
    let trust = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "hook copilot trust")
        .unwrap();
    assert_eq!(trust["level"], "fail");
    assert!(
        trust["detail"]
            .as_str()
            .unwrap()
            .contains("zero-policy init copilot --trust")
    );
    // The fix fixes it.
    env.zp(&["init", "copilot", "--trust"]);
    let (code, out) = env.zp(&["doctor", "copilot"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_hook_that_does_not_block_fails_the_probe() {
    let env = Env::new();
    // An entry that names zero-policy's hook but runs something that allows.
    let fake = env.root.path().join("bin/zero-policy");
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    std::fs::write(&fake, "#!/bin/sh\ncat >/dev/null\nexit 0\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The folder trusted first (`init` would put its own binary back).
    env.zp(&["init", "gemini-cli", "--trust"]);
    let settings = env.project().join(".gemini/settings.json");
    let entry = serde_json::json!({"hooks": {"BeforeTool": [{"matcher": "*", "hooks": [
        {"type": "command", "command": format!("{} hook gemini-cli", fake.display())}
    ]}]}});
    std::fs::write(&settings, entry.to_string()).unwrap();
    let (code, out) = env.zp(&["doctor", "gemini-cli"]);
    assert_eq!(code, 1, "{out}");
    let probe = out
        .lines()
        .find(|l| l.contains("hook gemini-cli probe") && l.starts_with("fail"));
    assert!(probe.is_some(), "{out}");
    let probe = probe.unwrap();
    assert!(probe.contains("did not block"), "{probe}");
}

/// A managed installation (`init --managed`, under a throwaway root): found in
/// the admin file, run with no trust step (Codex), its lock reported, the
/// fix naming `sudo … --managed`; a Codex managed hook of another binary
/// that does not block fails the probe.
#[test]
fn a_managed_hook_is_found_and_proven() {
    let env = Env::new();
    let root = env.root.path().join("root");
    let zp = |args: &[&str]| {
        let out = Command::new(EXE)
            .args(args)
            .current_dir(env.project())
            .env_clear()
            .env("HOME", env.home())
            .env("PATH", "/nonexistent")
            .env("ZERO_POLICY_MANAGED_ROOT", &root)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out) = zp(&["init", "codex", "--managed", "--lock"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = zp(&["init", "claude-code", "--managed"]);
    assert_eq!(code, 0, "{out}");
    let mut human = String::new();
    for agent in ["codex", "claude-code"] {
        let (code, out) = zp(&["doctor", agent]);
        assert_eq!(code, 0, "{out}");
        human.push_str(&format!(
            "$ zero-policy doctor {agent}\n{}\n",
            env.stable(&out)
        ));
    }
    insta::assert_snapshot!("doctor_managed", human);

    // The managed Codex hook names a binary that lets everything through.
    let fake = env.root.path().join("bin/zero-policy");
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    std::fs::write(&fake, "#!/bin/sh\ncat >/dev/null\nexit 0\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let file = root.join("etc/codex/requirements.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace(EXE, &fake.display().to_string())).unwrap();
    let (code, out) = zp(&["doctor", "codex"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("fail") && l.contains("hook codex probe")),
        "{out}"
    );
}
