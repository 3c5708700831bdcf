//! The type check at load: every expression against the declared types of
//! the variables ([`super::vars`]) and the functions.
//!
//! The check is sound for what it refuses: it reports only what fails on
//! every value of the declared types (a field that `tool`, `session`, `call`
//! or a command does not have, `session.mode + 1`, `size(1)`,
//! `"rm" in c.program`, a function given the wrong number of arguments).
//! Whatever depends on `args`, whose fields are the call's JSON, is dynamic
//! and checked when the call is decided.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::vars::{self, Object, Ty};

/// A type inferred for a node.
#[derive(Debug, Clone, PartialEq, Eq)]
enum T {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    List(Box<T>),
    /// A map: its keys' type and its values'.
    Map(Box<T>, Box<T>),
    Obj(&'static Object),
    /// A type value (`int`, `type(x)`).
    Type,
}

impl T {
    fn of(ty: Ty) -> T {
        match ty {
            Ty::Dyn => T::Dyn,
            Ty::Null => T::Null,
            Ty::Bool => T::Bool,
            Ty::Int => T::Int,
            Ty::Uint => T::Uint,
            Ty::Double => T::Double,
            Ty::String => T::String,
            Ty::Bytes => T::Bytes,
            Ty::List(t) => T::List(Box::new(T::of(*t))),
            Ty::Map(t) => T::Map(Box::new(T::String), Box::new(T::of(*t))),
            Ty::Object(o) => T::Obj(o),
            // A value that may be null is read as its type: where it is null,
            // the operator fails at run time as it would anyway.
            Ty::OrNull(t) => T::of(*t),
        }
    }

    fn describe(&self) -> String {
        match self {
            T::Dyn => "a value".into(),
            T::Null => "null".into(),
            T::Bool => "a bool".into(),
            T::Int => "an int".into(),
            T::Uint => "a uint".into(),
            T::Double => "a double".into(),
            T::String => "a string".into(),
            T::Bytes => "bytes".into(),
            T::List(e) if **e == T::Dyn => "a list".into(),
            T::List(e) => format!("a list of {}", plural(e)),
            T::Map(..) => "a map".into(),
            T::Obj(o) => o.name.into(),
            T::Type => "a type".into(),
        }
    }

    fn numeric(&self) -> bool {
        matches!(self, T::Int | T::Uint | T::Double)
    }

    fn map_like(&self) -> bool {
        matches!(self, T::Map(..) | T::Obj(_))
    }
}

fn plural(t: &T) -> String {
    match t {
        T::Bool => "bools".into(),
        T::Int => "ints".into(),
        T::Uint => "uints".into(),
        T::Double => "doubles".into(),
        T::String => "strings".into(),
        T::Obj(o) => format!("{}s", o.name.trim_start_matches("a ")),
        other => format!("values ({})", other.describe()),
    }
}

/// What kind of type error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A field the value's declared type does not have.
    UnknownField,
    /// An operator or function given a value it cannot take, or the wrong
    /// number of arguments.
    Mismatch,
}

/// One type error, placed at a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// What kind.
    pub kind: Kind,
    /// The node.
    pub id: u64,
    /// For an unknown field: its name (the error covers it, after the `.`).
    pub field: Option<String>,
    /// For a function: its name (the error covers it, before the `(`).
    pub function: Option<String>,
    /// The message.
    pub message: String,
    /// What to do, if something better than the message can be said.
    pub help: Option<String>,
}

/// Checks a tree; every error found, in the order the walk met them.
#[must_use]
pub fn check(ast: &IdedExpr) -> Vec<TypeError> {
    let mut c = Checker::default();
    c.infer(ast);
    c.errors
}

#[derive(Default)]
struct Checker {
    bound: Vec<(String, T)>,
    errors: Vec<TypeError>,
}

/// A function's accepted shapes: with or without a receiver, and the
/// parameter types (`Dyn` takes anything), and its result.
struct Sig {
    receiver: Option<T>,
    params: Vec<T>,
}

fn sig(receiver: Option<T>, params: &[T]) -> Sig {
    Sig {
        receiver,
        params: params.to_vec(),
    }
}

