//! JSON to CEL values: the numeric model.
//!
//! A JSON integer is a CEL `int`, as Kubernetes reads integers; only an
//! integer past `int`'s range (above 9223372036854775807) is a `uint`. Any
//! other number (a fraction or an exponent) is a `double`. So `args.n + 1`,
//! `args.n % 2 == 0` and `size(args.l) + args.n` work on `{"n": 3}`.

use std::collections::HashMap;
use std::sync::Arc;

use cel::Value;
use cel::objects::Key;

/// The CEL value of a JSON value.
#[must_use]
pub fn to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => number(n),
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(to_cel).collect()))
        }
        serde_json::Value::Object(o) => {
            let mut map = HashMap::with_capacity(o.len());
            for (k, v) in o {
                map.insert(Key::String(Arc::new(k.clone())), to_cel(v));
            }
            Value::Map(cel::objects::Map { map: Arc::new(map) })
        }
    }
}

/// A JSON number: `int` when it is an integer in `int`'s range, `uint` past
/// it, `double` otherwise.
#[must_use]
pub fn number(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64() {
        Value::Int(i)
    } else if let Some(u) = n.as_u64() {
        Value::UInt(u)
    } else {
        Value::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]
    use super::*;

    #[test]
    fn integers_are_int_until_past_the_int_range() {
        let v: serde_json::Value =
            serde_json::from_str("[0, 3, -4, 9223372036854775807, 9223372036854775808, 1.5, 2e3]")
                .unwrap();
        let Value::List(items) = to_cel(&v) else {
            panic!("a list")
        };
        assert_eq!(
            items.as_slice(),
            &[
                Value::Int(0),
                Value::Int(3),
                Value::Int(-4),
                Value::Int(i64::MAX),
                Value::UInt(9_223_372_036_854_775_808),
                Value::Float(1.5),
                Value::Float(2000.0),
            ]
        );
    }

    #[test]
    fn objects_keep_their_keys() {
        let v = serde_json::json!({"n": 1, "s": "x", "l": [true, null]});
        let Value::Map(m) = to_cel(&v) else {
            panic!("a map")
        };
        assert_eq!(m.map.len(), 3);
        assert_eq!(
            m.map.get(&Key::String(Arc::new("n".into()))),
            Some(&Value::Int(1))
        );
    }
}
