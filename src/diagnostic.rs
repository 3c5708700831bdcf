//! Diagnostics: every problem found in the files, with a stable code, a
//! severity, a place and help.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::escape::escape_keep_lines;

/// A source file that was read, kept for rendering and positions.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as given (or found under a given folder).
    pub path: PathBuf,
    /// The path as displayed in diagnostics.
    pub name: String,
    /// The text.
    pub text: Arc<String>,
    line_starts: Arc<Vec<usize>>,
    /// The SHA-256 of `text`, computed once (the document cache's key and the
    /// decision log's policy hash both read it).
    digest: Arc<std::sync::OnceLock<[u8; 32]>>,
}

/// The SHA-256 of a text.
#[must_use]
pub fn text_digest(text: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).into()
}

impl SourceFile {
    /// Wraps a file's text.
    #[must_use]
    pub fn new(path: &Path, text: String) -> SourceFile {
        let mut line_starts = vec![0];
        // memchr's vectorized search (callgrind: `SourceFile::new` on the
        // shipped files fell from 0.64 to 0.24 million instructions).
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        SourceFile {
            path: path.to_path_buf(),
            name: path.display().to_string(),
            text: Arc::new(text),
            line_starts: Arc::new(line_starts),
            digest: Arc::new(std::sync::OnceLock::new()),
        }
    }

    /// The SHA-256 of the text.
    #[must_use]
    pub fn digest(&self) -> [u8; 32] {
        *self.digest.get_or_init(|| text_digest(&self.text))
    }

    /// The 1-based line of a byte offset.
    #[must_use]
    pub fn line(&self, offset: usize) -> usize {
        self.line_index(offset.min(self.text.len())) + 1
    }

    fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The 1-based line and character column of a byte offset.
    #[must_use]
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_index(offset);
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// The byte offset of a 1-based line and character column.
    #[must_use]
    pub fn offset_of(&self, line: usize, col: usize) -> usize {
        let Some(start) = self.line_starts.get(line.saturating_sub(1)).copied() else {
            return self.text.len();
        };
        let rest = self.text.get(start..).unwrap_or("");
        rest.char_indices()
            .nth(col.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i)
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Reported; fails only under `--deny-warnings`.
    Warning,
    /// Fails the load.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $sev:ident, $desc:literal; )*) => {
        /// A stable diagnostic code. Renaming or removing one is a breaking change.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The kebab-case name.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// The default severity.
            #[must_use]
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev,)* }
            }

            /// What the code means and how to fix it.
            #[must_use]
            pub fn description(self) -> &'static str {
                match self { $(Code::$variant => $desc,)* }
            }

            /// Looks a code up by name.
            #[must_use]
            pub fn parse(s: &str) -> Option<Code> {
                match s { $($name => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    /// The file is not valid YAML.
    YamlSyntax = "yaml-syntax", Error,
        "The file is not valid YAML. Fix the syntax at the position shown.";
    /// The file exceeded the alias, node or depth budget.
    YamlBudget = "yaml-budget", Error,
        "The file uses too many aliases, anchors or nodes, or nests deeper than 64 levels (an expansion bomb is refused). Write the values out or split the file.";
    /// The file uses a YAML tag (`!!python/object`, `!!binary`, `!custom`).
    YamlTag = "yaml-tag", Error,
        "A value carries a YAML tag other than the core ones (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map`). Tags such as `!!python/object`, `!!binary` or `!custom` mean something to other YAML readers and nothing here; remove the tag.";
    /// A file could not be read at all.
    UnreadableFile = "unreadable-file", Error,
        "A path given does not exist, is not a regular file (a folder where a file was wanted, a device, a FIFO, a socket), cannot be read, is larger than 16 MiB or is not UTF-8 text. Nothing is loaded until it is fixed; `lint` exits 2.";
    /// A key appears twice in one mapping.
    DuplicateKey = "duplicate-key", Error,
        "A key appears twice in the same mapping; YAML would keep only one of them silently. Remove or rename one.";
    /// A key the format does not have.
    UnknownField = "unknown-field", Error,
        "A key the format does not know, usually a typo. The message lists the keys allowed there.";
    /// A required key is missing.
    MissingField = "missing-field", Error,
        "A key the format requires is missing (for example `version` at the top of every file).";
    /// A value of the wrong type or an unknown enum value.
    InvalidType = "invalid-type", Error,
        "A value has the wrong type or is not one of the allowed words (for example `permission: maybe`).";
    /// A value is out of its allowed range or malformed.
    InvalidValue = "invalid-value", Error,
        "A value is malformed: a name with characters outside its allowed set, a bad duration, a server missing its `command` or `url`.";
    /// `version` is not 1.
    UnsupportedVersion = "unsupported-version", Error,
        "Only `version: 1` exists.";
    /// Two tools have the same name.
    DuplicateTool = "duplicate-tool", Error,
        "Two tools (or two servers) share a name. Names are unique across all files.";
    /// Two rules have the same id.
    DuplicateId = "duplicate-id", Error,
        "Two rules share an id. Ids are unique across sandbox rules, relax rules and reject rules in all files.";
    /// A setting is given in two files.
    SettingsConflict = "settings-conflict", Error,
        "The same setting is given in two files; which one wins would depend on file order. Keep it in one file.";
    /// A permission other than allow has no reason.
    MissingReason = "missing-reason", Error,
        "A tool whose permission is not `allow`, or a sandbox rule, has no `reason`. The reason is what a person sees when asked or refused.";
    /// A CEL expression does not parse.
    CelSyntax = "cel-syntax", Error,
        "A `when` expression is not valid CEL. The label points at the position inside the expression.";
    /// A CEL expression is too long or too deeply nested to compile safely.
    CelTooLarge = "cel-too-large", Error,
        "A `when` or effects expression is longer than 16 KiB, has more than 4,096 tokens, or nests deeper than 64 levels (parentheses, operator chains such as `1 + 1 + …`, `!!!…`, member chains `a.b.c…`). Such an expression would take the parser out of stack or memory; split it into rules or lists.";
    /// A CEL expression could cost more than the evaluation budget.
    CelCost = "cel-cost", Error,
        "A `when` or effects expression could do more work or build a larger value than one evaluation may: nested comprehensions over large lists, strings grown by `+`, `join` or `replace`, maps nested in maps. The estimate assumes calls of up to 1,000 items per list and 1 MiB per string; larger calls are measured again when evaluated, and a rule over budget then fails closed.";
    /// A CEL expression names an unknown variable.
    CelUnknownVariable = "cel-unknown-variable", Error,
        "A `when` expression names a variable that does not exist. The variables are `tool`, `args`, `session`, `call` (the call's effects) and `lists` (the named lists); effect expressions cannot read `call`.";
    /// A CEL expression names an unknown function.
    CelUnknownFunction = "cel-unknown-function", Error,
        "A `when` expression calls a function that does not exist. Besides standard CEL there are `glob`, `path_clean`, `path_under`, `path_matches`, `path_overlaps`, `path_is_tree`, `path_is_pattern`, `path_ancestors`, `url_host`, `ip_in`, `shell_parses` and `shell_commands`.";
    /// A glob pattern does not compile.
    InvalidGlob = "invalid-glob", Error,
        "A glob (in `tools:`, `include:`, `exclude:` or a literal `glob(...)` pattern) does not compile.";
    /// A literal regular expression does not compile.
    InvalidRegex = "invalid-regex", Error,
        "A literal regular expression in `matches(...)` or `settings.secrets.patterns` does not compile.";
    /// A tool's parameters are not a valid JSON Schema.
    InvalidSchema = "invalid-schema", Error,
        "A tool's `parameters` is not a valid JSON Schema (draft 2020-12).";
    /// A key in a tool's parameters is no JSON Schema keyword and has no value.
    StraySchemaKey = "stray-schema-key", Warning,
        "A key in a tool's `parameters` is not a JSON Schema keyword and has no value: usually a YAML flow mapping cut at a comma, as in `{type: string, description: First line, 0-based.}`, where `0-based.` becomes a key of its own and the description stops at `First line`. JSON Schema ignores keywords it does not know, so nothing else reports it; quote the text.";
    /// A sandbox rule tries to allow.
    SandboxAllows = "sandbox-allows", Error,
        "A sandbox rule's `action` is `allow`. Sandbox rules may only tighten (`prompt` or `deny`); to allow, write a relax rule.";
    /// A relax rule with a target other than allow.
    RelaxTightens = "relax-tightens", Error,
        "A relax rule's `to` is not `allow`. Relax rules may only move `prompt` to `allow`; to tighten, write a sandbox rule.";
    /// A relax rule matches a deny tool.
    RelaxOnDeny = "relax-on-deny", Error,
        "A relax rule's `tools:` match a tool whose static permission is `deny`. Nothing relaxes a deny; narrow the globs.";
    /// A relax rule matches only allow tools.
    RelaxNoop = "relax-noop", Warning,
        "A relax rule's `tools:` match only tools that are already `allow`, so it never changes a decision.";
    /// A tools glob matches no tool.
    UnknownToolPattern = "unknown-tool-pattern", Error,
        "A `tools:` glob matches no manifest tool and cannot match any MCP tool of a declared server. Usually a typo in a tool name.";
    /// A rule reads an argument no matched tool has.
    UnknownArg = "unknown-arg", Error,
        "A rule reads `args.X` but no tool its `tools:` match has `X` in its parameters, so the rule can never see it.";
    /// A rule reads an optional argument without `has()`.
    UnguardedOptionalArg = "unguarded-optional-arg", Warning,
        "A rule reads `args.X`, `X` is optional in a matched tool, and the expression does not guard it with `has(args.X)`: calls without it fail closed.";
    /// A rule's example does not behave as written.
    ExampleMismatch = "example-mismatch", Error,
        "A rule's `examples.match` call is not matched by the rule, or a `no_match` call is.";
    /// An example or test names an unknown tool or bad arguments.
    InvalidCall = "invalid-call", Error,
        "A rule example names a tool that does not exist, or a call (example or test) has arguments that are not a mapping. Tests may name unknown tools on purpose, to check the rejection.";
    /// A literal credential in a server manifest.
    LiteralSecret = "literal-secret", Error,
        "A server's `env` or `headers` holds what looks like a literal credential, or its `auth.client_secret` is not read from the environment. Read it from the environment with `${env:NAME}`.";
    /// An `${env:NAME}` reference is malformed.
    InvalidEnvReference = "invalid-env-reference", Error,
        "A `${env:...}` reference in a server's `env`, `headers` or `url` is malformed.";
    /// An `effects` expression gives the wrong type.
    InvalidEffect = "invalid-effect", Error,
        "An `effects` expression is a literal of the wrong type: `shell`, `cwd` and `patch` are strings, `reads`, `writes` and `fetches` lists of strings, `runs_code` a bool.";
    /// A rule names a list that does not exist, or lists conflict.
    UnknownList = "unknown-list", Error,
        "A rule reads `lists.NAME` and no file defines that list, or a list `extends` one that does not exist.";
    /// Two files define the same list, or lists extend each other in a circle.
    DuplicateList = "duplicate-list", Error,
        "A list name is defined twice (names are unique across files), or lists extend each other in a circle.";
    /// A command specification is malformed.
    InvalidCommand = "invalid-command", Error,
        "A `commands:` entry does not follow the catalog format (docs/catalog.md): an unknown kind, a bad option spelling, a `command` operand that is not last.";
    /// A command specification replaces a shipped one.
    CommandReplaced = "command-replaced", Warning,
        "A `commands:` entry has the name of a program the shipped catalog describes, and replaces that description. Check that it describes everything the program can do.";
    /// A CEL expression reads a field its value's declared type does not have.
    CelUnknownField = "cel-unknown-field", Error,
        "A `when` or effects expression reads a field that `tool`, `session`, `call`, a command or a fetch does not have (`session.mod`, `c.progam`): it would fail on every call. The message suggests the closest field; docs/cel.md lists every field and its type.";
    /// A CEL expression gives an operator or function a value of the wrong type.
    TypeMismatch = "type-mismatch", Error,
        "A `when` or effects expression gives an operator or function a value it cannot take (`session.mode + 1`, `size(true)`, `\"rm\" in c.program`, `call.exact == \"yes\"`, `type(x) == \"string\"`: a type is not its name), or calls a function with the wrong number of arguments: it would fail, or never match, on every call. `args` is dynamic and checked when a call is decided.";
    /// A catalog tag that is not one of the documented set.
    UnknownTag = "unknown-tag", Error,
        "A catalog entry (shipped, or a policy's `commands:`) names a tag that is not one of the documented set (docs/catalog.md, \"Tags\"): usually a typo, which no rule would ever see. The message suggests the closest tag.";
    /// A rule compares a reason with a word that is not a code, or with a message's wording.
    UnknownReasonCode = "unknown-reason-code", Warning,
        "A `when` expression compares an element of `call.inexact` with a word that is not one of its codes (docs/cel.md), so the comparison never holds; or it matches the wording of `call.unknown`, which is written for people and may change from one release to the next. Match the codes of `call.inexact`.";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A byte range in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Start byte offset.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

/// A place in a source file.
#[derive(Debug, Clone)]
pub struct Location {
    /// The file.
    pub file: SourceFile,
    /// The range.
    pub span: Span,
}

impl Location {
    /// 1-based line and column of the start.
    #[must_use]
    pub fn start(&self) -> (usize, usize) {
        self.file.line_col(self.span.offset)
    }

    /// 1-based line and column of the end.
    #[must_use]
    pub fn end(&self) -> (usize, usize) {
        self.file.line_col(self.span.offset + self.span.len)
    }
}

/// One problem found in the files.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, lowercase, user input in backticks.
    pub message: String,
    /// Where; `None` for problems with no place (a missing file).
    pub location: Option<Location>,
    /// The label shown at the place.
    pub label: Option<String>,
    /// How to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's default severity.
    #[must_use]
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            location: None,
            label: None,
            help: None,
        }
    }

    /// Sets the place.
    #[must_use]
    pub fn at(mut self, location: Location) -> Diagnostic {
        self.location = Some(location);
        self
    }

    /// Sets the place if one is known.
    #[must_use]
    pub fn at_opt(mut self, location: Option<Location>) -> Diagnostic {
        self.location = location;
        self
    }

    /// Sets the label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// Sets the help.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// `FILE:LINE:COL: ` of the start, or `""` without a location.
    #[must_use]
    pub fn place(&self) -> String {
        self.location.as_ref().map_or_else(String::new, |l| {
            let (line, col) = l.start();
            format!("{}:{line}:{col}: ", l.file.name)
        })
    }

    /// The file name, or `""`.
    #[must_use]
    pub fn file_name(&self) -> &str {
        self.location.as_ref().map_or("", |l| l.file.name.as_str())
    }

    /// A sort key: file, position, code.
    fn sort_key(&self) -> (String, usize, Code) {
        (
            self.file_name().to_string(),
            self.location.as_ref().map_or(0, |l| l.span.offset),
            self.code,
        )
    }
}

