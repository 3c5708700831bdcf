//! The functions zero-policy adds to CEL: `glob`, `path_clean`, `path_under`,
//! `path_matches`, `path_overlaps`, `path_is_tree`, `url_host`, `ip_in`,
//! `shell_parses`, `shell_commands`, and a `matches` whose literal regexes are
//! compiled once at load.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use cel::extractors::This;
use cel::{Context, ExecutionError, FunctionContext, Value};
use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;

use crate::effects::globs::{GlobError, PathGlobs};
use crate::effects::literal as shell;
use crate::effects::{paths, urls};

/// Longest path `path_ancestors` accepts: its result grows with the square of the path.
pub const MAX_ANCESTOR_PATH_BYTES: usize = 4_096;
/// Most components of a path `path_ancestors` accepts.
pub const MAX_ANCESTOR_COMPONENTS: usize = 128;

/// The hidden variable holding `session.workspace`, for `path_under`.
pub(crate) const WORKSPACE_VAR: &str = "zp__workspace";

/// The names of the functions this module adds.
pub const FUNCTIONS: &[&str] = &[
    "glob",
    "path_matches",
    "path_overlaps",
    "path_is_tree",
    "path_is_pattern",
    "path_ancestors",
    "url_host",
    "ip_in",
    "path_clean",
    "path_under",
    "shell_parses",
    "shell_commands",
    "matches",
];

/// Globs and regexes compiled at load time, looked up by their source text.
///
/// Patterns that are not literals in an expression are compiled when called.
#[derive(Debug, Default)]
pub struct PatternCache {
    globs: HashMap<String, PathGlob>,
    regexes: HashMap<String, Regex>,
    glob_lists: HashMap<String, Arc<PathGlobs>>,
    /// `lists` as a CEL value, for the lists it was made from (by identity):
    /// made once for every expression of a load that reads `lists`.
    lists_value: OnceLock<(Lists, ::cel::Value)>,
}

/// The named lists of a load.
type Lists = Arc<BTreeMap<String, Vec<String>>>;

impl PatternCache {
    /// `lists` as a CEL value: made on the first call, then shared for those
    /// lists (a CEL map is reference-counted).
    pub(crate) fn lists_value(&self, lists: &Lists) -> Value {
        if let Some((of, value)) = self.lists_value.get()
            && Arc::ptr_eq(of, lists)
        {
            return value.clone();
        }
        let value = lists_to_cel(lists);
        let _ = self.lists_value.set((Arc::clone(lists), value.clone()));
        value
    }
}

/// Named lists as a CEL map of lists of strings, built directly (through
/// JSON it cost twice as much).
fn lists_to_cel(lists: &BTreeMap<String, Vec<String>>) -> Value {
    let map: HashMap<::cel::objects::Key, Value> = lists
        .iter()
        .map(|(name, items)| {
            let items: Vec<Value> = items
                .iter()
                .map(|i| Value::String(Arc::new(i.clone())))
                .collect();
            (
                ::cel::objects::Key::String(Arc::new(name.clone())),
                Value::List(Arc::new(items)),
            )
        })
        .collect();
    Value::from(map)
}

/// Most glob lists compiled at run time and kept (lists not known at load).
const RUNTIME_GLOB_LISTS: usize = 64;

