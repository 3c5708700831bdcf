//! CEL: one environment, expressions compiled and checked at load, and
//! evaluation against a call's variables.
//!
//! Every `when` is compiled once. Static checks walk the compiled tree:
//! unknown variables and functions are load errors, literal `glob` and
//! `matches` patterns are compiled into a [`PatternCache`], and the `args.X`
//! reads are recorded for `lint`.

pub mod batch;
pub mod budget;
pub mod functions;
pub mod json;
pub mod macros;
pub mod plan;
pub mod reasons;
pub mod stored;
pub mod types;
pub mod vars;

use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cel::common::ast::SourceInfo;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::parser::PrattParser;
use cel::{Context, Env, ExecutionError, Value};

pub use functions::PatternCache;

/// The variables an expression may read.
pub const VARIABLES: &[&str] = &["tool", "args", "session", "call", "lists"];

/// The names of CEL's types, which are values too (`type(x) == int`).
const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "optional_type",
];

/// What an expression is compiled for.
#[derive(Debug, Clone, Copy)]
pub struct CompileCtx<'a> {
    /// The named lists, for `lists.NAME`.
    pub lists: &'a Arc<std::collections::BTreeMap<String, Vec<String>>>,
    /// Whether `call` may be read (rules: yes; effect expressions: no).
    pub allow_call: bool,
    /// Whether path globs ignore case.
    pub case_insensitive: bool,
}

/// Standard CEL and strings-extension function names accepted in expressions.
const STANDARD_FUNCTIONS: &[&str] = &[
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "type",
    "dyn",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "join",
    "format",
    "reverse",
    "hasValue",
    "value",
    "orValue",
    "or",
    // Timestamps and durations.
    "timestamp",
    "duration",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    // The lists extension (`lists.range` is left out: see QUALIFIED_FUNCTIONS).
    "slice",
    "flatten",
    "distinct",
    "sort",
    "@sortByAssociatedKeys",
    // The math extension's `greatest` and `least`, as their macros expand.
    "math.@max",
    "math.@min",
    // The helpers of the two-variable comprehensions ([`macros`]).
    macros::PAIRS,
    macros::TO_MAP,
    macros::MILLIS,
];

/// Functions called by a qualified name, `namespace.function(…)`: the
/// namespace is not a variable. (`lists.range` is not one: `lists` is the
/// policy's lists, and a list of any length it could build has no bound the
/// cost estimate could know.)
const QUALIFIED_FUNCTIONS: &[&str] = &[
    "strings.quote",
    "optional.of",
    "optional.none",
    "optional.ofNonZeroValue",
    "base64.encode",
    "base64.decode",
    "math.ceil",
    "math.floor",
    "math.round",
    "math.trunc",
    "math.isInf",
    "math.isNaN",
    "math.isFinite",
    "math.abs",
    "math.sign",
    "math.sqrt",
    "math.bitAnd",
    "math.bitOr",
    "math.bitXor",
    "math.bitNot",
    "math.bitShiftLeft",
    "math.bitShiftRight",
];

/// The qualified name a call spells (`math.abs(x)`: `math.abs`), if it is one
/// of [`QUALIFIED_FUNCTIONS`] and its namespace is not a bound variable.
fn qualified_name(target: &IdedExpr, function: &str, bound: &[String]) -> Option<&'static str> {
    let Expr::Ident(ns) = &target.expr else {
        return None;
    };
    if bound.iter().any(|b| b == ns) {
        return None;
    }
    QUALIFIED_FUNCTIONS.iter().copied().find(|q| {
        q.strip_prefix(ns.as_str())
            .and_then(|r| r.strip_prefix('.'))
            == Some(function)
    })
}

/// A problem with an expression, placed by a byte range inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    /// What kind of problem.
    pub kind: ExprErrorKind,
    /// The message.
    pub message: String,
    /// Byte range inside the expression source.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// What to do, when the check knows better than the kind's general advice
    /// (`did you mean `program`?`).
    pub help: Option<String>,
}

/// The kinds of [`ExprError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExprErrorKind {
    /// The expression does not parse.
    Syntax,
    /// An unknown variable.
    UnknownVariable,
    /// An unknown function.
    UnknownFunction,
    /// A literal glob that does not compile.
    InvalidGlob,
    /// A literal regex that does not compile.
    InvalidRegex,
    /// `lists.NAME` with no such list.
    UnknownList,
    /// Too long, too many tokens or too deeply nested to parse safely.
    TooLarge,
    /// Evaluation could exceed the cost budget.
    Cost,
    /// A field the value's declared type does not have (`session.mod`).
    UnknownField,
    /// An operator or function given a value of the wrong type, or the wrong
    /// number of arguments.
    TypeMismatch,
}

/// One `args.X` read in an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgRead {
    /// The first key after `args`.
    pub key: String,
    /// Byte range inside the expression.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
}