/// Sorts diagnostics by file, position and code, for stable output.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(Diagnostic::sort_key);
}

/// `N errors, M warnings`, as printed at the end of `lint`.
#[must_use]
pub fn summary(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    format!(
        "{errors} error{}, {warnings} warning{}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    )
}

/// True if any diagnostic is an error.
#[must_use]
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(|d| d.severity == Severity::Error)
}

/// The miette view of a diagnostic, for graphical rendering.
#[derive(Debug)]
struct MietteView {
    code: &'static str,
    severity: Severity,
    message: String,
    help: Option<String>,
    label: String,
    snippet: Option<Snippet>,
}

impl fmt::Display for MietteView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MietteView {}

impl miette::Diagnostic for MietteView {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.snippet.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let s = self.snippet.as_ref()?;
        let label = miette::LabeledSpan::new(Some(self.label.clone()), s.span.0, s.span.1);
        Some(Box::new(std::iter::once(label)))
    }
}

/// Characters of a source line shown around the place: a line of a megabyte is
/// cut to a window, so the renderer never sees a huge column.
const WINDOW_BEFORE: usize = 50;
const WINDOW_CHARS: usize = 120;

/// The lines around a diagnostic's place, cut to a window and escaped, as miette
/// renders them; line and column numbers stay those of the file.
#[derive(Debug)]
struct Snippet {
    name: String,
    text: String,
    /// 0-based line in the file of the snippet's first line.
    first_line: usize,
    /// Line of the place within the snippet.
    main: usize,
    /// 0-based character column of the place in the file.
    column: usize,
    /// (offset, len) of the label within `text`.
    span: (usize, usize),
}