/// The shapes and result of a function the checker knows, by name.
fn signatures(name: &str) -> Option<(Vec<Sig>, T)> {
    use T::{Bool, Dyn, Int, String as S};
    let strs = || T::List(Box::new(S));
    let list = || T::List(Box::new(Dyn));
    let r = Some;
    Some(match name {
        "contains" | "startsWith" | "endsWith" => (vec![sig(r(S), &[S])], Bool),
        "matches" => (vec![sig(r(S), &[S]), sig(None, &[S, S])], Bool),
        "charAt" => (vec![sig(r(S), &[Int])], S),
        "indexOf" | "lastIndexOf" => (vec![sig(r(S), &[S]), sig(r(S), &[S, Int])], Int),
        "lowerAscii" | "upperAscii" | "trim" => (vec![sig(r(S), &[])], S),
        "replace" => (vec![sig(r(S), &[S, S]), sig(r(S), &[S, S, Int])], S),
        "split" => (vec![sig(r(S), &[S]), sig(r(S), &[S, Int])], strs()),
        "substring" => (vec![sig(r(S), &[Int]), sig(r(S), &[Int, Int])], S),
        "join" => (vec![sig(r(list()), &[]), sig(r(list()), &[S])], S),
        "format" => (vec![sig(r(S), &[list()])], S),
        // A string's reverse (strings extension) or a list's (lists extension).
        "reverse" => (vec![sig(r(Dyn), &[])], Dyn),
        // The lists extension.
        "slice" => (vec![sig(r(list()), &[Int, Int])], list()),
        "flatten" => (vec![sig(r(list()), &[]), sig(r(list()), &[Int])], list()),
        "distinct" | "sort" => (vec![sig(r(list()), &[])], list()),
        // Timestamps (optionally in a time zone) and durations.
        "timestamp" | "duration" => (vec![sig(None, &[Dyn])], Dyn),
        "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
        | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" => {
            (vec![sig(r(Dyn), &[]), sig(r(Dyn), &[S])], Int)
        }
        "getMilliseconds" => (vec![sig(r(Dyn), &[S])], Int),
        "@zp_milliseconds" => (vec![sig(None, &[Dyn])], Int),
        "glob" | "path_under" => (vec![sig(None, &[S, S])], Bool),
        "path_matches" | "path_overlaps" | "ip_in" => (vec![sig(None, &[S, strs()])], Bool),
        "path_is_tree" | "path_is_pattern" | "shell_parses" => (vec![sig(None, &[S])], Bool),
        "path_ancestors" => (vec![sig(None, &[S])], strs()),
        "url_host" | "path_clean" => (vec![sig(None, &[S])], S),
        "shell_commands" => (vec![sig(None, &[S])], list()),
        "int" => (vec![sig(None, &[Dyn])], Int),
        "uint" => (vec![sig(None, &[Dyn])], T::Uint),
        "double" => (vec![sig(None, &[Dyn])], T::Double),
        "string" => (vec![sig(None, &[Dyn])], S),
        "bool" => (vec![sig(None, &[Dyn])], Bool),
        "bytes" => (vec![sig(None, &[Dyn])], T::Bytes),
        "dyn" => (vec![sig(None, &[Dyn])], Dyn),
        "type" => (vec![sig(None, &[Dyn])], T::Type),
        _ => return None,
    })
}

/// Whether a value of type `arg` may be given where `param` is asked.
fn fits(param: &T, arg: &T) -> bool {
    match (param, arg) {
        (T::Dyn, _) | (_, T::Dyn) => true,
        (T::List(p), T::List(a)) => fits(p, a),
        (T::Map(..), T::Obj(_) | T::Map(..)) => true,
        (p, a) => p == a,
    }
}

/// Whether `==` between the two can ever be true.
fn comparable(a: &T, b: &T) -> bool {
    match (a, b) {
        (T::Dyn | T::Null, _) | (_, T::Dyn | T::Null) => true,
        (x, y) if x.numeric() && y.numeric() => true,
        (T::List(x), T::List(y)) => comparable(x, y),
        (x, y) if x.map_like() && y.map_like() => true,
        (x, y) => x == y,
    }
}

/// Whether `<` between the two is defined.
fn ordered(a: &T, b: &T) -> bool {
    match (a, b) {
        (T::Dyn, x) | (x, T::Dyn) => matches!(
            x,
            T::Dyn | T::Int | T::Uint | T::Double | T::String | T::Bytes | T::Bool
        ),
        (x, y) if x.numeric() && y.numeric() => true,
        (T::String, T::String) | (T::Bytes, T::Bytes) | (T::Bool, T::Bool) => true,
        _ => false,
    }
}

impl Checker {
    fn error(&mut self, id: u64, message: String) {
        self.errors.push(TypeError {
            kind: Kind::Mismatch,
            id,
            field: None,
            function: None,
            message,
            help: None,
        });
    }

