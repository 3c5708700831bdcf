//! Every diagnostic code, produced from files by the real binary.
//!
//! Each folder `tests/fixtures/lint/<code>/` is a self-contained set of YAML
//! files that makes `zero-policy lint` report that code (and nothing else).
//! The expected places below were worked out by hand from the fixture text
//! (the comments show the arithmetic), not copied from the program's output.

#![expect(clippy::expect_used, clippy::panic, reason = "tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::Value;
use zero_policy::diagnostic::{Code, Severity};

const BIN: &str = env!("CARGO_BIN_EXE_zero-policy");

/// The crate root: fixtures are given relative to it, so `file` is predictable.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures/lint")
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("the zero-policy binary runs")
}

/// One diagnostic, as far as these tests check it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct At {
    code: String,
    severity: String,
    file: String,
    line: u64,
    column: u64,
}

/// Builds the expected [`At`] for `file` in the fixture folder `dir`.
fn at(dir: &str, code: &str, severity: &str, file: &str, line: u64, column: u64) -> At {
    At {
        code: code.to_string(),
        severity: severity.to_string(),
        file: format!("tests/fixtures/lint/{dir}/{file}"),
        line,
        column,
    }
}

fn error(dir: &str, file: &str, line: u64, column: u64) -> At {
    at(dir, dir, "error", file, line, column)
}

fn warning(dir: &str, file: &str, line: u64, column: u64) -> At {
    at(dir, dir, "warning", file, line, column)
}

/// What `lint --format json` said.
struct Linted {
    exit: i32,
    json: Value,
    diagnostics: Vec<At>,
}

fn lint_paths(paths: &[String], extra: &[&str]) -> Linted {
    let mut args = vec!["lint", "--format", "json"];
    args.extend_from_slice(extra);
    args.extend(paths.iter().map(String::as_str));
    let out = run(&args);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "lint --format json {paths:?} printed no JSON ({e}); stdout: {}; stderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let diagnostics = json["diagnostics"]
        .as_array()
        .expect("a `diagnostics` list")
        .iter()
        .map(|d| At {
            code: d["code"].as_str().unwrap_or_default().to_string(),
            severity: d["severity"].as_str().unwrap_or_default().to_string(),
            file: d["file"].as_str().unwrap_or_default().to_string(),
            line: d["line"].as_u64().unwrap_or_default(),
            column: d["column"].as_u64().unwrap_or_default(),
        })
        .collect();
    Linted {
        exit: out.status.code().unwrap_or(-1),
        json,
        diagnostics,
    }
}

fn lint_json(dir: &str, extra: &[&str]) -> Linted {
    lint_paths(&[format!("tests/fixtures/lint/{dir}")], extra)
}

/// Lints a fixture folder and checks every diagnostic, the codes, the counts and the exit code.
fn check(dir: &str, expected: &[At]) {
    check_paths(&[format!("tests/fixtures/lint/{dir}")], expected);
}

/// Lints the given files and folders and checks as [`check`] does.
fn check_paths(paths: &[String], expected: &[At]) {
    let linted = lint_paths(paths, &[]);
    assert_eq!(linted.diagnostics, expected, "diagnostics of {paths:?}");
    let codes: Vec<&str> = linted.diagnostics.iter().map(|d| d.code.as_str()).collect();
    let expected_codes: Vec<&str> = expected.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, expected_codes, "codes of {paths:?}");
    let errors = expected.iter().filter(|d| d.severity == "error").count();
    let warnings = expected.len() - errors;
    assert_eq!(
        (
            linted.json["errors"].as_u64(),
            linted.json["warnings"].as_u64()
        ),
        (Some(errors as u64), Some(warnings as u64)),
        "error and warning counts of {paths:?}"
    );
    let exit = if errors > 0 { 1 } else { 0 };
    assert_eq!(linted.exit, exit, "exit code of lint {paths:?}");
    // Warnings fail the run under --deny-warnings; errors fail it either way.
    let denied = lint_paths(paths, &["--deny-warnings"]);
    let exit = if errors + warnings > 0 { 1 } else { 0 };
    assert_eq!(
        denied.exit, exit,
        "exit code of lint --deny-warnings {paths:?}"
    );
    assert_eq!(
        denied.diagnostics, expected,
        "diagnostics of {paths:?} under --deny-warnings"
    );
}

