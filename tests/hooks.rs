//! `zero-policy hook AGENT`, run as the agents run it: one process per event,
//! the event on stdin, real payloads from each agent's documentation
//! (`tests/fixtures/hooks/<agent>/`, see each folder's README).
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const SECRET: &str = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";

/// A fresh home folder (so the log and `~/.config` are the test's own) and an
/// empty working folder (so no `policies/` is found), removed on drop.
struct Env {
    root: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        let root = std::env::temp_dir().join(format!("zp-hooks-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        // The shipped policy as the hook's own configuration, without the
        // rewrite to `zero-policy run`: these tests are about each agent's
        // protocol; `shell_calls_are_rewritten_to_run_confined` is about the
        // rewrite.
        let config = root.join("home/.config/zero-policy");
        std::fs::create_dir_all(&config).unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR"));
        for entry in std::fs::read_dir(shipped.join("manifests")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), config.join(entry.file_name())).unwrap();
        }
        let policy = std::fs::read_to_string(shipped.join("policies/default.yaml")).unwrap();
        assert!(policy.contains("\n    shell: true\n"));
        std::fs::write(
            config.join("default.yaml"),
            policy.replacen("\n    shell: true\n", "\n    shell: false\n", 1),
        )
        .unwrap();
        Env { root }
    }

    /// The hook's policy is the shipped one, rewrite and all.
    fn shipped_policy(&self) {
        std::fs::remove_dir_all(self.home().join(".config/zero-policy")).unwrap();
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
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

    /// A policy folder with one file.
    fn policy(&self, name: &str, yaml: &str) -> PathBuf {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("policy.yaml"), yaml).unwrap();
        dir
    }

    /// Another command, run as the hook is (this home, the empty working folder).
    fn zp<S: AsRef<std::ffi::OsStr>>(
        &self,
        args: impl IntoIterator<Item = S>,
    ) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .args(args)
            .current_dir(self.root.join("work"))
            .env("HOME", self.home())
            .env_remove("ZERO_POLICY_PATH")
            .output()
            .unwrap()
    }

    fn hook(&self, agent: &str, input: &[u8], paths: &[&Path]) -> Run {
        self.hook_env(agent, input, paths, &[])
    }

    fn hook_env(&self, agent: &str, input: &[u8], paths: &[&Path], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_zero-policy"));
        cmd.arg("hook").arg(agent).args(paths);
        cmd.current_dir(self.root.join("work"))
            .env("HOME", self.home())
            .env_remove("ZERO_POLICY_PATH")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The hook may stop reading early (oversized input): ignore a broken pipe.
        let _ = stdin.write_all(input);
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

fn fixture(agent: &str, name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hooks")
            .join(agent)
            .join(name),
    )
    .unwrap()
}

