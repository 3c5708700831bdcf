//! Grounding in the host, through real files: links resolved, searches and
//! listings walked within their bounds, and every kind of bad input (loops,
//! links into `/proc` and to devices, FIFOs and sockets, unreadable folders,
//! a tree past the bound, a tree changing during the walk) bounded, never
//! opened, and never narrowed toward allow. Decided through the library with
//! the shipped files, through `zero-policy hook claude-code`, and shown by
//! `explain --host`.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::io::Write;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use zero_policy::call::{Call, Session};
use zero_policy::effects::ground::Host;
use zero_policy::{Decision, Evaluation, Registry, loader};

/// A temporary host: `home` (with `.ssh/id_rsa`) and a workspace `ws`.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        // Readable by another user, for the unreadable-folder case run as root.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let t = Tree { dir };
        t.mkdir("home/.ssh");
        t.write("home/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----");
        t.mkdir("ws/src");
        t.write("ws/src/main.rs", "// TODO: more\nfn main() {}\n");
        t.write("ws/README.md", "# project\n");
        t.write(
            "settings.yaml",
            &format!(
                // Time enough that a walk on a loaded machine ends by its
                // entries, not its clock (the time bound has its own tests).
                "version: 1\nsettings:\n  paths:\n    home: {}\n    walk_time: 60s\n",
                t.path("home").display()
            ),
        );
        t
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn ws(&self) -> String {
        self.path("ws").to_str().unwrap().to_string()
    }

    fn home(&self) -> String {
        self.path("home").to_str().unwrap().to_string()
    }

    fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.path(rel)).unwrap();
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn link(&self, target: impl AsRef<Path>, rel: &str) {
        symlink(target, self.path(rel)).unwrap();
    }

    /// The shipped policy and manifests, with `home` as the home folder.
    fn registry(&self, host: Option<Host>) -> Registry {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let loaded = loader::load_paths(&[
            root.join("policies/default.yaml"),
            root.join("manifests"),
            self.path("settings.yaml"),
        ])
        .unwrap();
        let errors: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == zero_policy::Severity::Error)
            .map(|d| d.message.clone())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let policy = loaded.policy.unwrap();
        let mut reg = Registry::new(&policy).unwrap();
        if let Some(h) = host {
            reg.ground_in_host(h, &policy.lists).unwrap();
        }
        reg
    }

    fn call(&self, tool: &str, args: Value, agent: &str) -> Call {
        Call {
            tool: tool.into(),
            args,
            session: Session {
                workspace: self.ws(),
                agent: agent.into(),
                ..Session::default()
            },
            confined: false,
        }
    }

    fn bash(&self, script: &str) -> Call {
        self.call("bash", json!({ "command": script }), "")
    }

    /// The call decided with and without the host (default bounds).
    fn both(&self, call: &Call) -> (Evaluation, Evaluation) {
        let host = self.registry(Some(roomy())).explain(call);
        let plain = self.registry(None).explain(call);
        (host, plain)
    }
}

fn ids(ev: &Evaluation) -> Vec<String> {
    ev.matched.iter().map(|m| m.id.clone()).collect()
}

fn reads(ev: &Evaluation) -> Vec<String> {
    ev.effects.as_ref().unwrap().reads.clone()
}

fn walks(ev: &Evaluation) -> Vec<zero_policy::effects::ground::Walk> {
    ev.effects
        .as_ref()
        .unwrap()
        .grounding
        .as_ref()
        .expect("grounded")
        .walks
        .clone()
}

#[test]
fn a_link_to_a_key_is_a_credential_read_only_on_the_host() {
    let t = Tree::new();
    t.mkdir("ws/docs");
    t.link(t.path("home/.ssh/id_rsa"), "ws/docs/key");
    for call in [
        t.bash("cat docs/key"),
        t.call(
            "Read",
            json!({"file_path": format!("{}/docs/key", t.ws())}),
            "claude-code",
        ),
        t.call("read_file", json!({"path": "docs/key"}), ""),
    ] {
        let (host, plain) = t.both(&call);
        assert_eq!(host.decision, Decision::Deny, "{}", call.tool);
        assert!(ids(&host).contains(&"secret-files".to_string()));
        assert!(reads(&host).contains(&format!("{}/.ssh/id_rsa", t.home())));
        let g = host.effects.as_ref().unwrap().grounding.clone().unwrap();
        assert_eq!(g.links[0].path, format!("{}/docs/key", t.ws()));
        assert_eq!(g.links[0].reaches, format!("{}/.ssh/id_rsa", t.home()));
        // Without the host the link is not seen: decided the same everywhere.
        assert!(!ids(&plain).contains(&"secret-files".to_string()));
        assert_ne!(plain.decision, Decision::Deny);
    }
}

