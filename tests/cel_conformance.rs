//! The CEL specification's conformance tests (google/cel-spec
//! `tests/simple/testdata`, vendored as JSON under tests/fixtures/cel-spec by
//! its `generate.sh`) run through zero-policy's CEL compiler, type check and
//! evaluator, the path every `when` takes.
//!
//! Each test's expression is compiled as a rule's expression is; its
//! variables (`bindings`) are given as `args`, so `x + y` runs as
//! `args.x + args.y`. A test passes when it gives the expected value, or, when
//! it expects an error, when it fails at load or at run time (an expression
//! that fails is refused at load or fails closed, never a value). Tests that
//! need what zero-policy has no use for (protobuf messages and enums, type
//! deduction output, unknowns) are skipped, each with the reason.
//!
//! Tests that cel-spec runs with its type check off (`disableCheck`) and
//! that expect a value from an expression zero-policy's check refuses (an
//! unbound name, `false && 32`) are counted apart: zero-policy checks every
//! expression at load, so they stay refused by design.
//!
//! The test prints the counts per file and section, and fails when a file
//! passes fewer tests than [`HELD`] holds, or gives a wrong value or no error
//! where it expected one in more tests than it holds.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use base64::Engine as _;
use cel::Value;
use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::Value as Json;
use zero_policy::cel::{CelEnv, CompileCtx, ExprErrorKind, PatternCache, Scope, Vars};

/// Per file: the tests that must pass at least, and the tests that may give
/// a wrong value (or a value where an error was expected) at most.
const HELD: &[(&str, usize, usize)] = &[
    ("basic", 41, 0),
    ("bindings_ext", 5, 0),
    ("block_ext", 17, 0),
    ("comparisons", 333, 0),
    ("conversions", 109, 0),
    ("dynamic", 0, 0),
    ("encoders_ext", 4, 0),
    ("enums", 0, 0),
    ("fields", 55, 0),
    ("fp_math", 30, 0),
    ("integer_math", 64, 0),
    ("lists", 39, 0),
    ("logic", 26, 0),
    ("macros", 44, 0),
    ("macros2", 46, 0),
    ("math_ext", 199, 0),
    ("namespace", 0, 0),
    ("optionals", 59, 0),
    ("parse", 176, 0),
    ("plumbing", 5, 0),
    ("proto2", 0, 0),
    ("proto2_ext", 0, 0),
    ("proto3", 0, 0),
    ("string", 51, 0),
    ("string_ext", 206, 0),
    ("timestamps", 74, 0),
    ("type_deductions", 0, 0),
    ("unknowns", 0, 0),
    ("wrappers", 0, 0),
];

/// How one test went.
#[derive(Debug)]
enum Outcome {
    Pass,
    /// Refused at load, where a value was expected.
    Refused(String),
    /// Refused at load by a check cel-spec turns off for the test
    /// (`disableCheck`: an unbound name, `false && 32`), where it expects
    /// the evaluator to give a value: zero-policy checks every expression at
    /// load (docs/cel.md), so these stay refused, counted apart.
    Unchecked(String),
    /// A run-time error, where a value was expected.
    Error(String),
    /// A different value.
    Wrong(String),
    /// A value, where an error was expected.
    NoError(String),
    Skipped(&'static str),
}

/// Why a test is not run, if it is not.
fn skip_reason(test: &Json) -> Option<&'static str> {
    if test.get("checkOnly").and_then(Json::as_bool) == Some(true) {
        return Some("checks types only, evaluates nothing");
    }
    if test.get("typedResult").is_some() {
        return Some("expects a deduced type (type-checker output)");
    }
    if test
        .get("container")
        .and_then(Json::as_str)
        .is_some_and(|c| !c.is_empty())
    {
        return Some("names protobuf types through a container");
    }
    let text = test.to_string();
    let proto = [
        "TestAllTypes",
        "NestedTestAllTypes",
        "google.protobuf.",
        "cel.expr.conformance",
        "enumValue",
        "GlobalEnum",
        "NestedEnum",
        "messageType",
    ];
    if proto.iter().any(|p| text.contains(p))
        && !only_time_messages(test.get("value"))
        && !text.contains("google.protobuf.Timestamp")
        && !text.contains("google.protobuf.Duration")
    {
        return Some("needs protobuf messages or enums");
    }
    if proto[..4].iter().any(|p| {
        test.get("expr")
            .and_then(Json::as_str)
            .unwrap_or("")
            .contains(p)
    }) {
        return Some("needs protobuf messages or enums");
    }
    if test.get("bindings").is_some_and(|b| {
        b.as_object().is_some_and(|m| {
            m.keys().any(|k| k.contains('.')) || m.values().any(|v| v.get("value").is_none())
        })
    }) {
        return Some("binds qualified names, errors or unknowns");
    }
    None
}

