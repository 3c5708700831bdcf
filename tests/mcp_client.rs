//! Integration tests of the MCP client layer (`zero_policy::mcp::client`) against
//! real servers, no mocks: `@modelcontextprotocol/server-everything` (node) over
//! stdio, streamable HTTP and SSE, and the Python fixtures in
//! `tests/fixtures/mcp/` (PyPI `mcp`).
//!
//! The servers are installed by `.ci/mcp-deps.sh` into `$ZP_TEST_DEPS` (default
//! `target/test-deps`); without them these tests fail, telling you to run it.
//! `cargo test --test mcp_client -- --nocapture` also prints connect and call times.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{everything_js, fixture, python};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use zero_policy::mcp::client::{
    CallOutput, ConnectSpec, McpError, RemoteTool, ToolClient, TransportSpec, connect,
};

/// Bound for connects that should succeed (generous: CI has two busy cores).
const OK_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------- locating things

fn stdio(server: &str, command: String, args: Vec<String>, timeout: Duration) -> ConnectSpec {
    ConnectSpec {
        server: server.to_string(),
        transport: TransportSpec::Stdio {
            command,
            args,
            env: vec![],
            cwd: None,
        },
        timeout,
    }
}

fn py(script: &str, args: &[&str], timeout: Duration) -> ConnectSpec {
    let mut argv = vec![fixture(script)];
    argv.extend(args.iter().map(|a| a.to_string()));
    stdio(script.trim_end_matches(".py"), python(), argv, timeout)
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

fn names(tools: &[RemoteTool]) -> Vec<&str> {
    tools.iter().filter_map(|t| t.name.as_deref()).collect()
}

async fn connect_timed(spec: &ConnectSpec) -> Box<dyn ToolClient> {
    let start = Instant::now();
    let client = connect(spec)
        .await
        .unwrap_or_else(|e| panic!("connect to {} failed: {e}", spec.server));
    eprintln!("timing: connect {}: {:?}", spec.server, start.elapsed());
    client
}

async fn call(client: &dyn ToolClient, tool: &str, arguments: Value) -> CallOutput {
    client
        .call_tool(tool, args(arguments))
        .await
        .unwrap_or_else(|e| panic!("calling {tool} failed: {e}"))
}

/// Gone means no /proc entry at all: neither running nor an unreaped zombie.
fn gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gone(pid)
}