impl Snippet {
    fn new(loc: &Location) -> Snippet {
        let file = &loc.file;
        let text = file.text.as_str();
        let start = loc.span.offset.min(text.len());
        let (line1, col1) = file.line_col(start);
        let line = line1 - 1;
        let line_text = |i: usize| -> &str {
            let a = file.line_starts.get(i).copied().unwrap_or(text.len());
            let b = file
                .line_starts
                .get(i + 1)
                .map_or(text.len(), |e| e.saturating_sub(1));
            text.get(a..b.max(a)).unwrap_or("")
        };
        let window_start = (col1 - 1).saturating_sub(WINDOW_BEFORE);
        let mut out = String::new();
        let first_line = line.saturating_sub(1);
        let last_line = (line + 1).min(file.line_starts.len().saturating_sub(1));
        let mut span = (0, 0);
        let mut found = false;
        for i in first_line..=last_line {
            if i > first_line {
                out.push('\n');
            }
            let lt = line_text(i).strip_suffix('\r').unwrap_or(line_text(i));
            let line_start = file.line_starts.get(i).copied().unwrap_or(0);
            if window_start > 0 && lt.chars().nth(window_start).is_some() {
                out.push('…');
            }
            let mut cut = false;
            for (shown, (b, c)) in lt.char_indices().skip(window_start).enumerate() {
                if shown == WINDOW_CHARS {
                    cut = true;
                    break;
                }
                let at = line_start + b;
                if i == line && at == start {
                    span.0 = out.len();
                    found = true;
                }
                crate::escape::push_escaped(&mut out, c);
                if i == line && found && at < start + loc.span.len.max(1) {
                    span.1 = out.len() - span.0;
                }
            }
            if i == line && !found {
                found = true;
                // The place is at the end of the line (or in a cut part).
                span.0 = out.len();
            }
            if cut {
                out.push('…');
            }
        }
        Snippet {
            name: crate::escape::escape(&file.name).into_owned(),
            text: out,
            first_line,
            main: line - first_line,
            column: col1 - 1,
            span,
        }
    }
}

