//! Literal-only view of shell scripts (the low-level view; [`super::shell`] is the full analysis), behind the CEL functions
//! `shell_parses(script)` and `shell_commands(script)`.
//!
//! Policies use these to reason about the commands a script runs, e.g. allow
//! `shell_commands(args.command).all(c, c[0] == "git" && c[1] == "status")`.
//! For that to be sound, a command is only reported when its argv is fully
//! known without running anything, so everything else is an error:
//!
//! - Words must be literal after quote removal: single quotes, double quotes
//!   without expansions, and backslash escapes are fine. Parameter expansion,
//!   command substitution, arithmetic expansion, process substitution,
//!   unquoted glob characters (`*`, `?`, `[…]`), brace expansion (`{a,b}`,
//!   `{1..3}`), tilde expansion, ANSI-C (`$'…'`) and locale (`$"…"`) quoting
//!   are rejected, and so are zsh's `=cmd` expansion and a lone `}` argument
//!   (zsh ends a brace group there).
//! - Redirections are rejected unless they duplicate or close a file
//!   descriptor (`2>&1`, `<&-`) or use `/dev/null`. Here-documents and
//!   here-strings are rejected.
//! - Leading assignments stay in the argv (`FOO=1 git status` gives
//!   `["FOO=1", "git", "status"]`), so `c[0] == "git"` does not match it.
//! - Scripts run by other commands are listed too, right after the command
//!   that runs them: `sh -c SCRIPT` and the other POSIX-family shells (also
//!   behind wrappers such as `env`, `exec`, `command` and `nohup`), `eval`,
//!   the action of `trap` and the value of `alias`. Their scripts must be
//!   literal as well.
//! - Bash-only constructs that evaluate text as code (`[[ … ]]`, `(( … ))`,
//!   `let`, `declare -i`/`-n`, `compgen`, `mapfile -C`, array assignments,
//!   `coproc`) are rejected, and so are array subscripts in the variable
//!   names given to builtins (`printf -v 'a[$(id)]'` runs `id`).
//! - The script must mean the same under the bash and the POSIX grammar,
//!   since `sh` is often dash: `a &>/dev/null b` runs `a b` in bash but `a`
//!   and `b` in dash, so it is rejected, and so is the `function` keyword.
//!   The `time` keyword is kept as the first argv element
//!   (`["time", "make"]`), as `/usr/bin/time` gets it in sh.
//!
//! The script is parsed with [`brush_parser`]. Its parser recurses per
//! nesting level and backtracks exponentially on `((`, so the token stream is
//! checked first: size, nesting depth and the number of `$(`/`${`/`$[`
//! sequences are bounded, and `((` is rejected, before the grammar runs.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ast;
use brush_parser::word::WordPiece;
use brush_parser::{ParseError, ParserImpl, ParserOptions, Token};

/// Longest script accepted, in bytes.
pub(crate) const MAX_SCRIPT_BYTES: usize = 64 * 1024;
/// Deepest nesting of compound commands (subshells, groups, `if`, loops, `case`).
pub(crate) const MAX_NESTING: usize = 16;
/// Deepest chain of scripts run by scripts (`sh -c`, `eval`, `trap`, `alias`).
pub(crate) const MAX_SCRIPT_DEPTH: usize = 8;
/// Most `$(`, `${` and `$[` sequences in a script, quoted or not. The parser
/// recurses on each; a literal script only has them inside single quotes.
pub(crate) const MAX_EXPANSION_MARKERS: usize = 16;
/// Most `(`, `{` and `[` characters in a word that contains `$` or a backquote.
pub(crate) const MAX_WORD_BRACKETS: usize = 48;
/// Most wrapper commands (`env`, `exec`, …) looked through to find a shell.
const MAX_WRAPPERS: usize = 8;
/// Longest piece of user input quoted in an error message, in characters.
const MAX_SNIPPET_CHARS: usize = 80;
/// The only file a redirection may name.
const DEV_NULL: &str = "/dev/null";

/// POSIX-family shells whose `-c` script is listed as well.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "yash",
    "posh", "bosh",
];
/// Single-letter shell options that take no argument.
const SHELL_FLAGS: &str = "abefhiklmnprstuvxBCEHPT";
/// Long shell options (after `--`) that take no argument.
const SHELL_LONG_FLAGS: &[&str] = &[
    "debug",
    "debugger",
    "dump-po-strings",
    "dump-strings",
    "help",
    "login",
    "noediting",
    "noprofile",
    "norc",
    "posix",
    "pretty-print",
    "restricted",
    "verbose",
    "version",
];
/// Long shell options (after `--`) that take an argument.
const SHELL_LONG_OPTIONS: &[&str] = &["rcfile", "init-file"];

/// Why a script is not a list of literal commands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The script does not parse as a shell script.
    #[error("shell syntax error: {0}")]
    Syntax(String),
    /// A word's value depends on expansion, globbing or quoting rules that
    /// are not resolved without running the shell.
    #[error("`{word}` is not a literal word ({why})")]
    NotLiteral {
        /// The word as written in the script.
        word: String,
        /// The construct that makes it non-literal.
        why: &'static str,
    },
    /// A redirection other than fd duplication/closing or `/dev/null`.
    #[error("redirection `{0}` is not allowed (only `/dev/null` and fd duplication are)")]
    Redirection(String),
    /// A construct that evaluates text as code or cannot be analysed.
    #[error("{0} is not supported")]
    Unsupported(String),
    /// The script exceeds the size, nesting or script-in-script limits.
    #[error("script is too large or too deeply nested")]
    TooComplex,
}

/// Lists the simple commands of `script` as argv vectors, in source order.
///
/// Commands are collected across `;`, `&&`, `||`, `|`, `&`, newlines,
/// subshells, brace groups, `if`/`while`/`until`/`for`/`case` bodies and
/// function bodies; scripts run through `sh -c` (and similar, see the module
/// docs) follow the command that runs them. An empty or comment-only script
/// yields no commands.
///
/// # Errors
///
/// Returns a [`ShellError`] unless every word is literal, every redirection is
/// harmless and the script parses within the size and nesting limits.
pub fn shell_commands(script: &str) -> Result<Vec<Vec<String>>, ShellError> {
    let mut commands = Vec::new();
    collect_script(script, 0, &mut commands)?;
    Ok(commands)
}

/// Whether `script` parses as a shell script made only of literal words,
/// i.e. whether [`shell_commands`] succeeds.
#[must_use]
pub fn shell_parses(script: &str) -> bool {
    shell_commands(script).is_ok()
}