/// A compiled, checked expression.
#[derive(Debug)]
pub struct Expression {
    /// The source text.
    pub source: String,
    /// The parsed tree, macros expanded: parsed again when first needed by
    /// an expression restored from its stored form ([`stored`]), which the
    /// planned evaluator decides without.
    ast: std::sync::OnceLock<IdedExpr>,
    /// The keys of every `args.X` read that is not a `has()` test, in source
    /// order; [`Expression::arg_reads`] places them.
    arg_keys: Vec<String>,
    /// Keys guarded by `has(args.X)` or `args.?X` somewhere in the expression.
    pub guarded: BTreeSet<String>,
    /// Literal glob patterns (already compiled into the shared cache).
    pub globs: Vec<String>,
    /// Literal regex patterns (already compiled into the shared cache).
    pub regexes: Vec<String>,
    /// The expression reads `call` (so the call's effects must be computed).
    pub reads_call: bool,
    /// The lists it names.
    pub lists: Vec<String>,
    /// It reads `lists` whole (so the cost estimate reads every list).
    reads_all_lists: bool,
    /// What literal it is, if it is one ([`Expression::literal_kind`]).
    literal: Option<&'static str>,
    /// The lists the cost estimate reads, for estimating again at run time.
    list_sizes: Arc<std::collections::BTreeMap<String, Vec<String>>>,
    /// The glob lists given to the path functions, as compiled into the
    /// pattern cache.
    glob_lists: Vec<Vec<String>>,
    /// The string literals compiled as globs into the pattern cache, if any
    /// (an expression that calls `glob`).
    literal_globs: Vec<String>,
    /// The planned form, or why the `cel` crate evaluates it instead.
    plan: Result<plan::Plan, String>,
}

/// The lists a cost estimate reads: every list for an expression that reads
/// `lists` whole (shared with every such expression), else those it names.
fn list_sizes(reads_all: bool, names: &[String], lists: &Lists) -> Lists {
    if reads_all {
        Arc::clone(lists)
    } else {
        Arc::new(
            names
                .iter()
                .filter_map(|n| lists.get(n).map(|l| (n.clone(), l.clone())))
                .collect(),
        )
    }
}

/// The named lists of a load.
type Lists = Arc<std::collections::BTreeMap<String, Vec<String>>>;

/// The tree of a source that compiled before ([`stored`]): parsed as
/// [`CelEnv::compile`] parsed it, which gives the same tree.
fn reparse(source: &str) -> IdedExpr {
    parse_fast(source)
        .or_else(|| {
            CelEnv::new()
                .env
                .parser()
                .enable_ident_escape_syntax(true)
                .parse_with_source_info(source)
                .ok()
                .map(|(ast, _)| ast)
        })
        // INVARIANT: the source compiled with this build. Should it not parse
        // now, it is an unknown name: an error wherever it is evaluated, and
        // a rule that errors fails closed.
        .unwrap_or(IdedExpr {
            id: 0,
            expr: Expr::Ident("zp__unparsed".to_string()),
        })
}

impl Expression {
    /// The parsed tree; parsed now if the expression was restored.
    fn ast(&self) -> &IdedExpr {
        self.ast.get_or_init(|| reparse(&self.source))
    }

    /// The keys of every `args.X` read that is not a `has()` test.
    pub fn arg_keys(&self) -> impl Iterator<Item = &str> {
        self.arg_keys.iter().map(String::as_str)
    }

    /// Every `args.X` read that is not a `has()` test, placed in the source.
    ///
    /// Parses the source again, with the parser that keeps positions: for
    /// reports (`lint`), not for deciding.
    #[must_use]
    pub fn arg_reads(&self) -> Vec<ArgRead> {
        let source = self.source.as_str();
        let Ok((ast, info)) = cel::parser::Parser::new()
            .enable_optional_syntax(true)
            .enable_ident_escape_syntax(true)
            .parse_with_source_info(source)
        else {
            // INVARIANT: the source compiled; should the two parsers ever
            // disagree, each read still names its key, over the whole source.
            return self
                .arg_keys
                .iter()
                .map(|key| ArgRead {
                    key: key.clone(),
                    start: 0,
                    end: source.len(),
                })
                .collect();
        };
        let mut walk = Walk::default();
        walk.expr(&ast, &mut Vec::new());
        walk.arg_reads
            .iter()
            .map(|(key, id, operand)| {
                // From the start of `args` to the end of the key: a select node sits at
                // its `.`, an index node's key literal ends before `]`.
                let (start, _) = node_range(source, Some(&info), *operand);
                let (at, at_end) = node_range(source, Some(&info), *id);
                let end = if source.get(at..at + 1) == Some(".") {
                    (at + 1 + quoted_len(source, at + 1, key)).min(source.len())
                } else {
                    source
                        .get(at_end..)
                        .and_then(|r| r.find(']'))
                        .map_or(at_end, |i| at_end + i + 1)
                };
                ArgRead {
                    key: key.clone(),
                    start,
                    end,
                }
            })
            .collect()
    }

    /// `None` when the expression is planned; otherwise why the `cel` crate
    /// evaluates it (a construct the planner does not know).
    #[must_use]
    pub fn not_planned(&self) -> Option<&str> {
        self.plan.as_ref().err().map(String::as_str)
    }

    /// Whether it is a literal (`true`, `"x"`, `[…]`) rather than a computation.
    #[must_use]
    pub fn literal_kind(&self) -> Option<&'static str> {
        self.literal
    }
}

/// The literal kinds [`Expression::literal_kind`] names, in the order the
/// stored form numbers them (from 1).
const LITERAL_KINDS: [&str; 5] = ["a string", "a bool", "a number", "a list", "a map"];

/// What literal a tree is, if it is one.
fn literal_kind(ast: &IdedExpr) -> Option<&'static str> {
    match &ast.expr {
        Expr::Literal(LiteralValue::String(_)) => Some("a string"),
        Expr::Literal(LiteralValue::Boolean(_)) => Some("a bool"),
        Expr::Literal(LiteralValue::Int(_) | LiteralValue::UInt(_) | LiteralValue::Double(_)) => {
            Some("a number")
        }
        Expr::List(_) => Some("a list"),
        Expr::Map(_) => Some("a map"),
        _ => None,
    }
}