impl miette::SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self.text.read_span(span, before, after)?;
        let line = inner.line();
        // The header shows the place's true column, not its column in the window.
        let column = if line == self.main && span.offset() == self.span.0 {
            self.column
        } else {
            inner.column()
        };
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            line + self.first_line,
            column,
            inner.line_count(),
        )))
    }
}

/// Most characters of a message, label or help shown: a message quoting a
/// megabyte key is cut, saying how much was left out.
pub const MAX_MESSAGE_CHARS: usize = 2_000;

fn truncate_keep_lines(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().nth(MAX_MESSAGE_CHARS).is_none() {
        return std::borrow::Cow::Borrowed(s);
    }
    let cut: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
    let left = s.len() - cut.len();
    std::borrow::Cow::Owned(format!("{cut}… ({left} more bytes not shown)"))
}

/// Renders one diagnostic with miette's graphical handler. Text from input
/// (the message, the file name, the source lines) is escaped, and long lines are
/// cut to a window around the place.
#[must_use]
pub fn render_human(diag: &Diagnostic, color: bool) -> String {
    use crate::escape::{escape, truncate};
    let view = MietteView {
        code: diag.code.as_str(),
        severity: diag.severity,
        message: truncate(&diag.message, MAX_MESSAGE_CHARS),
        help: diag
            .help
            .as_deref()
            .map(|h| escape_keep_lines(&truncate_keep_lines(h)).into_owned()),
        label: truncate(diag.label.as_deref().unwrap_or("here"), MAX_MESSAGE_CHARS),
        snippet: diag.location.as_ref().map(Snippet::new),
    };
    let theme = if color {
        miette::GraphicalTheme::unicode()
    } else {
        miette::GraphicalTheme::unicode_nocolor()
    };
    let handler = miette::GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    if handler.render_report(&mut out, &view).is_err() {
        out = format!("{}: {} [{}]\n", diag.severity, view.message, diag.code);
    }
    if let Some(loc) = &diag.location {
        let (line, col) = loc.start();
        let name = escape(&loc.file.name);
        // miette prints `[file:line:col]`; keep a plain line too for grep and editors.
        if !out.contains(&format!("{name}:{line}:{col}")) {
            out.push_str(&format!("  at {name}:{line}:{col}\n"));
        }
    }
    out
}

/// The JSON form of a diagnostic.
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic<'a> {
    /// Stable code.
    pub code: Code,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The message, with control and invisible characters escaped.
    pub message: std::borrow::Cow<'a, str>,
    /// File name, escaped likewise.
    pub file: std::borrow::Cow<'a, str>,
    /// 1-based start line (0 if unknown).
    pub line: usize,
    /// 1-based start column (0 if unknown).
    pub column: usize,
    /// 1-based end line.
    pub end_line: usize,
    /// 1-based end column.
    pub end_column: usize,
    /// How to fix it.
    pub help: Option<std::borrow::Cow<'a, str>>,
}

impl Diagnostic {
    /// The JSON form.
    #[must_use]
    pub fn to_json(&self) -> JsonDiagnostic<'_> {
        let (line, column) = self.location.as_ref().map_or((0, 0), Location::start);
        let (end_line, end_column) = self.location.as_ref().map_or((0, 0), Location::end);
        JsonDiagnostic {
            code: self.code,
            severity: self.severity,
            message: std::borrow::Cow::Owned(crate::escape::truncate(
                &self.message,
                MAX_MESSAGE_CHARS,
            )),
            file: crate::escape::escape(self.file_name()),
            line,
            column,
            end_line,
            end_column,
            help: self.help.as_deref().map(|h| {
                std::borrow::Cow::Owned(escape_keep_lines(&truncate_keep_lines(h)).into_owned())
            }),
        }
    }
}
/// The closest candidate by edit distance, if close enough to be a typo.
#[must_use]
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(word, c);
        if d <= (word.len().max(c.len()) / 3).max(1)
            && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc))
        {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
