//! The planned evaluator: each expression, parsed by the `cel` crate, is planned
//! once at load into a tree that evaluates without run-time name resolution or
//! overload search.
//!
//! - variables are slots (`tool`, `session`, `call`, the workspace), `args.KEY`
//!   reads one argument and converts only it, and comprehension variables are
//!   numbered locals, written in place on every iteration (no scope per item);
//! - every function is bound to its implementation when planned; literal
//!   regexes, globs and glob lists are bound to their compiled form, and a
//!   literal list of globs tested with `exists(p, glob(p, X))` is one glob set;
//! - constant sub-expressions (`lists.NAME`, `lists.a + lists.b`, literal lists)
//!   are folded;
//! - no error value is built on the success path: a failure is one small
//!   [`Fail`], and the caller asks the `cel` crate for the error's wording;
//! - a run-time budget (steps, produced string and list sizes) fails closed.
//!
//! The `cel` crate stays the reference: whatever this planner does not know is
//! not planned ([`plan`] says why) and is evaluated by the crate. The
//! differential test (`tests/differential.rs`) checks that both agree on the
//! value or on failing, over random expressions and calls.

use std::cell::{OnceCell, RefCell};
use std::sync::Arc;

use cel::Value;
use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, LiteralValue};
use cel::objects::{Key, KeyRef, Map};
use regex::Regex;

use super::functions::{self, PatternCache};
use crate::effects::globs::{GlobRegexSet, PathGlobs};
use crate::effects::{paths, urls};

/// Most evaluation steps (nodes visited) one expression may take for one call.
pub const MAX_STEPS: u64 = 1_000_000;
/// Longest string (bytes) an expression may build.
pub const MAX_STRING: usize = 1 << 20;
/// Longest list an expression may build.
pub const MAX_LIST: usize = 100_000;
/// Deepest expression tree that is planned; deeper ones are left to the `cel` crate.
pub const MAX_DEPTH: usize = 96;

/// Why a planned evaluation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fail {
    /// The expression errors (a missing key, a wrong type, …); the `cel` crate
    /// words the error.
    Error,
    /// The run-time budget was exceeded: this fails closed as it is.
    Budget(&'static str),
    /// The values took a shape the plan leaves to the `cel` crate (a
    /// comprehension over a map, whose order is the crate's): the crate
    /// evaluates this call.
    Fallback,
}

type R = Result<Value, Fail>;

/// A planned expression.
#[derive(Debug)]
pub struct Plan {
    pub(super) root: Node,
    pub(super) locals: usize,
}

/// The variables of one call, as the planned evaluator reads them.
pub struct Frame<'a> {
    pub(crate) tool: &'a Value,
    pub(crate) session: &'a Value,
    pub(crate) workspace: &'a Value,
    pub(crate) call: Option<Value>,
    pub(crate) args: Args<'a>,
    /// `args` converted whole, the first time an expression reads it whole.
    args_whole: OnceCell<Value>,
    /// `args.KEY` values converted so far in this call.
    args_fields: RefCell<Vec<(Arc<str>, Option<Value>)>>,
}