/// The CEL environment shared by every expression.
#[derive(Clone)]
pub struct CelEnv {
    env: Arc<Env>,
}

impl std::fmt::Debug for CelEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CelEnv")
    }
}

impl Default for CelEnv {
    fn default() -> Self {
        CelEnv::new()
    }
}

impl CelEnv {
    /// The standard library, the `strings`, `math`, `lists` and `encoders`
    /// extensions and the macros of [`macros`]: one per process,
    /// shared (it is never changed once built, and building it is 0.2
    /// million instructions, which a hook would otherwise pay twice).
    #[must_use]
    pub fn new() -> CelEnv {
        static SHARED: std::sync::LazyLock<Arc<Env>> = std::sync::LazyLock::new(|| {
            let mut env = Env::stdlib();
            // INVARIANT: the extensions declare no name the stdlib or another
            // extension has (`reverse` is a string member in one, a list
            // member in the other).
            let _ = env.add_extension(cel::extensions::strings);
            let _ = env.add_extension(cel::extensions::math);
            let _ = env.add_extension(cel::extensions::lists);
            let _ = env.add_extension(cel::extensions::encoders);
            for m in macros::all() {
                // INVARIANT: no standard macro has these names and arities.
                let _ = env.add_macro(m);
            }
            Arc::new(env)
        });
        CelEnv {
            env: Arc::clone(&SHARED),
        }
    }

    /// Compiles and checks one expression. Literal patterns are compiled into `cache`.
    ///
    /// # Errors
    /// Every problem found, each placed inside the source.
    pub fn compile(
        &self,
        source: &str,
        cache: &mut PatternCache,
        cx: &CompileCtx<'_>,
    ) -> Result<Expression, Vec<ExprError>> {
        // The parser recurses: bound what it is given first.
        if let Err(r) = budget::prescan(source) {
            return Err(vec![ExprError {
                help: None,
                kind: ExprErrorKind::TooLarge,
                message: r.message,
                start: r.start.min(source.len()),
                end: next_char_boundary(source, r.start.min(source.len())),
            }]);
        }
        // For the syntax `parse_fast` admits, the `cel` crate's Pratt parser
        // builds the tree its ANTLR one builds, several times faster
        // (tests/differential.rs holds them equal), but keeps no positions. An expression with a problem is parsed again by
        // the ANTLR parser, whose positions place each error.
        match parse_fast(source) {
            Some(ast) => match self.check(source, ast, None, cache, cx) {
                Ok(expr) => Ok(expr),
                Err(_) => self.compile_located(source, cache, cx),
            },
            None => self.compile_located(source, cache, cx),
        }
    }

    /// [`CelEnv::compile`] with the ANTLR parser, whose positions place errors.
    fn compile_located(
        &self,
        source: &str,
        cache: &mut PatternCache,
        cx: &CompileCtx<'_>,
    ) -> Result<Expression, Vec<ExprError>> {
        let (ast, info) = match self
            .env
            .parser()
            .enable_ident_escape_syntax(true)
            .parse_with_source_info(source)
        {
            Ok(parsed) => parsed,
            Err(errs) => {
                return Err(errs
                    .errors
                    .iter()
                    .map(|e| {
                        let start = char_pos_to_byte(
                            source,
                            e.pos.0.max(1) as usize,
                            e.pos.1.max(0) as usize,
                        );
                        let end = next_char_boundary(source, start);
                        // The parser's own limit comes back as a debug dump of its
                        // error type: said in words, with the limit's code.
                        if e.msg.contains("OtherError") || e.msg.contains("Recursion limit") {
                            ExprError {
                                help: None,
                                kind: ExprErrorKind::TooLarge,
                                message: "the expression nests too deeply to parse".to_string(),
                                start,
                                end,
                            }
                        } else if let Some(f) = ["cel.iterVar", "cel.accuVar"]
                            .into_iter()
                            .find(|f| source.get(..start).is_some_and(|r| r.ends_with(f)))
                        {
                            // cel-go's optimizer names the variables of the
                            // macros inside a `cel.block` so (the error sits
                            // at the call's `(`); zero-policy's macros take
                            // simple names only.
                            ExprError {
                                help: Some(format!(
                                    "name the variable: `x` rather than `{f}(0, 0)`"
                                )),
                                kind: ExprErrorKind::Syntax,
                                message: format!(
                                    "`{f}` is not supported: a macro's variable is a simple name"
                                ),
                                start: start - f.len(),
                                end: start,
                            }
                        } else {
                            ExprError {
                                help: None,
                                kind: ExprErrorKind::Syntax,
                                message: lowercase_first(&e.msg),
                                start,
                                end,
                            }
                        }
                    })
                    .collect());
            }
        };
        self.check(source, ast, Some(&info), cache, cx)
    }