/// Whether every message in an expected value is a Timestamp or a Duration.
fn only_time_messages(v: Option<&Json>) -> bool {
    let Some(v) = v else { return true };
    match v {
        Json::Object(m) => m.iter().all(|(k, v)| {
            if k == "objectValue" {
                v.get("@type").and_then(Json::as_str).is_some_and(|t| {
                    t.ends_with("google.protobuf.Timestamp")
                        || t.ends_with("google.protobuf.Duration")
                })
            } else {
                only_time_messages(Some(v))
            }
        }),
        Json::Array(a) => a.iter().all(|v| only_time_messages(Some(v))),
        _ => true,
    }
}

/// A cel-spec `Value` in its protobuf JSON form as a CEL value; `Err` for a
/// kind this harness cannot build.
fn to_value(v: &Json) -> Result<Value, String> {
    let obj = v.as_object().ok_or("a value is not an object")?;
    let (kind, x) = obj.iter().next().ok_or("an empty value")?;
    let num = |x: &Json| -> Result<String, String> {
        match x {
            Json::String(s) => Ok(s.clone()),
            Json::Number(n) => Ok(n.to_string()),
            _ => Err(format!("bad number {x}")),
        }
    };
    Ok(match kind.as_str() {
        "nullValue" => Value::Null,
        "boolValue" => Value::Bool(x.as_bool().ok_or("bad bool")?),
        "int64Value" => Value::Int(num(x)?.parse().map_err(|e| format!("{e}"))?),
        "uint64Value" => Value::UInt(num(x)?.parse().map_err(|e| format!("{e}"))?),
        "doubleValue" => Value::Float(match x {
            Json::String(s) if s == "NaN" => f64::NAN,
            Json::String(s) if s == "Infinity" => f64::INFINITY,
            Json::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
            other => num(other)?.parse().map_err(|e| format!("{e}"))?,
        }),
        "stringValue" => Value::String(Arc::new(x.as_str().ok_or("bad string")?.to_string())),
        "bytesValue" => Value::Bytes(Arc::new(
            base64::engine::general_purpose::STANDARD
                .decode(x.as_str().ok_or("bad bytes")?)
                .map_err(|e| e.to_string())?,
        )),
        "listValue" => {
            let items = x
                .get("values")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            Value::List(Arc::new(
                items.iter().map(to_value).collect::<Result<_, _>>()?,
            ))
        }
        "mapValue" => {
            let mut map = std::collections::HashMap::new();
            for e in x
                .get("entries")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default()
            {
                let key = match to_value(e.get("key").ok_or("entry without key")?)? {
                    Value::Int(i) => cel::objects::Key::Int(i),
                    Value::UInt(u) => cel::objects::Key::Uint(u),
                    Value::Bool(b) => cel::objects::Key::Bool(b),
                    Value::String(s) => cel::objects::Key::String(s),
                    other => return Err(format!("map key {other:?}")),
                };
                map.insert(key, to_value(e.get("value").ok_or("entry without value")?)?);
            }
            Value::Map(cel::objects::Map { map: Arc::new(map) })
        }
        // A type value leaves evaluation as the type's name; `run` checks
        // inside the language that it is the type ([`is_the_type`]).
        "typeValue" => Value::String(Arc::new(x.as_str().ok_or("bad type")?.to_string())),
        "objectValue" => return time_value(x),
        other => return Err(format!("a `{other}` value")),
    })
}

