//! Compiled expressions in a stored form, so that a process deciding one call
//! (a hook, `explain`) restores what an earlier one compiled instead of
//! parsing, checking and planning each expression again.
//!
//! What is stored is what [`CelEnv::compile`] found and made: the reads and
//! patterns the checks recorded, and the plan. Restoring adds the same
//! patterns to the pattern cache, in the same order, and builds the plan's
//! compiled parts (regexes, globs, glob sets) again from their text; the
//! `cel` crate's tree is parsed again only if something asks for it (an
//! error's wording, an expression the planner leaves to the crate).
//!
//! A stored expression is read only for the same source, the same lists and
//! the same options (the [`Shelf`] is keyed by them, and by this build), and
//! only a compile that succeeded is stored. Anything unexpected in the bytes
//! (a truncated record, a slot out of range, a pattern that no longer
//! compiles) makes [`CelEnv::restore`] return `None`, and the expression is
//! compiled as usual.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::Value;
use cel::objects::{Key, Map};
use sha2::{Digest, Sha256};

use super::functions::{self, PatternCache};
use super::plan::{Bin, Compr, Node, Plan, Str1, Str2, Var};
use super::{CelEnv, CompileCtx, Expression, LITERAL_KINDS, Lists, list_sizes};
use crate::effects::globs::GlobRegexSet;

/// Deepest plan tree restored; the planner stops at [`super::plan::MAX_DEPTH`].
const MAX_DEPTH: usize = 4 * super::plan::MAX_DEPTH;
/// Stack left below which a restore continues on a new segment, and its size.
const STACK_RED_ZONE: usize = 64 * 1024;
const STACK_GROWTH: usize = 1024 * 1024;

const VARS: [Var; 4] = [Var::Tool, Var::Session, Var::Call, Var::Args];
const BINS: [Bin; 13] = [
    Bin::Eq,
    Bin::Ne,
    Bin::Lt,
    Bin::Le,
    Bin::Gt,
    Bin::Ge,
    Bin::Add,
    Bin::Sub,
    Bin::Mul,
    Bin::Div,
    Bin::Mod,
    Bin::Index,
    Bin::In,
];
const STR1S: [Str1; 7] = [
    Str1::PathIsTree,
    Str1::PathIsPattern,
    Str1::PathClean,
    Str1::PathAncestors,
    Str1::UrlHost,
    Str1::ShellParses,
    Str1::ShellCommands,
];
const STR2S: [Str2; 4] = [
    Str2::Contains,
    Str2::StartsWith,
    Str2::EndsWith,
    Str2::PathUnder,
];

/// Bytes being written: LEB128 numbers, length-prefixed strings.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, b: u8) {
        self.0.push(b);
    }

    fn n(&mut self, mut n: u64) {
        loop {
            let low = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.0.push(low);
                return;
            }
            self.0.push(low | 0x80);
        }
    }

    fn str(&mut self, s: &str) {
        self.n(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn strs<S: AsRef<str>>(&mut self, items: &[S]) {
        self.n(items.len() as u64);
        for s in items {
            self.str(s.as_ref());
        }
    }
}

/// Bytes being read; every read is checked, and `None` ends the restore.
struct In<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> In<'b> {
    fn new(bytes: &'b [u8]) -> In<'b> {
        In { bytes, at: 0 }
    }

    fn u8(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn n(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            n |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    /// A count of items each at least one byte long: never more than the
    /// bytes left, so a corrupt count allocates nothing large.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.n()?).ok()?;
        (n <= self.bytes.len() - self.at).then_some(n)
    }

    fn str(&mut self) -> Option<&'b str> {
        let len = self.count()?;
        let s = std::str::from_utf8(self.bytes.get(self.at..self.at + len)?).ok()?;
        self.at += len;
        Some(s)
    }

    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.count()?;
        (0..n).map(|_| self.str().map(str::to_string)).collect()
    }

    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

impl Expression {
    /// The expression in the form [`CelEnv::restore`] reads, for the lists it
    /// was compiled with; `None` if its plan holds a value that has no stored
    /// form (it is then compiled every time).
    #[must_use]
    pub fn to_stored(&self, cache: &PatternCache, lists: &Lists) -> Option<Vec<u8>> {
        let mut out = Out::default();
        out.strs(&self.arg_keys);
        out.strs(&self.guarded.iter().collect::<Vec<_>>());
        out.strs(&self.globs);
        out.strs(&self.regexes);
        out.strs(&self.lists);
        out.u8(u8::from(self.reads_call) | u8::from(self.reads_all_lists) << 1);
        out.u8(self.literal.map_or(0, |kind| {
            LITERAL_KINDS
                .iter()
                .position(|k| *k == kind)
                .map_or(u8::MAX, |i| i as u8 + 1)
        }));
        out.n(self.glob_lists.len() as u64);
        for items in &self.glob_lists {
            glob_list(&mut out, items, lists);
        }
        out.strs(&self.literal_globs);
        match &self.plan {
            Err(why) => {
                out.u8(0);
                out.str(why);
            }
            Ok(plan) => {
                out.u8(1);
                out.n(plan.locals as u64);
                let lists = Consts {
                    lists,
                    value: cache.lists_value(lists),
                };
                node(&mut out, &plan.root, &lists)?;
            }
        }
        Some(out.0)
    }
}

/// What a plan's constants are compared with: the named lists, and `lists`
/// itself as a CEL value.
struct Consts<'a> {
    lists: &'a Lists,
    value: Value,
}

