//! `zero-policy init AGENT`: the hook written into each agent's settings file,
//! merged into what is there, idempotent; and the `hook`/`init` help.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const EXE: &str = env!("CARGO_BIN_EXE_zero-policy");

/// A project folder and a home folder of the test's own, removed on drop.
struct Env {
    root: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        let root = std::env::temp_dir().join(format!("zp-init-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("project")).unwrap();
        Env { root }
    }

    fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn zp(&self, args: &[&str]) -> (i32, String, String) {
        self.zp_env(args, &[])
    }

    fn zp_env(&self, args: &[&str], env: &[(&str, &Path)]) -> (i32, String, String) {
        let out = Command::new(EXE)
            .args(args)
            .current_dir(self.project())
            .env("HOME", self.home())
            .env_remove("CODEX_HOME")
            .env_remove("COPILOT_HOME")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    fn read(&self, path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn command(agent: &str) -> String {
    format!("{EXE} hook {agent}")
}

/// The printed change, with this machine's paths replaced.
fn redact(text: &str, env: &Env) -> String {
    text.replace(EXE, "[EXE]")
        .replace(&env.home().display().to_string(), "[HOME]")
}

#[test]
fn claude_code_twice_in_a_project_keeps_every_key_and_adds_one_entry() {
    let env = Env::new("claude");
    let settings = env.project().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // As an editor or the agent writes it: pretty, here with 4-space indentation.
    let existing = r#"{
    "model": "opus",
    "permissions": {
        "allow": [
            "Bash(git status)"
        ],
        "deny": [
            "Read(./.env)"
        ]
    },
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Write",
                "hooks": [
                    {
                        "type": "command",
                        "command": "./fmt.sh"
                    }
                ]
            }
        ],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "./audit.sh"
                    }
                ]
            }
        ]
    },
    "env": {
        "FOO": "1"
    }
}
"#;
    std::fs::write(&settings, existing).unwrap();
    let (code, out, err) = env.zp(&["init", "claude-code", "--project"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("init_claude_code_first_run", redact(&out, &env));
    let (code, out, err) = env.zp(&["init", "claude-code", "--project"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!(
            ".claude/settings.json: already has the `PreToolUse` hook `{}`\n.claude/settings.json: nothing to change\n",
            command("claude-code")
        )
    );
    assert_eq!(
        env.read(&settings),
        json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
            "hooks": {
                "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "./fmt.sh"}]}],
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]},
                    {"matcher": "*", "hooks": [{"type": "command", "command": command("claude-code"), "timeout": 30, "onFailure": "block"}]}
                ]
            },
            "env": {"FOO": "1"}
        })
    );
    // Key order and the file's 4-space indentation are kept.
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(
        text.starts_with("{\n    \"model\": \"opus\",\n    \"permissions\""),
        "{text}"
    );
}

#[test]
fn each_agent_gets_its_own_file_and_shape() {
    let env = Env::new("shapes");
    let p = env.project();
    for (agent, file, want) in [
        (
            "codex",
            p.join(".codex/hooks.json"),
            json!({"hooks": {"PreToolUse": [
                {"matcher": "*", "hooks": [{"type": "command", "command": command("codex"), "timeout": 30}]}
            ]}}),
        ),
        (
            "gemini-cli",
            p.join(".gemini/settings.json"),
            json!({"hooks": {"BeforeTool": [
                {"matcher": "*", "hooks": [{"name": "zero-policy", "type": "command", "command": command("gemini-cli"), "timeout": 30000}]}
            ]}}),
        ),
        (
            "cursor",
            p.join(".cursor/hooks.json"),
            json!({"version": 1, "hooks": {
                "preToolUse": [{"command": command("cursor"), "failClosed": true}],
                "beforeShellExecution": [{"command": command("cursor"), "failClosed": true}],
                "beforeMCPExecution": [{"command": command("cursor"), "failClosed": true}],
                "beforeReadFile": [{"command": command("cursor"), "failClosed": true}]
            }}),
        ),
        (
            "copilot",
            p.join(".github/hooks/zero-policy.json"),
            json!({"version": 1, "hooks": {"preToolUse": [
                {"type": "command", "bash": command("copilot"), "timeoutSec": 30}
            ]}}),
        ),
    ] {
        let (code, _, err) = env.zp(&["init", agent]);
        assert_eq!(code, 0, "{agent}: {err}");
        assert_eq!(env.read(&file), want, "{agent}");
        let (code, out, _) = env.zp(&["init", agent]);
        assert_eq!(code, 0);
        assert!(out.contains("nothing to change\n"), "{agent}: {out}");
    }
}

