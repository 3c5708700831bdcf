//! `zero-policy run` as a person or an agent's rewritten shell call uses it:
//! exit statuses, streams, signals, the envelope, leftovers and findings,
//! through the shipped policy.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_zero-policy");

/// A throwaway home with a workspace `~/project` (not under /tmp, which a
/// confined call may not run programs from).
struct Home(PathBuf);

impl Home {
    fn new(name: &str) -> Home {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("run-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("project/src")).unwrap();
        std::fs::write(root.join("project/src/main.rs"), "fn main() {}\n").unwrap();
        Home(root)
    }
    fn ws(&self) -> PathBuf {
        self.0.join("project")
    }
    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let policy = format!(
            "{}:{}",
            repo.join("policies").display(),
            repo.join("manifests").display()
        );
        let mut child = Command::new(BIN)
            .arg("run")
            .args(["--policy", &policy])
            .args(args)
            .current_dir(self.ws())
            .env("HOME", &self.0)
            .env_remove("ZERO_POLICY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }
    fn log(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.0.join(".local/state/zero-policy/decisions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_denied_call_exits_126_with_the_reason_and_never_runs() {
    let h = Home::new("deny");
    let out = h.run(&["-c", "rm -rf ~ && touch ran"], "");
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "zero-policy: deny: the command would destroy the system, the home folder or the workspace\n"
    );
    assert!(!h.ws().join("ran").exists());
    assert!(h.ws().join("src/main.rs").exists());
    let log = h.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["front"], "run");
    assert_eq!(log[0]["decision"], "deny");
}

#[test]
fn a_prompt_that_nobody_can_answer_is_not_run() {
    let h = Home::new("prompt");
    let out = h.run(&["-c", "curl -s -o page.html https://example.com"], "");
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        text(&out.stderr),
        "zero-policy: not approved: the command talks to a remote host and could send data out of the workspace\n"
    );
    assert!(!h.ws().join("page.html").exists());
}

#[test]
fn streams_and_the_exit_status_pass_through() {
    let h = Home::new("streams");
    let out = h.run(
        &["-c", "read line; echo \"got $line\"; echo oops >&2; exit 7"],
        "hello\n",
    );
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "got hello\n");
    assert_eq!(text(&out.stderr), "oops\n");
    // A program and its arguments after `--`, each word as given.
    let out = h.run(&["--", "printf", "%s|", "a b", "c'd"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "a b|c'd|");
}

#[test]
fn a_call_killed_by_a_signal_exits_128_plus_the_signal() {
    let h = Home::new("signal");
    let out = h.run(&["-c", "kill -TERM $$"], "");
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
}

#[test]
fn nothing_the_call_started_outlives_it() {
    let h = Home::new("leftovers");
    let marker = format!("zp-leftover-{}", std::process::id());
    let out = h.run(
        &[
            "-c",
            &format!("sh -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 & echo started"),
        ],
        "",
    );
    assert_eq!(text(&out.stdout), "started\n", "{}", text(&out.stderr));
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| text(&c).contains(&marker));
    assert!(!alive, "a process of the call survived it");
}