// ── YAML and document shape ─────────────────────────────────────────────────

#[test]
fn yaml_syntax() {
    // `tools: [bash` leaves the flow sequence open; on line 5 `    when:` the
    // `:` (column 4 + 4 + 1 = 9) cannot start a mapping inside it.
    check("yaml-syntax", &[error("yaml-syntax", "policy.yaml", 5, 9)]);
}

#[test]
fn yaml_budget_alias_bomb_is_refused_fast() {
    let start = Instant::now();
    check(
        "yaml-budget",
        &[
            // aliases.yaml: 1001 uses of `*a` on line 8, `        l: [*a, *a, …`.
            // The 1001st crosses the 1000-alias budget: 8 + `l: [` 4 + 1000 × `*a, ` 4,
            // so column 4013.
            error("yaml-budget", "aliases.yaml", 8, 4013),
            // policy.yaml: nine levels of nine aliases would expand to 9^9 nodes.
            // Counting nodes: a..e hold 10 + 91 + 820 + 7381 + 66430 = 74732, about
            // 74 760 with the keys and the document; each `*e` adds 66430, so the
            // second `*e` of line 12 (`        f: &f [*e, *e`: 8 + `f: &f [` 7 +
            // `*e, ` 4 = column 20) is the first to cross the 200 000-node budget.
            error("yaml-budget", "policy.yaml", 12, 20),
        ],
    );
    // `check` runs lint twice; a bomb that was expanded would take minutes.
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "the alias bomb took {:?} to refuse",
        start.elapsed()
    );
}

#[test]
fn duplicate_key() {
    // The second `action:` key, line 7, column 5.
    check(
        "duplicate-key",
        &[error("duplicate-key", "policy.yaml", 7, 5)],
    );
}

#[test]
fn unknown_field() {
    // `    actoin: deny`: the key at column 5.
    check(
        "unknown-field",
        &[error("unknown-field", "policy.yaml", 6, 5)],
    );
}

#[test]
fn missing_field() {
    // Line 1 is a comment; the document's mapping (which lacks `version`) starts at 2:1.
    check(
        "missing-field",
        &[error("missing-field", "policy.yaml", 2, 1)],
    );
}

#[test]
fn invalid_type() {
    // `    action: maybe`: 4 + `action: ` 8 = column 13.
    check(
        "invalid-type",
        &[error("invalid-type", "policy.yaml", 6, 13)],
    );
}

#[test]
fn invalid_value() {
    // `  - id: No_RM`: 2 + `- id: ` 6 = column 9.
    check(
        "invalid-value",
        &[error("invalid-value", "policy.yaml", 3, 9)],
    );
}

#[test]
fn unsupported_version() {
    // `version: 2`: the value at column 10.
    check(
        "unsupported-version",
        &[error("unsupported-version", "policy.yaml", 1, 10)],
    );
}

// ── names, ids, settings ────────────────────────────────────────────────────

#[test]
fn duplicate_tool() {
    // The second declaration (files are read in name order): `  - name: bash`, column 11.
    check(
        "duplicate-tool",
        &[error("duplicate-tool", "more-tools.yaml", 3, 11)],
    );
}

#[test]
fn duplicate_id() {
    // The second `  - id: no-rm`, line 8, column 9.
    check(
        "duplicate-id",
        &[error("duplicate-id", "policy.yaml", 8, 9)],
    );
}

#[test]
fn settings_conflict() {
    // The later file: `  defer_threshold: 5`, 2 + `defer_threshold: ` 17 = column 20.
    check(
        "settings-conflict",
        &[error("settings-conflict", "b-settings.yaml", 4, 20)],
    );
}