thread_local! {
    static RUNTIME_LISTS: std::cell::RefCell<Vec<(String, Arc<PathGlobs>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn glob_list_key(items: &[String], case_insensitive: bool) -> String {
    let mut key = String::from(if case_insensitive { "i\n" } else { "s\n" });
    for i in items {
        key.push_str(i);
        key.push('\n');
    }
    key
}

impl PatternCache {
    /// Compiles a glob pattern for paths and keeps it.
    ///
    /// # Errors
    /// The pattern does not compile.
    pub fn add_glob(&mut self, pattern: &str) -> Result<(), globset::Error> {
        if !self.globs.contains_key(pattern) {
            let m = compile_path_glob(pattern)?;
            self.globs.insert(pattern.to_string(), m);
        }
        Ok(())
    }

    /// Compiles a list of path globs (for `path_matches`) and keeps it.
    ///
    /// # Errors
    /// A glob that does not compile.
    pub fn add_glob_list(
        &mut self,
        items: &[String],
        case_insensitive: bool,
    ) -> Result<(), GlobError> {
        let key = glob_list_key(items, case_insensitive);
        if let std::collections::hash_map::Entry::Vacant(e) = self.glob_lists.entry(key) {
            e.insert(Arc::new(PathGlobs::new(items, case_insensitive)?));
        }
        Ok(())
    }

    /// A glob compiled at load.
    pub(crate) fn glob(&self, pattern: &str) -> Option<&PathGlob> {
        self.globs.get(pattern)
    }

    /// A regex compiled at load.
    pub(crate) fn regex(&self, pattern: &str) -> Option<&Regex> {
        self.regexes.get(pattern)
    }

    /// The compiled glob list of these items for a plan: from the load, or
    /// compiled now; `None` if a glob does not compile.
    pub(crate) fn glob_list_for_plan(
        &self,
        items: &[String],
        case_insensitive: bool,
    ) -> Option<Arc<PathGlobs>> {
        let key = glob_list_key(items, case_insensitive);
        if let Some(hit) = self.glob_lists.get(&key) {
            return Some(Arc::clone(hit));
        }
        PathGlobs::new(items, case_insensitive).ok().map(Arc::new)
    }

    /// The compiled glob list of these items: from the load, or compiled now.
    fn glob_list(
        &self,
        items: &[String],
        case_insensitive: bool,
    ) -> Result<Arc<PathGlobs>, GlobError> {
        let key = glob_list_key(items, case_insensitive);
        if let Some(hit) = self.glob_lists.get(&key) {
            return Ok(Arc::clone(hit));
        }
        runtime_glob_list_keyed(key, items, case_insensitive)
    }

    /// Compiles a regex and keeps it.
    ///
    /// # Errors
    /// The pattern does not compile.
    pub fn add_regex(&mut self, pattern: &str) -> Result<(), regex::Error> {
        if !self.regexes.contains_key(pattern) {
            let r = Regex::new(pattern)?;
            self.regexes.insert(pattern.to_string(), r);
        }
        Ok(())
    }
}

/// A glob list not known at load, compiled on first use and kept per thread.
///
/// # Errors
/// A glob that does not compile.
pub(crate) fn runtime_glob_list(
    items: &[String],
    case_insensitive: bool,
) -> Result<Arc<PathGlobs>, GlobError> {
    runtime_glob_list_keyed(
        glob_list_key(items, case_insensitive),
        items,
        case_insensitive,
    )
}

fn runtime_glob_list_keyed(
    key: String,
    items: &[String],
    case_insensitive: bool,
) -> Result<Arc<PathGlobs>, GlobError> {
    if let Some(hit) = RUNTIME_LISTS.with(|c| {
        c.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| Arc::clone(v))
    }) {
        return Ok(hit);
    }
    let set = Arc::new(PathGlobs::new(items, case_insensitive)?);
    RUNTIME_LISTS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= RUNTIME_GLOB_LISTS {
            c.remove(0);
        }
        c.push((key, Arc::clone(&set)));
    });
    Ok(set)
}

/// Compiles a glob for paths: `*` stays inside one segment, `**` crosses them.
///
/// # Errors
/// The pattern does not compile.
pub fn compile_path_glob(pattern: &str) -> Result<PathGlob, globset::Error> {
    Ok(PathGlob {
        glob: GlobBuilder::new(pattern).literal_separator(true).build()?,
        matcher: Arc::new(OnceLock::new()),
    })
}

/// One path glob of `glob(pattern, path)`: parsed at load, its matcher built
/// when first matched (a policy of many rules builds only those a call asks).
#[derive(Debug, Clone)]
pub struct PathGlob {
    glob: globset::Glob,
    matcher: Arc<OnceLock<GlobMatcher>>,
}

impl PathGlob {
    /// The glob as parsed, with the options it was compiled with.
    pub(crate) fn glob(&self) -> &globset::Glob {
        &self.glob
    }

    /// Whether the path matches.
    #[must_use]
    pub fn is_match(&self, path: &str) -> bool {
        self.matcher
            .get_or_init(|| self.glob.compile_matcher())
            .is_match(path)
    }
}

