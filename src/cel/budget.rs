//! Bounds on CEL: what the parser is given, and what an evaluation may cost.
//!
//! The `cel` crate parses and evaluates by recursion, and its macros can
//! nest comprehensions. Two guards keep a hostile expression from taking the
//! process out of stack, memory or time:
//!
//! 1. [`prescan`] runs before the parser: at most [`MAX_SOURCE_BYTES`] of
//!    source and [`MAX_TOKENS`] tokens, at most [`MAX_NESTING`] levels of
//!    brackets, and an estimated tree depth of at most [`MAX_DEPTH`] (every
//!    non-logical operator, unary `!`/`-`, `.` and bracket adds a level; `&&`
//!    and `||` chains count as balanced trees, as the parser builds them).
//!    Every walk of the tree after it is bounded by that depth.
//! 2. [`estimate`] walks the compiled tree once and bounds the steps an
//!    evaluation takes and the largest value it builds, from the sizes of the
//!    inputs ([`Sizes`]): comprehensions multiply by the length of their range,
//!    `+`, `join`, `replace`, `split` and `format` grow strings and lists, list
//!    and map literals add up. At load the inputs are assumed to be at most
//!    [`Sizes::ASSUMED`]; an expression that could exceed [`MAX_COST`] steps or
//!    build more than [`MAX_BUILT_BYTES`] is refused (`cel-cost`). At run time a
//!    call larger than the assumption is measured ([`Sizes::measure`]) and the
//!    estimate is made again with its real sizes: an expression over budget is
//!    not evaluated, and the rule fails closed.

use std::collections::BTreeMap;

use cel::Value;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

/// Longest expression source, in bytes.
pub const MAX_SOURCE_BYTES: usize = 16 * 1024;
/// Most tokens in one expression.
pub const MAX_TOKENS: usize = 4_096;
/// Deepest estimated syntax tree.
pub const MAX_DEPTH: usize = 64;
/// Most levels of parentheses, brackets and braces, one inside the other: the
/// 32 cel-spec requires of every implementation.
pub const MAX_NESTING: usize = 32;
/// Most evaluation steps one expression may take (a step is one node, or 64 bytes
/// copied or scanned).
pub const MAX_COST: f64 = 10_000_000.0;
/// Largest value one evaluation may build, in bytes.
pub const MAX_BUILT_BYTES: f64 = 64.0 * 1024.0 * 1024.0;
// The bounds `path_ancestors` enforces, which the estimate relies on.
pub use super::functions::{MAX_ANCESTOR_COMPONENTS, MAX_ANCESTOR_PATH_BYTES};

/// Why an expression is refused before or after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The message.
    pub message: String,
    /// Byte range inside the source.
    pub start: usize,
    /// End of the range (exclusive).
    pub end: usize,
}

/// Checks an expression's size, token count and nesting before the parser sees it.
///
/// # Errors
/// The first limit crossed, placed at the byte where it was crossed.
pub fn prescan(source: &str) -> Result<(), Refusal> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(Refusal {
            message: format!(
                "the expression is {} bytes long; at most {MAX_SOURCE_BYTES} bytes are compiled",
                source.len()
            ),
            start: 0,
            end: 0,
        });
    }
    #[derive(Default, Clone, Copy)]
    struct Level {
        /// Chaining operators since the last `,` or logical operator.
        chain: usize,
        /// Logical operators at this level: a balanced tree of depth log2.
        logic: usize,
    }
    let depth_of = |levels: &[Level]| -> usize {
        2 + levels
            .iter()
            .map(|l| l.chain + usize::BITS as usize - l.logic.leading_zeros() as usize)
            .sum::<usize>()
    };
    let bytes = source.as_bytes();
    let mut levels = vec![Level::default()];
    let mut tokens = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        tokens += 1;
        if tokens > MAX_TOKENS {
            return Err(Refusal {
                message: format!("the expression has more than {MAX_TOKENS} tokens"),
                start,
                end: start + 1,
            });
        }
        let top = levels.len() - 1;
        match c {
            b'"' | b'\'' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'(' | b'[' | b'{' => {
                if levels.len() > MAX_NESTING {
                    return Err(Refusal {
                        message: format!(
                            "the expression nests more than {MAX_NESTING} levels of parentheses, brackets or braces"
                        ),
                        start,
                        end: start + 1,
                    });
                }
                levels[top].chain += 1;
                levels.push(Level::default());
            }
            b')' | b']' | b'}' if levels.len() > 1 => {
                levels.pop();
            }
            b',' => {
                levels[top] = Level {
                    chain: 0,
                    logic: levels[top].logic,
                }
            }
            b'&' | b'|' if bytes.get(i + 1) == Some(&c) => {
                levels[top].chain = 0;
                levels[top].logic += 1;
                i += 2;
                continue;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'!' | b'<' | b'>' | b'=' | b'.' | b'?' | b':' => {
                levels[top].chain += 1;
                // Two-byte operators are one token.
                if matches!(bytes.get(i + 1), Some(b'=')) && matches!(c, b'!' | b'<' | b'>' | b'=')
                {
                    i += 1;
                }
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => {
                // An identifier or number (a string prefix such as `r"`/`b'` is handled next).
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                if i < bytes.len() && matches!(bytes[i], b'"' | b'\'') && i - start <= 2 {
                    i = skip_string(bytes, i);
                }
                continue;
            }
            _ => {}
        }
        if depth_of(&levels) > MAX_DEPTH {
            return Err(Refusal {
                message: format!(
                    "the expression nests deeper than {MAX_DEPTH} levels (each operator of a chain such as `a + b + …`, each `!`, `-` or `.`, each bracket)"
                ),
                start,
                end: start + 1,
            });
        }
        i += 1;
    }
    Ok(())
}