    /// An error about a call, covering the function's name.
    fn error_at_function(&mut self, id: u64, name: &str, message: String) {
        self.errors.push(TypeError {
            kind: Kind::Mismatch,
            id,
            field: None,
            function: Some(name.to_string()),
            message,
            help: None,
        });
    }

    fn lookup(&self, name: &str) -> T {
        if let Some((_, t)) = self.bound.iter().rev().find(|(n, _)| n == name) {
            return t.clone();
        }
        match vars::variable(name) {
            Some(ty) => T::of(ty),
            None if super::TYPE_NAMES.contains(&name) => T::Type,
            None => T::Dyn,
        }
    }

    fn infer(&mut self, e: &IdedExpr) -> T {
        match &e.expr {
            Expr::Unspecified => T::Dyn,
            Expr::Literal(l) => match l {
                LiteralValue::Int(_) => T::Int,
                LiteralValue::UInt(_) => T::Uint,
                LiteralValue::Double(_) => T::Double,
                LiteralValue::String(_) => T::String,
                LiteralValue::Bytes(_) => T::Bytes,
                LiteralValue::Boolean(_) => T::Bool,
                LiteralValue::Null => T::Null,
            },
            Expr::Ident(name) => self.lookup(name),
            Expr::Select(sel) => {
                let t = self.infer(&sel.operand);
                let field = self.field(e.id, &t, &sel.field, describe_operand(&sel.operand));
                if sel.test { T::Bool } else { field }
            }
            Expr::Call(call) => {
                self.call(e.id, &call.func_name, call.target.as_deref(), &call.args)
            }
            Expr::Comprehension(c) => {
                let range = self.infer(&c.iter_range);
                let (first, second) = match &range {
                    T::List(t) => {
                        if c.iter_var2.is_some() {
                            (T::Int, (**t).clone())
                        } else {
                            ((**t).clone(), T::Dyn)
                        }
                    }
                    T::Map(k, v) => ((**k).clone(), (**v).clone()),
                    T::Obj(_) => (T::String, T::Dyn),
                    T::Dyn => (T::Dyn, T::Dyn),
                    other => {
                        self.error(
                            c.iter_range.id,
                            format!(
                                "a comprehension ranges over a list or a map, not {}",
                                other.describe()
                            ),
                        );
                        (T::Dyn, T::Dyn)
                    }
                };
                let accu = self.infer(&c.accu_init);
                let depth = self.bound.len();
                self.bound.push((c.iter_var.clone(), first));
                if let Some(v2) = &c.iter_var2 {
                    self.bound.push((v2.clone(), second));
                }
                self.bound.push((c.accu_var.clone(), accu));
                self.infer(&c.loop_cond);
                self.infer(&c.loop_step);
                let result = self.infer(&c.result);
                self.bound.truncate(depth);
                result
            }
            Expr::List(list) => {
                let types: Vec<T> = list.elements.iter().map(|el| self.infer(el)).collect();
                T::List(Box::new(common(&types)))
            }
            Expr::Map(map) => {
                let mut keys = Vec::new();
                let mut values = Vec::new();
                for entry in &map.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(m) => {
                            let key = self.infer(&m.key);
                            if !matches!(key, T::Int | T::Uint | T::Bool | T::String | T::Dyn) {
                                self.error(
                                    m.key.id,
                                    format!(
                                        "a map key is an int, a uint, a bool or a string, not {}",
                                        key.describe()
                                    ),
                                );
                            }
                            keys.push(key);
                            values.push(self.infer(&m.value));
                        }
                        EntryExpr::StructField(f) => {
                            self.infer(&f.value);
                        }
                    }
                }
                T::Map(Box::new(common(&keys)), Box::new(common(&values)))
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(m) => {
                            self.infer(&m.key);
                            self.infer(&m.value);
                        }
                        EntryExpr::StructField(f) => {
                            self.infer(&f.value);
                        }
                    }
                }
                T::Dyn
            }
        }
    }

    /// `operand.name`, where the operand is of type `t`.
    fn field(&mut self, id: u64, t: &T, name: &str, operand: Option<String>) -> T {
        match t {
            T::Obj(o) => match o.field(name) {
                Some(f) => T::of(f.ty),
                None => {
                    let candidates = o.fields.iter().map(|f| f.name);
                    let help = match crate::diagnostic::closest(name, candidates) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "the fields of {} are {}",
                            o.name,
                            o.fields
                                .iter()
                                .map(|f| format!("`{}`", f.name))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    self.errors.push(TypeError {
                        kind: Kind::UnknownField,
                        id,
                        field: Some(name.to_string()),
                        function: None,
                        message: format!("{} has no field `{name}`", o.name),
                        help: Some(help),
                    });
                    T::Dyn
                }
            },
            T::Map(_, v) => (**v).clone(),
            T::Dyn => T::Dyn,
            other => {
                let what = operand.map_or_else(
                    || other.describe(),
                    |o| format!("`{o}` is {}", other.describe()),
                );
                self.error(id, format!("{what}: it has no field `{name}`"));
                T::Dyn
            }
        }
    }

    fn call(&mut self, id: u64, name: &str, target: Option<&IdedExpr>, args: &[IdedExpr]) -> T {
        let recv = target.map(|t| self.infer(t));
        let types: Vec<T> = args.iter().map(|a| self.infer(a)).collect();
        let bin = |types: &[T]| {
            (
                types.first().cloned().unwrap_or(T::Dyn),
                types.get(1).cloned().unwrap_or(T::Dyn),
            )
        };
        match name {
            "_&&_" | "_||_" | "!_" => {
                for (a, t) in args.iter().zip(&types) {
                    if !matches!(t, T::Bool | T::Dyn) {
                        let op = match name {
                            "_&&_" => "`&&`",
                            "_||_" => "`||`",
                            _ => "`!`",
                        };
                        self.error(a.id, format!("{op} takes bools, not {}", t.describe()));
                    }
                }
                T::Bool
            }
            "@not_strictly_false" => T::Bool,
            "-_" => {
                let t = types.first().cloned().unwrap_or(T::Dyn);
                if matches!(t, T::Int | T::Double | T::Dyn) {
                    t
                } else {
                    self.error(
                        id,
                        format!("`-` negates an int or a double, not {}", t.describe()),
                    );
                    T::Dyn
                }
            }
            "_?_:_" => {
                let cond = types.first().cloned().unwrap_or(T::Dyn);
                if !matches!(cond, T::Bool | T::Dyn) {
                    self.error(
                        args.first().map_or(id, |a| a.id),
                        format!("the condition of `? :` is {}, not a bool", cond.describe()),
                    );
                }
                match (types.get(1), types.get(2)) {
                    (Some(a), Some(b)) if a == b => a.clone(),
                    _ => T::Dyn,
                }
            }
            "_==_" | "_!=_" => {
                let (a, b) = bin(&types);
                if !comparable(&a, &b) {
                    self.error(
                        id,
                        format!(
                            "`{}` compares {} with {}: they are never equal",
                            if name == "_==_" { "==" } else { "!=" },
                            a.describe(),
                            b.describe()
                        ),
                    );
                }
                T::Bool
            }
            "_<_" | "_<=_" | "_>_" | "_>=_" => {
                let (a, b) = bin(&types);
                if !ordered(&a, &b) {
                    let op = &name[1..name.len() - 1];
                    self.error(
                        id,
                        format!("`{op}` cannot order {} and {}", a.describe(), b.describe()),
                    );
                }
                T::Bool
            }
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => {
                let (a, b) = bin(&types);
                self.arith(id, name, &a, &b)
            }
            "@in" => {
                let (a, b) = bin(&types);
                match &b {
                    T::List(e) => {
                        if !comparable(&a, e) {
                            self.error(
                                id,
                                format!(
                                    "`in` looks for {} in {}: never found",
                                    a.describe(),
                                    b.describe()
                                ),
                            );
                        }
                    }
                    T::Map(..) | T::Obj(_) | T::Dyn => {}
                    other => self.error(
                        id,
                        format!("`in` looks in a list or a map, not in {}", other.describe()),
                    ),
                }
                T::Bool
            }
            "_[_]" => {
                let (c, i) = bin(&types);
                match &c {
                    T::List(e) => {
                        if matches!(i, T::Int | T::Uint | T::Double | T::Dyn) {
                            (**e).clone()
                        } else {
                            self.error(
                                id,
                                format!("a list is indexed by an int, not {}", i.describe()),
                            );
                            T::Dyn
                        }
                    }
                    T::Map(_, v) => (**v).clone(),
                    T::Obj(_) => match args.get(1).map(|a| &a.expr) {
                        Some(Expr::Literal(LiteralValue::String(s))) => {
                            let operand = args.first().and_then(describe_operand);
                            let key_id = args.get(1).map_or(id, |a| a.id);
                            self.field(key_id, &c, s, operand)
                        }
                        _ => T::Dyn,
                    },
                    T::Dyn => T::Dyn,
                    other => {
                        self.error(id, format!("{} cannot be indexed", other.describe()));
                        T::Dyn
                    }
                }
            }
            "_?._" | "_[?_]" => T::Dyn,
            "size" => {
                let (n, of) = match (&recv, types.as_slice()) {
                    (Some(r), []) => (1, r.clone()),
                    (None, [t]) => (1, t.clone()),
                    _ => (0, T::Dyn),
                };
                if n == 0 {
                    self.arity(id, name, "`size(x)` or `x.size()`");
                } else if !matches!(
                    of,
                    T::String | T::Bytes | T::List(_) | T::Map(..) | T::Obj(_) | T::Dyn
                ) {
                    self.error_at_function(
                        id,
                        name,
                        format!(
                            "`size` takes a string, bytes, a list or a map, not {}",
                            of.describe()
                        ),
                    );
                }
                T::Int
            }
            _ => match signatures(name) {
                Some((sigs, result)) => {
                    let shape = sigs.iter().find(|s| {
                        s.receiver.is_some() == recv.is_some() && s.params.len() == types.len()
                    });
                    match shape {
                        None => {
                            let forms = sigs
                                .iter()
                                .map(|s| form(name, s))
                                .collect::<Vec<_>>()
                                .join(" or ");
                            self.arity(id, name, &forms);
                        }
                        Some(s) => {
                            if let (Some(p), Some(r)) = (&s.receiver, &recv)
                                && !fits(p, r)
                            {
                                self.error_at_function(
                                    id,
                                    name,
                                    format!(
                                        "`{name}` is called on {}, not on {}",
                                        r.describe(),
                                        p.describe()
                                    ),
                                );
                            }
                            for (i, (p, a)) in s.params.iter().zip(&types).enumerate() {
                                if !fits(p, a) {
                                    self.error(
                                        args[i].id,
                                        format!(
                                            "argument {} of `{name}` is {}, not {}",
                                            i + 1,
                                            a.describe(),
                                            p.describe()
                                        ),
                                    );
                                }
                            }
                        }
                    }
                    result
                }
                None => T::Dyn,
            },
        }
    }

    fn arity(&mut self, id: u64, name: &str, forms: &str) {
        self.errors.push(TypeError {
            kind: Kind::Mismatch,
            id,
            field: None,
            function: Some(name.to_string()),
            message: format!("`{name}` is called as {forms}"),
            help: None,
        });
    }

    fn arith(&mut self, id: u64, name: &str, a: &T, b: &T) -> T {
        let op = &name[1..name.len() - 1];
        let takes = |t: &T| match op {
            "+" => matches!(
                t,
                T::Int | T::Uint | T::Double | T::String | T::Bytes | T::List(_) | T::Dyn
            ),
            "%" => matches!(t, T::Int | T::Uint | T::Dyn),
            _ => matches!(t, T::Int | T::Uint | T::Double | T::Dyn),
        };
        for t in [a, b] {
            if !takes(t) {
                self.error(id, format!("`{op}` cannot take {}", t.describe()));
                return T::Dyn;
            }
        }
        match (a, b) {
            (T::Dyn, t) | (t, T::Dyn) => match t {
                T::List(_) => T::List(Box::new(T::Dyn)),
                t => t.clone(),
            },
            (T::List(x), T::List(y)) => {
                T::List(Box::new(if x == y { (**x).clone() } else { T::Dyn }))
            }
            (x, y) if x == y => x.clone(),
            (x, y) => {
                let hint = if x.numeric() && y.numeric() {
                    " (CEL does not mix number types: convert one with `int()`, `uint()` or `double()`)"
                } else {
                    ""
                };
                self.error(
                    id,
                    format!(
                        "`{op}` cannot combine {} and {}{hint}",
                        x.describe(),
                        y.describe()
                    ),
                );
                T::Dyn
            }
        }
    }
}

fn form(name: &str, s: &Sig) -> String {
    let params = s
        .params
        .iter()
        .map(|p| p.describe())
        .collect::<Vec<_>>()
        .join(", ");
    match &s.receiver {
        Some(r) => format!("`x.{name}({params})` on {}", r.describe()),
        None => format!("`{name}({params})`"),
    }
}

/// The common type of several, or `Dyn`.
fn common(types: &[T]) -> T {
    match types.split_first() {
        Some((first, rest)) if rest.iter().all(|t| t == first) => first.clone(),
        _ => T::Dyn,
    }
}

/// The source of a simple operand (`session`, `call.commands`), for messages.
fn describe_operand(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        Expr::Select(s) if !s.test => {
            describe_operand(&s.operand).map(|o| format!("{o}.{}", s.field))
        }
        _ => None,
    }
}