// ---------------------------------------------------------------- network servers

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// A server process started by a test: killed and reaped when dropped.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` and waits until it accepts connections on 127.0.0.1:`port`.
async fn start_listening(mut command: Command, port: u16) -> Background {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start the server");
    let mut server = Background(child);
    let deadline = Instant::now() + OK_TIMEOUT;
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("the server exited before listening on {port}: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "the server never listened on {port}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn everything_listening(mode: &str) -> (Background, u16) {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(everything_js())
        .arg(mode)
        .env("PORT", port.to_string());
    (start_listening(command, port).await, port)
}

// ---------------------------------------------------------------- server-everything

#[tokio::test]
async fn everything_over_stdio_lists_echoes_and_passes_env() {
    let mut spec = stdio(
        "everything",
        "node".into(),
        vec![everything_js(), "stdio".into()],
        OK_TIMEOUT,
    );
    if let TransportSpec::Stdio { env, .. } = &mut spec.transport {
        env.push(("ZP_TEST_MARKER".into(), "marker-4f1c".into()));
    }
    let client = connect_timed(&spec).await;

    let tools = client.list_tools().await.unwrap();
    let listed = names(&tools);
    assert!(tools.len() >= 10, "only {} tools: {listed:?}", tools.len());
    assert!(
        listed.contains(&"echo") && listed.contains(&"get-env"),
        "{listed:?}"
    );
    let get_env = tools
        .iter()
        .find(|t| t.name.as_deref() == Some("get-env"))
        .unwrap();
    assert_eq!(
        get_env.annotations.as_ref().unwrap()["readOnlyHint"],
        json!(true)
    );

    let out = call(client.as_ref(), "echo", json!({"message": "hello mcp"})).await;
    assert_eq!(out.text, "Echo: hello mcp");
    assert!(!out.is_error && out.non_text.is_empty());

    // The configured variable is added; the inherited environment is kept.
    let out = call(client.as_ref(), "get-env", json!({})).await;
    let env: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(env["ZP_TEST_MARKER"], json!("marker-4f1c"));
    assert!(env.get("PATH").is_some(), "PATH was not inherited");

    // A tool call round trip over stdio.
    let rounds = 20;
    let start = Instant::now();
    for i in 0..rounds {
        let out = call(client.as_ref(), "echo", json!({"message": i.to_string()})).await;
        assert_eq!(out.text, format!("Echo: {i}"));
    }
    eprintln!(
        "timing: echo round trip over stdio (everything): {:?}",
        start.elapsed() / rounds
    );

    let unknown = client.call_tool("no-such-tool", Map::new()).await;
    match unknown {
        Err(McpError::Call { tool, .. }) => assert_eq!(tool, "no-such-tool"),
        Ok(out) => assert!(out.is_error, "an unknown tool succeeded: {out:?}"),
        Err(other) => panic!("unexpected error for an unknown tool: {other}"),
    }
    client.close().await;
}

#[tokio::test]
async fn everything_over_streamable_http_lists_and_echoes() {
    let (server, port) = everything_listening("streamableHttp").await;
    let spec = ConnectSpec {
        server: "everything-http".into(),
        transport: TransportSpec::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![("X-Zero-Policy-Test".into(), "1".into())],
            auth: None,
        },
        timeout: OK_TIMEOUT,
    };
    let client = connect_timed(&spec).await;
    let tools = client.list_tools().await.unwrap();
    assert!(tools.len() >= 10 && names(&tools).contains(&"echo"));
    let out = call(client.as_ref(), "echo", json!({"message": "over http"})).await;
    assert_eq!(out.text, "Echo: over http");
    // The server goes away: the next call is closed, not retried elsewhere.
    drop(server);
    let gone = client
        .call_tool("echo", args(json!({"message": "x"})))
        .await;
    match &gone {
        Err(e @ McpError::Closed { .. }) => eprintln!("after the server died: {e}"),
        other => panic!("expected closed, got {other:?}"),
    }
    client.close().await;
}

#[tokio::test]
async fn everything_over_sse_lists_and_echoes() {
    let (_server, port) = everything_listening("sse").await;
    let spec = ConnectSpec {
        server: "everything-sse".into(),
        transport: TransportSpec::Sse {
            url: format!("http://127.0.0.1:{port}/sse"),
            headers: vec![],
        },
        timeout: OK_TIMEOUT,
    };
    let client = connect_timed(&spec).await;
    let tools = client.list_tools().await.unwrap();
    assert!(tools.len() >= 10 && names(&tools).contains(&"echo"));
    let out = call(client.as_ref(), "echo", json!({"message": "over sse"})).await;
    assert_eq!(out.text, "Echo: over sse");
    client.close().await;
}

// ---------------------------------------------------------------- python fixtures

#[tokio::test]
async fn python_normal_calls_echo_add_fail_and_more() {
    let mut spec = py("normal.py", &[], OK_TIMEOUT);
    if let TransportSpec::Stdio { env, .. } = &mut spec.transport {
        env.push(("ZP_FIXTURE_VALUE".into(), "from-the-manifest".into()));
    }
    let client = connect_timed(&spec).await;
    let tools = client.list_tools().await.unwrap();
    let listed = names(&tools);
    for expected in [
        "echo",
        "add",
        "fail",
        "leak",
        "env",
        "image",
        "annotated",
        "pid",
        "die",
    ] {
        assert!(
            listed.contains(&expected),
            "{expected} missing from {listed:?}"
        );
    }
    let echo = tools
        .iter()
        .find(|t| t.name.as_deref() == Some("echo"))
        .unwrap();
    assert_eq!(
        echo.description.as_deref(),
        Some("Return the message unchanged.")
    );
    assert_eq!(
        echo.input_schema["properties"]["message"]["type"],
        json!("string")
    );
    assert_eq!(echo.annotations, None);
    let annotated = tools
        .iter()
        .find(|t| t.name.as_deref() == Some("annotated"))
        .unwrap();
    let hints = annotated.annotations.as_ref().unwrap();
    assert_eq!(
        (&hints["readOnlyHint"], &hints["destructiveHint"]),
        (&json!(true), &json!(false))
    );

    assert_eq!(
        call(client.as_ref(), "echo", json!({"message": "hi"}))
            .await
            .text,
        "hi"
    );
    let sum = call(client.as_ref(), "add", json!({"a": 2, "b": 3})).await;
    assert_eq!((sum.text.as_str(), sum.is_error), ("5", false));

    let fail = call(client.as_ref(), "fail", json!({})).await;
    assert!(fail.is_error, "{fail:?}");
    assert!(fail.text.contains("fail always fails"), "{fail:?}");

    let leak = call(client.as_ref(), "leak", json!({})).await;
    assert!(
        leak.text
            .contains(&format!("sk-{}", "Abc123XyZ0".repeat(4)))
    );

    let env = call(client.as_ref(), "env", json!({"name": "ZP_FIXTURE_VALUE"})).await;
    assert_eq!(env.text, "from-the-manifest");

    let image = call(client.as_ref(), "image", json!({})).await;
    assert_eq!(
        (image.text.as_str(), image.non_text.clone()),
        ("", vec!["image (image/png, 4 bytes)".to_string()])
    );

    // Arguments the tool's schema rejects come back as a tool error, not a crash.
    let bad = client.call_tool("add", args(json!({"a": "x"}))).await;
    assert!(
        matches!(&bad, Ok(out) if out.is_error) || matches!(&bad, Err(McpError::Call { .. })),
        "{bad:?}"
    );
    client.close().await;
}

#[tokio::test]
async fn never_init_times_out_within_its_bound_and_is_reaped() {
    let timeout = Duration::from_millis(1500);
    let spec = py("never_init.py", &[], timeout);
    let start = Instant::now();
    let result = connect(&spec).await;
    let elapsed = start.elapsed();
    let err = result
        .err()
        .expect("connect to a server that never initializes succeeded");
    assert!(
        elapsed <= timeout + Duration::from_secs(1),
        "took {elapsed:?}"
    );
    let McpError::Timeout { operation, .. } = &err else {
        panic!("expected a timeout, got: {err}");
    };
    assert_eq!(*operation, "initialize");
    let message = err.to_string();
    assert!(
        message.contains("never_init.py: pid"),
        "no stderr in: {message}"
    );
    // The fixture wrote its pid to stderr: the process must be gone, not a zombie.
    let pid: u32 = message
        .split("pid ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|pid| pid.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in: {message}"));
    assert!(gone(pid), "pid {pid} survived the failed connect");
}

