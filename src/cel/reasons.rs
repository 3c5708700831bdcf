//! The words an expression compares with why a call's account is not exact:
//! the codes of `call.inexact`, or the sentences of `call.unknown`. `lint`
//! warns of a word that is no code, and of any wording of a sentence, which
//! may change from one release to the next (`unknown-reason-code`).

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::{Expression, node_range};

/// Which list of reasons a word is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonList {
    /// `call.inexact`: the codes.
    Codes,
    /// `call.unknown`: the sentences.
    Sentences,
}

/// A string literal compared with an element of `call.inexact` or
/// `call.unknown` (`r == "parse-error"`, `r in ["…"]`, `u.contains("…")`,
/// `"…" in call.inexact`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasonText {
    /// The literal.
    pub text: String,
    /// The list it is compared with.
    pub list: ReasonList,
    /// Byte range inside the expression.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
}

impl Expression {
    /// Every string literal compared with a reason, placed in the source.
    ///
    /// Parses the source again, with the parser that keeps positions: for
    /// reports (`lint`), not for deciding.
    #[must_use]
    pub fn reason_texts(&self) -> Vec<ReasonText> {
        let source = self.source.as_str();
        if !source.contains("inexact") && !source.contains("unknown") {
            return Vec::new();
        }
        let Ok((ast, info)) = cel::parser::Parser::new()
            .enable_optional_syntax(true)
            .parse_with_source_info(source)
        else {
            return Vec::new();
        };
        let mut found: Vec<(String, ReasonList, u64)> = Vec::new();
        walk(&ast, &mut Vec::new(), &mut found);
        found
            .into_iter()
            .map(|(text, list, id)| {
                let (start, end) = node_range(source, Some(&info), id);
                ReasonText {
                    text,
                    list,
                    start,
                    end,
                }
            })
            .collect()
    }
}

/// Comprehension variables in scope, innermost last: `Some` for one that
/// stands for an element of a list of reasons, `None` for any other (which
/// hides an outer one of the same name, `call` included).
type Bound = Vec<(String, Option<ReasonList>)>;

/// `call.inexact` or `call.unknown`, with `call` not a bound variable.
fn reason_list(e: &IdedExpr, bound: &Bound) -> Option<ReasonList> {
    let Expr::Select(sel) = &e.expr else {
        return None;
    };
    if sel.test || !matches!(&sel.operand.expr, Expr::Ident(n) if n == "call") {
        return None;
    }
    if bound.iter().any(|(b, _)| b == "call") {
        return None;
    }
    match sel.field.as_str() {
        "inexact" => Some(ReasonList::Codes),
        "unknown" => Some(ReasonList::Sentences),
        _ => None,
    }
}

/// The list of reasons the variable `e` stands for an element of.
fn reason_var(e: &IdedExpr, bound: &Bound) -> Option<ReasonList> {
    let Expr::Ident(n) = &e.expr else {
        return None;
    };
    bound
        .iter()
        .rev()
        .find(|(b, _)| b == n)
        .and_then(|(_, l)| *l)
}

/// The string literals of `e`, or of the list `e` is.
fn literals(e: &IdedExpr) -> Vec<(String, u64)> {
    match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => vec![(s.to_string(), e.id)],
        Expr::List(l) => l.elements.iter().flat_map(literals).collect(),
        _ => Vec::new(),
    }
}