/// A glob list: by the name of a list that holds exactly these items (the
/// lists are part of the shelf's key), else item by item.
fn glob_list(out: &mut Out, items: &[String], lists: &Lists) {
    match lists.iter().find(|(_, l)| l.as_slice() == items) {
        Some((name, _)) => {
            out.u8(1);
            out.str(name);
        }
        None => {
            out.u8(0);
            out.strs(items);
        }
    }
}

/// A glob list written by [`glob_list`].
fn read_glob_list(r: &mut In<'_>, lists: &Lists) -> Option<Vec<String>> {
    match r.u8()? {
        0 => r.strs(),
        1 => lists.get(r.str()?).cloned(),
        _ => None,
    }
}

fn node(out: &mut Out, n: &Node, lists: &Consts<'_>) -> Option<()> {
    match n {
        Node::Const(v) => {
            out.u8(0);
            value(out, v, lists)?;
        }
        Node::Var(v) => {
            out.u8(1);
            out.u8(*v as u8);
        }
        Node::Local(slot) => {
            out.u8(2);
            out.n(*slot as u64);
        }
        Node::ArgField(k) => {
            out.u8(3);
            out.str(k);
        }
        Node::HasArg(k) => {
            out.u8(4);
            out.str(k);
        }
        Node::Select(a, f) => {
            out.u8(5);
            out.str(f);
            node(out, a, lists)?;
        }
        Node::Has(a, f) => {
            out.u8(6);
            out.str(f);
            node(out, a, lists)?;
        }
        Node::List(items) => {
            out.u8(7);
            out.n(items.len() as u64);
            for i in items {
                node(out, i, lists)?;
            }
        }
        Node::And(a, b) => pair(out, 8, a, b, lists)?,
        Node::Or(a, b) => pair(out, 9, a, b, lists)?,
        Node::Not(a) => one(out, 10, a, lists)?,
        Node::Neg(a) => one(out, 11, a, lists)?,
        Node::NotStrictlyFalse(a) => one(out, 12, a, lists)?,
        Node::Cond(a, b, c) => {
            pair(out, 13, a, b, lists)?;
            node(out, c, lists)?;
        }
        Node::Bin(op, a, b) => operator(out, 14, *op as u8, &[a, b], lists)?,
        Node::Size(a) => one(out, 15, a, lists)?,
        Node::Str1(op, a) => operator(out, 16, *op as u8, &[a], lists)?,
        Node::Str2(op, a, b) => operator(out, 17, *op as u8, &[a, b], lists)?,
        Node::Substring(a, b, c) => {
            pair(out, 18, a, b, lists)?;
            match c {
                None => out.u8(0),
                Some(c) => {
                    out.u8(1);
                    node(out, c, lists)?;
                }
            }
        }
        Node::Matches(a, b) => pair(out, 19, a, b, lists)?,
        Node::MatchesRe(a, re) => {
            out.u8(20);
            out.str(re.as_str());
            node(out, a, lists)?;
        }
        Node::Glob(a, b) => pair(out, 21, a, b, lists)?,
        Node::GlobConst(g, a) => {
            out.u8(22);
            out.str(g.glob().glob());
            node(out, a, lists)?;
        }
        Node::GlobAny(set, a) => {
            out.u8(23);
            out.strs(set.globs());
            node(out, a, lists)?;
        }
        Node::PathList {
            overlaps,
            case_insensitive,
            path,
            globs,
        } => {
            out.u8(24);
            out.u8(u8::from(*overlaps) | u8::from(*case_insensitive) << 1);
            node(out, path, lists)?;
            node(out, globs, lists)?;
        }
        Node::PathListConst {
            overlaps,
            path,
            set,
        } => {
            out.u8(25);
            out.u8(u8::from(*overlaps) | u8::from(set.case_insensitive()) << 1);
            glob_list(out, set.globs(), lists.lists);
            node(out, path, lists)?;
        }
        Node::IpIn(a, b) => pair(out, 26, a, b, lists)?,
        Node::Comprehension(c) => {
            out.u8(27);
            out.n(c.iter as u64);
            out.n(c.accu as u64);
            out.u8(match c.fold {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            });
            for n in [&c.range, &c.init, &c.cond, &c.step, &c.result] {
                node(out, n, lists)?;
            }
            match &c.append {
                None => out.u8(0),
                Some((None, item)) => {
                    out.u8(1);
                    node(out, item, lists)?;
                }
                Some((Some(guard), item)) => {
                    out.u8(2);
                    node(out, guard, lists)?;
                    node(out, item, lists)?;
                }
            }
        }
    }
    Some(())
}