/// Lexical path normalisation: `.` and `..` folded, repeated `/` merged, no
/// file system access. `..` above the root of an absolute path stays at the root.
#[must_use]
pub fn path_clean(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// `path` lies inside `dir` (or is `dir`), both cleaned; relative paths are
/// taken from `workspace`.
#[must_use]
pub fn path_under(path: &str, dir: &str, workspace: &str) -> bool {
    let abs = |p: &str| {
        if p.starts_with('/') {
            path_clean(p)
        } else {
            path_clean(&format!("{workspace}/{p}"))
        }
    };
    let (p, d) = (abs(path), abs(dir));
    if d == "/" {
        return p.starts_with('/');
    }
    p == d || p.strip_prefix(&d).is_some_and(|rest| rest.starts_with('/'))
}

/// Scripts parsed during the current call on this thread: every shell rule of a call
/// reads the same script, so it is parsed once per call rather than once per rule.
/// [`begin_call`] empties it, so nothing is remembered from one call to the next.
const SHELL_MEMO: usize = 8;

type ShellResult = Result<Value, shell::ShellError>;

thread_local! {
    static SHELL_CACHE: std::cell::RefCell<Vec<(Arc<String>, ShellResult)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Forgets the scripts parsed for the previous call on this thread.
pub fn begin_call() {
    SHELL_CACHE.with(|c| c.borrow_mut().clear());
}

/// `shell_commands` as a CEL list, memoised per thread (a pure function of the script).
pub(crate) fn parsed_shell(script: &Arc<String>) -> ShellResult {
    if let Some(hit) = SHELL_CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(s, _)| Arc::ptr_eq(s, script) || s.as_str() == script.as_str())
            .map(|(_, r)| r.clone())
    }) {
        return hit;
    }
    let result = shell::shell_commands(script).map(|commands| {
        Value::List(Arc::new(
            commands
                .into_iter()
                .map(|argv| {
                    Value::List(Arc::new(
                        argv.into_iter()
                            .map(|w| Value::String(Arc::new(w)))
                            .collect(),
                    ))
                })
                .collect(),
        ))
    });
    SHELL_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= SHELL_MEMO {
            drop(c.remove(0));
        }
        c.push((Arc::clone(script), result.clone()));
    });
    result
}

fn workspace_of(ftx: &FunctionContext, name: &str) -> Result<Arc<String>, ExecutionError> {
    match ftx.ptx.get_variable(WORKSPACE_VAR) {
        Some(v) => match Value::try_from(v.as_ref()) {
            Ok(Value::String(s)) => Ok(s),
            _ => Err(fn_error(name, "session.workspace is not a string")),
        },
        None => Err(fn_error(name, "session.workspace is not set")),
    }
}

fn strings(name: &str, list: &[Value]) -> Result<Vec<String>, ExecutionError> {
    list.iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.to_string()),
            _ => Err(fn_error(
                name,
                "the list holds a value that is not a string",
            )),
        })
        .collect()
}

fn fn_error(name: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(name, message)
}

/// The `[index, element]` pairs of a list, or the `[key, value]` pairs of a
/// map (in its iteration order): what a two-variable comprehension ranges
/// over ([`super::macros`]).
fn pairs(range: Value) -> Result<Value, ExecutionError> {
    let pair = |a: Value, b: Value| Value::List(Arc::new(vec![a, b]));
    let items = match range {
        Value::List(l) => l
            .iter()
            .enumerate()
            .map(|(i, v)| pair(Value::Int(i as i64), v.clone()))
            .collect(),
        Value::Map(m) => m
            .map
            .iter()
            .map(|(k, v)| pair(Value::from(k.clone()), v.clone()))
            .collect(),
        other => {
            return Err(ExecutionError::function_error(
                "comprehension",
                format!("ranges over a list or a map, not {}", other.type_of()),
            ));
        }
    };
    Ok(Value::List(Arc::new(items)))
}

/// `x.getMilliseconds()`: the milliseconds of the last second of a
/// timestamp (0 to 999) or a duration (negative for a negative duration).
fn milliseconds(x: Value) -> Result<Value, ExecutionError> {
    match x {
        Value::Timestamp(t) => Ok(Value::Int(i64::from(t.timestamp_subsec_millis()))),
        Value::Duration(d) => Ok(Value::Int(d.num_milliseconds() % 1000)),
        other => Err(ExecutionError::function_error(
            "getMilliseconds",
            format!("takes a timestamp or a duration, not {}", other.type_of()),
        )),
    }
}

