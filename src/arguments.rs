//! A direct check of a call's arguments against a tool's parameters, for the
//! plain JSON Schemas tools declare.
//!
//! Compiling a draft 2020-12 schema with the `jsonschema` crate first builds
//! a validator for the draft's meta-schema, once per process: 4.1 million
//! instructions and 380 kB of heap, the largest single cost of a hook call.
//! Tools' parameters mostly use a handful of keywords (`type`, `properties`,
//! `required`, `additionalProperties`, `items`, lengths and bounds, `enum`).
//! For a schema made only of those, [`Plain`] answers whether arguments are
//! valid by walking the schema.
//!
//! The answer is one-sided: [`Plain::accepts`] says `true` only where the
//! `jsonschema` crate would also compile the schema and accept the arguments
//! (a differential test holds it to that), and `false` means "not sure".
//! Everything else — a keyword or a keyword's value it does not handle, a
//! number it cannot compare exactly, arguments that do not match — goes to
//! the `jsonschema` crate, which also writes the messages. So a call is never
//! allowed here that the crate would refuse.

use serde_json::{Map, Number, Value};

/// How deep a schema may nest before the crate checks it instead.
const MAX_DEPTH: usize = 64;

/// A schema made only of the keywords this module handles, with every
/// keyword's value of the shape the draft 2020-12 meta-schema asks for.
#[derive(Debug, Clone)]
pub struct Plain(Node);

impl Plain {
    /// The plain form of `schema`; `None` when it uses anything else (the
    /// `jsonschema` crate then checks every call).
    #[must_use]
    pub fn compile(schema: &Value) -> Option<Plain> {
        Node::compile(schema, 0).map(Plain)
    }

    /// The arguments are valid (`false`: invalid, or not sure).
    #[must_use]
    pub fn accepts(&self, args: &Value) -> bool {
        self.0.accepts(args)
    }
}

#[derive(Debug, Clone)]
enum Node {
    /// `true` or `{}`.
    Any,
    /// `false`.
    Nothing,
    Checks(Box<Checks>),
}

/// The JSON types, as bits.
const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const STRING: u8 = 32;
const INTEGER: u8 = 64;

#[derive(Debug, Clone, Default)]
struct Checks {
    types: Option<u8>,
    /// `properties`, sorted by name, each with whether `required` names it.
    properties: Vec<(String, Node, bool)>,
    /// The names `required` lists that `properties` does not.
    required: Vec<String>,
    /// How many of `required` are in `properties`.
    required_declared: usize,
    additional: Option<Node>,
    items: Option<Node>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    /// Only strings, booleans and nulls: values whose equality is plain.
    one_of_values: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
}

