//! The command catalog: what each program does with its options and operands
//! (`docs/catalog.md`), compiled from `commands:` entries, and the parser that
//! reads a command's words the way the program reads them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::word::Word;
use crate::model::{ParseStyle, RawCommand, RawOptionSpec, StdinKind};

/// What an option value or an operand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// No effect: a number, a name, a format.
    Value,
    /// No effect: a regex or a glob that is not a path.
    Pattern,
    /// A path read.
    Read,
    /// A folder read as a whole tree, contents included (`rg PAT DIR`): the
    /// working folder when none is given.
    Tree,
    /// A path whose names, sizes and times are read, not its contents (`ls`,
    /// `stat`): the working folder when none is given.
    List,
    /// A folder listed as a whole tree (`du`, `tree`, `find`): the working
    /// folder when none is given.
    ListTree,
    /// A path created or changed.
    Write,
    /// Where `cp`, `mv`, `ln` and `install` put their sources: written, and
    /// since it may be a folder, so is each source's name under it.
    Dest,
    /// A path removed (also a write).
    Delete,
    /// The folder the command runs in.
    Cwd,
    /// The folder the command's operands resolve from, not its option values
    /// (`tar -C DIR`: the archive named by `-f` stays where the call was).
    OperandsCwd,
    /// A URL fetched or sent to.
    Fetch,
    /// A host reached over the network.
    Host,
    /// Where a connection goes instead of the host a URL names (`curl
    /// --resolve`, `--connect-to`, `--proxy`, `psql -h`, `DOCKER_HOST`).
    Connect,
    /// git's `REV:path`: a read of `path`.
    RevPath,
    /// `NAME=VALUE` words.
    Assignments,
    /// The rest of the words are a command it runs.
    Command,
    /// A shell script it runs.
    Script,
    /// Code no rule can see.
    Code,
    /// SQL text it runs.
    Sql,
    /// A sed script.
    Sed,
    /// An awk program.
    Awk,
    /// A file (`-`: standard input) naming the files the program reads, which
    /// are not known here (`sort --files0-from=F`, `tar -T F`).
    FileList,
}

impl Kind {
    /// Every kind by its name in the catalog.
    pub const NAMES: &[(&str, Kind)] = &[
        ("value", Kind::Value),
        ("pattern", Kind::Pattern),
        ("read", Kind::Read),
        ("tree", Kind::Tree),
        ("list", Kind::List),
        ("list_tree", Kind::ListTree),
        ("write", Kind::Write),
        ("dest", Kind::Dest),
        ("delete", Kind::Delete),
        ("cwd", Kind::Cwd),
        ("operands_cwd", Kind::OperandsCwd),
        ("fetch", Kind::Fetch),
        ("host", Kind::Host),
        ("connect", Kind::Connect),
        ("rev_path", Kind::RevPath),
        ("assignments", Kind::Assignments),
        ("command", Kind::Command),
        ("script", Kind::Script),
        ("code", Kind::Code),
        ("sql", Kind::Sql),
        ("sed", Kind::Sed),
        ("awk", Kind::Awk),
        ("file_list", Kind::FileList),
    ];

    /// The kind of a name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
    }

    /// Kinds that take every word after them.
    #[must_use]
    pub fn takes_rest(self) -> bool {
        matches!(self, Kind::Command | Kind::Script)
    }
}

/// How many operands a slot takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Exactly one.
    One,
    /// Zero or one (`kind?`).
    Optional,
    /// Zero or more (`kind...`).
    Many,
}

/// One entry of an operand layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The kind.
    pub kind: Kind,
    /// How many.
    pub repeat: Repeat,
}

/// One option of a specification.
#[derive(Debug, Clone, Default)]
pub struct OptSpec {
    /// The name shown in `c.options`: the longest long spelling, else the first.
    pub name: String,
    /// The kind of its value, if it takes one.
    pub value: Option<Kind>,
    /// The value is optional (`--opt=value`, `-ovalue` only).
    pub optional: bool,
    /// Tags added to the command.
    pub tags: Vec<String>,
    /// Operand paths are whole trees.
    pub recursive: bool,
    /// Replaces the operand layout.
    pub operands: Option<Vec<Slot>>,
    /// The command is not read-only with this option.
    pub not_read_only: bool,
    /// The option runs code no rule can see.
    pub runs_code: bool,
    /// The program edits its `read` operands in place; a value is a backup suffix.
    pub in_place: bool,
    /// For a `command` value: the words that end it.
    pub end: Vec<String>,
}