/// Where `args` comes from.
#[derive(Debug, Clone)]
pub enum Args<'a> {
    /// The call's JSON: keys are converted as they are read.
    Json(&'a serde_json::Value),
    /// Already a CEL value.
    Cel(&'a Value),
}

impl<'a> Frame<'a> {
    /// The frame of one call.
    #[must_use]
    pub fn new(
        tool: &'a Value,
        session: &'a Value,
        workspace: &'a Value,
        args: Args<'a>,
    ) -> Frame<'a> {
        Frame {
            tool,
            session,
            workspace,
            call: None,
            args,
            args_whole: OnceCell::new(),
            args_fields: RefCell::new(Vec::new()),
        }
    }

    /// `args` as one CEL value.
    pub(crate) fn args_value(&self) -> Value {
        match &self.args {
            Args::Cel(v) => (*v).clone(),
            Args::Json(j) => self
                .args_whole
                .get_or_init(|| super::json::to_cel(j))
                .clone(),
        }
    }

    /// `args.KEY`: `None` if the key is missing, `Err` if `args` is not a map.
    pub(super) fn arg_field(&self, key: &Arc<str>) -> Result<Option<Value>, Fail> {
        match &self.args {
            Args::Cel(v) => match v {
                Value::Map(m) => Ok(m.get(&KeyRef::String(key)).cloned()),
                _ => Err(Fail::Error),
            },
            Args::Json(j) => {
                let Some(obj) = j.as_object() else {
                    return Err(Fail::Error);
                };
                if let Some((_, v)) = self
                    .args_fields
                    .borrow()
                    .iter()
                    .find(|(k, _)| Arc::ptr_eq(k, key) || **k == **key)
                {
                    return Ok(v.clone());
                }
                let v = json_get(obj, key).map(super::json::to_cel);
                self.args_fields
                    .borrow_mut()
                    .push((Arc::clone(key), v.clone()));
                Ok(v)
            }
        }
    }

    fn has_arg(&self, key: &str) -> Result<bool, Fail> {
        match &self.args {
            Args::Cel(Value::Map(m)) => Ok(m.get(&KeyRef::String(key)).is_some()),
            Args::Json(serde_json::Value::Object(o)) => Ok(o.contains_key(key)),
            _ => Err(Fail::Error),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Var {
    Tool,
    Session,
    Call,
    Args,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Bin {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Index,
    In,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Str1 {
    PathIsTree,
    PathIsPattern,
    PathClean,
    PathAncestors,
    UrlHost,
    ShellParses,
    ShellCommands,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Str2 {
    Contains,
    StartsWith,
    EndsWith,
    PathUnder,
}

#[derive(Debug)]
pub(super) enum Node {
    Const(Value),
    Var(Var),
    Local(usize),
    ArgField(Arc<str>),
    HasArg(Arc<str>),
    Select(Box<Node>, Arc<str>),
    Has(Box<Node>, Arc<str>),
    List(Vec<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Neg(Box<Node>),
    NotStrictlyFalse(Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Bin(Bin, Box<Node>, Box<Node>),
    Size(Box<Node>),
    Str1(Str1, Box<Node>),
    Str2(Str2, Box<Node>, Box<Node>),
    Substring(Box<Node>, Box<Node>, Option<Box<Node>>),
    Matches(Box<Node>, Box<Node>),
    MatchesRe(Box<Node>, Regex),
    Glob(Box<Node>, Box<Node>),
    GlobConst(functions::PathGlob, Box<Node>),
    /// `[literal globs].exists(p, glob(p, X))`: X matches one of the set.
    GlobAny(GlobRegexSet, Box<Node>),
    PathList {
        overlaps: bool,
        case_insensitive: bool,
        path: Box<Node>,
        globs: Box<Node>,
    },
    PathListConst {
        overlaps: bool,
        path: Box<Node>,
        set: Arc<PathGlobs>,
    },
    IpIn(Box<Node>, Box<Node>),
    Comprehension(Box<Compr>),
}

#[derive(Debug)]
pub(super) struct Compr {
    pub(super) range: Node,
    pub(super) iter: usize,
    pub(super) accu: usize,
    pub(super) init: Node,
    pub(super) cond: Node,
    pub(super) step: Node,
    pub(super) result: Node,
    /// `@result && x` / `@result || x`: errors may be absorbed by a later item.
    pub(super) fold: Option<bool>,
    /// `map`/`filter`: (guard, item) appended to the accumulator in place.
    pub(super) append: Option<(Option<Node>, Node)>,
}

/// What the planner needs from the load.
pub struct PlanCtx<'a> {
    /// Compiled literal patterns.
    pub cache: &'a PatternCache,
    /// The named lists.
    pub lists: &'a Arc<std::collections::BTreeMap<String, Vec<String>>>,
    /// Whether path globs ignore case.
    pub case_insensitive: bool,
}

struct Planner<'a> {
    cx: &'a PlanCtx<'a>,
    scopes: Vec<(String, usize)>,
    locals: usize,
}

/// Plans a parsed expression.
///
/// # Errors
/// Why it is not planned (the `cel` crate evaluates it instead).
pub fn plan(expr: &IdedExpr, cx: &PlanCtx<'_>) -> Result<Plan, String> {
    let mut p = Planner {
        cx,
        scopes: Vec::new(),
        locals: 0,
    };
    let root = p.node(expr, 0)?;
    Ok(Plan {
        root,
        locals: p.locals,
    })
}

fn lit(l: &LiteralValue) -> Result<Value, String> {
    Ok(match l {
        LiteralValue::Boolean(b) => Value::Bool(*b.inner()),
        LiteralValue::Int(i) => Value::Int(*i.inner()),
        LiteralValue::UInt(u) => Value::UInt(*u.inner()),
        LiteralValue::Double(d) => Value::Float(*d.inner()),
        LiteralValue::Null => Value::Null,
        LiteralValue::String(s) => Value::String(Arc::new(s.inner().to_string())),
        LiteralValue::Bytes(_) => return Err("bytes literals".into()),
    })
}

fn is_pure_const(n: &Node) -> bool {
    matches!(n, Node::Const(_))
}

impl Planner<'_> {
    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }

    fn lists_value(&self) -> Value {
        self.cx.cache.lists_value(self.cx.lists)
    }

    fn node(&mut self, e: &IdedExpr, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH}"));
        }
        let d = depth + 1;
        let n = match &e.expr {
            Expr::Literal(l) => Node::Const(lit(l)?),
            Expr::Ident(name) => match self.lookup(name) {
                Some(slot) => Node::Local(slot),
                None => match name.as_str() {
                    "tool" => Node::Var(Var::Tool),
                    "session" => Node::Var(Var::Session),
                    "call" => Node::Var(Var::Call),
                    "args" => Node::Var(Var::Args),
                    "lists" => Node::Const(self.lists_value()),
                    other => return Err(format!("the name `{other}`")),
                },
            },
            Expr::Select(sel) => {
                let operand = self.node(&sel.operand, d)?;
                let field: Arc<str> = Arc::from(sel.field.as_str());
                match (operand, sel.test) {
                    (Node::Var(Var::Args), false) => Node::ArgField(field),
                    (Node::Var(Var::Args), true) => Node::HasArg(field),
                    (o, false) => Node::Select(Box::new(o), field),
                    (o, true) => Node::Has(Box::new(o), field),
                }
            }
            Expr::List(list) => {
                if !list.optional_indices.is_empty() {
                    return Err("optional list elements".into());
                }
                let items = list
                    .elements
                    .iter()
                    .map(|x| self.node(x, d))
                    .collect::<Result<Vec<_>, _>>()?;
                Node::List(items)
            }
            Expr::Call(call) => self.call(call, d)?,
            Expr::Comprehension(c) => self.comprehension(c, d)?,
            Expr::Map(_) => return Err("map literals".into()),
            Expr::Struct(_) => return Err("struct literals".into()),
            Expr::Unspecified => return Err("an unspecified expression".into()),
        };
        Ok(self.fold(n))
    }

    /// Evaluates a node whose operands are all constants, now.
    fn fold(&self, n: Node) -> Node {
        let foldable = match &n {
            Node::List(items) => items.iter().all(is_pure_const),
            Node::Select(o, _) | Node::Has(o, _) | Node::Not(o) | Node::Neg(o) | Node::Size(o) => {
                is_pure_const(o)
            }
            Node::And(a, b)
            | Node::Or(a, b)
            | Node::Str2(Str2::Contains | Str2::StartsWith | Str2::EndsWith, a, b) => {
                is_pure_const(a) && is_pure_const(b)
            }
            Node::Bin(_, a, b) => is_pure_const(a) && is_pure_const(b),
            Node::Cond(c, _, _) => is_pure_const(c),
            Node::Str1(
                Str1::PathIsTree | Str1::PathIsPattern | Str1::PathClean | Str1::UrlHost,
                a,
            ) => is_pure_const(a),
            _ => false,
        };
        if !foldable {
            return n;
        }
        if let Node::Cond(c, a, b) = n {
            return match &*c {
                Node::Const(Value::Bool(true)) => *a,
                Node::Const(Value::Bool(false)) => *b,
                _ => Node::Cond(c, a, b),
            };
        }
        let null = Value::Null;
        let frame = Frame::new(&null, &null, &null, Args::Cel(&null));
        let mut run = Run {
            frame: &frame,
            locals: Vec::new(),
            steps: 0,
        };
        match run.eval(&n) {
            Ok(v) => Node::Const(v),
            Err(_) => n,
        }
    }

    fn new_local(&mut self) -> usize {
        self.locals += 1;
        self.locals - 1
    }

    fn comprehension(&mut self, c: &ComprehensionExpr, d: usize) -> Result<Node, String> {
        if c.iter_var2.is_some() {
            return Err("two-variable comprehensions".into());
        }
        let range = self.node(&c.iter_range, d)?;
        let init = self.node(&c.accu_init, d)?;
        let accu = self.new_local();
        let iter = self.new_local();
        let depth = self.scopes.len();
        self.scopes.push((c.accu_var.clone(), accu));
        // The loop condition sees the accumulator only.
        let cond = self.node(&c.loop_cond, d)?;
        self.scopes.push((c.iter_var.clone(), iter));
        let step = self.node(&c.loop_step, d)?;
        self.scopes.truncate(depth + 1);
        let result = self.node(&c.result, d)?;
        self.scopes.truncate(depth);

        let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if *n == c.accu_var);
        let fold = match &c.loop_step.expr {
            Expr::Call(call)
                if call.target.is_none()
                    && call.args.first().is_some_and(is_accu)
                    && (call.func_name == "_&&_" || call.func_name == "_||_") =>
            {
                Some(call.func_name == "_||_")
            }
            _ => None,
        };

        // `[literal globs].exists(p, glob(p, X))`, X not reading `p`.
        if fold == Some(true)
            && matches!(init, Node::Const(Value::Bool(false)))
            && let Node::Const(Value::List(items)) = &range
            && !items.is_empty()
            && let Node::Or(_, pred) = &step
            && let Node::Glob(pat, path) = &**pred
            && matches!(**pat, Node::Local(s) if s == iter)
            && !reads_local(path, iter)
            && !reads_local(path, accu)
            && matches!(result, Node::Local(s) if s == accu)
        {
            // The literals were compiled at load (`PatternCache`).
            let globs: Option<Vec<&functions::PathGlob>> = items
                .iter()
                .map(|it| match it {
                    Value::String(s) => self.cx.cache.glob(s),
                    _ => None,
                })
                .collect();
            if let Some(globs) = globs
                && let Ok(set) = GlobRegexSet::new(globs.into_iter().map(functions::PathGlob::glob))
            {
                let Node::Or(_, pred) = step else {
                    return Err("internal: a glob fold lost its shape".into());
                };
                let Node::Glob(_, path) = *pred else {
                    return Err("internal: a glob fold lost its shape".into());
                };
                return Ok(Node::GlobAny(set, path));
            }
        }

        let append = if matches!(&c.result.expr, Expr::Ident(n) if *n == c.accu_var)
            && matches!(c.loop_cond.expr, Expr::Literal(_))
        {
            let items_of = |n: &Node| -> bool {
                matches!(n, Node::Bin(Bin::Add, a, b)
                    if matches!(**a, Node::Local(s) if s == accu) && matches!(**b, Node::List(_)))
            };
            match &step {
                Node::Cond(_, a, b)
                    if items_of(a) && matches!(**b, Node::Local(s) if s == accu) =>
                {
                    Some(true)
                }
                n if items_of(n) => Some(false),
                _ => None,
            }
        } else {
            None
        };
        let (step, append) = match append {
            None => (step, None),
            Some(guarded) => {
                let (guard, add) = if guarded {
                    let Node::Cond(g, a, _) = step else {
                        return Err("internal: an append step lost its shape".into());
                    };
                    (Some(*g), *a)
                } else {
                    (None, step)
                };
                let Node::Bin(Bin::Add, _, items) = add else {
                    return Err("internal: an append step lost its shape".into());
                };
                (Node::Const(Value::Null), Some((guard, *items)))
            }
        };
        Ok(Node::Comprehension(Box::new(Compr {
            range,
            iter,
            accu,
            init,
            cond,
            step,
            result,
            fold,
            append,
        })))
    }

    fn call(&mut self, call: &CallExpr, d: usize) -> Result<Node, String> {
        let name = call.func_name.as_str();
        let args: Vec<&IdedExpr> = call.args.iter().collect();
        let b = |n| Box::new(n);
        if let Some(target) = &call.target {
            // Member calls.
            let t = self.node(target, d)?;
            let a = args
                .iter()
                .map(|x| self.node(x, d))
                .collect::<Result<Vec<_>, _>>()?;
            let mut a = a.into_iter();
            return Ok(match (name, a.len()) {
                ("size", 0) => Node::Size(b(t)),
                ("contains", 1) => Node::Str2(Str2::Contains, b(t), b(next(&mut a)?)),
                ("startsWith", 1) => Node::Str2(Str2::StartsWith, b(t), b(next(&mut a)?)),
                ("endsWith", 1) => Node::Str2(Str2::EndsWith, b(t), b(next(&mut a)?)),
                ("substring", 1) => Node::Substring(b(t), b(next(&mut a)?), None),
                ("substring", 2) => {
                    let s = next(&mut a)?;
                    let e = next(&mut a)?;
                    Node::Substring(b(t), b(s), Some(b(e)))
                }
                ("matches", 1) => self.matches(t, next(&mut a)?),
                _ => return Err(format!("the method `{name}` with {} arguments", a.len())),
            });
        }
        let mut a = args
            .iter()
            .map(|x| self.node(x, d))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter();
        let n = a.len();
        Ok(match (name, n) {
            ("_&&_", 2) => Node::And(b(next(&mut a)?), b(next(&mut a)?)),
            ("_||_", 2) => Node::Or(b(next(&mut a)?), b(next(&mut a)?)),
            ("!_", 1) => Node::Not(b(next(&mut a)?)),
            ("-_", 1) => Node::Neg(b(next(&mut a)?)),
            ("@not_strictly_false", 1) => Node::NotStrictlyFalse(b(next(&mut a)?)),
            ("_?_:_", 3) => Node::Cond(b(next(&mut a)?), b(next(&mut a)?), b(next(&mut a)?)),
            ("size", 1) => Node::Size(b(next(&mut a)?)),
            ("matches", 2) => {
                let s = next(&mut a)?;
                self.matches(s, next(&mut a)?)
            }
            ("glob", 2) => {
                let p = next(&mut a)?;
                let path = next(&mut a)?;
                match &p {
                    Node::Const(Value::String(s)) => match self
                        .cx
                        .cache
                        .glob(s)
                        .cloned()
                        .or_else(|| functions::compile_path_glob(s).ok())
                    {
                        Some(m) => Node::GlobConst(m, b(path)),
                        None => Node::Glob(b(p), b(path)),
                    },
                    _ => Node::Glob(b(p), b(path)),
                }
            }
            ("path_matches" | "path_overlaps", 2) => {
                let overlaps = name == "path_overlaps";
                let path = next(&mut a)?;
                let globs = next(&mut a)?;
                let set = match &globs {
                    Node::Const(Value::List(items)) => items
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => Some(s.to_string()),
                            _ => None,
                        })
                        .collect::<Option<Vec<String>>>()
                        .and_then(|items| {
                            self.cx
                                .cache
                                .glob_list_for_plan(&items, self.cx.case_insensitive)
                        }),
                    _ => None,
                };
                match set {
                    Some(set) => Node::PathListConst {
                        overlaps,
                        path: b(path),
                        set,
                    },
                    None => Node::PathList {
                        overlaps,
                        case_insensitive: self.cx.case_insensitive,
                        path: b(path),
                        globs: b(globs),
                    },
                }
            }
            ("path_is_tree", 1) => Node::Str1(Str1::PathIsTree, b(next(&mut a)?)),
            ("path_is_pattern", 1) => Node::Str1(Str1::PathIsPattern, b(next(&mut a)?)),
            ("path_clean", 1) => Node::Str1(Str1::PathClean, b(next(&mut a)?)),
            ("path_ancestors", 1) => Node::Str1(Str1::PathAncestors, b(next(&mut a)?)),
            ("url_host", 1) => Node::Str1(Str1::UrlHost, b(next(&mut a)?)),
            ("shell_parses", 1) => Node::Str1(Str1::ShellParses, b(next(&mut a)?)),
            ("shell_commands", 1) => Node::Str1(Str1::ShellCommands, b(next(&mut a)?)),
            ("path_under", 2) => Node::Str2(Str2::PathUnder, b(next(&mut a)?), b(next(&mut a)?)),
            ("ip_in", 2) => Node::IpIn(b(next(&mut a)?), b(next(&mut a)?)),
            (op, 2) => {
                let bin = match op {
                    "_==_" => Bin::Eq,
                    "_!=_" => Bin::Ne,
                    "_<_" => Bin::Lt,
                    "_<=_" => Bin::Le,
                    "_>_" => Bin::Gt,
                    "_>=_" => Bin::Ge,
                    "_+_" => Bin::Add,
                    "_-_" => Bin::Sub,
                    "_*_" => Bin::Mul,
                    "_/_" => Bin::Div,
                    "_%_" => Bin::Mod,
                    "_[_]" => Bin::Index,
                    "@in" => Bin::In,
                    _ => return Err(format!("the function `{op}`")),
                };
                Node::Bin(bin, b(next(&mut a)?), b(next(&mut a)?))
            }
            (other, n) => return Err(format!("the function `{other}` with {n} arguments")),
        })
    }

    fn matches(&self, s: Node, re: Node) -> Node {
        match &re {
            Node::Const(Value::String(p)) => match self
                .cx
                .cache
                .regex(p)
                .cloned()
                .or_else(|| Regex::new(p).ok())
            {
                Some(r) => Node::MatchesRe(Box::new(s), r),
                None => Node::Matches(Box::new(s), Box::new(re)),
            },
            _ => Node::Matches(Box::new(s), Box::new(re)),
        }
    }
}

