//! Tables for the CEL layer: the function library through real evaluation,
//! compile-time checks and their positions, and fail-closed run-time errors.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::sync::Arc;

use super::*;

static NO_LISTS: std::sync::LazyLock<
    std::sync::Arc<std::collections::BTreeMap<String, Vec<String>>>,
> = std::sync::LazyLock::new(|| std::sync::Arc::new(std::collections::BTreeMap::new()));

fn cx() -> CompileCtx<'static> {
    CompileCtx {
        lists: &NO_LISTS,
        allow_call: true,
        case_insensitive: false,
    }
}

fn eval_with(src: &str, args: serde_json::Value, workspace: &str) -> Result<bool, String> {
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    let expr = env
        .compile(src, &mut cache, &cx())
        .map_err(|e| format!("compile: {e:?}"))?;
    let cache = Arc::new(cache);
    let root = env
        .root_context(&cache, &Default::default(), false)
        .unwrap();
    let vars = Vars {
        tool: ::cel::to_value(serde_json::json!({"name": "bash", "scope": "shell"})).unwrap(),
        args: json::to_cel(&args),
        session: ::cel::to_value(serde_json::json!({"mode": "ask", "workspace": workspace}))
            .unwrap(),
        workspace: Value::String(Arc::new(workspace.to_string())),
    };
    Scope::new(&root, &vars).eval_bool(&expr)
}

fn eval(src: &str, args: serde_json::Value) -> Result<bool, String> {
    eval_with(src, args, "/home/dev/project")
}

