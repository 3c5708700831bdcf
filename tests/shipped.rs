//! The shipped `policies/` and `manifests/` lint clean and pass their own tests.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::process::Command;

fn zp(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn shipped_files_lint_clean_under_deny_warnings() {
    let (code, out, err) = zp(&["lint", "--deny-warnings"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.ends_with("0 errors, 0 warnings\n"), "{err}");
}

#[test]
fn shipped_tests_pass_with_full_rule_coverage() {
    let (code, out, err) = zp(&["test", "--coverage", "--min-coverage", "100"]);
    assert_eq!(code, 0, "{out}{err}");
    let last = out.lines().last().unwrap();
    let (passed, failed) = last.split_once(" passed, ").unwrap();
    assert_eq!(failed, "0 failed");
    assert!(passed.parse::<usize>().unwrap() >= 100, "{last}");
    assert!(out.contains("(100.0%)"), "{out}");
    assert!(!out.contains("not covered"), "{out}");
}

#[test]
fn shipped_policy_has_at_least_thirty_tests_covering_every_rule() {
    let loaded = zero_policy::loader::load_paths(&[
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies"),
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests"),
    ])
    .unwrap();
    let policy = loaded.policy.unwrap();
    assert!(policy.tests.len() >= 30, "{} tests", policy.tests.len());
    // Every rule is named in the `matched` of some test, not only hit by an example.
    let named: std::collections::BTreeSet<&str> = policy
        .tests
        .iter()
        .flat_map(|t| t.matched.iter().flatten().map(String::as_str))
        .collect();
    let missing: Vec<&str> = policy
        .rules
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| !named.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules no test names in `matched`: {missing:?}"
    );
}

#[test]
fn the_red_team_suite_passes_with_every_class_and_its_controls() {
    let (code, out, err) = zp(&["test", "policies", "manifests", "tests/fixtures/redteam"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines().last().unwrap().ends_with(" passed, 0 failed"),
        "{out}"
    );
    let suite = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/redteam/redteam.yaml"),
    )
    .unwrap();
    let cases = suite.matches("\n  - name: ").count();
    assert!(cases >= 150, "{cases} cases");
    let classes = suite.lines().filter(|l| l.starts_with("  # ── ")).count();
    assert!(classes >= 20, "{classes} classes");
    // Every case checks the rules that matched, not the decision alone.
    let decision_only: Vec<&str> = suite
        .lines()
        .filter(|l| l.trim_start().starts_with("expect:") && !l.contains("matched"))
        .collect();
    assert!(decision_only.is_empty(), "{decision_only:#?}");
    for control in [
        "git status",
        "cargo test",
        "ls src",
        "rm -rf target",
        "grep -rn TODO src",
        ".env.example",
    ] {
        assert!(
            suite.contains(control),
            "the control `{control}` is in the suite"
        );
    }
}

#[test]
fn the_strict_profile_adds_to_the_default_and_its_tests_pass() {
    // With the strict profile, the default's own tests see one more rule matched on
    // every call that runs code; the profile's tests and examples must all pass.
    let (_, out, err) = zp(&["test", "policies", "manifests", "profiles/strict.yaml"]);
    assert!(out.contains(" passed, "), "{out}{err}");
    for line in out.lines().filter(|l| l.starts_with("FAIL ")) {
        assert!(line.contains("(policies/default.test.yaml:"), "{line}");
    }
}