/// Appends the commands of `text`, and of the scripts they run, to `out`;
/// `depth` counts the enclosing scripts.
fn collect_script(text: &str, depth: usize, out: &mut Vec<Vec<String>>) -> Result<(), ShellError> {
    if depth > MAX_SCRIPT_DEPTH || text.len() > MAX_SCRIPT_BYTES {
        return Err(ShellError::TooComplex);
    }
    if text.contains('\0') {
        return Err(ShellError::Syntax(
            "script contains a NUL character".to_owned(),
        ));
    }
    if expansion_markers(text) > MAX_EXPANSION_MARKERS {
        return Err(ShellError::TooComplex);
    }
    let commands = simple_commands(text, Grammar::Bash)?;
    if simple_commands(text, Grammar::Posix).ok().as_ref() != Some(&commands) {
        return Err(ShellError::Unsupported(
            "syntax that bash and POSIX sh read differently (such as `|&`, or `&>` before \
             arguments)"
                .to_owned(),
        ));
    }
    for command in commands {
        let nested = inspect(command.argv.get(command.assignments..).unwrap_or_default())?;
        out.push(command.argv);
        for script in nested {
            collect_script(&script, depth + 1, out)?;
        }
    }
    Ok(())
}

/// The grammar a script is parsed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grammar {
    /// bash, with its extensions.
    Bash,
    /// POSIX sh (dash and friends).
    Posix,
}

/// One simple command with literal words.
#[derive(Debug, PartialEq, Eq)]
struct SimpleCommand {
    /// Assignments, command name and arguments.
    argv: Vec<String>,
    /// How many leading `argv` elements are assignments.
    assignments: usize,
}

/// Parses `text` and lists its simple commands, without looking into the
/// scripts they run.
fn simple_commands(text: &str, grammar: Grammar) -> Result<Vec<SimpleCommand>, ShellError> {
    let options = parser_options(grammar);
    let tokens =
        guarded(|| brush_parser::uncached_tokenize_str(text, &options.tokenizer_options()))?
            .map_err(|e| ShellError::Syntax(e.to_string()))?;
    check_tokens(&tokens)?;
    let program =
        guarded(|| brush_parser::parse_tokens(&tokens, &options))?.map_err(syntax_error)?;
    let mut collector = Collector::default();
    for list in &program.complete_commands {
        collector.list(list)?;
    }
    Ok(collector.commands)
}

/// Collects simple commands while walking the syntax tree.
#[derive(Default)]
struct Collector {
    commands: Vec<SimpleCommand>,
}

impl Collector {
    fn list(&mut self, list: &ast::CompoundList) -> Result<(), ShellError> {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first)?;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline) => {
                        self.pipeline(pipeline)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) -> Result<(), ShellError> {
        let before = self.commands.len();
        let mut commands = pipeline.seq.iter();
        let first = commands.next();
        if let Some(command) = first {
            self.command(command)?;
        }
        let first_is_simple_command =
            matches!(first, Some(ast::Command::Simple(_))) && self.commands.len() == before + 1;
        for command in commands {
            self.command(command)?;
        }
        // `time` is a keyword in bash but `/usr/bin/time` in POSIX sh: make it
        // the command name either way.
        let time: &[&str] = match pipeline.timed {
            None => return Ok(()),
            Some(ast::PipelineTimed::Timed(_)) => &["time"],
            Some(ast::PipelineTimed::TimedWithPosixOutput(_)) => &["time", "-p"],
        };
        let time = time.iter().map(|word| (*word).to_owned());
        if first.is_none() {
            self.commands.push(SimpleCommand {
                argv: time.collect(),
                assignments: 0,
            });
        } else if let Some(command) = self
            .commands
            .get_mut(before)
            .filter(|_| first_is_simple_command)
        {
            command.argv.splice(0..0, time);
            command.assignments = 0;
        } else {
            return Err(ShellError::Unsupported(
                "`time` before a compound command".to_owned(),
            ));
        }
        Ok(())
    }

    fn command(&mut self, command: &ast::Command) -> Result<(), ShellError> {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound)?;
                check_redirects(redirects.as_ref())
            }
            ast::Command::Function(function) => {
                literal(&function.fname, WordContext::Argument)?;
                self.compound(&function.body.0)?;
                check_redirects(function.body.1.as_ref())
            }
            ast::Command::ExtendedTest(..) => Err(unsupported_extended_test()),
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) -> Result<(), ShellError> {
        match compound {
            ast::CompoundCommand::Arithmetic(_) => Err(unsupported_arithmetic()),
            ast::CompoundCommand::ArithmeticForClause(_) => Err(ShellError::Unsupported(
                "arithmetic loop `for (( … ))`".to_owned(),
            )),
            ast::CompoundCommand::BraceGroup(group) => self.list(&group.list),
            ast::CompoundCommand::Subshell(subshell) => self.list(&subshell.list),
            ast::CompoundCommand::ForClause(clause) => {
                for value in clause.values.iter().flatten() {
                    literal(value, WordContext::Argument)?;
                }
                self.list(&clause.body.list)
            }
            ast::CompoundCommand::CaseClause(clause) => {
                literal(&clause.value, WordContext::Argument)?;
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        literal(pattern, WordContext::Pattern)?;
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body)?;
                    }
                }
                Ok(())
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.list(&clause.condition)?;
                self.list(&clause.then)?;
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.list(condition)?;
                    }
                    self.list(&branch.body)?;
                }
                Ok(())
            }
            ast::CompoundCommand::WhileClause(clause)
            | ast::CompoundCommand::UntilClause(clause) => {
                self.list(&clause.0)?;
                self.list(&clause.1.list)
            }
            ast::CompoundCommand::Coprocess(_) => {
                Err(ShellError::Unsupported("coprocess `coproc`".to_owned()))
            }
        }
    }

    fn simple(&mut self, command: &ast::SimpleCommand) -> Result<(), ShellError> {
        let mut argv = Vec::new();
        for item in command.prefix.iter().flat_map(|prefix| &prefix.0) {
            argv.extend(item_word(item)?);
        }
        // The prefix holds only assignments and redirections.
        let assignments = argv.len();
        if let Some(word) = &command.word_or_name {
            argv.push(literal(word, WordContext::Argument)?);
        }
        for item in command.suffix.iter().flat_map(|suffix| &suffix.0) {
            argv.extend(item_word(item)?);
        }
        // Only redirections (already checked): nothing runs.
        if !argv.is_empty() {
            self.commands.push(SimpleCommand { argv, assignments });
        }
        Ok(())
    }
}