/// A node of an operator table ([`BINS`], [`STR1S`], [`STR2S`]): its tag,
/// the operator's number, its operands.
fn operator(out: &mut Out, tag: u8, op: u8, operands: &[&Node], lists: &Consts<'_>) -> Option<()> {
    out.u8(tag);
    out.u8(op);
    operands.iter().try_for_each(|n| node(out, n, lists))
}

fn one(out: &mut Out, tag: u8, a: &Node, lists: &Consts<'_>) -> Option<()> {
    out.u8(tag);
    node(out, a, lists)
}

fn pair(out: &mut Out, tag: u8, a: &Node, b: &Node, lists: &Consts<'_>) -> Option<()> {
    out.u8(tag);
    node(out, a, lists)?;
    node(out, b, lists)
}

/// A constant: the kinds a plan folds (`lists` itself is stored by name).
fn value(out: &mut Out, v: &Value, lists: &Consts<'_>) -> Option<()> {
    match v {
        Value::Map(m) if matches!(&lists.value, Value::Map(l) if Arc::ptr_eq(&l.map, &m.map)) => {
            out.u8(9);
        }
        Value::Null => out.u8(0),
        Value::Bool(b) => out.u8(1 + u8::from(*b)),
        Value::Int(i) => {
            out.u8(3);
            out.n(((i << 1) ^ (i >> 63)) as u64);
        }
        Value::UInt(u) => {
            out.u8(4);
            out.n(*u);
        }
        Value::Float(f) => {
            out.u8(5);
            out.0.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::String(s) => {
            out.u8(6);
            out.str(s);
        }
        Value::List(items) => {
            out.u8(7);
            out.n(items.len() as u64);
            for i in items.iter() {
                value(out, i, lists)?;
            }
        }
        Value::Map(m) => {
            out.u8(8);
            out.n(m.map.len() as u64);
            for (k, v) in m.map.iter() {
                match k {
                    Key::Int(i) => {
                        out.u8(0);
                        out.n(((i << 1) ^ (i >> 63)) as u64);
                    }
                    Key::Uint(u) => {
                        out.u8(1);
                        out.n(*u);
                    }
                    Key::Bool(b) => out.u8(2 + u8::from(*b)),
                    Key::String(s) => {
                        out.u8(4);
                        out.str(s);
                    }
                }
                value(out, v, lists)?;
            }
        }
        _ => return None,
    }
    Some(())
}

impl CelEnv {
    /// The expression `source` compiled for `cx`, from its stored form
    /// ([`Expression::to_stored`]), with the patterns it compiled added to
    /// `cache` as [`CelEnv::compile`] adds them; `None` if the bytes do not
    /// read as one.
    #[must_use]
    pub fn restore(
        &self,
        source: &str,
        bytes: &[u8],
        cache: &mut PatternCache,
        cx: &CompileCtx<'_>,
    ) -> Option<Expression> {
        let mut r = In::new(bytes);
        let arg_keys = r.strs()?;
        let guarded = r.strs()?.into_iter().collect();
        let globs = r.strs()?;
        let regexes = r.strs()?;
        let lists = r.strs()?;
        let flags = r.u8()?;
        let (reads_call, reads_all_lists) = (flags & 1 != 0, flags & 2 != 0);
        let literal = match r.u8()? {
            0 => None,
            k => Some(*LITERAL_KINDS.get(usize::from(k) - 1)?),
        };
        let glob_lists = (0..r.count()?)
            .map(|_| read_glob_list(&mut r, cx.lists))
            .collect::<Option<Vec<_>>>()?;
        let literal_globs = r.strs()?;
        // Each list it names exists (the compile checked it).
        if flags > 3 || !lists.iter().all(|n| cx.lists.contains_key(n)) {
            return None;
        }
        // The patterns, added in the order the compile added them.
        for g in &globs {
            cache.add_glob(g).ok()?;
        }
        for re in &regexes {
            cache.add_regex(re).ok()?;
        }
        for items in &glob_lists {
            cache.add_glob_list(items, cx.case_insensitive).ok()?;
        }
        for lit in &literal_globs {
            let _ = cache.add_glob(lit);
        }
        let plan = match r.u8()? {
            0 => Err(r.str()?.to_string()),
            1 => {
                // Each local is a comprehension's: fewer than the bytes.
                let locals = usize::try_from(r.n()?).ok()?;
                if locals > bytes.len() {
                    return None;
                }
                let mut restorer = Restorer {
                    r: &mut r,
                    cache,
                    lists: cx.lists,
                    locals,
                };
                let root = restorer.node(0)?;
                Ok(Plan { root, locals })
            }
            _ => return None,
        };
        if !r.done() {
            return None;
        }
        Some(Expression {
            source: source.to_string(),
            ast: std::sync::OnceLock::new(),
            arg_keys,
            guarded,
            globs,
            regexes,
            reads_call,
            list_sizes: list_sizes(reads_all_lists, &lists, cx.lists),
            lists,
            reads_all_lists,
            literal,
            glob_lists,
            literal_globs,
            plan,
        })
    }
}

struct Restorer<'r, 'b> {
    r: &'r mut In<'b>,
    cache: &'r PatternCache,
    lists: &'r Lists,
    locals: usize,
}

impl Restorer<'_, '_> {
    fn slot(&mut self) -> Option<usize> {
        let slot = usize::try_from(self.r.n()?).ok()?;
        (slot < self.locals).then_some(slot)
    }

    fn field(&mut self) -> Option<Arc<str>> {
        self.r.str().map(Arc::from)
    }

    fn boxed(&mut self, depth: usize) -> Option<Box<Node>> {
        self.node(depth).map(Box::new)
    }

    fn node(&mut self, depth: usize) -> Option<Node> {
        // A stored tree may be as deep as MAX_DEPTH; a thread's stack (2 MB
        // for a spawned thread, with a debug build's large frames) may not
        // hold that many frames of this function.
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.node_here(depth))
    }

    fn node_here(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let d = depth + 1;
        Some(match self.r.u8()? {
            0 => Node::Const(self.value(d)?),
            1 => Node::Var(*VARS.get(usize::from(self.r.u8()?))?),
            2 => Node::Local(self.slot()?),
            3 => Node::ArgField(self.field()?),
            4 => Node::HasArg(self.field()?),
            5 => {
                let f = self.field()?;
                Node::Select(self.boxed(d)?, f)
            }
            6 => {
                let f = self.field()?;
                Node::Has(self.boxed(d)?, f)
            }
            7 => {
                let n = self.r.count()?;
                Node::List((0..n).map(|_| self.node(d)).collect::<Option<_>>()?)
            }
            8 => Node::And(self.boxed(d)?, self.boxed(d)?),
            9 => Node::Or(self.boxed(d)?, self.boxed(d)?),
            10 => Node::Not(self.boxed(d)?),
            11 => Node::Neg(self.boxed(d)?),
            12 => Node::NotStrictlyFalse(self.boxed(d)?),
            13 => Node::Cond(self.boxed(d)?, self.boxed(d)?, self.boxed(d)?),
            14 => {
                let op = *BINS.get(usize::from(self.r.u8()?))?;
                Node::Bin(op, self.boxed(d)?, self.boxed(d)?)
            }
            15 => Node::Size(self.boxed(d)?),
            16 => {
                let op = *STR1S.get(usize::from(self.r.u8()?))?;
                Node::Str1(op, self.boxed(d)?)
            }
            17 => {
                let op = *STR2S.get(usize::from(self.r.u8()?))?;
                Node::Str2(op, self.boxed(d)?, self.boxed(d)?)
            }
            18 => {
                let (a, b) = (self.boxed(d)?, self.boxed(d)?);
                let c = match self.r.u8()? {
                    0 => None,
                    1 => Some(self.boxed(d)?),
                    _ => return None,
                };
                Node::Substring(a, b, c)
            }
            19 => Node::Matches(self.boxed(d)?, self.boxed(d)?),
            20 => {
                let pattern = self.r.str()?;
                let re = match self.cache.regex(pattern) {
                    Some(re) => re.clone(),
                    None => regex::Regex::new(pattern).ok()?,
                };
                Node::MatchesRe(self.boxed(d)?, re)
            }
            21 => Node::Glob(self.boxed(d)?, self.boxed(d)?),
            22 => {
                let pattern = self.r.str()?;
                let glob = match self.cache.glob(pattern) {
                    Some(g) => g.clone(),
                    None => functions::compile_path_glob(pattern).ok()?,
                };
                Node::GlobConst(glob, self.boxed(d)?)
            }
            23 => {
                let patterns = self.r.strs()?;
                // The planner made the set of globs the load had compiled.
                let globs = patterns
                    .iter()
                    .map(|p| self.cache.glob(p).map(functions::PathGlob::glob))
                    .collect::<Option<Vec<_>>>()?;
                let set = GlobRegexSet::new(globs).ok()?;
                Node::GlobAny(set, self.boxed(d)?)
            }
            24 => {
                let flags = self.r.u8()?;
                if flags > 3 {
                    return None;
                }
                Node::PathList {
                    overlaps: flags & 1 != 0,
                    case_insensitive: flags & 2 != 0,
                    path: self.boxed(d)?,
                    globs: self.boxed(d)?,
                }
            }
            25 => {
                let flags = self.r.u8()?;
                if flags > 3 {
                    return None;
                }
                let items = read_glob_list(self.r, self.lists)?;
                let set = self.cache.glob_list_for_plan(&items, flags & 2 != 0)?;
                Node::PathListConst {
                    overlaps: flags & 1 != 0,
                    path: self.boxed(d)?,
                    set,
                }
            }
            26 => Node::IpIn(self.boxed(d)?, self.boxed(d)?),
            27 => {
                let iter = self.slot()?;
                let accu = self.slot()?;
                let fold = match self.r.u8()? {
                    0 => None,
                    1 => Some(false),
                    2 => Some(true),
                    _ => return None,
                };
                let range = self.node(d)?;
                let init = self.node(d)?;
                let cond = self.node(d)?;
                let step = self.node(d)?;
                let result = self.node(d)?;
                let append = match self.r.u8()? {
                    0 => None,
                    1 => Some((None, self.node(d)?)),
                    2 => {
                        let guard = self.node(d)?;
                        Some((Some(guard), self.node(d)?))
                    }
                    _ => return None,
                };
                Node::Comprehension(Box::new(Compr {
                    range,
                    iter,
                    accu,
                    init,
                    cond,
                    step,
                    result,
                    fold,
                    append,
                }))
            }
            _ => return None,
        })
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.value_here(depth))
    }

    fn value_here(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let d = depth + 1;
        Some(match self.r.u8()? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => Value::Int(unzigzag(self.r.n()?)),
            4 => Value::UInt(self.r.n()?),
            5 => {
                let bytes = self.r.bytes.get(self.r.at..self.r.at + 8)?;
                self.r.at += 8;
                Value::Float(f64::from_bits(u64::from_le_bytes(bytes.try_into().ok()?)))
            }
            6 => Value::String(Arc::new(self.r.str()?.to_string())),
            7 => {
                let n = self.r.count()?;
                Value::List(Arc::new(
                    (0..n).map(|_| self.value(d)).collect::<Option<_>>()?,
                ))
            }
            8 => {
                let n = self.r.count()?;
                let mut map = HashMap::with_capacity(n);
                for _ in 0..n {
                    let key = match self.r.u8()? {
                        0 => Key::Int(unzigzag(self.r.n()?)),
                        1 => Key::Uint(self.r.n()?),
                        2 => Key::Bool(false),
                        3 => Key::Bool(true),
                        4 => Key::String(Arc::new(self.r.str()?.to_string())),
                        _ => return None,
                    };
                    map.insert(key, self.value(d)?);
                }
                Value::Map(Map { map: Arc::new(map) })
            }
            9 => self.cache.lists_value(self.lists),
            _ => return None,
        })
    }
}