    /// The checks of [`CelEnv::compile`] on a parsed tree; `info` places errors
    /// (without it, each error covers the whole source).
    fn check(
        &self,
        source: &str,
        ast: IdedExpr,
        info: Option<&SourceInfo>,
        cache: &mut PatternCache,
        cx: &CompileCtx<'_>,
    ) -> Result<Expression, Vec<ExprError>> {
        let mut walk = Walk::default();
        walk.expr(&ast, &mut Vec::new());
        let range = |id: u64| node_range(source, info, id);
        let mut errors = Vec::new();
        for (name, id) in &walk.idents {
            if name == "call" && !cx.allow_call {
                let (start, end) = range(*id);
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::UnknownVariable,
                    message: "effect expressions cannot read `call`: they define it".to_string(),
                    start,
                    end: end.max(start + name.len()).min(source.len()),
                });
            } else if !VARIABLES.contains(&name.as_str()) && !TYPE_NAMES.contains(&name.as_str()) {
                let (start, end) = range(*id);
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::UnknownVariable,
                    message: format!(
                        "unknown variable `{name}`; the variables are `tool`, `args`, `session`, `call` and `lists`"
                    ),
                    start,
                    end: end.max(start + name.len()).min(source.len()),
                });
            }
        }
        for (name, id) in &walk.calls {
            if !is_known_function(name) {
                // A call node sits at its `(`: the name is just before it.
                let (paren, _) = range(*id);
                let (start, end) = match paren.checked_sub(name.len()) {
                    Some(s) if source.get(s..paren) == Some(name.as_str()) => (s, paren),
                    _ => range(*id),
                };
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::UnknownFunction,
                    message: format!("unknown function `{name}`"),
                    start,
                    end,
                });
            }
        }
        for (pattern, id) in &walk.globs {
            if let Err(e) = cache.add_glob(pattern) {
                let (start, end) = range(*id);
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::InvalidGlob,
                    message: format!("invalid glob `{pattern}`: {}", e.kind()),
                    start,
                    end,
                });
            }
        }
        for (pattern, id) in &walk.regexes {
            if let Err(e) = cache.add_regex(pattern) {
                let (start, end) = range(*id);
                let detail = e.to_string();
                let last = detail.lines().last().unwrap_or("").trim().to_string();
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::InvalidRegex,
                    message: format!("invalid regex `{pattern}`: {}", last.to_lowercase()),
                    start,
                    end,
                });
            }
        }
        for (name, id, operand) in &walk.list_reads {
            if !cx.lists.contains_key(name) {
                // From `lists` to the end of the name: a select node sits at its `.`.
                let (start, _) = range(*operand);
                let (dot, _) = range(*id);
                let end = (dot + 1 + quoted_len(source, dot + 1, name)).min(source.len());
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::UnknownList,
                    message: format!("unknown list `{name}`"),
                    start,
                    end,
                });
            }
        }
        // Glob lists given to the path functions are compiled now, not per call.
        let mut glob_lists = Vec::new();
        for (arg, id) in &walk.glob_lists {
            let items: Option<Vec<String>> = match arg {
                GlobListArg::Named(n) => cx.lists.get(n).cloned(),
                GlobListArg::Literal(items) => Some(items.clone()),
            };
            if let Some(items) = items {
                if let Err(e) = cache.add_glob_list(&items, cx.case_insensitive) {
                    let (start, end) = range(*id);
                    errors.push(ExprError {
                        help: None,
                        kind: ExprErrorKind::InvalidGlob,
                        message: format!("invalid glob in the list: {e}"),
                        start,
                        end,
                    });
                }
                glob_lists.push(items);
            }
        }
        let literal_globs = if walk.calls.iter().any(|(n, _)| n == "glob") {
            // Literals that are not glob() arguments may still reach glob() through a
            // variable; compile the ones that are valid globs now rather than per call.
            for lit in &walk.literals {
                let _ = cache.add_glob(lit);
            }
            std::mem::take(&mut walk.literals)
        } else {
            Vec::new()
        };
        if errors.is_empty() {
            for e in types::check(&ast) {
                errors.push(type_error(source, info, e));
            }
        }
        if errors.is_empty() {
            let estimate = budget::estimate(&ast, &budget::Inputs::ASSUMED, cx.lists);
            if let Some(id) = estimate.over {
                // A macro's node sits inside its name: underline the whole name.
                let (mut start, mut end) = range(id);
                let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
                while start > 0 && source[..start].chars().next_back().is_some_and(ident) {
                    start -= 1;
                }
                while source[end..].chars().next().is_some_and(ident) {
                    end += 1;
                }
                errors.push(ExprError {
                    help: None,
                    kind: ExprErrorKind::Cost,
                    message: estimate.describe(),
                    start,
                    end,
                });
            }
        }
        if !errors.is_empty() {
            errors.sort_by_key(|e| (e.start, e.end));
            return Err(errors);
        }
        let reads_all_lists = walk.idents.iter().any(|(n, _)| n == "lists");
        let lists: Vec<String> = walk.list_reads.into_iter().map(|(n, _, _)| n).collect();
        let list_sizes = list_sizes(reads_all_lists, &lists, cx.lists);
        let arg_keys = walk.arg_reads.iter().map(|(k, _, _)| k.clone()).collect();
        let plan = plan::plan(
            &ast,
            &plan::PlanCtx {
                cache,
                lists: cx.lists,
                case_insensitive: cx.case_insensitive,
            },
        );
        Ok(Expression {
            source: source.to_string(),
            plan,
            literal: literal_kind(&ast),
            ast: std::sync::OnceLock::from(ast),
            arg_keys,
            guarded: walk.guarded,
            globs: walk.globs.into_iter().map(|(p, _)| p).collect(),
            regexes: walk.regexes.into_iter().map(|(p, _)| p).collect(),
            reads_call: walk.idents.iter().any(|(n, _)| n == "call"),
            lists,
            reads_all_lists,
            list_sizes,
            glob_lists,
            literal_globs,
        })
    }

    /// A root context with the function library, for one registry.
    ///
    /// # Errors
    /// A function name clashes (a bug, reported rather than panicking).
    pub fn root_context(
        &self,
        cache: &Arc<PatternCache>,
        lists: &Arc<std::collections::BTreeMap<String, Vec<String>>>,
        case_insensitive: bool,
    ) -> Result<Root, String> {
        let mut ctx = Context::with_env(Arc::clone(&self.env));
        functions::register(&mut ctx, cache, case_insensitive)?;
        Ok(Root {
            ctx,
            lists: Arc::clone(lists),
            cache: Arc::clone(cache),
        })
    }
}