#[test]
fn missing_reason() {
    // `      permission: prompt` with no `reason:`: 6 + `permission: ` 12 = column 19.
    check(
        "missing-reason",
        &[error("missing-reason", "manifest.yaml", 13, 19)],
    );
}

// ── CEL ─────────────────────────────────────────────────────────────────────

#[test]
fn cel_syntax_points_inside_the_expression_in_every_scalar_style() {
    // Files in name order. Each expression has a stray `)`.
    check(
        "cel-syntax",
        &[
            // `|` block, its third line `      args.command.contains("push") && )`:
            // the stray `)` follows 6 spaces and `args.command.contains("push") && ` (33),
            // so it is column 40.
            error("cel-syntax", "block.yaml", 8, 40),
            // `    when: "args.command == \"rm\" || )"`: the value starts at 12 and
            // `args.command == \"rm\" || ` is 26 characters of file: column 38.
            error("cel-syntax", "double.yaml", 5, 38),
            // `>` folded block with the same lines as block.yaml: 8:40 too.
            error("cel-syntax", "folded.yaml", 8, 40),
            // `    when: args.command == "rm" || )`: 11 + 24 = column 35.
            error("cel-syntax", "plain.yaml", 5, 35),
            // `    when: 'args.command == ''rm'' || )'`: 12 + 26 = column 38.
            error("cel-syntax", "single.yaml", 5, 38),
        ],
    );
}

#[test]
fn cel_syntax_in_plain_and_quoted_scalars() {
    // The flow styles alone, so a block-scalar failure does not hide them.
    let dir = "tests/fixtures/lint/cel-syntax";
    let paths: Vec<String> = ["manifest.yaml", "double.yaml", "plain.yaml", "single.yaml"]
        .iter()
        .map(|f| format!("{dir}/{f}"))
        .collect();
    check_paths(
        &paths,
        &[
            error("cel-syntax", "double.yaml", 5, 38),
            error("cel-syntax", "plain.yaml", 5, 35),
            error("cel-syntax", "single.yaml", 5, 38),
        ],
    );
}

#[test]
fn cel_too_large_points_where_the_nesting_crosses_the_limit() {
    // `    when: 'size(args.command) == 1 + 1 + …'`: the expression starts at column
    // 12. `size(args.command) == ` is 22 characters and leaves an estimated depth
    // of 4 (two chained operators plus the level's 2); each `1 + ` adds one, so
    // the 61st `+` (after 22 + 60 × 4 + 2 = 264 characters) makes 65 > 64:
    // column 12 + 264 = 276.
    check(
        "cel-too-large",
        &[error("cel-too-large", "policy.yaml", 5, 276)],
    );
}

#[test]
fn cel_unknown_field_points_at_the_field() {
    // `    when: '` is 11 characters; `call.commands.exists(c, c.` 26 more: the
    // field `progam` starts at column 12 + 26 = 38.
    check(
        "cel-unknown-field",
        &[error("cel-unknown-field", "policy.yaml", 5, 38)],
    );
}

#[test]
fn type_mismatch_points_at_the_operator() {
    // After `    when: '` (11) and `session.mode ` (13): the `+` at column 25;
    // after `    when: '` and `type(tool.name) ` (16): the `==` at column 28
    // (a type value is never equal to its name).
    check(
        "type-mismatch",
        &[
            error("type-mismatch", "policy.yaml", 5, 25),
            error("type-mismatch", "policy.yaml", 10, 28),
        ],
    );
}

#[test]
fn cel_cost_points_at_the_comprehension_over_budget() {
    // `split("")` of a 64 KiB command (the size assumed at load) gives 65 537
    // pieces. The inner `exists` alone is under budget (65 537 × about 10 steps);
    // the outer one runs it once per piece again, about 7×10^10 steps, so the
    // outer `exists` is the node named: after `    when: '` (11) and
    // `args.command.split("").` (23), column 35.
    check("cel-cost", &[error("cel-cost", "policy.yaml", 5, 35)]);
}