/// Checks a prefix or suffix item and returns its literal word, if it has one.
fn item_word(item: &ast::CommandPrefixOrSuffixItem) -> Result<Option<String>, ShellError> {
    match item {
        ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
            check_redirect(redirect)?;
            Ok(None)
        }
        ast::CommandPrefixOrSuffixItem::Word(word) => {
            literal(word, WordContext::Argument).map(Some)
        }
        ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
            match (&assignment.name, &assignment.value) {
                (ast::AssignmentName::VariableName(_), ast::AssignmentValue::Scalar(_)) => {
                    literal(word, WordContext::Argument).map(Some)
                }
                // The subscript is evaluated as arithmetic, which can run commands.
                (ast::AssignmentName::ArrayElementName(..), _) => Err(ShellError::Unsupported(
                    format!("array element assignment `{}`", snippet(&word.value)),
                )),
                (_, ast::AssignmentValue::Array(_)) => Err(ShellError::Unsupported(format!(
                    "array assignment `{}`",
                    snippet(&word.value)
                ))),
            }
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
            Err(ShellError::NotLiteral {
                word: snippet(&format!("{kind}{subshell}")),
                why: "process substitution",
            })
        }
    }
}

fn check_redirects(redirects: Option<&ast::RedirectList>) -> Result<(), ShellError> {
    for redirect in redirects.iter().flat_map(|list| &list.0) {
        check_redirect(redirect)?;
    }
    Ok(())
}

/// Allows only fd duplication/closing and `/dev/null`.
pub(crate) fn check_redirect(redirect: &ast::IoRedirect) -> Result<(), ShellError> {
    let denied = || ShellError::Redirection(snippet(&redirect.to_string()));
    let allowed = match redirect {
        ast::IoRedirect::File(_, _, target) => match target {
            ast::IoFileRedirectTarget::Filename(word) => {
                literal(word, WordContext::Argument)? == DEV_NULL
            }
            ast::IoFileRedirectTarget::Fd(_) => true,
            // `>&word` writes to the file `word` unless it is a number or `-`.
            ast::IoFileRedirectTarget::Duplicate(word) => {
                let value = literal(word, WordContext::Argument)?;
                is_fd_duplication(&value) || value == DEV_NULL
            }
            ast::IoFileRedirectTarget::ProcessSubstitution(..) => {
                return Err(ShellError::NotLiteral {
                    word: snippet(&redirect.to_string()),
                    why: "process substitution",
                });
            }
        },
        ast::IoRedirect::OutputAndError(word, _) => {
            literal(word, WordContext::Argument)? == DEV_NULL
        }
        ast::IoRedirect::HereDocument(..) | ast::IoRedirect::HereString(..) => false,
    };
    if allowed { Ok(()) } else { Err(denied()) }
}

/// `-`, `N` or `N-` (duplicate, or move, a file descriptor).
pub(crate) fn is_fd_duplication(target: &str) -> bool {
    let digits = target.strip_suffix('-').unwrap_or(target);
    target == "-" || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Where a word appears, which decides whether glob characters are literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordContext {
    /// Subject to pathname and brace expansion (arguments, redirection targets).
    Argument,
    /// A `case` pattern: glob characters match, nothing is expanded.
    Pattern,
}

/// The value of `word` after quote removal, if it is literal.
fn literal(word: &ast::Word, context: WordContext) -> Result<String, ShellError> {
    let raw = word.value.as_str();
    let not_literal = |why| ShellError::NotLiteral {
        word: snippet(raw),
        why,
    };
    if raw.contains(['$', '`']) && brackets(raw) > MAX_WORD_BRACKETS {
        return Err(ShellError::TooComplex);
    }
    // The word parser panics on tilde prefixes with huge numbers (`~+99…9`).
    if raw.contains('~') && has_long_digit_run(raw) {
        return Err(not_literal("tilde expansion"));
    }
    let pieces = guarded(|| brush_parser::word::parse(raw, &parser_options(Grammar::Bash)))?
        .map_err(|e| ShellError::Syntax(snippet(&e.to_string())))?;
    let mut chars = Vec::with_capacity(raw.len());
    for piece in &pieces {
        push_piece(&piece.piece, false, &mut chars).map_err(not_literal)?;
    }
    check_unquoted(&chars, context).map_err(not_literal)?;
    Ok(chars.into_iter().map(|(c, _)| c).collect())
}

/// Appends the characters of a literal word piece, each with whether it was
/// quoted; fails with the reason when the piece is not literal.
fn push_piece(
    piece: &WordPiece,
    in_double_quotes: bool,
    out: &mut Vec<(char, bool)>,
) -> Result<(), &'static str> {
    match piece {
        WordPiece::Text(text) => {
            // A lone `$` is literal in bash, but nothing is lost by refusing it.
            if text.contains(['$', '`']) {
                return Err("`$` outside single quotes");
            }
            out.extend(text.chars().map(|c| (c, in_double_quotes)));
        }
        WordPiece::SingleQuotedText(text) => out.extend(text.chars().map(|c| (c, true))),
        WordPiece::DoubleQuotedSequence(inner) => {
            for piece in inner {
                push_piece(&piece.piece, true, out)?;
            }
        }
        WordPiece::EscapeSequence(escape) => {
            // `\x` is a quoted `x`; backslash-newline is a line continuation.
            let mut escaped = escape.chars().skip(1);
            match escaped.next() {
                Some('\n') | None => {}
                Some(c) => out.push((c, true)),
            }
            out.extend(escaped.map(|c| (c, true)));
        }
        WordPiece::AnsiCQuotedText(_) => return Err("ansi-c quoting `$'…'`"),
        WordPiece::GettextDoubleQuotedSequence(_) => return Err("locale quoting `$\"…\"`"),
        WordPiece::TildeExpansion(_) => return Err("tilde expansion"),
        WordPiece::ParameterExpansion(_) => return Err("parameter expansion"),
        WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
            return Err("command substitution");
        }
        WordPiece::ArithmeticExpression(_) => return Err("arithmetic expansion"),
    }
    Ok(())
}

/// Rejects unquoted characters that the shell would expand.
fn check_unquoted(chars: &[(char, bool)], context: WordContext) -> Result<(), &'static str> {
    let argument = context == WordContext::Argument;
    let last_bracket_close = chars.iter().rposition(|&(c, _)| c == ']');
    let mut seen_equals = false;
    let mut previous: Option<char> = None;
    for (index, &(c, quoted)) in chars.iter().enumerate() {
        if !quoted {
            match c {
                '*' | '?' if argument => return Err("glob pattern"),
                '[' if argument && last_bracket_close.is_some_and(|close| close > index) => {
                    return Err("glob pattern");
                }
                '(' | ')' => return Err("extended glob pattern"),
                // `~` expands at the start, and after `=` or `:` in words that
                // look like assignments.
                '~' if index == 0
                    || previous == Some('=')
                    || (previous == Some(':') && seen_equals) =>
                {
                    return Err("tilde expansion");
                }
                _ => {}
            }
        }
        seen_equals |= c == '=';
        previous = Some(c);
    }
    // zsh ends a brace group at `}` even where bash reads an argument.
    if argument && chars == [('}', false)] {
        return Err("closing brace");
    }
    if argument && has_brace_expansion(chars) {
        return Err("brace expansion");
    }
    // zsh replaces a leading `=cmd` with the path of `cmd`.
    if argument && chars.first() == Some(&('=', false)) && chars.iter().any(|&(c, _)| c != '=') {
        return Err("zsh `=command` expansion");
    }
    Ok(())
}