/// The `cel` crate's root context: the function library, and the policy's
/// lists, which become the `lists` variable of a call's context only when an
/// expression goes to the crate (one not planned, or one that fails); their
/// value is the one the planner made for the load (`PatternCache::lists_value`).
pub struct Root {
    ctx: Context<'static, 'static>,
    lists: Arc<std::collections::BTreeMap<String, Vec<String>>>,
    cache: Arc<PatternCache>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("lists", &self.lists.len())
            .finish()
    }
}

impl Root {
    /// `lists` as a CEL map of lists of strings, the value the planner
    /// reads (made once per load, shared).
    fn lists_value(&self) -> Value {
        self.cache.lists_value(&self.lists)
    }
}

/// The values of one call, ready for evaluation.
#[derive(Debug, Clone)]
pub struct Vars {
    /// `tool`.
    pub tool: Value,
    /// `args`.
    pub args: Value,
    /// `session`.
    pub session: Value,
    /// `session.workspace`, for `path_under`.
    pub workspace: Value,
}

/// The sizes the cost bound counts for `session`: the larger of the session
/// value and the workspace the path functions read.
#[must_use]
pub fn session_sizes(session: &Value, workspace: &Value) -> budget::Sizes {
    budget::Sizes::measure(session).max(budget::Sizes::measure(workspace))
}

/// Whether expressions run planned (the default) or only through the `cel`
/// crate (for benchmarks and the differential test: the reference path).
static PLANNED: AtomicBool = AtomicBool::new(true);

/// Chooses the planned evaluator (`true`, the default) or the `cel` crate's
/// tree walk for every expression of this process: the reference the planner
/// is checked against, kept for side-by-side measurement.
pub fn set_planned(on: bool) {
    PLANNED.store(on, Ordering::Relaxed);
}

/// Whether the planned evaluator is on (see [`set_planned`]).
#[must_use]
pub fn planned() -> bool {
    PLANNED.load(Ordering::Relaxed)
}

/// Evaluates expressions for one call: the variables are bound once.
///
/// Planned expressions read the variables directly; the `cel` crate's context
/// is built only if an expression is not planned or fails (the crate words
/// the error).
pub struct Scope<'r> {
    root: &'r Root,
    frame: plan::Frame<'r>,
    ctx: OnceCell<Context<'r, 'static>>,
    /// The sizes of the bound values, for the run-time cost bound.
    sizes: budget::Inputs,
}

impl<'r> Scope<'r> {
    /// Binds the call's variables under a root context.
    #[must_use]
    pub fn new(root: &'r Root, vars: &'r Vars) -> Scope<'r> {
        Scope::with_args(root, vars, plan::Args::Cel(&vars.args))
    }

    /// As [`Scope::new`], with `args` read from the call's JSON: only the keys
    /// an expression reads are converted (`vars.args` is not read).
    #[must_use]
    pub fn with_json_args(
        root: &'r Root,
        vars: &'r Vars,
        args: &'r serde_json::Value,
    ) -> Scope<'r> {
        Scope::with_args(root, vars, plan::Args::Json(args))
    }

    /// As [`Scope::with_json_args`], with the sizes of `tool` and `session`
    /// (and the workspace) measured once, when their values were built,
    /// instead of per call.
    #[must_use]
    pub fn with_measured(
        root: &'r Root,
        vars: &'r Vars,
        args: &'r serde_json::Value,
        tool: budget::Sizes,
        session: budget::Sizes,
    ) -> Scope<'r> {
        let args = plan::Args::Json(args);
        Scope::with_sizes(root, vars, args, tool, session)
    }

    fn with_args(root: &'r Root, vars: &'r Vars, args: plan::Args<'r>) -> Scope<'r> {
        let tool = budget::Sizes::measure(&vars.tool);
        let session = session_sizes(&vars.session, &vars.workspace);
        Scope::with_sizes(root, vars, args, tool, session)
    }

    fn with_sizes(
        root: &'r Root,
        vars: &'r Vars,
        args: plan::Args<'r>,
        tool: budget::Sizes,
        session: budget::Sizes,
    ) -> Scope<'r> {
        let sizes = budget::Inputs {
            tool,
            args: match args {
                plan::Args::Cel(v) => budget::Sizes::measure(v),
                plan::Args::Json(j) => budget::Sizes::measure_json(j),
            },
            session,
            call: budget::Sizes::ZERO,
        };
        Scope {
            root,
            frame: plan::Frame::new(&vars.tool, &vars.session, &vars.workspace, args),
            ctx: OnceCell::new(),
            sizes,
        }
    }

    /// Binds `call`, the call's effects.
    pub fn bind_call(&mut self, call: Value) {
        self.sizes.call = budget::Sizes::measure(&call);
        if let Some(ctx) = self.ctx.get_mut() {
            ctx.add_variable_from_value("call", call.clone());
        }
        self.frame.call = Some(call);
    }

    /// The `cel` crate's context for this call, built on first use.
    fn cel_ctx(&self) -> &Context<'r, 'static> {
        self.ctx.get_or_init(|| {
            let mut ctx = self.root.ctx.new_inner_scope();
            ctx.add_variable_from_value("lists", self.root.lists_value());
            ctx.add_variable_from_value("tool", self.frame.tool.clone());
            ctx.add_variable_from_value("args", self.frame.args_value());
            ctx.add_variable_from_value("session", self.frame.session.clone());
            ctx.add_variable_from_value(functions::WORKSPACE_VAR, self.frame.workspace.clone());
            if let Some(call) = &self.frame.call {
                ctx.add_variable_from_value("call", call.clone());
            }
            ctx
        })
    }

    /// Evaluates an expression with the `cel` crate alone: the reference.
    ///
    /// # Errors
    /// A run-time error.
    pub fn eval_reference(&self, expr: &Expression) -> Result<Value, String> {
        Value::resolve(expr.ast(), self.cel_ctx()).map_err(|e| describe_error(&e))
    }

    /// Evaluates an expression with the planned evaluator alone; `None` if it
    /// is not planned.
    pub fn eval_planned(&self, expr: &Expression) -> Option<Result<Value, plan::Fail>> {
        expr.plan.as_ref().ok().map(|p| p.eval(&self.frame))
    }

    /// The run-time cost bound: a call within the sizes the load-time estimate
    /// assumed needs nothing more; a larger one is estimated again with its real
    /// sizes, and an expression over budget is not evaluated (the rule fails closed).
    fn within_budget(&self, expr: &Expression) -> Result<(), String> {
        if self.sizes.within(&budget::Inputs::ASSUMED) {
            return Ok(());
        }
        let sizes = self.sizes.max(budget::Inputs::ASSUMED);
        let estimate = budget::estimate(expr.ast(), &sizes, &expr.list_sizes);
        if estimate.fits() {
            Ok(())
        } else {
            Err(format!(
                "not evaluated: for this call's values, {}",
                estimate.describe()
            ))
        }
    }

    /// Evaluates an expression to any value.
    ///
    /// # Errors
    /// A run-time error, or the evaluation budget exceeded.
    pub fn eval(&self, expr: &Expression) -> Result<Value, String> {
        self.within_budget(expr)?;
        match &expr.plan {
            Ok(p) if PLANNED.load(Ordering::Relaxed) => match p.eval(&self.frame) {
                Ok(v) => Ok(v),
                Err(plan::Fail::Budget(why)) => Err(why.to_string()),
                // Off the success path: the crate gives the error its words.
                Err(plan::Fail::Error | plan::Fail::Fallback) => self.eval_reference(expr),
            },
            _ => self.eval_reference(expr),
        }
    }

    /// Evaluates a condition; anything but `true`/`false` is an error.
    ///
    /// # Errors
    /// A run-time error, or a result that is not a bool.
    pub fn eval_bool(&self, expr: &Expression) -> Result<bool, String> {
        match self.eval(expr)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!(
                "the expression gave {}, not a bool",
                describe_value(&other)
            )),
        }
    }
}

