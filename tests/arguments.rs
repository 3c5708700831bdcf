//! Differential testing of the plain-schema check (`zero_policy::arguments`)
//! against the `jsonschema` crate: whatever the plain check accepts, the crate
//! compiles and accepts; for arguments it can compare exactly, the two agree.
//! Then the shipped manifests: every tool's parameters are plain, and every
//! shipped call is judged the same by both.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use zero_policy::arguments::Plain;

/// Both checkers on one schema and its instances.
fn check(schema: &Value, instances: &[Value]) -> Result<bool, TestCaseError> {
    let Some(plain) = Plain::compile(schema) else {
        return Ok(false);
    };
    let crate_validator = jsonschema::draft202012::new(schema);
    prop_assert!(
        crate_validator.is_ok(),
        "plain, but the crate refuses it: {schema}: {:?}",
        crate_validator.err().map(|e| e.to_string())
    );
    let v = crate_validator.unwrap();
    for i in instances {
        let ours = plain.accepts(i);
        let theirs = v.is_valid(i);
        prop_assert!(
            !ours || theirs,
            "accepted here, refused by the crate: {schema} on {i}"
        );
        if exact(i) {
            prop_assert_eq!(ours, theirs, "{} on {}", schema, i);
        }
    }
    Ok(true)
}

/// No number the plain check leaves to the crate: no fractions, no integers
/// past 2^53.
fn exact(v: &Value) -> bool {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .is_some_and(|x| x.abs() <= 1 << 53),
        Value::Array(a) => a.iter().all(exact),
        Value::Object(m) => m.values().all(exact),
        _ => true,
    }
}

// ---- generators ----------------------------------------------------------------

const KEYS: [&str; 4] = ["a", "b", "command", "é"];

fn type_name() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "null", "boolean", "object", "array", "number", "string", "integer"
        ]).prop_map(|s| json!(s)),
        1 => Just(json!("strin")),
    ]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-3i64..4).prop_map(|n| json!(n)),
        1 => prop::sample::select(vec![
            json!(0.5), json!(1.0), json!(-0.0), json!(2.5), json!(1e300),
            json!(u64::MAX), json!(i64::MIN), json!(9_007_199_254_740_993_u64),
            json!(9_007_199_254_740_992.0),
        ]),
    ]
}

fn count() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (0u64..4).prop_map(|n| json!(n)),
        1 => prop::sample::select(vec![json!(-1), json!(1.5), json!(1.0), json!("2")]),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec!["", "a", "ab", "é", "éé", "abc", "command"])
            .prop_map(|s| json!(s)),
        number(),
    ]
}

/// A keyword and its value: mostly the ones the plain check handles, in
/// valid and invalid shapes, and some it leaves to the crate.
fn keyword(sub: BoxedStrategy<Value>) -> impl Strategy<Value = (String, Value)> {
    let named = |k: &'static str, s: BoxedStrategy<Value>| s.prop_map(move |v| (k.to_owned(), v));
    prop_oneof![
        4 => named("type", prop_oneof![
            3 => type_name().boxed(),
            1 => prop::collection::vec(type_name(), 0..3).prop_map(Value::Array).boxed(),
        ].boxed()),
        1 => named("minLength", count().boxed()),
        1 => named("maxLength", count().boxed()),
        1 => named("minItems", count().boxed()),
        1 => named("maxItems", count().boxed()),
        1 => named("minProperties", count().boxed()),
        1 => named("maxProperties", count().boxed()),
        1 => named("minimum", number().boxed()),
        1 => named("maximum", number().boxed()),
        1 => named("exclusiveMinimum", number().boxed()),
        1 => named("exclusiveMaximum", number().boxed()),
        1 => named("enum", prop::collection::vec(scalar(), 0..4).prop_map(Value::Array).boxed()),
        1 => named("const", scalar().boxed()),
        1 => named("format", prop::sample::select(vec![json!("uri"), json!("email"), json!("date"), json!(3)]).boxed()),
        1 => named("description", prop::sample::select(vec![json!("what it is"), json!(3)]).boxed()),
        1 => named("examples", prop::sample::select(vec![json!(["x"]), json!("x")]).boxed()),
        1 => named("default", scalar().boxed()),
        1 => named("readOnly", prop::sample::select(vec![json!(true), json!("yes")]).boxed()),
        3 => named("required", prop::collection::vec(prop::sample::select(KEYS.to_vec()), 0..3)
            .prop_map(|v| json!(v)).boxed()),
        3 => named("properties", prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), sub.clone(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())).boxed()),
        2 => named("additionalProperties", sub.clone()),
        2 => named("items", sub.clone()),
        1 => named("pattern", Just(json!("^a")).boxed()),
        1 => named("uniqueItems", Just(json!(true)).boxed()),
    ]
}