fn claude(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

// ── Claude Code ──────────────────────────────────────────────────────────────

#[test]
fn claude_code_answers_each_decision_in_its_protocol() {
    let env = Env::new("claude");
    for (file, decision, reason) in [
        (
            "documented-bash.json",
            "allow",
            "zero-policy: routine development inside the workspace",
        ),
        (
            "bash-git-status.json",
            "allow",
            "zero-policy: routine development inside the workspace",
        ),
        (
            "bash-rm-rf-root.json",
            "deny",
            "zero-policy: the command would destroy the system, the home folder or the workspace",
        ),
        ("read-file.json", "allow", "zero-policy: allowed"),
        (
            "read-dotenv.json",
            "deny",
            "zero-policy: credential files are off limits to the agent",
        ),
        (
            "plan-mode-bash.json",
            "deny",
            "zero-policy: plan mode is read-only; leave plan mode to make changes",
        ),
        (
            "unknown-tool.json",
            "ask",
            "zero-policy: unknown tool `mcp__memory__create_entities`; no manifest describes it, so it needs approval",
        ),
    ] {
        let run = env.hook("claude-code", &fixture("claude-code", file), &[]);
        assert_eq!(run.code, 0, "{file}: {run:?}");
        assert_eq!(run.json(), claude(decision, reason), "{file}");
        assert_eq!(run.stderr, "", "{file}");
    }
    let log = env.log_lines();
    assert_eq!(log.len(), 7);
    let rm = &log[2];
    assert_eq!(rm["front"], "hook:claude-code");
    assert_eq!(rm["session"], "abc123");
    assert_eq!(rm["tool"], "Bash");
    assert_eq!(rm["decision"], "deny");
    assert_eq!(rm["answer"], "deny");
    assert_eq!(
        rm["matched"],
        json!([
            "destroy-workspace-or-above",
            "disk-devices",
            "recursive-delete-outside-workspace",
            "secret-files",
            "write-outside-workspace"
        ])
    );
    assert_eq!(
        rm["args"],
        json!({"command": "rm -rf /", "description": "Remove everything"})
    );
    assert!(rm["policy"].as_str().unwrap().starts_with("sha256:"));
    assert!(rm["time"].as_str().unwrap().ends_with('Z'));
    assert!(rm["duration_us"].as_u64().unwrap() > 0);
    // The unknown tool: rejected at lookup, answered by hooks.unknown_tool.
    assert_eq!(log[6]["decision"], "reject");
    assert_eq!(log[6]["answer"], "ask");
}

#[test]
fn permission_mode_plan_reaches_the_policy_as_plan_and_default_as_ask() {
    let env = Env::new("modes");
    let policy = env.policy(
        "p",
        r#"version: 1
tools:
  - name: Bash
    description: run
    scope: shell
    safety: {side_effect: shell, permission: allow}
rules:
  - id: not-in-ask
    when: 'session.mode == "ask" && session.labels.session_id == "abc123" && session.workspace == "/home/user/my-project"'
    action: deny
    reason: saw mode ask, the session id and the workspace
"#,
    );
    let run = env.hook(
        "claude-code",
        &fixture("claude-code", "bash-git-status.json"),
        &[&policy],
    );
    assert_eq!(
        run.json(),
        claude(
            "deny",
            "zero-policy: saw mode ask, the session id and the workspace"
        )
    );
    let run = env.hook(
        "claude-code",
        &fixture("claude-code", "plan-mode-bash.json"),
        &[&policy],
    );
    assert_eq!(run.json(), claude("allow", "zero-policy: allowed"));
}

// ── Codex ────────────────────────────────────────────────────────────────────

#[test]
fn codex_prints_nothing_to_allow_and_only_denies() {
    let env = Env::new("codex");
    let run = env.hook("codex", &fixture("codex", "bash-git-status.json"), &[]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    let run = env.hook("codex", &fixture("codex", "bash-rm-rf-root.json"), &[]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.json(),
        claude(
            "deny",
            "zero-policy: the command would destroy the system, the home folder or the workspace"
        )
    );
    // A prompt cannot be asked: on_prompt (deny in the default policy) decides.
    let run = env.hook("codex", &fixture("codex", "bash-npm-test.json"), &[]);
    assert_eq!(
        run.json(),
        claude(
            "deny",
            "zero-policy: runs an arbitrary shell command; Codex cannot be asked for approval here, and `on_prompt` is `deny`"
        )
    );
    let run = env.hook("codex", &fixture("codex", "unknown-tool.json"), &[]);
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    // apply_patch passes through under its own name, the patch in `command`.
    let _ = env.hook("codex", &fixture("codex", "apply-patch.json"), &[]);
    let log = env.log_lines();
    assert_eq!(log[4]["tool"], "apply_patch");
    assert!(
        log[4]["args"]["command"]
            .as_str()
            .unwrap()
            .starts_with("*** Begin Patch")
    );
    assert_eq!(log[0]["answer"], "allow");
    assert_eq!(log[2]["decision"], "prompt");
    assert_eq!(log[2]["answer"], "deny");
}

#[test]
fn codex_with_on_prompt_ask_leaves_a_prompt_to_its_own_approval() {
    let env = Env::new("codex-ask");
    let policy = env.policy(
        "p",
        r#"version: 1
settings: {on_prompt: ask}
tools:
  - name: Bash
    description: run
    scope: shell
    safety: {side_effect: shell, permission: prompt, reason: runs a command}
"#,
    );
    let run = env.hook(
        "codex",
        &fixture("codex", "bash-git-status.json"),
        &[&policy],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert_eq!(env.log_lines()[0]["answer"], "defer");
}

// ── Gemini CLI ───────────────────────────────────────────────────────────────

#[test]
fn gemini_cli_answers_decision_and_reason() {
    let env = Env::new("gemini");
    let run = env.hook(
        "gemini-cli",
        &fixture("gemini-cli", "bash-git-status.json"),
        &[],
    );
    assert_eq!(
        run.json(),
        json!({"decision": "allow", "reason": "zero-policy: routine development inside the workspace"})
    );
    let run = env.hook(
        "gemini-cli",
        &fixture("gemini-cli", "bash-rm-rf-root.json"),
        &[],
    );
    assert_eq!(
        run.json(),
        json!({"decision": "deny", "reason": "zero-policy: the command would destroy the system, the home folder or the workspace"})
    );
    let run = env.hook(
        "gemini-cli",
        &fixture("gemini-cli", "unknown-tool.json"),
        &[],
    );
    assert_eq!(run.json()["decision"], "ask");
    // The documented payload is read (write_file is not a tool of this branch's manifests).
    let run = env.hook(
        "gemini-cli",
        &fixture("gemini-cli", "documented-write-file.json"),
        &[],
    );
    assert_eq!(run.code, 0);
    let log = env.log_lines();
    assert_eq!(log[3]["tool"], "write_file");
    assert_eq!(log[3]["session"], "test-123");
    assert_eq!(
        log[3]["args"],
        json!({"file_path": "test.txt", "content": "Test content"})
    );
}

#[test]
fn gemini_cli_mcp_tools_are_named_as_the_registry_names_them() {
    let env = Env::new("gemini-mcp");
    for file in [
        "mcp-code-name.json",
        "mcp-doc-name.json",
        "mcp-context.json",
    ] {
        let run = env.hook("gemini-cli", &fixture("gemini-cli", file), &[]);
        assert_eq!(run.code, 0, "{run:?}");
    }
    let tools: Vec<Value> = env.log_lines().iter().map(|l| l["tool"].clone()).collect();
    assert_eq!(
        tools,
        vec![
            json!("mcp__everything__get-env"),
            json!("mcp__everything__echo"),
            json!("mcp__everything__echo")
        ]
    );
}

/// Runs the hook under a process that looks as Gemini CLI does in `ps`
/// (`gemini` and its arguments), through `sh -c` as Gemini runs hooks.
fn hook_under_gemini(env: &Env, gemini_args: &[&str], input: &[u8]) -> Run {
    let exe = env!("CARGO_BIN_EXE_zero-policy");
    // Not `exec`: the shell must stay, as the hook's parent.
    let script = format!("'{exe}' hook gemini-cli; exit $?");
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .arg("/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js")
        .args(gemini_args);
    // `sh -c` is the hook's parent here: it stands for Gemini itself.
    cmd.current_dir(env.root.join("work"))
        .env("HOME", env.home())
        .env_remove("ZERO_POLICY_PATH")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn gemini_cli_run_headless_gets_on_prompt_instead_of_an_ask_nobody_answers() {
    let env = Env::new("gemini-headless");
    let unknown = fixture("gemini-cli", "unknown-tool.json");
    // `gemini -p`: nobody is there, so the shipped `on_prompt: deny` answers.
    let run = hook_under_gemini(&env, &["-p", "tidy up"], &unknown);
    assert_eq!(run.json()["decision"], "deny", "{run:?}");
    let reason = run.json()["reason"].as_str().unwrap().to_string();
    assert!(
        reason.ends_with("`on_prompt` is `deny` (it runs with `-p`)"),
        "{reason}"
    );
    // Interactive (`-i`): the person is asked.
    let run = hook_under_gemini(&env, &["-i", "tidy up"], &unknown);
    assert_eq!(run.json()["decision"], "ask", "{run:?}");
    // A deny stays a deny, with the rule's own reason.
    let run = hook_under_gemini(
        &env,
        &["-p", "x"],
        &fixture("gemini-cli", "bash-rm-rf-root.json"),
    );
    assert_eq!(
        run.json(),
        json!({"decision": "deny", "reason": "zero-policy: the command would destroy the system, the home folder or the workspace"})
    );
    let answers: Vec<Value> = env
        .log_lines()
        .iter()
        .map(|l| l["answer"].clone())
        .collect();
    assert_eq!(answers, vec![json!("deny"), json!("ask"), json!("deny")]);
}

// ── Cursor ───────────────────────────────────────────────────────────────────

fn cursor(permission: &str, message: &str) -> Value {
    json!({"permission": permission, "user_message": message, "agent_message": message})
}

#[test]
fn cursor_maps_each_event_to_a_call_and_asks_only_where_it_can() {
    let env = Env::new("cursor");
    let deny =
        "zero-policy: the command would destroy the system, the home folder or the workspace";
    for (file, want) in [
        (
            "pre-tool-use-bash.json",
            cursor(
                "allow",
                "zero-policy: routine development inside the workspace",
            ),
        ),
        ("pre-tool-use-bash-rm-rf-root.json", cursor("deny", deny)),
        ("read-file.json", cursor("allow", "zero-policy: allowed")),
        (
            "read-dotenv.json",
            cursor(
                "deny",
                "zero-policy: credential files are off limits to the agent",
            ),
        ),
        // `Shell` is declared by the Cursor manifest: `git status` is read-only work.
        (
            "shell-git-status.json",
            cursor(
                "allow",
                "zero-policy: routine development inside the workspace",
            ),
        ),
        // ... and on an MCP event; its server is found by the command that starts it.
        (
            "mcp-by-command.json",
            cursor(
                "deny",
                "zero-policy: dumps the server's environment, which holds credentials",
            ),
        ),
        (
            "mcp-undeclared-url.json",
            cursor(
                "ask",
                "zero-policy: unknown tool `mcp__<undeclared>__delete_bucket`; no manifest describes it, so it needs approval",
            ),
        ),
    ] {
        let run = env.hook("cursor", &fixture("cursor", file), &[]);
        assert_eq!(run.code, 0, "{file}: {run:?}");
        assert_eq!(run.json(), want, "{file}");
    }
    // preToolUse cannot ask: a prompt there follows on_prompt (deny).
    let policy = env.policy(
        "p",
        r#"version: 1
settings: {on_prompt: deny}
tools:
  - name: Write
    description: write
    scope: write
    safety: {side_effect: write, permission: prompt, reason: writes a file}
"#,
    );
    let run = env.hook(
        "cursor",
        &fixture("cursor", "pre-tool-use-unknown.json"),
        &[&policy],
    );
    assert_eq!(
        run.json(),
        cursor(
            "deny",
            "zero-policy: writes a file; Cursor cannot be asked for approval here, and `on_prompt` is `deny`"
        )
    );
    let log = env.log_lines();
    assert_eq!(log[0]["session"], "668320d2-2fd8-4888-b33c-2a466fec86e7");
    assert_eq!(log[2]["tool"], "Read");
    assert_eq!(
        log[2]["args"],
        json!({"file_path": "/Users/dev/project/src/main.rs"})
    );
    assert_eq!(log[4]["tool"], "Shell");
    assert_eq!(log[4]["args"], json!({"command": "git status"}));
}

// ── Copilot CLI ──────────────────────────────────────────────────────────────

#[test]
fn copilot_prints_nothing_to_allow_and_a_deny_otherwise() {
    let env = Env::new("copilot");
    let event = |tool: &str, args: Value| {
        serde_json::to_vec(&json!({
            "timestamp": 1_704_614_600_000_u64,
            "cwd": "/path/to/project",
            "toolName": tool,
            "toolArgs": args.to_string(),
        }))
        .unwrap()
    };
    let run = env.hook(
        "copilot",
        &event("bash", json!({"command": "git status"})),
        &[],
    );
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    let run = env.hook(
        "copilot",
        &event("bash", json!({"command": "rm -rf /"})),
        &[],
    );
    assert_eq!(
        (run.code, run.json()),
        (
            0,
            json!({"permissionDecision": "deny", "permissionDecisionReason": "zero-policy: the command would destroy the system, the home folder or the workspace"})
        )
    );
    let run = env.hook(
        "copilot",
        &event("bash", json!({"command": "python3 build.py"})),
        &[],
    );
    assert_eq!(run.json()["permissionDecision"], "deny");
    assert!(
        run.json()["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .ends_with("`on_prompt` is `deny`")
    );
    // The documented payload: toolArgs is a string of JSON, read as the arguments.
    let run = env.hook("copilot", &fixture("copilot", "documented-bash.json"), &[]);
    assert_eq!(run.code, 0);
    let log = env.log_lines();
    assert_eq!(log[3]["tool"], "bash");
    assert_eq!(
        log[3]["args"],
        json!({"command": "rm -rf dist", "description": "Clean build directory"})
    );
}

#[test]
fn copilot_reads_its_current_payload_and_names_mcp_tools_server_dash_tool() {
    let env = Env::new("copilot-now");
    // `toolArgs` as an object, `sessionId` sent (Copilot CLI 1.0.102).
    let run = env.hook("copilot", &fixture("copilot", "bash-object-args.json"), &[]);
    assert_eq!(run.code, 0);
    assert_eq!(run.json()["permissionDecision"], "deny");
    let run = env.hook("copilot", &fixture("copilot", "mcp-get-env.json"), &[]);
    assert_eq!(
        (run.code, run.json()),
        (
            0,
            json!({"permissionDecision": "deny", "permissionDecisionReason": "zero-policy: dumps the server's environment, which holds credentials"})
        )
    );
    let run = env.hook("copilot", &fixture("copilot", "mcp-get-sum.json"), &[]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    let log = env.log_lines();
    let seen: Vec<(&str, &str, &str)> = log
        .iter()
        .map(|l| {
            (
                l["tool"].as_str().unwrap(),
                l["decision"].as_str().unwrap(),
                l["session"].as_str().unwrap(),
            )
        })
        .collect();
    let id = "0b5c5b3e-6f8e-4a53-9a51-8d1c0f3a2e77";
    assert_eq!(
        seen,
        vec![
            ("bash", "deny", id),
            ("mcp__everything__get-env", "deny", id),
            ("mcp__everything__get-sum", "allow", id),
        ]
    );
}

#[test]
fn codex_mcp_names_reach_the_manifests_override_despite_the_respelling() {
    let env = Env::new("codex-mcp");
    // `get_env` is the server's `get-env`, denied by its override; the
    // server's own default (`prompt`) must not decide it.
    let run = env.hook("codex", &fixture("codex", "mcp-get-env.json"), &[]);
    assert_eq!(
        run.json(),
        claude(
            "deny",
            "zero-policy: dumps the server's environment, which holds credentials"
        )
    );
    let run = env.hook("codex", &fixture("codex", "mcp-get-sum.json"), &[]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    let tools: Vec<Value> = env
        .log_lines()
        .iter()
        .map(|l| json!([l["tool"], l["decision"]]))
        .collect();
    assert_eq!(
        tools,
        vec![
            json!(["mcp__everything__get-env", "deny"]),
            json!(["mcp__everything__get-sum", "allow"])
        ]
    );
}

// ── fail closed ──────────────────────────────────────────────────────────────

/// Checks the agent's blocking form; returns the reason it gave.
fn assert_blocked(agent: &str, run: &Run) -> String {
    match agent {
        "cursor" => {
            assert_eq!(run.code, 2, "{run:?}");
            let v = run.json();
            assert_eq!(v["permission"], "deny", "{run:?}");
            v["agent_message"].as_str().unwrap().to_string()
        }
        "copilot" => {
            assert_eq!(run.code, 0, "{run:?}");
            let v = run.json();
            assert_eq!(v["permissionDecision"], "deny", "{run:?}");
            v["permissionDecisionReason"].as_str().unwrap().to_string()
        }
        _ => {
            assert_eq!(run.code, 2, "{run:?}");
            assert_eq!(run.stdout, "", "{run:?}");
            run.stderr.trim_end().to_string()
        }
    }
}

const AGENTS: [&str; 5] = ["claude-code", "codex", "gemini-cli", "cursor", "copilot"];

fn good_event(agent: &str) -> Vec<u8> {
    match agent {
        "claude-code" => fixture("claude-code", "bash-git-status.json"),
        "codex" => fixture("codex", "bash-git-status.json"),
        "gemini-cli" => fixture("gemini-cli", "bash-git-status.json"),
        "cursor" => fixture("cursor", "pre-tool-use-bash.json"),
        _ => fixture("copilot", "documented-bash.json"),
    }
}

#[test]
fn bad_input_blocks_in_every_agents_blocking_form() {
    let env = Env::new("bad-input");
    let oversized = {
        let mut v = b"{\"pad\": \"".to_vec();
        v.resize(4 * 1024 * 1024 + 10, b'x');
        v.extend_from_slice(b"\"}");
        v
    };
    for agent in AGENTS {
        for (input, why) in [
            (b"not json".to_vec(), "is not JSON"),
            (b"".to_vec(), "is not JSON"),
            (b"[1, 2]".to_vec(), "is not a JSON object"),
            (oversized.clone(), "larger than 4 MiB"),
            (b"{}".to_vec(), "is missing"),
        ] {
            let run = env.hook(agent, &input, &[]);
            let reason = assert_blocked(agent, &run);
            assert!(
                reason.starts_with("zero-policy: the call is blocked: "),
                "{agent}: {reason}"
            );
            assert!(reason.contains(why), "{agent}: {reason}");
        }
    }
    let log = env.log_lines();
    assert_eq!(log.len(), AGENTS.len() * 5);
    assert!(
        log.iter()
            .all(|l| l["decision"] == "error" && l["answer"] == "deny")
    );
}

#[test]
fn an_event_of_another_kind_blocks() {
    let env = Env::new("wrong-kind");
    let mut post =
        serde_json::from_slice::<Value>(&fixture("claude-code", "bash-git-status.json")).unwrap();
    post["hook_event_name"] = json!("PostToolUse");
    let post = serde_json::to_vec(&post).unwrap();
    let reason = assert_blocked("claude-code", &env.hook("claude-code", &post, &[]));
    assert!(
        reason.contains("`hook_event_name` is `PostToolUse`"),
        "{reason}"
    );
    assert_blocked("codex", &env.hook("codex", &post, &[]));
    assert_blocked("gemini-cli", &env.hook("gemini-cli", &post, &[]));
    let reason = assert_blocked(
        "cursor",
        &env.hook("cursor", &fixture("cursor", "wrong-event.json"), &[]),
    );
    assert!(reason.contains("`afterFileEdit`"), "{reason}");
    let reason = assert_blocked(
        "copilot",
        &env.hook("copilot", &fixture("copilot", "post-tool-use.json"), &[]),
    );
    assert!(reason.contains("postToolUse"), "{reason}");
}

#[test]
fn a_policy_that_does_not_load_blocks_every_agent() {
    let env = Env::new("broken-policy");
    let broken = env.policy(
        "broken",
        "version: 1\nrules:\n  - id: x\n    when: 'args.'\n    action: deny\n    reason: r\n",
    );
    let missing = env.root.join("no-such-folder");
    let relative_log = env.policy(
        "relative-log",
        "version: 1\nsettings: {log: {path: decisions.jsonl}}\n",
    );
    for agent in AGENTS {
        let reason = assert_blocked(agent, &env.hook(agent, &good_event(agent), &[&broken]));
        assert!(
            reason.contains("the policy does not load (1 error: "),
            "{agent}: {reason}"
        );
        assert!(reason.contains("policy.yaml:4:"), "{agent}: {reason}");
        let reason = assert_blocked(agent, &env.hook(agent, &good_event(agent), &[&missing]));
        assert!(
            reason.contains("no such file or folder"),
            "{agent}: {reason}"
        );
        let reason = assert_blocked(
            agent,
            &env.hook(agent, &good_event(agent), &[&relative_log]),
        );
        assert!(
            reason.contains("`log.path` `decisions.jsonl` is relative"),
            "{agent}: {reason}"
        );
    }
    // Logged to the default log, since the policy's own settings could not be read.
    let log = env.log_lines();
    assert_eq!(log.len(), AGENTS.len() * 3);
    assert!(log.iter().all(|l| l["decision"] == "error"));
    assert_eq!(log[0]["tool"], "Bash");
}

#[test]
fn secrets_never_reach_the_answer_stderr_or_log() {
    let env = Env::new("secrets");
    let run = env.hook(
        "claude-code",
        &fixture("claude-code", "bash-with-secret.json"),
        &[],
    );
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "ask"
    );
    // A secret as a tool name is echoed by the unknown-tool reason: scrubbed.
    let mut named =
        serde_json::from_slice::<Value>(&fixture("claude-code", "read-file.json")).unwrap();
    named["tool_name"] = json!(SECRET);
    for agent in ["claude-code", "codex", "gemini-cli"] {
        let mut event = named.clone();
        if agent == "gemini-cli" {
            event["hook_event_name"] = json!("BeforeTool");
        }
        let run = env.hook(agent, &serde_json::to_vec(&event).unwrap(), &[]);
        assert!(
            !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
            "{run:?}"
        );
        assert!(run.stdout.contains("[REDACTED]"), "{agent}: {run:?}");
    }
    // A secret in an event of the wrong shape fails closed without echoing it.
    let bad = format!(
        "{{\"hook_event_name\": \"PreToolUse\", \"tool_name\": \"Bash\", \"tool_input\": \"{SECRET}\"}}"
    );
    let run = env.hook("claude-code", bad.as_bytes(), &[]);
    assert_blocked("claude-code", &run);
    assert!(!run.stderr.contains(SECRET));
    let log = std::fs::read_to_string(env.log()).unwrap();
    assert_eq!(log.lines().count(), 5);
    assert!(!log.contains(SECRET), "{log}");
    assert!(log.contains("Authorization: [REDACTED]"), "{log}");
}

// ── settings ─────────────────────────────────────────────────────────────────

const BASH_PROMPT: &str = r#"version: 1
tools:
  - name: Bash
    description: run
    scope: shell
    parameters:
      type: object
      properties: {command: {type: string}}
      required: [command]
    safety: {side_effect: shell, permission: prompt, reason: runs a command}
"#;

#[test]
fn unknown_tool_setting_decides_tools_no_manifest_names() {
    let env = Env::new("unknown-tool");
    let unknown = fixture("claude-code", "unknown-tool.json");
    for (setting, want) in [("allow", "allow"), ("deny", "deny"), ("prompt", "ask")] {
        let policy = env.policy(
            &format!("p-{setting}"),
            &format!("{BASH_PROMPT}settings: {{hooks: {{unknown_tool: {setting}}}}}\n"),
        );
        let run = env.hook("claude-code", &unknown, &[&policy]);
        assert_eq!(
            run.json()["hookSpecificOutput"]["permissionDecision"],
            want,
            "{setting}"
        );
    }
    // Any other reject is a deny, whatever the setting: here, bad arguments.
    let policy = env.policy(
        "p-reject",
        &format!("{BASH_PROMPT}settings: {{hooks: {{unknown_tool: allow}}}}\n"),
    );
    let mut bad =
        serde_json::from_slice::<Value>(&fixture("claude-code", "bash-git-status.json")).unwrap();
    bad["tool_input"] = json!({"command": 42});
    let run = env.hook(
        "claude-code",
        &serde_json::to_vec(&bad).unwrap(),
        &[&policy],
    );
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn log_settings_move_the_log_omit_the_arguments_or_turn_it_off() {
    let env = Env::new("log-settings");
    let event = fixture("claude-code", "bash-git-status.json");
    let elsewhere = env.root.join("logs/d.jsonl");
    let moved = env.policy(
        "moved",
        &format!(
            "{BASH_PROMPT}settings: {{log: {{path: '{}', args: omit}}}}\n",
            elsewhere.display()
        ),
    );
    let run = env.hook("claude-code", &event, &[&moved]);
    assert_eq!(run.code, 0);
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&elsewhere).unwrap().trim()).unwrap();
    assert!(line.get("args").is_none(), "{line}");
    assert_eq!(line["decision"], "prompt");
    let tilde = env.policy(
        "tilde",
        &format!("{BASH_PROMPT}settings: {{log: {{path: '~/custom/d.jsonl'}}}}\n"),
    );
    let _ = env.hook("claude-code", &event, &[&tilde]);
    assert!(env.home().join("custom/d.jsonl").is_file());
    let off = env.policy(
        "off",
        &format!("{BASH_PROMPT}settings: {{log: {{path: ''}}}}\n"),
    );
    let run = env.hook("claude-code", &event, &[&off]);
    assert_eq!(run.code, 0);
    assert!(!env.log().exists());
}

#[test]
fn a_log_that_cannot_be_written_is_an_error_on_stderr_and_the_decision_stands() {
    let env = Env::new("log-unwritable");
    let policy = env.policy(
        "p",
        &format!("{BASH_PROMPT}settings: {{log: {{path: /proc/zero-policy/d.jsonl}}}}\n"),
    );
    let run = env.hook(
        "claude-code",
        &fixture("claude-code", "bash-git-status.json"),
        &[&policy],
    );
    assert_eq!(run.code, 0);
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "ask"
    );
    assert!(
        run.stderr
            .starts_with("zero-policy: cannot write the decision log `/proc/zero-policy/d.jsonl`"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_policy_comes_from_zero_policy_path_then_the_config_folder() {
    let env = Env::new("policy-paths");
    env.shipped_policy();
    let event = fixture("claude-code", "bash-git-status.json");
    let deny_all = "version: 1\ntools:\n  - name: Bash\n    description: run\n    scope: shell\n    safety: {side_effect: shell, permission: deny, reason: from ZERO_POLICY_PATH}\n";
    let dir = env.policy("from-var", deny_all);
    let var = format!("/no/such/empty:{}", dir.display());
    // A listed folder that does not exist is an error like a missing PATH.
    let run = env.hook_env("claude-code", &event, &[], &[("ZERO_POLICY_PATH", &var)]);
    assert_blocked("claude-code", &run);
    let var = dir.display().to_string();
    let run = env.hook_env("claude-code", &event, &[], &[("ZERO_POLICY_PATH", &var)]);
    assert_eq!(
        run.json(),
        claude("deny", "zero-policy: from ZERO_POLICY_PATH")
    );
    let config = env.home().join(".config/zero-policy");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("p.yaml"),
        deny_all.replace("ZERO_POLICY_PATH", "the config folder"),
    )
    .unwrap();
    let run = env.hook("claude-code", &event, &[]);
    assert_eq!(
        run.json(),
        claude("deny", "zero-policy: from the config folder")
    );
    // The project's own policies/ folder is never read by the hook.
    std::fs::create_dir_all(env.root.join("work/policies")).unwrap();
    std::fs::write(
        env.root.join("work/policies/p.yaml"),
        "version: 1\nsettings: {on_prompt: ask}\n",
    )
    .unwrap();
    let run = env.hook("claude-code", &event, &[]);
    assert_eq!(
        run.json(),
        claude("deny", "zero-policy: from the config folder")
    );
}

// ── the log under load ───────────────────────────────────────────────────────

#[test]
fn concurrent_hooks_never_interleave_log_lines() {
    const PROCESSES: usize = 32;
    const EVENTS: usize = 4;
    let env = Env::new("parallel");
    let events = [
        (
            "claude-code",
            fixture("claude-code", "bash-git-status.json"),
        ),
        (
            "claude-code",
            fixture("claude-code", "bash-with-secret.json"),
        ),
        ("codex", fixture("codex", "bash-rm-rf-root.json")),
        ("cursor", fixture("cursor", "read-dotenv.json")),
    ];
    std::thread::scope(|s| {
        for p in 0..PROCESSES {
            let (env, events) = (&env, &events);
            s.spawn(move || {
                for e in 0..EVENTS {
                    let (agent, input) = &events[(p + e) % events.len()];
                    let run = env.hook(agent, input, &[]);
                    assert_eq!(run.code, 0, "{run:?}");
                }
            });
        }
    });
    let text = std::fs::read_to_string(env.log()).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), PROCESSES * EVENTS);
    for line in lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        for key in [
            "time",
            "front",
            "session",
            "tool",
            "decision",
            "answer",
            "reason",
            "matched",
            "policy",
            "duration_us",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {line}");
        }
        assert!(!line.contains(SECRET));
    }
}

#[test]
fn explain_writes_nothing_to_the_log() {
    let env = Env::new("explain");
    let out = env.zp([
        "explain",
        "--tool",
        "Bash",
        "--args",
        r#"{"command":"rm -rf /"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!env.home().join(".local").exists());
}

/// A hook reads what deciding needs: a file that holds only tests is not read
/// (a broken test there does not stop the hook, as it stops `lint`), and a
/// tool's parameters are compiled when the tool is called, so a schema that is
/// not valid blocks that tool's calls and no other's.
#[test]
fn a_hook_skips_test_files_and_blocks_a_tool_whose_schema_is_invalid() {
    let env = Env::new("decide-load");
    let dir = env.policy(
        "decide",
        "version: 1\nagent: claude-code\ntools:\n\
         \x20 - name: Bash\n    description: runs a command\n    scope: read_only\n    parameters: {type: 12}\n\
         \x20   safety: {permission: allow, side_effect: none}\n\
         \x20 - name: Read\n    description: reads a file\n    scope: read_only\n    parameters: {type: object}\n\
         \x20   safety: {permission: allow, side_effect: read}\n",
    );
    std::fs::write(
        dir.join("policy.test.yaml"),
        "version: 1\ntests:\n  - name: no call\n    expect: {decision: allow}\n",
    )
    .unwrap();
    let event = |tool: &str, input: Value| {
        serde_json::to_vec(&json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1",
        }))
        .unwrap()
    };
    let bash = env.hook(
        "claude-code",
        &event("Bash", json!({"command": "ls"})),
        &[&dir],
    );
    assert_eq!(bash.code, 0, "{bash:?}");
    let answer = bash.json();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{bash:?}"
    );
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("not a valid JSON Schema"), "{reason}");
    let read = env.hook(
        "claude-code",
        &event("Read", json!({"file_path": "/tmp/x"})),
        &[&dir],
    );
    assert_eq!(read.code, 0, "{read:?}");
    assert_eq!(
        read.json(),
        claude("allow", "zero-policy: allowed"),
        "{read:?}"
    );
    // `lint` reads everything and refuses both files.
    let lint = env.zp([std::ffi::OsStr::new("lint"), dir.as_os_str()]);
    let text =
        String::from_utf8_lossy(&lint.stdout).into_owned() + &String::from_utf8_lossy(&lint.stderr);
    assert_eq!(lint.status.code(), Some(1), "{text}");
    assert!(
        text.contains("parameters of `Bash` are not a valid JSON Schema"),
        "{text}"
    );
    assert!(text.contains("policy.test.yaml:"), "{text}");
}

// ── the policy's own files ───────────────────────────────────────────────────

/// A Claude Code `PreToolUse` event in `cwd`, in `acceptEdits` mode.
fn claude_event(cwd: &Path, tool: &str, input: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": cwd,
        "permission_mode": "acceptEdits",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
    }))
    .unwrap()
}