fn describe_value(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Int(i) => format!("the int `{i}`"),
        Value::UInt(i) => format!("the uint `{i}`"),
        Value::Float(f) => format!("the double `{f}`"),
        Value::String(s) => format!("the string `{s}`"),
        Value::List(_) => "a list".into(),
        Value::Map(_) => "a map".into(),
        _ => "a value of another type".into(),
    }
}

/// A readable, lowercase message for a CEL run-time error.
#[must_use]
pub fn describe_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key `{k}`"),
        ExecutionError::FunctionError { function, message } => {
            format!("`{function}` failed: {message}")
        }
        other => {
            let s = other.to_string();
            let mut c = s.chars();
            match c.next() {
                Some(first) => first.to_lowercase().chain(c).collect(),
                None => s,
            }
        }
    }
}

fn lowercase_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn is_known_function(name: &str) -> bool {
    // Operators and internal helpers are spelled with punctuation: `_==_`, `@in`, `!_`.
    name.starts_with('_')
        || name.starts_with('@')
        || name.starts_with('!')
        || name.starts_with('-')
        || STANDARD_FUNCTIONS.contains(&name)
        || QUALIFIED_FUNCTIONS.contains(&name)
        || functions::FUNCTIONS.contains(&name)
}

/// The tree of `source` by the `cel` crate's Pratt parser, when the source is
/// written in the part of the syntax where it is known to build the same tree
/// as the ANTLR parser (tests/differential.rs searches for differences): no
/// unary minus, no escapes or raw, bytes or triple-quoted strings, no hex
/// numbers, no quoted identifiers, no reserved words. `None` otherwise, or
/// when the Pratt parser rejects it: the ANTLR parser decides.
#[doc(hidden)]
#[must_use]
pub fn parse_fast(source: &str) -> Option<IdedExpr> {
    use cel::parser::pratt_parser::{Lexer, TokenKind as T};
    let mut lexer = Lexer::new(source);
    let mut operand_before = false;
    loop {
        let tok = lexer.lex();
        let text = source.get(tok.start..tok.end)?;
        let safe = match tok.kind {
            T::TokEnd => break,
            T::TokWhitespace => continue,
            T::TokInt => text.bytes().all(|b| b.is_ascii_digit()),
            T::TokUint => {
                let digits = text.strip_suffix(['u', 'U'])?;
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            }
            T::TokString => {
                let quote = text.as_bytes().first().copied();
                matches!(quote, Some(b'"' | b'\''))
                    && text.len() >= 2
                    && !text.starts_with("\"\"\"")
                    && !text.starts_with("'''")
                    && simple_escapes(text)
            }
            T::TokIdent => !text.starts_with('`'),
            T::TokMinus => operand_before,
            T::TokNull
            | T::TokFalse
            | T::TokTrue
            | T::TokIn
            | T::TokLeftBracket
            | T::TokRightBracket
            | T::TokLeftBrace
            | T::TokRightBrace
            | T::TokLeftParen
            | T::TokRightParen
            | T::TokDot
            | T::TokComma
            | T::TokPlus
            | T::TokAsterisk
            | T::TokSlash
            | T::TokPercent
            | T::TokQuestion
            | T::TokColon
            | T::TokExclamation
            | T::TokEqualEqual
            | T::TokExclamationEqual
            | T::TokLess
            | T::TokLessEqual
            | T::TokGreater
            | T::TokGreaterEqual
            | T::TokLogicalAnd
            | T::TokLogicalOr => true,
            _ => false,
        };
        if !safe {
            return None;
        }
        operand_before = matches!(
            tok.kind,
            T::TokIdent
                | T::TokInt
                | T::TokUint
                | T::TokString
                | T::TokNull
                | T::TokFalse
                | T::TokTrue
                | T::TokRightParen
                | T::TokRightBracket
                | T::TokRightBrace
        );
    }
    let ast = PrattParser::new()
        .enable_optional_syntax(true)
        .parse(source)
        .ok()?;
    // The Pratt parser expands only the standard macros: a call another
    // macro of the environment expands is left to the ANTLR parser.
    (!calls_other_macro(&ast)).then_some(ast)
}