#[tokio::test]
async fn exit_on_list_is_reported_with_exit_status_and_stderr() {
    let client = connect_timed(&py("exit_on_list.py", &[], OK_TIMEOUT)).await;
    let err = client
        .list_tools()
        .await
        .expect_err("the listing succeeded");
    assert!(
        matches!(err, McpError::Closed { .. } | McpError::List { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("asked for tools/list, exiting"),
        "no stderr in: {message}"
    );
    assert!(
        message.contains("exit status: 3"),
        "no exit status in: {message}"
    );
    // No silent restart: the next request fails too, as closed.
    let again = client.call_tool("anything", Map::new()).await;
    assert!(matches!(again, Err(McpError::Closed { .. })), "{again:?}");
    client.close().await;
}

#[tokio::test]
async fn a_server_dying_mid_call_is_closed_not_restarted() {
    let client = connect_timed(&py("normal.py", &[], OK_TIMEOUT)).await;
    let pid: u32 = call(client.as_ref(), "pid", json!({}))
        .await
        .text
        .parse()
        .unwrap();
    let err = client
        .call_tool("die", Map::new())
        .await
        .expect_err("die returned");
    let McpError::Closed { message, .. } = &err else {
        panic!("expected closed, got: {err}");
    };
    assert!(message.contains("dying on request"), "{message}");
    assert!(message.contains("exit status: 7"), "{message}");
    let again = client
        .call_tool("echo", args(json!({"message": "x"})))
        .await;
    assert!(matches!(again, Err(McpError::Closed { .. })), "{again:?}");
    client.close().await;
    assert!(gone(pid), "pid {pid} left behind");
}

#[tokio::test]
async fn nameless_tools_come_through_as_none() {
    for mode in ["missing", "empty"] {
        let client = connect_timed(&py("nameless.py", &[mode], OK_TIMEOUT)).await;
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.len(), 2, "{mode}: {tools:?}");
        assert_eq!(tools[0].name.as_deref(), Some("fine"));
        assert_eq!(tools[1].name, None, "{mode}");
        assert_eq!(tools[1].description.as_deref(), Some("a tool with no name"));
        client.close().await;
    }
}

#[tokio::test]
async fn colliding_names_are_listed_verbatim() {
    let client = connect_timed(&py("collide.py", &[], OK_TIMEOUT)).await;
    let tools = client.list_tools().await.unwrap();
    let mut listed = names(&tools);
    listed.sort();
    assert_eq!(listed, ["Echo", "echo"]);
    assert_eq!(
        call(client.as_ref(), "Echo", json!({"message": "a"}))
            .await
            .text,
        "A"
    );
    client.close().await;
}

#[tokio::test]
async fn many_tools_are_listed_across_pages() {
    let client = connect_timed(&py("many.py", &[], OK_TIMEOUT)).await;
    let start = Instant::now();
    let tools = client.list_tools().await.unwrap();
    eprintln!("timing: list 5,000 tools (5 pages): {:?}", start.elapsed());
    assert_eq!(tools.len(), 5000);
    let listed = names(&tools);
    assert_eq!((listed[0], listed[4999]), ("tool_0000", "tool_4999"));
    let unique: std::collections::HashSet<_> = listed.iter().collect();
    assert_eq!(unique.len(), 5000);
    client.close().await;
}

#[tokio::test]
async fn python_over_sse_lists_and_calls() {
    let port = free_port();
    let mut command = Command::new(python());
    command.arg(fixture("sse_server.py")).arg(port.to_string());
    let server = start_listening(command, port).await;
    let spec = ConnectSpec {
        server: "python-sse".into(),
        transport: TransportSpec::Sse {
            url: format!("http://127.0.0.1:{port}/sse"),
            headers: vec![("Authorization".into(), "Bearer not-a-real-token".into())],
        },
        timeout: OK_TIMEOUT,
    };
    let client = connect_timed(&spec).await;
    let mut listed: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .filter_map(|t| t.name)
        .collect();
    listed.sort();
    assert_eq!(listed, ["add", "echo"]);
    assert_eq!(
        call(client.as_ref(), "echo", json!({"message": "sse"}))
            .await
            .text,
        "sse"
    );
    assert_eq!(
        call(client.as_ref(), "add", json!({"a": 40, "b": 2}))
            .await
            .text,
        "42"
    );
    drop(server);
    let gone = client
        .call_tool("echo", args(json!({"message": "x"})))
        .await;
    match &gone {
        Err(e @ McpError::Closed { .. }) => eprintln!("after the server died: {e}"),
        other => panic!("expected closed, got {other:?}"),
    }
    client.close().await;
}

// ---------------------------------------------------------------- process lifetime

#[tokio::test]
async fn close_reaps_the_server() {
    let client = connect_timed(&py("normal.py", &[], OK_TIMEOUT)).await;
    let pid: u32 = call(client.as_ref(), "pid", json!({}))
        .await
        .text
        .parse()
        .unwrap();
    assert!(!gone(pid));
    client.close().await;
    assert!(gone(pid), "pid {pid} is still there after close");
}

#[tokio::test]
async fn drop_kills_and_reaps_the_server() {
    let client = connect_timed(&py("normal.py", &[], OK_TIMEOUT)).await;
    let pid: u32 = call(client.as_ref(), "pid", json!({}))
        .await
        .text
        .parse()
        .unwrap();
    drop(client);
    assert!(
        wait_gone(pid, Duration::from_secs(5)).await,
        "pid {pid} is still there after drop"
    );
}

#[tokio::test]
async fn a_server_crashing_at_start_reports_its_stderr() {
    let spec = stdio(
        "crash",
        python(),
        vec![
            "-c".into(),
            "import sys; sys.stderr.write('boom: bad config\\n'); sys.exit(2)".into(),
        ],
        OK_TIMEOUT,
    );
    let err = connect(&spec)
        .await
        .err()
        .expect("a crashing server connected");
    let message = err.to_string();
    assert!(matches!(err, McpError::Connect { .. }), "{message}");
    assert!(
        message.contains("server exited during initialize"),
        "{message}"
    );
    assert!(message.contains("exit status: 2"), "{message}");
    assert!(message.contains("boom: bad config"), "{message}");
}

#[tokio::test]
async fn a_missing_command_is_a_connect_error() {
    let spec = stdio(
        "missing",
        "/nonexistent/zp-no-such-server".into(),
        vec![],
        OK_TIMEOUT,
    );
    let err = connect(&spec)
        .await
        .err()
        .expect("a missing command connected");
    assert!(matches!(err, McpError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("cannot start"), "{err}");
    assert_eq!(err.server(), "missing");
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error_or_timeout() {
    let port = free_port();
    for transport in [
        TransportSpec::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![],
            auth: None,
        },
        TransportSpec::Sse {
            url: format!("http://127.0.0.1:{port}/sse"),
            headers: vec![],
        },
    ] {
        let spec = ConnectSpec {
            server: "nobody".into(),
            transport,
            timeout: Duration::from_secs(3),
        };
        let err = connect(&spec).await.err().expect("connected to nothing");
        assert!(
            matches!(err, McpError::Connect { .. } | McpError::Timeout { .. }),
            "{err}"
        );
    }
}