#[test]
fn a_write_through_a_linked_folder_reaches_the_folder() {
    let t = Tree::new();
    t.link(t.path("home/.ssh"), "ws/keys");
    let (host, plain) = t.both(&t.bash("echo ssh-ed25519 AAAA >> keys/authorized_keys"));
    assert_eq!(host.decision, Decision::Deny);
    assert!(ids(&host).contains(&"secret-files".to_string()));
    assert!(
        host.effects
            .as_ref()
            .unwrap()
            .writes
            .contains(&format!("{}/.ssh/authorized_keys", t.home()))
    );
    assert!(!ids(&plain).contains(&"secret-files".to_string()));
}

#[test]
fn a_search_of_a_clean_workspace_is_narrowed_and_one_holding_dotenv_is_a_credential_read() {
    let t = Tree::new();
    let grep = t.bash("grep -rn TODO .");
    let (host, plain) = t.both(&grep);
    assert_eq!(host.decision, Decision::Allow);
    assert_eq!(reads(&host), vec![t.ws()]);
    let w = &walks(&host)[0];
    assert_eq!(
        (w.tree.clone(), w.stopped.clone(), w.narrowed),
        (format!("{}/**", t.ws()), None, true)
    );
    assert_eq!((w.entries, w.folders, w.credentials.len()), (3, 1, 0));
    assert!(reads(&plain).contains(&format!("{}/**", t.ws())));

    t.write("ws/.env", "API_KEY=1\n");
    let (host, _) = t.both(&grep);
    assert_eq!(host.decision, Decision::Deny);
    assert_eq!(
        ids(&host),
        vec!["dev-workflow", "read-only", "secret-files"]
    );
    assert!(reads(&host).contains(&format!("{}/.env", t.ws())));
    // rg skips hidden names unless told otherwise.
    let (rg, _) = t.both(&t.bash("rg TODO"));
    assert_eq!(rg.decision, Decision::Allow);
    assert!(walks(&rg)[0].skips_hidden);
    let (rg_all, _) = t.both(&t.bash("rg -uu TODO"));
    assert_eq!(rg_all.decision, Decision::Deny);
    assert!(ids(&rg_all).contains(&"secret-files".to_string()));
}

#[test]
fn searches_limited_to_code_and_agent_tools_walk_with_their_filter() {
    let t = Tree::new();
    t.write("ws/web/app.ts", "// TODO\n");
    t.write("ws/web/credentials.json", "{}");
    let cases = [
        (t.bash("rg -g '*.ts' TODO"), Decision::Allow),
        (t.bash("rg -g '*.json' TODO"), Decision::Deny),
        (
            t.call(
                "Grep",
                json!({"pattern": "TODO", "glob": "*.ts"}),
                "claude-code",
            ),
            Decision::Allow,
        ),
        (
            t.call(
                "Grep",
                json!({"pattern": "TODO", "glob": "*.json"}),
                "claude-code",
            ),
            Decision::Deny,
        ),
    ];
    for (call, want) in cases {
        let (host, _) = t.both(&call);
        assert_eq!(host.decision, want, "{}", call.args);
        assert_eq!(
            ids(&host).contains(&"secret-files".to_string()),
            want == Decision::Deny,
            "{}",
            call.args
        );
    }
    // A Glob lists names: the credential it reaches is a listing, not a read.
    let (glob, _) = t.both(&t.call("Glob", json!({"pattern": "**/*.json"}), "claude-code"));
    let fx = glob.effects.as_ref().unwrap();
    assert!(
        fx.lists
            .contains(&format!("{}/web/credentials.json", t.ws()))
    );
    assert!(fx.reads.is_empty());
    assert_eq!(glob.decision, Decision::Allow);
}

