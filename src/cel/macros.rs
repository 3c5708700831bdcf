//! Macros the `cel` crate does not ship: `cel.bind` and the two-variable
//! comprehensions of cel-spec (`all`, `exists`, `existsOne` with an index or
//! key and a value, `transformList`, `transformMap`).
//!
//! Each expands into the one-variable comprehensions the crate evaluates, so
//! their short-circuit and error rules are the standard macros' own:
//!
//! - `cel.bind(x, init, body)` is a comprehension over no elements whose
//!   accumulator `x` starts at `init`; its result is `body`;
//! - `cel.block([e0, e1, …], r)`, the common subexpressions cel-go's
//!   optimizer takes out, is `e0` bound to `@index0`, then `e1` to
//!   `@index1`, …, around `r`, each `cel.index(i)` read as `@indexI`. The
//!   slots are evaluated in order before `r` (cel-go evaluates a slot when
//!   first read): a slot that fails and that `r` never reads makes the
//!   expression fail, which fails closed, where cel-go gives a value;
//! - `r.all(k, v, p)` ranges over `@zp_pairs(r)`, the `[index, element]`
//!   pairs of a list or the `[key, value]` pairs of a map, binding `k` and
//!   `v` to each pair's halves (likewise `exists`, `existsOne`,
//!   `transformList`);
//! - `x.getMilliseconds()` is `@zp_milliseconds(x)`, the milliseconds of
//!   the last second of a timestamp or a duration;
//! - `r.transformMap(k, v, e)` builds the `[key, e]` pairs and makes them a
//!   map with `@zp_to_map`.
//!
//! `@`-names cannot be written in an expression, so no policy can call the
//! helpers or clash with the hidden variables.

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, operators,
};
use cel::parser::{Macro, MacroExprHelper, ParseError};

/// The helper giving the `[index or key, value]` pairs of a list or map.
pub const PAIRS: &str = "@zp_pairs";
/// The helper making a map of `[key, value]` pairs.
pub const TO_MAP: &str = "@zp_to_map";

/// The helper behind `x.getMilliseconds()`.
pub const MILLIS: &str = "@zp_milliseconds";

/// The hidden variable each pair is bound to.
const PAIR: &str = "@zp_pair";
/// The accumulator, as the standard macros name it.
const RESULT: &str = "@result";

/// Every macro of this module, for the environment.
pub fn all() -> Vec<Macro> {
    vec![
        Macro::receiver("bind", 3, bind_macro),
        Macro::receiver("block", 2, block_macro),
        // The `cel` crate gives a duration's whole length in milliseconds;
        // cel-spec wants the milliseconds of its last second, as for a
        // timestamp: `@zp_milliseconds` gives both.
        Macro::receiver("getMilliseconds", 0, |h, t, _| {
            Ok(t.take().map(|x| call(h, MILLIS, vec![x])))
        }),
        Macro::receiver("all", 3, |h, t, a| two_var(h, t, a, Kind::All)),
        Macro::receiver("exists", 3, |h, t, a| two_var(h, t, a, Kind::Exists)),
        Macro::receiver("existsOne", 3, |h, t, a| two_var(h, t, a, Kind::ExistsOne)),
        Macro::receiver("exists_one", 3, |h, t, a| two_var(h, t, a, Kind::ExistsOne)),
        Macro::receiver("transformList", 3, |h, t, a| {
            two_var(h, t, a, Kind::TransformList)
        }),
        Macro::receiver("transformList", 4, |h, t, a| {
            two_var(h, t, a, Kind::TransformList)
        }),
        Macro::receiver("transformMap", 3, |h, t, a| {
            two_var(h, t, a, Kind::TransformMap)
        }),
        Macro::receiver("transformMap", 4, |h, t, a| {
            two_var(h, t, a, Kind::TransformMap)
        }),
    ]
}

/// Whether a call (name, argument count without the target) is one these
/// macros expand: the Pratt parser, which knows only the standard macros,
/// must leave such an expression to the parser that knows these.
#[must_use]
pub fn expands(name: &str, args: usize) -> bool {
    matches!(
        (name, args),
        ("bind", 3)
            | ("block", 2)
            | ("getMilliseconds", 0)
            | (
                "all" | "exists" | "existsOne" | "exists_one" | "transformList" | "transformMap",
                3
            )
            | ("transformList" | "transformMap", 4)
    )
}

#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
}

fn call(h: &mut MacroExprHelper<'_>, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_string(),
        target: None,
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_string()))
}

fn int(h: &mut MacroExprHelper<'_>, i: i64) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Int(i.into())))
}