/// An unquoted `{`, then an unquoted `,` or `..`, then an unquoted `}`.
fn has_brace_expansion(chars: &[(char, bool)]) -> bool {
    let Some(open) = chars.iter().position(|&c| c == ('{', false)) else {
        return false;
    };
    let mut separator = false;
    let mut previous_dot = false;
    for &(c, quoted) in chars.iter().skip(open + 1) {
        if !quoted {
            match c {
                ',' => separator = true,
                '.' if previous_dot => separator = true,
                '}' if separator => return true,
                _ => {}
            }
        }
        previous_dot = c == '.' && !quoted;
    }
    false
}

/// Checks builtins that evaluate their arguments, and returns the scripts
/// that `command` (argv without leading assignments) runs.
fn inspect(command: &[String]) -> Result<Vec<String>, ShellError> {
    let command = skip_wrappers(command);
    let Some((name, args)) = command.split_first() else {
        return Ok(Vec::new());
    };
    check_builtin(name, args)?;
    Ok(match name.as_str() {
        "eval" => {
            let args = match args.split_first() {
                Some((first, rest)) if first == "--" => rest,
                _ => args,
            };
            if args.is_empty() {
                Vec::new()
            } else {
                vec![args.join(" ")]
            }
        }
        "trap" => trap_action(args).into_iter().collect(),
        "alias" => args
            .iter()
            .filter(|arg| !arg.starts_with('-'))
            .filter_map(|arg| arg.split_once('=').map(|(_, value)| value.to_owned()))
            .collect(),
        _ if SHELLS.contains(&basename(name)) => shell_script(args)?.into_iter().collect(),
        _ => Vec::new(),
    })
}

/// Rejects builtin invocations that evaluate literal text: as arithmetic,
/// which runs command substitutions in array subscripts (`let`, integer and
/// nameref declarations, subscripted variable names), or as commands
/// (`compgen`, `mapfile -C`).
fn check_builtin(name: &str, args: &[String]) -> Result<(), ShellError> {
    let no_subscript = |name: &str| {
        if name.contains('[') {
            Err(ShellError::Unsupported(format!(
                "array subscript in variable name `{}`",
                snippet(name)
            )))
        } else {
            Ok(())
        }
    };
    let is_option = |arg: &str| arg.len() > 1 && arg.starts_with(['-', '+']);
    match name {
        "let" | "integer" | "float" => {
            return Err(ShellError::Unsupported(format!(
                "arithmetic builtin `{name}`"
            )));
        }
        "declare" | "typeset" | "local" | "readonly" | "export" => {
            for arg in args {
                if is_option(arg)
                    && matches!(name, "declare" | "typeset" | "local")
                    && arg.contains(['i', 'n'])
                {
                    return Err(ShellError::Unsupported(format!(
                        "integer or reference declaration `{name} {}`",
                        snippet(arg)
                    )));
                }
                no_subscript(arg.split('=').next().unwrap_or_default())?;
            }
        }
        // `compgen -W` expands its word list; `-C` runs a command.
        "compgen" | "complete" => {
            return Err(ShellError::Unsupported(format!(
                "`{name}` (it evaluates its arguments)"
            )));
        }
        "mapfile" | "readarray" if args.iter().any(|arg| is_option(arg) && arg.contains('C')) => {
            return Err(ShellError::Unsupported(format!("a `{name} -C` callback")));
        }
        "unset" | "read" | "mapfile" | "readarray" | "getopts" | "wait" => {
            for arg in args {
                no_subscript(arg)?;
            }
        }
        "printf" | "test" | "[" => {
            // `printf -v NAME`, `test -v NAME`, `test -R NAME`.
            let flags: &[&str] = if name == "printf" {
                &["-v"]
            } else {
                &["-v", "-R"]
            };
            let mut previous = "";
            for arg in args {
                if flags.contains(&previous) {
                    no_subscript(arg)?;
                }
                if name == "printf"
                    && let Some(attached) = arg.strip_prefix("-v")
                {
                    no_subscript(attached)?;
                }
                previous = arg;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The action of `trap ACTION SIGNAL…`, if one is set.
fn trap_action(args: &[String]) -> Option<String> {
    let args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        // `-l`, `-p`, `-P` only print.
        Some((first, _)) if first.starts_with('-') && first.len() > 1 => return None,
        _ => args,
    };
    let action = args.first()?;
    // `-` resets; a leading number means every operand is a signal.
    if action == "-" || (!action.is_empty() && action.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    Some(action.clone())
}

/// The script of `SHELL [OPTION…] -c SCRIPT …`, given the arguments after the
/// shell's name.
fn shell_script(args: &[String]) -> Result<Option<String>, ShellError> {
    let mut c_flag = false;
    let mut unsure: Option<&str> = None;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        index += 1;
        if arg == "--" || arg == "-" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if SHELL_LONG_OPTIONS.contains(&long) {
                index += 1;
            } else if !SHELL_LONG_FLAGS.contains(&long) {
                unsure = unsure.or(Some(arg));
            }
            continue;
        }
        let Some(flags) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+')) else {
            // The first operand: the script when `-c` was given.
            index -= 1;
            break;
        };
        for flag in flags.chars() {
            match flag {
                'c' => c_flag = true,
                'o' | 'O' => index += 1,
                _ if SHELL_FLAGS.contains(flag) => {}
                _ => unsure = unsure.or(Some(arg)),
            }
        }
    }
    // After an option we do not know, a later `-c` may still belong to the
    // shell (`zsh --emulate sh -c …`).
    let later_c_flag = || {
        args.iter()
            .skip(index)
            .any(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c'))
    };
    if !c_flag && (unsure.is_none() || !later_c_flag()) {
        return Ok(None);
    }
    if let Some(option) = unsure {
        return Err(ShellError::Unsupported(format!(
            "shell option `{}` together with `-c`",
            snippet(option)
        )));
    }
    Ok(args.get(index).cloned())
}

/// Skips commands that run their arguments as a command (`env X=1 sh …`).
fn skip_wrappers(mut command: &[String]) -> &[String] {
    for _ in 0..MAX_WRAPPERS {
        let Some((name, args)) = command.split_first() else {
            break;
        };
        let rest = match basename(name) {
            "exec" => skip_options(args, &["-c", "-l", "-cl", "-lc"], &["-a"]),
            "command" => skip_options(args, &["-p"], &[]),
            "builtin" => skip_options(args, &[], &[]),
            "time" => skip_options(args, &["-p"], &[]),
            "noglob" | "nocorrect" => Some(args),
            "nohup" => skip_options(args, &[], &[]),
            "busybox" => Some(args),
            "env" => skip_env_options(args),
            _ => break,
        };
        // An option we do not know: give up rather than guess.
        let Some(rest) = rest else {
            return &[];
        };
        command = rest;
    }
    command
}

/// Skips the given options of a wrapper; `None` on any other option.
fn skip_options<'a>(
    mut args: &'a [String],
    flags: &[&str],
    with_value: &[&str],
) -> Option<&'a [String]> {
    while let Some((first, rest)) = args.split_first() {
        if first == "--" {
            return Some(rest);
        } else if flags.contains(&first.as_str()) {
            args = rest;
        } else if with_value.contains(&first.as_str()) {
            args = rest.get(1..)?;
        } else if first.starts_with('-') && first.len() > 1 {
            return None;
        } else {
            break;
        }
    }
    Some(args)
}