/// Whether a tree has a call that a macro of the environment beyond the
/// standard ones would expand ([`macros`], `math.greatest`, `sortBy`).
fn calls_other_macro(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Call(c) => {
            let name = c.func_name.as_str();
            (c.target.is_some()
                && (macros::expands(name, c.args.len())
                    || matches!(name, "greatest" | "least" | "sortBy")))
                || c.target.as_deref().is_some_and(calls_other_macro)
                || c.args.iter().any(calls_other_macro)
        }
        Expr::Select(s) => calls_other_macro(&s.operand),
        Expr::Comprehension(c) => {
            calls_other_macro(&c.iter_range)
                || calls_other_macro(&c.accu_init)
                || calls_other_macro(&c.loop_cond)
                || calls_other_macro(&c.loop_step)
                || calls_other_macro(&c.result)
        }
        Expr::List(l) => l.elements.iter().any(calls_other_macro),
        Expr::Map(m) => m.entries.iter().any(|x| match &x.expr {
            EntryExpr::MapEntry(m) => calls_other_macro(&m.key) || calls_other_macro(&m.value),
            EntryExpr::StructField(f) => calls_other_macro(&f.value),
        }),
        Expr::Struct(s) => s.entries.iter().any(|x| match &x.expr {
            EntryExpr::MapEntry(m) => calls_other_macro(&m.key) || calls_other_macro(&m.value),
            EntryExpr::StructField(f) => calls_other_macro(&f.value),
        }),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => false,
    }
}

/// Whether every escape in a string literal is one of `\\`, `\"`, `\'`, `\n`,
/// `\t`, `\r`: those the two parsers are known to read alike.
fn simple_escapes(text: &str) -> bool {
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'\\'
            && !matches!(
                bytes.next(),
                Some(b'\\' | b'"' | b'\'' | b'n' | b't' | b'r')
            )
        {
            return false;
        }
    }
    true
}

/// A type error placed in the source: an unknown field covers its name, an
/// error about a function call its name.
fn type_error(source: &str, info: Option<&SourceInfo>, e: types::TypeError) -> ExprError {
    let (start, end) = node_range(source, info, e.id);
    let (start, end) = if info.is_none() {
        (start, end)
    } else if let Some(field) = &e.field {
        // A select node sits at its `.`, an index key at its literal.
        if source.get(start..start + 1) == Some(".") {
            let from = start + 1;
            (
                from,
                (from + quoted_len(source, from, field)).min(source.len()),
            )
        } else {
            (start, end)
        }
    } else if let Some(name) = &e.function {
        // A call node sits at its `(`: the name is just before it.
        match start.checked_sub(name.len()) {
            Some(s) if source.get(s..start) == Some(name.as_str()) => (s, start),
            _ => (start, end),
        }
    } else {
        (start, end)
    };
    ExprError {
        kind: match e.kind {
            types::Kind::UnknownField => ExprErrorKind::UnknownField,
            types::Kind::Mismatch => ExprErrorKind::TypeMismatch,
        },
        message: e.message,
        start,
        end: end.max(start),
        help: e.help,
    }
}

/// The length in the source of a field name written at `at`: the name's,
/// or two more where it is quoted in backticks (`` m.`content-type` ``).
fn quoted_len(source: &str, at: usize, name: &str) -> usize {
    if source.get(at..at + 1) == Some("`") {
        name.len() + 2
    } else {
        name.len()
    }
}

/// The byte range of node `id` in `source`; the whole source without positions.
fn node_range(source: &str, info: Option<&SourceInfo>, id: u64) -> (usize, usize) {
    match info.and_then(|i| i.offset_for(id)) {
        Some((a, b)) => {
            let a = a as usize;
            let b = (b as usize).max(a);
            (
                a.min(source.len()),
                next_char_boundary(source, b.min(source.len())),
            )
        }
        None => (0, source.len()),
    }
}

/// Converts a (1-based line, 1-based char column) into a byte offset.
fn char_pos_to_byte(source: &str, line: usize, col: usize) -> usize {
    let mut offset = 0;
    for (i, l) in source.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return offset
                + l.char_indices()
                    .nth(col.saturating_sub(1))
                    .map_or(l.trim_end_matches('\n').len(), |(b, _)| b);
        }
        offset += l.len();
    }
    source.len()
}