#[test]
fn a_search_in_a_credential_folder_reaches_its_files() {
    let t = Tree::new();
    let call = Call {
        session: Session {
            workspace: t.home(),
            ..Session::default()
        },
        ..t.bash("cd .ssh && rg -uu .")
    };
    let (host, _) = t.both(&call);
    assert_eq!(host.decision, Decision::Deny);
    assert!(reads(&host).contains(&format!("{}/.ssh/id_rsa", t.home())));
}

#[test]
fn link_loops_proc_and_device_links_fifos_and_sockets_are_classified_never_opened() {
    let t = Tree::new();
    t.link("loop-b", "ws/loop-a");
    t.link("loop-a", "ws/loop-b");
    t.link(".", "ws/src/self");
    t.link("/proc/self/environ", "ws/environ");
    t.link("/dev/zero", "ws/zero");
    // A FIFO named like a credential: opening it would block forever.
    let fifo = t.path("ws/.env");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let _socket = std::os::unix::net::UnixListener::bind(t.path("ws/agent.sock")).unwrap();
    let started = Instant::now();
    let (host, _) = t.both(&t.bash("grep -r TODO ."));
    assert!(started.elapsed() < Duration::from_secs(20));
    let r = reads(&host);
    assert!(r.contains(&format!("{}/.env", t.ws())), "{r:?}");
    assert!(r.contains(&"/proc/self/environ".to_string()), "{r:?}");
    assert!(r.contains(&"/dev/zero".to_string()), "{r:?}");
    // The link to its own folder reads that tree again, unwalked.
    assert!(r.contains(&format!("{}/src/**", t.ws())), "{r:?}");
    let w = &walks(&host)[0];
    assert_eq!(w.stopped, None);
    assert_eq!(w.links, 5);
    assert_eq!(host.decision, Decision::Deny);
    assert!(ids(&host).contains(&"secret-files".to_string()));
    // The loop itself, read by name, resolves to nothing and says why.
    let (cat, _) = t.both(&t.bash("cat loop-a"));
    let g = cat.effects.as_ref().unwrap().grounding.clone().unwrap();
    assert!(!g.links[0].resolved);
    assert!(g.links[0].reaches.contains("loop"), "{:?}", g.links);
}

#[test]
fn a_tree_past_the_entry_bound_or_the_time_bound_keeps_its_over_approximation() {
    let t = Tree::new();
    for i in 0..200 {
        t.write(&format!("ws/gen/f{i}.txt"), "");
    }
    t.write("ws/gen/zz/.env", "K=1");
    let small = Host {
        max_entries: 50,
        ..roomy()
    };
    let call = t.bash("grep -r TODO .");
    let bounded = t.registry(Some(small)).explain(&call);
    let plain = t.registry(None).explain(&call);
    let w = &walks(&bounded)[0];
    assert_eq!(
        w.stopped.as_deref(),
        Some("the bound of 50 entries was reached")
    );
    assert!(!w.narrowed);
    assert_eq!(w.entries, 50);
    assert!(reads(&bounded).contains(&format!("{}/**", t.ws())));
    // What it did not see, it decides as without the host.
    assert!(bounded.decision >= plain.decision);

    let no_time = Host {
        max_time: Duration::ZERO,
        ..Host::default()
    };
    let timed = t.registry(Some(no_time)).explain(&call);
    let w = &walks(&timed)[0];
    assert_eq!(
        w.stopped.as_deref(),
        Some("the time bound of 0 ms was reached")
    );
    assert!(reads(&timed).contains(&format!("{}/**", t.ws())));
    // Literal paths are resolved whatever the time (their count bounds
    // them): a busy machine does not make a read of one workspace file
    // "could reach any file", which would deny it.
    t.write("ws/README.md", "hello");
    let one = t.bash("cat README.md");
    let busy = t.registry(Some(no_time)).explain(&one);
    assert!(
        !reads(&busy).iter().any(|r| r == "/**"),
        "{:?}",
        reads(&busy)
    );
    assert_eq!(
        busy.decision,
        t.registry(Some(roomy())).explain(&one).decision
    );
    assert_eq!(busy.decision, Decision::Allow);

    let reached = Host {
        max_reached: 2,
        ..roomy()
    };
    for i in 0..5 {
        t.write(&format!("ws/k{i}.pem"), "");
    }
    let capped = t.registry(Some(reached)).explain(&call);
    let w = &walks(&capped)[0];
    assert!(w.stopped.as_deref().unwrap().starts_with("more than 2"));
    assert!(reads(&capped).contains(&format!("{}/**", t.ws())));
    assert_eq!(capped.decision, Decision::Deny);
}