#[test]
fn yaml_tag() {
    // `    when: !!python/object/apply:…`: the tag at column 11.
    check("yaml-tag", &[error("yaml-tag", "policy.yaml", 5, 11)]);
}

#[test]
fn unreadable_file_is_reported_in_every_format_and_exits_2() {
    // manifest.yaml is Latin-1: `version: 1\ntools: []\n# saved in Latin-1: caf` is
    // 11 + 10 + 23 = 44 bytes, then the byte 0xE9.
    let linted = lint_json("unreadable-file", &[]);
    assert_eq!(linted.exit, 2);
    assert_eq!(
        linted.json["diagnostics"][0]["message"],
        "`tests/fixtures/lint/unreadable-file/manifest.yaml` is not UTF-8 text (invalid byte at offset 44)"
    );
    assert_eq!(linted.json["diagnostics"][0]["code"], "unreadable-file");
    assert_eq!(
        (
            linted.json["errors"].as_u64(),
            linted.json["warnings"].as_u64()
        ),
        (Some(1), Some(0))
    );
}

#[test]
fn cel_unknown_variable() {
    // `    when: 'args.command.contains("rm") && request.user == "root"'`:
    // the value starts at 12, `request` after 31 characters: column 43.
    check(
        "cel-unknown-variable",
        &[error("cel-unknown-variable", "policy.yaml", 5, 43)],
    );
}

#[test]
fn cel_unknown_function() {
    // `    when: 'args.command.contains("rm") && shell_command(args.command)...'`:
    // the function's name starts after 31 characters of the value: column 43.
    check(
        "cel-unknown-function",
        &[error("cel-unknown-function", "policy.yaml", 5, 43)],
    );
}

#[test]
fn invalid_glob_in_tools_and_in_a_literal_glob_call() {
    check(
        "invalid-glob",
        &[
            // `    tools: ["bash[", bash]`: the scalar `"bash["` starts at 4 + `tools: [` 8 + 1 = 13.
            error("invalid-glob", "policy.yaml", 4, 13),
            // `    when: 'glob("[", args.command)'`: 12 + `glob(` 5 = column 17.
            error("invalid-glob", "policy.yaml", 10, 17),
        ],
    );
}

#[test]
fn invalid_regex_literal_in_matches() {
    // `    when: 'args.command.matches("rm (-rf") ...'`: 12 + `args.command.matches(` 21 = 33.
    check(
        "invalid-regex",
        &[error("invalid-regex", "policy.yaml", 5, 33)],
    );
}

// ── tools and rules ─────────────────────────────────────────────────────────

#[test]
fn invalid_schema() {
    // `parameters:` is a block mapping whose first key, `type: objekt`, is at 7:7.
    check(
        "invalid-schema",
        &[error("invalid-schema", "manifest.yaml", 7, 7)],
    );
}

#[test]
fn stray_schema_key_is_a_warning() {
    // `        offset: {type: integer, description: First line to read, 0-based.}`:
    // the key `0-based.` starts after 65 characters: column 66. `default: null` on
    // the next line is a keyword, and is not reported.
    check(
        "stray-schema-key",
        &[warning("stray-schema-key", "manifest.yaml", 10, 66)],
    );
}

#[test]
fn sandbox_allows() {
    // `    action: allow`: column 13.
    check(
        "sandbox-allows",
        &[error("sandbox-allows", "policy.yaml", 6, 13)],
    );
}

#[test]
fn relax_tightens() {
    // `    to: deny`: column 9.
    check(
        "relax-tightens",
        &[error("relax-tightens", "policy.yaml", 6, 9)],
    );
}