#[test]
fn codex_trust_is_said_or_recorded_by_the_hooks_hash() {
    let env = Env::new("codex-trust");
    let codex_home = env.home().join(".codex");
    let (code, out, err) = env.zp(&["init", "codex", "--user"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Codex runs this hook only once it is trusted")
            && out.contains("zero-policy init codex --user --trust"),
        "{out}"
    );
    assert!(!codex_home.join("config.toml").exists());
    std::fs::write(codex_home.join("config.toml"), "model = \"gpt-5\"\n").unwrap();
    let (code, out, err) = env.zp(&["init", "codex", "--user", "--trust"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("recorded the hook as trusted"), "{out}");
    let hooks = std::fs::canonicalize(codex_home.join("hooks.json")).unwrap();
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    let handler = &env.read(&hooks)["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(
        config,
        format!(
            "model = \"gpt-5\"\n\n[hooks.state.\"{}:pre_tool_use:0:0\"]\ntrusted_hash = \"{}\"\n",
            hooks.display(),
            zero_policy::cli::init::codex_hook_hash("pre_tool_use", Some("*"), handler)
        )
    );
    let (code, out, _) = env.zp(&["init", "codex", "--user", "--trust"]);
    assert_eq!(code, 0);
    assert!(out.contains("Codex already trusts this hook"), "{out}");
}

#[test]
fn user_scope_writes_under_the_home_folder() {
    let env = Env::new("user");
    let (code, out, err) = env.zp(&["init", "gemini-cli", "--user"]);
    assert_eq!(code, 0, "{err}");
    assert!(env.home().join(".gemini/settings.json").is_file());
    assert!(!env.project().join(".gemini").exists());
    assert!(
        redact(&out, &env).starts_with("[HOME]/.gemini/settings.json: added the `BeforeTool` hook"),
        "{out}"
    );
    let (code, _, _) = env.zp(&["init", "copilot", "--user"]);
    assert_eq!(code, 0);
    assert!(env.home().join(".copilot/hooks/zero-policy.json").is_file());
    let codex_home = env.root.join("codex-home");
    let (code, _, _) = env.zp_env(&["init", "codex", "--user"], &[("CODEX_HOME", &codex_home)]);
    assert_eq!(code, 0);
    assert!(codex_home.join("hooks.json").is_file());
}

#[test]
fn dry_run_prints_the_change_and_writes_nothing() {
    let env = Env::new("dry-run");
    let (code, out, err) = env.zp(&["init", "cursor", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("init_cursor_dry_run", redact(&out, &env));
    assert!(!env.project().join(".cursor").exists());
}

#[test]
fn a_settings_file_that_is_not_json_is_an_error_and_is_left_alone() {
    let env = Env::new("not-json");
    let settings = env.project().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Gemini CLI settings may hold comments; zero-policy does not rewrite them.
    let text = "{\n  // my settings\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(&settings, text).unwrap();
    let (code, out, err) = env.zp(&["init", "gemini-cli"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with("error: `.gemini/settings.json` is not valid JSON ("),
        "{err}"
    );
    assert!(err.contains("it was left as it is"), "{err}");
    assert!(
        err.contains(&command("gemini-cli")),
        "the entry to add by hand: {err}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    // The same for a file whose `hooks` is not an object.
    std::fs::write(&settings, "{\"hooks\": []}\n").unwrap();
    let (code, _, err) = env.zp(&["init", "gemini-cli"]);
    assert_eq!(code, 2);
    assert!(err.contains("`hooks` is not an object"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{\"hooks\": []}\n"
    );
}

#[test]
fn a_moved_binary_updates_the_entry_instead_of_adding_one() {
    let env = Env::new("moved");
    let file = env.project().join(".codex/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/old/place/zero-policy hook codex", "timeout": 5}]}]}}"#,
    )
    .unwrap();
    let (code, out, _) = env.zp(&["init", "codex"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(".codex/hooks.json: updated the `PreToolUse` hook"),
        "{out}"
    );
    assert_eq!(
        env.read(&file),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command("codex"), "timeout": 5}]}]}})
    );
}