#[allow(clippy::cast_possible_wrap)]
fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// The key of a [`Shelf`]: the lists and options expressions compile with.
#[must_use]
pub fn shelf_key(lists: &BTreeMap<String, Vec<String>>, case_insensitive: bool) -> [u8; 32] {
    let mut out = Out::default();
    out.str("zero-policy compiled expressions 1");
    out.u8(u8::from(case_insensitive));
    out.n(lists.len() as u64);
    for (name, items) in lists {
        out.str(name);
        out.strs(items);
    }
    Sha256::digest(&out.0).into()
}

/// Stored expressions by source, for one [`shelf_key`]: what a load finds
/// there it restores, what it compiles it adds.
#[derive(Debug, Default)]
pub struct Shelf {
    /// Source → stored form, and whether this load used it: of effect
    /// expressions (`call` not readable) at 0, of rules at 1.
    records: [HashMap<String, Record>; 2],
    /// Records added since the shelf was read.
    added: usize,
}

/// Records a load did not use that a shelf keeps, beyond as many as it used:
/// a policy edited again and again does not grow its shelf without end, and
/// loads that use different parts of one policy (one agent's hook, `explain`)
/// share it.
const SLACK: usize = 64;

/// A stored form, and whether this load used it.
type Record = (Vec<u8>, std::cell::Cell<bool>);