fn next(a: &mut std::vec::IntoIter<Node>) -> Result<Node, String> {
    a.next()
        .ok_or_else(|| "internal: an argument went missing".to_string())
}

/// How many nodes the tree has, counted up to `limit` (a bigger tree counts as `limit + 1`).
pub(super) fn size(n: &Node, limit: usize) -> usize {
    fn walk(n: &Node, left: &mut usize) {
        if *left == 0 {
            return;
        }
        *left -= 1;
        if matches!(n, Node::Comprehension(_)) {
            // Comprehensions are never decided by a batch: count them as too big.
            *left = 0;
            return;
        }
        children(n, &mut |c| walk(c, left));
    }
    let mut left = limit + 1;
    walk(n, &mut left);
    limit + 1 - left
}

fn reads_local(n: &Node, slot: usize) -> bool {
    if let Node::Local(s) = n {
        return *s == slot;
    }
    let mut hit = false;
    children(n, &mut |c| hit = hit || reads_local(c, slot));
    hit
}

/// Calls `f` on each child of `n`, in order.
fn children<'n>(n: &'n Node, f: &mut dyn FnMut(&'n Node)) {
    match n {
        Node::Const(_) | Node::Var(_) | Node::Local(_) | Node::ArgField(_) | Node::HasArg(_) => {}
        Node::Select(a, _)
        | Node::Has(a, _)
        | Node::Not(a)
        | Node::Neg(a)
        | Node::NotStrictlyFalse(a)
        | Node::Size(a)
        | Node::Str1(_, a)
        | Node::MatchesRe(a, _)
        | Node::GlobConst(_, a)
        | Node::GlobAny(_, a)
        | Node::PathListConst { path: a, .. } => f(a),
        Node::List(items) => items.iter().for_each(f),
        Node::And(a, b)
        | Node::Or(a, b)
        | Node::Bin(_, a, b)
        | Node::Str2(_, a, b)
        | Node::Matches(a, b)
        | Node::Glob(a, b)
        | Node::IpIn(a, b)
        | Node::PathList {
            path: a, globs: b, ..
        } => {
            f(a);
            f(b);
        }
        Node::Cond(a, b, c) => {
            f(a);
            f(b);
            f(c);
        }
        Node::Substring(a, b, c) => {
            f(a);
            f(b);
            if let Some(c) = c {
                f(c);
            }
        }
        Node::Comprehension(c) => {
            for x in [&c.range, &c.init, &c.cond, &c.step, &c.result] {
                f(x);
            }
            if let Some((guard, item)) = &c.append {
                if let Some(g) = guard {
                    f(g);
                }
                f(item);
            }
        }
    }
}