impl Node {
    fn compile(schema: &Value, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let map = match schema {
            Value::Bool(true) => return Some(Node::Any),
            Value::Bool(false) => return Some(Node::Nothing),
            Value::Object(map) => map,
            _ => return None,
        };
        let mut c = Checks::default();
        for (key, value) in map {
            match key.as_str() {
                // Annotations: no effect on validity, but the meta-schema
                // still asks for their shapes (`format` is an annotation in
                // draft 2020-12 unless asked to assert, which we do not).
                "title" | "description" | "$comment" | "format" => {
                    value.as_str()?;
                }
                "default" => {}
                "examples" => {
                    value.as_array()?;
                }
                "deprecated" | "readOnly" | "writeOnly" => {
                    value.as_bool()?;
                }
                "type" => c.types = Some(types(value)?),
                "properties" => {
                    for (name, sub) in value.as_object()? {
                        c.properties
                            .push((name.clone(), Node::compile(sub, depth + 1)?, false));
                    }
                }
                "required" => c.required = unique_strings(value)?,
                "additionalProperties" => c.additional = Some(Node::compile(value, depth + 1)?),
                "items" => c.items = Some(Node::compile(value, depth + 1)?),
                "minItems" => c.min_items = Some(value.as_u64()?),
                "maxItems" => c.max_items = Some(value.as_u64()?),
                "minLength" => c.min_length = Some(value.as_u64()?),
                "maxLength" => c.max_length = Some(value.as_u64()?),
                "minProperties" => c.min_properties = Some(value.as_u64()?),
                "maxProperties" => c.max_properties = Some(value.as_u64()?),
                "enum" => {
                    let values = value.as_array()?;
                    if !values.iter().all(plain_equality) {
                        return None;
                    }
                    c.one_of_values = Some(values.clone());
                }
                "const" => {
                    if !plain_equality(value) {
                        return None;
                    }
                    c.constant = Some(value.clone());
                }
                "minimum" => c.minimum = Some(number(value)?),
                "maximum" => c.maximum = Some(number(value)?),
                "exclusiveMinimum" => c.exclusive_minimum = Some(number(value)?),
                "exclusiveMaximum" => c.exclusive_maximum = Some(number(value)?),
                // Any other keyword, known to the crate or not: the crate decides.
                _ => return None,
            }
        }
        c.properties.sort_by(|a, b| a.0.cmp(&b.0));
        let mut elsewhere = Vec::new();
        for name in std::mem::take(&mut c.required) {
            match c.properties.binary_search_by(|p| p.0.as_str().cmp(&name)) {
                Ok(i) => {
                    c.properties[i].2 = true;
                    c.required_declared += 1;
                }
                Err(_) => elsewhere.push(name),
            }
        }
        c.required = elsewhere;
        Some(Node::Checks(Box::new(c)))
    }

    fn accepts(&self, v: &Value) -> bool {
        match self {
            Node::Any => true,
            Node::Nothing => false,
            Node::Checks(c) => c.accepts(v),
        }
    }
}

impl Checks {
    fn accepts(&self, v: &Value) -> bool {
        if let Some(t) = self.types
            && !has_type(t, v)
        {
            return false;
        }
        if let Some(values) = &self.one_of_values
            && !values.contains(v)
        {
            return false;
        }
        if let Some(c) = &self.constant
            && c != v
        {
            return false;
        }
        match v {
            Value::Object(map) => self.accepts_object(map),
            Value::Array(items) => {
                let n = items.len() as u64;
                self.min_items.is_none_or(|m| n >= m)
                    && self.max_items.is_none_or(|m| n <= m)
                    && self
                        .items
                        .as_ref()
                        .is_none_or(|s| items.iter().all(|i| s.accepts(i)))
            }
            Value::String(s) => {
                // Lengths count code points, as the draft says.
                let n = s.chars().count() as u64;
                self.min_length.is_none_or(|m| n >= m) && self.max_length.is_none_or(|m| n <= m)
            }
            Value::Number(n) => {
                use std::cmp::Ordering::{Greater, Less};
                let within = |limit: &Option<Number>, ok: &dyn Fn(std::cmp::Ordering) -> bool| {
                    limit.as_ref().is_none_or(|l| compare(n, l).is_some_and(ok))
                };
                within(&self.minimum, &|o| o != Less)
                    && within(&self.maximum, &|o| o != Greater)
                    && within(&self.exclusive_minimum, &|o| o == Greater)
                    && within(&self.exclusive_maximum, &|o| o == Less)
            }
            Value::Null | Value::Bool(_) => true,
        }
    }

    fn accepts_object(&self, map: &Map<String, Value>) -> bool {
        let n = map.len() as u64;
        if !(self.min_properties.is_none_or(|m| n >= m)
            && self.max_properties.is_none_or(|m| n <= m))
        {
            return false;
        }
        // One pass: each member against its property (or the additional
        // schema), counting the required ones met (members' names are
        // distinct, and so are `required`'s).
        let mut met = 0;
        for (key, value) in map {
            match self.properties.binary_search_by(|p| p.0.as_str().cmp(key)) {
                Ok(i) => {
                    let (_, schema, required) = &self.properties[i];
                    if !schema.accepts(value) {
                        return false;
                    }
                    met += usize::from(*required);
                }
                Err(_) => {
                    if !self.additional.as_ref().is_none_or(|s| s.accepts(value)) {
                        return false;
                    }
                }
            }
        }
        met == self.required_declared && self.required.iter().all(|k| map.contains_key(k))
    }
}

