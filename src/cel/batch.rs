//! One tool's rules decided together.
//!
//! Most conditions are a few tests of an argument against literals: a path
//! glob, a regex on a command, `contains`/`startsWith`/`endsWith`, `==`, `in`
//! a literal list, a number compared with a literal, a session field compared
//! with a string, joined by `&&`, `||` and `!`. A [`Batch`] keeps those
//! conditions of one rule list as small trees of such tests, and decides them
//! for a call without the planned evaluator's per-rule work. Where a tool's
//! rules test one argument against many globs or regexes, those tests are one
//! [`GlobRegexSet`] or [`RegexSet`] search of the argument, built once the tool
//! is called again (see [`Batch::index`]).
//!
//! A batch only answers where the answer is certain: when every test a rule's
//! tree reaches succeeds (the argument is there and is a string, the number
//! compares), `&&`, `||` and `!` over those results are what the planned
//! evaluator computes, short-circuits included. Anything else (a missing or
//! mistyped argument, a call larger than the budget assumes, a condition of
//! another form) is left to the planned evaluator, rule by rule, so errors,
//! their wording and the fail-closed rules are unchanged. The differential test
//! (`tests/differential.rs`) decides random rule sets both ways.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel::Value;
use regex::{Regex, RegexSet};

use super::functions::PathGlob;
use super::plan::{self, Args, Bin, Fail, Node, Str2, Var};
use super::{Expression, Scope, budget};
use crate::effects::globs::GlobRegexSet;

/// Largest condition tree a batch decides; larger ones are evaluated as planned.
const MAX_TREE: usize = 32;

/// Fewest glob or regex tests of one argument that are searched as one set.
const MIN_SET: usize = 2;

/// The conditions of one rule list, as trees of argument tests.
#[derive(Debug)]
pub struct Batch {
    /// Per rule, in list order: its condition as a tree, or `None` (planned).
    rules: Vec<Option<Tree>>,
    /// The argument keys the tests read.
    keys: Vec<Arc<str>>,
    /// Each key's place in `keys`, while the batch is built.
    key_at: HashMap<Arc<str>, usize>,
    tests: Vec<Test>,
    /// The literals of the tests, one after another (a call reads them in
    /// one place, not behind a pointer each).
    text: String,
    /// The literal lists of `in` tests (shared with the plan, not copied: a
    /// named list may be long and used by many rules).
    lists: Vec<Arc<Vec<Value>>>,
    globs: Vec<PathGlob>,
    regexes: Vec<Regex>,
    /// Globs and regexes of one argument searched together, built when asked.
    sets: OnceLock<Vec<Set>>,
}

#[derive(Debug)]
enum Tree {
    Test(usize),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
    Not(Box<Tree>),
}

#[derive(Debug, Clone, Copy)]
enum StrOp {
    Contains,
    StartsWith,
    EndsWith,
    Eq,
    Ne,
}

/// Bytes `start..start + len` of [`Batch::text`].
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

/// One test; `usize` fields are indexes into the batch's keys, globs and
/// regexes, spans are literals.
#[derive(Debug)]
enum Test {
    /// `glob("literal", args.KEY)`.
    Glob(usize, usize),
    /// `args.KEY.matches("literal")`.
    Regex(usize, usize),
    /// `args.KEY.contains("literal")` and the like, `args.KEY == "literal"`.
    Str(usize, StrOp, Span),
    /// `args.KEY in ["literal", …]`, a list of strings of [`Batch::lists`].
    In(usize, usize),
    /// `args.KEY > 3` and the like: one of the comparisons of [`Bin`].
    Num(usize, Bin, Value),
    /// `session.FIELD == "literal"` (or `!=`); the field's name is a span too.
    Session(Span, bool, Span),
}

/// Several glob or regex tests of one argument, searched as one set.
#[derive(Debug)]
struct Set {
    key: usize,
    matcher: SetMatcher,
    /// The test of each pattern of the set.
    tests: Vec<usize>,
}

#[derive(Debug)]
enum SetMatcher {
    Globs(GlobRegexSet),
    Regexes(RegexSet),
}

/// What a test gave for this call: not reached yet, or failed (the rule is then
/// evaluated as planned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Got {
    Unknown,
    Fail,
    False,
    True,
}