impl Shelf {
    /// A shelf read from its bytes ([`Shelf::to_bytes`]); empty if they do not read as one.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Shelf {
        let mut r = In::new(bytes);
        let mut read = || -> Option<[HashMap<String, Record>; 2]> {
            let n = r.count()?;
            let mut records = [HashMap::new(), HashMap::new()];
            for _ in 0..n {
                let source = r.str()?.to_string();
                let allow_call = r.bool()?;
                let len = r.count()?;
                let body = r.bytes.get(r.at..r.at + len)?.to_vec();
                r.at += len;
                records[usize::from(allow_call)]
                    .insert(source, (body, std::cell::Cell::new(false)));
            }
            r.done().then_some(records)
        };
        Shelf {
            records: read().unwrap_or_default(),
            added: 0,
        }
    }

    /// The stored form of `source`, if the shelf holds it.
    #[must_use]
    pub fn get(&self, source: &str, allow_call: bool) -> Option<&[u8]> {
        let (body, used) = self.records[usize::from(allow_call)].get(source)?;
        used.set(true);
        Some(body)
    }

    /// Keeps the stored form of `source`.
    pub fn add(&mut self, source: &str, allow_call: bool, stored: Vec<u8>) {
        self.records[usize::from(allow_call)]
            .insert(source.to_string(), (stored, std::cell::Cell::new(true)));
        self.added += 1;
    }

    /// Records added since the shelf was read.
    #[must_use]
    pub fn added(&self) -> usize {
        self.added
    }

    /// Records held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.records.iter().map(HashMap::len).sum()
    }

    /// Whether it holds no record.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shelf as bytes, records in source order; only those this load
    /// used or added if the others are more than they and [`SLACK`].
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let every = || {
            self.records.iter().enumerate().flat_map(|(call, records)| {
                records
                    .iter()
                    .map(move |(source, record)| ((source, call == 1), record))
            })
        };
        let used = every().filter(|(_, (_, u))| u.get()).count();
        let all = self.len() <= 2 * used + SLACK;
        let mut records: Vec<_> = every().filter(|(_, (_, u))| all || u.get()).collect();
        records.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = Out::default();
        out.n(records.len() as u64);
        for ((source, allow_call), (body, _)) in records {
            out.str(source);
            out.u8(u8::from(allow_call));
            out.n(body.len() as u64);
            out.0.extend_from_slice(body);
        }
        out.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_tables_follow_the_declarations() {
        for (i, v) in VARS.iter().enumerate() {
            assert_eq!(*v as usize, i);
        }
        for (i, b) in BINS.iter().enumerate() {
            assert_eq!(*b as usize, i);
        }
        for (i, s) in STR1S.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
        for (i, s) in STR2S.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
    }

    #[test]
    fn numbers_and_ints_read_back() {
        for n in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Out::default();
            out.n(n);
            assert_eq!(In::new(&out.0).n(), Some(n));
        }
        for i in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            let mut out = Out::default();
            out.n(((i << 1) ^ (i >> 63)) as u64);
            assert_eq!(In::new(&out.0).n().map(unzigzag), Some(i));
        }
        // Eleven continuation bytes are not a number.
        assert_eq!(In::new(&[0xff; 11]).n(), None);
    }

    #[test]
    fn a_shelf_keeps_what_a_load_did_not_use_only_up_to_its_slack() {
        let mut shelf = Shelf::default();
        for k in 0..100 {
            shelf.add(&format!("s{k}"), true, vec![1, 2, 3]);
        }
        // A load that added them all keeps them all...
        let again = Shelf::from_bytes(&shelf.to_bytes());
        assert_eq!(again.len(), 100);
        assert_eq!(again.get("s7", true), Some(&[1u8, 2, 3][..]));
        assert_eq!(again.get("s7", false), None);
        // ...and a load that used one keeps that one alone.
        let kept = Shelf::from_bytes(&again.to_bytes());
        assert_eq!(kept.len(), 1);
        assert!(kept.get("s7", true).is_some());
        // Within the slack, every record is kept.
        let mut small = Shelf::default();
        for k in 0..SLACK {
            small.add(&format!("s{k}"), false, Vec::new());
        }
        let small = Shelf::from_bytes(&small.to_bytes());
        assert_eq!(Shelf::from_bytes(&small.to_bytes()).len(), SLACK);
        // Bytes that are not a shelf are an empty one.
        assert!(Shelf::from_bytes(b"\x05garbage").is_empty());
    }

    #[test]
    fn a_shelf_is_keyed_by_every_list_item_and_the_case_option() {
        let lists = |items: &[&str]| {
            BTreeMap::from([(
                "creds".to_string(),
                items.iter().map(|s| (*s).to_string()).collect::<Vec<_>>(),
            )])
        };
        let base = shelf_key(&lists(&["~/.ssh/**", "**/.env"]), false);
        assert_eq!(base, shelf_key(&lists(&["~/.ssh/**", "**/.env"]), false));
        assert_ne!(base, shelf_key(&lists(&["~/.ssh/**", "**/.env"]), true));
        assert_ne!(base, shelf_key(&lists(&["~/.ssh/**"]), false));
        assert_ne!(base, shelf_key(&lists(&["~/.ssh/**", "**/.envrc"]), false));
        // Items are length-prefixed: moving a boundary is another key.
        assert_ne!(base, shelf_key(&lists(&["~/.ssh/***", "*/.env"]), false));
        let renamed = BTreeMap::from([(
            "cred".to_string(),
            vec!["~/.ssh/**".to_string(), "**/.env".to_string()],
        )]);
        assert_ne!(base, shelf_key(&renamed, false));
    }

    #[test]
    fn a_count_larger_than_the_bytes_left_is_refused() {
        let mut out = Out::default();
        out.n(1_000_000);
        assert_eq!(In::new(&out.0).count(), None);
    }
}