/// Skips the options and `NAME=VALUE` operands of `env`.
fn skip_env_options(mut args: &[String]) -> Option<&[String]> {
    while let Some((first, rest)) = args.split_first() {
        match first.as_str() {
            "--" => return Some(rest),
            "-" | "-i" | "--ignore-environment" => args = rest,
            "-u" | "--unset" | "-C" | "--chdir" => args = rest.get(1..)?,
            option if option.starts_with("--unset=") || option.starts_with("--chdir=") => {
                args = rest;
            }
            option if option.starts_with('-') => return None,
            assignment if assignment.contains('=') => args = rest,
            _ => break,
        }
    }
    Some(args)
}

/// The last path component of a command name.
pub(crate) fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Bounds the parser's work before it runs: rejects here-documents, `((`
/// and `[[`, huge fd numbers, words the word parser would recurse deeply on,
/// and nesting deeper than [`MAX_NESTING`].
///
/// The depth is over-approximated: every opener token counts, and a closer
/// only cancels the matching opener on top when it stands where a command
/// starts (so `echo fi` closes nothing).
fn check_tokens(tokens: &[Token]) -> Result<(), ShellError> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Open {
        Paren,
        Brace,
        If,
        Loop,
        Case,
        Coproc,
    }
    let mut stack = Vec::new();
    let mut command_start = true;
    let mut previous: Option<&Token> = None;
    for (index, token) in tokens.iter().enumerate() {
        match token {
            Token::Operator(op, _) => {
                match op.as_str() {
                    "<<" | "<<-" | "<<<" => {
                        let tag = tokens.get(index + 1).map_or("", Token::to_str);
                        return Err(ShellError::Redirection(snippet(&format!("{op}{tag}"))));
                    }
                    "(" => {
                        if matches!(previous, Some(Token::Operator(p, _)) if p == "(") {
                            return Err(unsupported_arithmetic());
                        }
                        stack.push(Open::Paren);
                    }
                    ")" if stack.last() == Some(&Open::Paren) => {
                        stack.pop();
                    }
                    _ => {}
                }
                // `12345678901>x`: the parser panics on fd numbers beyond `i32`.
                if let Some(Token::Word(word, _)) = previous
                    && op.starts_with(['<', '>'])
                    && word.len() > 9
                    && word.bytes().all(|b| b.is_ascii_digit())
                {
                    return Err(ShellError::Syntax(format!(
                        "file descriptor `{}` is too large",
                        snippet(word)
                    )));
                }
                command_start = matches!(
                    op.as_str(),
                    ";" | "&" | "&&" | "||" | "|" | "|&" | "\n" | ";;" | ";&" | ";;&" | "(" | ")"
                );
            }
            Token::Word(word, _) => {
                if word.contains(['$', '`']) && brackets(word) > MAX_WORD_BRACKETS {
                    return Err(ShellError::TooComplex);
                }
                let top = stack.last().copied();
                match word.as_str() {
                    "[[" => return Err(unsupported_extended_test()),
                    // bash reads a function definition, dash a command named `function`.
                    "function" if command_start => {
                        return Err(ShellError::Unsupported("the `function` keyword".to_owned()));
                    }
                    "{" => stack.push(Open::Brace),
                    "if" => stack.push(Open::If),
                    "while" | "until" | "for" | "select" => stack.push(Open::Loop),
                    "case" => stack.push(Open::Case),
                    "coproc" => stack.push(Open::Coproc),
                    "}" if command_start && top == Some(Open::Brace) => _ = stack.pop(),
                    "fi" if command_start && top == Some(Open::If) => _ = stack.pop(),
                    "done" if command_start && top == Some(Open::Loop) => _ = stack.pop(),
                    "esac" if command_start && top == Some(Open::Case) => _ = stack.pop(),
                    _ => {}
                }
                command_start = command_start
                    && matches!(
                        word.as_str(),
                        "{" | "}"
                            | "!"
                            | "if"
                            | "then"
                            | "elif"
                            | "else"
                            | "fi"
                            | "while"
                            | "until"
                            | "do"
                            | "done"
                            | "esac"
                            | "time"
                            | "coproc"
                    );
            }
        }
        if stack.len() > MAX_NESTING {
            return Err(ShellError::TooComplex);
        }
        previous = Some(token);
    }
    Ok(())
}

/// Parser options for `grammar`; tilde expansion is reported at word start.
pub(crate) fn parser_options(grammar: Grammar) -> ParserOptions {
    ParserOptions {
        enable_extended_globbing: true,
        posix_mode: false,
        sh_mode: grammar == Grammar::Posix,
        tilde_expansion_at_word_start: true,
        tilde_expansion_after_colon: false,
        parser_impl: ParserImpl::Peg,
    }
}

/// Runs the parser, turning a panic inside it into a syntax error.
pub(crate) fn guarded<T>(parse: impl FnOnce() -> T) -> Result<T, ShellError> {
    catch_unwind(AssertUnwindSafe(parse))
        .map_err(|_| ShellError::Syntax("the shell parser failed on this script".to_owned()))
}