#[test]
fn the_help_teaches_hook_and_init() {
    let env = Env::new("help");
    let (code, out, _) = env.zp(&["hook", "--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("hook_help", out);
    let (code, out, _) = env.zp(&["init", "--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("init_help", out);
}

#[test]
fn commands_fall_back_to_the_builtin_default_and_say_so() {
    let env = Env::new("builtin");
    let (code, out, err) = env.zp(&["tools"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "note: using the built-in default policy\n");
    assert!(out.contains("Bash"), "{out}");
    let (code, out, err) = env.zp(&["test"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.trim_end().ends_with(" passed, 0 failed"), "{out}");
    // A policies/ folder here is used, and nothing is said.
    std::fs::create_dir_all(env.project().join("policies")).unwrap();
    std::fs::write(env.project().join("policies/p.yaml"), "version: 1\n").unwrap();
    let (code, _, err) = env.zp(&["lint"]);
    assert_eq!(code, 0);
    assert!(!err.contains("built-in"), "{err}");
}

#[test]
fn folder_trust_is_said_or_recorded_for_gemini_and_copilot() {
    let env = Env::new("folder-trust");
    let project = std::fs::canonicalize(env.project()).unwrap();
    let dir = project.display().to_string();
    // Copilot writes `//` comment lines at the top of its config.json.
    std::fs::create_dir_all(env.home().join(".copilot")).unwrap();
    let copilot = env.home().join(".copilot/config.json");
    std::fs::write(
        &copilot,
        "// This file is managed automatically.\n{\n  \"firstLaunchAt\": \"2026-12-06\"\n}\n",
    )
    .unwrap();
    let gemini = env.home().join(".gemini/trustedFolders.json");
    for (agent, file) in [("copilot", &copilot), ("gemini-cli", &gemini)] {
        // Without --trust: the step left is said, nothing written.
        let before = std::fs::read_to_string(file).ok();
        let (code, out, err) = env.zp(&["init", agent]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains(&format!("zero-policy init {agent} --trust")) && out.contains(&dir),
            "{out}"
        );
        assert_eq!(std::fs::read_to_string(file).ok(), before);
        // With it: recorded, every other key and the comment kept; once.
        let (code, out, err) = env.zp(&["init", agent, "--trust"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("recorded"), "{out}");
        let (code, out, _) = env.zp(&["init", agent, "--trust"]);
        assert_eq!(code, 0);
        assert!(out.contains("already trusts"), "{out}");
    }
    let text = std::fs::read_to_string(&copilot).unwrap();
    assert!(
        text.starts_with("// This file is managed automatically.\n"),
        "{text}"
    );
    let (_, rest) = text.split_once('\n').unwrap();
    let v: Value = serde_json::from_str(rest).unwrap();
    assert_eq!(
        v,
        json!({"firstLaunchAt": "2026-12-06", "trustedFolders": [dir]})
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&gemini).unwrap()).unwrap();
    assert_eq!(v, json!({ dir.clone(): "TRUST_FOLDER" }));
}

#[test]
fn codex_trust_records_the_project_too() {
    let env = Env::new("codex-project");
    let project = std::fs::canonicalize(env.project()).unwrap();
    let (code, out, err) = env.zp(&["init", "codex"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("zero-policy init codex --trust"), "{out}");
    let (code, _, err) = env.zp(&["init", "codex", "--trust"]);
    assert_eq!(code, 0, "{err}");
    let config = std::fs::read_to_string(env.home().join(".codex/config.toml")).unwrap();
    let doc: toml::Table = config.parse().unwrap();
    assert_eq!(
        doc["projects"][project.display().to_string().as_str()]["trust_level"].as_str(),
        Some("trusted"),
        "{config}"
    );
}

/// `init AGENT --managed` under a throwaway root (`ZERO_POLICY_MANAGED_ROOT`):
/// the hook in each agent's admin-managed file, readable by every user.
#[test]
fn managed_installs_write_each_agents_admin_file() {
    let env = Env::new("managed");
    let root = env.root.join("root");
    let run = |args: &[&str]| {
        let (code, out, err) = env.zp_env(args, &[("ZERO_POLICY_MANAGED_ROOT", &root)]);
        (
            code,
            out.replace(&root.display().to_string(), "[ROOT]"),
            err,
        )
    };
    let (code, out, err) = run(&["init", "claude-code", "--managed"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("init_managed_claude_code", redact(&out, &env));
    let claude = root.join("etc/claude-code/managed-settings.d/zero-policy.json");
    assert_eq!(
        env.read(&claude),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": command("claude-code"), "timeout": 30, "onFailure": "block"}
        ]}]}})
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&claude).unwrap().permissions().mode();
        assert_eq!(mode & 0o444, 0o444, "not readable by every user: {mode:o}");
        let dir = std::fs::metadata(claude.parent().unwrap()).unwrap();
        assert_eq!(dir.permissions().mode() & 0o777, 0o755);
    }

    let (code, out, err) = run(&["init", "gemini-cli", "--managed"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("only in a folder it trusts"), "{out}");
    assert_eq!(
        env.read(&root.join("etc/gemini-cli/settings.json"))["hooks"]["BeforeTool"][0]["hooks"][0]
            ["command"],
        json!(command("gemini-cli"))
    );
    let (code, _, err) = run(&["init", "cursor", "--managed"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        env.read(&root.join("etc/cursor/hooks.json"))["hooks"]["preToolUse"],
        json!([{"command": command("cursor"), "failClosed": true}])
    );
    // Nothing under the user's home or the project.
    assert!(!env.project().join(".claude").exists());
    assert!(!env.home().join(".gemini").exists());

    // Copilot CLI takes no hooks from its managed settings: refused, nothing written.
    let (code, out, err) = run(&["init", "copilot", "--managed"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("takes no hooks from its managed settings"),
        "{err}"
    );
    assert!(!root.join("etc/github-copilot").exists());
}

/// Codex's `requirements.toml`: every line an admin wrote is kept, the hook
/// is added once, `--lock` adds `allow_managed_hooks_only` above the tables,
/// and a moved binary updates the command instead of adding a second hook.
#[test]
fn managed_codex_requirements_keep_the_admins_lines() {
    let env = Env::new("managed-codex");
    let root = env.root.join("root");
    let file = root.join("etc/codex/requirements.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let existing = "# Set by IT\nallowed_approval_policies = [\"on-request\"]\n\n[hooks]\nmanaged_dir = \"/opt/hooks\"\n\n[[hooks.PostToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"/opt/hooks/audit.sh\"\n";
    std::fs::write(&file, existing).unwrap();
    let run = |args: &[&str]| {
        let (code, out, err) = env.zp_env(args, &[("ZERO_POLICY_MANAGED_ROOT", &root)]);
        (
            code,
            out.replace(&root.display().to_string(), "[ROOT]"),
            err,
        )
    };
    let (code, out, err) = run(&["init", "codex", "--managed", "--lock"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("init_managed_codex_lock", redact(&out, &env));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(existing.split("[hooks]").next().unwrap().trim_end()));
    let doc: toml::Table = text.parse().unwrap();
    assert_eq!(doc["allow_managed_hooks_only"], toml::Value::Boolean(true));
    assert_eq!(doc["hooks"]["managed_dir"].as_str(), Some("/opt/hooks"));
    assert_eq!(
        doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str(),
        Some("/opt/hooks/audit.sh")
    );
    let pre = doc["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 1);
    assert_eq!(pre[0]["matcher"].as_str(), Some("*"));
    assert_eq!(
        pre[0]["hooks"][0]["command"].as_str(),
        Some(command("codex").as_str())
    );
    assert_eq!(pre[0]["hooks"][0]["timeout"].as_integer(), Some(30));

    // Twice: nothing to change.
    let (code, out, err) = run(&["init", "codex", "--managed", "--lock"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing to change"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // The binary moved: the command line is brought up to date, in place.
    let moved = text.replace(EXE, "/old/bin/zero-policy");
    std::fs::write(&file, &moved).unwrap();
    let (code, out, err) = run(&["init", "codex", "--managed"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("updated the `PreToolUse` hook"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // A file that is not TOML is left as it is, with the lines to add by hand.
    std::fs::write(&file, "hooks = [\n").unwrap();
    let (code, _, err) = run(&["init", "codex", "--managed"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("is not TOML") && err.contains("[[hooks.PreToolUse.hooks]]"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hooks = [\n");
}

/// `--lock` where the agent has a switch for it, and a dry run that writes nothing.
#[test]
fn managed_lock_and_dry_run() {
    let env = Env::new("managed-lock");
    let root = env.root.join("root");
    let run = |args: &[&str]| {
        let (code, out, err) = env.zp_env(args, &[("ZERO_POLICY_MANAGED_ROOT", &root)]);
        (
            code,
            out.replace(&root.display().to_string(), "[ROOT]"),
            err,
        )
    };
    let (code, out, err) = run(&["init", "claude-code", "--managed", "--lock", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("init_managed_claude_code_lock_dry_run", redact(&out, &env));
    assert!(!root.exists(), "a dry run wrote under {}", root.display());

    let (code, _, err) = run(&["init", "claude-code", "--managed", "--lock"]);
    assert_eq!(code, 0, "{err}");
    let file = root.join("etc/claude-code/managed-settings.d/zero-policy.json");
    assert_eq!(env.read(&file)["allowManagedHooksOnly"], json!(true));
    // Without `--lock` again: the lock an admin set is kept.
    let (code, out, err) = run(&["init", "claude-code", "--managed"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing to change"), "{out}");
    assert_eq!(env.read(&file)["allowManagedHooksOnly"], json!(true));

    // Gemini CLI's system settings path is its own variable's, as the agent reads it.
    let system = env.root.join("gemini-system.json");
    std::fs::write(&system, r#"{"ui": {"theme": "Dark"}}"#).unwrap();
    let (code, _, err) = env.zp_env(
        &["init", "gemini-cli", "--managed", "--lock"],
        &[
            ("ZERO_POLICY_MANAGED_ROOT", &root),
            ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", &system),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v = env.read(&system);
    assert_eq!(v["ui"], json!({"theme": "Dark"}));
    assert_eq!(v["hooksConfig"], json!({"enabled": true}));
    assert_eq!(
        v["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        json!(command("gemini-cli"))
    );

    // `--lock` needs `--managed`; `--managed` goes with neither `--user` nor `--trust`.
    for args in [
        &["init", "codex", "--lock"][..],
        &["init", "codex", "--managed", "--user"],
        &["init", "codex", "--managed", "--trust"],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}

/// A user who cannot write the managed file is refused before anything is
/// written, with the file named and the fix (`sudo`, or `--dry-run`).
#[test]
fn managed_without_the_right_to_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new("managed-refused");
    let root = env.root.join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::set_permissions(root.join("etc"), std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = Command::new(EXE);
    cmd.args(["init", "codex", "--managed"])
        .current_dir(env.project())
        .env("HOME", env.home())
        .env("ZERO_POLICY_MANAGED_ROOT", &root);
    // Root may write anywhere: drop to `nobody` for the check, as an admin's
    // user without `sudo` would be.
    let out = if std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    }) {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", EXE])
            .args(["init", "codex", "--managed"])
            .current_dir("/")
            .env("HOME", env.home())
            .env("ZERO_POLICY_MANAGED_ROOT", &root);
        c.output().unwrap()
    } else {
        cmd.output().unwrap()
    };
    let err = String::from_utf8_lossy(&out.stderr).replace(&root.display().to_string(), "[ROOT]");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot write `[ROOT]/etc/codex/requirements.toml`")
            && err.contains("sudo zero-policy init codex --managed")
            && err.contains("--dry-run"),
        "{err}"
    );
    assert!(!root.join("etc/codex").exists());
    std::fs::set_permissions(root.join("etc"), std::fs::Permissions::from_mode(0o755)).unwrap();
}