fn next_char_boundary(source: &str, at: usize) -> usize {
    if at >= source.len() {
        return source.len();
    }
    let mut end = at + 1;
    while end < source.len() && !source.is_char_boundary(end) {
        end += 1;
    }
    end
}

#[derive(Default)]
struct Walk {
    idents: Vec<(String, u64)>,
    calls: Vec<(String, u64)>,
    /// (key, node id, id of the `args` operand)
    arg_reads: Vec<(String, u64, u64)>,
    guarded: BTreeSet<String>,
    globs: Vec<(String, u64)>,
    regexes: Vec<(String, u64)>,
    /// Every string literal: candidates for globs passed through variables
    /// (`["**/.env", "**/.ssh/**"].exists(p, glob(p, args.path))`).
    literals: Vec<String>,
    /// `lists.NAME` reads.
    list_reads: Vec<(String, u64, u64)>,
    /// Glob lists given to `path_matches` and `path_overlaps`.
    glob_lists: Vec<(GlobListArg, u64)>,
}

/// The glob list of a path function call, when known at load.
enum GlobListArg {
    Named(String),
    Literal(Vec<String>),
}

fn literal_str(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => Some(s.to_string()),
        _ => None,
    }
}

fn is_free_args(e: &IdedExpr, bound: &[String]) -> bool {
    matches!(&e.expr, Expr::Ident(n) if n == "args" && !bound.iter().any(|b| b == "args"))
}

impl Walk {
    fn expr(&mut self, e: &IdedExpr, bound: &mut Vec<String>) {
        match &e.expr {
            Expr::Unspecified => {}
            Expr::Literal(lit) => {
                if let LiteralValue::String(s) = lit {
                    self.literals.push(s.to_string());
                }
            }
            Expr::Ident(name) => {
                if !bound.iter().any(|b| b == name) {
                    self.idents.push((name.clone(), e.id));
                }
            }
            Expr::Select(sel) => {
                if matches!(&sel.operand.expr, Expr::Ident(n) if n == "lists" && !bound.iter().any(|b| b == "lists"))
                {
                    self.list_reads
                        .push((sel.field.clone(), e.id, sel.operand.id));
                }
                if is_free_args(&sel.operand, bound) {
                    if sel.test {
                        self.guarded.insert(sel.field.clone());
                    } else {
                        self.arg_reads
                            .push((sel.field.clone(), e.id, sel.operand.id));
                    }
                }
                self.expr(&sel.operand, bound);
            }
            Expr::Call(call) => {
                if let Some(q) = call
                    .target
                    .as_deref()
                    .and_then(|t| qualified_name(t, &call.func_name, bound))
                {
                    self.calls.push((q.to_string(), e.id));
                    for a in &call.args {
                        self.expr(a, bound);
                    }
                    return;
                }
                self.calls.push((call.func_name.clone(), e.id));
                let receiver_args: Vec<&IdedExpr> = call
                    .target
                    .as_deref()
                    .into_iter()
                    .chain(call.args.iter())
                    .collect();
                match call.func_name.as_str() {
                    "_[_]" | "_?._" | "_[?_]" => {
                        if let (Some(target), Some(key)) =
                            (receiver_args.first(), receiver_args.get(1))
                            && is_free_args(target, bound)
                            && let Some(k) = literal_str(key)
                        {
                            if call.func_name == "_[_]" {
                                self.arg_reads.push((k, key.id, target.id));
                            } else {
                                self.guarded.insert(k);
                            }
                        }
                    }
                    "glob" => {
                        if let Some(p) = receiver_args.first().and_then(|a| literal_str(a)) {
                            self.globs.push((p, receiver_args[0].id));
                        }
                    }
                    "path_matches" | "path_overlaps" => {
                        if let Some(arg) = receiver_args.get(1) {
                            match &arg.expr {
                                Expr::Select(sel) if matches!(&sel.operand.expr, Expr::Ident(n) if n == "lists") =>
                                {
                                    self.glob_lists
                                        .push((GlobListArg::Named(sel.field.clone()), arg.id));
                                }
                                Expr::List(list) => {
                                    let items: Option<Vec<String>> =
                                        list.elements.iter().map(literal_str).collect();
                                    if let Some(items) = items {
                                        self.glob_lists.push((GlobListArg::Literal(items), arg.id));
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    "matches" => {
                        if let Some(arg) = receiver_args.get(1)
                            && let Some(p) = literal_str(arg)
                        {
                            self.regexes.push((p, arg.id));
                        }
                    }
                    _ => {}
                }
                for a in receiver_args {
                    self.expr(a, bound);
                }
            }
            Expr::Comprehension(c) => {
                self.expr(&c.iter_range, bound);
                self.expr(&c.accu_init, bound);
                let depth = bound.len();
                bound.push(c.iter_var.clone());
                if let Some(v2) = &c.iter_var2 {
                    bound.push(v2.clone());
                }
                bound.push(c.accu_var.clone());
                self.expr(&c.loop_cond, bound);
                self.expr(&c.loop_step, bound);
                self.expr(&c.result, bound);
                bound.truncate(depth);
            }
            Expr::List(list) => {
                for el in &list.elements {
                    self.expr(el, bound);
                }
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    self.entry(&entry.expr, bound);
                }
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    self.entry(&entry.expr, bound);
                }
            }
        }
    }

    fn entry(&mut self, e: &EntryExpr, bound: &mut Vec<String>) {
        match e {
            EntryExpr::MapEntry(m) => {
                self.expr(&m.key, bound);
                self.expr(&m.value, bound);
            }
            EntryExpr::StructField(f) => self.expr(&f.value, bound),
        }
    }
}

#[cfg(test)]
mod tests;