/// The `type` keyword's value as bits: one type name, or a non-empty array
/// of distinct ones.
fn types(value: &Value) -> Option<u8> {
    let bit = |v: &Value| {
        Some(match v.as_str()? {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER,
            "string" => STRING,
            "integer" => INTEGER,
            _ => return None,
        })
    };
    match value {
        Value::Array(names) if !names.is_empty() => {
            let mut bits = 0;
            for name in names {
                let b = bit(name)?;
                if bits & b != 0 {
                    return None;
                }
                bits |= b;
            }
            Some(bits)
        }
        _ => bit(value),
    }
}

/// Whether `v` is of one of the types in `bits`. A number written with a
/// fraction part is not counted as an integer here, even `1.0` (the crate
/// may count it: not sure, so not accepted).
fn has_type(bits: u8, v: &Value) -> bool {
    let bit = match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(n) => {
            if n.is_f64() {
                NUMBER
            } else {
                NUMBER | INTEGER
            }
        }
    };
    bits & bit != 0
}

/// `required`: an array of distinct strings.
fn unique_strings(value: &Value) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for v in value.as_array()? {
        let s = v.as_str()?;
        if out.iter().any(|o| o == s) {
            return None;
        }
        out.push(s.to_owned());
    }
    Some(out)
}

/// A value whose JSON equality is `Value`'s (no numbers, which JSON Schema
/// compares by value: `1` equals `1.0`).
fn plain_equality(v: &Value) -> bool {
    matches!(v, Value::Null | Value::Bool(_) | Value::String(_))
}

fn number(value: &Value) -> Option<Number> {
    match value {
        Value::Number(n) => Some(n.clone()),
        _ => None,
    }
}

/// `n` against `limit`, when the comparison is exact: both integers, both
/// fractions, or an integer small enough to be a float exactly.
fn compare(n: &Number, limit: &Number) -> Option<std::cmp::Ordering> {
    const EXACT: i128 = 1 << 53;
    let int = |x: &Number| {
        x.as_i64()
            .map(i128::from)
            .or_else(|| x.as_u64().map(i128::from))
    };
    match (int(n), int(limit)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        (None, None) => n.as_f64()?.partial_cmp(&limit.as_f64()?),
        (Some(a), None) if a.abs() <= EXACT => (a as f64).partial_cmp(&limit.as_f64()?),
        (None, Some(b)) if b.abs() <= EXACT => n.as_f64()?.partial_cmp(&(b as f64)),
        _ => None,
    }
}

/// The keywords of JSON Schema (draft 2020-12 and the earlier drafts).
const SCHEMA_KEYWORDS: &[&str] = &[
    "$anchor",
    "$comment",
    "$defs",
    "$dynamicAnchor",
    "$dynamicRef",
    "$id",
    "$recursiveAnchor",
    "$recursiveRef",
    "$ref",
    "$schema",
    "$vocabulary",
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "const",
    "contains",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "default",
    "definitions",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "deprecated",
    "description",
    "else",
    "enum",
    "examples",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "if",
    "items",
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "prefixItems",
    "properties",
    "propertyNames",
    "readOnly",
    "required",
    "then",
    "title",
    "type",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
    "writeOnly",
];

/// The keys of `schema`, and of the schemas inside it, that are no keyword
/// and have a null value: the mark of a YAML flow mapping cut at a comma
/// (`lint`'s `stray-schema-key`). Values that are data (`enum`, `const`,
/// `default`, `examples`) are not schemas and are not looked into.
#[must_use]
pub fn stray_keys(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    stray_keys_in(schema, 0, &mut out);
    out
}

