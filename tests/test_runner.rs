//! `zero-policy test`: the policy test runner, run as a user runs it.
//!
//! `tests/fixtures/test-runner/` holds two tools, two sandbox rules, one relax
//! rule and three passing tests; the rule `no-curl` is matched by no test.
//! Variants (a flipped expectation, rule examples) are written to a temporary
//! folder by the tests themselves.

#![expect(clippy::expect_used, reason = "tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_zero-policy");
const FIXTURE: &str = "tests/fixtures/test-runner";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the zero-policy binary runs")
}

fn run(args: &[&str]) -> Output {
    run_in(root(), args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// A fresh copy of the fixture in a temporary folder, named for the test.
fn copy_fixture(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("test-runner-{name}"));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("remove an old copy");
    }
    std::fs::create_dir_all(&dir).expect("create the copy's folder");
    for file in ["manifest.yaml", "policy.yaml", "policy.test.yaml"] {
        std::fs::copy(root().join(FIXTURE).join(file), dir.join(file)).expect("copy a file");
    }
    dir
}

#[test]
fn three_passing_tests() {
    let out = run(&["test", FIXTURE]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing failed, so the report is only the closing line.
    assert_eq!(stdout(&out), "3 passed, 0 failed\n");
}

#[test]
fn the_fixture_is_lint_clean() {
    let out = run(&["lint", "--format", "json", FIXTURE]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["diagnostics"], json!([]));
}

#[test]
fn rule_examples_are_counted_as_cases() {
    // Two examples (a `match` and a `no_match`) add two passing cases to the three tests.
    let dir = copy_fixture("examples");
    std::fs::write(
        dir.join("sudo.yaml"),
        "version: 1\n\
         rules:\n\
         \x20 - id: no-sudo\n\
         \x20   tools: [bash]\n\
         \x20   when: 'args.command.startsWith(\"sudo \")'\n\
         \x20   action: deny\n\
         \x20   reason: no root\n\
         \x20   examples:\n\
         \x20     match: [{tool: bash, args: {command: sudo ls}}]\n\
         \x20     no_match: [{tool: bash, args: {command: ls}}]\n",
    )
    .expect("write sudo.yaml");
    let out = run_in(&dir, &["test", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "5 passed, 0 failed\n");
    let out = run_in(&dir, &["test", "--format", "json", "."]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let kinds: Vec<(&str, &str, u64)> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default(),
                r["kind"].as_str().unwrap_or_default(),
                r["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("rm -rf is denied", "test", 3),
            ("git status is relaxed to allow", "test", 6),
            ("ls asks a person", "test", 9),
            ("example of `no-sudo` (match)", "example_match", 9),
            ("example of `no-sudo` (no_match)", "example_no_match", 10),
        ]
    );
}

/// The fixture with the third test's decision flipped from `prompt` to `allow`.
fn flipped() -> PathBuf {
    let dir = copy_fixture("flipped");
    let path = dir.join("policy.test.yaml");
    let text = std::fs::read_to_string(&path).expect("read the tests");
    let needle = "expect: {decision: prompt, matched: []}";
    assert_eq!(text.matches(needle).count(), 1, "the fixture changed");
    std::fs::write(
        &path,
        text.replace(needle, "expect: {decision: allow, matched: []}"),
    )
    .expect("write the flipped tests");
    dir
}

#[test]
fn a_flipped_expectation_fails_with_file_line_expected_and_actual() {
    let dir = flipped();
    let out = run_in(&dir, &["test", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "FAIL ls asks a person (./policy.test.yaml:9)\n\
         \x20    decision: expected allow, actual prompt  <- differs\n\
         \x20    matched:  expected []\n\
         \x20    matched:  actual   []\n\
         2 passed, 1 failed\n"
    );
}

#[test]
fn json_reports_every_case() {
    let out = run(&["test", "--format", "json", FIXTURE]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let file = format!("{FIXTURE}/policy.test.yaml");
    let case = |name: &str, line: u64, decision: &str, matched: Value| {
        json!({
            "name": name,
            "kind": "test",
            "file": file,
            "line": line,
            "passed": true,
            "expected_decision": decision,
            "actual_decision": decision,
            "expected_matched": matched,
            "actual_matched": matched,
            "reject_reason": null,
            "errors": [],
            "failure": null,
        })
    };
    assert_eq!(
        v,
        json!({
            "results": [
                case("rm -rf is denied", 3, "deny", json!(["no-rm"])),
                case("git status is relaxed to allow", 6, "allow", json!(["git-status"])),
                case("ls asks a person", 9, "prompt", json!([])),
            ],
            "passed": 3,
            "failed": 0,
            "skipped": [],
            "uncovered": ["no-curl"],
            "rules": 3,
            "coverage": 200.0 / 3.0,
        })
    );
}

#[test]
fn json_reports_a_failure() {
    let dir = flipped();
    let out = run_in(&dir, &["test", "--format", "json", "."]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (v["passed"].clone(), v["failed"].clone()),
        (json!(2), json!(1))
    );
    let failed: Vec<&Value> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["passed"] == json!(false))
        .collect();
    assert_eq!(
        failed,
        [&json!({
            "name": "ls asks a person",
            "kind": "test",
            "file": "./policy.test.yaml",
            "line": 9,
            "passed": false,
            "expected_decision": "allow",
            "actual_decision": "prompt",
            "expected_matched": [],
            "actual_matched": [],
            "reject_reason": null,
            "errors": [],
            "failure": "expected `allow`, got `prompt`",
        })]
    );
}

#[test]
fn coverage_lists_uncovered_rules() {
    let out = run(&["test", "--coverage", FIXTURE]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "coverage: 2 of 3 rules matched by a test or example (66.7%)\n\
         \x20 not covered: no-curl\n\
         3 passed, 0 failed\n"
    );
}

#[test]
fn min_coverage_100_fails_when_a_rule_is_uncovered() {
    let out = run(&["test", "--min-coverage", "100", FIXTURE]);
    assert_eq!(out.status.code(), Some(1));
    let out_text = stdout(&out);
    assert!(out_text.contains("  not covered: no-curl\n"), "{out_text}");
    assert!(out_text.ends_with("3 passed, 0 failed\n"), "{out_text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("below --min-coverage 100%"), "{stderr}");
}

#[test]
fn min_coverage_below_the_actual_coverage_passes() {
    let out = run(&["test", "--min-coverage", "66", FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&["test", "--min-coverage", "67", FIXTURE]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}

#[test]
fn full_coverage_passes_min_coverage_100() {
    // A test for `no-curl` makes every rule covered.
    let dir = copy_fixture("full-coverage");
    std::fs::write(
        dir.join("curl.test.yaml"),
        "version: 1\n\
         tests:\n\
         \x20 - name: curl is denied\n\
         \x20   call: {tool: bash, args: {command: curl https://example.com}}\n\
         \x20   expect: {decision: deny, matched: [no-curl]}\n",
    )
    .expect("write curl.test.yaml");
    let out = run_in(&dir, &["test", "--min-coverage", "100", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "coverage: 3 of 3 rules matched by a test or example (100.0%)\n\
         4 passed, 0 failed\n"
    );
}

#[test]
fn a_folder_with_errors_cannot_run() {
    let out = run(&["test", "tests/fixtures/lint/duplicate-id"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["test", "tests/fixtures/no-such-folder"]);
    assert_eq!(out.status.code(), Some(2));
}