pub(crate) fn syntax_error(error: ParseError) -> ShellError {
    ShellError::Syntax(match error {
        ParseError::ParsingNear(position) => format!(
            "unexpected token at line {} column {}",
            position.line, position.column
        ),
        ParseError::ParsingAtEndOfInput => "unexpected end of script".to_owned(),
        ParseError::Tokenizing { inner, .. } => inner.to_string(),
    })
}

fn unsupported_arithmetic() -> ShellError {
    ShellError::Unsupported("arithmetic command `(( … ))`".to_owned())
}

fn unsupported_extended_test() -> ShellError {
    ShellError::Unsupported("extended test `[[ … ]]`".to_owned())
}

/// How many `$(`, `${` and `$[` sequences `text` contains.
pub(crate) fn expansion_markers(text: &str) -> usize {
    text.as_bytes()
        .windows(2)
        .filter(|pair| matches!(pair, [b'$', b'(' | b'{' | b'[']))
        .count()
}

/// How many `(`, `{` and `[` characters `text` contains.
pub(crate) fn brackets(text: &str) -> usize {
    text.chars()
        .filter(|c| matches!(c, '(' | '{' | '['))
        .count()
}

/// Whether `text` has a run of more digits than fit in a `u64`.
pub(crate) fn has_long_digit_run(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_digit())
        .any(|run| run.len() > 18)
}

