//! MCP servers behind the registry, with real servers: registration (concurrent
//! connect, serial all-or-none commit), skip reasons, host-imposed safety,
//! dispatch through the one path, scrubbing, and no process left behind.
//!
//! Needs `.ci/mcp-deps.sh` (server-everything from npm, a venv with PyPI `mcp`).
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

mod common;

use common::{everything_js, fixture, python};
use std::path::{Path, PathBuf};
use std::process::Command;

use zero_policy::dispatch::{Call, Session};
use zero_policy::loader;
use zero_policy::mcp::register::register_servers;
use zero_policy::registry::Registry;

/// The tests here start many server processes; run them one at a time so that a
/// timing bound measures registration, not a neighbour's load.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A unique marker passed to every server this test starts, to find leftovers.
fn marker(test: &str) -> String {
    format!("zp-marker-{test}-{}", std::process::id())
}

/// Processes whose command line holds `marker`.
fn leftovers(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let zombie = std::fs::read_to_string(entry.path().join("stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(false);
            if cmd.contains(marker) && !zombie {
                found.push(format!("{pid}: {cmd}"));
            }
        }
    }
    found
}

fn everything_server(name: &str, marker: &str, timeout: &str, extra: &str) -> String {
    format!(
        "  - name: {name}\n    transport: stdio\n    command: node\n    args: [\"{}\", stdio, \"{marker}\"]\n    connect_timeout: {timeout}\n{extra}",
        everything_js()
    )
}

fn python_server(name: &str, script: &str, marker: &str, timeout: &str, args: &[&str]) -> String {
    let mut argv = vec![format!("\"{}\"", fixture(script))];
    argv.extend(args.iter().map(|a| format!("\"{a}\"")));
    argv.push(format!("\"{marker}\""));
    format!(
        "  - name: {name}\n    transport: stdio\n    command: \"{}\"\n    args: [{}]\n    connect_timeout: {timeout}\n",
        python(),
        argv.join(", ")
    )
}