/// A `google.protobuf.Timestamp` or `Duration` in its JSON form
/// (`"2009-02-13T23:31:30Z"`, `"1.5s"`).
fn time_value(x: &Json) -> Result<Value, String> {
    let ty = x.get("@type").and_then(Json::as_str).unwrap_or("");
    let text = x.get("value").and_then(Json::as_str).ok_or("a message")?;
    if ty.ends_with("google.protobuf.Timestamp") {
        let t = chrono::DateTime::parse_from_rfc3339(text).map_err(|e| e.to_string())?;
        Ok(Value::Timestamp(t))
    } else if ty.ends_with("google.protobuf.Duration") {
        let secs = text.strip_suffix('s').ok_or("a duration without `s`")?;
        let (whole, frac) = secs.split_once('.').unwrap_or((secs, ""));
        let negative = whole.starts_with('-');
        let whole: i64 = whole.parse().map_err(|e| format!("{e}"))?;
        let nanos: i64 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<9}").parse().map_err(|e| format!("{e}"))?
        };
        let d = chrono::Duration::seconds(whole)
            + chrono::Duration::nanoseconds(if negative { -nanos } else { nanos });
        Ok(Value::Duration(d))
    } else {
        Err(format!("a `{ty}` message"))
    }
}

/// Whether two values are the same, NaN equal to NaN.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => (x.is_nan() && y.is_nan()) || x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(k, v)| y.map.get(k).is_some_and(|w| same(v, w)))
        }
        _ => std::mem::discriminant(a) == std::mem::discriminant(b) && a == b,
    }
}

/// Rewrites each free identifier named in `bindings` as `args.NAME`.
fn bind_as_args(expr: &str, names: &[String]) -> Option<String> {
    let (ast, info) = cel::parser::Parser::new()
        .enable_optional_syntax(true)
        .enable_ident_escape_syntax(true)
        .parse_with_source_info(expr)
        .ok()?;
    let mut spots = Vec::new();
    free_idents(&ast, names, &mut Vec::new(), &mut spots);
    let mut ranges = Vec::new();
    for (name, id) in spots {
        let (start, _) = info.offset_for(id)?;
        let start = start as usize;
        if expr.get(start..start + name.len()) != Some(name.as_str()) {
            return None;
        }
        ranges.push((start, name.len()));
    }
    ranges.sort_unstable();
    let mut out = expr.to_string();
    for (start, len) in ranges.into_iter().rev() {
        let name = expr[start..start + len].to_string();
        out.replace_range(start..start + len, &format!("args.{name}"));
    }
    Some(out)
}