#[test]
fn glob_table() {
    let cases = [
        (r#"glob("**/.env*", "/repo/.env")"#, true),
        (r#"glob("**/.env*", "/repo/sub/.env.local")"#, true),
        (r#"glob("**/.env*", "/repo/environment")"#, false),
        (r#"glob("/repo/*.rs", "/repo/main.rs")"#, true),
        (r#"glob("/repo/*.rs", "/repo/src/main.rs")"#, false),
        (r#"glob("/etc/**", "/etc/passwd")"#, true),
        (r#"glob("**/.ssh/**", "/home/u/.ssh/id_rsa")"#, true),
        (r#"glob("*.pem", "key.pem")"#, true),
        (
            r#"["**/.env", "**/*.pem"].exists(p, glob(p, "/a/b.pem"))"#,
            true,
        ),
    ];
    for (src, want) in cases {
        assert_eq!(eval(src, serde_json::json!({})), Ok(want), "{src}");
    }
}

#[test]
fn path_functions_table() {
    let cases = [
        (r#"path_clean("/a/./b/../c") == "/a/c""#, true),
        (r#"path_clean("a/../../b") == "../b""#, true),
        (r#"path_under("src/main.rs", session.workspace)"#, true),
        (r#"path_under("../other/x", session.workspace)"#, false),
        (
            r#"path_under("/home/dev/project/../../etc/passwd", session.workspace)"#,
            false,
        ),
        (
            r#"path_under("/home/dev/projectile", session.workspace)"#,
            false,
        ),
        (r#"path_under("/tmp/x", "/tmp")"#, true),
        (r#"path_under(args.path, session.workspace)"#, true),
    ];
    for (src, want) in cases {
        assert_eq!(
            eval(src, serde_json::json!({"path": "docs/a.md"})),
            Ok(want),
            "{src}"
        );
    }
}

#[test]
fn relative_paths_are_taken_from_the_session_workspace() {
    let src = r#"path_under("notes.txt", "/srv/app")"#;
    assert_eq!(eval_with(src, serde_json::json!({}), "/srv/app"), Ok(true));
    assert_eq!(
        eval_with(src, serde_json::json!({}), "/home/dev"),
        Ok(false)
    );
}

/// Shell tricks through CEL: what `shell_commands` reports, and where it refuses.
#[test]
fn shell_commands_table() {
    let all_git = r#"shell_commands(args.command).all(c, c.size() >= 2 && c[0] == "git")"#;
    let any_rm = r#"shell_commands(args.command).exists(c, c[0] == "rm")"#;
    let cases: &[(&str, &str, Result<bool, ()>)] = &[
        (all_git, "git status", Ok(true)),
        (all_git, "git status && git log", Ok(true)),
        (all_git, "git status && rm -rf /", Ok(false)),
        (all_git, "git status; rm -rf /", Ok(false)),
        (all_git, "git log | rm -rf /", Ok(false)),
        (all_git, "git status\nrm -rf /", Ok(false)),
        (all_git, "git status || (rm -rf /)", Ok(false)),
        (any_rm, "echo hi && rm -rf /", Ok(true)),
        (any_rm, "echo 'rm -rf /'", Ok(false)),
        (any_rm, "sh -c 'rm -rf /'", Ok(true)),
        (any_rm, "bash -c \"git status; rm -rf /\"", Ok(true)),
        // Expansions are not literal: the function errors, so callers fail closed.
        (all_git, "git $(printf status)", Err(())),
        (all_git, "git `whoami`", Err(())),
        (all_git, "$(printf git) status", Err(())),
        (all_git, "git log $BRANCH", Err(())),
        (all_git, "git log > ~/.bashrc", Err(())),
        (any_rm, "rm -rf *", Err(())),
        (any_rm, "'unterminated", Err(())),
    ];
    for (src, script, want) in cases {
        let got = eval(src, serde_json::json!({"command": script})).map_err(|_| ());
        assert_eq!(&got, want, "{src} on {script:?}");
    }
    assert_eq!(
        eval(
            r#"shell_parses(args.command)"#,
            serde_json::json!({"command": "git log $X"})
        ),
        Ok(false)
    );
    assert_eq!(
        eval(
            r#"shell_commands(args.command) == [["git", "log", "--format=%h %s"]]"#,
            serde_json::json!({"command": "git log --format='%h %s'"})
        ),
        Ok(true)
    );
}

#[test]
fn matches_uses_regexes_compiled_at_load() {
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    let expr = env
        .compile(r#"args.s.matches("^a+b$")"#, &mut cache, &cx())
        .unwrap();
    assert_eq!(expr.regexes, ["^a+b$"]);
    assert_eq!(
        eval(
            r#"args.s.matches("^a+b$")"#,
            serde_json::json!({"s": "aab"})
        ),
        Ok(true)
    );
    assert_eq!(
        eval(
            r#"matches(args.s, "^a+b$")"#,
            serde_json::json!({"s": "abc"})
        ),
        Ok(false)
    );
}

#[test]
fn run_time_errors_are_errors_not_false() {
    // A missing key, a wrong type, a non-bool result: each is an error the caller fails closed on.
    assert!(eval("args.missing == 1", serde_json::json!({})).is_err());
    assert!(eval("args.n > 3", serde_json::json!({"n": "x"})).is_err());
    assert!(eval("args.n", serde_json::json!({"n": 1})).is_err());
    assert_eq!(eval("has(args.missing)", serde_json::json!({})), Ok(false));
}

fn compile_errors(src: &str) -> Vec<(ExprErrorKind, String)> {
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    match env.compile(src, &mut cache, &cx()) {
        Ok(_) => Vec::new(),
        Err(errs) => errs
            .into_iter()
            .map(|e| (e.kind, src[e.start..e.end].to_string()))
            .collect(),
    }
}

#[test]
fn compile_time_checks_point_inside_the_expression() {
    assert_eq!(
        compile_errors("args.x == 1 && request.path == 2"),
        [(ExprErrorKind::UnknownVariable, "request".to_string())]
    );
    assert_eq!(
        compile_errors(r#"args.x && shell_command(args.c)"#),
        [(ExprErrorKind::UnknownFunction, "shell_command".to_string())]
    );
    assert_eq!(
        compile_errors(r#"glob("[", args.path)"#),
        [(ExprErrorKind::InvalidGlob, "\"[\"".to_string())]
    );
    assert_eq!(
        compile_errors(r#"args.p.matches("(")"#),
        [(ExprErrorKind::InvalidRegex, "\"(\"".to_string())]
    );
    let syntax = compile_errors("args.x == ");
    assert_eq!(syntax.len(), 1);
    assert_eq!(syntax[0].0, ExprErrorKind::Syntax);
    // Comprehension variables are not unknown variables.
    assert!(compile_errors(r#"args.l.all(x, x > 1) && [1].exists(y, y == 1)"#).is_empty());
}

#[test]
fn arg_reads_are_recorded_with_guards() {
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    let src = r#"has(args.path) && args.path.startsWith("/") && args["mode"] == "x""#;
    let expr = env.compile(src, &mut cache, &cx()).unwrap();
    let reads = expr.arg_reads();
    let placed: Vec<(&str, &str)> = reads
        .iter()
        .map(|r| (r.key.as_str(), &src[r.start..r.end]))
        .collect();
    assert_eq!(placed, [("path", "args.path"), ("mode", "args[\"mode\"]")]);
    assert_eq!(expr.arg_keys().collect::<Vec<_>>(), ["path", "mode"]);
    assert!(expr.guarded.contains("path"));
    assert!(!expr.guarded.contains("mode"));
}

#[test]
fn the_step_budget_fails_closed() {
    // 100 × 100 × 40 iterations: within the load-time cost estimate (about
    // 8×10^6 of its 10^7 steps), but more steps than the planned evaluator's
    // run-time budget allows.
    let list = |n: usize| {
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (hundred, forty) = (list(100), list(40));
    let src = format!("[{hundred}].all(a, [{hundred}].all(b, [{forty}].all(c, a + b + c > 0)))");
    let err = eval(&src, serde_json::json!({})).unwrap_err();
    assert!(
        err.contains("more steps than the evaluation budget"),
        "{err}"
    );
    // The same shape, small, is evaluated.
    assert_eq!(
        eval(
            "[1, 2].all(a, [3].all(b, a + b > 0))",
            serde_json::json!({})
        ),
        Ok(true)
    );
}

#[test]
fn the_size_budget_fails_closed() {
    let big = "x".repeat(plan::MAX_STRING / 2 + 1);
    let err = eval(
        "(args.s + args.s).size() > 0",
        serde_json::json!({"s": big}),
    )
    .unwrap_err();
    assert!(
        err.contains("a string longer than the evaluation budget"),
        "{err}"
    );
    let err = eval(
        "(args.l + args.l).size() > 0",
        serde_json::json!({"l": vec![1; plan::MAX_LIST / 2 + 1]}),
    )
    .unwrap_err();
    assert!(
        err.contains("a list longer than the evaluation budget"),
        "{err}"
    );
    assert_eq!(
        eval(
            "(args.s + args.s).size() == 4",
            serde_json::json!({"s": "ab"})
        ),
        Ok(true)
    );
}

#[test]
fn planned_and_not_planned_expressions_are_told_apart() {
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    let planned = env
        .compile("args.path.startsWith(\"/tmp\")", &mut cache, &cx())
        .unwrap();
    assert_eq!(planned.not_planned(), None);
    let not = env.compile("{\"a\": 1}.a == 1", &mut cache, &cx()).unwrap();
    assert_eq!(not.not_planned(), Some("map literals"));
    // Either way the value is the same.
    assert_eq!(eval("{\"a\": 1}.a == 1", serde_json::json!({})), Ok(true));
}

/// `[literal globs].exists(p, glob(p, X))` is planned as one set of the
/// globs compiled at load, and decides as the fold does.
#[test]
fn a_literal_glob_fold_is_one_set() {
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    let src = r#"["**/.env", "**/*.pem", "/etc/**"].exists(p, glob(p, args.path))"#;
    let expr = env.compile(src, &mut cache, &cx()).unwrap();
    let plan = expr.plan.as_ref().unwrap();
    assert!(
        matches!(plan.root(), plan::Node::GlobAny(..)),
        "{:?}",
        plan.root()
    );
    for (path, want) in [("/a/b.pem", true), ("/etc/x/y", true), ("/a/.envrc", false)] {
        assert_eq!(
            eval(src, serde_json::json!({"path": path})),
            Ok(want),
            "{path}"
        );
    }
}

#[test]
fn json_integers_are_ints_in_rules() {
    let args = serde_json::json!({"n": 4, "l": ["a", "b"], "big": 18_446_744_073_709_551_615_u64});
    for src in [
        "args.n + 1 == 5",
        "args.n % 2 == 0",
        "size(args.l) + args.n == 6",
        "args.n - 5 == -1",
        "args.n > 3.5",
        "args.big == 18446744073709551615u",
    ] {
        assert_eq!(eval(src, args.clone()), Ok(true), "{src}");
    }
    // Through the JSON path the dispatcher takes, planned and not.
    let env = CelEnv::new();
    let mut cache = PatternCache::default();
    let expr = env
        .compile("args.n + 1 == 5 && args.n % 2 == 0", &mut cache, &cx())
        .unwrap();
    let root = env
        .root_context(&Arc::new(cache), &Default::default(), false)
        .unwrap();
    let vars = Vars {
        tool: Value::Null,
        args: Value::Null,
        session: Value::Null,
        workspace: Value::String(Arc::new("/".to_string())),
    };
    let scope = Scope::with_json_args(&root, &vars, &args);
    assert_eq!(scope.eval_bool(&expr), Ok(true));
    assert_eq!(scope.eval_reference(&expr), Ok(Value::Bool(true)));
}

#[test]
fn type_errors_name_the_field_and_the_operand_types() {
    let errors = |src: &str| {
        CelEnv::new()
            .compile(src, &mut PatternCache::default(), &cx())
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.kind, src[e.start..e.end].to_string(), e.message, e.help))
            .collect::<Vec<_>>()
    };
    let e = errors(r#"call.commands.exists(c, c.progam == "rm")"#);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, ExprErrorKind::UnknownField);
    assert_eq!(e[0].1, "progam");
    assert_eq!(e[0].3.as_deref(), Some("did you mean `program`?"));
    let e = errors(r#"session.mod == "plan""#);
    assert_eq!(
        (e[0].0, e[0].1.as_str()),
        (ExprErrorKind::UnknownField, "mod")
    );
    assert_eq!(e[0].3.as_deref(), Some("did you mean `mode`?"));
    for (src, mark) in [
        ("session.mode + 1 == 2", "+"),
        (r#""rm" in call.commands[0].program"#, "in"),
        (r#"call.exact == "yes""#, "=="),
        ("size(call.exact) > 0", "size"),
        (r#"glob("**/.env")"#, "glob"),
        (
            r#"call.commands.exists(c, c.argv.startsWith("x"))"#,
            "startsWith",
        ),
    ] {
        let e = errors(src);
        assert_eq!(e.len(), 1, "{src}: {e:?}");
        assert_eq!(e[0].0, ExprErrorKind::TypeMismatch, "{src}");
        assert!(e[0].1.starts_with(mark), "{src}: marks {:?}", e[0].1);
    }
    // What depends on `args` is dynamic; well-typed uses of the variables pass.
    for src in [
        "args.n + 1 == 2 && args.s.startsWith(args.t)",
        r#"call.fetches.exists(f, f.port == 443 || f.port == null)"#,
        r#"call.commands.all(c, c.program in ["ls", "cat"] && size(c.argv) < 10)"#,
        r#"session.labels.team == "x" && "write" in session.scopes"#,
        "tool.name.matches('^git') && !tool.deferred",
        "lists.size() >= 0",
    ] {
        assert_eq!(errors(src), [], "{src}");
    }
}

#[test]
fn cel_spec_nesting_is_accepted_and_the_limit_is_stated() {
    let parens = |n: usize| format!("{}true{}", "(".repeat(n), ")".repeat(n));
    let ternary = format!("{}false", "true ? true : ".repeat(24));
    let calls = format!("{}7{} == 7", "int(uint(".repeat(6), "))".repeat(6));
    let lists = format!("size({}0{}) == 1", "[".repeat(12), "]".repeat(12));
    for src in [
        parens(32),
        format!("{}true", "!".repeat(32)),
        format!("{}19 == 19", "-".repeat(32)),
        ternary,
        calls,
        lists,
    ] {
        // Parsed and evaluated on a test thread's stack.
        assert_eq!(eval(&src, serde_json::json!({})), Ok(true), "{src}");
    }
    let e = CelEnv::new()
        .compile(&parens(33), &mut PatternCache::default(), &cx())
        .unwrap_err();
    assert_eq!(e[0].kind, ExprErrorKind::TooLarge);
    assert!(
        e[0].message.contains("more than 32 levels"),
        "{}",
        e[0].message
    );
}

/// The language features and extensions beyond the standard library, through
/// compile (with the type check and the cost estimate) and evaluation.
#[test]
fn extensions_table() {
    let cases = [
        // Timestamps and durations.
        (r#"timestamp("2024-01-02T03:04:05Z").getHours() == 3"#, true),
        (
            r#"timestamp("2024-01-02T03:04:05Z").getHours("America/New_York") == 22"#,
            true,
        ),
        (
            r#"timestamp("2024-01-02T03:04:05Z") + duration("1h") > timestamp("2024-01-02T04:00:00Z")"#,
            true,
        ),
        (r#"duration("1h30m").getMinutes() == 90"#, true),
        (r#"duration("1.5s").getMilliseconds() == 500"#, true),
        (
            r#"timestamp("2024-01-02T03:04:05.250Z").getMilliseconds() == 250"#,
            true,
        ),
        // Optionals.
        (r#"args.?missing.orValue("d") == "d""#, true),
        (r#"args.?n.hasValue()"#, true),
        (
            r#"optional.of(1).value() == 1 && !optional.none().hasValue()"#,
            true,
        ),
        (r#"[1, ?optional.none(), 2] == [1, 2]"#, true),
        (r#"args.?n.optMap(x, x + 1).orValue(0) == 4"#, true),
        (r#"!args.?m.optMap(x, x + 1).hasValue()"#, true),
        (
            r#"optional.of(2).optFlatMap(x, optional.of(x * 2)).value() == 4"#,
            true,
        ),
        (
            r#"!optional.of(2).optFlatMap(x, optional.none()).hasValue()"#,
            true,
        ),
        // Two-variable comprehensions and cel.bind.
        (r#"[10, 20].all(i, v, v == (i + 1) * 10)"#, true),
        (r#"{"a": 1, "b": 2}.exists(k, v, k == "b" && v == 2)"#, true),
        (r#"{"a": 1, "b": 2}.existsOne(k, v, v > 1)"#, true),
        (
            r#"[1, 2, 3].transformList(i, v, i > 0, v * 2) == [4, 6]"#,
            true,
        ),
        (r#"{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}"#, true),
        (r#"cel.bind(x, args.n * 2, x + x) == 12"#, true),
        // math, base64, strings, lists.
        (
            r#"math.greatest(1, args.n, 2) == 3 && math.least([4, 2]) == 2"#,
            true,
        ),
        (
            r#"math.abs(-2) == 2 && math.bitOr(1, 2) == 3 && math.isNaN(0.0 / 0.0)"#,
            true,
        ),
        (
            r#"base64.encode(b"hi") == "aGk=" && base64.decode("aGk=") == b"hi""#,
            true,
        ),
        (r#"strings.quote("a\nb") == "\"a\\nb\"""#, true),
        (
            r#"[[1], [2, 3]].flatten() == [1, 2, 3] && [3, 1, 3].distinct().sort() == [1, 3]"#,
            true,
        ),
        (
            r#"[1, 2, 3].slice(1, 3) == [2, 3] && [1, 2].reverse() == [2, 1]"#,
            true,
        ),
        (r#"type(1) == int"#, true),
        (r#"[3, 1, 2].sortBy(x, -x) == [3, 2, 1]"#, true),
    ];
    for (src, want) in cases {
        assert_eq!(eval(src, serde_json::json!({"n": 3})), Ok(want), "{src}");
    }
}

/// An error in the new functions fails closed: an error, never a value.
#[test]
fn extension_errors_fail_closed() {
    for src in [
        r#"timestamp("not a time") > timestamp("2024-01-01T00:00:00Z")"#,
        r#"base64.decode("!!!") == b"""#,
        r#"args.n.all(k, v, true)"#,
        r#"{"a": 1}.transformMap(k, v, v).a == duration("x")"#,
    ] {
        assert!(eval(src, serde_json::json!({"n": 3})).is_err(), "{src}");
    }
}

/// `lists.range` stays refused (a list of any length, unbounded for the
/// cost estimate); misspelled namespace functions are unknown.
#[test]
fn unknown_namespace_functions_are_refused() {
    let env = CelEnv::new();
    for (src, kind) in [
        ("size(lists.range(3)) == 3", ExprErrorKind::UnknownFunction),
        ("math.absolute(1) == 1", ExprErrorKind::UnknownVariable),
    ] {
        let errs = env
            .compile(src, &mut PatternCache::default(), &cx())
            .unwrap_err();
        assert!(errs.iter().any(|e| e.kind == kind), "{src}: {errs:?}");
    }
}

/// The macros the Pratt parser does not know send the source to the parser
/// that does, so a restored expression is parsed to the same expanded tree.
#[test]
fn other_macros_are_not_parsed_fast() {
    for src in [
        "[1].all(i, v, v > 0)",
        "cel.bind(x, 1, x)",
        "math.greatest(1, 2)",
        "duration('1s').getMilliseconds()",
    ] {
        assert!(parse_fast(src).is_none(), "{src}");
    }
    assert!(parse_fast("[1].all(v, v > 0)").is_some());
}

/// Backtick-quoted field names (cel-spec's escaped identifiers) select map
/// keys that are not identifiers, test them with `has`, read `args`, and
/// place a misspelt field's error on the quoted name.
#[test]
fn backtick_field_names() {
    for (src, want) in [
        (r#"{"content-type": "a"}.`content-type` == "a""#, true),
        (r#"has({"a.b": 1}.`a.b`) && !has({"a.b": 1}.`a/b`)"#, true),
        (r#"args.`x-y` == 2 && args.`a b`.c == 1"#, true),
        (r#"args.?`x-y`.orValue(0) == 2"#, true),
    ] {
        assert_eq!(
            eval(src, serde_json::json!({"x-y": 2, "a b": {"c": 1}})),
            Ok(want),
            "{src}"
        );
    }
    // A missing quoted key is a run-time error: the rule fails closed.
    assert!(eval("args.`no-such` == 1", serde_json::json!({})).is_err());
    let src = "session.`mod` == 'ask'";
    let errs = CelEnv::new()
        .compile(src, &mut PatternCache::default(), &cx())
        .unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].kind, ExprErrorKind::UnknownField);
    assert_eq!(&src[errs[0].start..errs[0].end], "`mod`");
    assert_eq!(errs[0].help.as_deref(), Some("did you mean `mode`?"));
    let src = "args.`x-y` == 2";
    let expr = CelEnv::new()
        .compile(src, &mut PatternCache::default(), &cx())
        .unwrap();
    let reads = expr.arg_reads();
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0].key, "x-y");
    assert_eq!(&src[reads[0].start..reads[0].end], "args.`x-y`");
    // Only the characters cel-spec allows may be quoted.
    assert_eq!(
        compile_errors("args.`a+b` == 1").first().map(|e| e.0),
        Some(ExprErrorKind::Syntax)
    );
}

/// A map literal's keys have their own type: a comprehension over it
/// ranges over them (cel-spec's `map_one`, `map_key_type_*`).
#[test]
fn map_literal_keys_are_typed() {
    for src in [
        r#"{6: "six", 7: "seven", 8: "eight"}.exists_one(k, k % 5 == 2)"#,
        r#"{"key": 1, 1: 21}.exists(k, k != 2)"#,
        r#"{true: 1}.all(k, k)"#,
    ] {
        assert_eq!(eval(src, serde_json::json!({})), Ok(true), "{src}");
    }
    // Keys of one type are held to it.
    assert_eq!(
        compile_errors(r#"{1: "a"}.exists(k, k.startsWith("a"))"#)
            .first()
            .map(|e| e.0),
        Some(ExprErrorKind::TypeMismatch)
    );
}

/// Type values: `type(x)` and the type names compare with each other, and
/// the check refuses what can never hold (`type(x) == "int"`: a type is not
/// its name) or never evaluate (`int < string`).
#[test]
fn type_values_are_types_not_names() {
    for (src, want) in [
        ("type(args.n) == int && type(args.s) == string", true),
        ("type(args.n) != uint && type(int) == type", true),
        ("[int, string].exists(t, t == type(args.s))", true),
        ("type(args.l) == list && type(args.m) == map", true),
        ("type(null) == null_type && type(1.5) == double", true),
        ("type(optional.of(1)) == optional_type", true),
        ("type(dyn(args.n)) == int", true),
    ] {
        assert_eq!(
            eval(src, serde_json::json!({"n": 3, "s": "x", "l": [], "m": {}})),
            Ok(want),
            "{src}"
        );
    }
    for (src, mark) in [
        (r#"type(args.n) == "int""#, "=="),
        ("int < string", "<"),
        ("int + 1 == 2", "+"),
        ("size(int) == 0", "size"),
        ("{int: 1}[type(args.n)] == 1", "int"),
        ("{1.5: 1}[args.n] == 1", "1.5"),
    ] {
        let e = compile_errors(src);
        assert_eq!(e.len(), 1, "{src}: {e:?}");
        assert_eq!(e[0].0, ExprErrorKind::TypeMismatch, "{src}");
        assert!(e[0].1.starts_with(mark), "{src}: marks {:?}", e[0].1);
    }
    // `dyn` is a conversion, not a type value.
    assert_eq!(
        compile_errors("type(1) == dyn").first().map(|e| e.0),
        Some(ExprErrorKind::UnknownVariable)
    );
}

/// `cel.block`: each slot bound in order, `cel.index(i)` reading slot `i`;
/// a slot read before it is made, a nested block and cel-go's `cel.iterVar`
/// are load errors.
#[test]
fn cel_block_binds_its_slots_in_order() {
    for (src, want) in [
        (
            "cel.block([args.n * 2, cel.index(0) + 1], cel.index(1) == 7)",
            true,
        ),
        (
            r#"cel.block([{"a": args.n}, cel.index(0)["a"]], cel.index(1) * cel.index(1) == 9)"#,
            true,
        ),
        (
            "cel.block([[1, 2, 3]], cel.index(0).map(x, x + 1) == [2, 3, 4])",
            true,
        ),
        (
            "cel.block([optional.of(args.n)], cel.index(0).orValue(0) == 3)",
            true,
        ),
    ] {
        assert_eq!(eval(src, serde_json::json!({"n": 3})), Ok(want), "{src}");
        assert!(parse_fast(src).is_none(), "{src}");
    }
    // A failing slot fails the expression (closed), read or not.
    assert!(eval("cel.block([1 / 0], true)", serde_json::json!({})).is_err());
    for (src, marks) in [
        ("cel.block([cel.index(0)], true)", "("),
        ("cel.block([1], cel.index(1) == 1)", "("),
        ("cel.block([1], cel.block([2], cel.index(0) == 2))", "("),
        ("cel.block(args.l, true)", "."),
        (
            "cel.block([[1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 0)], cel.index(0))",
            "cel.iterVar",
        ),
    ] {
        let e = compile_errors(src);
        assert_eq!(
            e.first().map(|e| e.0),
            Some(ExprErrorKind::Syntax),
            "{src}: {e:?}"
        );
        assert!(e[0].1.starts_with(marks), "{src}: {e:?}");
    }
    // `cel.index` outside a block names no variable.
    assert_eq!(
        compile_errors("cel.index(0) == 1").first().map(|e| e.0),
        Some(ExprErrorKind::UnknownVariable)
    );
}