#[test]
fn relax_on_deny() {
    // The relax rule's id, `  - id: git-status`, column 9.
    check(
        "relax-on-deny",
        &[error("relax-on-deny", "policy.yaml", 3, 9)],
    );
}

#[test]
fn relax_noop_is_a_warning() {
    // The relax rule's id, `  - id: read-sources`, column 9; exit 0, and 1 under --deny-warnings.
    check("relax-noop", &[warning("relax-noop", "policy.yaml", 3, 9)]);
}

#[test]
fn unknown_tool_pattern() {
    // `    tools: [bash, bsh]`: 4 + `tools: [bash, ` 14 = column 19.
    check(
        "unknown-tool-pattern",
        &[error("unknown-tool-pattern", "policy.yaml", 4, 19)],
    );
}

#[test]
fn unknown_arg() {
    // `    when: 'args.command.contains("rm") && args.cmd.contains("-rf")'`:
    // `args.cmd` starts after 31 characters of the value: column 43.
    check("unknown-arg", &[error("unknown-arg", "policy.yaml", 5, 43)]);
}

#[test]
fn unguarded_optional_arg_is_a_warning() {
    // `    when: 'args.command.startsWith("make") && args.timeout_ms > 600000'`:
    // `args.timeout_ms` starts after 35 characters of the value: column 47.
    check(
        "unguarded-optional-arg",
        &[warning("unguarded-optional-arg", "policy.yaml", 5, 47)],
    );
}

#[test]
fn unknown_reason_code_points_at_the_word() {
    // `    when: '` is 11 characters; `call.inexact.exists(r, r in [` 29 and
    // `"parse-error", ` 15 more: `"parse-eror"` starts at column 12 + 44 = 56.
    // `call.unknown.exists(u, u.startsWith(` is 36: the sentence at 12 + 36 = 48.
    check(
        "unknown-reason-code",
        &[
            warning("unknown-reason-code", "policy.yaml", 5, 56),
            warning("unknown-reason-code", "policy.yaml", 10, 48),
        ],
    );
}

#[test]
fn unknown_tag_points_at_the_tag() {
    // `    tags: [network, ` is 20 characters: `destructve` at column 21.
    // `      "-x, --exec": {tags: [` is 28: the engine's `loop` at column 29.
    check(
        "unknown-tag",
        &[
            error("unknown-tag", "catalog.yaml", 4, 21),
            error("unknown-tag", "catalog.yaml", 6, 29),
        ],
    );
}

#[test]
fn example_mismatch() {
    // `        - {tool: bash, args: {command: "rm -r /"}}`: the tool name at 8 + `- {tool: ` 9 + 1 = 18.
    check(
        "example-mismatch",
        &[error("example-mismatch", "policy.yaml", 11, 18)],
    );
}

#[test]
fn invalid_call() {
    check(
        "invalid-call",
        &[
            // An example naming an unknown tool,
            // `        - {tool: bsh, args: {command: "ls"}}`: 8 + `- {tool: ` 9 + 1 = 18.
            error("invalid-call", "policy.yaml", 12, 18),
            // A test whose `args` is a list, `    call: {tool: bash, args: [ls]}`:
            // the call's tool at 4 + `call: {tool: ` 13 + 1 = 18.
            error("invalid-call", "policy.yaml", 15, 18),
        ],
    );
}

// ── servers ─────────────────────────────────────────────────────────────────

#[test]
fn literal_secret_in_env_and_headers() {
    check(
        "literal-secret",
        &[
            // `      GITHUB_TOKEN: "ghp_…"`: 6 + `GITHUB_TOKEN: ` 14 + 1 = 21.
            error("literal-secret", "servers.yaml", 7, 21),
            // `      Authorization: "Bearer sk-…"`: 6 + `Authorization: ` 15 + 1 = 22.
            error("literal-secret", "servers.yaml", 12, 22),
        ],
    );
}

#[test]
fn invalid_env_reference() {
    // `      GITHUB_TOKEN: "${env:GITHUB-TOKEN}"`: the value at column 21.
    check(
        "invalid-env-reference",
        &[error("invalid-env-reference", "servers.yaml", 7, 21)],
    );
}