fn stray_keys_in(schema: &Value, depth: usize, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if depth > 64 {
        return;
    }
    for (key, value) in map {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                for sub in value.as_object().into_iter().flat_map(|m| m.values()) {
                    stray_keys_in(sub, depth + 1, out);
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                for sub in value.as_array().into_iter().flatten() {
                    stray_keys_in(sub, depth + 1, out);
                }
            }
            "items"
            | "additionalProperties"
            | "additionalItems"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contentSchema" => stray_keys_in(value, depth + 1, out),
            k if value.is_null() && !SCHEMA_KEYWORDS.contains(&k) => out.push(key.clone()),
            _ => {}
        }
    }
}

#[cfg(test)]
#[expect(clippy::expect_used, reason = "tests")]
mod tests {
    use super::*;
    use serde_json::json;

    fn plain(schema: Value) -> Plain {
        Plain::compile(&schema).expect("a plain schema")
    }

    #[test]
    fn a_typical_tool_schema_is_plain_and_checks_what_it_says() {
        let p = plain(json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "minLength": 1},
                "timeout": {"type": "number", "maximum": 600000},
                "mode": {"enum": ["a", "b"]}
            },
            "required": ["command"],
            "additionalProperties": false
        }));
        assert!(p.accepts(&json!({"command": "ls"})));
        assert!(p.accepts(&json!({"command": "ls", "timeout": 600000, "mode": "b"})));
        assert!(!p.accepts(&json!({})), "required");
        assert!(!p.accepts(&json!({"command": ""})), "minLength");
        assert!(!p.accepts(&json!({"command": 1})), "type");
        assert!(!p.accepts(&json!({"command": "ls", "x": 1})), "additional");
        assert!(
            !p.accepts(&json!({"command": "ls", "timeout": 600001})),
            "maximum"
        );
        assert!(
            !p.accepts(&json!({"command": "ls", "timeout": 600000.5})),
            "maximum"
        );
        assert!(!p.accepts(&json!({"command": "ls", "mode": "c"})), "enum");
    }

    #[test]
    fn anything_else_is_left_to_the_crate() {
        for schema in [
            json!({"pattern": "^a"}),
            json!({"$ref": "#/$defs/x", "$defs": {"x": true}}),
            json!({"oneOf": [true]}),
            json!({"type": "strin"}),
            json!({"type": []}),
            json!({"type": ["string", "string"]}),
            json!({"required": ["a", "a"]}),
            json!({"minLength": -1}),
            json!({"minLength": 1.5}),
            json!({"enum": [1, 2]}),
            json!({"description": 3}),
            json!({"items": [true]}),
            json!({"in 5-10 words.": null}),
            json!(3),
        ] {
            assert!(Plain::compile(&schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn numbers_are_compared_only_when_exact() {
        let p = plain(json!({"minimum": 0.5}));
        assert!(p.accepts(&json!(1)));
        assert!(!p.accepts(&json!(0)));
        assert!(
            !p.accepts(&json!(u64::MAX)),
            "too large for a float: not sure"
        );
        let p = plain(json!({"type": "integer"}));
        assert!(p.accepts(&json!(-3)));
        assert!(!p.accepts(&json!(1.0)), "the crate may count 1.0: not sure");
        let p = plain(json!({"maxLength": 2}));
        assert!(p.accepts(&json!("éé")), "code points, not bytes");
        assert!(!p.accepts(&json!("abc")));
    }

    #[test]
    fn stray_keys_are_null_non_keywords_of_schemas_not_of_data() {
        let schema = json!({
            "type": "object",
            "default": null,
            "properties": {
                "a": {"type": "string", "0-based.": null},
                "b": {"enum": [{"x": null}], "const": null},
                "c": {"items": {"anyOf": [{"in markdown.": null}]}}
            },
            "kept": "a value, not null"
        });
        assert_eq!(stray_keys(&schema), ["0-based.", "in markdown."]);
    }

    #[test]
    fn nesting_past_the_limit_is_left_to_the_crate() {
        let mut s = json!({"type": "string"});
        for _ in 0..=MAX_DEPTH {
            s = json!({"items": s});
        }
        assert!(Plain::compile(&s).is_none());
    }
}