#[test]
fn a_folder_the_user_may_not_read_stops_the_walk() {
    let t = Tree::new();
    t.write("ws/locked/.env", "K=1");
    std::fs::set_permissions(t.path("ws/locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // As root every folder is readable: decide as another user through the CLI.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zero-policy"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    cmd.args(["explain", "--host", "--format", "json", "--tool", "bash"])
        .args(["--args", r#"{"command":"grep -r TODO ."}"#])
        .args(["--session", &format!("workspace={}", t.ws())])
        .arg(root.join("policies/default.yaml"))
        .arg(root.join("manifests"))
        .arg(t.path("settings.yaml"))
        .current_dir(t.path("ws"))
        .env("HOME", t.home())
        .env_remove("ZERO_POLICY_PATH");
    if nix::unistd::geteuid().is_root() {
        std::os::unix::process::CommandExt::uid(&mut cmd, 65534);
        std::os::unix::process::CommandExt::gid(&mut cmd, 65534);
    }
    let out = cmd.output().unwrap();
    std::fs::set_permissions(t.path("ws/locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let walk = &v["grounding"]["walks"][0];
    assert_eq!(
        walk["stopped"],
        json!(format!(
            "`{}/locked` cannot be read: permission denied",
            t.ws()
        ))
    );
    assert_eq!(walk["narrowed"], json!(false));
    assert!(
        v["effects"]["reads"]
            .as_array()
            .unwrap()
            .contains(&json!(format!("{}/**", t.ws())))
    );
}

#[test]
fn a_tree_changing_during_the_walk_is_bounded_and_never_loses_what_stayed() {
    let t = Tree::new();
    t.write("ws/.env", "K=1");
    let churn = t.path("ws/churn");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = {
        let stop = stop.clone();
        let churn = churn.clone();
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let d = churn.join(format!("d{}", i % 16));
                let _ = std::fs::create_dir_all(d.join("x/y"));
                let _ = std::fs::write(d.join("x/y/f.txt"), "");
                let _ = std::fs::remove_dir_all(churn.join(format!("d{}", (i + 8) % 16)));
                i += 1;
            }
        })
    };
    let reg = t.registry(Some(roomy()));
    let call = t.bash("grep -r TODO .");
    for _ in 0..30 {
        let ev = reg.explain(&call);
        let w = &walks(&ev)[0];
        let r = reads(&ev);
        match &w.stopped {
            None => assert!(r.contains(&format!("{}/.env", t.ws())), "{r:?}"),
            Some(_) => assert!(r.contains(&format!("{}/**", t.ws())), "{r:?}"),
        }
        assert_eq!(ev.decision, Decision::Deny);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    worker.join().unwrap();
}

#[test]
fn a_call_that_changes_the_tree_first_is_not_narrowed() {
    let t = Tree::new();
    let (host, _) = t.both(&t.bash("touch notes.txt && grep -r TODO ."));
    let w = &walks(&host)[0];
    assert!(
        w.stopped
            .as_deref()
            .unwrap()
            .starts_with("not walked: the call writes"),
        "{w:?}"
    );
    assert!(reads(&host).contains(&format!("{}/**", t.ws())));
}

#[test]
fn the_folder_case_is_kept_on_a_case_sensitive_volume() {
    let t = Tree::new();
    t.write("ws/Notes.md", "");
    let (host, _) = t.both(&t.bash("cat Notes.md"));
    let g = host.effects.as_ref().unwrap().grounding.clone().unwrap();
    // `notes.md` is another file here: nothing is folded.
    assert_eq!(g.folded, Vec::<String>::new());
    assert_eq!(reads(&host), vec![format!("{}/Notes.md", t.ws())]);
}

/// Runs `zero-policy hook claude-code` on one event in the workspace.
fn hook(t: &Tree, tool: &str, input: Value) -> Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["hook", "claude-code"])
        .arg(root.join("policies"))
        .arg(root.join("manifests"))
        .arg(t.path("settings.yaml"))
        .current_dir(t.path("ws"))
        .env("HOME", t.home())
        .env_remove("ZERO_POLICY_PATH")
        .env_remove("ZERO_POLICY_BUNDLE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let event = json!({
        "session_id": "s1",
        "cwd": t.ws(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hook_decision(v: &Value) -> String {
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_claude_code_hook_denies_a_linked_key_and_allows_a_clean_search() {
    let t = Tree::new();
    t.mkdir("ws/docs");
    t.link(t.path("home/.ssh/id_rsa"), "ws/docs/key");
    let read = hook(
        &t,
        "Read",
        json!({"file_path": format!("{}/docs/key", t.ws())}),
    );
    assert_eq!(hook_decision(&read), "deny", "{read}");
    assert!(
        read["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("credential files")
    );
    std::fs::remove_file(t.path("ws/docs/key")).unwrap();
    let grep = hook(&t, "Grep", json!({"pattern": "TODO"}));
    assert_eq!(hook_decision(&grep), "allow", "{grep}");
    t.write("ws/.env", "K=1");
    let grep = hook(&t, "Bash", json!({"command": "grep -rn TODO ."}));
    assert_eq!(hook_decision(&grep), "deny", "{grep}");
}

/// `explain --host` in human form, the temporary folder's name replaced.
/// The default bounds with time enough that a walk on a loaded machine (a CI
/// runner running the suite on two cores) ends by its entries, not its clock;
/// the time bound has its own test.
fn roomy() -> Host {
    Host {
        max_time: Duration::from_secs(60),
        ..Host::default()
    }
}

fn explain_host(t: &Tree, tool: &str, args: &str, agent: Option<&str>) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zero-policy"));
    cmd.args(["explain", "--host", "--tool", tool, "--args", args])
        .args(["--session", &format!("workspace={}", t.ws())]);
    if let Some(a) = agent {
        cmd.args(["--agent", a]);
    }
    let out = cmd
        .arg(root.join("policies/default.yaml"))
        .arg(root.join("manifests"))
        .arg(t.path("settings.yaml"))
        .current_dir(t.path("ws"))
        .env("HOME", t.home())
        .env("NO_COLOR", "1")
        .env_remove("ZERO_POLICY_PATH")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let tmp = t.dir.path().to_str().unwrap();
    let text = text
        .replace(tmp, "[TMP]")
        .replace(&root.display().to_string(), "[REPO]");
    // Policy lines move as the policy grows; the rule ids say which rule.
    let text = regex::Regex::new(r"\.yaml:\d+")
        .unwrap()
        .replace_all(&text, ".yaml:[LINE]");
    regex::Regex::new(r"none of \d+")
        .unwrap()
        .replace_all(&text, "none of [N]")
        .into_owned()
}

#[test]
fn explain_host_shows_links_and_walks() {
    let t = Tree::new();
    t.mkdir("ws/docs");
    t.link(t.path("home/.ssh/id_rsa"), "ws/docs/key");
    t.write("ws/.env", "K=1");
    insta::assert_snapshot!(explain_host(
        &t,
        "bash",
        r#"{"command":"grep -rn TODO . && cat docs/key"}"#,
        None
    ));
    let small = Tree::new();
    for i in 0..3 {
        small.write(&format!("ws/lib/m{i}.ts"), "");
    }
    insta::assert_snapshot!(explain_host(
        &small,
        "Glob",
        r#"{"pattern":"**/*.ts"}"#,
        Some("claude-code")
    ));
}

#[test]
fn the_walk_time_is_a_setting() {
    let t = Tree::new();
    // 300 folders of 10 files: more than a millisecond's walk.
    for d in 0..300 {
        for f in 0..10 {
            t.write(&format!("ws/gen/d{d}/f{f}.txt"), "");
        }
    }
    t.write(
        "settings.yaml",
        &format!(
            "version: 1\nsettings:\n  paths:\n    home: {}\n    walk_time: 1ms\n",
            t.path("home").display()
        ),
    );
    let text = explain_host(&t, "bash", r#"{"command":"grep -rn TODO ."}"#, None);
    assert!(
        text.contains("the time bound of 1 ms was reached"),
        "{text}"
    );
    t.write(
        "settings.yaml",
        "version: 1\nsettings:\n  paths:\n    walk_time: soon\n",
    );
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["lint"])
        .arg(root.join("policies/default.yaml"))
        .arg(root.join("manifests"))
        .arg(t.path("settings.yaml"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("settings.yaml:4:16"), "{text}");
    assert!(text.contains("soon"), "{text}");
}