fn schema() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        type_name().prop_map(|t| json!({"type": t})),
    ];
    leaf.prop_recursive(4, 24, 5, |sub| {
        prop::collection::vec(keyword(sub.boxed()), 1..5)
            .prop_map(|kws| Value::Object(kws.into_iter().collect::<Map<_, _>>()))
    })
    .boxed()
}

fn instance() -> BoxedStrategy<Value> {
    common::json_tree(scalar().boxed(), &KEYS, (3, 16, 4))
}

proptest! {
    #![proptest_config(common::proptest_config(20_000, 0xa5))]
    #[test]
    fn the_plain_check_accepts_only_what_the_crate_accepts(
        s in schema(),
        instances in prop::collection::vec(instance(), 8),
    ) {
        check(&s, &instances)?;
    }
}

/// The generator mostly makes plain schemas, and their checks say both yes and no.
#[test]
fn most_generated_schemas_are_plain() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut plain, mut yes, mut no) = (0, 0, 0);
    for _ in 0..1_000 {
        let s = schema().new_tree(&mut runner).unwrap().current();
        if let Some(p) = Plain::compile(&s) {
            plain += 1;
            for _ in 0..4 {
                let i = instance().new_tree(&mut runner).unwrap().current();
                if p.accepts(&i) { yes += 1 } else { no += 1 }
            }
        }
    }
    assert!(plain > 400, "{plain} of 1000 plain");
    assert!(yes > 300 && no > 300, "accepted {yes}, refused {no}");
}

// ---- the shipped files ---------------------------------------------------------

fn shipped() -> zero_policy::policy::Policy {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    zero_policy::loader::load_paths(&[
        root.join("policies"),
        root.join("manifests"),
        root.join("tests/fixtures/redteam"),
    ])
    .unwrap()
    .policy
    .expect("the shipped files load")
}

/// A hook pays for the crate's meta-schema only for a tool whose schema is
/// not plain: none of the shipped tools.
#[test]
fn every_shipped_tool_schema_is_plain() {
    let policy = shipped();
    let mut n = 0;
    for tool in policy.tools.iter() {
        n += 1;
        assert!(
            Plain::compile(&tool.parameters).is_some(),
            "`{}`: {}",
            tool.name,
            tool.parameters
        );
    }
    assert!(n > 50, "{n} tools");
}

#[test]
fn every_shipped_call_is_judged_alike() {
    let policy = shipped();
    let calls = policy.tests.iter().map(|t| t.call.clone()).chain(
        policy
            .all_rules()
            .flat_map(|r| r.examples.iter().map(|e| e.call.clone())),
    );
    let (mut judged, mut refused) = (0, 0);
    for call in calls {
        for tool in policy.tools.iter().filter(|t| t.name == call.tool) {
            let plain = Plain::compile(&tool.parameters).unwrap();
            let v = jsonschema::draft202012::new(&tool.parameters).unwrap();
            assert_eq!(
                plain.accepts(&call.args),
                v.is_valid(&call.args),
                "`{}` on {}",
                call.tool,
                call.args
            );
            judged += 1;
            refused += usize::from(!v.is_valid(&call.args));
        }
    }
    assert!(judged > 500, "{judged} calls judged");
    assert!(refused > 0, "no shipped call has invalid arguments");
}