// ── the list of codes ───────────────────────────────────────────────────────

/// Every code, in `Code::ALL` order. Renaming or removing one is a breaking change.
const CODES: &[&str] = &[
    "yaml-syntax",
    "yaml-budget",
    "yaml-tag",
    "unreadable-file",
    "duplicate-key",
    "unknown-field",
    "missing-field",
    "invalid-type",
    "invalid-value",
    "unsupported-version",
    "duplicate-tool",
    "duplicate-id",
    "settings-conflict",
    "missing-reason",
    "cel-syntax",
    "cel-too-large",
    "cel-cost",
    "cel-unknown-variable",
    "cel-unknown-function",
    "invalid-glob",
    "invalid-regex",
    "invalid-schema",
    "stray-schema-key",
    "sandbox-allows",
    "relax-tightens",
    "relax-on-deny",
    "relax-noop",
    "unknown-tool-pattern",
    "unknown-arg",
    "unguarded-optional-arg",
    "example-mismatch",
    "invalid-call",
    "literal-secret",
    "invalid-env-reference",
    "invalid-effect",
    "unknown-list",
    "duplicate-list",
    "invalid-command",
    "command-replaced",
    "cel-unknown-field",
    "type-mismatch",
    "unknown-tag",
    "unknown-reason-code",
];

/// Codes that no file can produce, with the reason. Every code has a fixture today.
const NO_FIXTURE: &[(&str, &str)] = &[];

/// The warnings; every other code is an error.
const WARNINGS: &[&str] = &[
    "stray-schema-key",
    "relax-noop",
    "unguarded-optional-arg",
    "command-replaced",
    "unknown-reason-code",
];

#[test]
fn every_code_is_listed() {
    let names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names, CODES);
    for c in Code::ALL {
        assert_eq!(Code::parse(c.as_str()), Some(*c), "{c} parses back");
        let expected = if WARNINGS.contains(&c.as_str()) {
            Severity::Warning
        } else {
            Severity::Error
        };
        assert_eq!(c.severity(), expected, "severity of {c}");
    }
}

#[test]
fn every_code_has_a_fixture_folder() {
    let mut missing = Vec::new();
    for c in Code::ALL {
        let name = c.as_str();
        let has_dir = fixtures().join(name).is_dir();
        let excluded = NO_FIXTURE.iter().any(|(n, _)| *n == name);
        assert!(
            !(has_dir && excluded),
            "`{name}` has a fixture and is excluded"
        );
        if !has_dir && !excluded {
            missing.push(name);
        }
    }
    assert_eq!(
        missing,
        Vec::<&str>::new(),
        "codes without a fixture folder"
    );
    // And no folder is named for a code that does not exist.
    let mut strays = Vec::new();
    for entry in std::fs::read_dir(fixtures()).expect("the fixtures folder") {
        let name = entry
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        if Code::parse(&name).is_none() {
            strays.push(name);
        }
    }
    assert_eq!(
        strays,
        Vec::<String>::new(),
        "fixture folders that are not codes"
    );
}

#[test]
fn every_fixture_file_starts_with_version_1() {
    for c in Code::ALL {
        let Ok(entries) = std::fs::read_dir(fixtures().join(c.as_str())) else {
            continue;
        };
        let mut files = 0;
        for entry in entries {
            let path = entry.expect("an entry").path();
            // Read as bytes: the `unreadable-file` fixture is not UTF-8 on purpose.
            let bytes = std::fs::read(&path).expect("a readable fixture");
            let text = String::from_utf8_lossy(&bytes);
            files += 1;
            match (c.as_str(), path.file_name().and_then(|n| n.to_str())) {
                // These two are about the version line itself.
                ("missing-field", Some("policy.yaml")) => {
                    assert!(!text.contains("version:"), "{}", path.display());
                }
                ("unsupported-version", Some("policy.yaml")) => {
                    assert!(text.starts_with("version: 2\n"), "{}", path.display());
                }
                _ => assert!(text.starts_with("version: 1\n"), "{}", path.display()),
            }
        }
        assert!(files >= 1, "{} is empty", c.as_str());
    }
}