/// The index after the string literal starting at `i` (`"…"`, `'…'`, triple-quoted).
fn skip_string(bytes: &[u8], i: usize) -> usize {
    let q = bytes[i];
    let triple = bytes.get(i + 1) == Some(&q) && bytes.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < bytes.len() {
        if bytes[j] == b'\\' {
            j += 2;
            continue;
        }
        if bytes[j] == q {
            if !triple {
                return j + 1;
            }
            if bytes.get(j + 1) == Some(&q) && bytes.get(j + 2) == Some(&q) {
                return j + 3;
            }
        }
        if !triple && bytes[j] == b'\n' {
            return j;
        }
        j += 1;
    }
    bytes.len()
}

/// The sizes of a call's values an estimate is made for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    /// Most items in any one list or map.
    pub items: f64,
    /// Most bytes in any one variable's value.
    pub bytes: f64,
}

/// The sizes of each variable an expression reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// `tool`.
    pub tool: Sizes,
    /// `args`.
    pub args: Sizes,
    /// `session` (and the workspace the path functions read).
    pub session: Sizes,
    /// `call`, the call's effects.
    pub call: Sizes,
}

impl Inputs {
    /// What the load-time estimate assumes of a call: a large ordinary one.
    pub const ASSUMED: Inputs = Inputs {
        tool: Sizes {
            items: 16.0,
            bytes: 4.0 * 1024.0,
        },
        args: Sizes {
            items: 100.0,
            bytes: 64.0 * 1024.0,
        },
        session: Sizes {
            items: 16.0,
            bytes: 512.0,
        },
        call: Sizes {
            items: 32.0,
            bytes: 16.0 * 1024.0,
        },
    };

    /// Whether every variable fits within `other`'s.
    #[must_use]
    pub fn within(&self, other: &Inputs) -> bool {
        self.tool.within(&other.tool)
            && self.args.within(&other.args)
            && self.session.within(&other.session)
            && self.call.within(&other.call)
    }

    /// The larger of two, variable by variable.
    #[must_use]
    pub fn max(self, other: Inputs) -> Inputs {
        Inputs {
            tool: self.tool.max(other.tool),
            args: self.args.max(other.args),
            session: self.session.max(other.session),
            call: self.call.max(other.call),
        }
    }

    /// Nothing measured yet.
    pub const ZERO: Inputs = Inputs {
        tool: Sizes::ZERO,
        args: Sizes::ZERO,
        session: Sizes::ZERO,
        call: Sizes::ZERO,
    };
}

impl Sizes {
    /// An empty value.
    pub const ZERO: Sizes = Sizes {
        items: 0.0,
        bytes: 0.0,
    };

    /// Whether these sizes fit within `other`.
    #[must_use]
    pub fn within(&self, other: &Sizes) -> bool {
        self.items <= other.items && self.bytes <= other.bytes
    }

    /// The larger of two.
    #[must_use]
    pub fn max(self, other: Sizes) -> Sizes {
        Sizes {
            items: self.items.max(other.items),
            bytes: self.bytes.max(other.bytes),
        }
    }