/// The map of a list of `[key, value]` pairs (`transformMap`); a key given
/// twice keeps its last value, as each pair comes from a distinct key.
fn to_map(pairs: Arc<Vec<Value>>) -> Result<Value, ExecutionError> {
    let mut map = std::collections::HashMap::with_capacity(pairs.len());
    for p in pairs.iter() {
        let Value::List(kv) = p else {
            return Err(ExecutionError::function_error(
                "transformMap",
                "a pair is not a list",
            ));
        };
        let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
            return Err(ExecutionError::function_error(
                "transformMap",
                "a pair is short",
            ));
        };
        let key = match k {
            Value::Int(i) => ::cel::objects::Key::Int(*i),
            Value::UInt(u) => ::cel::objects::Key::Uint(*u),
            Value::Bool(b) => ::cel::objects::Key::Bool(*b),
            Value::String(s) => ::cel::objects::Key::String(Arc::clone(s)),
            _ => {
                return Err(ExecutionError::function_error(
                    "transformMap",
                    "a key is not a map key",
                ));
            }
        };
        map.insert(key, v.clone());
    }
    Ok(Value::Map(::cel::objects::Map { map: Arc::new(map) }))
}

/// Registers the functions on a root context.
///
/// # Errors
/// A function name clashes with the standard library (a bug).
pub fn register(
    ctx: &mut Context<'_, '_>,
    cache: &Arc<PatternCache>,
    case_insensitive: bool,
) -> Result<(), String> {
    ctx.add_function(super::macros::PAIRS, pairs)
        .map_err(|e| format!("{e:?}"))?;
    ctx.add_function(super::macros::TO_MAP, to_map)
        .map_err(|e| format!("{e:?}"))?;
    ctx.add_function(super::macros::MILLIS, milliseconds)
        .map_err(|e| format!("{e:?}"))?;
    for name in ["path_matches", "path_overlaps"] {
        let c = Arc::clone(cache);
        ctx.add_function(
            name,
            move |path: Arc<String>, globs: Arc<Vec<Value>>| -> Result<Value, ExecutionError> {
                let items = strings(name, &globs)?;
                let set = c
                    .glob_list(&items, case_insensitive)
                    .map_err(|e| fn_error(name, e))?;
                let hit = if name == "path_overlaps" {
                    set.is_match(&path).map_err(|e| fn_error(name, e))?
                        || set.overlaps(&path).map_err(|e| fn_error(name, e))?
                } else {
                    set.matches(&path).map_err(|e| fn_error(name, e))?
                };
                Ok(Value::Bool(hit))
            },
        )
        .map_err(|e| format!("{e:?}"))?;
    }
    ctx.add_function(
        "path_is_tree",
        |path: Arc<String>| -> Result<Value, ExecutionError> {
            Ok(Value::Bool(paths::is_tree(&path)))
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    ctx.add_function(
        "path_is_pattern",
        |path: Arc<String>| -> Result<Value, ExecutionError> {
            Ok(Value::Bool(paths::is_pattern(&path)))
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    ctx.add_function(
        "path_ancestors",
        |ftx: &FunctionContext, path: Arc<String>| -> Result<Value, ExecutionError> {
            let workspace = workspace_of(ftx, "path_ancestors")?;
            let abs = if path.starts_with('/') {
                paths::clean(&path)
            } else {
                paths::clean(&format!("{workspace}/{path}"))
            };
            // The ancestors of a path hold about its length squared in bytes: a
            // longer path than any file system allows fails closed instead.
            if abs.len() > MAX_ANCESTOR_PATH_BYTES
                || abs.matches('/').count() > MAX_ANCESTOR_COMPONENTS
            {
                return Err(fn_error(
                    "path_ancestors",
                    format!(
                        "the path is {} bytes and {} components long; at most {} bytes and {} components are accepted",
                        abs.len(),
                        abs.matches('/').count(),
                        MAX_ANCESTOR_PATH_BYTES,
                        MAX_ANCESTOR_COMPONENTS
                    ),
                ));
            }
            let mut out = vec![Value::String(Arc::new(paths::escape(&abs)))];
            out.extend(
                paths::ancestors(&abs)
                    .into_iter()
                    .map(|a| Value::String(Arc::new(paths::escape(&a)))),
            );
            Ok(Value::List(Arc::new(out)))
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    ctx.add_function(
        "url_host",
        |url: Arc<String>| -> Result<Value, ExecutionError> {
            Ok(Value::String(Arc::new(
                urls::url_host(&url).unwrap_or_default(),
            )))
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    ctx.add_function(
        "ip_in",
        |host: Arc<String>, cidrs: Arc<Vec<Value>>| -> Result<Value, ExecutionError> {
            let items = strings("ip_in", &cidrs)?;
            urls::ip_in(&host, &items)
                .map(Value::Bool)
                .map_err(|e| fn_error("ip_in", e))
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    let c = Arc::clone(cache);
    ctx.add_function(
        "glob",
        move |pattern: Arc<String>, path: Arc<String>| -> Result<Value, ExecutionError> {
            if let Some(m) = c.globs.get(pattern.as_str()) {
                return Ok(Value::Bool(m.is_match(path.as_str())));
            }
            let m = compile_path_glob(&pattern).map_err(|e| fn_error("glob", e))?;
            Ok(Value::Bool(m.is_match(path.as_str())))
        },
    )
    .map_err(|e| format!("{e:?}"))?;

    let c = Arc::clone(cache);
    ctx.add_function(
        "matches",
        move |This(this): This<Arc<String>>, re: Arc<String>| -> Result<Value, ExecutionError> {
            if let Some(r) = c.regexes.get(re.as_str()) {
                return Ok(Value::Bool(r.is_match(this.as_str())));
            }
            let r = Regex::new(&re).map_err(|e| fn_error("matches", e))?;
            Ok(Value::Bool(r.is_match(this.as_str())))
        },
    )
    .map_err(|e| format!("{e:?}"))?;

    ctx.add_function(
        "path_clean",
        |path: Arc<String>| -> Result<Value, ExecutionError> {
            Ok(Value::String(Arc::new(path_clean(&path))))
        },
    )
    .map_err(|e| format!("{e:?}"))?;

    ctx.add_function(
        "path_under",
        |ftx: &FunctionContext,
         path: Arc<String>,
         dir: Arc<String>|
         -> Result<Value, ExecutionError> {
            let workspace = workspace_of(ftx, "path_under")?;
            Ok(Value::Bool(path_under(&path, &dir, &workspace)))
        },
    )
    .map_err(|e| format!("{e:?}"))?;

    ctx.add_function(
        "shell_parses",
        |script: Arc<String>| -> Result<Value, ExecutionError> {
            Ok(Value::Bool(parsed_shell(&script).is_ok()))
        },
    )
    .map_err(|e| format!("{e:?}"))?;

    ctx.add_function(
        "shell_commands",
        |script: Arc<String>| -> Result<Value, ExecutionError> {
            parsed_shell(&script).map_err(|e| fn_error("shell_commands", e))
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_clean_table() {
        let cases = [
            ("/a/b/../c", "/a/c"),
            ("/a/./b//c/", "/a/b/c"),
            ("/../..", "/"),
            ("/", "/"),
            ("a/../..", ".."),
            ("", "."),
            (".", "."),
            ("./x", "x"),
            ("a/b/../../..", ".."),
            ("/repo/../etc/passwd", "/etc/passwd"),
        ];
        for (input, want) in cases {
            assert_eq!(path_clean(input), want, "path_clean({input:?})");
        }
    }

    #[test]
    fn path_under_table() {
        let ws = "/home/dev/project";
        let cases = [
            ("src/main.rs", ws, true),
            ("/home/dev/project", ws, true),
            ("/home/dev/project/../other", ws, false),
            ("../other/file", ws, false),
            ("/home/dev/projectile/x", ws, false),
            ("/etc/passwd", "/", true),
            ("./a/./b", ".", true),
            ("/tmp/x", "/tmp", true),
            ("/tmp", "/tmp/x", false),
        ];
        for (path, dir, want) in cases {
            assert_eq!(
                path_under(path, dir, ws),
                want,
                "path_under({path:?}, {dir:?})"
            );
        }
    }

    #[test]
    fn path_glob_keeps_star_in_segment() -> Result<(), globset::Error> {
        let g = compile_path_glob("/repo/*.rs")?;
        assert!(g.is_match("/repo/main.rs"));
        assert!(!g.is_match("/repo/src/main.rs"));
        let g = compile_path_glob("**/.env*")?;
        assert!(g.is_match("/repo/.env"));
        assert!(g.is_match("/repo/a/b/.env.local"));
        assert!(g.is_match(".env"));
        assert!(!g.is_match("/repo/env"));
        Ok(())
    }
}