fn write_manifest(dir: &Path, servers: &[String], extra: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("servers.yaml");
    std::fs::write(
        &path,
        format!("version: 1\nservers:\n{}{extra}", servers.concat()),
    )
    .unwrap();
    path
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zp-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn load(path: &Path) -> Registry {
    let loaded = loader::load_paths(&[path.to_path_buf()]).unwrap();
    let policy = loaded
        .policy
        .unwrap_or_else(|| panic!("{:#?}", loaded.diagnostics));
    Registry::new(&policy).unwrap()
}

const EVERYTHING_SAFETY: &str = "    safety: {side_effect: network, permission: prompt, reason: third-party server}\n    overrides:\n      - tools: [echo, get-sum]\n        safety: {side_effect: none, permission: allow, reason: harmless echo}\n      - tools: [get-env]\n        safety: {side_effect: read, permission: deny, reason: dumps the environment}\n";

#[test]
fn tools_connect_json_lists_everything_and_skips_broken_and_hanging_servers() {
    let _serial = serial();
    let m = marker("cli");
    let dir = tmp("cli");
    let manifest = write_manifest(
        &dir,
        &[
            everything_server("everything", &m, "30s", EVERYTHING_SAFETY),
            python_server("broken", "exit_on_list.py", &m, "30s", &[]),
            python_server("hanging", "never_init.py", &m, "2s", &[]),
        ],
        "",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["tools", "--connect", "--format", "json"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = v["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.len() >= 10, "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("mcp__everything__")),
        "{names:?}"
    );
    let echo = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo["server"], "everything");
    assert_eq!(echo["remote_name"], "echo");
    assert_eq!(echo["permission"], "allow");
    assert_eq!(echo["side_effect"], "none");
    assert_eq!(echo["scope"], "read_only");
    assert_eq!(echo["deferred"], true);
    // The server's own hint is kept, untrusted.
    assert_eq!(echo["hints"]["readOnlyHint"], true);
    let env = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__get-env")
        .unwrap();
    assert_eq!(env["permission"], "deny");
    let other = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__trigger-long-running-operation")
        .unwrap();
    assert_eq!(other["permission"], "prompt");
    assert_eq!(other["side_effect"], "network");

    let skipped = v["skipped_servers"].as_array().unwrap();
    let reasons: Vec<(&str, &str)> = skipped
        .iter()
        .map(|s| (s["server"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(reasons, [("broken", "list-failed"), ("hanging", "timeout")]);
    assert!(
        skipped[0]["detail"]
            .as_str()
            .unwrap()
            .contains("exit status: 3"),
        "{skipped:?}"
    );
    assert!(leftovers(&m).is_empty(), "left behind: {:?}", leftovers(&m));
}

#[test]
fn explain_connect_shows_the_host_imposed_permission_and_the_override() {
    let _serial = serial();
    let m = marker("explain");
    let dir = tmp("explain");
    let manifest = write_manifest(
        &dir,
        &[everything_server(
            "everything",
            &m,
            "30s",
            EVERYTHING_SAFETY,
        )],
        "",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args([
            "explain",
            "--connect",
            "--tool",
            "mcp__everything__echo",
            "--args",
            r#"{"message":"hi"}"#,
        ])
        .arg(&manifest)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text.lines().find(|l| l.contains(" permission ")).unwrap();
    let written = format!("{}:10", manifest.display()); // the line of `- tools: [echo, get-sum]`
    assert!(
        line.contains("static permission `allow`")
            && line.contains(&written)
            && line.contains("override"),
        "{text}"
    );
    assert!(text.contains("hints    {"), "{text}");
    assert!(text.contains("decision allow"), "{text}");
    assert!(leftovers(&m).is_empty());
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn session() -> Session {
    Session {
        workspace: "/tmp".into(),
        ..Session::default()
    }
}

#[test]
fn calls_go_through_the_dispatch_path_and_leave_scrubbed() {
    let _serial = serial();
    let m = marker("dispatch");
    let dir = tmp("dispatch");
    let allow = "    safety: {side_effect: none, permission: allow, reason: test}\n";
    let servers = vec![
        everything_server("everything", &m, "30s", allow),
        python_server("py", "normal.py", &m, "30s", &[]) + allow,
    ];
    let policy = "rules:\n  - id: no-shouting\n    tools: [\"mcp__*\"]\n    when: 'has(args.message) && args.message == \"STOP\"'\n    action: deny\n    reason: no shouting\n";
    let manifest = write_manifest(&dir, &servers, policy);
    let mut registry = load(&manifest);
    let rt = runtime();
    let conns = rt.block_on(register_servers(&mut registry, &|_| {}));
    assert!(
        registry.skipped_servers().is_empty(),
        "{:?}",
        registry.skipped_servers()
    );

    let call = |tool: &str, args: serde_json::Value| Call {
        tool: tool.into(),
        args,
        session: session(),
        confined: false,
    };
    let echo = rt.block_on(registry.dispatch(
        &call(
            "mcp__everything__echo",
            serde_json::json!({"message": "hi"}),
        ),
        None,
    ));
    assert_eq!(echo.evaluation.decision, zero_policy::Decision::Allow);
    assert!(
        echo.result.as_ref().unwrap().text.contains("hi"),
        "{echo:?}"
    );

    // A sandbox rule over `mcp__*` denies, and the server is never called.
    let stop = rt.block_on(registry.dispatch(
        &call(
            "mcp__everything__echo",
            serde_json::json!({"message": "STOP"}),
        ),
        None,
    ));
    assert_eq!(stop.evaluation.decision, zero_policy::Decision::Deny);
    assert!(matches!(
        stop.result,
        Err(zero_policy::runtime::ToolError::Denied(_))
    ));

    // Bad arguments are rejected by the server's own inputSchema before any call.
    let bad = rt.block_on(registry.dispatch(
        &call("mcp__everything__echo", serde_json::json!({"message": 5})),
        None,
    ));
    assert_eq!(bad.evaluation.decision, zero_policy::Decision::Reject);

    // The server returns a secret: it leaves as [REDACTED].
    let leak = rt.block_on(registry.dispatch(&call("mcp__py__leak", serde_json::json!({})), None));
    let text = leak.result.unwrap().text;
    assert!(text.contains("[REDACTED]"), "{text}");
    assert!(!text.contains("sk-"), "secret leaked: {text}");

    // isError is the tool's own result, flagged; non-text content is noted,
    // and every block is kept as the server sent it.
    let fail = rt.block_on(registry.dispatch(&call("mcp__py__fail", serde_json::json!({})), None));
    let fail = fail.result.unwrap();
    assert!(fail.is_error, "{fail:?}");
    assert!(fail.text.contains("fail always fails"), "{fail:?}");
    let image =
        rt.block_on(registry.dispatch(&call("mcp__py__image", serde_json::json!({})), None));
    let image = image.result.unwrap();
    assert_eq!(image.notes, ["image (image/png, 4 bytes)"]);
    assert_eq!(
        serde_json::to_value(&image.content).unwrap(),
        serde_json::json!([{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}])
    );

    // A server that dies mid-call gives a clear error, and is not restarted.
    let die = rt.block_on(registry.dispatch(&call("mcp__py__die", serde_json::json!({})), None));
    let err = die.result.unwrap_err().to_string();
    assert!(err.contains("py"), "{err}");
    let again = rt.block_on(registry.dispatch(
        &call("mcp__py__echo", serde_json::json!({"message": "x"})),
        None,
    ));
    assert!(again.result.is_err(), "{again:?}");

    rt.block_on(conns.close());
    assert!(leftovers(&m).is_empty(), "{:?}", leftovers(&m));
}

#[test]
fn every_skip_reason_is_recorded_and_registration_is_deterministic() {
    let _serial = serial();
    let m = marker("skips");
    let dir = tmp("skips");
    let servers = vec![
        everything_server("a-everything", &m, "30s", ""),
        python_server("b-nameless", "nameless.py", &m, "30s", &[]),
        python_server("c-collide", "collide.py", &m, "30s", &[]),
        python_server("d-badschema", "bad_schema.py", &m, "30s", &[]),
        python_server("e-exits", "exit_on_list.py", &m, "30s", &[]),
        python_server("f-hangs", "never_init.py", &m, "2s", &[]),
        format!(
            "  - name: g-missing\n    transport: stdio\n    command: /nonexistent/zp-server\n    args: [\"{m}\"]\n"
        ),
        python_server("h-many", "many.py", &m, "60s", &[]),
    ];
    let manifest = write_manifest(&dir, &servers, "");
    let rt = runtime();
    let mut registry = load(&manifest);
    let conns = rt.block_on(register_servers(&mut registry, &|_| {}));
    let reasons: Vec<(String, String)> = registry
        .skipped_servers()
        .iter()
        .map(|s| (s.server.clone(), s.reason.clone()))
        .collect();
    let want: Vec<(String, String)> = [
        ("b-nameless", "nameless-tool"),
        ("c-collide", "name-conflict"),
        ("d-badschema", "invalid-schema"),
        ("e-exits", "list-failed"),
        ("f-hangs", "timeout"),
        ("g-missing", "connect-failed"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(reasons, want);
    // All or none: nothing of the skipped servers is registered.
    assert!(
        registry
            .tools()
            .all(|t| !t.name.starts_with("mcp__b-nameless__"))
    );
    assert!(
        registry
            .tools()
            .all(|t| !t.name.starts_with("mcp__c-collide__"))
    );
    assert!(
        registry
            .tools()
            .all(|t| !t.name.starts_with("mcp__d-badschema__"))
    );
    let many = registry
        .tools()
        .filter(|t| t.name.starts_with("mcp__h-many__"))
        .count();
    assert_eq!(many, 5_000);
    rt.block_on(conns.close());
    assert!(leftovers(&m).is_empty(), "{:?}", leftovers(&m));
}

#[test]
fn a_hanging_server_does_not_hold_up_the_others_and_runs_are_identical() {
    let _serial = serial();
    let m = marker("determinism");
    let dir = tmp("determinism");
    let servers = vec![
        everything_server("one", &m, "30s", ""),
        everything_server("two", &m, "30s", ""),
        everything_server("three", &m, "30s", ""),
        python_server("zz-hangs", "never_init.py", &m, "2s", &[]),
    ];
    let manifest = write_manifest(&dir, &servers, "");
    let rt = runtime();
    type Outcome = (Vec<String>, Vec<(String, String)>);
    let mut first: Option<Outcome> = None;
    for _ in 0..8 {
        let mut registry = load(&manifest);
        let conns = rt.block_on(register_servers(&mut registry, &|_| {}));
        let names: Vec<String> = registry.tools().map(|t| t.name.clone()).collect();
        let skipped: Vec<(String, String)> = registry
            .skipped_servers()
            .iter()
            .map(|s| (s.server.clone(), s.reason.clone()))
            .collect();
        rt.block_on(conns.close());
        match &first {
            None => first = Some((names, skipped)),
            Some(f) => assert_eq!(f, &(names, skipped)),
        }
    }
    let (names, skipped) = first.unwrap();
    assert_eq!(skipped, [("zz-hangs".to_string(), "timeout".to_string())]);
    assert_eq!(
        names.len(),
        3 * names.iter().filter(|n| n.starts_with("mcp__one__")).count()
    );
    // How long registration waits on a hanging server is measured in
    // benches/mcp.rs, not asserted here: this machine's speed varies.
    assert!(leftovers(&m).is_empty(), "{:?}", leftovers(&m));
}

#[test]
fn a_relax_rule_is_not_applied_to_a_deny_mcp_tool_and_that_is_recorded() {
    let _serial = serial();
    let m = marker("relax");
    let dir = tmp("relax");
    let policy = "relax:\n  - id: trust-everything\n    tools: [\"mcp__everything__*\"]\n    when: 'true'\n    reason: trusted server\n";
    let manifest = write_manifest(
        &dir,
        &[everything_server(
            "everything",
            &m,
            "30s",
            EVERYTHING_SAFETY,
        )],
        policy,
    );
    let rt = runtime();
    let mut registry = load(&manifest);
    let conns = rt.block_on(register_servers(&mut registry, &|_| {}));
    let env = registry.get("mcp__everything__get-env").unwrap();
    assert_eq!(
        env.skipped_relax,
        [(
            "trust-everything".to_string(),
            "the tool's permission is `deny`, which nothing relaxes".to_string()
        )]
    );
    let ev = registry.evaluate(&Call {
        tool: "mcp__everything__get-env".into(),
        args: serde_json::json!({}),
        session: session(),
        confined: false,
    });
    assert_eq!(ev.decision, zero_policy::Decision::Deny);
    // The same rule does relax a prompt tool of the same server.
    let ev = registry.evaluate(&Call {
        tool: "mcp__everything__trigger-long-running-operation".into(),
        args: serde_json::json!({}),
        session: session(),
        confined: false,
    });
    assert_eq!(
        ev.effective_permission,
        Some(zero_policy::Permission::Allow)
    );
    rt.block_on(conns.close());
    assert!(leftovers(&m).is_empty());
}

#[test]
fn test_command_resolves_mcp_cases_offline_and_connected_alike() {
    let _serial = serial();
    let m = marker("testcmd");
    let dir = tmp("testcmd");
    let tests = "tests:\n  - name: echo is allowed by the override\n    call: {tool: mcp__everything__echo, args: {message: hi}}\n    expect: {decision: allow}\n  - name: get-env is denied by the host\n    call: {tool: mcp__everything__get-env, args: {}}\n    expect: {decision: deny}\n";
    let manifest = write_manifest(
        &dir,
        &[everything_server(
            "everything",
            &m,
            "30s",
            EVERYTHING_SAFETY,
        )],
        tests,
    );
    let run = |connect: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_zero-policy"));
        cmd.arg("test");
        if connect {
            cmd.arg("--connect");
        }
        let out = cmd.arg(&manifest).output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    // Without connecting, the calls are resolved from the server's manifest alone.
    let (code, out) = run(false);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out.lines().last(), Some("2 passed, 0 failed"), "{out}");
    let (code, out) = run(true);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out.lines().last(), Some("2 passed, 0 failed"), "{out}");
    assert!(leftovers(&m).is_empty());
}