    /// Measures a value without recursion (a call's arguments can nest deep).
    #[must_use]
    pub fn measure(v: &Value) -> Sizes {
        let mut items = 0usize;
        let mut bytes = 0usize;
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            bytes += 8;
            match v {
                Value::List(l) => {
                    items = items.max(l.len());
                    stack.extend(l.iter());
                }
                Value::Map(m) => {
                    items = items.max(m.map.len());
                    for (k, v) in m.map.iter() {
                        if let cel::objects::Key::String(s) = k {
                            bytes += s.len();
                        }
                        stack.push(v);
                    }
                }
                Value::String(s) => bytes += s.len(),
                Value::Bytes(b) => bytes += b.len(),
                _ => {}
            }
        }
        Sizes {
            items: items as f64,
            bytes: bytes as f64,
        }
    }

    /// [`Sizes::measure`] of a JSON value, as it would be once converted.
    #[must_use]
    pub fn measure_json(v: &serde_json::Value) -> Sizes {
        let mut items = 0usize;
        let mut bytes = 0usize;
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            bytes += 8;
            match v {
                serde_json::Value::Array(l) => {
                    items = items.max(l.len());
                    stack.extend(l.iter());
                }
                serde_json::Value::Object(m) => {
                    items = items.max(m.len());
                    for (k, v) in m {
                        bytes += k.len();
                        stack.push(v);
                    }
                }
                serde_json::Value::String(s) => bytes += s.len(),
                _ => {}
            }
        }
        Sizes {
            items: items as f64,
            bytes: bytes as f64,
        }
    }
}

/// The estimate of one expression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Steps, at most.
    pub cost: f64,
    /// The largest value built, in bytes.
    pub built: f64,
    /// The node where the budget was first exceeded, if it was.
    pub over: Option<u64>,
}

impl Estimate {
    /// Whether it fits the budget.
    #[must_use]
    pub fn fits(&self) -> bool {
        self.over.is_none()
    }

    /// Why it does not fit, for a message.
    #[must_use]
    pub fn describe(&self) -> String {
        if self.built > MAX_BUILT_BYTES {
            format!(
                "the expression could build a value of {} (at most {} per evaluation)",
                human_bytes(self.built),
                human_bytes(MAX_BUILT_BYTES)
            )
        } else {
            format!(
                "the expression could take {} evaluation steps (at most {} per evaluation)",
                human_count(self.cost),
                human_count(MAX_COST)
            )
        }
    }
}

fn human_count(n: f64) -> String {
    if !n.is_finite() || n >= 1e18 {
        "unboundedly many".into()
    } else if n >= 1e6 {
        format!("about {:.0e}", n).replace("e", "×10^")
    } else {
        format!("about {n:.0}")
    }
}

fn human_bytes(n: f64) -> String {
    if !n.is_finite() || n >= 1e18 {
        "unbounded size".into()
    } else if n >= 1024.0 * 1024.0 * 1024.0 {
        format!("about {:.0} GiB", n / (1024.0 * 1024.0 * 1024.0))
    } else if n >= 1024.0 * 1024.0 {
        format!("about {:.0} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("about {:.0} KiB", n / 1024.0)
    }
}

/// What an estimate may know about a value: the most items of any list or map in
/// it (at any depth), and its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Val {
    items: f64,
    bytes: f64,
}

const SCALAR: Val = Val {
    items: 0.0,
    bytes: 8.0,
};

/// The result of estimating one node.
#[derive(Debug, Clone, Copy)]
struct Node {
    cost: f64,
    val: Val,
}

/// The sizes of the named lists, for `lists.NAME`.
fn list_val(items: &[String]) -> Val {
    Val {
        items: items.len() as f64,
        bytes: items.iter().map(|s| s.len() as f64 + 8.0).sum::<f64>() + 8.0,
    }
}

/// Estimates the cost of evaluating `expr` for inputs of `sizes`.
#[must_use]
pub fn estimate(
    expr: &IdedExpr,
    inputs: &Inputs,
    lists: &BTreeMap<String, Vec<String>>,
) -> Estimate {
    let mut e = Estimator {
        input: *inputs,
        lists,
        bound: Vec::new(),
        built: 0.0,
        over: None,
    };
    let n = e.node(expr);
    Estimate {
        cost: n.cost,
        built: e.built,
        over: e.over,
    }
}

struct Estimator<'a> {
    input: Inputs,
    lists: &'a BTreeMap<String, Vec<String>>,
    /// Comprehension variables in scope, innermost last.
    bound: Vec<(String, Val)>,
    built: f64,
    over: Option<u64>,
}

