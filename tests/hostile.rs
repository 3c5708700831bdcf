//! Hostile input, one case per class (SPEC §10): nothing a file, an argument or
//! a folder holds crashes, hangs or exhausts the binary, and every message is
//! safe to print.
//!
//! Each case runs the real binary under a 1 GiB address-space limit
//! (`prlimit --as`) and a harness timeout that kills it and fails the test;
//! there are no timing asserts. Large inputs are generated here, not committed.

#![cfg(unix)]
#![expect(clippy::expect_used, clippy::panic, reason = "tests")]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_zero-policy");
/// The address-space cap of every run.
const MEMORY_CAP: u64 = 1024 * 1024 * 1024;
/// A run that takes longer is killed and the test fails.
const TIMEOUT: Duration = Duration::from_secs(60);

const MANIFEST: &str = "version: 1
tools:
  - name: bash
    description: Run a shell command.
    scope: shell
    parameters:
      type: object
      properties:
        command: {type: string}
        items: {type: array, items: {type: string}}
      required: [command]
    safety:
      side_effect: shell
      permission: prompt
      reason: runs arbitrary commands
";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A fresh folder for one case.
fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temp folder");
    d
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("a fixture file");
    p
}

/// Runs the binary under the memory cap, feeding `stdin`, killing it at the timeout.
fn run_in(cwd: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Run {
    let mut child = Command::new("prlimit")
        .arg(format!("--as={MEMORY_CAP}"))
        .arg("--")
        .arg(BIN)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit runs the binary");
    let feeder = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().expect("a stdin pipe");
        // The binary may stop reading at its cap: a broken pipe is expected then.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let mut out_pipe = child.stdout.take().expect("a stdout pipe");
    let mut err_pipe = child.stderr.take().expect("a stderr pipe");
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`zero-policy {}` was still running after {TIMEOUT:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = String::from_utf8_lossy(&out.join().expect("stdout")).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().expect("stderr")).into_owned();
    let code = status.code().unwrap_or(-1);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("memory allocation"),
        "`zero-policy {}` crashed: {stderr}",
        args.join(" ")
    );
    assert!(
        (0..=3).contains(&code),
        "`zero-policy {}` died (status {status:?}): {stderr}",
        args.join(" ")
    );
    Run {
        code,
        stdout,
        stderr,
    }
}

fn run(cwd: &Path, args: &[&str]) -> Run {
    run_in(cwd, args, None)
}

/// The codes of `lint --format json`.
fn lint_codes(cwd: &Path, paths: &[&str]) -> (i32, Vec<String>, serde_json::Value) {
    let mut args = vec!["lint", "--format", "json"];
    args.extend_from_slice(paths);
    let r = run(cwd, &args);
    let json: serde_json::Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("lint printed no JSON ({e}): {}{}", r.stdout, r.stderr));
    let codes = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect();
    (r.code, codes, json)
}

fn rule(when: &str) -> String {
    format!(
        "version: 1\nrules:\n  - id: r\n    tools: [bash]\n    when: {}\n    action: deny\n    reason: r\n",
        serde_json::to_string(when).expect("json")
    )
}

// ── rendering ───────────────────────────────────────────────────────────────

#[test]
fn an_error_past_column_65535_renders_in_lint_explain_and_test() {
    let d = dir("long-line");
    write(&d, "manifest.yaml", MANIFEST);
    // An unknown key at column 70 000 of a single line.
    write(
        &d,
        "policy.yaml",
        format!(
            "version: 1\nrules:\n  - {{id: r, tools: [bash], when: 'true', action: deny, reason: \"{}\", actoin: deny}}\n",
            "y".repeat(70_000)
        ),
    );
    let r = run(&d, &["lint", "."]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("unknown-field"), "{}", r.stderr);
    // The true place is named (line 3: 64 characters, the 70 000 `y`s and `", `
    // come before the key, so column 70 068), and the line shown is
    // cut to a window.
    assert!(r.stderr.contains("policy.yaml:3:70068"), "{}", r.stderr);
    assert!(r.stderr.len() < 4_000, "{} bytes of report", r.stderr.len());
    for cmd in [
        &[
            "explain",
            "--tool",
            "bash",
            "--args",
            "{\"command\":\"ls\"}",
            ".",
        ][..],
        &["test", "."][..],
    ] {
        let r = run(&d, cmd);
        assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
        assert!(r.stderr.contains("unknown-field"), "{cmd:?}: {}", r.stderr);
    }
}