fn boolean(h: &mut MacroExprHelper<'_>, b: bool) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Boolean(b.into())))
}

fn list(h: &mut MacroExprHelper<'_>, items: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::List(ListExpr::new(items)))
}

/// `body` with `name` bound to `init`: a comprehension over no elements.
fn bound(h: &mut MacroExprHelper<'_>, name: String, init: IdedExpr, body: IdedExpr) -> IdedExpr {
    let iter_range = list(h, Vec::new());
    let loop_cond = boolean(h, false);
    let loop_step = ident(h, &name);
    h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range,
        iter_var: "#unused".to_string(),
        iter_var2: None,
        accu_var: name,
        accu_init: init,
        loop_cond,
        loop_step,
        result: body,
    })))
}

/// A simple name, or the error the standard macros give.
fn name_of(h: &mut MacroExprHelper<'_>, e: &IdedExpr) -> Result<String, ParseError> {
    match &e.expr {
        Expr::Ident(n) => Ok(n.clone()),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    }
}

fn bind_macro(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<Option<IdedExpr>, ParseError> {
    if !matches!(target.as_ref().map(|t| &t.expr), Some(Expr::Ident(n)) if n == "cel") {
        return Ok(None);
    }
    let mut it = std::mem::take(args).into_iter();
    let (Some(var), Some(init), Some(body)) = (it.next(), it.next(), it.next()) else {
        return Ok(None);
    };
    let name = name_of(h, &var)?;
    Ok(Some(bound(h, name, init, body)))
}

/// The hidden variable of `cel.block`'s slot `i`.
fn slot(i: usize) -> String {
    format!("@index{i}")
}

/// `cel.block([e0, e1, …], r)`: see the module's documentation.
fn block_macro(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<Option<IdedExpr>, ParseError> {
    if !matches!(target.as_ref().map(|t| &t.expr), Some(Expr::Ident(n)) if n == "cel") {
        return Ok(None);
    }
    let mut it = std::mem::take(args).into_iter();
    let (Some(slots), Some(mut result)) = (it.next(), it.next()) else {
        return Ok(None);
    };
    let Expr::List(list) = slots.expr else {
        return Err(h.new_error(slots.id, "the slots of `cel.block` are a list literal"));
    };
    if !list.optional_indices.is_empty() {
        return Err(h.new_error(slots.id, "a slot of `cel.block` cannot be optional"));
    }
    let mut slots = list.elements;
    for (i, e) in slots.iter_mut().enumerate() {
        index_slots(h, e, i)?;
    }
    index_slots(h, &mut result, slots.len())?;
    let mut body = result;
    while let Some(init) = slots.pop() {
        body = bound(h, slot(slots.len()), init, body);
    }
    Ok(Some(body))
}

/// Reads each `cel.index(i)` in `e` as slot `i`'s variable; `cel.index(i)`
/// with `i` not below `below` (a slot not made yet) is an error, and so is a
/// `cel.block` inside another.
fn index_slots(
    h: &mut MacroExprHelper<'_>,
    e: &mut IdedExpr,
    below: usize,
) -> Result<(), ParseError> {
    let id = e.id;
    match &mut e.expr {
        Expr::Call(c) => {
            let is_index = c.func_name == "index"
                && matches!(c.target.as_deref().map(|t| &t.expr), Some(Expr::Ident(n)) if n == "cel");
            if is_index {
                let i = match c.args.as_slice() {
                    [
                        IdedExpr {
                            expr: Expr::Literal(LiteralValue::Int(i)),
                            ..
                        },
                    ] => usize::try_from(*i.inner()).ok(),
                    _ => None,
                };
                return match i {
                    Some(i) if i < below => {
                        e.expr = Expr::Ident(slot(i));
                        Ok(())
                    }
                    _ => Err(h.new_error(
                        id,
                        format!("`cel.index` reads a slot made before it, one of 0 to {below} (exclusive)"),
                    )),
                };
            }
            if let Some(t) = c.target.as_deref_mut() {
                index_slots(h, t, below)?;
            }
            for a in &mut c.args {
                index_slots(h, a, below)?;
            }
            Ok(())
        }
        Expr::Select(s) => index_slots(h, &mut s.operand, below),
        Expr::Comprehension(c) => {
            if c.accu_var.starts_with("@index") {
                return Err(h.new_error(id, "a `cel.block` cannot hold another"));
            }
            for x in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                index_slots(h, x, below)?;
            }
            Ok(())
        }
        Expr::List(l) => {
            for x in &mut l.elements {
                index_slots(h, x, below)?;
            }
            Ok(())
        }
        Expr::Map(m) => {
            for x in &mut m.entries {
                match &mut x.expr {
                    EntryExpr::MapEntry(m) => {
                        index_slots(h, &mut m.key, below)?;
                        index_slots(h, &mut m.value, below)?;
                    }
                    EntryExpr::StructField(f) => index_slots(h, &mut f.value, below)?,
                }
            }
            Ok(())
        }
        Expr::Struct(st) => {
            for x in &mut st.entries {
                match &mut x.expr {
                    EntryExpr::MapEntry(m) => {
                        index_slots(h, &mut m.key, below)?;
                        index_slots(h, &mut m.value, below)?;
                    }
                    EntryExpr::StructField(f) => index_slots(h, &mut f.value, below)?,
                }
            }
            Ok(())
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Ok(()),
    }
}

/// `pair[i]`.
fn half(h: &mut MacroExprHelper<'_>, i: i64) -> IdedExpr {
    let pair = ident(h, PAIR);
    let index = int(h, i);
    call(h, operators::INDEX, vec![pair, index])
}

/// `e` with the two variables bound to the current pair's halves.
fn with_pair(h: &mut MacroExprHelper<'_>, k: &str, v: &str, e: IdedExpr) -> IdedExpr {
    let second = half(h, 1);
    let inner = bound(h, v.to_string(), second, e);
    let first = half(h, 0);
    bound(h, k.to_string(), first, inner)
}

fn two_var(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    kind: Kind,
) -> Result<Option<IdedExpr>, ParseError> {
    let Some(range) = target.take() else {
        return Ok(None);
    };
    let mut taken = std::mem::take(args);
    let k = name_of(h, &taken[0])?;
    let v = name_of(h, &taken[1])?;
    if k == v {
        return Err(h.new_error(taken[1].id, "the two variables must have different names"));
    }
    let body = taken.pop();
    let filter = if taken.len() == 3 { taken.pop() } else { None };
    let Some(body) = body else { return Ok(None) };
    let pairs = call(h, PAIRS, vec![range]);
    let accu = |h: &mut MacroExprHelper<'_>| ident(h, RESULT);
    let (init, cond, step, result) = match kind {
        Kind::All | Kind::Exists => {
            let all = matches!(kind, Kind::All);
            let init = boolean(h, all);
            let a = accu(h);
            let cond_arg = if all {
                a
            } else {
                call(h, operators::LOGICAL_NOT, vec![a])
            };
            let cond = call(h, operators::NOT_STRICTLY_FALSE, vec![cond_arg]);
            let p = with_pair(h, &k, &v, body);
            let a = accu(h);
            let op = if all {
                operators::LOGICAL_AND
            } else {
                operators::LOGICAL_OR
            };
            let step = call(h, op, vec![a, p]);
            (init, cond, step, accu(h))
        }
        Kind::ExistsOne => {
            let init = int(h, 0);
            let cond = boolean(h, true);
            let p = with_pair(h, &k, &v, body);
            let a = accu(h);
            let one = int(h, 1);
            let plus = call(h, operators::ADD, vec![a, one]);
            let a = accu(h);
            let step = call(h, operators::CONDITIONAL, vec![p, plus, a]);
            let a = accu(h);
            let one = int(h, 1);
            let result = call(h, operators::EQUALS, vec![a, one]);
            (init, cond, step, result)
        }
        Kind::TransformList | Kind::TransformMap => {
            let init = list(h, Vec::new());
            let cond = boolean(h, true);
            let item = if matches!(kind, Kind::TransformMap) {
                let key = half(h, 0);
                let value = with_pair(h, &k, &v, body);
                list(h, vec![key, value])
            } else {
                with_pair(h, &k, &v, body)
            };
            let a = accu(h);
            let wrapped = list(h, vec![item]);
            let mut step = call(h, operators::ADD, vec![a, wrapped]);
            if let Some(f) = filter {
                let f = with_pair(h, &k, &v, f);
                let a = accu(h);
                step = call(h, operators::CONDITIONAL, vec![f, step, a]);
            }
            let a = accu(h);
            let result = if matches!(kind, Kind::TransformMap) {
                call(h, TO_MAP, vec![a])
            } else {
                a
            };
            (init, cond, step, result)
        }
    };
    let iter_var = PAIR.to_string();
    Ok(Some(h.next_expr(Expr::Comprehension(Box::new(
        ComprehensionExpr {
            iter_range: pairs,
            iter_var,
            iter_var2: None,
            accu_var: RESULT.to_string(),
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result,
        },
    )))))
}