impl Estimator<'_> {
    /// Records a value built by evaluation.
    fn build(&mut self, v: Val) -> Val {
        self.built = self.built.max(v.bytes);
        v
    }

    fn check(&mut self, id: u64, n: Node) -> Node {
        if self.over.is_none() && (n.cost > MAX_COST || self.built > MAX_BUILT_BYTES) {
            self.over = Some(id);
        }
        n
    }

    /// A list, map or struct literal of `items` entries built from `parts`.
    fn literal<'e>(&mut self, items: usize, parts: impl Iterator<Item = &'e IdedExpr>) -> Node {
        let mut cost = 1.0;
        let mut val = Val {
            items: items as f64,
            bytes: 8.0,
        };
        for part in parts {
            let n = self.node(part);
            cost += n.cost + 1.0;
            val.items = val.items.max(n.val.items);
            val.bytes += n.val.bytes;
        }
        Node {
            cost,
            val: self.build(val),
        }
    }

    fn node(&mut self, e: &IdedExpr) -> Node {
        let n = self.node_inner(e);
        self.check(e.id, n)
    }

    fn node_inner(&mut self, e: &IdedExpr) -> Node {
        match &e.expr {
            Expr::Unspecified => Node {
                cost: 1.0,
                val: SCALAR,
            },
            Expr::Literal(lit) => Node {
                cost: 1.0,
                val: match lit {
                    LiteralValue::String(s) => Val {
                        items: 0.0,
                        bytes: s.len() as f64 + 8.0,
                    },
                    LiteralValue::Bytes(_) => Val {
                        items: 0.0,
                        bytes: MAX_SOURCE_BYTES as f64,
                    },
                    _ => SCALAR,
                },
            },
            Expr::Ident(name) => Node {
                cost: 1.0,
                val: self.ident(name),
            },
            Expr::Select(sel) => {
                if let Expr::Ident(n) = &sel.operand.expr
                    && n == "lists"
                    && !self.is_bound("lists")
                {
                    let val = self.lists.get(&sel.field).map_or(SCALAR, |l| list_val(l));
                    return Node { cost: 2.0, val };
                }
                let op = self.node(&sel.operand);
                Node {
                    cost: op.cost + 1.0,
                    val: if sel.test { SCALAR } else { op.val },
                }
            }
            Expr::List(list) => self.literal(list.elements.len(), list.elements.iter()),
            Expr::Map(map) => self.literal(
                map.entries.len(),
                map.entries.iter().flat_map(|e| entry_parts(&e.expr)),
            ),
            Expr::Struct(st) => self.literal(
                st.entries.len(),
                st.entries.iter().flat_map(|e| entry_parts(&e.expr)),
            ),
            Expr::Call(call) => {
                let args: Vec<Node> = call
                    .target
                    .as_deref()
                    .into_iter()
                    .chain(call.args.iter())
                    .map(|a| self.node(a))
                    .collect();
                self.call(&call.func_name, &args)
            }
            Expr::Comprehension(c) => {
                let range = self.node(&c.iter_range);
                let init = self.node(&c.accu_init);
                let n = range.val.items;
                let depth = self.bound.len();
                // An element (or key, or value) has no more items than the range's
                // largest list, and its bytes are counted as the range's share: the
                // elements' bytes add up to the range's, so a body whose cost is
                // linear in its element's size is bounded in total.
                let elem = Val {
                    items: range.val.items,
                    bytes: range.val.bytes / n.max(1.0) + 16.0,
                };
                self.bound.push((c.iter_var.clone(), elem));
                if let Some(v2) = &c.iter_var2 {
                    self.bound.push((v2.clone(), elem));
                }
                // The step is walked once, with the accumulator at its start; the
                // accumulator then grows by the same amount each step (the macros build
                // `accu + [x]`, which the `cel` crate appends in place, or a bool).
                // Every node is walked once, so nested comprehensions stay linear here.
                let a0 = init.val;
                self.bound.push((c.accu_var.clone(), a0));
                let s0 = self.node(&c.loop_step);
                self.bound.pop();
                let grow_bytes = (s0.val.bytes - a0.bytes).max(0.0);
                // A macro appends at most one item per step; nested lists keep their size.
                let last = Val {
                    items: (a0.items + n).max(s0.val.items),
                    bytes: a0.bytes + n * grow_bytes,
                };
                self.build(last);
                let step = s0;
                self.bound.push((c.accu_var.clone(), last));
                let cond = self.node(&c.loop_cond);
                let result = self.node(&c.result);
                self.bound.truncate(depth);
                let cost = range.cost + init.cost + n * (cond.cost + step.cost + 1.0) + result.cost;
                let val = self.build(result.val);
                Node { cost, val }
            }
        }
    }

    fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|(n, _)| n == name)
    }

    fn ident(&self, name: &str) -> Val {
        if let Some((_, v)) = self.bound.iter().rev().find(|(n, _)| n == name) {
            return *v;
        }
        if name == "lists" {
            let mut v = Val {
                items: self.lists.len() as f64,
                bytes: 8.0,
            };
            for l in self.lists.values() {
                let lv = list_val(l);
                v.items = v.items.max(lv.items);
                v.bytes += lv.bytes;
            }
            return v;
        }
        let v = |s: Sizes| Val {
            items: s.items,
            bytes: s.bytes,
        };
        match name {
            "tool" => v(self.input.tool),
            "args" => v(self.input.args),
            "session" | super::functions::WORKSPACE_VAR => v(self.input.session),
            "call" => v(self.input.call),
            _ => v(self
                .input
                .tool
                .max(self.input.args)
                .max(self.input.session)
                .max(self.input.call)),
        }
    }

    fn call(&mut self, name: &str, args: &[Node]) -> Node {
        let sum_cost: f64 = args.iter().map(|a| a.cost).sum::<f64>() + 1.0;
        let sum_bytes: f64 = args.iter().map(|a| a.val.bytes).sum();
        let max_items = args.iter().map(|a| a.val.items).fold(0.0, f64::max);
        let arg = |i: usize| args.get(i).map_or(SCALAR, |a| a.val);
        // Scanning or copying costs a step per 64 bytes.
        let scan = sum_bytes / 64.0;
        let (cost, val) = match name {
            // Logical operators, comparisons and arithmetic give scalars.
            "_&&_"
            | "_||_"
            | "!_"
            | "-_"
            | "_-_"
            | "_*_"
            | "_/_"
            | "_%_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "@not_strictly_false" => (sum_cost, SCALAR),
            "_==_" | "_!=_" | "@in" | "size" | "contains" | "startsWith" | "endsWith"
            | "matches" | "indexOf" | "lastIndexOf" | "int" | "uint" | "double" | "bool"
            | "type" | "has" | "hasValue" | "glob" | "path_under" | "path_is_tree"
            | "path_is_pattern" | "ip_in" | "shell_parses" => (sum_cost + scan, SCALAR),
            // A glob list is one compiled set: a pass over the path (or each path).
            "path_matches" | "path_overlaps" => (sum_cost + scan * 2.0 + arg(0).items, SCALAR),
            "_?_:_" => {
                let (b, c) = (arg(1), arg(2));
                (
                    sum_cost,
                    Val {
                        items: b.items.max(c.items),
                        bytes: b.bytes.max(c.bytes),
                    },
                )
            }
            // An element is no larger than its container.
            "_[_]"
            | "_[?_]"
            | "_?._"
            | "value"
            | "orValue"
            | "or"
            | "optional.of"
            | "optional.ofNonZeroValue"
            | "optional.none"
            | "dyn" => (
                sum_cost,
                Val {
                    items: max_items,
                    bytes: args.iter().map(|a| a.val.bytes).fold(8.0, f64::max),
                },
            ),
            "_+_" => {
                let v = Val {
                    items: arg(0).items + arg(1).items,
                    bytes: sum_bytes,
                };
                (sum_cost + scan, self.build(v))
            }
            "join" => {
                let (list, sep) = (arg(0), arg(1));
                let v = Val {
                    items: 0.0,
                    bytes: list.bytes + list.items * sep.bytes,
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
            "replace" => {
                // Every character could be replaced: with an empty `old`, the new text
                // goes between every two.
                let (s, new) = (arg(0), arg(2));
                let b = s.bytes * (new.bytes + 1.0) + new.bytes;
                let v = Val {
                    items: 0.0,
                    bytes: b,
                };
                (sum_cost + b / 64.0, self.build(v))
            }
            "split" => {
                let s = arg(0);
                // One value of about 48 bytes per piece, plus the text.
                let v = Val {
                    items: s.bytes + 1.0,
                    bytes: s.bytes * 49.0 + 8.0,
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
            "format" => {
                let (f, a) = (arg(0), arg(1));
                let b = (f.bytes + 1.0) * (a.bytes + 8.0);
                let v = Val {
                    items: 0.0,
                    bytes: b,
                };
                (sum_cost + b / 64.0, self.build(v))
            }
            "path_ancestors" => {
                // (The workspace is joined to a relative path: count it too.)
                let p =
                    (arg(0).bytes + self.input.session.bytes).min(MAX_ANCESTOR_PATH_BYTES as f64);
                let n = (p / 2.0 + 1.0).min(MAX_ANCESTOR_COMPONENTS as f64 + 1.0);
                let v = Val {
                    items: n,
                    bytes: n * (p + 48.0),
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
            // `[index or key, value]` pairs of a list or a map (the two-variable
            // comprehensions): a two-item list of about 128 bytes per element.
            "@zp_pairs" => {
                let r = arg(0);
                let v = Val {
                    items: r.items,
                    bytes: r.bytes * 2.0 + r.items * 128.0 + 16.0,
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
            // `strings.quote(s)` (its target `strings` counted as an argument): an
            // escape is at most six characters (`\u0000`) per byte.
            "quote" => {
                let v = Val {
                    items: 0.0,
                    bytes: sum_bytes * 6.0 + 16.0,
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
            "shell_commands" => {
                let s = arg(0).bytes;
                let v = Val {
                    items: s + 1.0,
                    bytes: s * 16.0 + 256.0,
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
            // String conversions and the rest: no larger than a few times the arguments.
            _ => {
                let v = Val {
                    items: max_items,
                    bytes: sum_bytes * 2.0 + 16.0,
                };
                (sum_cost + v.bytes / 64.0, self.build(v))
            }
        };
        Node { cost, val }
    }
}

fn entry_parts(e: &EntryExpr) -> Vec<&IdedExpr> {
    match e {
        EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
        EntryExpr::StructField(f) => vec![&f.value],
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn est(src: &str) -> Estimate {
        let env = cel::Env::stdlib();
        let p = env.compile(src).unwrap();
        let mut lists = BTreeMap::new();
        lists.insert("ten".to_string(), (0..10).map(|i| i.to_string()).collect());
        estimate(p.expression(), &Inputs::ASSUMED, &lists)
    }

    #[test]
    fn prescan_bounds_depth_but_not_logical_chains() {
        let plus = vec!["1"; 100].join(" + ");
        assert!(prescan(&plus).unwrap_err().message.contains("nests deeper"));
        let and = vec!["true"; 1000].join(" && ");
        assert_eq!(prescan(&and), Ok(()));
        assert!(prescan(&"!".repeat(100)).is_err());
        assert!(prescan(&format!("args{}", ".a".repeat(100))).is_err());
        assert!(
            prescan(&format!("[{}]", vec!["1"; 5000].join(",")))
                .unwrap_err()
                .message
                .contains("tokens")
        );
        assert!(prescan(&"x".repeat(MAX_SOURCE_BYTES + 1)).is_err());
        // Operators inside strings are not counted.
        assert_eq!(
            prescan(&format!("\"{}\" == args.x", "+".repeat(200))),
            Ok(())
        );
        assert_eq!(
            prescan(
                "has(args.command) && args.command.startsWith(\"git \") && !args.command.contains(\"push\")"
            ),
            Ok(())
        );
    }

    #[test]
    fn nested_comprehensions_over_inputs_are_over_budget() {
        assert!(est("args.a.exists(x, x == 1)").fits());
        assert!(est("args.a.exists(x, lists.ten.exists(g, glob(g, x)))").fits());
        let e = est("args.a.all(x, args.a.all(y, args.a.all(z, args.a.all(w, x == y))))");
        assert!(!e.fits());
        assert!(
            e.describe().contains("evaluation steps"),
            "{}",
            e.describe()
        );
    }

    #[test]
    fn growing_strings_and_maps_are_over_budget() {
        let e = est(
            "[1,2,3,4,5,6,7,8,9,10].map(x, [1,2,3,4,5,6,7,8,9,10].map(y, [1,2,3,4,5,6,7,8,9,10].map(z, args.s + args.s))).size() > 0",
        );
        assert!(!e.fits());
        assert!(e.describe().contains("build a value"), "{}", e.describe());
        assert!(!est("args.s.replace('', args.s).size() > 0").fits());
        assert!(est("args.s + 'x' == 'y'").fits());
    }
}