/// A conditional change of a specification: when every condition holds, the
/// changes apply.
#[derive(Debug, Clone, Default)]
pub struct When {
    /// Groups of options (indices into [`Spec::options`]): one of each is given.
    pub options: Vec<Vec<usize>>,
    /// Options none of which is given.
    pub unless: Vec<usize>,
    /// A glob some operand matches.
    pub operand: Option<String>,
    /// At least this many operands.
    pub operands: usize,
    /// The command is (`true`) or is not (`false`) read-only.
    pub read_only: Option<bool>,
    /// Tags added.
    pub tags: Vec<String>,
    /// Tags removed.
    pub untags: Vec<String>,
    /// The command runs code no rule can see.
    pub runs_code: bool,
}

impl When {
    /// Whether the conditions hold for a command given `options` (indices)
    /// and `operands`.
    #[must_use]
    pub fn holds(&self, options: &[usize], operands: &[Word]) -> bool {
        self.options
            .iter()
            .all(|group| group.iter().any(|i| options.contains(i)))
            && !self.unless.iter().any(|i| options.contains(i))
            && operands.len() >= self.operands
            && self.operand.as_ref().is_none_or(|glob| {
                operands.iter().any(|w| match w.literal() {
                    Some(text) => glob_matches(glob, &text),
                    None => true,
                })
            })
    }
}