impl Batch {
    /// Reads the conditions of a rule list; those of other forms are left to
    /// the planned evaluator.
    #[must_use]
    pub fn new<'e>(conditions: impl IntoIterator<Item = &'e Expression>) -> Batch {
        let mut b = Batch {
            rules: Vec::new(),
            keys: Vec::new(),
            key_at: HashMap::new(),
            tests: Vec::new(),
            text: String::new(),
            lists: Vec::new(),
            globs: Vec::new(),
            regexes: Vec::new(),
            sets: OnceLock::new(),
        };
        for expr in conditions {
            let tree = match &expr.plan {
                Ok(p) if plan::size(p.root(), MAX_TREE) <= MAX_TREE => {
                    let mark = b.mark();
                    let t = b.tree(p.root());
                    if t.is_none() {
                        // Nothing of a rule that is not decided here is kept.
                        b.undo(mark);
                    }
                    t
                }
                _ => None,
            };
            b.rules.push(tree);
        }
        b.key_at = HashMap::new();
        b
    }

    /// Builds the glob and regex sets now (a tool called more than once).
    pub fn index(&self) {
        self.sets.get_or_init(|| self.build_sets());
    }

    fn mark(&self) -> [usize; 6] {
        [
            self.keys.len(),
            self.tests.len(),
            self.text.len(),
            self.lists.len(),
            self.globs.len(),
            self.regexes.len(),
        ]
    }

    fn undo(&mut self, [keys, tests, text, lists, globs, regexes]: [usize; 6]) {
        for k in self.keys.drain(keys..) {
            self.key_at.remove(&k);
        }
        self.tests.truncate(tests);
        self.text.truncate(text);
        self.lists.truncate(lists);
        self.globs.truncate(globs);
        self.regexes.truncate(regexes);
    }

    /// Keeps a literal; `None` past what a span counts (the rule is then planned).
    fn span(&mut self, s: &str) -> Option<Span> {
        let start = u32::try_from(self.text.len()).ok()?;
        let len = u32::try_from(s.len()).ok()?;
        start.checked_add(len)?;
        self.text.push_str(s);
        Some(Span { start, len })
    }

    fn lit(&self, s: Span) -> &str {
        let start = s.start as usize;
        &self.text[start..start + s.len as usize]
    }

    fn key(&mut self, k: &Arc<str>) -> usize {
        if let Some(&i) = self.key_at.get(k) {
            return i;
        }
        self.keys.push(Arc::clone(k));
        self.key_at.insert(Arc::clone(k), self.keys.len() - 1);
        self.keys.len() - 1
    }

    fn test(&mut self, t: Test) -> Option<Tree> {
        self.tests.push(t);
        Some(Tree::Test(self.tests.len() - 1))
    }

    fn tree(&mut self, n: &Node) -> Option<Tree> {
        match n {
            Node::And(a, b) => Some(Tree::And(Box::new(self.tree(a)?), Box::new(self.tree(b)?))),
            Node::Or(a, b) => Some(Tree::Or(Box::new(self.tree(a)?), Box::new(self.tree(b)?))),
            Node::Not(a) => Some(Tree::Not(Box::new(self.tree(a)?))),
            Node::GlobConst(g, a) => {
                let Node::ArgField(k) = &**a else { return None };
                let k = self.key(k);
                self.globs.push(g.clone());
                self.test(Test::Glob(k, self.globs.len() - 1))
            }
            Node::MatchesRe(a, r) => {
                let Node::ArgField(k) = &**a else { return None };
                let k = self.key(k);
                self.regexes.push(r.clone());
                self.test(Test::Regex(k, self.regexes.len() - 1))
            }
            Node::Str2(op @ (Str2::Contains | Str2::StartsWith | Str2::EndsWith), a, b) => {
                let (Node::ArgField(k), Node::Const(Value::String(lit))) = (&**a, &**b) else {
                    return None;
                };
                let op = match op {
                    Str2::Contains => StrOp::Contains,
                    Str2::StartsWith => StrOp::StartsWith,
                    _ => StrOp::EndsWith,
                };
                let k = self.key(k);
                let lit = self.span(lit)?;
                self.test(Test::Str(k, op, lit))
            }
            Node::Bin(op, a, b) => self.comparison(*op, a, b),
            _ => None,
        }
    }

    fn comparison(&mut self, op: Bin, a: &Node, b: &Node) -> Option<Tree> {
        match (a, b) {
            (Node::ArgField(k), Node::Const(Value::String(lit))) => {
                let op = match op {
                    Bin::Eq => StrOp::Eq,
                    Bin::Ne => StrOp::Ne,
                    _ => return None,
                };
                let k = self.key(k);
                let lit = self.span(lit)?;
                self.test(Test::Str(k, op, lit))
            }
            (Node::ArgField(k), Node::Const(Value::List(items)))
                if matches!(op, Bin::In) && items.iter().all(|i| matches!(i, Value::String(_))) =>
            {
                let k = self.key(k);
                self.lists.push(Arc::clone(items));
                self.test(Test::In(k, self.lists.len() - 1))
            }
            (Node::ArgField(k), Node::Const(lit @ (Value::Int(_) | Value::UInt(_))))
                if matches!(
                    op,
                    Bin::Eq | Bin::Ne | Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge
                ) =>
            {
                let k = self.key(k);
                self.test(Test::Num(k, op, lit.clone()))
            }
            (Node::Select(s, field), Node::Const(Value::String(lit)))
                if matches!(**s, Node::Var(Var::Session)) && matches!(op, Bin::Eq | Bin::Ne) =>
            {
                let (field, lit) = (self.span(field)?, self.span(lit)?);
                self.test(Test::Session(field, matches!(op, Bin::Eq), lit))
            }
            _ => None,
        }
    }

    fn build_sets(&self) -> Vec<Set> {
        // The glob and the regex tests of each key, in one pass.
        let mut by_key = vec![(Vec::new(), Vec::new()); self.keys.len()];
        for (t, test) in self.tests.iter().enumerate() {
            match test {
                Test::Glob(k, _) => by_key[*k].0.push(t),
                Test::Regex(k, _) => by_key[*k].1.push(t),
                _ => {}
            }
        }
        let mut sets = Vec::new();
        for (key, (globs, regexes)) in by_key.into_iter().enumerate() {
            if globs.len() >= MIN_SET {
                let of_tests = globs.iter().filter_map(|&t| match &self.tests[t] {
                    Test::Glob(_, g) => Some(self.globs[*g].glob()),
                    _ => None,
                });
                // A union past the size limit is matched glob by glob.
                if let Ok(set) = GlobRegexSet::new(of_tests) {
                    sets.push(Set {
                        key,
                        matcher: SetMatcher::Globs(set),
                        tests: globs,
                    });
                }
            }
            if regexes.len() >= MIN_SET {
                let patterns = regexes.iter().filter_map(|&t| match &self.tests[t] {
                    Test::Regex(_, r) => Some(self.regexes[*r].as_str()),
                    _ => None,
                });
                // A union past the regex crate's size limit is searched pattern by pattern.
                if let Ok(set) = RegexSet::new(patterns) {
                    sets.push(Set {
                        key,
                        matcher: SetMatcher::Regexes(set),
                        tests: regexes,
                    });
                }
            }
        }
        sets
    }

    /// Decides the list's conditions for the call in `scope`: per rule,
    /// `Some(matched)` where this batch is certain, `None` (or no entry) where
    /// the rule must be evaluated as planned. Nothing is decided here when the
    /// call is larger than the budget assumes. (The dispatch path asks no batch
    /// while the planned evaluator is switched off.)
    pub fn decide(&self, scope: &Scope<'_>, out: &mut Vec<Option<bool>>) {
        out.clear();
        if self.tests.is_empty() || !scope.sizes.within(&budget::Inputs::ASSUMED) {
            return;
        }
        let frame = &scope.frame;
        // A tool's rules read a few keys and hold a few dozen tests: both are
        // kept on the stack unless there are more.
        let (mut strs_here, mut strs_heap) = ([None; 8], Vec::new());
        let strs: &mut [Option<&str>] = if self.keys.len() <= strs_here.len() {
            &mut strs_here[..self.keys.len()]
        } else {
            strs_heap.resize(self.keys.len(), None);
            &mut strs_heap
        };
        for (s, k) in strs.iter_mut().zip(&self.keys) {
            *s = arg_str(&frame.args, k);
        }
        let (mut got_here, mut got_heap) = ([Got::Unknown; 64], Vec::new());
        let got: &mut [Got] = if self.tests.len() <= got_here.len() {
            &mut got_here[..self.tests.len()]
        } else {
            got_heap.resize(self.tests.len(), Got::Unknown);
            &mut got_heap
        };
        if let Some(sets) = self.sets.get() {
            for set in sets {
                let Some(s) = strs[set.key] else { continue };
                for &t in &set.tests {
                    got[t] = Got::False;
                }
                match &set.matcher {
                    SetMatcher::Globs(g) => {
                        for i in g.matches(s) {
                            got[set.tests[i]] = Got::True;
                        }
                    }
                    SetMatcher::Regexes(r) => {
                        for i in r.matches(s).iter() {
                            got[set.tests[i]] = Got::True;
                        }
                    }
                }
            }
        }
        let mut run = Run {
            batch: self,
            frame,
            strs,
            got,
        };
        out.extend(
            self.rules
                .iter()
                .map(|t| t.as_ref().and_then(|t| run.eval(t).ok())),
        );
    }
}