#[test]
fn a_hook_denies_every_call_that_changes_where_its_policy_is_read_from() {
    let env = Env::new("own-files");
    // A policy that allows everything: only the guard can deny.
    let dir = env.policy(
        "team",
        "version: 1\nrelax:\n  - id: everything\n    when: 'true'\n",
    );
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    // The policy folder is also reached through a symbolic link.
    let link = env.root.join("team-link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let work = env.root.join("work");
    let home = env.home();
    let bash = |command: String| ("Bash", json!({"command": command}));
    let write = |path: PathBuf| {
        (
            "Write",
            json!({"file_path": path, "content": "version: 1\n"}),
        )
    };
    let denied = [
        write(dir.join("policy.yaml")),
        write(dir.join("more.yaml")),
        write(link.join("policy.yaml")),
        write(dir.join("zero-policy.lock")),
        // Where a hook given no paths would look next time.
        write(home.join(".config/zero-policy/p.yaml")),
        bash(format!("echo 'rules: []' > {}/policy.yaml", dir.display())),
        bash(format!("rm -rf {}", env.root.display())),
        bash(format!("mv {} /tmp/elsewhere", dir.display())),
        bash(format!("mv {}/.conf* /tmp/", home.display())),
        bash(format!("ln -sfn /tmp/evil {}", link.display())),
        bash(format!("cp /tmp/evil.yaml {}/", manifests.display())),
        bash("mkdir -p ~/.config/zero-policy && touch ~/.config/zero-policy/x.yaml".into()),
        // A link opens the folder to every later write through it.
        bash(format!("ln -s {} {}/cfg", dir.display(), work.display())),
        bash(format!("cp -rs {} {}/cfg", dir.display(), work.display())),
        bash("ln -s ~/.config/zero-policy cfg".into()),
        // The document cache stands in for the policy's YAML.
        write(home.join(".cache/zero-policy/0123.json")),
        bash("rm -rf ~/.cache".into()),
    ];
    for (tool, input) in &denied {
        let run = env.hook(
            "claude-code",
            &claude_event(&work, tool, input),
            &[&link, &manifests],
        );
        let answer = run.json();
        let out = &answer["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny", "{tool} {input}: {run:?}");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.contains("where the policy governing this agent is read from"),
            "{reason}"
        );
    }
    let allowed = [
        write(work.join("notes.txt")),
        bash(format!("cat {}/policy.yaml", dir.display())),
        bash("mkdir -p ~/.config/other".into()),
        bash("mkdir -p ~/.cache/other".into()),
        bash(format!("echo x > {}/team2.yaml", env.root.display())),
        bash(format!(
            "ln -s {}/src {}/lib",
            work.display(),
            work.display()
        )),
    ];
    for (tool, input) in &allowed {
        let run = env.hook(
            "claude-code",
            &claude_event(&work, tool, input),
            &[&link, &manifests],
        );
        assert_eq!(
            run.json()["hookSpecificOutput"]["permissionDecision"],
            "allow",
            "{tool} {input}: {run:?}"
        );
    }
    // A folder listed in $ZERO_POLICY_PATH is guarded even when paths are given.
    let other = env.policy("listed", "version: 1\n");
    let var = other.display().to_string();
    let (tool, input) = write(other.join("p.yaml"));
    let run = env.hook_env(
        "claude-code",
        &claude_event(&work, tool, &input),
        &[&link, &manifests],
        &[("ZERO_POLICY_PATH", &var)],
    );
    assert_eq!(
        run.json()["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn a_hook_does_not_read_another_agents_manifest() {
    let env = Env::new("other-agent");
    let dir = env.policy(
        "team",
        "version: 1\nagent: claude-code\ntools:\n  - name: Bash\n    description: run\n    scope: shell\n    safety: {side_effect: shell, permission: deny, reason: no shell here}\n",
    );
    // Another agent's manifest with an unknown field: a load that reads it fails.
    std::fs::write(
        dir.join("codex.yaml"),
        "version: 1\nagent: codex\ntools:\n  - name: Bash\n    description: run\n    scope: shell\n    bogus: 1\n    safety: {side_effect: shell, permission: allow}\n",
    )
    .unwrap();
    let event = fixture("claude-code", "bash-git-status.json");
    let run = env.hook("claude-code", &event, &[&dir]);
    assert_eq!(run.json(), claude("deny", "zero-policy: no shell here"));
    // Codex's own hook reads it, and blocks.
    let run = env.hook("codex", &fixture("codex", "bash-git-status.json"), &[&dir]);
    let why = assert_blocked("codex", &run);
    assert!(why.contains("does not load"), "{why}");
    // `explain` for Claude Code decides as its hook does; `lint` reads everything.
    let d = dir.to_str().unwrap();
    let out = env.zp([
        "explain",
        "--agent",
        "claude-code",
        "--tool",
        "Bash",
        "--args",
        r#"{"command":"ls"}"#,
        "--format",
        "json",
        d,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "deny");
    let out = env.zp(["lint", d]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("bogus"), "{said}");
}

#[test]
fn a_glob_that_does_not_parse_fails_closed_in_a_hook() {
    // The hook compiles a glob list when a call first compares a path with it:
    // a broken glob makes the rules that compare with the list fail closed.
    let env = Env::new("bad-glob");
    let dir = env.policy(
        "team",
        "version: 1\nlists:\n  bad: [\"src/[\", \"**/.env\"]\nrules:\n  - id: no-bad\n    when: 'call.reads.exists(r, path_matches(r, lists.bad))'\n    action: deny\n    reason: a bad read\nrelax:\n  - id: reads\n    when: 'call.reads.all(r, !path_matches(r, lists.bad))'\n    reason: fine reads\n",
    );
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    let work = env.root.join("work");
    let read = claude_event(&work, "Bash", &json!({"command": "cat README.md"}));
    let run = env.hook("claude-code", &read, &[&dir, &manifests]);
    assert_eq!(run.json(), claude("deny", "zero-policy: a bad read"));
    // A call that compares no path with the list is decided as usual (it reads
    // nothing, so the relax rule holds).
    let fetch = claude_event(
        &work,
        "WebFetch",
        &json!({"url": "https://example.com/", "prompt": "x"}),
    );
    let run = env.hook("claude-code", &fetch, &[&dir, &manifests]);
    assert_eq!(run.json(), claude("allow", "zero-policy: fine reads"));
    // `lint` reports the glob.
    let out = env.zp(["lint".as_ref(), dir.as_os_str(), manifests.as_os_str()]);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("invalid-glob"), "{text}");
}

// ── Rewrite to enforce ───────────────────────────────────────────────────────

/// Each agent's event for its shell tool, with this command and working folder.
fn shell_event(agent: &str, command: &str, cwd: &Path) -> Vec<u8> {
    let file = match agent {
        "cursor" => "pre-tool-use-bash.json",
        _ => "bash-git-status.json",
    };
    let mut event: Value = serde_json::from_slice(&fixture(agent, file)).unwrap();
    let cwd = cwd.display().to_string();
    event["cwd"] = json!(cwd);
    if agent == "copilot" {
        event["toolArgs"] = json!(json!({"command": command}).to_string());
    } else {
        event["tool_input"]["command"] = json!(command);
    }
    if agent == "cursor" {
        event["workspace_roots"] = json!([cwd]);
    }
    serde_json::to_vec(&event).unwrap()
}

/// The command an answer rewrote the call to, and its permission word.
fn rewritten(agent: &str, answer: &Value) -> (String, String) {
    let (input, permission) = match agent {
        "claude-code" | "codex" => (
            &answer["hookSpecificOutput"]["updatedInput"],
            &answer["hookSpecificOutput"]["permissionDecision"],
        ),
        "gemini-cli" => (
            &answer["hookSpecificOutput"]["tool_input"],
            &answer["decision"],
        ),
        "copilot" => (&answer["modifiedArgs"], &answer["permissionDecision"]),
        _ => (&answer["updated_input"], &answer["permission"]),
    };
    (
        input["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{agent}: no rewritten command in {answer}"))
            .to_string(),
        permission.as_str().unwrap_or_default().to_string(),
    )
}

/// Runs a command line in a real shell in `cwd`, as the agent's shell tool
/// would: its output, and where the shell was and what `$?` was afterwards.
fn in_shell(env: &Env, cwd: &Path, line: &str) -> (String, String, String) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("{line}\nrc=$?; echo \"after=$PWD rc=$rc\""))
        .current_dir(cwd)
        .env("HOME", env.home())
        .env_remove("ZERO_POLICY_PATH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (body, after) = stdout
        .trim_end()
        .rsplit_once('\n')
        .unwrap_or(("", stdout.trim_end()));
    (
        body.to_string(),
        after.to_string(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn shell_calls_are_rewritten_to_run_confined() {
    let env = Env::new("rewrite");
    env.shipped_policy();
    // The workspace is under the home folder, as a developer's is.
    let ws = env.home().join("project");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join(".env"), "API_KEY=canary-5f1e\n").unwrap();
    // Runs code (so only confinement lets it be allowed), reads a credential
    // behind the analysis' back, moves the shell and exits non-zero.
    let command = "cd sub && echo hello && perl -e 'local $/; open(F, \"../.env\"); print(<F> || \"empty\")'; echo; exit 3";
    for agent in ["claude-code", "codex", "gemini-cli", "copilot", "cursor"] {
        let run = env.hook(agent, &shell_event(agent, command, &ws), &[]);
        assert_eq!(run.code, 0, "{agent}: {run:?}");
        let (line, permission) = rewritten(agent, &run.json());
        assert_eq!(permission, "allow", "{agent}: {run:?}");
        assert!(line.contains(" run --agent "), "{agent}: {line}");
        // Gemini CLI refuses a command with a substitution as an injection,
        // and Codex refuses `rm -f` where nobody can approve it.
        assert!(
            !line.contains("$(") && !line.contains('`') && !line.contains("rm -f"),
            "{agent}: {line}"
        );
        let (out, after, stderr) = in_shell(&env, &ws, &line);
        assert_eq!(out, "hello\nempty", "{agent}: {stderr}");
        // The file the working folder came back in is gone.
        let left: Vec<_> = std::fs::read_dir(env.home().join(".local/state/zero-policy/cwd"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{agent}: {left:?}");
        assert_eq!(
            after,
            format!("after={} rc=3", ws.join("sub").display()),
            "{agent}: the shell keeps the folder and the status ({stderr})"
        );
    }
    let log = env.log_lines();
    assert!(
        log.iter().all(|l| l["matched"] == json!(["confined-work"])),
        "{log:?}"
    );
}

#[test]
fn an_asked_call_runs_once_on_its_ticket_and_a_forged_one_runs_never() {
    let env = Env::new("ticket");
    env.shipped_policy();
    let ws = env.home().join("project");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "").unwrap();
    let run = env.hook(
        "claude-code",
        &shell_event("claude-code", "rm -rf src", &ws),
        &[],
    );
    let (line, permission) = rewritten("claude-code", &run.json());
    assert_eq!(permission, "ask");
    assert!(line.contains(" --ticket "), "{line}");
    // The person approved it in the agent: `run` accepts the ticket.
    let (_, after, stderr) = in_shell(&env, &ws, &line);
    assert_eq!(after, format!("after={} rc=0", ws.display()), "{stderr}");
    assert!(!ws.join("src").exists());
    // The same line again: the ticket is used, nobody can be asked, denied.
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let (_, after, stderr) = in_shell(&env, &ws, &line);
    assert_eq!(after, format!("after={} rc=126", ws.display()), "{stderr}");
    assert!(stderr.contains("the ticket is not accepted"), "{stderr}");
    assert!(ws.join("src").exists());
    // A ticket the model made up.
    let forged = line.replace(
        &line[line.find("--ticket ").unwrap() + 9..][..32],
        "0123456789abcdef0123456789abcdef",
    );
    let (_, after, _) = in_shell(&env, &ws, &forged);
    assert_eq!(after, format!("after={} rc=126", ws.display()));
    assert!(ws.join("src").exists());
}