impl Plan {
    /// The planned tree.
    pub(super) fn root(&self) -> &Node {
        &self.root
    }

    /// Evaluates the plan for one call.
    ///
    /// # Errors
    /// [`Fail::Error`] where the `cel` crate errors; [`Fail::Budget`] past the budget.
    pub fn eval(&self, frame: &Frame<'_>) -> R {
        let mut run = Run {
            frame,
            locals: if self.locals == 0 {
                Vec::new()
            } else {
                vec![Value::Null; self.locals]
            },
            steps: 0,
        };
        run.eval(&self.root)
    }
}

struct Run<'f, 'a> {
    frame: &'f Frame<'a>,
    locals: Vec<Value>,
    steps: u64,
}

fn string(v: &Value) -> Result<&Arc<String>, Fail> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(Fail::Error),
    }
}

fn boolean(v: &Value) -> Result<bool, Fail> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(Fail::Error),
    }
}

fn strings_of(v: &Value) -> Result<Vec<String>, Fail> {
    match v {
        Value::List(items) => items
            .iter()
            .map(|i| string(i).map(|s| s.to_string()))
            .collect(),
        _ => Err(Fail::Error),
    }
}

fn check_string(s: String) -> R {
    if s.len() > MAX_STRING {
        return Err(Fail::Budget(
            "a string longer than the evaluation budget allows",
        ));
    }
    Ok(Value::String(Arc::new(s)))
}