fn walk(e: &IdedExpr, bound: &mut Bound, found: &mut Vec<(String, ReasonList, u64)>) {
    match &e.expr {
        Expr::Call(call) => {
            // A macro the parser leaves unexpanded (two-variable
            // comprehensions: `call.inexact.exists(i, r, …)`): its last
            // argument is the body, `r` the element.
            if let Some(list) = call.target.as_deref().and_then(|t| reason_list(t, bound))
                && (2..=3).contains(&call.args.len())
                && call.args[..call.args.len() - 1]
                    .iter()
                    .all(|a| matches!(a.expr, Expr::Ident(_)))
            {
                let depth = bound.len();
                let n = call.args.len();
                for (k, a) in call.args[..n - 1].iter().enumerate() {
                    if let Expr::Ident(v) = &a.expr {
                        let element = k == n - 2;
                        bound.push((v.clone(), element.then_some(list)));
                    }
                }
                walk(&call.args[n - 1], bound, found);
                bound.truncate(depth);
                return;
            }
            let args: Vec<&IdedExpr> = call
                .target
                .as_deref()
                .into_iter()
                .chain(call.args.iter())
                .collect();
            // `"code" in call.inexact`.
            if call.func_name == "@in"
                && let (Some(lhs), Some(rhs)) = (args.first(), args.get(1))
                && let Some(list) = reason_list(rhs, bound)
            {
                for (text, id) in literals(lhs) {
                    found.push((text, list, id));
                }
            }
            // `r == "code"`, `r in ["code", …]`, `u.contains("words")`.
            if let Some(list) = args.iter().find_map(|a| reason_var(a, bound)) {
                for a in args.iter().filter(|a| reason_var(a, bound).is_none()) {
                    for (text, id) in literals(a) {
                        found.push((text, list, id));
                    }
                }
            }
            for a in args {
                walk(a, bound, found);
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, bound, found);
            walk(&c.accu_init, bound, found);
            let depth = bound.len();
            let list = reason_list(&c.iter_range, bound);
            // Over a list, a two-variable comprehension's first variable is
            // the index and its second the element.
            match &c.iter_var2 {
                Some(v2) => {
                    bound.push((c.iter_var.clone(), None));
                    bound.push((v2.clone(), list));
                }
                None => bound.push((c.iter_var.clone(), list)),
            }
            bound.push((c.accu_var.clone(), None));
            walk(&c.loop_cond, bound, found);
            walk(&c.loop_step, bound, found);
            walk(&c.result, bound, found);
            bound.truncate(depth);
        }
        Expr::Select(sel) => walk(&sel.operand, bound, found),
        Expr::List(list) => {
            for el in &list.elements {
                walk(el, bound, found);
            }
        }
        Expr::Map(_) | Expr::Struct(_) | Expr::Literal(_) | Expr::Ident(_) | Expr::Unspecified => {}
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::expect_used, reason = "tests")]
    use super::*;
    use crate::cel::{CelEnv, CompileCtx, PatternCache};

    /// Each literal compared with a reason: its text, its list, and the
    /// source it was placed at.
    fn texts(source: &str) -> Vec<(String, ReasonList, String)> {
        let lists = std::sync::Arc::new(std::collections::BTreeMap::new());
        let cx = CompileCtx {
            lists: &lists,
            allow_call: true,
            case_insensitive: false,
        };
        let expr = CelEnv::new()
            .compile(source, &mut PatternCache::default(), &cx)
            .expect("compiles");
        expr.reason_texts()
            .into_iter()
            .map(|t| (t.text, t.list, source[t.start..t.end].to_string()))
            .collect()
    }

    fn codes(words: &[&str]) -> Vec<(String, ReasonList, String)> {
        words
            .iter()
            .map(|w| (w.to_string(), ReasonList::Codes, format!("\"{w}\"")))
            .collect()
    }

    #[test]
    fn literals_compared_with_codes_are_found_and_placed() {
        assert_eq!(
            texts(r#"call.inexact.exists(r, r in ["parse-error", "dynamic-word"])"#),
            codes(&["parse-error", "dynamic-word"])
        );
        assert_eq!(
            texts(r#"call.inexact.exists(r, r == "parse-eror") && !call.exact"#),
            codes(&["parse-eror"])
        );
        assert_eq!(texts(r#""callback" in call.inexact"#), codes(&["callback"]));
        assert_eq!(
            texts(r#"call.inexact.exists(i, r, i == 0 && r == "x")"#),
            codes(&["x"])
        );
    }

    #[test]
    fn literals_compared_with_sentences_are_found() {
        let found = texts(r#"call.unknown.exists(u, u.startsWith("the script does not parse"))"#);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "the script does not parse");
        assert_eq!(found[0].1, ReasonList::Sentences);
    }

    #[test]
    fn other_literals_are_not() {
        assert_eq!(
            texts(r#"call.commands.exists(c, c.program == "rm" && "force" in c.tags)"#),
            []
        );
        // A variable bound again is not a reason any more.
        assert_eq!(
            texts(r#"call.inexact.exists(r, call.commands.exists(r, r.program == "rm"))"#),
            []
        );
        assert_eq!(texts(r#"["a"].exists(r, r == "b") && call.exact"#), []);
    }
}