/// `args.KEY` when it is a string.
fn arg_str<'a>(args: &Args<'a>, key: &str) -> Option<&'a str> {
    match args {
        Args::Json(j) => j
            .as_object()
            .and_then(|o| plan::json_get(o, key))
            .and_then(serde_json::Value::as_str),
        Args::Cel(Value::Map(m)) => match m.get(&cel::objects::KeyRef::String(key)) {
            Some(Value::String(s)) => Some(s.as_str()),
            _ => None,
        },
        Args::Cel(_) => None,
    }
}

struct Run<'b, 'f, 'a> {
    batch: &'b Batch,
    frame: &'f plan::Frame<'a>,
    strs: &'f [Option<&'a str>],
    got: &'f mut [Got],
}

impl Run<'_, '_, '_> {
    /// A tree's value; `Err` as soon as a test it reaches fails.
    fn eval(&mut self, t: &Tree) -> Result<bool, Fail> {
        match t {
            Tree::Test(i) => self.test(*i),
            // Left to right, stopping where the planned evaluator stops.
            Tree::And(a, b) => Ok(self.eval(a)? && self.eval(b)?),
            Tree::Or(a, b) => Ok(self.eval(a)? || self.eval(b)?),
            Tree::Not(a) => Ok(!self.eval(a)?),
        }
    }

    fn test(&mut self, i: usize) -> Result<bool, Fail> {
        let got = match self.got[i] {
            Got::Unknown => {
                let g = match self.compute(i) {
                    Ok(true) => Got::True,
                    Ok(false) => Got::False,
                    Err(_) => Got::Fail,
                };
                self.got[i] = g;
                g
            }
            g => g,
        };
        match got {
            Got::True => Ok(true),
            Got::False => Ok(false),
            Got::Fail | Got::Unknown => Err(Fail::Error),
        }
    }

    fn compute(&self, i: usize) -> Result<bool, Fail> {
        let s = |k: usize| self.strs[k].ok_or(Fail::Error);
        Ok(match &self.batch.tests[i] {
            Test::Glob(k, g) => self.batch.globs[*g].is_match(s(*k)?),
            Test::Regex(k, r) => self.batch.regexes[*r].is_match(s(*k)?),
            Test::Str(k, op, lit) => {
                let (x, lit) = (s(*k)?, self.batch.lit(*lit));
                match op {
                    StrOp::Contains => x.contains(lit),
                    StrOp::StartsWith => x.starts_with(lit),
                    StrOp::EndsWith => x.ends_with(lit),
                    StrOp::Eq => x == lit,
                    StrOp::Ne => x != lit,
                }
            }
            Test::In(k, list) => {
                let x = s(*k)?;
                self.batch.lists[*list]
                    .iter()
                    .any(|i| matches!(i, Value::String(t) if t.as_str() == x))
            }
            Test::Num(k, op, lit) => {
                let v = self
                    .frame
                    .arg_field(&self.batch.keys[*k])?
                    .ok_or(Fail::Error)?;
                if !matches!(v, Value::Int(_) | Value::UInt(_) | Value::Float(_)) {
                    return Err(Fail::Error);
                }
                plan::comparison(*op, &v, lit)?
            }
            Test::Session(field, eq, lit) => {
                let v = plan::field(self.frame.session, self.batch.lit(*field));
                let Some(Value::String(v)) = v else {
                    return Err(Fail::Error);
                };
                (v.as_str() == self.batch.lit(*lit)) == *eq
            }
        })
    }
}