fn check_list(v: Vec<Value>) -> R {
    if v.len() > MAX_LIST {
        return Err(Fail::Budget(
            "a list longer than the evaluation budget allows",
        ));
    }
    Ok(Value::List(Arc::new(v)))
}

/// Numeric ordering across int, uint and double, as the `cel` crate compares.
fn num_cmp(a: &Value, b: &Value) -> Option<Result<std::cmp::Ordering, ()>> {
    use std::cmp::Ordering;
    let f = |o: Option<Ordering>| o.ok_or(());
    Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::UInt(x), Value::UInt(y)) => Ok(x.cmp(y)),
        (Value::Int(x), Value::UInt(y)) => {
            Ok(u64::try_from(*x).map_or(Ordering::Less, |x| x.cmp(y)))
        }
        (Value::UInt(x), Value::Int(y)) => {
            Ok(i64::try_from(*x).map_or(Ordering::Greater, |x| x.cmp(y)))
        }
        (Value::Float(x), Value::Float(y)) => f(x.partial_cmp(y)),
        (Value::Int(x), Value::Float(y)) => f((*x as f64).partial_cmp(y)),
        (Value::UInt(x), Value::Float(y)) => f((*x as f64).partial_cmp(y)),
        (Value::Float(x), Value::Int(y)) => f(x.partial_cmp(&(*y as f64))),
        (Value::Float(x), Value::UInt(y)) => f(x.partial_cmp(&(*y as f64))),
        _ => return None,
    })
}

fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering, Fail> {
    if let Some(o) = num_cmp(a, b) {
        return o.map_err(|()| Fail::Error);
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        _ => Err(Fail::Error),
    }
}

/// `x OP y` for the six comparisons (`==` and `!=` of any values, the
/// others ordered); any other operator is an error.
pub(super) fn comparison(op: Bin, x: &Value, y: &Value) -> Result<bool, Fail> {
    use std::cmp::Ordering::{Greater, Less};
    Ok(match op {
        Bin::Eq => equal(x, y),
        Bin::Ne => !equal(x, y),
        Bin::Lt => compare(x, y)? == Less,
        Bin::Le => compare(x, y)? != Greater,
        Bin::Gt => compare(x, y)? == Greater,
        Bin::Ge => compare(x, y)? != Less,
        _ => return Err(Fail::Error),
    })
}

/// Equality as the `cel` crate's `==`: numbers across kinds, lists item by
/// item, maps key by key; different kinds are unequal.
fn equal(a: &Value, b: &Value) -> bool {
    if let Some(o) = num_cmp(a, b) {
        return o == Ok(std::cmp::Ordering::Equal);
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equal(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(k, v)| map_find(y, &key_value(k)).is_some_and(|w| equal(v, w)))
        }
        _ => false,
    }
}

fn key_value(k: &Key) -> Value {
    // Keys of maps compared by `==`.
    match k {
        Key::Int(i) => Value::Int(*i),
        Key::Uint(u) => Value::UInt(*u),
        Key::Bool(b) => Value::Bool(*b),
        Key::String(s) => Value::String(Arc::clone(s)),
    }
}

/// A map lookup by a CEL value, numeric keys falling back across kinds.
fn map_find<'m>(m: &'m Map, key: &Value) -> Option<&'m Value> {
    match key {
        Value::String(s) => m.get(&KeyRef::String(s)),
        Value::Bool(b) => m.get(&KeyRef::Bool(*b)),
        Value::Int(i) => m
            .get(&KeyRef::Int(*i))
            .or_else(|| u64::try_from(*i).ok().and_then(|u| m.get(&KeyRef::Uint(u)))),
        Value::UInt(u) => m
            .get(&KeyRef::Uint(*u))
            .or_else(|| i64::try_from(*u).ok().and_then(|i| m.get(&KeyRef::Int(i)))),
        Value::Float(d) => {
            let d = *d;
            let as_int = (d > i64::MIN as f64 && d < i64::MAX as f64 && (d as i64) as f64 == d)
                .then_some(d as i64);
            let as_uint =
                (d >= 0.0 && d < u64::MAX as f64 && (d as u64) as f64 == d).then_some(d as u64);
            as_int
                .and_then(|i| m.get(&KeyRef::Int(i)))
                .or_else(|| as_uint.and_then(|u| m.get(&KeyRef::Uint(u))))
        }
        _ => None,
    }
}