#[test]
fn root_keeps_every_id_in_the_calls_user_namespace() {
    // Root's maps are written by `run` itself (no writer program is started):
    // the call sees every id of the outer namespace mapped to itself, and not
    // the descriptors or the variable that asked for them.
    if !running_as_root() {
        return;
    }
    let identity = |file: &str| -> Vec<String> {
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {} {}", f[0], f[0], f[2])
            })
            .collect()
    };
    let h = Home::new("idmaps");
    let out = h.run(
        &[
            "-c",
            "cat /proc/self/uid_map /proc/self/gid_map; echo \"mapper:${ZERO_POLICY_ID_MAPPER-unset}\"",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let seen: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let mut expected = identity("/proc/self/uid_map");
    expected.extend(identity("/proc/self/gid_map"));
    expected.push("mapper:unset".into());
    assert_eq!(seen, expected);
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .is_some_and(|ids| ids.split_whitespace().all(|id| id == "0"))
}

#[test]
fn the_envelope_is_the_policys_and_the_calls_own() {
    let h = Home::new("envelope");
    let out = h.run(&["--print-envelope", "-c", "cat src/main.rs > copy.rs"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let has = |key: &str, p: &Path| {
        e[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str() == Some(p.to_str().unwrap()))
    };
    let ws = h.ws();
    // It reads the workspace and writes only the file it writes (and temp folders).
    assert!(has("reads", &ws));
    assert!(has("writes", &ws.join("copy.rs")));
    assert!(!has("writes", &ws));
    assert!(
        !has("reads", &h.0),
        "the home folder at large is not readable"
    );
    assert_eq!(e["network"], "none");
    assert!(
        e["deny_reads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "**/.env")
    );
    assert!(
        e["deny_writes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "**/.git/hooks/**")
    );
    // The same call runs it so.
    let out = h.run(&["-c", "cat src/main.rs > copy.rs"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.join("copy.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn findings_name_what_the_sandbox_refused_on_stderr_and_in_the_log() {
    let h = Home::new("findings");
    std::fs::write(h.0.join(".profile"), "export X=1\n").unwrap();
    let profile = h.0.join(".profile");
    // Code the analysis cannot read writes a shell start-up file: the kernel refuses.
    let script = format!("sh -c \"$(printf 'echo evil >> {}')\"", profile.display());
    let out = h.run(&["--findings", "-c", &script], "");
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&profile).unwrap(), "export X=1\n");
    let stderr = text(&out.stderr);
    let line = format!("zero-policy: blocked: write {} (EACCES)", profile.display());
    assert!(stderr.contains(&line), "{stderr}");
    let log = h.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["decision"], "allow");
    assert_eq!(log[0]["matched"], serde_json::json!(["confined-work"]));
    // Besides the write, a host may show the sandbox refusing the name
    // service's unix socket (glibc asks nscd when `sh` looks a user up):
    // that is a real refusal, and the only other one allowed here.
    let blocked: Vec<&str> = log[0]["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .filter(|b| *b != "socket AF_UNIX (EPERM)")
        .collect();
    assert_eq!(blocked, [format!("write {} (EACCES)", profile.display())]);
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let h = Home::new("bad");
    let out = h.run(&[], "");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "zero-policy: give the call as `-c SCRIPT` or as `-- PROGRAM ARGS…`\n"
    );
    let out = h.run(&["--session", "colour=blue", "-c", "true"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_protected_file_the_call_creates_is_removed_and_reported() {
    let h = Home::new("create-protected");
    let script = "sh -c \"$(printf 'mkdir -p .claude && echo {\\\"hooks\\\":1} > .claude/settings.json && echo > .mcp.json && echo ok > fine.txt')\"";
    let out = h.run(&["-c", script], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ws = h.ws();
    assert!(!ws.join(".claude/settings.json").exists());
    assert!(!ws.join(".mcp.json").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("fine.txt")).unwrap(),
        "ok\n"
    );
    let stderr = text(&out.stderr);
    for p in [".claude/settings.json", ".mcp.json"] {
        let line = format!(
            "zero-policy: blocked: create {} (protected; removed)",
            ws.join(p).display()
        );
        assert!(stderr.contains(&line), "{stderr}");
    }
}

#[test]
fn a_descriptor_the_call_inherits_is_closed_unless_kept() {
    let h = Home::new("fds");
    let outside = h.0.join("outside.txt");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let policy = format!(
        "{}:{}",
        repo.join("policies").display(),
        repo.join("manifests").display()
    );
    // A shell opens a file outside the envelope on descriptor 7 and 9, then
    // runs the call, which writes to both; only the kept one (9) is open.
    let line = format!(
        "{BIN} run --policy '{policy}' --cwd-fd 9 -c 'echo leaked >&7; echo kept >&9' 7>>'{o}' 9>>'{o}'",
        o = outside.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&line)
        .current_dir(h.ws())
        .env("HOME", &h.0)
        .env_remove("ZERO_POLICY_PATH")
        .output()
        .unwrap();
    assert!(
        text(&out.stderr).contains("Bad file descriptor"),
        "{}",
        text(&out.stderr)
    );
    let written = std::fs::read_to_string(&outside).unwrap();
    assert!(!written.contains("leaked"), "{written}");
    assert!(written.contains("kept"), "{written}");
}

#[test]
fn secrets_in_the_environment_do_not_reach_the_confined_call() {
    let h = Home::new("env");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |extra_policy: Option<&Path>, script: &str| {
        let mut policy = format!(
            "{}:{}",
            repo.join("policies").display(),
            repo.join("manifests").display()
        );
        if let Some(p) = extra_policy {
            policy = format!("{policy}:{}", p.display());
        }
        Command::new(BIN)
            .args(["run", "--policy", &policy, "-c", script])
            .current_dir(h.ws())
            .env("HOME", &h.0)
            .env_remove("ZERO_POLICY_PATH")
            .env("GITHUB_TOKEN", "ghp_planted0000000000000000000000000000")
            .env("OPENAI_API_KEY", "sk-planted")
            .env("aws_secret_access_key", "planted-lower-case")
            .env("PGPASSWORD", "planted-password")
            .env("DATABASE_URL", "postgres://u:planted@db/app")
            .env("EDITOR_THEME", "kept")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    // The shell, and an interpreter dumping its whole environment (Debian's
    // perl: a program under /root/.pyenv may not run confined).
    let out = run(
        None,
        "echo \"[$GITHUB_TOKEN][$OPENAI_API_KEY][$PGPASSWORD][$EDITOR_THEME]\"; perl -e 'print \"$_=$ENV{$_}\\n\" for sort keys %ENV'",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("[][][][kept]\n"), "{stdout}");
    assert!(!stdout.contains("planted"), "{stdout}");
    assert!(stdout.contains("EDITOR_THEME=kept"), "{stdout}");
    assert!(
        stdout.contains(&format!("HOME={}", h.0.display())),
        "{stdout}"
    );

    // A policy may keep them all: `deny_env: []`.
    let settings = h.0.join("keep-env.yaml");
    std::fs::write(
        &settings,
        "version: 1\nsettings:\n  enforce:\n    deny_env: []\n",
    )
    .unwrap();
    let out = run(Some(&settings), "echo \"[$OPENAI_API_KEY]\"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[sk-planted]\n");

    // A name that is not a name is a load error at its place.
    std::fs::write(
        &settings,
        "version: 1\nsettings:\n  enforce:\n    deny_env: [\"GH-TOKEN\"]\n",
    )
    .unwrap();
    let out = run(Some(&settings), "true");
    assert_ne!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("keep-env.yaml:4:16")
            && stderr.contains("`GH-TOKEN` in `enforce.deny_env`"),
        "{stderr}"
    );
}