/// `text`, shortened for an error message.
pub(crate) fn snippet(text: &str) -> String {
    if text.chars().count() <= MAX_SNIPPET_CHARS {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(MAX_SNIPPET_CHARS - 1).collect();
        short.push('…');
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Expected = Result<Vec<Vec<String>>, ShellError>;

    fn ok(commands: &[&[&str]]) -> Expected {
        Ok(commands
            .iter()
            .map(|argv| argv.iter().map(|s| (*s).to_owned()).collect())
            .collect())
    }

    fn not_literal(word: &str, why: &'static str) -> Expected {
        Err(ShellError::NotLiteral {
            word: word.to_owned(),
            why,
        })
    }

    fn redirection(redirect: &str) -> Expected {
        Err(ShellError::Redirection(redirect.to_owned()))
    }

    fn unsupported(what: &str) -> Expected {
        Err(ShellError::Unsupported(what.to_owned()))
    }

    const DIFFERS: &str = "syntax that bash and POSIX sh read differently (such as `|&`, or `&>` \
                           before arguments)";

    fn syntax(message: &str) -> Expected {
        Err(ShellError::Syntax(message.to_owned()))
    }

    /// Single-quotes `text` for the shell.
    fn quote(text: &str) -> String {
        format!("'{}'", text.replace('\'', r"'\''"))
    }

    #[test]
    fn table() {
        let cases: Vec<(&str, Expected)> = vec![
            // Plain commands and lists.
            ("git status", ok(&[&["git", "status"]])),
            (
                "git status && git log",
                ok(&[&["git", "status"], &["git", "log"]]),
            ),
            ("make || echo failed", ok(&[&["make"], &["echo", "failed"]])),
            ("cd src; ls -la", ok(&[&["cd", "src"], &["ls", "-la"]])),
            (
                "git log | head -n 5",
                ok(&[&["git", "log"], &["head", "-n", "5"]]),
            ),
            (
                "git status\ngit diff\n",
                ok(&[&["git", "status"], &["git", "diff"]]),
            ),
            (
                "git status; rm -rf /",
                ok(&[&["git", "status"], &["rm", "-rf", "/"]]),
            ),
            ("git fetch &", ok(&[&["git", "fetch"]])),
            ("sleep 1 & wait", ok(&[&["sleep", "1"], &["wait"]])),
            ("! git diff --quiet", ok(&[&["git", "diff", "--quiet"]])),
            ("time git status", ok(&[&["time", "git", "status"]])),
            (
                "time -p FOO=1 make | cat",
                ok(&[&["time", "-p", "FOO=1", "make"], &["cat"]]),
            ),
            (
                "time { make; }",
                unsupported("`time` before a compound command"),
            ),
            ("git status |& cat", unsupported(DIFFERS)),
            ("git status &>/dev/null rm -rf /", unsupported(DIFFERS)),
            (
                "function f { make; }",
                unsupported("the `function` keyword"),
            ),
            (
                "{ git status } rm -rf / ; }",
                not_literal("}", "closing brace"),
            ),
            // Compound commands.
            ("(cd sub && make)", ok(&[&["cd", "sub"], &["make"]])),
            (
                "{ git status; git log; }",
                ok(&[&["git", "status"], &["git", "log"]]),
            ),
            (
                "if test -f x; then cat x; elif true; then :; else echo no; fi",
                ok(&[
                    &["test", "-f", "x"],
                    &["cat", "x"],
                    &["true"],
                    &[":"],
                    &["echo", "no"],
                ]),
            ),
            (
                "while true; do sleep 1; done",
                ok(&[&["true"], &["sleep", "1"]]),
            ),
            ("until false; do date; done", ok(&[&["false"], &["date"]])),
            ("for x in a b; do make; done", ok(&[&["make"]])),
            (
                "case x in a|b) echo ab;; *) echo other;; esac",
                ok(&[&["echo", "ab"], &["echo", "other"]]),
            ),
            ("f() { rm -rf /; }; f", ok(&[&["rm", "-rf", "/"], &["f"]])),
            // Expansions.
            (
                "echo $(whoami)",
                not_literal("$(whoami)", "command substitution"),
            ),
            (
                "echo `whoami`",
                not_literal("`whoami`", "command substitution"),
            ),
            (
                "$(printf foo)vim",
                not_literal("$(printf foo)vim", "command substitution"),
            ),
            ("echo $HOME", not_literal("$HOME", "parameter expansion")),
            (
                "echo ${HOME}",
                not_literal("${HOME}", "parameter expansion"),
            ),
            (
                "echo $((1+1))",
                not_literal("$((1+1))", "arithmetic expansion"),
            ),
            (
                "for x in a b; do echo $x; done",
                not_literal("$x", "parameter expansion"),
            ),
            (
                "echo $'a\\nb'",
                not_literal("$'a\\nb'", "ansi-c quoting `$'…'`"),
            ),
            ("cat <(ls)", not_literal("<( ls )", "process substitution")),
            // Quoting.
            (
                "git log --format='%h %s'",
                ok(&[&["git", "log", "--format=%h %s"]]),
            ),
            (
                "echo \"hello world\" 'single' mixed\"dq\"'sq'\\!",
                ok(&[&["echo", "hello world", "single", "mixeddqsq!"]]),
            ),
            ("ls my\\ file.txt", ok(&[&["ls", "my file.txt"]])),
            (
                "echo \"$HOME\"",
                not_literal("\"$HOME\"", "parameter expansion"),
            ),
            ("echo '$HOME'", ok(&[&["echo", "$HOME"]])),
            ("echo \"\\$HOME\"", ok(&[&["echo", "$HOME"]])),
            (
                "echo 'it'\\''s' \"a\\\"b\" \"c\\d\"",
                ok(&[&["echo", "it's", "a\"b", "c\\d"]]),
            ),
            (
                "git commit -m 'line one\nline two'",
                ok(&[&["git", "commit", "-m", "line one\nline two"]]),
            ),
            ("echo a\\\nb", ok(&[&["echo", "ab"]])),
            // Globs, tildes and braces.
            ("ls *.rs", not_literal("*.rs", "glob pattern")),
            ("ls src/[ab].rs", not_literal("src/[ab].rs", "glob pattern")),
            (
                "ls '*.rs' \\*.rs \"?\"",
                ok(&[&["ls", "*.rs", "*.rs", "?"]]),
            ),
            ("[ -f x ]", ok(&[&["[", "-f", "x", "]"]])),
            ("cat ~/.bashrc", not_literal("~/.bashrc", "tilde expansion")),
            ("cat ~root/x", not_literal("~root/x", "tilde expansion")),
            ("echo a=~/x", not_literal("a=~/x", "tilde expansion")),
            (
                "PATH=/bin:~/bin make",
                not_literal("PATH=/bin:~/bin", "tilde expansion"),
            ),
            (
                "git log HEAD~3 && scp host:~/x .",
                ok(&[&["git", "log", "HEAD~3"], &["scp", "host:~/x", "."]]),
            ),
            ("echo {a,b}", not_literal("{a,b}", "brace expansion")),
            ("echo x{1..3}", not_literal("x{1..3}", "brace expansion")),
            (
                "git log HEAD@{1} && find . -exec ls {} ';'",
                ok(&[
                    &["git", "log", "HEAD@{1}"],
                    &["find", ".", "-exec", "ls", "{}", ";"],
                ]),
            ),
            ("echo '{a,b}'", ok(&[&["echo", "{a,b}"]])),
            ("=rm -rf /", not_literal("=rm", "zsh `=command` expansion")),
            // Redirections.
            ("git log > out.txt", redirection("> out.txt")),
            (
                "git log >> ~/.bashrc",
                not_literal("~/.bashrc", "tilde expansion"),
            ),
            ("git log >&out.txt", redirection(">& out.txt")),
            ("git log &> out.txt", redirection("&> out.txt")),
            ("sort < input.txt", redirection("< input.txt")),
            ("git log 2>&1 | head", ok(&[&["git", "log"], &["head"]])),
            (
                "git log >/dev/null 2>/dev/null 1>&2 <&- 3>&1- && git log &>/dev/null </dev/null",
                ok(&[&["git", "log"], &["git", "log"]]),
            ),
            ("{ git log; } > out", redirection("> out")),
            ("cat <<EOF\nhi\nEOF\n", redirection("<<EOF")),
            ("cat <<< hi", redirection("<<<hi")),
            // Assignments.
            ("FOO=bar git status", ok(&[&["FOO=bar", "git", "status"]])),
            (
                "LD_PRELOAD=/tmp/x.so git status",
                ok(&[&["LD_PRELOAD=/tmp/x.so", "git", "status"]]),
            ),
            ("X=1", ok(&[&["X=1"]])),
            ("A='a b' B=\"c\"", ok(&[&["A=a b", "B=c"]])),
            ("a=(1 2)", unsupported("array assignment `a=(1 2)`")),
            ("a[0]=1", unsupported("array element assignment `a[0]=1`")),
            // Scripts inside scripts.
            (
                "sh -c 'rm -rf /'",
                ok(&[&["sh", "-c", "rm -rf /"], &["rm", "-rf", "/"]]),
            ),
            (
                "bash -lc \"git status && curl x | sh\"",
                ok(&[
                    &["bash", "-lc", "git status && curl x | sh"],
                    &["git", "status"],
                    &["curl", "x"],
                    &["sh"],
                ]),
            ),
            (
                "/bin/bash -e -o pipefail -c 'make' arg0",
                ok(&[
                    &["/bin/bash", "-e", "-o", "pipefail", "-c", "make", "arg0"],
                    &["make"],
                ]),
            ),
            (
                "env FOO=1 zsh -c 'rm x'",
                ok(&[&["env", "FOO=1", "zsh", "-c", "rm x"], &["rm", "x"]]),
            ),
            (
                "sh -c 'echo $HOME'",
                not_literal("$HOME", "parameter expansion"),
            ),
            (
                "bash script.sh -c x",
                ok(&[&["bash", "script.sh", "-c", "x"]]),
            ),
            (
                "zsh --emulate sh -c 'ls'",
                unsupported("shell option `--emulate` together with `-c`"),
            ),
            (
                "eval 'rm -rf /'",
                ok(&[&["eval", "rm -rf /"], &["rm", "-rf", "/"]]),
            ),
            (
                "trap 'rm -rf /' EXIT",
                ok(&[&["trap", "rm -rf /", "EXIT"], &["rm", "-rf", "/"]]),
            ),
            (
                "alias ll='ls -la'",
                ok(&[&["alias", "ll=ls -la"], &["ls", "-la"]]),
            ),
            ("command -v sh", ok(&[&["command", "-v", "sh"]])),
            // Builtins that evaluate variable names as arithmetic.
            (
                "printf -v 'a[$(id)]' x",
                unsupported("array subscript in variable name `a[$(id)]`"),
            ),
            (
                "[ -v 'a[$(id)]' ]",
                unsupported("array subscript in variable name `a[$(id)]`"),
            ),
            (
                "read 'a[$(id)]'",
                unsupported("array subscript in variable name `a[$(id)]`"),
            ),
            (
                "declare 'a[$(id)]=1'",
                unsupported("array subscript in variable name `a[$(id)]`"),
            ),
            ("let x=1", unsupported("arithmetic builtin `let`")),
            (
                "compgen -W 'a b' x",
                unsupported("`compgen` (it evaluates its arguments)"),
            ),
            (
                "mapfile -t -C 'rm -rf /' lines",
                unsupported("a `mapfile -C` callback"),
            ),
            (
                "declare -i x=y",
                unsupported("integer or reference declaration `declare -i`"),
            ),
            (
                "printf '[%s]\\n' x && export A='[1]'",
                ok(&[&["printf", "[%s]\\n", "x"], &["export", "A=[1]"]]),
            ),
            // Bash constructs that evaluate text as code.
            ("[[ -f x ]]", unsupported("extended test `[[ … ]]`")),
            ("(( x = 1 ))", unsupported("arithmetic command `(( … ))`")),
            ("coproc cat", unsupported("coprocess `coproc`")),
            // Empty scripts, comments and syntax errors.
            ("", ok(&[])),
            ("  \n\t\n", ok(&[])),
            ("# just a comment\n", ok(&[])),
            ("git status # comment", ok(&[&["git", "status"]])),
            ("echo a#b", ok(&[&["echo", "a#b"]])),
            (
                "echo 'unterminated",
                syntax("unterminated single quote at 1,6"),
            ),
            ("git status &&", syntax("unexpected end of script")),
            ("fi", syntax("unexpected end of script")),
            ("echo a )", syntax("unexpected token at line 1 column 8")),
            ("echo a\0b", syntax("script contains a NUL character")),
            (
                "ls 12345678901>/dev/null",
                syntax("file descriptor `12345678901` is too large"),
            ),
            (
                "echo ~+12345678901234567890123",
                not_literal("~+12345678901234567890123", "tilde expansion"),
            ),
        ];
        assert!(cases.len() >= 40);
        let mismatches: Vec<String> = cases
            .iter()
            .filter_map(|(script, expected)| {
                let actual = shell_commands(script);
                (actual != *expected || shell_parses(script) != expected.is_ok())
                    .then(|| format!("{script:?}\n  expected {expected:?}\n  actual   {actual:?}"))
            })
            .collect();
        assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    }

    #[test]
    fn nested_shells_are_bounded() {
        let mut script = "rm -rf /".to_owned();
        for _ in 0..MAX_SCRIPT_DEPTH {
            script = format!("sh -c {}", quote(&script));
        }
        let commands = shell_commands(&script);
        assert_eq!(
            commands.as_ref().map(Vec::len),
            Ok(MAX_SCRIPT_DEPTH + 1),
            "{commands:?}"
        );
        assert_eq!(
            commands.as_ref().ok().and_then(|c| c.last()),
            Some(&vec!["rm".to_owned(), "-rf".to_owned(), "/".to_owned()])
        );
        let deeper = format!("sh -c {}", quote(&script));
        assert_eq!(shell_commands(&deeper), Err(ShellError::TooComplex));
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let subshells = format!("{}true{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(
            shell_commands(&subshells),
            Err(ShellError::Unsupported(
                "arithmetic command `(( … ))`".to_owned()
            ))
        );
        let spaced = format!("{}true{}", "( ".repeat(100), " )".repeat(100));
        assert!(!shell_parses(&spaced));
        let braces = format!("{}true{}", "{ ".repeat(100), "; }".repeat(100));
        assert_eq!(shell_commands(&braces), Err(ShellError::TooComplex));
        let mixed = format!("{}true{}", "( { ".repeat(50), "; } )".repeat(50));
        assert_eq!(shell_commands(&mixed), Err(ShellError::TooComplex));
        let ifs = format!("{}true{}", "if ".repeat(100), "; then :; fi".repeat(100));
        assert_eq!(shell_commands(&ifs), Err(ShellError::TooComplex));
        let substitutions = format!("echo {}x{}", "$(echo ".repeat(1000), ")".repeat(1000));
        assert_eq!(shell_commands(&substitutions), Err(ShellError::TooComplex));
        let parens = format!("echo $(echo {}x{})", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(shell_commands(&parens), Err(ShellError::TooComplex));
        let quoted = format!("echo '{}'", "${".repeat(1000));
        assert_eq!(shell_commands(&quoted), Err(ShellError::TooComplex));
        // At the limits: the tokenizer and word parser recurse on these.
        let n = MAX_EXPANSION_MARKERS;
        let parameters = format!("x={}x{}", "${a:-".repeat(n), "}".repeat(n));
        assert!(matches!(
            shell_commands(&parameters),
            Err(ShellError::NotLiteral {
                why: "parameter expansion",
                ..
            })
        ));
        let commands = format!("x={}x{}", "\"$(echo ".repeat(n), ")\"".repeat(n));
        assert!(matches!(
            shell_commands(&commands),
            Err(ShellError::NotLiteral {
                why: "command substitution",
                ..
            })
        ));
        let nested = format!(
            "{}{parameters}{}",
            "{ ( ".repeat(MAX_NESTING / 2),
            " ) ; }".repeat(MAX_NESTING / 2)
        );
        assert!(matches!(
            shell_commands(&nested),
            Err(ShellError::NotLiteral {
                why: "parameter expansion",
                ..
            })
        ));
        let b = MAX_WORD_BRACKETS;
        let brackets = format!("x=$(echo {}x{})", "( ".repeat(b - 1), " )".repeat(b - 1));
        assert!(matches!(
            shell_commands(&brackets),
            Err(ShellError::NotLiteral {
                why: "command substitution",
                ..
            })
        ));
        // Arguments that look like closers do not hide real nesting.
        let fake_closers = format!(
            "{}true{}",
            "{ echo } fi done; ".repeat(40),
            "; }".repeat(40)
        );
        assert_eq!(shell_commands(&fake_closers), Err(ShellError::TooComplex));
    }

    #[test]
    fn nesting_within_the_limit_parses() {
        let depth = MAX_NESTING / 2;
        let script = format!(
            "{}git status{}",
            "if true; then ( ".repeat(depth),
            " ); fi".repeat(depth)
        );
        let mut expected = vec![vec!["true".to_owned()]; depth];
        expected.push(vec!["git".to_owned(), "status".to_owned()]);
        assert_eq!(shell_commands(&script), Ok(expected));
    }

    #[test]
    fn large_scripts_are_bounded() {
        let flat = "git status && ls -la | grep x; ".repeat(2000);
        assert!(flat.len() < MAX_SCRIPT_BYTES);
        assert_eq!(shell_commands(&flat).map(|c| c.len()), Ok(6000));
        let huge = "x".repeat(MAX_SCRIPT_BYTES + 1);
        assert_eq!(shell_commands(&huge), Err(ShellError::TooComplex));
    }

    #[test]
    fn error_messages() {
        let messages: Vec<String> = ["echo $(id)", "git log > out", "[[ x ]]", "echo 'x"]
            .iter()
            .filter_map(|script| shell_commands(script).err())
            .map(|error| error.to_string())
            .collect();
        assert_eq!(
            messages,
            [
                "`$(id)` is not a literal word (command substitution)",
                "redirection `> out` is not allowed (only `/dev/null` and fd duplication are)",
                "extended test `[[ … ]]` is not supported",
                "shell syntax error: unterminated single quote at 1,6",
            ]
        );
    }
}