fn is_lookup_key(v: &Value) -> bool {
    matches!(
        v,
        Value::String(_) | Value::Bool(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_)
    )
}

fn index(container: &Value, idx: &Value) -> R {
    match container {
        Value::List(items) => {
            let i = match idx {
                Value::Int(i) => usize::try_from(*i).map_err(|_| Fail::Error)?,
                Value::UInt(u) => usize::try_from(*u).map_err(|_| Fail::Error)?,
                // A double indexes when it is a whole number, as in the crate.
                Value::Float(d) if d.fract() == 0.0 && *d >= 0.0 && *d < usize::MAX as f64 => {
                    *d as usize
                }
                _ => return Err(Fail::Error),
            };
            items.get(i).cloned().ok_or(Fail::Error)
        }
        Value::Map(m) => map_find(m, idx).cloned().ok_or(Fail::Error),
        _ => Err(Fail::Error),
    }
}

/// A key of a JSON object. The map hashes its keys; arguments are a few keys,
/// where comparing them in order is several times cheaper than hashing one.
pub(super) fn json_get<'j>(
    obj: &'j serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<&'j serde_json::Value> {
    if obj.len() <= 12 {
        obj.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        obj.get(key)
    }
}

fn select(v: &Value, field: &str) -> R {
    self::field(v, field).cloned().ok_or(Fail::Error)
}

/// A field of a map, lent; `None` if `v` is not a map or has no such field.
pub(super) fn field<'v>(v: &'v Value, field: &str) -> Option<&'v Value> {
    match v {
        // `tool` and `session` have a handful of fields: a scan compares a few
        // short strings where a lookup hashes the name with SipHash.
        Value::Map(m) if m.map.len() <= 12 => m
            .map
            .iter()
            .find(|(k, _)| matches!(k, cel::objects::Key::String(s) if s.as_str() == field))
            .map(|(_, v)| v),
        Value::Map(m) => m.get(&KeyRef::String(field)),
        _ => None,
    }
}

fn arith(op: Bin, a: &Value, b: &Value) -> R {
    use Value::{Float, Int, UInt};
    let e = Fail::Error;
    Ok(match (op, a, b) {
        (Bin::Add, Int(x), Int(y)) => Int(x.checked_add(*y).ok_or(e)?),
        (Bin::Add, UInt(x), UInt(y)) => UInt(x.checked_add(*y).ok_or(e)?),
        (Bin::Add, Float(x), Float(y)) => Float(x + y),
        (Bin::Add, Value::String(x), Value::String(y)) => {
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            return check_string(s);
        }
        (Bin::Add, Value::List(x), Value::List(y)) => {
            if x.len() + y.len() > MAX_LIST {
                return Err(Fail::Budget(
                    "a list longer than the evaluation budget allows",
                ));
            }
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend(x.iter().cloned());
            v.extend(y.iter().cloned());
            return check_list(v);
        }
        (Bin::Add, Value::List(_), Value::Map(_)) => return Err(Fail::Fallback),
        (Bin::Sub, Int(x), Int(y)) => Int(x.checked_sub(*y).ok_or(e)?),
        (Bin::Sub, UInt(x), UInt(y)) => UInt(x.checked_sub(*y).ok_or(e)?),
        (Bin::Sub, Float(x), Float(y)) => Float(x - y),
        (Bin::Mul, Int(x), Int(y)) => Int(x.checked_mul(*y).ok_or(e)?),
        (Bin::Mul, UInt(x), UInt(y)) => UInt(x.checked_mul(*y).ok_or(e)?),
        (Bin::Mul, Float(x), Float(y)) => Float(x * y),
        (Bin::Div, Int(x), Int(y)) => Int(x.checked_div(*y).ok_or(e)?),
        (Bin::Div, UInt(x), UInt(y)) => UInt(x.checked_div(*y).ok_or(e)?),
        (Bin::Div, Float(x), Float(y)) => Float(x / y),
        (Bin::Mod, Int(x), Int(y)) => Int(x.checked_rem(*y).ok_or(e)?),
        (Bin::Mod, UInt(x), UInt(y)) => UInt(x.checked_rem(*y).ok_or(e)?),
        _ => return Err(e),
    })
}

fn contains(container: &Value, item: &Value) -> Result<bool, Fail> {
    match container {
        Value::List(items) => Ok(items.iter().any(|i| equal(i, item))),
        Value::Map(m) => {
            if is_lookup_key(item) {
                Ok(map_find(m, item).is_some())
            } else {
                Err(Fail::Error)
            }
        }
        _ => Err(Fail::Error),
    }
}

fn substring(s: &str, start: &Value, end: Option<&Value>) -> R {
    let len = s.chars().count() as i64;
    let Value::Int(start) = start else {
        return Err(Fail::Error);
    };
    let end = match end {
        None => {
            if *start < 0 || *start > len {
                return Err(Fail::Error);
            }
            len
        }
        Some(Value::Int(e)) => *e,
        Some(_) => return Err(Fail::Error),
    };
    if *start > end || *start < 0 || end > len {
        return Err(Fail::Error);
    }
    let out: String = s
        .chars()
        .skip(*start as usize)
        .take((end - *start) as usize)
        .collect();
    Ok(Value::String(Arc::new(out)))
}