// ── CEL depth, size and cost ────────────────────────────────────────────────

#[test]
fn long_left_nested_cel_is_refused_without_overflowing_the_stack() {
    let cases = [
        format!("{} == 2", vec!["1"; 30_000].join("+")),
        format!("args{} == 1", ".a".repeat(5_000)),
        format!("{}true", "!".repeat(1_000_000)),
        format!("[{}].size() > 0", vec!["1"; 300_000].join(",")),
        format!("{}1{}", "(".repeat(2_000), ")".repeat(2_000)),
        format!("{} == 1", "-".repeat(10_000) + "1"),
    ];
    for (i, when) in cases.iter().enumerate() {
        let d = dir(&format!("deep-cel-{i}"));
        write(&d, "manifest.yaml", MANIFEST);
        write(&d, "policy.yaml", rule(when));
        let (code, codes, _) = lint_codes(&d, &["."]);
        assert_eq!(code, 1, "case {i}");
        assert_eq!(codes, ["cel-too-large"], "case {i}");
    }
    // `&&` chains are balanced by the parser and stay accepted.
    let d = dir("deep-cel-and");
    write(&d, "manifest.yaml", MANIFEST);
    let when = vec!["args.command != 'x'"; 500].join(" && ");
    write(&d, "policy.yaml", rule(&when));
    let (code, codes, _) = lint_codes(&d, &["."]);
    assert_eq!((code, codes), (0, vec![]));
}

#[test]
fn expressions_that_could_exceed_the_evaluation_budget_are_refused_at_load() {
    let cases = [
        // Nested comprehensions over a call's list.
        "args.items.all(a, args.items.all(b, args.items.all(c, args.items.all(d, a + b + c + d != ''))))",
        // Maps nested in maps over literal lists.
        "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, args.command)))).size() > 0",
        // A string grown by `join` and `replace`.
        "args.items.map(x, args.items.map(y, args.command).join(args.command)).join(args.command).size() > 0",
        "args.command.replace('', args.command).size() > 0",
    ];
    for (i, when) in cases.iter().enumerate() {
        let d = dir(&format!("cost-{i}"));
        write(&d, "manifest.yaml", MANIFEST);
        // An example, so `lint` would evaluate the rule if it loaded.
        let policy = rule(when).replace(
            "    reason: r\n",
            "    reason: r\n    examples:\n      match: []\n      no_match: [{tool: bash, args: {command: ls, items: [a, b]}}]\n",
        );
        write(&d, "policy.yaml", policy);
        let (code, codes, json) = lint_codes(&d, &["."]);
        assert_eq!(code, 1, "case {i}: {json}");
        assert_eq!(codes, ["cel-cost"], "case {i}: {json}");
    }
}