#[test]
fn explain_prints_each_description() {
    for c in Code::ALL {
        let out = run(&["lint", "--explain", c.as_str()]);
        assert_eq!(out.status.code(), Some(0), "lint --explain {c}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{} ({}): {}\n", c.as_str(), c.severity(), c.description()),
            "lint --explain {c}"
        );
    }
}

#[test]
fn explain_of_an_unknown_code_exits_2() {
    let out = run(&["lint", "--explain", "no-such-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`no-such-code`"), "stderr: {stderr}");
}

#[test]
fn a_path_that_does_not_exist_exits_2() {
    for format in ["human", "json", "sarif", "github"] {
        let out = run(&[
            "lint",
            "--format",
            format,
            "tests/fixtures/lint/no-such-folder",
        ]);
        assert_eq!(out.status.code(), Some(2), "--format {format}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("tests/fixtures/lint/no-such-folder"),
            "--format {format}: {stderr}"
        );
    }
}

#[test]
fn every_fixture_produces_only_its_own_code() {
    // A cheap cross-check of the per-code tests above: no fixture folder leaks
    // a second code (for example an `unknown-tool-pattern` next to the one it tests).
    for c in Code::ALL {
        if !fixtures().join(c.as_str()).is_dir() {
            continue;
        }
        let linted = lint_json(c.as_str(), &[]);
        let codes: Vec<&str> = linted.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert!(!codes.is_empty(), "{c} produced nothing");
        assert!(
            codes.iter().all(|x| *x == c.as_str()),
            "{c} produced {codes:?}"
        );
    }
}

#[test]
fn docs_describe_every_code_in_order() {
    let text =
        std::fs::read_to_string(root().join("docs/diagnostics.md")).expect("docs/diagnostics.md");
    let headings: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## `"))
        .filter_map(|l| l.strip_suffix('`'))
        .collect();
    assert_eq!(
        headings, CODES,
        "the `## `code`` headings of docs/diagnostics.md"
    );
    for c in Code::ALL {
        let heading = format!("## `{}`\n", c.as_str());
        let start = text.find(&heading).expect("a section") + heading.len();
        let section = text[start..].split("\n## ").next().unwrap_or_default();
        assert!(
            section.contains(&format!("**Severity:** {}", c.severity())),
            "severity of {c} in the docs"
        );
        assert!(
            section.contains(c.description()),
            "the docs of {c} quote its description"
        );
        assert!(
            section.contains("```yaml"),
            "the docs of {c} have an example"
        );
        assert!(
            section.contains("**Fix:**"),
            "the docs of {c} say how to fix it"
        );
    }
}

#[test]
fn effects_lists_and_commands_codes_point_at_their_place() {
    // Lines and columns counted by hand in each fixture.
    type Places = &'static [(&'static str, usize, usize)];
    let cases: &[(&str, Places)] = &[
        ("invalid-effect", &[("invalid-effect", 14, 18)]),
        ("unknown-list", &[("unknown-list", 6, 49)]),
        ("duplicate-list", &[("duplicate-list", 3, 11)]),
        (
            "invalid-command",
            &[("invalid-command", 3, 11), ("invalid-command", 3, 11)],
        ),
        ("command-replaced", &[("command-replaced", 3, 11)]),
    ];
    for (folder, want) in cases {
        let linted = lint_json(folder, &[]);
        let got: Vec<(&str, usize, usize)> = linted
            .diagnostics
            .iter()
            .map(|d| (d.code.as_str(), d.line as usize, d.column as usize))
            .collect();
        assert_eq!(&got, want, "{folder}");
    }
}