/// Whether `text` matches the shell glob `glob` (`*`, `?`, `[…]` with ranges
/// and `!` or `^`), the whole text.
#[must_use]
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`.
    let (mut gi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match g.get(gi) {
            Some('*') => {
                star = Some((gi, ti));
                gi += 1;
                continue;
            }
            Some('?') => Some(gi + 1),
            Some('[') => class_at(&g, gi).and_then(|(end, set)| set(t[ti]).then_some(end)),
            Some(c) if *c == t[ti] => Some(gi + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                gi = next;
                ti += 1;
            }
            (None, Some((sg, st))) => {
                gi = sg + 1;
                ti = st + 1;
                star = Some((sg, st + 1));
            }
            (None, None) => return false,
        }
    }
    g[gi.min(g.len())..].iter().all(|c| *c == '*')
}

/// The character class starting at `g[at]` (`[`): the index after it, and
/// whether a character is in it.
fn class_at(g: &[char], at: usize) -> Option<(usize, impl Fn(char) -> bool)> {
    let mut i = at + 1;
    let negate = matches!(g.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    let mut first = true;
    while let Some(&c) = g.get(i) {
        if c == ']' && !first {
            return Some((i + 1, move |x: char| {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&x)) != negate
            }));
        }
        first = false;
        if g.get(i + 1) == Some(&'-') && g.get(i + 2).is_some_and(|e| *e != ']') {
            ranges.push((c, g[i + 2]));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    None
}

/// A compiled specification of one program (or subcommand).
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The program's basename (or the subcommand's name).
    pub name: String,
    /// One line.
    pub description: Option<String>,
    /// The command changes nothing.
    pub read_only: bool,
    /// Tags added when it runs.
    pub tags: Vec<String>,
    /// How options are spelled.
    pub parse: ParseStyle,
    /// Unambiguous prefixes of long options are accepted.
    pub abbreviations: bool,
    /// Options may follow operands.
    pub permute: bool,
    /// Subcommands match case-insensitively.
    pub ignore_case: bool,
    /// An operand that names no subcommand is an operand (`npm run SCRIPT`).
    pub subcommand_optional: bool,
    /// A path operand `HOST:PATH` is a connection to HOST (`scp`, `rsync`).
    pub remote_operands: bool,
    /// The first word may be a bundle of short options without a dash.
    pub traditional: bool,
    /// The options.
    pub options: Vec<OptSpec>,
    short: HashMap<char, usize>,
    long: BTreeMap<String, usize>,
    num: Option<usize>,
    /// The operand layout.
    pub operands: Vec<Slot>,
    /// Runs its standard input as code when given no code.
    pub stdin_code: bool,
    /// Runs its standard input as a shell script when given none.
    pub stdin_script: bool,
    /// Runs its standard input as SQL when given none.
    pub stdin_sql: bool,
    /// Variables it reads, with the kind of their value.
    pub env: Vec<(String, Kind)>,
    /// Conditional changes.
    pub when: Vec<When>,
    /// Command lines and what the entry says they do.
    pub examples: Vec<crate::model::RawCommandExample>,
    /// The program's own files (`state:`): globs relative to the working
    /// folder, starting `~/`, or absolute; not effects.
    pub state: Vec<String>,
    /// Subcommands by name.
    pub subcommands: BTreeMap<String, Arc<Spec>>,
}

/// Looks up a specification that is not held in the catalog itself (the
/// shipped catalog, compiled one program at a time on first use).
pub type Fallback = fn(&str) -> Option<Arc<Spec>>;

/// The catalog: specifications by program basename.
#[derive(Clone, Default)]
pub struct Catalog {
    specs: HashMap<String, Arc<Spec>>,
    fallback: Option<Fallback>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("specs", &self.specs.len())
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

impl Catalog {
    /// `additions` laid over the catalog `fallback` gives.
    #[must_use]
    pub fn with_additions(fallback: Fallback, additions: &[(Arc<Spec>, Vec<String>)]) -> Catalog {
        let mut c = Catalog::with_fallback(fallback);
        for (spec, aliases) in additions {
            c.insert(Arc::clone(spec), aliases);
        }
        c
    }

    /// A catalog that asks `fallback` for the programs it does not hold.
    #[must_use]
    pub fn with_fallback(fallback: Fallback) -> Catalog {
        Catalog {
            specs: HashMap::new(),
            fallback: Some(fallback),
        }
    }

    /// The specification of a program, by basename.
    #[must_use]
    pub fn get(&self, program: &str) -> Option<Arc<Spec>> {
        match self.specs.get(program) {
            Some(s) => Some(Arc::clone(s)),
            None => self.fallback.and_then(|f| f(program)),
        }
    }

    /// Adds a specification under its name and aliases; true when one was replaced.
    pub fn insert(&mut self, spec: Arc<Spec>, aliases: &[String]) -> bool {
        let mut replaced = false;
        for name in std::iter::once(&spec.name).chain(aliases) {
            replaced |= self.specs.insert(name.clone(), Arc::clone(&spec)).is_some();
        }
        replaced
    }

    /// How many program names it knows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether it knows none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Every known program name, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.specs.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}

fn parse_layout(items: &[String], errors: &mut Vec<String>) -> Vec<Slot> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let (name, repeat) = if let Some(n) = item.strip_suffix("...") {
            (n, Repeat::Many)
        } else if let Some(n) = item.strip_suffix('?') {
            (n, Repeat::Optional)
        } else {
            (item.as_str(), Repeat::One)
        };
        match Kind::from_name(name) {
            Some(kind) => {
                if kind.takes_rest() && i + 1 != items.len() {
                    errors.push(format!(
                        "operand kind `{name}` takes the rest of the words, so it must come last"
                    ));
                }
                out.push(Slot { kind, repeat });
            }
            None => errors.push(format!("unknown operand kind `{name}`")),
        }
    }
    if out.iter().filter(|s| s.repeat == Repeat::Many).count() > 1 {
        errors.push("an operand layout may have only one `...` kind".to_string());
    }
    out
}

fn option_spec(raw: &RawOptionSpec, errors: &mut Vec<String>, key: &str) -> OptSpec {
    let value = match raw.value.as_deref() {
        None => None,
        Some(v) => match Kind::from_name(v) {
            Some(k) => Some(k),
            None => {
                errors.push(format!("option `{key}`: unknown kind `{v}`"));
                None
            }
        },
    };
    if !raw.end.is_empty() && value != Some(Kind::Command) {
        errors.push(format!(
            "option `{key}`: `end` is only for a `command` value"
        ));
    }
    if raw.optional == Some(true) && value.is_none() {
        errors.push(format!("option `{key}`: `optional` needs a `value`"));
    }
    OptSpec {
        name: String::new(),
        value,
        optional: raw.optional.unwrap_or(false),
        tags: raw.tags.clone(),
        recursive: raw.recursive.unwrap_or(false),
        operands: raw.operands.as_ref().map(|o| parse_layout(o, errors)),
        not_read_only: raw.read_only == Some(false),
        runs_code: raw.runs_code.unwrap_or(false),
        in_place: raw.in_place.unwrap_or(false),
        end: raw.end.clone(),
    }
}

/// Compiles a specification; errors are messages (the loader places them).
///
/// # Errors
/// Every problem found in the entry.
pub fn compile(raw: &RawCommand, name: &str) -> Result<Spec, Vec<String>> {
    let mut errors = Vec::new();
    let spec = compile_inner(raw, name, &mut errors, 0);
    if errors.is_empty() {
        Ok(spec)
    } else {
        Err(errors)
    }
}

fn compile_inner(raw: &RawCommand, name: &str, errors: &mut Vec<String>, depth: usize) -> Spec {
    let parse = raw.parse.unwrap_or_default();
    let operands = match &raw.operands {
        Some(o) => parse_layout(o, errors),
        None => vec![Slot {
            kind: Kind::Value,
            repeat: Repeat::Many,
        }],
    };
    let mut spec = Spec {
        name: name.to_string(),
        description: raw.description.clone(),
        read_only: raw.read_only.unwrap_or(false),
        tags: raw.tags.clone(),
        parse,
        abbreviations: raw.abbreviations.unwrap_or(parse == ParseStyle::Gnu),
        permute: raw.permute.unwrap_or_else(|| {
            raw.subcommands.is_empty()
                && !operands
                    .iter()
                    .any(|s| s.kind.takes_rest() || s.kind == Kind::Code)
        }),
        ignore_case: raw.ignore_case.unwrap_or(false),
        subcommand_optional: raw.subcommand_optional.unwrap_or(false),
        remote_operands: raw.remote_operands.unwrap_or(false),
        traditional: raw.traditional.unwrap_or(false),
        stdin_code: raw.stdin == Some(StdinKind::Code),
        stdin_script: raw.stdin == Some(StdinKind::Script),
        stdin_sql: raw.stdin == Some(StdinKind::Sql),
        examples: raw.examples.clone(),
        state: raw.state.clone(),
        operands,
        ..Spec::default()
    };
    for (key, value) in &raw.options {
        let mut opt = option_spec(&value.0, errors, key);
        let spellings: Vec<&str> = key
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if spellings.is_empty() {
            errors.push("an option with no spelling".to_string());
            continue;
        }
        opt.name = spellings
            .iter()
            .filter(|s| s.starts_with("--"))
            .max_by_key(|s| s.len())
            .unwrap_or(&spellings[0])
            .to_string();
        let index = spec.options.len();
        for s in spellings {
            let clash = |errors: &mut Vec<String>| {
                errors.push(format!("option `{s}` is listed twice"));
            };
            if s == "-NUM" {
                if spec.num.replace(index).is_some() {
                    clash(errors);
                }
            } else if parse == ParseStyle::Gnu {
                if let Some(long) = s.strip_prefix("--") {
                    if long.is_empty() || long.contains('=') {
                        errors.push(format!("`{s}` is not an option spelling"));
                    } else if spec.long.insert(long.to_string(), index).is_some() {
                        clash(errors);
                    }
                } else if let Some(short) = s.strip_prefix('-') {
                    let mut chars = short.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => {
                            if spec.short.insert(c, index).is_some() {
                                clash(errors);
                            }
                        }
                        _ => errors.push(format!(
                            "`{s}`: a short option is one character after `-` (write long options with `--`, or use `parse: single-dash`)"
                        )),
                    }
                } else {
                    errors.push(format!(
                        "`{s}` is not an option spelling (options start with `-`)"
                    ));
                }
            } else {
                // single-dash: `-name`, `--name`, or bare words such as `!` and `(` for find.
                let bare = s.trim_start_matches('-');
                let bare = if bare.is_empty() { s } else { bare };
                if spec.long.insert(bare.to_string(), index).is_some() {
                    clash(errors);
                }
            }
        }
        spec.options.push(opt);
    }
    for (var, kind) in &raw.env {
        match Kind::from_name(kind) {
            Some(k) => spec.env.push((var.clone(), k)),
            None => errors.push(format!("variable `{var}`: unknown kind `{kind}`")),
        }
    }
    for (k, w) in raw.when.iter().enumerate() {
        let when = compile_when(&spec, w, k, errors);
        spec.when.push(when);
    }
    if depth > 4 && !raw.subcommands.is_empty() {
        errors.push("subcommands nest more than 4 deep".to_string());
    }
    for (sub, raw_sub) in &raw.subcommands {
        if raw_sub.name.is_some() {
            errors.push(format!(
                "subcommand `{sub}` has a `name`; its key is its name"
            ));
        }
        let key = if spec.ignore_case {
            sub.to_lowercase()
        } else {
            sub.clone()
        };
        let compiled = compile_inner(raw_sub, sub, errors, depth + 1);
        spec.subcommands.insert(key, Arc::new(compiled));
    }
    spec
}

/// The option indices of a list of spellings (`"-l, --list"`).
fn option_indices(spec: &Spec, list: &str, at: usize, errors: &mut Vec<String>) -> Vec<usize> {
    let mut out = Vec::new();
    for s in list
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let found = if s == "-NUM" {
            spec.num
        } else if spec.parse == ParseStyle::Gnu {
            match s.strip_prefix("--") {
                Some(long) => spec.long.get(long).copied(),
                None => s
                    .strip_prefix('-')
                    .filter(|c| c.chars().count() == 1)
                    .and_then(|c| c.chars().next())
                    .and_then(|c| spec.short.get(&c).copied()),
            }
        } else {
            let bare = s.trim_start_matches('-');
            spec.long
                .get(if bare.is_empty() { s } else { bare })
                .copied()
        };
        match found {
            Some(i) => out.push(i),
            None => errors.push(format!(
                "`when` {at}: `{s}` is not an option of `{}`",
                spec.name
            )),
        }
    }
    out
}

fn compile_when(
    spec: &Spec,
    raw: &crate::model::RawWhen,
    at: usize,
    errors: &mut Vec<String>,
) -> When {
    let at = at + 1;
    let options: Vec<Vec<usize>> = raw
        .option
        .as_ref()
        .map(|o| {
            o.items()
                .iter()
                .map(|l| option_indices(spec, l, at, errors))
                .collect()
        })
        .unwrap_or_default();
    let unless = raw
        .unless
        .as_deref()
        .map(|l| option_indices(spec, l, at, errors))
        .unwrap_or_default();
    if let Some(glob) = &raw.operand
        && glob.is_empty()
    {
        errors.push(format!("`when` {at}: `operand` is an empty glob"));
    }
    if raw.read_only.is_none()
        && raw.tags.is_empty()
        && raw.untags.is_empty()
        && raw.runs_code.is_none()
    {
        errors.push(format!(
            "`when` {at} changes nothing: give `read_only`, `tags`, `untags` or `runs_code`"
        ));
    }
    if raw.runs_code == Some(false) {
        errors.push(format!(
            "`when` {at}: `runs_code: false` cannot take code away; leave it out"
        ));
    }
    if raw.read_only == Some(true) && raw.runs_code == Some(true) {
        errors.push(format!(
            "`when` {at} is contradictory: `read_only: true` with `runs_code: true`"
        ));
    }
    if let Some(t) = raw.tags.iter().find(|t| raw.untags.contains(t)) {
        errors.push(format!("`when` {at} both adds and removes the tag `{t}`"));
    }
    When {
        options,
        unless,
        operand: raw.operand.clone(),
        operands: raw.operands.unwrap_or(0),
        read_only: raw.read_only,
        tags: raw.tags.clone(),
        untags: raw.untags.clone(),
        runs_code: raw.runs_code == Some(true),
    }
}

/// A command's words as the program reads them.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Options given, by index into [`Spec::options`], with their values.
    pub options: Vec<(usize, Option<Word>)>,
    /// How each of `options` was spelled, resolved: the full long name (`--recursive`
    /// for `--recur`), or the short option (`-r`), or `-NUM`.
    pub spellings: Vec<String>,
    /// For `command` option values (`find -exec`): the words of each.
    pub commands: Vec<(usize, Vec<Word>)>,
    /// The operands, in order.
    pub operands: Vec<Word>,
    /// What was not understood: the code and one sentence each.
    pub unknown: Vec<(super::Reason, String)>,
    /// An operand may hold options (an unquoted expansion).
    pub options_unknown: bool,
}

impl Spec {
    /// The subcommand named by `word`, if the specification has subcommands.
    #[must_use]
    pub fn subcommand(&self, word: &str) -> Option<&Arc<Spec>> {
        if self.ignore_case {
            self.subcommands.get(&word.to_lowercase())
        } else {
            self.subcommands.get(word)
        }
    }

    fn lookup_long(&self, name: &str) -> Result<(usize, String), (super::Reason, String)> {
        if let Some(&i) = self.long.get(name) {
            return Ok((i, name.to_string()));
        }
        if self.abbreviations && !name.is_empty() {
            let mut hits = self
                .long
                .range(name.to_string()..)
                .take_while(|(k, _)| k.starts_with(name))
                .map(|(k, &i)| (i, k.clone()));
            if let Some(first) = hits.next() {
                if hits.all(|(i, _)| i == first.0) {
                    return Ok(first);
                }
                return Err((
                    super::Reason::UnknownOption,
                    format!("ambiguous option `--{name}` of `{}`", self.name),
                ));
            }
        }
        Err((
            super::Reason::UnknownOption,
            format!("unknown option `--{name}` of `{}`", self.name),
        ))
    }

    /// The words with a traditional first-word bundle spelled out: `czf A F` is
    /// `-c -z -f A F`, each letter that takes a value taking the next word in
    /// turn (`tar cfb A 20` gives `-f A -b 20`). `None` when the first word is
    /// not such a bundle.
    #[must_use]
    pub fn unbundle(&self, words: &[Word]) -> Option<Vec<Word>> {
        if !self.traditional {
            return None;
        }
        let first = words.first()?.literal()?;
        if first.is_empty() || first.starts_with('-') {
            return None;
        }
        let mut out = Vec::new();
        let mut next = 1;
        for ch in first.chars() {
            let opt = &self.options[*self.short.get(&ch)?];
            out.push(Word::lit(&format!("-{ch}")));
            if opt.value.is_some() && !opt.optional {
                out.push(words.get(next)?.clone());
                next += 1;
            }
        }
        out.extend(words[next..].iter().cloned());
        Some(out)
    }

    /// Reads `words` (the arguments after the program name, or after the
    /// subcommand name) as the program reads them.
    #[must_use]
    pub fn parse_words(&self, words: &[Word]) -> Parsed {
        let mut p = Parsed::default();
        let mut i = 0;
        let mut options_done = self.parse == ParseStyle::None;
        let stop_at_operand = !self.permute;
        while i < words.len() {
            let word = &words[i];
            let lit = word.lit_prefix();
            if !options_done && word.is_literal() && lit == "--" {
                options_done = true;
                i += 1;
                continue;
            }
            let looks_like_option = lit.starts_with('-') && lit.len() > 1;
            let single_dash_bare = self.parse == ParseStyle::SingleDash
                && word.is_literal()
                && self.long.contains_key(lit.as_str());
            if !options_done && (looks_like_option || single_dash_bare) {
                i = match self.parse {
                    ParseStyle::Gnu => self.gnu_option(words, i, &mut p),
                    _ => self.single_dash_option(words, i, &mut p),
                };
                continue;
            }
            if word.starts_unquoted_unknown() {
                p.options_unknown = true;
            }
            p.operands.push(word.clone());
            i += 1;
            if stop_at_operand {
                options_done = true;
            }
        }
        p
    }

    /// Takes an option's value and returns the index of the next word.
    fn take_value(
        &self,
        words: &[Word],
        next: usize,
        (index, spelling): (usize, String),
        attached: Option<Word>,
        p: &mut Parsed,
    ) -> usize {
        p.spellings.push(spelling);
        let opt = &self.options[index];
        match (opt.value, attached) {
            (None, Some(_)) => {
                p.unknown.push((
                    super::Reason::OptionValue,
                    format!("option `{}` of `{}` takes no value", opt.name, self.name),
                ));
                p.options.push((index, None));
                next
            }
            (None, None) => {
                p.options.push((index, None));
                next
            }
            (Some(_), Some(v)) => {
                p.options.push((index, Some(v)));
                next
            }
            (Some(_), None) if opt.optional => {
                p.options.push((index, None));
                next
            }
            (Some(Kind::Command), None) => {
                let mut end = next;
                while end < words.len()
                    && !(words[end].literal().is_some_and(|w| opt.end.contains(&w)))
                {
                    end += 1;
                }
                p.commands.push((index, words[next..end].to_vec()));
                p.options.push((index, None));
                (end + 1).min(words.len().max(end + 1))
            }
            (Some(_), None) => match words.get(next) {
                Some(v) => {
                    p.options.push((index, Some(v.clone())));
                    next + 1
                }
                None => {
                    p.unknown.push((
                        super::Reason::OptionValue,
                        format!(
                            "option `{}` of `{}` is missing its value",
                            opt.name, self.name
                        ),
                    ));
                    p.options.push((index, None));
                    next
                }
            },
        }
    }

    fn gnu_option(&self, words: &[Word], i: usize, p: &mut Parsed) -> usize {
        let word = &words[i];
        let lit = word.lit_prefix();
        if let Some(long) = lit.strip_prefix("--") {
            let (name, attached) = match long.find('=') {
                Some(eq) => (&long[..eq], Some(word.drop_prefix(2 + eq + 1))),
                None if !word.is_literal() => {
                    p.unknown.push((
                        super::Reason::DynamicWord,
                        format!("option word `{}` is not literal", word.raw),
                    ));
                    return i + 1;
                }
                None => (long, None),
            };
            return match self.lookup_long(name) {
                Ok((index, full)) => {
                    self.take_value(words, i + 1, (index, format!("--{full}")), attached, p)
                }
                Err(why) => {
                    p.unknown.push(why);
                    i + 1
                }
            };
        }
        // A bundle of short options: `-rf`, `-ofile`, `-n5`, `-5`.
        let body = &lit[1..];
        if let Some(num) = self.num
            && body.bytes().all(|b| b.is_ascii_digit())
            && word.is_literal()
        {
            p.options.push((num, None));
            p.spellings.push("-NUM".to_string());
            return i + 1;
        }
        for (k, c) in body.char_indices() {
            let Some(&index) = self.short.get(&c) else {
                if c.is_ascii_digit()
                    && let Some(num) = self.num
                {
                    p.options.push((num, None));
                    p.spellings.push("-NUM".to_string());
                    return i + 1;
                }
                p.unknown.push((
                    super::Reason::UnknownOption,
                    format!("unknown option `-{c}` of `{}`", self.name),
                ));
                return i + 1;
            };
            let opt = &self.options[index];
            if opt.value.is_some() {
                let consumed = 1 + k + c.len_utf8();
                let rest = word.drop_prefix(consumed);
                let attached = (!(rest.parts.is_empty()
                    || rest.literal().is_some_and(|s| s.is_empty())))
                .then_some(rest);
                // `-c=FILE`: getopt gives the value `=FILE`, most other parsers
                // (argparse, commons-cli, yargs, pflag) `FILE`; both are taken.
                if let Some(v) = &attached
                    && v.lit_prefix().len() > 1
                    && v.lit_prefix().starts_with('=')
                {
                    let stripped = Some(v.drop_prefix(1));
                    self.take_value(words, i + 1, (index, format!("-{c}")), stripped, p);
                }
                return self.take_value(words, i + 1, (index, format!("-{c}")), attached, p);
            }
            p.options.push((index, None));
            p.spellings.push(format!("-{c}"));
        }
        if !word.is_literal() {
            p.unknown.push((
                super::Reason::DynamicWord,
                format!("option word `{}` is not literal", word.raw),
            ));
        }
        i + 1
    }

    fn single_dash_option(&self, words: &[Word], i: usize, p: &mut Parsed) -> usize {
        let word = &words[i];
        let lit = word.lit_prefix();
        let bare = lit.trim_start_matches('-');
        let (name, attached) = match bare.find('=') {
            Some(eq) => (
                &bare[..eq],
                Some(word.drop_prefix(lit.len() - bare.len() + eq + 1)),
            ),
            None => (if bare.is_empty() { lit.as_str() } else { bare }, None),
        };
        if attached.is_none() && !word.is_literal() {
            p.unknown.push((
                super::Reason::DynamicWord,
                format!("option word `{}` is not literal", word.raw),
            ));
            return i + 1;
        }
        if let Some(&index) = self.long.get(name) {
            let spelling = if self.long.contains_key(name) {
                format!("-{name}")
            } else {
                name.to_string()
            };
            return self.take_value(words, i + 1, (index, spelling), attached, p);
        }
        if let Some(num) = self.num
            && !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_digit())
        {
            p.options.push((num, None));
            p.spellings.push("-NUM".to_string());
            return i + 1;
        }
        p.unknown.push((
            super::Reason::UnknownOption,
            format!("unknown option `{lit}` of `{}`", self.name),
        ));
        i + 1
    }

    /// The option at `index`.
    #[must_use]
    pub fn option(&self, index: usize) -> &OptSpec {
        &self.options[index]
    }
}

/// Gives each operand its kind under a layout; `code` is followed by the
/// program's own arguments, `command` and `script` take the rest.
#[must_use]
pub fn assign(layout: &[Slot], count: usize) -> (Vec<Kind>, bool) {
    let mut kinds = Vec::with_capacity(count);
    let mut taken = 0;
    let mut overflow = false;
    for (si, slot) in layout.iter().enumerate() {
        let remaining = count - taken;
        if slot.kind.takes_rest() {
            kinds.extend(std::iter::repeat_n(slot.kind, remaining));
            taken = count;
            break;
        }
        let required_after = layout[si + 1..]
            .iter()
            .filter(|s| s.repeat == Repeat::One)
            .count();
        let n = match slot.repeat {
            Repeat::One => remaining.min(1),
            Repeat::Optional => usize::from(remaining > required_after),
            Repeat::Many => remaining.saturating_sub(required_after),
        };
        kinds.extend(std::iter::repeat_n(slot.kind, n));
        taken += n;
        if slot.kind == Kind::Code && n > 0 {
            let rest = count - taken;
            kinds.extend(std::iter::repeat_n(Kind::Value, rest));
            taken = count;
            break;
        }
    }
    if taken < count {
        overflow = true;
        kinds.extend(std::iter::repeat_n(Kind::Value, count - taken));
    }
    (kinds, overflow)
}

#[cfg(test)]
#[expect(clippy::panic, reason = "tests")]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> Spec {
        let raw: RawCommand = serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{e}"));
        compile(&raw, "t").unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::lit).collect()
    }

    #[test]
    fn gnu_bundles_abbreviations_and_values() {
        let s = spec(
            r#"
options:
  "-r, -R, --recursive": {recursive: true}
  "-f, --force": flag
  "-t, --target-directory": write
  "--files0-from": read
  "-NUM": flag
operands: [read..., write]
"#,
        );
        let p = s.parse_words(&words("-rf --target=out --files0-from=list a b -5"));
        assert!(p.unknown.is_empty(), "{:?}", p.unknown);
        let names: Vec<&str> = p
            .options
            .iter()
            .map(|(i, _)| s.option(*i).name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "--recursive",
                "--force",
                "--target-directory",
                "--files0-from",
                "-NUM"
            ]
        );
        assert_eq!(
            p.options[2].1.as_ref().and_then(Word::literal).as_deref(),
            Some("out")
        );
        assert_eq!(p.operands.len(), 2);
        let p = s.parse_words(&words("-tout --frobnicate x"));
        assert_eq!(
            p.options[0].1.as_ref().and_then(Word::literal).as_deref(),
            Some("out")
        );
        assert_eq!(
            p.unknown,
            [(
                super::super::Reason::UnknownOption,
                "unknown option `--frobnicate` of `t`".to_string()
            )]
        );
        let p = s.parse_words(&words("-- -rf"));
        assert_eq!(p.operands.len(), 1);
    }

    #[test]
    fn ambiguous_abbreviation_is_unknown() {
        let s = spec(
            r#"
options:
  "--color": flag
  "--column": flag
"#,
        );
        assert_eq!(s.parse_words(&words("--col")).unknown.len(), 1);
        assert!(s.parse_words(&words("--colo")).unknown.is_empty());
    }

    #[test]
    fn wrappers_stop_at_the_first_operand() {
        let s = spec(
            r#"
options:
  "-s, --signal": value
operands: [value, command]
"#,
        );
        let p = s.parse_words(&words("-s KILL 5 rm -rf /"));
        assert_eq!(p.operands.len(), 4);
        let (kinds, overflow) = assign(&s.operands, p.operands.len());
        assert_eq!(
            kinds,
            [Kind::Value, Kind::Command, Kind::Command, Kind::Command]
        );
        assert!(!overflow);
    }

    #[test]
    fn single_dash_and_command_values() {
        let s = spec(
            r#"
parse: single-dash
options:
  "-name": pattern
  "-delete": flag
  "-exec": {value: command, end: [";", "+"]}
  "-auto-approve": flag
operands: [read...]
"#,
        );
        let p = s.parse_words(&words(
            ". -name *.rs -exec rm -f {} ; -delete --auto-approve",
        ));
        assert!(p.unknown.is_empty(), "{:?}", p.unknown);
        assert_eq!(p.commands.len(), 1);
        assert_eq!(p.commands[0].1.len(), 3);
        assert_eq!(p.operands.len(), 1);
    }

    #[test]
    fn layouts() {
        let slot = |kind, repeat| Slot { kind, repeat };
        let l = [
            slot(Kind::Read, Repeat::Many),
            slot(Kind::Write, Repeat::One),
        ];
        assert_eq!(assign(&l, 3).0, [Kind::Read, Kind::Read, Kind::Write]);
        let l = [
            slot(Kind::Pattern, Repeat::One),
            slot(Kind::Read, Repeat::Many),
        ];
        assert_eq!(assign(&l, 1).0, [Kind::Pattern]);
        let l = [
            slot(Kind::Code, Repeat::One),
            slot(Kind::Value, Repeat::Many),
        ];
        assert_eq!(assign(&l, 3).0, [Kind::Code, Kind::Value, Kind::Value]);
        let l = [
            slot(Kind::Read, Repeat::Optional),
            slot(Kind::Write, Repeat::Optional),
        ];
        assert_eq!(assign(&l, 1).0, [Kind::Read]);
        let (k, overflow) = assign(&[slot(Kind::Read, Repeat::One)], 2);
        assert_eq!(k, [Kind::Read, Kind::Value]);
        assert!(overflow);
    }

    #[test]
    fn globs_match_whole_words() {
        assert!(glob_matches("*=*", "kernel.x=1"));
        assert!(!glob_matches("*=*", "kernel.x"));
        assert!(glob_matches("[0-9]*", "01010101"));
        assert!(!glob_matches("[0-9]*", "+%s"));
        assert!(glob_matches("[!+]?", "ab"));
        assert!(!glob_matches("a?c", "ac"));
        assert!(glob_matches("*://*", "postgresql://u@h/x"));
    }

    #[test]
    fn conditions_hold_on_options_and_operands() {
        let s = spec(
            r#"
options:
  "-p, --pid": {operands: [value...]}
  "-c": value
  "-l": flag
operands: [value...]
when:
  - {option: ["-p, --pid", "-c"], read_only: false}
  - {operands: 1, unless: "-l", tags: [vcs-write]}
  - {operand: "*=*", runs_code: true}
"#,
        );
        let held = |line: &str| -> Vec<usize> {
            let p = s.parse_words(&words(line));
            let given: Vec<usize> = p.options.iter().map(|(i, _)| *i).collect();
            (0..s.when.len())
                .filter(|k| s.when[*k].holds(&given, &p.operands))
                .collect()
        };
        assert_eq!(held("-p 1"), [1]);
        assert_eq!(held("-c 3 -p 1"), [0, 1]);
        assert_eq!(held("-l x"), Vec::<usize>::new());
        assert_eq!(held("a=b"), [1, 2]);
        // An operand not known before the command runs matches a shape.
        let p = s.parse_words(&[Word::unknown("$X")]);
        assert!(s.when[2].holds(&[], &p.operands));
    }

    #[test]
    fn bad_conditions_are_errors() {
        let raw: RawCommand = serde_saphyr::from_str(
            "options: {\"-l\": flag}\nwhen:\n  - {option: \"-x\", read_only: false}\n  - {operands: 1}\n  - {unless: \"-l\", tags: [a], untags: [a]}\n  - {runs_code: true, read_only: true}\nenv: {X: frob}\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let errors = compile(&raw, "t").err().unwrap_or_default();
        assert_eq!(errors.len(), 5, "{errors:?}");
    }

    #[test]
    fn bad_entries_are_errors() {
        let raw: RawCommand = serde_saphyr::from_str(
            "options: {\"-ab\": flag, \"-x\": frob}\noperands: [command, read]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let errors = compile(&raw, "t").err().unwrap_or_default();
        assert_eq!(errors.len(), 3, "{errors:?}");
    }
}