#[test]
fn a_call_larger_than_the_estimate_assumed_fails_closed_at_run_time() {
    let d = dir("cost-runtime");
    write(&d, "manifest.yaml", MANIFEST);
    // Fits the load-time budget (100 items × 200 list entries), not for 100 000 items.
    let list: Vec<String> = (0..200).map(|i| format!("\"w{i}\"")).collect();
    let policy = format!(
        "version: 1\nlists:\n  words: [{}]\nrules:\n  - id: word\n    tools: [bash]\n    when: 'has(args.items) && args.items.exists(x, lists.words.exists(w, x == w))'\n    action: deny\n    reason: a listed word\n",
        list.join(", ")
    );
    write(&d, "policy.yaml", policy);
    let (code, codes, _) = lint_codes(&d, &["."]);
    assert_eq!((code, codes), (0, vec![]));
    let items: Vec<String> = (0..100_000).map(|i| format!("\"i{i}\"")).collect();
    let call = format!(
        "{{\"tool\":\"bash\",\"args\":{{\"command\":\"ls\",\"items\":[{}]}}}}",
        items.join(",")
    );
    let r = run_in(
        &d,
        &["explain", "--call", "-", "--format", "json", "."],
        Some(call.into_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(
        v["decision"],
        "deny",
        "{}",
        r.stdout.chars().take(2000).collect::<String>()
    );
    let errors = v["errors"].to_string();
    assert!(errors.contains("not evaluated"), "{errors}");
}

// ── reads ───────────────────────────────────────────────────────────────────

#[test]
fn devices_fifos_and_folders_are_refused_by_kind() {
    let d = dir("special");
    write(&d, "manifest.yaml", MANIFEST);
    let dev = dir("special-dev");
    write(&dev, "manifest.yaml", MANIFEST);
    std::os::unix::fs::symlink("/dev/zero", dev.join("zero.yaml")).expect("symlink");
    let r = run(&dev, &["lint", "."]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("zero.yaml` is not a regular file (a character device)"),
        "{}",
        r.stderr
    );
    let fifo = dir("special-fifo");
    write(&fifo, "manifest.yaml", MANIFEST);
    let made = Command::new("mkfifo")
        .arg(fifo.join("p.yaml"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let r = run(&fifo, &["lint", "."]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("p.yaml` is not a regular file (a FIFO)"),
        "{}",
        r.stderr
    );
    let r = run(&fifo, &["explain", "--call", "p.yaml", "manifest.yaml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("is not a regular file (a FIFO)"),
        "{}",
        r.stderr
    );
    for (call, kind) in [
        ("/dev/zero", "a character device"),
        ("/dev/urandom", "a character device"),
        (".", "a folder"),
    ] {
        let r = run(&d, &["explain", "--call", call, "."]);
        assert_eq!(r.code, 2, "{call}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("is not a regular file ({kind})")),
            "{call}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("no such file"), "{call}: {}", r.stderr);
    }
}

#[test]
fn standard_input_is_read_to_the_cap_only() {
    let d = dir("stdin-cap");
    write(&d, "manifest.yaml", MANIFEST);
    let big = vec![b' '; 40 * 1024 * 1024];
    let r = run_in(&d, &["explain", "--call", "-", "."], Some(big));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("`standard input` is larger than 16 MiB"),
        "{}",
        r.stderr
    );
}

#[test]
fn symlink_loops_in_folders_end_and_files_are_read_once() {
    let root = dir("loops");
    let a = root.join("a");
    let c = root.join("c");
    std::fs::create_dir_all(&a).expect("a");
    std::fs::create_dir_all(&c).expect("c");
    write(&a, "manifest.yaml", MANIFEST);
    std::os::unix::fs::symlink(".", a.join("self")).expect("-> .");
    std::os::unix::fs::symlink("..", a.join("up")).expect("-> ..");
    std::os::unix::fs::symlink("../c", a.join("to-c")).expect("a -> c");
    std::os::unix::fs::symlink("../a", c.join("to-a")).expect("c -> a");
    std::os::unix::fs::symlink("manifest.yaml", a.join("again.yaml")).expect("file link");
    let (code, codes, json) = lint_codes(&root, &["."]);
    assert_eq!((code, codes), (0, vec![]), "{json}");
    let r = run(&root, &["tools", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\n1 tools\n"), "{}", r.stdout);
}

#[test]
fn lint_json_reports_an_unreadable_or_non_utf8_file_as_json() {
    let d = dir("non-utf8");
    write(&d, "manifest.yaml", b"version: 1\ntools: []\n# caf\xe9\n");
    let (code, codes, json) = lint_codes(&d, &["."]);
    assert_eq!((code, codes), (2, vec!["unreadable-file".to_string()]));
    let message = json["diagnostics"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("is not UTF-8 text (invalid byte at offset 26)"),
        "{message}"
    );
    for format in ["sarif", "github"] {
        let r = run(&d, &["lint", "--format", format, "."]);
        assert_eq!(r.code, 2);
        assert!(
            r.stdout.contains("unreadable-file"),
            "{format}: {}",
            r.stdout
        );
    }
}

// ── messages ────────────────────────────────────────────────────────────────

#[test]
fn control_bidi_and_zero_width_characters_are_escaped_in_every_format() {
    let d = dir("escapes");
    write(&d, "manifest.yaml", MANIFEST);
    write(
        &d,
        "policy.yaml",
        "version: 1\nrules:\n  - id: \"r\\e]0;owned\\a\\u202e\"\n    tools: [bash]\n    when: 'true'\n    act\u{200b}ion: deny\n    reason: r\n",
    );
    let raw = ['\u{1b}', '\u{7}', '\u{202e}', '\u{200b}'];
    let r = run(&d, &["lint", "."]);
    assert_eq!(r.code, 1);
    for c in raw {
        assert!(
            !r.stderr.contains(c),
            "human output holds {c:?}: {}",
            r.stderr
        );
    }
    assert!(
        r.stderr.contains("unknown field `act\\u{200b}ion`"),
        "{}",
        r.stderr
    );
    for format in ["json", "sarif", "github"] {
        let r = run(&d, &["lint", "--format", format, "."]);
        assert_eq!(r.code, 1);
        let text = if format == "github" {
            r.stdout.clone()
        } else {
            // JSON escapes controls itself; the invisible ones are escaped by us.
            let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
            v.to_string()
        };
        for c in raw {
            assert!(!text.contains(c), "{format} holds {c:?}: {text}");
        }
        assert!(
            text.contains("act\\\\u{200b}ion") || text.contains("act\\u{200b}ion"),
            "{format}: {text}"
        );
    }
    // A tool name given on the command line is echoed escaped.
    let r = run(
        &d,
        &[
            "explain",
            "--tool",
            "x\u{1b}[2J\u{202e}",
            "--args",
            "{}",
            "manifest.yaml",
        ],
    );
    for c in ['\u{1b}', '\u{202e}'] {
        assert!(
            !r.stdout.contains(c) && !r.stderr.contains(c),
            "{}{}",
            r.stdout,
            r.stderr
        );
    }
    assert!(r.stdout.contains("x\\u{1b}[2J\\u{202e}"), "{}", r.stdout);
}

#[test]
fn library_errors_are_said_in_words_with_the_right_code() {
    let d = dir("library-text");
    write(&d, "manifest.yaml", MANIFEST);
    let call = write(&d, "call.json", "[]");
    let r = run(
        &d,
        &[
            "explain",
            "--call",
            call.to_str().expect("utf-8"),
            "manifest.yaml",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("the value is not a JSON object"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("struct Call"), "{}", r.stderr);
    // Two documents in one file.
    let two = dir("library-two-docs");
    write(
        &two,
        "manifest.yaml",
        format!("{MANIFEST}---\nversion: 1\n"),
    );
    let (code, codes, json) = lint_codes(&two, &["."]);
    assert_eq!((code, codes), (1, vec!["yaml-syntax".to_string()]));
    assert!(!json.to_string().contains("from_str"), "{json}");
    assert!(
        json.to_string().contains("more than one YAML document"),
        "{json}"
    );
    // Nesting deeper than the budget is said as depth, not as aliases.
    let deep = dir("library-deep");
    write(
        &deep,
        "manifest.yaml",
        format!(
            "version: 1\ntests:\n  - name: t\n    call: {{tool: bash, args: {{a: {}{}}}}}\n    expect: {{decision: deny}}\n",
            "[".repeat(200),
            "]".repeat(200)
        ),
    );
    let (code, codes, json) = lint_codes(&deep, &["."]);
    assert_eq!((code, codes), (1, vec!["yaml-budget".to_string()]));
    assert!(json.to_string().contains("deeper than 64 levels"), "{json}");
    assert!(!json.to_string().contains("alias"), "{json}");
    // A number out of range is a value problem, not YAML syntax.
    let range = dir("library-range");
    write(
        &range,
        "manifest.yaml",
        "version: 99999999999999999999999\n",
    );
    let (code, codes, json) = lint_codes(&range, &["."]);
    assert_eq!(code, 1);
    assert!(
        codes
            .iter()
            .all(|c| c == "invalid-value" || c == "invalid-type"),
        "{json}"
    );
    // The parser's own recursion limit is reported with the limit's code.
    let parens = dir("library-parens");
    write(&parens, "manifest.yaml", MANIFEST);
    write(
        &parens,
        "policy.yaml",
        rule(&format!("{}true{}", "(".repeat(100), ")".repeat(100))),
    );
    let (_, codes, json) = lint_codes(&parens, &["."]);
    assert_eq!(codes, ["cel-too-large"]);
    assert!(!json.to_string().contains("OtherError"), "{json}");
}

// ── silent acceptance ───────────────────────────────────────────────────────

#[test]
fn yaml_tags_are_reported() {
    for (i, value) in [
        "!!python/object:os.system 'true'",
        "!!binary dHJ1ZQ==",
        "!custom 'true'",
        "!<tag:example.com,2000:app/x> 'true'",
    ]
    .iter()
    .enumerate()
    {
        let d = dir(&format!("tags-{i}"));
        write(&d, "manifest.yaml", MANIFEST);
        write(
            &d,
            "policy.yaml",
            format!(
                "version: 1\nrules:\n  - id: r\n    tools: [bash]\n    when: {value}\n    action: deny\n    reason: r\n"
            ),
        );
        let (code, codes, json) = lint_codes(&d, &["."]);
        assert_eq!(
            (code, codes),
            (1, vec!["yaml-tag".to_string()]),
            "{value}: {json}"
        );
    }
}

#[test]
fn functions_the_library_does_not_have_are_reported_at_load() {
    for f in ["max(1, 2) == 2", "min([1, 2]) == 1"] {
        let d = dir("no-max");
        write(&d, "manifest.yaml", MANIFEST);
        write(&d, "policy.yaml", rule(f));
        let (code, codes, _) = lint_codes(&d, &["."]);
        assert_eq!(
            (code, codes),
            (1, vec!["cel-unknown-function".to_string()]),
            "{f}"
        );
    }
}

// ── output ──────────────────────────────────────────────────────────────────

#[test]
fn explain_truncates_echoed_arguments_and_says_how_much() {
    let d = dir("echo");
    write(&d, "manifest.yaml", MANIFEST);
    let command = "x".repeat(5 * 1024 * 1024);
    let call = format!("{{\"tool\":\"bash\",\"args\":{{\"command\":\"{command}\"}}}}");
    let r = run_in(
        &d,
        &["explain", "--call", "-", "."],
        Some(call.clone().into_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() < 20_000, "{} bytes echoed", r.stdout.len());
    assert!(
        r.stdout.contains("more bytes not shown)"),
        "{}",
        &r.stdout[..2000.min(r.stdout.len())]
    );
    let r = run_in(
        &d,
        &["explain", "--call", "-", "--format", "json", "."],
        Some(call.into_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() < 40_000, "{} bytes echoed", r.stdout.len());
    assert!(r.stdout.contains("more bytes not shown)"));
}