impl<'a> Run<'_, 'a> {
    fn tick(&mut self) -> Result<(), Fail> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Fail::Budget(
                "the expression took more steps than the evaluation budget allows",
            ));
        }
        Ok(())
    }

    fn eval_bool(&mut self, n: &Node) -> Result<bool, Fail> {
        let v = self.eval(n)?;
        boolean(&v)
    }

    fn eval_str(&mut self, n: &Node) -> Result<Arc<String>, Fail> {
        match self.eval(n)? {
            Value::String(s) => Ok(s),
            _ => Err(Fail::Error),
        }
    }

    /// A string operand, lent to `f` without a copy: `args.KEY` is read
    /// straight from the call's JSON. Fails as [`Run::eval_str`] does.
    fn with_str<T>(&mut self, n: &Node, f: impl FnOnce(&str) -> T) -> Result<T, Fail> {
        if let (Node::ArgField(_), Args::Json(_)) = (n, &self.frame.args) {
            // Not an object, no such key, or not a string: an error, as converted.
            self.tick()?;
            return self.arg_str(n).map(f).ok_or(Fail::Error);
        }
        let s = self.eval_str(n)?;
        Ok(f(&s))
    }

    /// `args.KEY` when the call's JSON holds a string there.
    fn arg_str(&self, n: &Node) -> Option<&'a str> {
        match (n, &self.frame.args) {
            (Node::ArgField(k), Args::Json(j)) => j
                .as_object()
                .and_then(|o| json_get(o, k))
                .and_then(serde_json::Value::as_str),
            _ => None,
        }
    }

    fn workspace(&self) -> Result<&Arc<String>, Fail> {
        string(self.frame.workspace)
    }

    fn eval(&mut self, n: &Node) -> R {
        self.tick()?;
        match n {
            Node::Const(v) => Ok(v.clone()),
            Node::Var(Var::Tool) => Ok(self.frame.tool.clone()),
            Node::Var(Var::Session) => Ok(self.frame.session.clone()),
            Node::Var(Var::Call) => self.frame.call.clone().ok_or(Fail::Error),
            Node::Var(Var::Args) => Ok(self.frame.args_value()),
            Node::Local(s) => Ok(self.locals[*s].clone()),
            Node::ArgField(k) => self.frame.arg_field(k)?.ok_or(Fail::Error),
            Node::HasArg(k) => self.frame.has_arg(k).map(Value::Bool),
            Node::Select(o, f) => {
                let v = self.eval(o)?;
                select(&v, f)
            }
            Node::Has(o, f) => match self.eval(o)? {
                Value::Map(m) => Ok(Value::Bool(m.get(&KeyRef::String(f)).is_some())),
                _ => Err(Fail::Error),
            },
            Node::List(items) => {
                let mut v = Vec::with_capacity(items.len());
                for i in items {
                    v.push(self.eval(i)?);
                }
                check_list(v)
            }
            Node::And(a, b) => {
                let left = self.eval(a).and_then(|v| boolean(&v));
                match left {
                    Ok(false) => return Ok(Value::Bool(false)),
                    // The crate decides the whole expression; an error on
                    // the right must not hide that.
                    Err(f @ (Fail::Budget(_) | Fail::Fallback)) => return Err(f),
                    _ => {}
                }
                let right = self.eval(b)?;
                match (left, right) {
                    (Ok(true), Value::Bool(r)) => Ok(Value::Bool(r)),
                    (Err(_), Value::Bool(false)) => Ok(Value::Bool(false)),
                    _ => Err(Fail::Error),
                }
            }
            Node::Or(a, b) => {
                let left = self.eval(a).and_then(|v| boolean(&v));
                match left {
                    Ok(true) => return Ok(Value::Bool(true)),
                    // The crate decides the whole expression; an error on
                    // the right must not hide that.
                    Err(f @ (Fail::Budget(_) | Fail::Fallback)) => return Err(f),
                    _ => {}
                }
                let right = self.eval(b)?;
                match (left, right) {
                    (Ok(false), Value::Bool(r)) => Ok(Value::Bool(r)),
                    (Err(_), Value::Bool(true)) => Ok(Value::Bool(true)),
                    _ => Err(Fail::Error),
                }
            }
            Node::Not(a) => Ok(Value::Bool(!self.eval_bool(a)?)),
            Node::Neg(a) => match self.eval(a)? {
                Value::Int(i) => i.checked_neg().map(Value::Int).ok_or(Fail::Error),
                Value::Float(f) => Ok(Value::Float(-f)),
                _ => Err(Fail::Error),
            },
            Node::NotStrictlyFalse(a) => match self.eval(a) {
                Ok(Value::Bool(b)) => Ok(Value::Bool(b)),
                Err(f @ (Fail::Budget(_) | Fail::Fallback)) => Err(f),
                _ => Ok(Value::Bool(true)),
            },
            Node::Cond(c, a, b) => {
                if self.eval_bool(c)? {
                    self.eval(a)
                } else {
                    self.eval(b)
                }
            }
            Node::Bin(op, a, b) => {
                // `args.KEY in ["literal", ...]` for a string argument: compared in place.
                if matches!(op, Bin::In)
                    && let (Some(x), Node::Const(Value::List(items))) = (self.arg_str(a), &**b)
                {
                    self.tick()?;
                    return Ok(Value::Bool(
                        items
                            .iter()
                            .any(|i| matches!(i, Value::String(t) if t.as_str() == x)),
                    ));
                }
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                match op {
                    Bin::Eq | Bin::Ne | Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge => {
                        comparison(*op, &x, &y).map(Value::Bool)
                    }
                    Bin::Index => index(&x, &y),
                    Bin::In => contains(&y, &x).map(Value::Bool),
                    _ => arith(*op, &x, &y),
                }
            }
            Node::Size(a) => match self.eval(a)? {
                Value::String(s) => Ok(Value::Int(s.chars().count() as i64)),
                Value::List(l) => Ok(Value::Int(l.len() as i64)),
                Value::Map(m) => Ok(Value::Int(m.map.len() as i64)),
                Value::Bytes(b) => Ok(Value::Int(b.len() as i64)),
                _ => Err(Fail::Error),
            },
            Node::Str1(f, a) => {
                let s = self.eval_str(a)?;
                Ok(match f {
                    Str1::PathIsTree => Value::Bool(paths::is_tree(&s)),
                    Str1::PathIsPattern => Value::Bool(paths::is_pattern(&s)),
                    Str1::PathClean => {
                        return check_string(functions::path_clean(&s));
                    }
                    Str1::UrlHost => {
                        Value::String(Arc::new(urls::url_host(&s).unwrap_or_default()))
                    }
                    Str1::PathAncestors => {
                        let ws = self.workspace()?;
                        let abs = if s.starts_with('/') {
                            paths::clean(&s)
                        } else {
                            paths::clean(&format!("{ws}/{s}"))
                        };
                        let mut out = vec![Value::String(Arc::new(paths::escape(&abs)))];
                        out.extend(
                            paths::ancestors(&abs)
                                .into_iter()
                                .map(|a| Value::String(Arc::new(paths::escape(&a)))),
                        );
                        Value::List(Arc::new(out))
                    }
                    Str1::ShellParses => Value::Bool(functions::parsed_shell(&s).is_ok()),
                    Str1::ShellCommands => {
                        return functions::parsed_shell(&s).map_err(|_| Fail::Error);
                    }
                })
            }
            // `args.KEY.contains("literal")` and the like: nothing copied.
            Node::Str2(f @ (Str2::Contains | Str2::StartsWith | Str2::EndsWith), a, b)
                if matches!(**b, Node::Const(Value::String(_))) =>
            {
                let Node::Const(Value::String(y)) = &**b else {
                    return Err(Fail::Error);
                };
                self.with_str(a, |x| {
                    Value::Bool(match f {
                        Str2::Contains => x.contains(y.as_str()),
                        Str2::StartsWith => x.starts_with(y.as_str()),
                        _ => x.ends_with(y.as_str()),
                    })
                })
            }
            Node::Str2(f, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                let (x, y) = (string(&x)?, string(&y)?);
                Ok(Value::Bool(match f {
                    Str2::Contains => x.contains(y.as_str()),
                    Str2::StartsWith => x.starts_with(y.as_str()),
                    Str2::EndsWith => x.ends_with(y.as_str()),
                    Str2::PathUnder => functions::path_under(x, y, self.workspace()?),
                }))
            }
            Node::Substring(s, a, b) => {
                let s = self.eval(s)?;
                let a = self.eval(a)?;
                let b = match b {
                    Some(b) => Some(self.eval(b)?),
                    None => None,
                };
                substring(string(&s)?, &a, b.as_ref())
            }
            Node::Matches(s, re) => {
                let s = self.eval(s)?;
                let re = self.eval(re)?;
                let r = Regex::new(string(&re)?).map_err(|_| Fail::Error)?;
                Ok(Value::Bool(r.is_match(string(&s)?)))
            }
            Node::MatchesRe(s, r) => self.with_str(s, |s| Value::Bool(r.is_match(s))),
            Node::Glob(p, path) => {
                let p = self.eval(p)?;
                let path = self.eval(path)?;
                let (p, path) = (string(&p)?, string(&path)?);
                let m = functions::compile_path_glob(p).map_err(|_| Fail::Error)?;
                Ok(Value::Bool(m.is_match(path.as_str())))
            }
            Node::GlobConst(m, path) => self.with_str(path, |p| Value::Bool(m.is_match(p))),
            Node::GlobAny(set, path) => self.with_str(path, |p| Value::Bool(set.is_match(p))),
            Node::PathList {
                overlaps,
                case_insensitive,
                path,
                globs,
            } => {
                let p = self.eval(path)?;
                let g = self.eval(globs)?;
                let p = string(&p)?;
                let items = strings_of(&g)?;
                let set = functions::runtime_glob_list(&items, *case_insensitive)
                    .map_err(|_| Fail::Error)?;
                path_list(*overlaps, p, &set)
            }
            Node::PathListConst {
                overlaps,
                path,
                set,
            } => self.with_str(path, |p| path_list(*overlaps, p, set))?,
            Node::IpIn(h, c) => {
                let h = self.eval(h)?;
                let c = self.eval(c)?;
                let h = string(&h)?;
                let items = strings_of(&c)?;
                urls::ip_in(h, &items)
                    .map(Value::Bool)
                    .map_err(|_| Fail::Error)
            }
            Node::Comprehension(c) => self.comprehension(c),
        }
    }

    fn comprehension(&mut self, c: &Compr) -> R {
        let init = self.eval(&c.init)?;
        let range = self.eval(&c.range)?;
        let items: &[Value] = match &range {
            Value::List(l) => l,
            Value::Map(_) => return Err(Fail::Fallback),
            _ => return Err(Fail::Error),
        };
        if let Some((guard, add)) = &c.append
            && matches!(&init, Value::List(l) if l.is_empty())
        {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if !self.eval_bool(&c.cond)? {
                    break;
                }
                self.locals[c.iter] = item.clone();
                if let Some(g) = guard
                    && !self.eval_bool(g)?
                {
                    continue;
                }
                match self.eval(add)? {
                    Value::List(l) => out.extend(l.iter().cloned()),
                    _ => return Err(Fail::Error),
                }
                if out.len() > MAX_LIST {
                    return Err(Fail::Budget(
                        "a list longer than the evaluation budget allows",
                    ));
                }
            }
            self.locals[c.accu] = Value::List(Arc::new(out));
            return self.eval(&c.result);
        }
        if c.append.is_some() {
            // An append step whose start is not an empty list: rare, left to the crate.
            return Err(Fail::Fallback);
        }
        self.locals[c.accu] = init;
        let mut pending: Option<Fail> = None;
        for item in items {
            if !self.eval_bool(&c.cond)? {
                break;
            }
            self.locals[c.iter] = item.clone();
            let step = self.eval(&c.step);
            match (step, c.fold) {
                (Err(f @ (Fail::Budget(_) | Fail::Fallback)), _) => return Err(f),
                (Err(e), Some(_)) => pending = Some(e),
                (Err(e), None) => return Err(e),
                (Ok(accu), Some(absorbing))
                    if pending.is_some() && !matches!(accu, Value::Bool(b) if b == absorbing) => {}
                (Ok(accu), _) => {
                    pending = None;
                    self.locals[c.accu] = accu;
                }
            }
        }
        if let Some(e) = pending {
            return Err(e);
        }
        self.eval(&c.result)
    }
}

fn path_list(overlaps: bool, path: &str, set: &PathGlobs) -> R {
    let hit = if overlaps {
        set.is_match(path).map_err(|_| Fail::Error)?
            || set.overlaps(path).map_err(|_| Fail::Error)?
    } else {
        set.matches(path).map_err(|_| Fail::Error)?
    };
    Ok(Value::Bool(hit))
}