fn free_idents(
    e: &IdedExpr,
    names: &[String],
    bound: &mut Vec<String>,
    out: &mut Vec<(String, u64)>,
) {
    match &e.expr {
        Expr::Ident(n) => {
            if names.contains(n) && !bound.contains(n) {
                out.push((n.clone(), e.id));
            }
        }
        Expr::Select(s) => free_idents(&s.operand, names, bound, out),
        Expr::Call(c) => {
            for a in c.target.as_deref().into_iter().chain(c.args.iter()) {
                free_idents(a, names, bound, out);
            }
        }
        Expr::Comprehension(c) => {
            free_idents(&c.iter_range, names, bound, out);
            free_idents(&c.accu_init, names, bound, out);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            bound.extend(c.iter_var2.clone());
            bound.push(c.accu_var.clone());
            free_idents(&c.loop_cond, names, bound, out);
            free_idents(&c.loop_step, names, bound, out);
            free_idents(&c.result, names, bound, out);
            bound.truncate(depth);
        }
        Expr::List(l) => {
            for x in &l.elements {
                free_idents(x, names, bound, out);
            }
        }
        Expr::Map(m) => {
            for x in &m.entries {
                if let EntryExpr::MapEntry(m) = &x.expr {
                    free_idents(&m.key, names, bound, out);
                    free_idents(&m.value, names, bound, out);
                }
            }
        }
        Expr::Struct(s) => {
            for x in &s.entries {
                if let EntryExpr::StructField(f) = &x.expr {
                    free_idents(&f.value, names, bound, out);
                }
            }
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn run(env: &CelEnv, test: &Json) -> Outcome {
    if let Some(why) = skip_reason(test) {
        return Outcome::Skipped(why);
    }
    let expr = test["expr"].as_str().unwrap_or_default();
    let mut args = std::collections::HashMap::new();
    let mut names = Vec::new();
    if let Some(b) = test.get("bindings").and_then(Json::as_object) {
        for (name, v) in b {
            match to_value(&v["value"]) {
                Ok(value) => {
                    args.insert(cel::objects::Key::String(Arc::new(name.clone())), value);
                    names.push(name.clone());
                }
                Err(_) => {
                    return Outcome::Skipped("binds a value of a kind this harness cannot build");
                }
            }
        }
    }
    let source = if names.is_empty() {
        expr.to_string()
    } else {
        match bind_as_args(expr, &names) {
            Some(s) => s,
            None => return Outcome::Refused("does not parse".into()),
        }
    };
    let expected_error = test.get("evalError").is_some();
    // `None`: an error is expected; `Some(Err)`: a value this harness cannot build.
    let expected: Option<Result<Value, String>> = match test.get("value") {
        Some(v) => Some(to_value(v)),
        None if expected_error => None,
        None => Some(Ok(Value::Bool(true))),
    };
    let lists = Arc::new(BTreeMap::new());
    let cx = CompileCtx {
        lists: &lists,
        allow_call: true,
        case_insensitive: false,
    };
    let mut cache = PatternCache::default();
    let compiled = match env.compile(&source, &mut cache, &cx) {
        Ok(c) => c,
        Err(errors) => {
            let why = errors
                .first()
                .map(|e| e.message.clone())
                .unwrap_or_default();
            return if expected_error {
                Outcome::Pass
            } else if test.get("disableCheck").and_then(Json::as_bool) == Some(true)
                && matches!(
                    errors.first().map(|e| e.kind),
                    Some(
                        ExprErrorKind::UnknownVariable
                            | ExprErrorKind::UnknownFunction
                            | ExprErrorKind::TypeMismatch
                    )
                )
            {
                Outcome::Unchecked(why)
            } else {
                Outcome::Refused(why)
            };
        }
    };
    let cache = Arc::new(cache);
    let root = env.root_context(&cache, &lists, false).unwrap();
    let vars = Vars {
        tool: Value::Map(cel::objects::Map {
            map: Arc::default(),
        }),
        args: Value::Map(cel::objects::Map {
            map: Arc::new(args),
        }),
        session: Value::Map(cel::objects::Map {
            map: Arc::default(),
        }),
        workspace: Value::String(Arc::new("/nowhere".into())),
    };
    let scope = Scope::new(&root, &vars);
    match (scope.eval(&compiled), expected) {
        (Ok(got), None) => Outcome::NoError(format!("{got:?}")),
        (Err(_), None) => Outcome::Pass,
        (Err(e), Some(_)) => Outcome::Error(e),
        (Ok(got), Some(Err(e))) => Outcome::Wrong(format!("got {got:?}, want {e}")),
        (Ok(got), Some(Ok(want))) => {
            if !same(&got, &want) {
                Outcome::Wrong(format!("got {got:?}, want {want:?}"))
            } else if let Some(name) = expected_type_name(test) {
                is_the_type(env, &source, name, &lists, &vars)
            } else {
                Outcome::Pass
            }
        }
    }
}

/// The type a test expects as its whole value, when an expression can name
/// it (`int`, not `google.protobuf.Timestamp`, which needs protobuf).
fn expected_type_name(test: &Json) -> Option<&str> {
    let name = test.get("value")?.get("typeValue")?.as_str()?;
    name.bytes()
        .all(|b| b.is_ascii_lowercase() || b == b'_')
        .then_some(name)
}

/// A type value leaves evaluation as its name (a `cel::Value` has no type
/// values), so a value equal to the expected name is checked again inside
/// the language: `(expr) == name` must hold, which a string never does (the
/// type check refuses it).
fn is_the_type(
    env: &CelEnv,
    source: &str,
    name: &str,
    lists: &Arc<BTreeMap<String, Vec<String>>>,
    vars: &Vars,
) -> Outcome {
    let cx = CompileCtx {
        lists,
        allow_call: true,
        case_insensitive: false,
    };
    let mut cache = PatternCache::default();
    let check = format!("({source}) == {name}");
    let Ok(compiled) = env.compile(&check, &mut cache, &cx) else {
        return Outcome::Wrong(format!("`{check}` does not compile: not a type value"));
    };
    let cache = Arc::new(cache);
    let root = env.root_context(&cache, lists, false).unwrap();
    match Scope::new(&root, vars).eval(&compiled) {
        Ok(Value::Bool(true)) => Outcome::Pass,
        other => Outcome::Wrong(format!("`{check}` gave {other:?}")),
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    pass: usize,
    refused: usize,
    unchecked: usize,
    error: usize,
    wrong: usize,
    skipped: usize,
}

impl Outcome {
    fn describe(&self) -> String {
        match self {
            Outcome::Pass => "passed".into(),
            Outcome::Refused(why) => format!("refused at load: {why}"),
            Outcome::Unchecked(why) => {
                format!("refused at load by a check cel-spec turns off: {why}")
            }
            Outcome::Error(why) => format!("failed at run time: {why}"),
            Outcome::Wrong(what) => format!("wrong value: {what}"),
            Outcome::NoError(got) => format!("no error, gave {got}"),
            Outcome::Skipped(why) => format!("skipped: {why}"),
        }
    }
}

impl Counts {
    fn add(&mut self, o: &Outcome) {
        match o {
            Outcome::Pass => self.pass += 1,
            Outcome::Refused(_) => self.refused += 1,
            Outcome::Unchecked(_) => self.unchecked += 1,
            Outcome::Error(_) => self.error += 1,
            Outcome::Wrong(_) | Outcome::NoError(_) => self.wrong += 1,
            Outcome::Skipped(_) => self.skipped += 1,
        }
    }

    fn line(&self) -> String {
        format!(
            "{} passed, {} refused at load, {} refused by the type check where cel-spec turns it off, {} failed at run time, {} wrong, {} skipped",
            self.pass, self.refused, self.unchecked, self.error, self.wrong, self.skipped
        )
    }
}

#[test]
fn cel_spec_conformance() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cel-spec");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 29, "the vendored cel-spec files are missing");
    let env = CelEnv::new();
    let mut report = String::new();
    let mut details = String::new();
    let mut skips: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut total = Counts::default();
    let mut got: BTreeMap<String, Counts> = BTreeMap::new();
    for path in &files {
        let doc: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let file = doc["file"].as_str().unwrap().to_string();
        let mut per_file = Counts::default();
        let mut sections = String::new();
        for section in doc["sections"].as_array().unwrap() {
            let mut per_section = Counts::default();
            let sname = section["name"].as_str().unwrap_or_default();
            for test in section["tests"].as_array().unwrap() {
                let outcome = run(&env, test);
                per_section.add(&outcome);
                let name = test["name"].as_str().unwrap_or_default();
                match &outcome {
                    Outcome::Pass => {}
                    Outcome::Skipped(why) => *skips.entry(why).or_default() += 1,
                    other => {
                        let _ = writeln!(
                            details,
                            "{file}/{sname}/{name}: {}\n    {}",
                            other.describe(),
                            test["expr"].as_str().unwrap_or_default()
                        );
                    }
                }
            }
            let _ = writeln!(sections, "    {sname}: {}", per_section.line());
            for (a, b) in [
                (&mut per_file.pass, per_section.pass),
                (&mut per_file.refused, per_section.refused),
                (&mut per_file.unchecked, per_section.unchecked),
                (&mut per_file.error, per_section.error),
                (&mut per_file.wrong, per_section.wrong),
                (&mut per_file.skipped, per_section.skipped),
            ] {
                *a += b;
            }
        }
        let _ = writeln!(report, "{file}: {}\n{sections}", per_file.line());
        for (a, b) in [
            (&mut total.pass, per_file.pass),
            (&mut total.refused, per_file.refused),
            (&mut total.unchecked, per_file.unchecked),
            (&mut total.error, per_file.error),
            (&mut total.wrong, per_file.wrong),
            (&mut total.skipped, per_file.skipped),
        ] {
            *a += b;
        }
        got.insert(file, per_file);
    }
    println!("{report}");
    println!("skipped:");
    for (why, n) in &skips {
        println!("    {n:4}  {why}");
    }
    println!("\nnot passed:\n{details}");
    println!("total: {}", total.line());
    println!("held (file, passed, wrong):");
    for (file, c) in &got {
        println!("    (\"{file}\", {}, {}),", c.pass, c.wrong);
    }
    let mut dropped = Vec::new();
    for (file, pass, wrong) in HELD {
        let c = got.get(*file).copied().unwrap_or_default();
        if c.pass < *pass {
            dropped.push(format!("{file}: {} passed, held {pass}", c.pass));
        }
        if c.wrong > *wrong {
            dropped.push(format!("{file}: {} wrong, held at most {wrong}", c.wrong));
        }
    }
    assert!(
        dropped.is_empty(),
        "conformance fell:\n{}",
        dropped.join("\n")
    );
}
