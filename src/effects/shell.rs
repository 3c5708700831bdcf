//! Shell analysis: every command a script may run, what each one reads,
//! writes, deletes and fetches, and whether it runs code no rule can see.
//!
//! The script is parsed with [`brush_parser`] (behind the same guards as the
//! literal view in [`super::literal`]). Commands are found across lists,
//! pipelines, subshells, groups, loops, functions, `$(…)`, backticks, `<(…)`
//! and here-documents that expand; behind every wrapper the catalog knows
//! (kind `command`); inside literal scripts given to a `script` kind. Literal
//! `cd` moves the working folder: a `cd` that may fail leaves both folders
//! possible (`cd x; rm -rf .` may remove the folder it started in), and every
//! later relative path is resolved against each. A word with an expansion is a
//! pattern ([`Word::to_path`]) and makes its command inexact; quoted text, a
//! here-document's body and a variable's value are never read as commands.

use std::collections::{HashMap, HashSet};

use brush_parser::ast;
use brush_parser::word::{Parameter, ParameterExpr, TildeExpr, WordPiece, WordPieceWithSource};

use super::catalog::{Kind, Spec, assign};
use super::literal::{
    Grammar, MAX_NESTING, MAX_SCRIPT_BYTES, MAX_SCRIPT_DEPTH, guarded, parser_options, snippet,
};
use super::paths::{self, ANY_PATH};
use super::programs;
use super::urls;
use super::word::{Part, Word};
use super::{Command, Effects, Env, Reason};

/// Most commands listed for one call.
const MAX_COMMANDS: usize = 512;
/// Most working folders tracked at once; past it the folder is unknown.
const MAX_CWDS: usize = 8;
/// Most words looked at in one command.
const MAX_WORDS: usize = 4096;

/// Variables whose value a shell or a program evaluates as code or uses to
/// find the code it runs.
const CODE_VARS: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT_COMMAND",
    "PATH",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_TEMPLATE_DIR",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    // Other programs cargo runs.
    "RUSTDOC",
    "RUSTFMT",
    // A kubeconfig's `users[].user.exec` names a program kubectl runs.
    "KUBECONFIG",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "LESSOPEN",
    "LESSCLOSE",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "RUSTC_WRAPPER",
    "RUSTC",
    "MAKEFLAGS",
    "GOFLAGS",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "MAKE",
    "SHELL",
    // Where programs read their configuration, and so the commands it names
    // (`HOME=. git status` runs `./.gitconfig`'s `core.fsmonitor`).
    "HOME",
    "ZDOTDIR",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
    "CDPATH",
    "TAR_OPTIONS",
    "GCONV_PATH",
    // bash's table of command paths and aliases: `BASH_CMDS[ls]=/tmp/x` makes
    // `ls` run `/tmp/x`.
    "BASH_CMDS",
    "BASH_ALIASES",
    "LESS",
    "LESSKEY",
    "LESSKEYIN",
    "LESSKEY_CONTENT",
    "LESSKEY_SYSTEM",
    "RIPGREP_CONFIG_PATH",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_CEILING_DIRECTORIES",
    "PIP_CONFIG_FILE",
    "PYTHONUSERBASE",
    "PYTHONBREAKPOINT",
    "PYTHONINSPECT",
    "PERL5DB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "LUA_INIT",
    "PHPRC",
    "R_PROFILE_USER",
    "VIMINIT",
    "EXINIT",
    "MYVIMRC",
    "GVIMINIT",
    "INPUTRC",
    "BUNDLE_GEMFILE",
    "CARGO_HOME",
    // Build tools' own: the makefiles make reads first, Go's toolchain, module
    // proxy, caches and configuration file, compilers' dependency files,
    // Python's environment, rustup's toolchain, Mix's project file.
    "MAKEFILES",
    "GOROOT",
    "GOWORK",
    "GOENV",
    "GOTOOLCHAIN",
    "GOPROXY",
    "GOCACHE",
    "GOMODCACHE",
    "GOSUMDB",
    "GONOSUMDB",
    "GONOSUMCHECK",
    "GOINSECURE",
    "GOPRIVATE",
    "DEPENDENCIES_OUTPUT",
    "SUNPRO_DEPENDENCIES",
    "VIRTUAL_ENV",
    "PYTHONEXECUTABLE",
    "RUSTUP_TOOLCHAIN",
    "MIX_EXS",
    "MIX_ARCHIVES",
];
/// Prefixes of such variables: `GIT_TRACE…` writes the file it names;
/// `npm_config_…` and `CARGO_TARGET_…` set options that name programs
/// (`npm_config_script_shell`, `CARGO_TARGET_<triple>_RUNNER`).
const CODE_VAR_PREFIXES: &[&str] = &[
    "BASH_FUNC_",
    "GIT_CONFIG_KEY_",
    "GIT_CONFIG_VALUE_",
    "GIT_TRACE",
    "npm_config_",
    "NPM_CONFIG_",
    "CARGO_TARGET_",
    "CARGO_BUILD_",
    "LUA_INIT_",
    // Package managers' configuration namespaces (`YARN_YARN_PATH` names the
    // program Yarn runs, `PIP_INDEX_URL` where packages come from).
    "YARN_",
    "PIP_",
    "UV_",
    "POETRY_",
    "BUNDLE_",
    // Build and test tools' own namespaces: `CMAKE_TOOLCHAIN_FILE`,
    // `TOX_OVERRIDE`, `DOTNET_STARTUP_HOOKS`, `COVERAGE_PROCESS_START`,
    // `MAVEN_ARGS`, `DOCKER_HOST` (an ssh host) and `DOCKER_CONFIG` (helpers).
    "CMAKE_",
    "CTEST_",
    "TOX_",
    "NOX_",
    "DOTNET_",
    "MSBUILD",
    "COVERAGE_",
    "MAVEN_",
    "GRADLE_",
    "JEST_",
    "VITEST_",
    "MOCHA_",
    "DOCKER_",
    "CONTAINER_",
    "PODMAN_",
];
/// Suffixes of such variables: flags given to compilers and tools
/// (`RUSTFLAGS`, `CGO_CFLAGS`, `GNUMAKEFLAGS`, `MAVEN_OPTS`, `PYTEST_ADDOPTS`),
/// plugins and wrappers (`PYTEST_PLUGINS`, `RUSTC_WORKSPACE_WRAPPER`), search
/// paths (`COMPILER_PATH`, `CLASSPATH`, `GOPATH`) and tool homes
/// (`JAVA_HOME`, `GRADLE_USER_HOME`), whose programs and scripts then run.
const CODE_VAR_SUFFIXES: &[&str] = &[
    // Files a program reads its settings from or writes its reports to
    // (`COVERAGE_FILE`, `JEST_JUNIT_OUTPUT_FILE`), commands it runs, and MSBuild
    // properties, which it also takes from the environment (`PreBuildEvent`,
    // `CustomBeforeMicrosoftCommonTargets`).
    "_FILE",
    "_CONFIG",
    "_CMD",
    "_COMMAND",
    "Event",
    "Targets",
    "Props",
    "FLAGS",
    "_OPTS",
    "_OPTIONS",
    "_ADDOPTS",
    "_PLUGINS",
    "_WRAPPER",
    "PATH",
    "_HOME",
    "_EXEC_PREFIX",
    // Programs a tool runs by convention: its pager, editor, diff program,
    // shell, browser or password prompt (`SYSTEMD_PAGER`, `KUBE_EDITOR`,
    // `KUBECTL_EXTERNAL_DIFF`, `npm_config_script_shell`, `SUDO_ASKPASS`).
    "PAGER",
    "EDITOR",
    "_DIFF",
    "_DIFFTOOL",
    "_SHELL",
    "_PROGRAM",
    "_BROWSER",
    "_ASKPASS",
    "_EXE",
];
/// make's variables for the programs its rules run (GNU make's built-in rules
/// and the GNU coding standards' conventions): `make RM=… clean` runs that.
const MAKE_PROGRAM_VARS: &[&str] = &[
    "AR",
    "AS",
    "CC",
    "CXX",
    "CPP",
    "FC",
    "F77",
    "M2C",
    "PC",
    "CO",
    "GET",
    "LEX",
    "YACC",
    "LINT",
    "MAKEINFO",
    "TEX",
    "TEXI2DVI",
    "WEAVE",
    "CWEAVE",
    "TANGLE",
    "CTANGLE",
    "RM",
    "LD",
    "MAKE",
    "SHELL",
    "INSTALL",
    "INSTALL_PROGRAM",
    "INSTALL_DATA",
    "INSTALL_SCRIPT",
    "MKDIR",
    "MKDIR_P",
    "CP",
    "MV",
    "LN",
    "LN_S",
    "SED",
    "GREP",
    "EGREP",
    "AWK",
    "PYTHON",
    "PERL",
    "RUBY",
    "NODE",
    "NPM",
    "GO",
    "CARGO",
    "RUSTC",
    "JAVA",
    "JAVAC",
    "STRIP",
    "OBJCOPY",
    "OBJDUMP",
    "NM",
    "RANLIB",
    "PKG_CONFIG",
    "DOCKER",
    "CHMOD",
    "TAR",
    "GZIP",
    "CURL",
    "WGET",
    "GIT",
    "BASH",
    "SH",
    "ECHO",
    "TOUCH",
    "CAT",
    "DIFF",
    "FIND",
    "XARGS",
];
/// Folders whose programs are the system's, not the workspace's.
const SYSTEM_DIRS: &[&str] = &[
    "/bin/",
    "/sbin/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
    "/opt/homebrew/bin/",
    "/opt/homebrew/sbin/",
    "/usr/libexec/",
    "/run/current-system/sw/bin/",
];
/// Redirection targets that are not files.
const NOT_FILES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
];
/// Programs that read `@FILE` operands as more arguments (GNU binutils, GCC,
/// Clang, rustc, javac): the file is read, and its words show in their errors.
const RESPONSE_FILE_PROGRAMS: &[&str] = &[
    "strings",
    "nm",
    "objdump",
    "readelf",
    "size",
    "ar",
    "ranlib",
    "ld",
    "as",
    "strip",
    "objcopy",
    "addr2line",
    "c++filt",
    "gcc",
    "g++",
    "cc",
    "c++",
    "cpp",
    "clang",
    "clang++",
    "gfortran",
    "rustc",
    "javac",
    "dotnet",
    "msbuild",
    "csc",
];

/// The tag the engine gives a command whose code the call itself names: a
/// `code` operand or option value (`make --eval`, `go test -exec`), or an
/// option that makes the program run code (`make -f`, `cmake -E`), as against
/// the project's own (`make`, `cargo test`).
const INLINE_CODE: &str = "inline-code";

/// Whether an expansion's value is a number: `$#`, `$?`, `$$`, `$!`, `${#NAME}`
/// or an arithmetic expansion (`$((…))`, whose own text is checked).
fn numeric_expansion(raw: &str) -> bool {
    let name = |n: &str| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    };
    matches!(
        raw,
        "$#" | "$?" | "$$" | "$!" | "${#}" | "${?}" | "${$}" | "${!}"
    ) || (raw.starts_with("$((") && raw.ends_with("))") && !raw[3..raw.len() - 2].contains("))"))
        || raw
            .strip_prefix("${#")
            .and_then(|r| r.strip_suffix('}'))
            .is_some_and(name)
}

/// Builtins that declare variables (a compound assignment with a substitution runs code).
const DECLARATIONS: &[&str] = &["declare", "typeset", "local", "readonly", "export"];

/// Whether assigning `name` can make something run code.
#[must_use]
pub fn is_code_var(name: &str) -> bool {
    // MSBuild takes its properties from the environment whatever their case
    // (`MSBuildSDKsPath`, `MSBuildExtensionsPath`).
    let msbuild = name
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("msbuild"));
    msbuild
        || CODE_VARS.contains(&name)
        || CODE_VAR_PREFIXES.iter().any(|p| name.starts_with(p))
        || CODE_VAR_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Analyses `script` run in `cwd` (an absolute pattern) into `fx`.
pub fn analyse(script: &str, cwd: &str, env: &Env<'_>, fx: &mut Effects) {
    let mut a = Analyzer {
        env,
        fx,
        functions: HashSet::new(),
        defining: Vec::new(),
        background: 0,
        looping: 0,
        tainted: Vec::new(),
        integers: HashSet::new(),
        vars: HashMap::new(),
        rebound: HashSet::new(),
        piped: None,
        last_stdout: None,
        inherit_stdin: None,
        loop_values: HashMap::new(),
        source: script.to_string(),
        piped_names: None,
    };
    let cwds = vec![cwd.to_string()];
    a.script(script, &cwds, &[], false, 0);
}

/// The working folders a shell may be in after a command: when it succeeded,
/// and when it failed. An empty set: that way does not go on (`exit`).
#[derive(Debug, Clone)]
struct Flow {
    ok: Vec<String>,
    fail: Vec<String>,
}

impl Flow {
    fn same(cwds: &[String]) -> Flow {
        Flow {
            ok: cwds.to_vec(),
            fail: cwds.to_vec(),
        }
    }
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = a.to_vec();
    for x in b {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    if out.len() > MAX_CWDS {
        return vec![ANY_PATH.to_string()];
    }
    out
}

/// Work deferred until the command that causes it is recorded.
enum Nested {
    /// A command it runs (wrappers, `find -exec`).
    Command(Vec<Word>),
    /// A literal script it runs.
    Script(String),
}

struct Analyzer<'e, 'f> {
    env: &'e Env<'e>,
    fx: &'f mut Effects,
    /// Functions the script defines: calling one runs its body, already listed.
    functions: HashSet<String>,
    /// The functions whose bodies are being read: a call to one of them from
    /// its own body is a recursion (tag `recursion`).
    defining: Vec<String>,
    /// How many `&` the command being read is under (tag `background`).
    background: usize,
    /// How many `while`, `until` or `for ((…))` loops it is under (tag `loop`).
    looping: usize,
    /// Files written by commands that fetched: running one runs fetched code.
    tainted: Vec<String>,
    /// Variables declared integers (`declare -i`): bash evaluates what is
    /// assigned to them as arithmetic.
    integers: HashSet<String>,
    /// Variables the script assigns, exports or passes (`X=1 cmd`, `export
    /// X=1`, `env X=1 cmd`), with their last value: a program that reads one
    /// (the catalog's `env`) gets it.
    vars: HashMap<String, Word>,
    /// Command names rebound to another program (`hash -p PATH NAME`,
    /// `BASH_CMDS[NAME]=PATH`): running one runs code no rule can see.
    rebound: HashSet<String>,
    /// The literal text piped into the next simple command (`echo '…' | sh`).
    piped: Option<String>,
    /// The literal text the last command printed (`echo`, `printf`, `cat`
    /// of a here-document), for the next part of a pipeline.
    last_stdout: Option<String>,
    /// The literal standard input of the command being recorded, which the
    /// commands it wraps inherit (`sudo sh <<EOF`).
    inherit_stdin: Option<String>,
    /// `for NAME in WORD` loops being read whose variable nothing in the
    /// script can set otherwise ([`stable_loop_variable`]): in the body,
    /// `$NAME` is a name WORD stands for (`src/*.rs`), not any string.
    loop_values: HashMap<String, Word>,
    /// The whole script, for [`stable_loop_variable`].
    source: String,
    /// What the command before this one in a pipeline printed, when it
    /// prints only names under what it lists (tag `prints-names`): the
    /// patterns those names match, which `xargs` appends.
    piped_names: Option<Vec<String>>,
}

/// Commands and expansions that can set a variable whose name is not written
/// out (`read`, `printf -v "$n"`, `declare -n`, `(( $n = 1 ))`, `eval`, a
/// sourced file): where the script uses one, no loop variable is taken to
/// keep its loop's values.
const SETS_NAMES_UNSEEN: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "printf",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "getopts",
    "eval",
    "source",
    "unset",
    "coproc",
    "select",
];

/// The patterns of the names `c` printed, when it prints only names under
/// what it lists (tag `prints-names`), runs no code, writes nothing, and every
/// place it lists is known: its trees, and the folders it was given.
fn printed_names(c: &super::Command) -> Option<Vec<String>> {
    if !c.tags.iter().any(|t| t == "prints-names") || c.runs_code || !c.writes.is_empty() {
        return None;
    }
    let mut names: Vec<String> = c.lists.iter().chain(&c.reads).cloned().collect();
    names.sort();
    names.dedup();
    if names.is_empty() || names.iter().any(|n| n == super::paths::ANY_PATH) {
        return None;
    }
    Some(names)
}

/// Whether the loop variable `name` keeps the values its `for` gives it,
/// judged from the script's text: `name` appears only as `$name` or
/// `${name}` and in `for name in` headers, and the script uses nothing that
/// could set a variable without naming it.
fn stable_loop_variable(source: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if source.contains("((") || source.contains("${!") || source.contains("[[") {
        return false;
    }
    let bytes: Vec<char> = source.chars().collect();
    let mut words: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if is_ident(bytes[i]) {
            let start = i;
            while i < bytes.len() && is_ident(bytes[i]) {
                i += 1;
            }
            words.push((start, bytes[start..i].iter().collect()));
        } else {
            i += 1;
        }
    }
    // `.` as a command (`. ./env.sh`); also rejects a `.` operand (`ls . `),
    // which only makes this stricter.
    let dot_command = bytes.iter().enumerate().any(|(i, c)| {
        *c == '.'
            && bytes.get(i + 1).is_none_or(|n| n.is_whitespace())
            && (i == 0
                || matches!(
                    bytes[i - 1],
                    ';' | '&' | '|' | '(' | '{' | '\n' | ' ' | '\t'
                ))
    });
    if dot_command {
        return false;
    }
    for (k, (start, word)) in words.iter().enumerate() {
        if SETS_NAMES_UNSEEN.contains(&word.as_str()) {
            return false;
        }
        if word != name {
            continue;
        }
        let before = bytes[..*start].iter().rev().collect::<String>();
        let expanded = before.starts_with('$') || before.starts_with("{$");
        let header =
            k > 0 && words[k - 1].1 == "for" && words.get(k + 1).is_some_and(|(_, w)| w == "in");
        if !expanded && !header {
            return false;
        }
    }
    true
}

impl Analyzer<'_, '_> {
    fn home(&self) -> &str {
        self.env.home
    }

    fn full(&mut self) -> bool {
        if self.fx.commands.len() >= MAX_COMMANDS {
            self.fx.inexact(
                Reason::TooManyCommands,
                format!("the script runs more than {MAX_COMMANDS} commands"),
            );
            self.fx.runs_code = true;
            return true;
        }
        false
    }

    fn unparsable(&mut self, why: String) {
        self.fx.inexact(
            Reason::ParseError,
            format!("the script does not parse: {why}"),
        );
        self.fx.runs_code = true;
    }

    /// Analyses a script; the folders after it.
    fn script(
        &mut self,
        text: &str,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        if depth > MAX_SCRIPT_DEPTH {
            self.unparsable("scripts run scripts too deeply".to_string());
            return Flow::same(cwds);
        }
        if text.len() > MAX_SCRIPT_BYTES {
            self.unparsable(format!("it is longer than {MAX_SCRIPT_BYTES} bytes"));
            return Flow::same(cwds);
        }
        if text.contains('\0') {
            self.unparsable("it contains a NUL character".to_string());
            return Flow::same(cwds);
        }
        let mut grammars = vec![Grammar::Bash];
        // bash and POSIX sh read these differently (`a &>f b`): take both.
        if text.contains("&>") || text.contains("|&") {
            grammars.push(Grammar::Posix);
        }
        let mut flow: Option<Flow> = None;
        for grammar in grammars {
            let program = match parse(text, grammar) {
                Ok(p) => p,
                Err(why) => {
                    self.unparsable(why);
                    return Flow::same(cwds);
                }
            };
            let mut f = Flow::same(cwds);
            let mut cur = cwds.to_vec();
            for list in &program.complete_commands {
                f = self.list(list, &cur, wrappers, stdin, depth);
                cur = union(&f.ok, &f.fail);
            }
            flow = Some(match flow {
                None => f,
                Some(prev) => Flow {
                    ok: union(&prev.ok, &f.ok),
                    fail: union(&prev.fail, &f.fail),
                },
            });
        }
        flow.unwrap_or_else(|| Flow::same(cwds))
    }

    fn list(
        &mut self,
        list: &ast::CompoundList,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        let mut cur = cwds.to_vec();
        let mut last = Flow::same(cwds);
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let async_ = matches!(separator, ast::SeparatorOperator::Async);
            self.background += usize::from(async_);
            let f = self.and_or(and_or, &cur, wrappers, stdin, depth);
            self.background -= usize::from(async_);
            match separator {
                // In the background: a `cd` there moves nothing here.
                ast::SeparatorOperator::Async => last = Flow::same(&cur),
                ast::SeparatorOperator::Sequence => {
                    cur = union(&f.ok, &f.fail);
                    last = f;
                }
            }
        }
        last
    }

    fn and_or(
        &mut self,
        list: &ast::AndOrList,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        let mut f = self.pipeline(&list.first, cwds, wrappers, stdin, depth);
        for next in &list.additional {
            f = match next {
                ast::AndOr::And(p) => {
                    let from = if f.ok.is_empty() { cwds } else { &f.ok };
                    let r = self.pipeline(p, from, wrappers, stdin, depth);
                    Flow {
                        ok: r.ok,
                        fail: union(&f.fail, &r.fail),
                    }
                }
                ast::AndOr::Or(p) => {
                    let from = if f.fail.is_empty() { cwds } else { &f.fail };
                    let r = self.pipeline(p, from, wrappers, stdin, depth);
                    Flow {
                        ok: union(&f.ok, &r.ok),
                        fail: r.fail,
                    }
                }
            };
        }
        f
    }

    fn pipeline(
        &mut self,
        pipeline: &ast::Pipeline,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        let f = if pipeline.seq.len() == 1 {
            self.command(&pipeline.seq[0], cwds, wrappers, stdin, depth)
        } else {
            // Each part runs in a subshell; what one fetched flows into the next.
            let mut taint = stdin;
            let mut piped: Option<String> = None;
            let mut names: Option<Vec<String>> = None;
            for (i, command) in pipeline.seq.iter().enumerate() {
                let before = self.fx.commands.len();
                if i > 0 {
                    self.piped = piped.take();
                    self.piped_names = names.take();
                }
                self.last_stdout = None;
                self.command(command, cwds, wrappers, taint, depth);
                self.piped = None;
                self.piped_names = None;
                // What one command printed, when it is known, is the next one's input.
                piped = if self.fx.commands.len() == before + 1 {
                    self.last_stdout.take()
                } else {
                    None
                };
                names = if self.fx.commands.len() == before + 1 {
                    printed_names(&self.fx.commands[before])
                } else {
                    None
                };
                taint |= self.fx.commands[before..]
                    .iter()
                    .any(|c| !c.fetches.is_empty() || c.fetched_input);
            }
            Flow::same(cwds)
        };
        if pipeline.bang {
            Flow {
                ok: f.fail,
                fail: f.ok,
            }
        } else {
            f
        }
    }

    fn command(
        &mut self,
        command: &ast::Command,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        if self.full() {
            return Flow::same(cwds);
        }
        match command {
            ast::Command::Simple(simple) => self.simple(simple, cwds, wrappers, stdin, depth),
            ast::Command::Compound(compound, redirects) => {
                let mut pending = Pending::default();
                for r in redirects.iter().flat_map(|l| &l.0) {
                    self.redirect(r, cwds, wrappers, depth, &mut pending);
                }
                self.pending_into_call(pending);
                self.compound(compound, cwds, wrappers, stdin, depth)
            }
            ast::Command::Function(def) => {
                let name = self.word(&def.fname, cwds, wrappers, depth).literal();
                if let Some(name) = &name {
                    self.functions.insert(name.clone());
                }
                let mut pending = Pending::default();
                for r in def.body.1.iter().flat_map(|l| &l.0) {
                    self.redirect(r, cwds, wrappers, depth, &mut pending);
                }
                self.pending_into_call(pending);
                // The body may run whenever the function is called.
                let defining = name.is_some();
                if let Some(name) = name {
                    self.defining.push(name);
                }
                self.compound(&def.body.0, cwds, wrappers, stdin, depth);
                if defining {
                    self.defining.pop();
                }
                Flow::same(cwds)
            }
            ast::Command::ExtendedTest(test, _) => {
                self.extended_test(&test.expr, cwds, wrappers, depth);
                Flow::same(cwds)
            }
        }
    }

    fn extended_test(
        &mut self,
        expr: &ast::ExtendedTestExpr,
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
    ) {
        match expr {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a, cwds, wrappers, depth);
                self.extended_test(b, cwds, wrappers, depth);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a, cwds, wrappers, depth);
            }
            ast::ExtendedTestExpr::UnaryTest(op, w) => {
                let w = self.word(w, cwds, wrappers, depth);
                // `-v NAME`, `-R NAME`: a subscript in the name is arithmetic.
                if matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    self.evaluated_text(&w, "the variable name tested");
                }
            }
            ast::ExtendedTestExpr::BinaryTest(op, a, b) => {
                let a = self.word(a, cwds, wrappers, depth);
                let b = self.word(b, cwds, wrappers, depth);
                // `[[ A -eq B ]]` evaluates both sides as arithmetic.
                if matches!(
                    op,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    self.evaluated_text(&a, "an arithmetic comparison");
                    self.evaluated_text(&b, "an arithmetic comparison");
                } else {
                    self.compared(&a);
                    self.compared(&b);
                }
            }
        }
    }

    /// A value compared with a string or a pattern (`[[ $TOKEN == ghp_a* ]]`,
    /// `case $TOKEN in …`): what the call prints or does next tells part of
    /// it, as printing it would, so a value not known here makes the call
    /// inexact, as it does in a command's arguments.
    fn compared(&mut self, w: &Word) {
        let unknown = w
            .parts
            .iter()
            .any(|p| matches!(p, super::word::Part::Unknown { .. }));
        if unknown && !numeric_expansion(&w.raw) {
            self.fx.inexact(
                Reason::DynamicCompare,
                format!(
                    "`{}` is compared, and its value is not known here",
                    snippet(&w.raw)
                ),
            );
        }
    }

    fn compound(
        &mut self,
        compound: &ast::CompoundCommand,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        match compound {
            ast::CompoundCommand::Arithmetic(a) => {
                self.hidden_text(&a.expr.value, "an arithmetic command");
                Flow::same(cwds)
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.hidden_text(&e.value, "an arithmetic loop");
                }
                self.looping += 1;
                let body = self.list(&f.body.list, cwds, wrappers, stdin, depth);
                self.looping -= 1;
                Flow::same(&union(cwds, &union(&body.ok, &body.fail)))
            }
            ast::CompoundCommand::BraceGroup(g) => self.list(&g.list, cwds, wrappers, stdin, depth),
            ast::CompoundCommand::Subshell(s) => {
                self.list(&s.list, cwds, wrappers, stdin, depth);
                Flow::same(cwds)
            }
            ast::CompoundCommand::ForClause(f) => {
                let values: Vec<Word> = f
                    .values
                    .iter()
                    .flatten()
                    .map(|w| self.word(w, cwds, wrappers, depth))
                    .collect();
                // `for f in src/*.rs; do wc -l "$f"; done`: `$f` is one of
                // the names `src/*.rs` stands for, where nothing else can set it.
                let name = &f.variable_name;
                let outer = self.loop_values.remove(name);
                if let [one] = values.as_slice()
                    && stable_loop_variable(&self.source, name)
                {
                    self.loop_values.insert(name.clone(), one.clone());
                }
                let body = self.list(&f.body.list, cwds, wrappers, stdin, depth);
                self.loop_values.remove(name);
                if let Some(o) = outer {
                    self.loop_values.insert(name.clone(), o);
                }
                Flow::same(&union(cwds, &union(&body.ok, &body.fail)))
            }
            ast::CompoundCommand::CaseClause(c) => {
                let value = self.word(&c.value, cwds, wrappers, depth);
                self.compared(&value);
                let mut all = cwds.to_vec();
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p, cwds, wrappers, depth);
                    }
                    if let Some(body) = &item.cmd {
                        let f = self.list(body, cwds, wrappers, stdin, depth);
                        all = union(&all, &union(&f.ok, &f.fail));
                    }
                }
                Flow::same(&all)
            }
            ast::CompoundCommand::IfClause(c) => {
                let cond = self.list(&c.condition, cwds, wrappers, stdin, depth);
                let then = self.list(&c.then, &cond.ok, wrappers, stdin, depth);
                let mut all = union(&then.ok, &then.fail);
                let mut otherwise = cond.fail.clone();
                let mut has_else = false;
                for branch in c.elses.iter().flatten() {
                    match &branch.condition {
                        Some(cond) => {
                            let f = self.list(cond, &otherwise, wrappers, stdin, depth);
                            let body = self.list(&branch.body, &f.ok, wrappers, stdin, depth);
                            all = union(&all, &union(&body.ok, &body.fail));
                            otherwise = f.fail;
                        }
                        None => {
                            has_else = true;
                            let body = self.list(&branch.body, &otherwise, wrappers, stdin, depth);
                            all = union(&all, &union(&body.ok, &body.fail));
                        }
                    }
                }
                if !has_else {
                    all = union(&all, &otherwise);
                }
                Flow::same(&all)
            }
            ast::CompoundCommand::WhileClause(c) | ast::CompoundCommand::UntilClause(c) => {
                self.looping += 1;
                let cond = self.list(&c.0, cwds, wrappers, stdin, depth);
                let body = self.list(
                    &c.1.list,
                    &union(&cond.ok, &cond.fail),
                    wrappers,
                    stdin,
                    depth,
                );
                self.looping -= 1;
                Flow::same(&union(
                    cwds,
                    &union(&union(&cond.ok, &cond.fail), &union(&body.ok, &body.fail)),
                ))
            }
            ast::CompoundCommand::Coprocess(c) => {
                self.command(&c.body, cwds, wrappers, stdin, depth);
                Flow::same(cwds)
            }
        }
    }

    /// Text the shell evaluates (arithmetic): a substitution inside runs code.
    fn hidden_text(&mut self, text: &str, what: &str) {
        if text.contains("$(") || text.contains('`') || text.contains('[') {
            self.fx.inexact(
                Reason::EvaluatedText,
                format!(
                    "{what} `{}` may run commands no rule can see",
                    snippet(text)
                ),
            );
            self.fx.runs_code = true;
        }
    }

    /// A word the shell evaluates as arithmetic or as a variable name (whose
    /// subscript is arithmetic): a substitution in its value runs code, and a
    /// value not known here may hold one.
    fn evaluated_text(&mut self, w: &Word, what: &str) {
        match w.literal() {
            Some(text) => self.hidden_text(&text, what),
            None if numeric_expansion(&w.raw) => {}
            None => {
                self.fx.inexact(Reason::EvaluatedText, format!(
                    "{what} `{}` is evaluated by the shell and its value is not known here, so it may run commands no rule can see",
                    snippet(&w.raw)
                ));
                self.fx.runs_code = true;
            }
        }
    }

    /// Builtins that take variable names (`printf -v NAME`, `read NAME`,
    /// `getopts OPTS NAME`, `test -v NAME`, …): bash evaluates a subscript in a
    /// name, so `printf -v 'a[$(cmd)]' x` runs `cmd`.
    fn evaluated_names(
        &mut self,
        base: &str,
        args: &[Word],
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
    ) {
        let what = format!("a variable name given to `{base}`");
        // The operands after the options; `with_value` are the options taking a
        // value (bundled `-vNAME` or the next word), `named` those whose value
        // is a name.
        let split = |with_value: &str, named: &str| {
            let mut names: Vec<Word> = Vec::new();
            let mut operands: Vec<Word> = Vec::new();
            let mut i = 0;
            while i < args.len() {
                let w = &args[i];
                match w.literal() {
                    Some(l) if l == "--" => {
                        operands.extend(args[i + 1..].iter().cloned());
                        break;
                    }
                    Some(l) if operands.is_empty() && l.starts_with('-') && l.len() > 1 => {
                        for (at, ch) in l.char_indices().skip(1) {
                            if with_value.contains(ch) {
                                let rest = &l[at + ch.len_utf8()..];
                                let value = if rest.is_empty() {
                                    i += 1;
                                    args.get(i).cloned()
                                } else {
                                    Some(Word::lit(rest))
                                };
                                if named.contains(ch)
                                    && let Some(v) = value
                                {
                                    names.push(v);
                                }
                                break;
                            }
                        }
                    }
                    _ => operands.push(w.clone()),
                }
                i += 1;
            }
            (names, operands)
        };
        let names: Vec<Word> = match base {
            "printf" => split("v", "v").0,
            "wait" => split("p", "p").0,
            "read" => {
                let (mut names, operands) = split("adinNptu", "a");
                names.extend(operands);
                names
            }
            "getopts" => split("", "").1.into_iter().skip(1).take(1).collect(),
            "mapfile" | "readarray" => {
                if args
                    .iter()
                    .any(|w| w.literal().is_some_and(|l| l.starts_with("-C")))
                {
                    self.fx.inexact(
                        Reason::Callback,
                        format!("`{base} -C` runs a callback, code no rule can see"),
                    );
                    self.fx.runs_code = true;
                }
                split("dnOsuCc", "").1.into_iter().take(1).collect()
            }
            "unset" => split("", "").1,
            "declare" | "typeset" | "local" | "readonly" | "export" => {
                self.declared(base, args, cwds, wrappers, depth);
                return;
            }
            "test" | "[" => args
                .windows(2)
                .filter(|p| matches!(p[0].literal().as_deref(), Some("-v" | "-R")))
                .map(|p| p[1].clone())
                .collect(),
            _ => return,
        };
        for n in &names {
            self.evaluated_text(n, &what);
        }
    }

    /// `declare NAME=VALUE …` (and `typeset`, `local`, `readonly`, `export`):
    /// bash evaluates a subscript in each name, and with `-i` each value is
    /// arithmetic, so `declare -i x='a[$(cmd)]'` runs `cmd`; the names stay
    /// integers for later assignments in the script.
    fn declared(
        &mut self,
        base: &str,
        args: &[Word],
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
    ) {
        let what = format!("a variable given to `{base}`");
        let mut integer = false;
        let mut array = false;
        let mut options = true;
        for w in args {
            let lit = w.lit_prefix();
            if options && w.is_literal() && lit == "--" {
                options = false;
                continue;
            }
            if options && w.is_literal() && lit.len() > 1 && lit.starts_with(['-', '+']) {
                integer |= lit.starts_with('-') && lit.contains('i');
                array |= lit.starts_with('-') && lit.contains(['a', 'A']);
                continue;
            }
            options = false;
            match lit.find('=') {
                Some(eq)
                    if lit[eq + 1..].starts_with('(')
                        || (array && !w.is_literal() && lit.len() == eq + 1) =>
                {
                    // `declare -a 'x=($(cmd))'`: bash reads a quoted `NAME=(…)`
                    // again as a compound assignment, substitutions and all.
                    match w.literal() {
                        Some(text) => {
                            self.script(&text, cwds, wrappers, false, depth + 1);
                        }
                        None => {
                            self.fx.inexact(Reason::EvaluatedText, format!(
                                "`{base}` reads `{}` again as an array assignment, and its value is not known here, so it may run commands no rule can see",
                                snippet(&w.raw)
                            ));
                            self.fx.runs_code = true;
                        }
                    }
                }
                Some(eq) => {
                    let name = lit[..eq].trim_end_matches('+');
                    self.evaluated_text(&Word::lit(name), &what);
                    if integer {
                        self.integers.insert(name.to_string());
                    }
                    if integer || self.integers.contains(name) {
                        self.evaluated_text(&w.drop_prefix(eq + 1), "an integer's value");
                    }
                }
                None => {
                    self.evaluated_text(w, &what);
                    if integer && let Some(name) = w.literal() {
                        self.integers.insert(name);
                    }
                }
            }
        }
    }

    fn simple(
        &mut self,
        simple: &ast::SimpleCommand,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
    ) -> Flow {
        let piped = self.piped.take();
        let mut words = Vec::new();
        let mut assigns: Vec<(String, Word)> = Vec::new();
        let mut pending = Pending::default();
        let mut compound_assign = false;
        let mut items: Vec<&ast::CommandPrefixOrSuffixItem> = Vec::new();
        items.extend(simple.prefix.iter().flat_map(|p| &p.0));
        let prefix_len = items.len();
        items.extend(simple.suffix.iter().flat_map(|s| &s.0));
        let mut name_seen = false;
        for (i, item) in items.iter().enumerate() {
            if i == prefix_len
                && let Some(w) = &simple.word_or_name
            {
                words.push(self.word(w, cwds, wrappers, depth));
                name_seen = true;
            }
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    self.redirect(r, cwds, wrappers, depth, &mut pending);
                }
                ast::CommandPrefixOrSuffixItem::Word(w) => {
                    words.push(self.word(w, cwds, wrappers, depth));
                }
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    let name = match &a.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, index) => {
                            if n == "BASH_CMDS" || n == "BASH_ALIASES" {
                                // `BASH_CMDS[ls]=/tmp/x` makes `ls` run `/tmp/x`.
                                self.rebind(index.trim_matches(['\'', '"']));
                            } else {
                                self.hidden_text(&format!("[{index}]"), "an array subscript");
                            }
                            n.clone()
                        }
                    };
                    let value = match &a.value {
                        ast::AssignmentValue::Scalar(v) => self.word(v, cwds, wrappers, depth),
                        ast::AssignmentValue::Array(elements) => {
                            compound_assign = true;
                            for (key, value) in elements {
                                if let Some(k) = key {
                                    self.hidden_text(&k.value, "an array subscript");
                                }
                                self.word(value, cwds, wrappers, depth);
                            }
                            Word::unknown(&w.value)
                        }
                    };
                    if i < prefix_len && !name_seen {
                        assigns.push((name, value));
                    } else {
                        // An argument of `export`, `declare`, …
                        let mut word = self.word(w, cwds, wrappers, depth);
                        word.fetched |= value.fetched;
                        words.push(word);
                        self.vars.insert(name.clone(), value.clone());
                        if is_code_var(&name) {
                            self.code_var(&name);
                        }
                    }
                }
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    words.push(self.process_substitution(sub, cwds, wrappers, depth));
                }
            }
        }
        if !name_seen && let Some(w) = &simple.word_or_name {
            words.push(self.word(w, cwds, wrappers, depth));
        }
        for (name, value) in &assigns {
            self.vars.insert(name.clone(), value.clone());
            if is_code_var(name) {
                self.code_var(name);
            }
            // `x+='a[$(cmd)]'` after `declare -i x` is arithmetic.
            if self.integers.contains(name) {
                self.evaluated_text(value, "an integer's value");
            }
        }
        if words.is_empty() {
            // Only assignments and redirections: nothing runs.
            self.pending_into_call(pending);
            return Flow::same(cwds);
        }
        if compound_assign
            && words
                .first()
                .and_then(Word::literal)
                .is_some_and(|n| DECLARATIONS.contains(&n.as_str()))
        {
            self.fx.inexact(
                Reason::CompoundDeclaration,
                "a compound array declaration evaluates its values".to_string(),
            );
            self.fx.runs_code = true;
        }
        let fetched_assign = assigns.iter().any(|(_, v)| v.fetched);
        // A redirection of standard input wins over the pipe.
        if !pending.stdin_given {
            pending.stdin = piped;
        }
        self.run(
            words,
            cwds,
            wrappers,
            stdin || fetched_assign,
            depth,
            pending,
        )
    }

    /// A command name bound to another program from now on.
    fn rebind(&mut self, name: &str) {
        self.fx.inexact(
            Reason::ReboundCommand,
            format!(
                "it binds the command name `{}` to another program, code no rule can see",
                snippet(name)
            ),
        );
        self.fx.runs_code = true;
        self.rebound.insert(name.to_string());
    }

    fn code_var(&mut self, name: &str) {
        self.fx.inexact(
            Reason::CodeVariable,
            format!("it sets `{name}`, which makes programs run code no rule can see"),
        );
        self.fx.runs_code = true;
    }

    fn process_substitution(
        &mut self,
        sub: &ast::SubshellCommand,
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
    ) -> Word {
        let before = self.fx.commands.len();
        self.list(&sub.list, cwds, wrappers, false, depth + 1);
        let fetched = self.fx.commands[before..]
            .iter()
            .any(|c| !c.fetches.is_empty() || c.fetched_input);
        Word {
            raw: "<(…)".to_string(),
            // The pipe bash names `/dev/fd/63`: a descriptor number, never a
            // file name a credential pattern could match.
            parts: vec![Part::Pattern(
                "/dev/fd/{[0-9],[0-9][0-9],[0-9][0-9][0-9]}".into(),
            )],
            fetched,
        }
    }

    /// Records a redirection's effect.
    fn redirect(
        &mut self,
        r: &ast::IoRedirect,
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
        pending: &mut Pending,
    ) {
        match r {
            ast::IoRedirect::File(_, kind, target) => {
                let word = match target {
                    ast::IoFileRedirectTarget::Filename(w) => self.word(w, cwds, wrappers, depth),
                    ast::IoFileRedirectTarget::Fd(_) => return,
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let word = self.word(w, cwds, wrappers, depth);
                        if let Some(l) = word.literal() {
                            let digits = l.strip_suffix('-').unwrap_or(&l);
                            if l == "-"
                                || (!digits.is_empty()
                                    && digits.bytes().all(|b| b.is_ascii_digit()))
                            {
                                return;
                            }
                        }
                        word
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        let w = self.process_substitution(sub, cwds, wrappers, depth);
                        pending.fetched |= w.fetched;
                        return;
                    }
                };
                if !word.is_literal() {
                    pending.inexact.push((
                        Reason::DynamicRedirection,
                        format!("`{}` in a redirection is not literal", snippet(&word.raw)),
                    ));
                }
                if matches!(
                    kind,
                    ast::IoFileRedirectKind::Read | ast::IoFileRedirectKind::DuplicateInput
                ) {
                    pending.stdin_given = true;
                    pending.stdin = None;
                }
                // bash's `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT` are connections.
                let lit = word.lit_prefix();
                if let Some(rest) = lit
                    .strip_prefix("/dev/tcp/")
                    .map(|r| ("tcp", r))
                    .or_else(|| lit.strip_prefix("/dev/udp/").map(|r| ("udp", r)))
                {
                    let (scheme, rest) = rest;
                    pending
                        .fetches
                        .push(match (word.is_literal(), rest.split_once('/')) {
                            (true, Some((host, port))) if !host.is_empty() => {
                                urls::parse_fetch(&format!("{scheme}://{host}:{port}"))
                            }
                            _ => urls::parse_fetch("*"),
                        });
                    return;
                }
                if word
                    .literal()
                    .is_some_and(|l| NOT_FILES.contains(&l.as_str()) || l.starts_with("/dev/fd/"))
                {
                    return;
                }
                let targets: Vec<String> =
                    cwds.iter().map(|c| word.to_path(c, self.home())).collect();
                match kind {
                    ast::IoFileRedirectKind::Read | ast::IoFileRedirectKind::DuplicateInput => {
                        pending.reads.extend(targets);
                    }
                    ast::IoFileRedirectKind::ReadAndWrite => {
                        pending.reads.extend(targets.iter().cloned());
                        pending.writes.extend(targets);
                    }
                    _ => pending.writes.extend(targets),
                }
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let word = self.word(w, cwds, wrappers, depth);
                if word
                    .literal()
                    .is_some_and(|l| NOT_FILES.contains(&l.as_str()))
                {
                    return;
                }
                if !word.is_literal() {
                    pending.inexact.push((
                        Reason::DynamicRedirection,
                        format!("`{}` in a redirection is not literal", snippet(&word.raw)),
                    ));
                }
                let targets: Vec<String> =
                    cwds.iter().map(|c| word.to_path(c, self.home())).collect();
                pending.writes.extend(targets);
            }
            // What a here-string or an unquoted here-document expands is
            // the command's input, as an argument would be: `cat <<< "$TOKEN"`
            // prints the variable as `echo "$TOKEN"` does.
            ast::IoRedirect::HereString(_, w) => {
                let word = self.word(w, cwds, wrappers, depth);
                pending.fetched |= word.fetched;
                pending.stdin_given = true;
                pending.stdin = word.literal().map(|t| format!("{t}\n"));
                if !word.is_literal() {
                    pending.inexact.push((
                        Reason::DynamicRedirection,
                        format!("`{}` in a here-string is not literal", snippet(&word.raw)),
                    ));
                }
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                pending.stdin_given = true;
                // A quoted delimiter keeps the text as written; an unquoted one
                // expands it, and with no `$`, backquote or backslash it is the same.
                pending.stdin = (!doc.requires_expansion
                    || !doc.doc.value.contains(['$', '`', '\\']))
                .then(|| doc.doc.value.clone());
                if doc.requires_expansion
                    && (doc.doc.value.contains('$') || doc.doc.value.contains('`'))
                {
                    // Quotes are not special in a here-document: escape them so
                    // that a substitution inside `'…'` is still found.
                    let text = doc
                        .doc
                        .value
                        .replace('\\', "\\\\")
                        .replace('\'', "\\'")
                        .replace('"', "\\\"");
                    let text = text.replace("\\\\$", "\\$").replace("\\\\`", "\\`");
                    let word = self.word_text(&text, cwds, wrappers, depth, true);
                    pending.fetched |= word.fetched;
                    pending.stdin = word.literal();
                    if !word.is_literal() {
                        pending.inexact.push((
                            Reason::DynamicRedirection,
                            "a here-document expands what is not known here".to_string(),
                        ));
                    }
                }
            }
        }
    }

    /// Effects of redirections that belong to no command.
    fn pending_into_call(&mut self, pending: Pending) {
        for (reason, why) in pending.inexact {
            self.fx.inexact(reason, why);
        }
        self.fx.reads.extend(pending.reads);
        self.fx.writes.extend(pending.writes);
        self.fx.fetches.extend(pending.fetches);
    }

    fn word(&mut self, w: &ast::Word, cwds: &[String], wrappers: &[String], depth: usize) -> Word {
        self.word_text(&w.value, cwds, wrappers, depth, false)
    }

    /// Reads a word's text into parts, analysing the commands it substitutes.
    fn word_text(
        &mut self,
        raw: &str,
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
        quoted: bool,
    ) -> Word {
        let options = parser_options(Grammar::Bash);
        let pieces = match guarded(|| brush_parser::word::parse(raw, &options)) {
            Ok(Ok(p)) => p,
            _ => {
                self.fx.inexact(
                    Reason::WordParseError,
                    format!("the word `{}` does not parse", snippet(raw)),
                );
                self.fx.runs_code |= raw.contains("$(") || raw.contains('`');
                return Word {
                    raw: raw.to_string(),
                    parts: vec![Part::Unknown { quoted: false }],
                    fetched: false,
                };
            }
        };
        let mut word = Word {
            raw: raw.to_string(),
            parts: Vec::new(),
            fetched: false,
        };
        for piece in &pieces {
            self.piece(piece, raw, quoted, cwds, wrappers, depth, &mut word);
        }
        // Merge neighbouring literal parts.
        let mut merged: Vec<Part> = Vec::new();
        for p in word.parts.drain(..) {
            match (merged.last_mut(), p) {
                (Some(Part::Lit(a)), Part::Lit(b)) => a.push_str(&b),
                (_, p) => merged.push(p),
            }
        }
        if merged.is_empty() {
            merged.push(Part::Lit(String::new()));
        }
        word.parts = merged;
        word
    }

    #[expect(clippy::too_many_arguments, reason = "the walk's context, passed down")]
    fn piece(
        &mut self,
        piece: &WordPieceWithSource,
        raw: &str,
        quoted: bool,
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
        out: &mut Word,
    ) {
        match &piece.piece {
            WordPiece::Text(s) => {
                if quoted {
                    out.parts.push(Part::Lit(s.clone()));
                } else {
                    split_globs(s, &mut out.parts);
                }
            }
            WordPiece::SingleQuotedText(s) => out.parts.push(Part::Lit(s.clone())),
            WordPiece::AnsiCQuotedText(s) => out.parts.push(Part::Lit(ansi_c(s))),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                for p in inner {
                    self.piece(p, raw, true, cwds, wrappers, depth, out);
                }
            }
            WordPiece::TildeExpansion(t) => out.parts.push(match t {
                TildeExpr::Home => Part::Home,
                TildeExpr::WorkingDir => Part::Cwd,
                TildeExpr::UserHome(user) if user == "root" => Part::Lit("/root".into()),
                _ => Part::Unknown { quoted },
            }),
            WordPiece::ParameterExpansion(pe) => {
                let source = raw.get(piece.start_index..piece.end_index).unwrap_or(raw);
                let part = self.parameter(pe, source, quoted, cwds, wrappers, depth, out);
                out.parts.push(part);
            }
            WordPiece::CommandSubstitution(text)
            | WordPiece::BackquotedCommandSubstitution(text) => {
                let text = if matches!(piece.piece, WordPiece::BackquotedCommandSubstitution(_)) {
                    text.replace("\\`", "`")
                        .replace("\\$", "$")
                        .replace("\\\\", "\\")
                } else {
                    text.clone()
                };
                let before = self.fx.commands.len();
                self.script(&text, cwds, wrappers, false, depth + 1);
                out.fetched |= self.fx.commands[before..]
                    .iter()
                    .any(|c| !c.fetches.is_empty() || c.fetched_input);
                out.parts.push(Part::Unknown { quoted });
            }
            WordPiece::EscapeSequence(s) => {
                let lit: String = s.chars().skip(1).filter(|c| *c != '\n').collect();
                out.parts.push(Part::Lit(lit));
            }
            WordPiece::ArithmeticExpression(e) => {
                self.hidden_text(&e.value, "an arithmetic expansion");
                out.parts.push(Part::Unknown { quoted });
            }
        }
    }

    #[expect(clippy::too_many_arguments, reason = "the walk's context, passed down")]
    fn parameter(
        &mut self,
        pe: &ParameterExpr,
        source: &str,
        quoted: bool,
        cwds: &[String],
        wrappers: &[String],
        depth: usize,
        out: &mut Word,
    ) -> Part {
        let nested = match pe {
            ParameterExpr::Parameter {
                parameter,
                indirect,
            } => {
                if !indirect && let Parameter::Named(n) = parameter {
                    match n.as_str() {
                        "HOME" => return Part::Home,
                        "PWD" => return Part::Cwd,
                        _ => {}
                    }
                    if let Some(value) = self.loop_values.get(n) {
                        out.parts.extend(value.parts.iter().cloned());
                        out.fetched |= value.fetched;
                        return Part::Lit(String::new());
                    }
                }
                None
            }
            ParameterExpr::UseDefaultValues { default_value, .. }
            | ParameterExpr::AssignDefaultValues { default_value, .. } => default_value.clone(),
            ParameterExpr::IndicateErrorIfNullOrUnset { error_message, .. } => {
                error_message.clone()
            }
            ParameterExpr::UseAlternativeValue {
                alternative_value, ..
            } => alternative_value.clone(),
            _ => {
                if source.matches("$(").count() + source.matches('`').count() > 0 {
                    self.hidden_text(source, "a parameter expansion");
                }
                None
            }
        };
        if let Some(text) = nested {
            let w = self.word_text(&text, cwds, wrappers, depth + 1, quoted);
            out.fetched |= w.fetched;
        }
        if source.contains('[') {
            // `${a[$(cmd)]}`: the subscript is arithmetic.
            self.hidden_text(source, "an array subscript");
        }
        Part::Unknown { quoted }
    }

    /// Interprets one simple command's words with the catalog and records it.
    fn run(
        &mut self,
        mut words: Vec<Word>,
        cwds: &[String],
        wrappers: &[String],
        stdin: bool,
        depth: usize,
        pending: Pending,
    ) -> Flow {
        if self.full() {
            return Flow::same(cwds);
        }
        words.truncate(MAX_WORDS);
        let mut c = Command {
            program: String::new(),
            path: words[0].raw.clone(),
            // The words as the program gets them (`"-DargLine=…"` is
            // `-DargLine=…`); a word not known here stays as written.
            argv: words
                .iter()
                .map(|w| w.literal().unwrap_or_else(|| w.raw.clone()))
                .collect(),
            cwd: cwds
                .first()
                .cloned()
                .unwrap_or_else(|| ANY_PATH.to_string()),
            wrappers: wrappers.to_vec(),
            known: true,
            read_only: false,
            exact: pending.inexact.is_empty(),
            subcommand: String::new(),
            options: Vec::new(),
            operands: Vec::new(),
            tags: Vec::new(),
            reads: pending.reads,
            lists: Vec::new(),
            writes: pending.writes,
            deletes: Vec::new(),
            fetches: pending.fetches,
            runs_code: false,
            fetched_input: pending.fetched || words.iter().any(|w| w.fetched),
        };
        let pending_stdin = pending.stdin;
        for (reason, why) in pending.inexact {
            self.fx.inexact(reason, why);
        }
        let mut flow = Flow::same(cwds);
        let mut nested: Vec<Nested> = Vec::new();
        let mut reasons: Vec<(Reason, String)> = Vec::new();
        let Some(name) = words[0].literal() else {
            // `$CMD args`: any program, doing anything to its operands.
            c.program = "*".into();
            c.known = false;
            c.runs_code = true;
            reasons.push((
                Reason::DynamicProgram,
                format!("the program `{}` is not literal", snippet(&words[0].raw)),
            ));
            // It could be any program, reading its operands from anywhere (`xargs`).
            c.reads.push(ANY_PATH.to_string());
            c.writes.push(ANY_PATH.to_string());
            c.deletes.push(ANY_PATH.to_string());
            for w in &words[1..] {
                self.unknown_operand(w, cwds, &mut c, true);
            }
            self.record(c, reasons, nested, cwds, stdin, depth);
            return flow;
        };
        let base = name.rsplit('/').next().unwrap_or(&name).to_string();
        c.program = base.clone();
        let own_program = name.contains('/') && !is_system_program(&name);
        if !name.contains('/') {
            self.evaluated_names(&base, &words[1..], cwds, wrappers, depth);
        }
        if self.rebound.contains(&name) {
            c.known = false;
            c.runs_code = true;
            reasons.push((
                Reason::ReboundCommand,
                format!(
                    "`{}` was bound to another program earlier in the script",
                    snippet(&name)
                ),
            ));
        }
        if base == "hash" && !own_program {
            // `hash -p PATH NAME` makes NAME run PATH from now on.
            let mut it = words[1..].iter();
            while let Some(w) = it.next() {
                let lit = w.lit_prefix();
                if lit.starts_with('-') && lit.contains('p') && !lit.starts_with("--") {
                    let names: Vec<String> = it
                        .by_ref()
                        .skip(usize::from(lit.ends_with('p')))
                        .filter_map(Word::literal)
                        .collect();
                    for n in names {
                        self.rebind(&n);
                    }
                    break;
                }
            }
        }
        if RESPONSE_FILE_PROGRAMS.contains(&base.as_str()) {
            // `strings @FILE`, `gcc @FILE`: the words of FILE are read as
            // arguments, and echoed in the errors.
            for w in words[1..]
                .iter()
                .filter(|w| w.raw.len() > 1 && w.raw.starts_with('@'))
            {
                let file = w.drop_prefix(1);
                for cwd in cwds {
                    c.reads.push(file.to_path(cwd, self.home()));
                }
            }
        }
        if matches!(base.as_str(), "make" | "gmake") {
            // `make SHELL=… CC=… RM=… x`: an override that names the program a
            // recipe runs; and since any variable may stand in a recipe's
            // command, one whose value is more than a plain word (`ARGS='-r
            // x.js'`, `prefix=/elsewhere`) is code the call gives.
            for w in &words[1..] {
                let literal = w.literal();
                let Some((var, value)) = literal.as_deref().and_then(|l| l.split_once('=')) else {
                    continue;
                };
                let name = var.trim_end_matches(['+', ':', '?', '!']);
                if !(name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '.')) {
                    continue;
                }
                let plain = !value.starts_with('-')
                    && value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.,+=:-".contains(c));
                if is_code_var(name)
                    || name == ".SHELLFLAGS"
                    || MAKE_PROGRAM_VARS.contains(&name)
                    || !plain
                {
                    self.code_var(name);
                }
            }
        }
        if own_program {
            c.known = false;
            c.runs_code = true;
            reasons.push((
                Reason::OwnProgram,
                format!(
                    "`{}` is a program of its own, not a known command",
                    snippet(&name)
                ),
            ));
        }
        for w in &words[1..] {
            // A name a `find` (or what fed `xargs`) printed stands for a path
            // under a known folder: it is a pattern, and never an option.
            let known_names =
                matches!(w.parts.as_slice(), [Part::Pattern(p)] if p.starts_with('/'));
            if !w.is_literal() && !known_names {
                reasons.push((
                    Reason::DynamicWord,
                    format!(
                        "`{}` in the arguments of `{base}` is not literal",
                        snippet(&w.raw)
                    ),
                ));
                break;
            }
        }
        if self.functions.contains(&name) {
            c.read_only = true;
            c.tags.push("function".into());
            if self.defining.contains(&name) {
                c.tags.push("recursion".into());
            }
            self.record(c, reasons, nested, cwds, stdin, depth);
            return flow;
        }
        // Builtins that move the shell.
        match base.as_str() {
            "cd" | "pushd" if !own_program => {
                let args: Vec<&Word> = words[1..]
                    .iter()
                    .filter(|w| {
                        !w.literal()
                            .is_some_and(|l| l.starts_with('-') && l.len() > 1)
                    })
                    .collect();
                let target: Vec<String> = match args.first() {
                    None => vec![paths::escape(self.home())],
                    Some(w) if w.literal().as_deref() == Some("-") => vec![ANY_PATH.to_string()],
                    Some(w) => cwds.iter().map(|cwd| w.to_path(cwd, self.home())).collect(),
                };
                c.read_only = true;
                c.known = true;
                c.reads.clear();
                flow = Flow {
                    ok: union(&target, &[]),
                    fail: cwds.to_vec(),
                };
                c.operands = words[1..].iter().map(|w| w.raw.clone()).collect();
                self.record(c, reasons, nested, cwds, stdin, depth);
                return flow;
            }
            "popd" if !own_program => {
                c.read_only = true;
                flow = Flow {
                    ok: vec![ANY_PATH.to_string()],
                    fail: cwds.to_vec(),
                };
                self.record(c, reasons, nested, cwds, stdin, depth);
                return flow;
            }
            "exit" | "return" if !own_program => {
                c.read_only = true;
                self.record(c, reasons, nested, cwds, stdin, depth);
                return Flow {
                    ok: Vec::new(),
                    fail: Vec::new(),
                };
            }
            "trap" | "alias" if !own_program => {
                c.runs_code = true;
                reasons.push((
                    Reason::StoredCode,
                    format!("`{base}` stores code the shell runs later"),
                ));
                let scripts = hidden_scripts(&base, &words[1..]);
                for s in scripts {
                    match s.literal() {
                        Some(text) => nested.push(Nested::Script(text)),
                        None => reasons.push((
                            Reason::DynamicCode,
                            format!("the code given to `{base}` is not literal"),
                        )),
                    }
                }
                self.record(c, reasons, nested, cwds, stdin, depth);
                return flow;
            }
            _ => {}
        }
        let Some(spec) = self.env.catalog.get(&base) else {
            c.known = false;
            c.runs_code = true;
            reasons.push((
                Reason::UnknownProgram,
                format!("unknown command `{}`", snippet(&base)),
            ));
            for w in &words[1..] {
                self.unknown_operand(w, cwds, &mut c, false);
            }
            self.record(c, reasons, nested, cwds, stdin, depth);
            return flow;
        };
        let mut ctx = SpecRun {
            cwds: cwds.to_vec(),
            recursive: false,
            layout: None,
            not_read_only: false,
            code_given: false,
            code_by_tag: false,
            options_unknown: false,
            operand: false,
            remote_operands: spec.remote_operands,
            in_place: None,
            dests: Vec::new(),
            listed: Vec::new(),
        };
        let unbundled = spec.unbundle(&words[1..]);
        self.apply_spec(
            &spec,
            unbundled.as_deref().unwrap_or(&words[1..]),
            &mut c,
            &mut ctx,
            &mut nested,
            &mut reasons,
            true,
        );
        // Variables it reads that the script set (`KUBECTL_EXTERNAL_DIFF=…
        // kubectl diff`, `DOCKER_HOST=… docker ps`): their values are what
        // the catalog says.
        ctx.operand = false;
        for (var, kind) in &spec.env {
            if let Some(value) = self.vars.get(var).cloned() {
                reasons.extend((*kind == Kind::Script && !value.is_literal()).then(|| {
                    (
                        Reason::DynamicCode,
                        format!("`{var}` names a program, and its value is not known here"),
                    )
                }));
                let code_given = ctx.code_given;
                self.apply_kind(*kind, &value, &mut c, &mut ctx, &mut nested, &mut reasons);
                ctx.code_given = code_given;
            }
        }
        if !ctx.code_given {
            if spec.stdin_script {
                // `sh <<EOF … EOF`, `bash <<< '…'`, `echo '…' | sh`: the script.
                match pending_stdin.clone() {
                    Some(text) => nested.push(Nested::Script(text)),
                    None => {
                        c.runs_code = true;
                        c.read_only = false;
                        c.fetched_input |= stdin;
                    }
                }
            } else if spec.stdin_sql {
                if let Some(text) = pending_stdin.clone() {
                    self.apply_kind(
                        Kind::Sql,
                        &Word::lit(&text),
                        &mut c,
                        &mut ctx,
                        &mut nested,
                        &mut reasons,
                    );
                }
            } else if spec_stdin_code(&spec, &c) {
                c.runs_code = true;
                c.read_only = false;
                c.fetched_input |= stdin;
            }
        }
        if ctx.options_unknown {
            c.tags.push("unknown-options".into());
        }
        if let Some(first) = ctx.cwds.first() {
            c.cwd = first.clone();
        }
        self.last_stdout = printed(&base, &words[1..], pending_stdin.as_deref());
        // A wrapper's command reads the wrapper's input (`sudo sh <<EOF`).
        self.inherit_stdin = pending_stdin;
        // What it runs runs where it runs: `env -C DIR cmd`, `sudo -D DIR cmd`.
        // `builtin cd DIR` and `command cd DIR` move this shell as `cd DIR` does.
        self.record(c, reasons, nested, &ctx.cwds, stdin, depth)
            .unwrap_or(flow)
    }

    /// An operand of a program nobody knows (or of a subcommand the catalog
    /// does not know): a path it may read, change or remove.
    fn unknown_operand(&mut self, w: &Word, cwds: &[String], c: &mut Command, delete: bool) {
        let lit = w.lit_prefix();
        let target = if lit.starts_with('-') {
            match lit.find('=') {
                Some(eq) => w.drop_prefix(eq + 1),
                None if w.is_literal() => return,
                None => w.clone(),
            }
        } else {
            w.clone()
        };
        // Nothing says what it does with the word: a URL may be fetched, a path
        // read, changed or removed, and a folder whole.
        let _ = delete;
        if let Some(text) = target.literal().or_else(|| as_written(&target))
            && text.contains("://")
        {
            c.fetches.push(urls::parse_fetch(&text));
        }
        for cwd in cwds {
            let p = target.to_path(cwd, self.home());
            let tree = tree_of(&p);
            for list in [&mut c.reads, &mut c.writes, &mut c.deletes] {
                list.push(p.clone());
                list.push(tree.clone());
            }
        }
    }

    /// Applies a specification (and its subcommands) to the words after the program.
    #[expect(
        clippy::too_many_arguments,
        reason = "the command being built and its context"
    )]
    fn apply_spec(
        &mut self,
        spec: &Spec,
        args: &[Word],
        c: &mut Command,
        ctx: &mut SpecRun,
        nested: &mut Vec<Nested>,
        reasons: &mut Vec<(Reason, String)>,
        top: bool,
    ) {
        if top {
            c.read_only = spec.read_only;
        } else {
            c.read_only = spec.read_only;
            c.subcommand = if c.subcommand.is_empty() {
                spec.name.clone()
            } else {
                format!("{} {}", c.subcommand, spec.name)
            };
        }
        c.tags.extend(spec.tags.iter().cloned());
        // The tag `runs-code`: the program always runs code no rule can see (make's
        // recipes, npm's scripts, a test runner's tests).
        if spec.tags.iter().any(|t| t == "runs-code") {
            c.runs_code = true;
            ctx.code_given = true;
            ctx.code_by_tag = true;
        }
        let parsed = spec.parse_words(args);
        reasons.extend(parsed.unknown.iter().cloned());
        ctx.options_unknown |= parsed.options_unknown;
        if parsed.options_unknown {
            ctx.recursive = true;
        }
        // Options first: they set the folder, the layout and recursion.
        let mut values: Vec<(Kind, Word)> = Vec::new();
        let mut operand_cwds: Option<Vec<String>> = None;
        for (k, (index, value)) in parsed.options.iter().enumerate() {
            let opt = spec.option(*index);
            c.options.push(
                parsed
                    .spellings
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| opt.name.clone()),
            );
            c.tags.extend(opt.tags.iter().cloned());
            ctx.recursive |= opt.recursive;
            ctx.not_read_only |= opt.not_read_only;
            if opt.runs_code || opt.tags.iter().any(|t| t == "runs-code") {
                c.runs_code = true;
                c.tags.push(INLINE_CODE.into());
            }
            if let Some(layout) = &opt.operands {
                ctx.layout = Some(layout.clone());
            }
            if opt.in_place {
                ctx.in_place = Some(value.clone());
                continue;
            }
            // An optional file list given no value is standard input (`xz --files`).
            if opt.value == Some(Kind::FileList) && value.is_none() {
                values.push((Kind::FileList, Word::lit("-")));
            }
            if let (Some(kind), Some(v)) = (opt.value, value) {
                if kind == Kind::Cwd {
                    ctx.cwds = ctx
                        .cwds
                        .iter()
                        .map(|cwd| v.to_path(cwd, self.home()))
                        .collect();
                } else if kind == Kind::OperandsCwd {
                    let from = operand_cwds.as_ref().unwrap_or(&ctx.cwds);
                    operand_cwds =
                        Some(from.iter().map(|cwd| v.to_path(cwd, self.home())).collect());
                } else {
                    values.push((kind, v.clone()));
                }
            }
        }
        for (_, words) in &parsed.commands {
            // A program told which command to run runs that, not its standard
            // input (`python -m pytest`).
            ctx.code_given = true;
            nested.push(Nested::Command(words.clone()));
        }
        // Conditional changes: `sysctl NAME=VALUE` writes, `git branch NAME` creates.
        let given: Vec<usize> = parsed.options.iter().map(|(i, _)| *i).collect();
        for when in spec
            .when
            .iter()
            .filter(|w| w.holds(&given, &parsed.operands))
        {
            match when.read_only {
                Some(false) => ctx.not_read_only = true,
                Some(true) => c.read_only = true,
                None => {}
            }
            c.tags.retain(|t| !when.untags.contains(t));
            c.tags.extend(when.tags.iter().cloned());
            if when.runs_code {
                c.runs_code = true;
                c.tags.push(INLINE_CODE.into());
            }
        }
        // With optional subcommands, a literal first operand that names none
        // is an operand; one not known here could name any, so it is unknown.
        let selects = |first: &Word| {
            !spec.subcommand_optional
                || first
                    .literal()
                    .is_none_or(|n| spec.subcommand(&n).is_some())
        };
        if !spec.subcommands.is_empty() && parsed.operands.first().is_none_or(selects) {
            let Some((first, rest)) = parsed.operands.split_first() else {
                for (kind, v) in values {
                    self.apply_kind(kind, &v, c, ctx, nested, reasons);
                }
                if let Some(d) = operand_cwds {
                    ctx.cwds = d;
                }
                return;
            };
            for (kind, v) in values {
                self.apply_kind(kind, &v, c, ctx, nested, reasons);
            }
            if let Some(d) = operand_cwds {
                ctx.cwds = d;
            }
            match first.literal().and_then(|n| spec.subcommand(&n).cloned()) {
                Some(sub) => self.apply_spec(&sub, rest, c, ctx, nested, reasons, false),
                None => {
                    reasons.push((
                        Reason::UnknownSubcommand,
                        format!(
                            "unknown subcommand `{}` of `{}`",
                            snippet(&first.raw),
                            c.program
                        ),
                    ));
                    c.runs_code = true;
                    c.read_only = false;
                    for w in rest {
                        self.unknown_operand(w, &ctx.cwds.clone(), c, false);
                    }
                }
            }
            return;
        }
        for (kind, v) in values {
            self.apply_kind(kind, &v, c, ctx, nested, reasons);
        }
        // Operands resolve from `tar -C DIR`; the option values did not.
        if let Some(d) = operand_cwds {
            ctx.cwds = d;
        }
        let layout = ctx.layout.clone().unwrap_or_else(|| spec.operands.clone());
        let mut operands: &[Word] = &parsed.operands;
        c.operands.extend(operands.iter().map(|w| w.raw.clone()));
        let mut layout: &[super::catalog::Slot] = &layout;
        if layout.first().is_some_and(|s| s.kind == Kind::Assignments) {
            let n = operands.iter().take_while(|w| is_assignment(w)).count();
            for w in &operands[..n] {
                if let Some((name, _)) = w.lit_prefix().split_once('=')
                    && is_code_var(name)
                {
                    reasons.push((
                        Reason::CodeVariable,
                        format!("it sets `{name}`, which makes programs run code no rule can see"),
                    ));
                    c.runs_code = true;
                }
            }
            for w in &operands[..n] {
                if let Some(eq) = w.lit_prefix().find('=') {
                    let name = w.lit_prefix()[..eq].to_string();
                    self.vars.insert(name, w.drop_prefix(eq + 1));
                }
            }
            operands = &operands[n..];
            layout = &layout[1..];
        }
        let (mut kinds, overflow) = assign(layout, operands.len());
        if ctx.code_given {
            // `sh -c SCRIPT arg0 …`, `python -c CODE arg`: the operands are its
            // arguments. A program that always runs code (`pytest FILE`, `deno
            // test URL`) reads its code operands as files, or fetches them.
            let file = if ctx.code_by_tag {
                Kind::Read
            } else {
                Kind::Value
            };
            for k in &mut kinds {
                if *k == Kind::Code {
                    *k = file;
                }
            }
        }
        if overflow {
            reasons.push((
                Reason::ExtraOperands,
                format!(
                    "`{}` has more operands than its specification knows",
                    c.program
                ),
            ));
        }
        ctx.operand = true;
        // The operands of the kinds `pick` says.
        let of_kinds = |pick: fn(Kind) -> bool| -> Vec<&Word> {
            operands
                .iter()
                .zip(&kinds)
                .filter(|(_, k)| pick(**k))
                .map(|(w, _)| w)
                .collect()
        };
        if kinds.contains(&Kind::Script) {
            let script_words = of_kinds(|k| k == Kind::Script);
            for (w, k) in operands.iter().zip(&kinds) {
                if *k != Kind::Script {
                    self.apply_kind(*k, w, c, ctx, nested, reasons);
                }
            }
            self.script_words(&script_words, c, ctx, nested, reasons);
        } else if let Some(start) = kinds.iter().position(|k| *k == Kind::Command) {
            for (w, k) in operands[..start].iter().zip(&kinds) {
                self.apply_kind(*k, w, c, ctx, nested, reasons);
            }
            let mut inner: Vec<Word> = operands[start..].to_vec();
            if c.program == "xargs" {
                // Names a `prints-names` command printed into it (`find src
                // | xargs wc -l`) are names under what it listed; anything
                // else, or input it places itself (`-I {}`) or reads from a
                // file (`-a`), is any string.
                // xargs's own options: the words before the command it runs.
                let own = c.argv.len().saturating_sub(operands.len() - start);
                let places_or_reads_file = c.argv[1.min(own)..own].iter().any(|a| {
                    [
                        "-I",
                        "-i",
                        "-J",
                        "-R",
                        "-a",
                        "-E",
                        "-e",
                        "-d",
                        "--replace",
                        "--arg-file",
                        "--delimiter",
                        "--eof",
                    ]
                    .iter()
                    .any(|o| a.starts_with(o))
                });
                match self.piped_names.clone() {
                    Some(names) if !places_or_reads_file => {
                        inner.extend(names.into_iter().map(|n| Word::pattern("(input)", n)));
                    }
                    _ => inner.push(Word::unknown("(input)")),
                }
            }
            ctx.code_given = true;
            nested.push(Nested::Command(inner));
        } else {
            for (w, k) in operands.iter().zip(&kinds) {
                self.apply_kind(*k, w, c, ctx, nested, reasons);
            }
        }
        if let Some(suffix) = ctx.in_place.clone() {
            let files = of_kinds(|k| k == Kind::Read);
            self.in_place(&files, suffix.as_ref(), c, ctx, nested, reasons);
        }
        if !ctx.dests.is_empty() {
            let sources = of_kinds(|k| matches!(k, Kind::Read | Kind::Delete));
            self.under_dests(&sources, c, ctx);
        }
        // A search or a listing given no folder walks the working folder
        // (`rg PAT`, `grep -r PAT`, `ls`, `du -sh`, `find -name X`).
        let walks = |k: Kind| {
            matches!(k, Kind::Tree | Kind::List | Kind::ListTree)
                || (k == Kind::Read && ctx.recursive)
        };
        if !kinds.iter().any(|k| walks(*k))
            && let Some(slot) = layout
                .iter()
                .find(|s| s.repeat != super::catalog::Repeat::One && walks(s.kind))
        {
            let kind = if slot.kind == Kind::Read {
                Kind::Tree
            } else {
                slot.kind
            };
            self.apply_kind(kind, &Word::lit("."), c, ctx, nested, reasons);
        }
        ctx.operand = false;
        self.special(c, ctx, &parsed.operands, reasons);
        if ctx.not_read_only
            || !c.writes.is_empty()
            || !c.deletes.is_empty()
            || !c.fetches.is_empty()
            || c.runs_code
        {
            c.read_only = false;
        }
    }

    /// The files a program edits in place are written; so is each backup,
    /// named by the suffix. A suffix with `*` or `/` (GNU sed puts the backup
    /// elsewhere with those) or one not known before the command runs could
    /// write anywhere.
    fn in_place(
        &mut self,
        files: &[&Word],
        suffix: Option<&Word>,
        c: &mut Command,
        ctx: &mut SpecRun,
        nested: &mut Vec<Nested>,
        reasons: &mut Vec<(Reason, String)>,
    ) {
        let suffix = match suffix.map(Word::literal) {
            None => Some(String::new()),
            Some(Some(s)) if !s.contains(['*', '/']) => Some(s),
            Some(_) => None,
        };
        for w in files {
            self.apply_kind(Kind::Write, w, c, ctx, nested, reasons);
        }
        match suffix {
            Some(s) if s.is_empty() => {}
            Some(s) => {
                let home = self.home().to_string();
                for w in files {
                    if w.literal().as_deref() == Some("-") {
                        continue;
                    }
                    for cwd in &ctx.cwds {
                        let p = w.to_path(cwd, &home);
                        c.writes.push(format!("{p}{}", super::paths::escape(&s)));
                    }
                }
            }
            None if files.is_empty() => {}
            None => {
                reasons.push((Reason::UnknownPaths, format!(
                    "`{}` writes a backup of each file it edits where its suffix says, which is not known here",
                    c.program
                )));
                c.writes.push(super::paths::ANY_PATH.to_string());
            }
        }
    }

    /// `cp SRC… DEST` writes `DEST/name` for each source when `DEST` is a
    /// folder, which the command line does not tell: each is written too.
    /// A source given as `DIR/.` puts what `DIR` holds there: anything under
    /// `DEST`; so does one whose name cannot be told.
    fn under_dests(&self, sources: &[&Word], c: &mut Command, ctx: &mut SpecRun) {
        let home = self.home().to_string();
        let dests = std::mem::take(&mut ctx.dests);
        for w in sources {
            let text = w.literal().unwrap_or_else(|| w.raw.clone());
            let contents = text == "." || text.ends_with("/.") || text.ends_with("/./");
            for cwd in &ctx.cwds {
                let path = w.to_path(cwd, &home);
                let name = path.rsplit('/').next().unwrap_or_default();
                let unknown = name.is_empty() || name.contains(['{', '}']);
                for d in &dests {
                    let d = d.trim_end_matches('/');
                    c.writes.push(if contents || unknown {
                        format!("{d}/**")
                    } else {
                        format!("{d}/{name}")
                    });
                }
            }
        }
    }

    fn script_words(
        &mut self,
        words: &[&Word],
        c: &mut Command,
        ctx: &mut SpecRun,
        nested: &mut Vec<Nested>,
        reasons: &mut Vec<(Reason, String)>,
    ) {
        if words.is_empty() {
            return;
        }
        ctx.code_given = true;
        let texts: Option<Vec<String>> = words.iter().map(|w| w.literal()).collect();
        c.fetched_input |= words.iter().any(|w| w.fetched);
        match texts {
            // parallel given no `:::` arguments nor `-a` file appends each line
            // of its standard input to the command (or puts it in `{}`): a
            // word not known here.
            Some(mut t)
                if c.program == "parallel"
                    && !t
                        .iter()
                        .any(|w| matches!(w.as_str(), ":::" | "::::" | ":::+" | "::::+"))
                    && !t.iter().any(|w| w.contains('{') && w.contains('}'))
                    && !c.options.iter().any(|o| o == "-a" || o == "--arg-file") =>
            {
                t.push("\"$1\"".to_string());
                nested.push(Nested::Script(t.join(" ")));
            }
            Some(t) => nested.push(Nested::Script(t.join(" "))),
            None => {
                c.runs_code = true;
                reasons.push((
                    Reason::DynamicCode,
                    format!("the script given to `{}` is not literal", c.program),
                ));
            }
        }
    }

    /// The effect of one option value or operand.
    fn apply_kind(
        &mut self,
        kind: Kind,
        w: &Word,
        c: &mut Command,
        ctx: &mut SpecRun,
        nested: &mut Vec<Nested>,
        reasons: &mut Vec<(Reason, String)>,
    ) {
        if ctx.operand
            && ctx.remote_operands
            && matches!(
                kind,
                Kind::Read | Kind::Write | Kind::Dest | Kind::Delete | Kind::Tree
            )
        {
            if let Some(remote) = remote_operand(w) {
                match remote {
                    // `HOST:PATH`: the program runs ssh to reach HOST.
                    Remote::Ssh(host) => nested.push(Nested::Command(vec![Word::lit("ssh"), host])),
                    // `HOST::MODULE`, `rsync://HOST/…`: its own protocol.
                    Remote::Direct(fetch) => c.fetches.push(fetch),
                }
                return;
            }
            // An expansion may make it `HOST:PATH`: both, then.
            if could_be_remote(w) {
                nested.push(Nested::Command(vec![
                    Word::lit("ssh"),
                    Word::unknown(&w.raw),
                ]));
            }
        }
        let home = self.home().to_string();
        let paths_of = |w: &Word, ctx: &SpecRun| ctx.paths(w, &home);
        // A file a program reads or runs may be given as a URL (`xmllint
        // http://…`, `helm -f https://…`, `kubectl get -f http://…`): fetched.
        if matches!(kind, Kind::Read | Kind::Code)
            && let Some(url) = w.literal().filter(|l| is_url(l))
        {
            c.fetches.push(urls::parse_fetch(&url));
            if kind == Kind::Code {
                c.runs_code = true;
                c.fetched_input = true;
            }
            return;
        }
        match kind {
            Kind::Value | Kind::Pattern | Kind::Assignments => {}
            Kind::Tree | Kind::List | Kind::ListTree => {
                if w.literal().as_deref() == Some("-") {
                    return;
                }
                for p in paths_of(w, ctx) {
                    let whole = kind != Kind::List || ctx.recursive;
                    let list = if kind == Kind::Tree {
                        &mut c.reads
                    } else {
                        &mut c.lists
                    };
                    list.push(p.clone());
                    if whole {
                        list.push(tree_of(&p));
                    }
                }
            }
            Kind::Read | Kind::Write | Kind::Delete | Kind::Dest => {
                if w.literal().as_deref() == Some("-") {
                    return;
                }
                for p in paths_of(w, ctx) {
                    let tree = ctx.recursive.then(|| tree_of(&p));
                    if kind == Kind::Dest && tree.is_none() {
                        ctx.dests.push(p.clone());
                    }
                    let list = match kind {
                        Kind::Read => &mut c.reads,
                        Kind::Write | Kind::Dest => &mut c.writes,
                        _ => &mut c.deletes,
                    };
                    list.push(p.clone());
                    if let Some(t) = tree {
                        list.push(t);
                    }
                }
            }
            Kind::Cwd | Kind::OperandsCwd => ctx.cwds = paths_of(w, ctx),
            Kind::Fetch => c.fetches.push(match w.literal().or_else(|| as_written(w)) {
                Some(u) => urls::parse_fetch(&u),
                None => {
                    // The host is known only when the literal text before the first
                    // expansion already ends it (`https://example.com/$P`); otherwise
                    // (`http://$H/`, `https://example.com$X`) it could be any host.
                    let prefix = w.lit_prefix();
                    let host_done = prefix
                        .split_once("://")
                        .is_some_and(|(_, rest)| rest.contains(['/', '?', '#']));
                    let mut f = if host_done {
                        urls::parse_fetch(&prefix)
                    } else {
                        urls::parse_fetch("*")
                    };
                    f.url = w.raw.clone();
                    f
                }
            }),
            // A URL or a plain host name is that host; any other spelling
            // (`HOST:PORT:ADDR`, `host=H port=P`) could send it anywhere.
            Kind::Connect => c.fetches.push(match w.literal() {
                Some(u) if u.contains("://") => urls::parse_fetch(&u),
                Some(h)
                    if !h.is_empty()
                        && h.chars()
                            .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c)) =>
                {
                    urls::parse_fetch(&format!("tcp://{h}"))
                }
                Some(h) if h.starts_with('/') => {
                    // A local socket's folder (`psql -h /run/postgresql`).
                    for p in paths_of(w, ctx) {
                        c.writes.push(p);
                    }
                    return;
                }
                _ => {
                    let mut f = urls::parse_fetch("*");
                    f.url = w.raw.clone();
                    f
                }
            }),
            Kind::Host => c.fetches.push(match w.literal() {
                Some(h) => urls::parse_fetch(&format!("ssh://{h}")),
                None => urls::parse_fetch("*"),
            }),
            Kind::RevPath => {
                let lit = w.lit_prefix();
                if let Some((rev, path)) = lit.split_once(':') {
                    // `:N:path` is stage N of path in the index.
                    let stage = rev.is_empty()
                        && path.len() > 1
                        && path.as_bytes()[0].is_ascii_digit()
                        && path.as_bytes()[1] == b':';
                    let offset = lit.len() - path.len() + if stage { 2 } else { 0 };
                    let rest = w.drop_prefix(offset);
                    if !rest.literal().is_some_and(|p| p.is_empty()) {
                        c.reads.extend(paths_of(&rest, ctx));
                    }
                } else if !w.is_literal() {
                    c.reads.push(ANY_PATH.to_string());
                } else {
                    // A word without `:` may be a path after `--` (`git show HEAD
                    // -- .env`); read as one, a revision is a name read harmlessly.
                    c.reads.extend(paths_of(w, ctx));
                }
            }
            Kind::Command => nested.push(Nested::Command(vec![w.clone()])),
            Kind::Script => self.script_words(&[w], c, ctx, nested, reasons),
            Kind::Code => {
                ctx.code_given = true;
                c.runs_code = true;
                c.tags.push(INLINE_CODE.into());
                c.fetched_input |= w.fetched;
                if ctx.operand {
                    for p in paths_of(w, ctx) {
                        if self.tainted.contains(&p) {
                            c.fetched_input = true;
                        }
                        c.reads.push(p);
                    }
                }
            }
            Kind::Sql => match w.literal() {
                Some(sql) => {
                    if sql_destroys(&sql) {
                        c.tags.push("destructive".into());
                    }
                    // The client's escapes: shell commands, files, machine code.
                    for escape in programs::sql_escapes(&sql) {
                        match escape {
                            programs::SqlEscape::Shell(cmd) => nested.push(Nested::Script(cmd)),
                            programs::SqlEscape::Write(f) => {
                                self.apply_kind(
                                    Kind::Write,
                                    &Word::lit(&f),
                                    c,
                                    ctx,
                                    nested,
                                    reasons,
                                );
                            }
                            programs::SqlEscape::Read(f) => {
                                self.apply_kind(
                                    Kind::Read,
                                    &Word::lit(&f),
                                    c,
                                    ctx,
                                    nested,
                                    reasons,
                                );
                            }
                            programs::SqlEscape::Code(reason, why) => {
                                c.runs_code = true;
                                reasons.push((
                                    reason,
                                    format!("{why} (in the SQL given to `{}`)", c.program),
                                ));
                            }
                        }
                    }
                }
                None => {
                    c.tags.push("destructive".into());
                    reasons.push((
                        Reason::DynamicCode,
                        format!("the SQL given to `{}` is not literal", c.program),
                    ));
                }
            },
            Kind::FileList => {
                if w.literal().is_none_or(|l| l != "-") {
                    let lists = paths_of(w, ctx);
                    ctx.listed.extend(lists.iter().cloned());
                    c.reads.extend(lists);
                }
                ctx.listed.push(ANY_PATH.to_string());
                c.reads.push(ANY_PATH.to_string());
            }
            Kind::Sed | Kind::Awk => {
                let (name, plain): (&str, fn(&str) -> bool) = if kind == Kind::Sed {
                    ("sed script", programs::sed_is_plain)
                } else {
                    ("awk program", programs::awk_is_plain)
                };
                match w.literal() {
                    Some(text) if plain(&text) => {}
                    Some(_) => c.runs_code = true,
                    None => {
                        c.runs_code = true;
                        c.fetched_input |= w.fetched;
                        reasons.push((
                            Reason::DynamicCode,
                            format!("the {name} given to `{}` is not literal", c.program),
                        ));
                    }
                }
            }
        }
    }

    /// tar: an archive created is written, not read; extracting writes the
    /// folder it runs in; an archive named `[USER@]HOST:FILE` is read from
    /// HOST over rsh or ssh (unless `--force-local`).
    fn tar(&mut self, c: &mut Command, ctx: &SpecRun, operands: &[Word]) {
        let home = self.home().to_string();
        if !c.argv.iter().any(|a| a == "--force-local") {
            for a in c.argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
                if let Some((host, _)) = a.split_once(':')
                    && !host.is_empty()
                    && !host.contains('/')
                {
                    let host = host.rsplit('@').next().unwrap_or(host);
                    c.fetches.push(urls::parse_fetch(&format!("ssh://{host}")));
                }
            }
        }
        let creates = c.options.iter().any(|o| {
            matches!(
                o.as_str(),
                "--create" | "--append" | "--update" | "-c" | "-r" | "-u"
            )
        });
        let extracts = c
            .options
            .iter()
            .any(|o| matches!(o.as_str(), "--extract" | "--get" | "-x"));
        if creates {
            // The archive (`-f`) is written, not read.
            let archive: Vec<String> = c.reads.drain(..).collect();
            let files: Vec<String> = operands.iter().flat_map(|w| ctx.paths(w, &home)).collect();
            for p in archive {
                if files.contains(&p) || ctx.listed.contains(&p) {
                    c.reads.push(p);
                } else {
                    c.writes.push(p);
                }
            }
            for p in files {
                c.reads.push(p.clone());
                c.reads.push(tree_of(&p));
            }
        }
        if extracts {
            for cwd in &ctx.cwds {
                c.writes.push(tree_of(cwd));
            }
        }
    }

    /// Program-specific readings the format does not express.
    fn special(
        &mut self,
        c: &mut Command,
        ctx: &mut SpecRun,
        operands: &[Word],
        reasons: &mut Vec<(Reason, String)>,
    ) {
        let home = self.home().to_string();
        // `git log -L START,END:FILE` (`-L:FUNCTION:FILE`) prints FILE's lines.
        if c.program == "git" && matches!(c.subcommand.as_str(), "log" | "whatchanged") {
            let mut values: Vec<&str> = option_values(c.argv.iter().skip(1), "-L");
            values.extend(
                c.argv
                    .iter()
                    .filter_map(|a| a.strip_prefix("-L").filter(|v| !v.is_empty())),
            );
            let files: Vec<String> = values
                .into_iter()
                .filter_map(|v| v.rsplit_once(':').map(|(_, f)| f))
                .filter(|f| !f.is_empty())
                .flat_map(|f| ctx.paths(&Word::lit(f), &home))
                .collect();
            c.reads.extend(files);
        }
        match c.program.as_str() {
            "dd" => {
                for w in operands {
                    let lit = w.lit_prefix();
                    for (key, write) in [("if=", false), ("of=", true)] {
                        if lit.starts_with(key) {
                            let target = w.drop_prefix(key.len());
                            if target
                                .literal()
                                .is_some_and(|l| NOT_FILES.contains(&l.as_str()))
                            {
                                continue;
                            }
                            for cwd in &ctx.cwds {
                                let p = target.to_path(cwd, &home);
                                if write {
                                    c.writes.push(p);
                                } else {
                                    c.reads.push(p);
                                }
                            }
                        }
                    }
                }
            }
            // Printing the environment prints the credentials it holds.
            "env" if operands.iter().all(is_assignment) => c.tags.push("credentials".into()),
            "export" | "declare" | "typeset" | "readonly" | "local" | "set"
                if operands.is_empty() =>
            {
                c.tags.push("credentials".into());
            }
            // BSD-style `ps e` (`ps eww`, `ps auxe`) shows each process's environment.
            "ps" if operands.iter().any(|w| {
                w.literal()
                    .is_some_and(|l| !l.starts_with('-') && l.contains('e'))
            }) =>
            {
                c.tags.push("credentials".into());
            }
            // `kubectl get secret x -o yaml` prints the secret's data; so may
            // `get --raw /api/v1/…/secrets` and `get -f FILE` (the live objects
            // the file names, Secrets among them).
            "kubectl"
                if matches!(c.subcommand.as_str(), "get" | "describe" | "edit")
                    && (operands.iter().any(|w| {
                        w.lit_prefix()
                            .to_ascii_lowercase()
                            .split([',', '/'])
                            .any(|r| r.starts_with("secret"))
                    }) || c.options.iter().any(|o| {
                        let name = o.split('=').next().unwrap_or(o);
                        matches!(name, "--raw" | "-f" | "--filename" | "-k" | "--kustomize")
                    })) =>
            {
                c.tags.push("credentials".into());
            }
            // `helm --set-file KEY=PATH[,…]` reads each PATH into the values.
            "helm" => {
                let paths = keyed_paths(&c.argv, "--set-file", ctx, &home);
                c.reads.extend(paths);
            }
            // `gh config get oauth_token` prints the token where gh keeps it in
            // its configuration file.
            // npm 8 and older print a registry token asked for by name
            // (`npm config get //registry.npmjs.org/:_authToken`).
            "npm" | "pnpm" | "yarn"
                if matches!(
                    c.subcommand.as_str(),
                    "config get" | "config" | "get" | "c get" | "c"
                ) && operands.iter().any(|w| {
                    w.literal().is_none_or(|k| {
                        let k = k.to_ascii_lowercase();
                        k.starts_with("//")
                            || ["auth", "token", "password", "_pass", "cert", "key"]
                                .iter()
                                .any(|s| k.contains(s))
                    })
                }) =>
            {
                c.tags.push("credentials".into());
            }
            // `go build -ldflags='-linkmode=external -extld=F'` runs F as the linker.
            "go" if option_values(c.argv.iter().skip(1), "-ldflags")
                .iter()
                .chain(option_values(c.argv.iter().skip(1), "--ldflags").iter())
                .any(|v| v.contains("extld") || v.contains("linkmode") || v.contains("tmpdir")) =>
            {
                c.tags.push(INLINE_CODE.into());
                c.runs_code = true;
            }
            "gh" if c.subcommand == "config get"
                && operands.iter().any(|w| {
                    w.literal()
                        .is_none_or(|k| k.to_ascii_lowercase().contains("token"))
                }) =>
            {
                c.tags.push("credentials".into());
            }
            // Gradle's `properties` task prints every property, the values of
            // ~/.gradle/gradle.properties (registry and signing secrets) included.
            "gradle" | "gradlew"
                if operands.iter().any(|w| {
                    w.literal()
                        .is_some_and(|t| t == "properties" || t.ends_with(":properties"))
                }) =>
            {
                c.tags.push("credentials".into());
            }
            // git matches a glob or a magic pathspec (`'*.env'`, `'.en?'`,
            // `':(icase).ENV'`) itself, against files the call does not name.
            "git"
                if matches!(
                    c.subcommand.as_str(),
                    "log"
                        | "show"
                        | "diff"
                        | "grep"
                        | "diff-tree"
                        | "diff-index"
                        | "diff-files"
                        | "whatchanged"
                        | "format-patch"
                        | "archive"
                        | "blame"
                        | "ls-files"
                        | "ls-tree"
                ) && (c.argv.iter().any(|a| {
                    a == "--glob-pathspecs" || a == "--icase-pathspecs" || a == "--noglob-pathspecs"
                }) || operands
                    .iter()
                    // `git grep PATTERN PATHSPEC…`: the first is a pattern, unless `-e`/`-f` gave it.
                    .skip(usize::from(
                        c.subcommand == "grep"
                            && !c.options.iter().any(|o| {
                                matches!(o.as_str(), "-e" | "-f" | "--and" | "--or" | "--not")
                            }),
                    ))
                    .any(|w| {
                        w.literal().is_some_and(|l| {
                            l.contains(['*', '?', '['])
                                || [":(", ":!", ":^"].iter().any(|m| l.starts_with(m))
                        })
                    })) =>
            {
                reasons.push((Reason::UnknownPaths, format!(
                    "`git {}` matches its pathspecs itself, so the files it reads are not known here",
                    c.subcommand
                )));
            }
            // A property that names a program, a module or a file of code
            // (`-DargLine=-javaagent:/x.jar`, `-Dmaven.ext.class.path=…`,
            // `-DCMAKE_TOOLCHAIN_FILE=…`, `-DCMAKE_C_COMPILER_LAUNCHER=…`).
            "mvn" | "mvnw" | "mvnd" | "gradle" | "gradlew" | "cmake"
                if defines_code(&c.argv, c.program.starts_with("gradle")) =>
            {
                c.tags.push(INLINE_CODE.into());
                c.runs_code = true;
            }
            // MSBuild properties that are commands or name targets files to
            // import (`-p:PreBuildEvent=CMD`, `-p:CustomBeforeMicrosoftCommonTargets=F`).
            "dotnet" | "msbuild" if msbuild_code_property(&c.argv) => {
                c.tags.push(INLINE_CODE.into());
                c.runs_code = true;
            }
            // GNU parallel puts its arguments in place of `{}`, `{.}`, `{1}`, …
            // (and `{= PERL =}` runs Perl), and takes them from files too.
            "parallel" => {
                let words: Vec<&str> = operands.iter().map(|w| w.raw.as_str()).collect();
                if words.iter().any(|w| w.contains("{=")) {
                    reasons.push((
                        Reason::TemplatedCommand,
                        "a `{= … =}` replacement string of `parallel` is Perl code".into(),
                    ));
                    c.runs_code = true;
                } else if words.iter().any(|w| w.contains('{') && w.contains('}')) {
                    reasons.push((
                        Reason::TemplatedCommand,
                        "`parallel` puts its arguments in place of `{…}`, so the command is not known here"
                            .into(),
                    ));
                }
                if words.contains(&"::::")
                    || c.options.iter().any(|o| o == "-a" || o == "--arg-file")
                {
                    c.reads.push(ANY_PATH.to_string());
                }
            }
            // `--emit=KIND=PATH[,…]` writes each PATH; source on standard input
            // (`rustc - <<< 'include_str!(…)'`) is code the call gives.
            "rustc" => {
                let paths = keyed_paths(&c.argv, "--emit", ctx, &home);
                c.writes.extend(paths);
                // Options that load code into the compiler or choose what it runs:
                // `-Z codegen-backend=F`, `--extern NAME=F` (a proc macro), the
                // sysroot, a target file, the linker.
                let loads = c.argv.iter().skip(1).any(|a| {
                    a.starts_with("-Z")
                        || a.starts_with("--extern")
                        || a.starts_with("--sysroot")
                        || a.starts_with("-Clink")
                        || a.starts_with("linker=")
                        || a.starts_with("link-arg")
                        || a.ends_with(".json")
                });
                if loads || reads_stdin_source(&c.argv) {
                    c.tags.push(INLINE_CODE.into());
                    c.runs_code = true;
                }
            }
            // Options handed to another program whole: the linker, assembler or
            // preprocessor (`-Xlinker --plugin=F`, `-Wl,-o,F`), the programs gcc
            // runs (`-B DIR`, `-wrapper`, `-specs=F`) or its plugins.
            // Source on standard input (`gcc -E - <<< '#include "F"'`) is code
            // the call gives; an include folder (`-I DIR`, `-isystem DIR`) is
            // read whole by the `#include`s of the sources.
            program if is_c_compiler(program) => {
                let passes = c.argv.iter().skip(1).any(|a| {
                    [
                        "-Wl,",
                        "-Wa,",
                        "-Wp,",
                        "-Xlinker",
                        "-Xassembler",
                        "-Xpreprocessor",
                        "-Xclang",
                        "-fplugin",
                        "-B",
                        "-wrapper",
                        "-specs",
                        "--specs",
                        "--ld-path",
                        "-fuse-ld=/",
                        "-fuse-ld=.",
                    ]
                    .iter()
                    .any(|p| a.starts_with(p))
                });
                if passes || reads_stdin_source(&c.argv) {
                    c.tags.push(INLINE_CODE.into());
                    c.runs_code = true;
                }
                let mut dirs = Vec::new();
                for option in ["-I", "-isystem", "-iquote", "-idirafter", "-L"] {
                    dirs.extend(option_values(c.argv.iter().skip(1), option));
                    if option.len() == 2 {
                        dirs.extend(
                            c.argv
                                .iter()
                                .skip(1)
                                .filter_map(|a| a.strip_prefix(option).filter(|d| !d.is_empty())),
                        );
                    }
                }
                let trees: Vec<String> = dirs
                    .into_iter()
                    .flat_map(|d| ctx.paths(&Word::lit(d), &home))
                    .map(|p| tree_of(&p))
                    .collect();
                c.reads.extend(trees);
            }
            // `cargo rustc -- -C linker=F`, `cmake --build B -- -f F`: the words
            // after `--` are the compiler's or the build tool's own options.
            "cargo" | "cmake"
                if (c.subcommand == "rustc"
                    || c.subcommand == "rustdoc"
                    || c.options
                        .iter()
                        .any(|o| o == "--build" || o.starts_with("--build=")))
                    && after_dashes(&c.argv).next().is_some() =>
            {
                c.tags.push(INLINE_CODE.into());
                c.runs_code = true;
            }
            // `npm test -- --testEnvironment=F`: the words after `--` go to the
            // script's program, not known here; each path among them (or an
            // option's value that is one) is read, so one outside the workspace
            // shows.
            "npm" | "pnpm" | "yarn" | "bun" | "tox" | "nox" if c.argv.iter().any(|a| a == "--") => {
                for a in after_dashes(&c.argv) {
                    let value = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
                    if value.contains('/') || value.starts_with('~') {
                        c.reads.extend(ctx.paths(&Word::lit(value), &home));
                    }
                }
            }
            // `go list -m HOST/PATH@VERSION` (and `get`, `install`, `run`, `mod
            // download`): the module comes from the proxy or, direct, from HOST.
            "go" if operands
                .iter()
                .any(|w| w.literal().is_some_and(|l| hosted_module(&l).is_some())) =>
            {
                for l in operands.iter().filter_map(|w| w.literal()) {
                    if let Some(module) = hosted_module(&l) {
                        c.fetches
                            .push(urls::parse_fetch(&format!("https://{module}")));
                    }
                }
                c.tags.push("network".into());
            }
            // pytest removes its `--basetemp` folder whole before the first test
            // that asks for `tmp_path`; `--cov-report=TYPE:PATH` writes PATH.
            "pytest" | "py.test" => {
                let trees: Vec<String> = c.deletes.iter().map(|d| tree_of(d)).collect();
                c.deletes.extend(trees);
                for v in option_values(&c.argv, "--cov-report") {
                    if let Some((_, path)) = v.split_once(':')
                        && !path.is_empty()
                    {
                        c.writes.extend(ctx.paths(&Word::lit(path), &home));
                    }
                }
            }
            // `--reporter-option output=PATH` (mocha-junit-reporter's `mochaFile`,
            // xunit's `output`) writes PATH.
            "mocha" => {
                let values = ["-O", "--reporter-option", "--reporter-options"]
                    .iter()
                    .flat_map(|o| option_values(&c.argv, o))
                    .collect::<Vec<_>>();
                for kv in values.iter().flat_map(|v| v.split(',')) {
                    if let Some((key, path)) = kv.split_once('=')
                        && ["output", "file", "mochafile", "outputfile", "outputpath"]
                            .contains(&key.to_ascii_lowercase().as_str())
                    {
                        c.writes.extend(ctx.paths(&Word::lit(path), &home));
                    }
                }
            }
            // `ruff --config 'KEY = VALUE'` sets any setting (`cache-dir`,
            // `extend`) from the call itself; `--config FILE` reads FILE (and
            // quotes it when it does not parse).
            "ruff" if c.argv.iter().any(|a| a.starts_with("--config")) => {
                for v in option_values(&c.argv, "--config") {
                    if v.contains('=') {
                        c.tags.push(INLINE_CODE.into());
                        c.read_only = false;
                    } else {
                        c.reads.extend(ctx.paths(&Word::lit(v), &home));
                    }
                }
            }
            // `--noent` expands the entities the document names: any file, any URL.
            "xmllint" if c.argv.iter().any(|a| a == "--noent" || a == "-noent") => {
                c.reads.push(ANY_PATH.to_string());
            }
            // The test harness's own `--logfile FILE`, after `--`, writes FILE.
            "cargo" if matches!(c.subcommand.as_str(), "test" | "t" | "bench") => {
                let harness = after_dashes(&c.argv);
                for p in option_values(harness, "--logfile") {
                    c.writes.extend(ctx.paths(&Word::lit(p), &home));
                }
            }
            // `git symbolic-ref HEAD refs/heads/x` (two operands) changes HEAD.
            // `--batch` prints the objects named on standard input (`HEAD:.env`).
            "git"
                if c.subcommand == "cat-file"
                    && c.options.iter().any(|o| {
                        o == "--batch"
                            || o.starts_with("--batch=")
                            || o.starts_with("--batch-command")
                    }) =>
            {
                c.reads.push(ANY_PATH.to_string());
            }
            // A pager's `+CMD` runs when a file opens: less's `+!CMD` runs a shell
            // command. A word not known here could be any command.
            "less" | "more" | "most" => {
                for w in operands.iter().filter(|w| w.lit_prefix().starts_with('+')) {
                    match w.literal() {
                        Some(cmd) if programs::pager_command_is_plain(&cmd) => {}
                        Some(_) => c.runs_code = true,
                        None => {
                            c.runs_code = true;
                            reasons.push((
                                Reason::DynamicCode,
                                format!("the command given to `{}` is not literal", c.program),
                            ));
                        }
                    }
                }
            }
            // A Maven goal written `PREFIX:GOAL` (`exec:exec`, `org.x:y:1.0:run`)
            // runs a plugin the call chooses, not the project's own build;
            // `-Dexec.executable=…` then names what it runs.
            "mvn" | "mvnw" | "mvnd"
                if operands
                    .iter()
                    .any(|w| w.literal().is_none_or(|g| g.contains(':'))) =>
            {
                c.tags.push(INLINE_CODE.into());
            }
            "jq" | "gojq" | "jaq" | "yq" => {
                // The filter as the program gets it (argv: `e''nv` is `env`), in
                // any word, since it may be an option's value (`yq --expression
                // 'env(X)'`). One not known here, or read from a file (`-f`, a
                // cluster such as `-nf`), may print the environment.
                let words = &c.argv[1..];
                let from_file = words.iter().any(|a| {
                    a.starts_with("--from-file")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
                });
                let unknown = from_file || operands.iter().any(|w| !w.is_literal());
                // jq's `env` and `$ENV`; yq's `env(NAME)`, `strenv` and `envsubst`.
                if unknown
                    || words
                        .iter()
                        .any(|t| mentions_env(t) || t.contains("strenv") || t.contains("envsubst"))
                {
                    c.tags.push("credentials".into());
                }
                // jq's `import`/`include` and yq's `load(…)` read the files they
                // name, which the expression spells as it likes.
                if words.iter().any(|t| loads_files(t)) {
                    c.reads.push(ANY_PATH.to_string());
                }
            }
            "curl" => {
                // `-d @file`, `--data-binary @file`, `-F name=@file`, `-T file`.
                for (i, a) in c.argv.iter().enumerate() {
                    let value = a
                        .strip_prefix('@')
                        .or_else(|| a.split_once("=@").map(|(_, f)| f))
                        .or_else(|| a.split_once("=<").map(|(_, f)| f));
                    if i > 0
                        && let Some(file) = value
                        && !file.is_empty()
                        && file != "-"
                    {
                        for cwd in &ctx.cwds {
                            c.reads.push(paths::join(cwd, &paths::escape(file)));
                        }
                    }
                }
                if c.options
                    .iter()
                    .any(|o| matches!(o.as_str(), "--remote-name" | "--remote-name-all" | "-O"))
                {
                    for f in &c.fetches.clone() {
                        let name = f.path.rsplit('/').next().unwrap_or_default();
                        for cwd in &ctx.cwds {
                            c.writes.push(if name.is_empty() {
                                format!("{cwd}/*")
                            } else {
                                paths::join(cwd, &paths::escape(name))
                            });
                        }
                    }
                }
            }
            "find" => {
                // find walks every start point (the working folder by default).
                let starts: Vec<String> = if operands.is_empty() {
                    ctx.cwds.clone()
                } else {
                    operands.iter().flat_map(|w| ctx.paths(w, &home)).collect()
                };
                // Walking lists names, sizes and times; what `-exec` runs on
                // each file is its own command, with its own reads.
                for s in &starts {
                    if !c.lists.contains(s) {
                        c.lists.push(s.clone());
                    }
                    c.lists.push(tree_of(s));
                }
                let filtered = c.options.iter().any(|o| {
                    matches!(
                        o.as_str(),
                        "-name"
                            | "-iname"
                            | "-path"
                            | "-ipath"
                            | "-wholename"
                            | "-iwholename"
                            | "-regex"
                            | "-iregex"
                            | "-type"
                            | "-newer"
                            | "-mtime"
                            | "-mmin"
                            | "-size"
                            | "-user"
                            | "-group"
                            | "-perm"
                            | "-empty"
                            | "-links"
                    )
                });
                if c.options.iter().any(|o| o == "-delete") {
                    // Unfiltered, find removes everything below its start points
                    // and the start points; filtered, only what its tests pick.
                    c.deletes.retain(|d| !starts.contains(d));
                    for s in &starts {
                        c.deletes.push(tree_of(s));
                        if !filtered {
                            c.deletes.push(s.clone());
                        }
                    }
                }
            }
            "rg" | "grep" | "egrep" | "fgrep" | "ag" => {
                // A glob filter (`rg -g .env`, `grep -r --include=.env`) names files:
                // each tree read is also a read of the files it picks.
                let filters: Vec<String> =
                    c.argv
                        .windows(2)
                        .filter_map(|pair| {
                            let (a, b) = (&pair[0], &pair[1]);
                            // grep's `-G` is `--basic-regexp`; ag's is a file filter.
                            (matches!(a.as_str(), "-g" | "--glob" | "--iglob" | "--include")
                                || (a == "-G" && c.program == "ag"))
                                .then(|| b.clone())
                        })
                        .chain(c.argv.iter().filter_map(|a| {
                            ["--glob=", "--iglob=", "--include="]
                                .iter()
                                .find_map(|p| a.strip_prefix(p).map(str::to_string))
                                .or_else(|| {
                                    a.strip_prefix("-g")
                                        .filter(|r| !r.is_empty())
                                        .map(str::to_string)
                                })
                        }))
                        // `rg --type-add 'NAME:GLOB,…' -tNAME` picks files by the type's globs.
                        .chain(
                            c.argv
                                .windows(2)
                                .filter(|pair| pair[0] == "--type-add")
                                .map(|pair| pair[1].clone())
                                .chain(c.argv.iter().filter_map(|a| {
                                    a.strip_prefix("--type-add=").map(str::to_string)
                                }))
                                .filter_map(|def| def.split_once(':').map(|(_, g)| g.to_string()))
                                .flat_map(|globs| {
                                    globs.split(',').map(str::to_string).collect::<Vec<_>>()
                                }),
                        )
                        .map(|g| g.trim_matches(['\'', '"']).to_string())
                        // `!GLOB` excludes files: it picks none.
                        .filter(|g| !g.is_empty() && !g.starts_with('!'))
                        .collect();
                let trees: Vec<String> = c
                    .reads
                    .iter()
                    .filter(|r| r.ends_with("/**"))
                    .cloned()
                    .collect();
                let trees = if trees.is_empty() && !filters.is_empty() {
                    ctx.cwds.iter().map(|cwd| tree_of(cwd)).collect()
                } else {
                    trees
                };
                // With a glob filter, only the files it picks are read below
                // the folder: `rg -g '*.ts' TODO` reads `DIR/**/*.ts`, not the
                // whole tree.
                // (`--type-add` only defines a type, which picks nothing unless
                // `-t` names it: the tree stays.)
                let picks = c.argv.iter().enumerate().any(|(i, a)| {
                    let value = if matches!(a.as_str(), "-g" | "--glob" | "--iglob" | "--include")
                        || (a == "-G" && c.program == "ag")
                    {
                        c.argv.get(i + 1).map(String::as_str)
                    } else {
                        ["--glob=", "--iglob=", "--include="]
                            .iter()
                            .find_map(|p| a.strip_prefix(p))
                            .or_else(|| a.strip_prefix("-g").filter(|r| !r.is_empty()))
                    };
                    value.is_some_and(|v| {
                        let v = v.trim_matches(['\'', '"']);
                        !v.is_empty() && !v.starts_with('!')
                    })
                });
                if picks {
                    c.reads.retain(|r| !trees.contains(r));
                }
                for t in &trees {
                    for g in &filters {
                        let g = if g.contains('/') {
                            g.clone()
                        } else {
                            format!("**/{g}")
                        };
                        c.reads
                            .push(paths::clean(&format!("{}/{g}", t.trim_end_matches("/**"))));
                    }
                }
            }
            "git"
                if c.subcommand == "restore"
                    && c.options.iter().any(|o| o == "--staged" || o == "-S")
                    && !c.options.iter().any(|o| o == "--worktree" || o == "-W") =>
            {
                // Only the index changes: nothing in the working tree is lost.
                c.tags.retain(|t| t != "vcs-lose");
            }
            "git"
                if matches!(c.subcommand.as_str(), "checkout" | "switch")
                    && c.options.iter().any(|o| {
                        matches!(
                            o.as_str(),
                            "-b" | "-B" | "--orphan" | "-c" | "-C" | "--create"
                        )
                    })
                    && !c
                        .options
                        .iter()
                        .any(|o| o == "-f" || o == "--force" || o == "-B" || o == "-C")
                    && !c.argv.iter().any(|a| a == "--")
                    && operands.len() <= 2 =>
            {
                // A new branch carries the working tree over: nothing is lost.
                c.tags.retain(|t| t != "vcs-lose");
            }
            "git"
                if c.subcommand == "push"
                    && operands.iter().any(|w| {
                        w.lit_prefix().starts_with('+') || w.lit_prefix().starts_with(':')
                    }) =>
            {
                // `+refspec` forces, `:branch` deletes.
                c.tags.push("vcs-lose".into());
            }
            "tar" => self.tar(c, ctx, operands),
            _ => {}
        }
        let _ = reasons;
    }

    /// Records a command, then analyses what it runs.
    fn record(
        &mut self,
        mut c: Command,
        reasons: Vec<(Reason, String)>,
        nested: Vec<Nested>,
        cwds: &[String],
        stdin: bool,
        depth: usize,
    ) -> Option<Flow> {
        let inherit = self.inherit_stdin.take();
        if !reasons.is_empty() {
            c.exact = false;
        }
        for (reason, why) in reasons {
            self.fx.inexact(reason, why);
        }
        for d in c.deletes.clone() {
            if !c.writes.contains(&d) {
                c.writes.push(d);
            }
        }
        super::dedup(&mut c.reads);
        super::dedup(&mut c.lists);
        super::dedup(&mut c.writes);
        super::dedup(&mut c.deletes);
        if self.background > 0 {
            c.tags.push("background".into());
        }
        if self.looping > 0 {
            c.tags.push("loop".into());
        }
        // A function that calls itself, or a loop that starts commands in the
        // background, can fill the process table (`:(){ :|:& };:`,
        // `while true; do … & done`): not read-only, whatever it runs.
        if c.tags.iter().any(|t| t == "recursion") || (self.background > 0 && self.looping > 0) {
            c.read_only = false;
        }
        super::dedup(&mut c.tags);
        if !c.fetches.is_empty() {
            // Files a fetching command writes hold fetched data.
            self.tainted.extend(c.writes.iter().cloned());
        }
        let mut wrappers = c.wrappers.clone();
        let program = c.program.clone();
        let cwd_for_nested = cwds.to_vec();
        let start_points: Vec<String> = if program == "find" {
            c.lists
                .iter()
                .filter(|r| !r.ends_with("/**"))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let fetched = c.fetched_input;
        self.fx.commands.push(c);
        let mut moved = None;
        for n in nested {
            match n {
                Nested::Command(mut words) => {
                    if words.is_empty() {
                        continue;
                    }
                    if program == "find" {
                        // `{}` is each path found: below the start points.
                        let found = match start_points.as_slice() {
                            [] => ANY_PATH.to_string(),
                            [one] => tree_of(one),
                            many => format!(
                                "{{{}}}",
                                many.iter()
                                    .map(|p| tree_of(p))
                                    .collect::<Vec<_>>()
                                    .join(",")
                            ),
                        };
                        for w in &mut words {
                            if w.raw.contains("{}") {
                                *w = Word::pattern("{}", found.clone());
                            }
                        }
                    }
                    wrappers.push(program.clone());
                    let inner = self.run(
                        words,
                        &cwd_for_nested,
                        &wrappers,
                        stdin || fetched,
                        depth,
                        Pending {
                            stdin_given: inherit.is_some(),
                            stdin: inherit.clone(),
                            ..Pending::default()
                        },
                    );
                    wrappers.pop();
                    if IN_SHELL.contains(&program.as_str()) {
                        moved = Some(inner);
                    }
                }
                Nested::Script(text) => {
                    wrappers.push(format!("{program} -c"));
                    self.script(
                        &text,
                        &cwd_for_nested,
                        &wrappers,
                        stdin || fetched,
                        depth + 1,
                    );
                    wrappers.pop();
                }
            }
        }
        moved
    }
}

/// Wrappers that run their command in this same shell (a builtin such as
/// `cd` among them), not as a program of its own.
const IN_SHELL: &[&str] = &["builtin", "command"];

/// How a remote operand of `scp` or `rsync` is reached.
enum Remote {
    /// Through `ssh HOST` (the word is the host, or unknown).
    Ssh(Word),
    /// Over the program's own protocol.
    Direct(urls::Fetch),
}

/// A remote operand of `scp` or `rsync`: `[USER@]HOST:PATH` or
/// `scp://[USER@]HOST[:PORT]/PATH`, reached through ssh, or `HOST::MODULE` and
/// `rsync://HOST/MODULE`, reached directly. A `:` before any `/` in the text
/// known before an expansion makes it remote, as these programs read it; a
/// host not all known could be any. `None` for a local path.
fn remote_operand(w: &Word) -> Option<Remote> {
    let known = w.lit_prefix();
    let host_word = |host: &str, complete: bool| {
        if complete && !host.is_empty() && !host.starts_with('[') {
            Word::lit(host)
        } else {
            Word::unknown(&w.raw)
        }
    };
    if let Some((scheme, rest)) = known.split_once("://") {
        let (authority, complete) = match rest.split_once('/') {
            Some((a, _)) => (a, true),
            None => (rest, w.is_literal()),
        };
        let host = authority.rsplit('@').next().unwrap_or("");
        return match scheme {
            "rsync" if complete => Some(Remote::Direct(urls::parse_fetch(&format!(
                "rsync://{authority}"
            )))),
            "rsync" => Some(Remote::Direct(any_host(w))),
            "scp" | "sftp" | "ssh" => {
                let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
                Some(Remote::Ssh(host_word(host, complete)))
            }
            _ => None,
        };
    }
    let colon = known.find(':')?;
    if colon == 0 || known[..colon].contains('/') {
        return None;
    }
    let host = known[..colon].rsplit('@').next().unwrap_or("");
    if known[colon + 1..].starts_with(':') {
        return Some(Remote::Direct(if host.is_empty() {
            any_host(w)
        } else {
            urls::parse_fetch(&format!("rsync://{host}"))
        }));
    }
    Some(Remote::Ssh(host_word(host, true)))
}

/// Whether an expansion or glob comes before the word's first `/`, so that
/// it could make the word `HOST:PATH` (`~` and `$HOME` start with `/`).
fn could_be_remote(w: &Word) -> bool {
    use super::word::Part;
    for part in &w.parts {
        match part {
            Part::Lit(t) if t.contains('/') => return false,
            Part::Lit(_) => {}
            Part::Home | Part::Cwd | Part::Pattern(_) => return false,
            Part::Glob(_) | Part::Unknown { .. } => return true,
        }
    }
    false
}

/// A connection to a host not known here.
fn any_host(w: &Word) -> urls::Fetch {
    let mut f = urls::parse_fetch("*");
    f.url = w.raw.clone();
    f
}

/// How one command's specification is being applied.
struct SpecRun {
    cwds: Vec<String>,
    recursive: bool,
    layout: Option<Vec<super::catalog::Slot>>,
    not_read_only: bool,
    code_given: bool,
    /// `code_given` only because the program always runs code (the tag
    /// `runs-code`: a test runner's tests), not because the call gave it.
    code_by_tag: bool,
    options_unknown: bool,
    /// The word being applied is an operand (not an option's value).
    operand: bool,
    /// Path operands `HOST:PATH` are remote files (`scp`, `rsync`).
    remote_operands: bool,
    /// An in-place option was given: its backup suffix, if it has a value.
    in_place: Option<Option<Word>>,
    /// The `dest` paths given (not as whole trees): the sources' names are
    /// written under them.
    dests: Vec<String>,
    /// The reads of `file_list` values: the lists, and the files they name.
    listed: Vec<String>,
}

impl SpecRun {
    /// A word as a path in each folder the command may run in.
    fn paths(&self, w: &Word, home: &str) -> Vec<String> {
        self.cwds.iter().map(|cwd| w.to_path(cwd, home)).collect()
    }
}

/// Redirection effects waiting for their command.
#[derive(Default)]
struct Pending {
    reads: Vec<String>,
    writes: Vec<String>,
    fetches: Vec<urls::Fetch>,
    inexact: Vec<(Reason, String)>,
    fetched: bool,
    /// Standard input is redirected (a file, a here-document, a here-string).
    stdin_given: bool,
    /// The literal text on standard input, when it is known.
    stdin: Option<String>,
}

/// What a shell builtin that prints its arguments (`echo`, `printf`), or
/// `cat` given only its input, prints, when the words say it exactly.
fn printed(program: &str, args: &[Word], stdin: Option<&str>) -> Option<String> {
    let words: Vec<String> = args.iter().map(Word::literal).collect::<Option<_>>()?;
    match program {
        "echo" => {
            let mut newline = true;
            let mut rest = words.as_slice();
            while let Some(first) = rest.first()
                && first.len() > 1
                && first.starts_with('-')
                && first[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
            {
                if first.contains('n') {
                    newline = false;
                }
                rest = &rest[1..];
            }
            let text = rest.join(" ");
            // Escapes (`echo -e`, and sh's echo always) are not read here.
            if text.contains('\\') {
                return None;
            }
            Some(if newline { format!("{text}\n") } else { text })
        }
        "printf" => {
            let (format, values) = words.split_first()?;
            if format.starts_with('-') {
                return None;
            }
            let format = format.replace("\\n", "\n");
            if format.contains('\\') {
                return None;
            }
            let holes = format.matches('%').count();
            if holes == 0 {
                return values.is_empty().then_some(format);
            }
            if holes != 1 || !format.contains("%s") {
                return None;
            }
            let values: Vec<&str> = if values.is_empty() {
                vec![""]
            } else {
                values.iter().map(String::as_str).collect()
            };
            Some(values.iter().map(|v| format.replace("%s", v)).collect())
        }
        "cat" if words.is_empty() => stdin.map(str::to_string),
        _ => None,
    }
}

fn spec_stdin_code(spec: &Spec, _c: &Command) -> bool {
    spec.stdin_code
}

/// The text of a word whose only non-literal parts are globs (a URL with
/// `[…]` in it): what the program gets when no file matches.
fn as_written(w: &Word) -> Option<String> {
    let mut out = String::new();
    for p in &w.parts {
        match p {
            Part::Lit(s) | Part::Glob(s) => out.push_str(s),
            _ => return None,
        }
    }
    Some(out)
}

/// `DIR/**` for a path (a pattern stays what it is when it already covers trees).
fn tree_of(p: &str) -> String {
    if p == "/" {
        ANY_PATH.to_string()
    } else if p.ends_with("/**") {
        p.to_string()
    } else {
        format!("{p}/**")
    }
}

fn is_system_program(path: &str) -> bool {
    let clean = paths::clean(path);
    SYSTEM_DIRS.iter().any(|d| clean.starts_with(d)) && !clean.contains("..")
}

/// Whether an MSBuild property given on the command line is a command or
/// names a file to import (`-p:PreBuildEvent=CMD`, `-p
/// CustomBeforeMicrosoftCommonTargets=FILE`): a name ending in `Event`,
/// `Targets`, `Props`, `Path`, `Command`, `Exec` or `Arguments`.
fn msbuild_code_property(argv: &[String]) -> bool {
    let code = |body: &str| {
        body.split(';').any(|kv| {
            let name = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
            [
                "event",
                "targets",
                "props",
                "path",
                "command",
                "exec",
                "arguments",
            ]
            .iter()
            .any(|s| name.ends_with(s))
        })
    };
    argv.iter()
        .skip(1)
        .zip(argv.iter().skip(2).map(Some).chain([None]))
        .any(|(a, next)| {
            let attached = ["-p:", "/p:", "--property:", "-property:", "/property:"]
                .iter()
                .find_map(|p| a.strip_prefix(p));
            match attached {
                Some(body) => code(body),
                None => matches!(a.as_str(), "-p" | "--property") && next.is_some_and(|n| code(n)),
            }
        })
}

/// The words after the first `--`: another program's arguments.
fn after_dashes(argv: &[String]) -> impl Iterator<Item = &String> {
    argv.iter().skip_while(|a| *a != "--").skip(1)
}

/// The module of a Go `MODULE@VERSION` whose first element is a host
/// (`example.com/x@v1`), which the go command fetches.
fn hosted_module(word: &str) -> Option<&str> {
    word.split_once('@')
        .map(|(module, _)| module)
        .filter(|m| m.split('/').next().is_some_and(|h| h.contains('.')))
}

/// Whether a compiler is given its source on standard input (`-`, `/dev/stdin`).
fn reads_stdin_source(argv: &[String]) -> bool {
    argv.iter().skip(1).any(|a| {
        matches!(
            a.as_str(),
            "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
        )
    })
}

/// Whether `program` is a C or C++ compiler driver (`gcc`, `g++-13`, `clang`).
fn is_c_compiler(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    ["gcc", "g++", "cc", "c++", "clang", "clang++"]
        .iter()
        .any(|p| name == *p || name.strip_prefix(p).is_some_and(|v| v.starts_with('-')))
}

/// Whether a word is a URL of a scheme programs fetch (`https://…`, `ftp://…`).
fn is_url(word: &str) -> bool {
    word.split_once("://").is_some_and(|(scheme, rest)| {
        !rest.is_empty()
            && ["http", "https", "ftp", "ftps"]
                .iter()
                .any(|s| scheme.eq_ignore_ascii_case(s))
    })
}

/// Whether a property defined on a build tool's command line (`-DNAME=VALUE`,
/// `-D NAME=VALUE`, `--define`, `--system-prop`; cmake's `-DNAME:TYPE=VALUE`)
/// can make it run code: a value that is a path, a list, several words or an
/// option (`-javaagent:…`), or a name that is a program, arguments, a search
/// path or a file to include (`argLine`, `jvm`, `…LAUNCHER`, `…_FILE`).
fn defines_code(argv: &[String], project_props: bool) -> bool {
    const CODE_NAMES: &[&str] = &[
        "path",
        "argline",
        "jvm",
        "jvmargs",
        "executable",
        "args",
        "arguments",
        "command",
        "exec",
        "agent",
        "launcher",
        "compiler",
        "linker",
        "file",
        "include",
        "toolchain",
        "wrapper",
        "home",
        "script",
        "plugin",
        "plugins",
        "module",
        "modules",
    ];
    // Names whose last word is a program (`CMAKE_AR`, `CMAKE_MAKE_PROGRAM`,
    // `CMAKE_CXX_CLANG_TIDY`): compared whole, since they are short.
    const PROGRAM_NAMES: &[&str] = &[
        "ar", "ranlib", "nm", "objcopy", "objdump", "strip", "program", "tidy", "cppcheck",
        "cpplint", "iwyu", "mt",
    ];
    let code = |def: &str| {
        let (name, value) = def.split_once('=').unwrap_or((def, ""));
        let name = name.split(':').next().unwrap_or(name).to_ascii_lowercase();
        let last = name.rsplit(['.', '_']).next().unwrap_or(&name);
        CODE_NAMES.iter().any(|n| last == *n || name.ends_with(n))
            || PROGRAM_NAMES.contains(&last)
            || name.ends_with("include_what_you_use")
            || value.starts_with(['-', '@', '~'])
            || value.contains(['/', '\\', ' ', '\t', ';', '$', '`', '|', '&'])
    };
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        }
        // Gradle's project properties (`-Pkotlin.daemon.jvmargs=…`) configure
        // its plugins as system properties do.
        let attached = ["--define=", "--system-prop="]
            .iter()
            .find_map(|p| a.strip_prefix(p))
            .or_else(|| a.strip_prefix("-D").filter(|d| !d.is_empty()))
            .or_else(|| {
                a.strip_prefix("--project-prop=")
                    .or_else(|| a.strip_prefix("-P"))
                    .filter(|d| project_props && !d.is_empty())
            });
        let def = match attached {
            Some(d) => Some(d.to_string()),
            None if matches!(a.as_str(), "-D" | "--define" | "--system-prop")
                || (project_props && matches!(a.as_str(), "-P" | "--project-prop")) =>
            {
                args.next().cloned()
            }
            None => None,
        };
        if def.is_some_and(|d| code(&d)) {
            return true;
        }
    }
    false
}

/// The values of a long option among `args`, given as `OPTION VALUE` or
/// `OPTION=VALUE`.
fn option_values<'a>(args: impl IntoIterator<Item = &'a String>, option: &str) -> Vec<&'a str> {
    let mut values = Vec::new();
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        if a == option {
            values.extend(args.next().map(String::as_str));
        } else if let Some(v) = a.strip_prefix(option).and_then(|v| v.strip_prefix('=')) {
            values.push(v);
        }
    }
    values
}

/// The paths of an option whose values are `KEY=PATH[,KEY=PATH…]`
/// (`rustc --emit=link=PATH`, `helm --set-file NAME=PATH`), in each folder
/// the command may run in.
fn keyed_paths(argv: &[String], option: &str, ctx: &SpecRun, home: &str) -> Vec<String> {
    option_values(argv.iter().skip(1), option)
        .into_iter()
        .flat_map(|v| v.split(','))
        .filter_map(|item| item.split_once('=').map(|(_, path)| path))
        .flat_map(|path| ctx.paths(&Word::lit(path), home))
        .collect()
}

/// Whether a jq or yq expression reads files it names: jq's `import` and
/// `include` directives, yq's `load`, `load_str`, `load_props`, … functions.
fn loads_files(text: &str) -> bool {
    text.contains("import ")
        || text.contains("include ")
        || text.match_indices("load").any(|(i, _)| {
            let rest = &text[i + 4..];
            let name_end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            rest[name_end..].trim_start().starts_with('(')
                && text[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
        })
}

/// Whether jq filter text names the environment: `env` or `$ENV` (`$ ENV`) as a word.
fn mentions_env(text: &str) -> bool {
    // jq reads `$ # comment⏎ENV` as `$ENV` too: look again without comments.
    let uncommented: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    mentions_env_in(text) || mentions_env_in(&uncommented)
}

fn mentions_env_in(text: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices("env")
        .chain(text.match_indices("ENV"))
        .any(|(i, m)| {
            // jq reads `$ ENV` as `$ENV`.
            let before = text[..i].trim_end().chars().next_back();
            let after = text[i + m.len()..].chars().next();
            let starts = match before {
                None => true,
                Some('$') => true,
                Some(c) => !ident(c) && m == "env",
            };
            starts && !after.is_some_and(ident)
        })
}

fn is_assignment(w: &Word) -> bool {
    let lit = w.lit_prefix();
    match lit.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The code `trap` and `alias` store.
fn hidden_scripts(builtin: &str, args: &[Word]) -> Vec<Word> {
    match builtin {
        "trap" => {
            let args: Vec<&Word> = args.iter().collect();
            let args = match args.split_first() {
                Some((first, rest)) if first.literal().as_deref() == Some("--") => rest.to_vec(),
                Some((first, _))
                    if first.lit_prefix().starts_with('-') && first.lit_prefix().len() > 1 =>
                {
                    return Vec::new();
                }
                _ => args,
            };
            match args.first() {
                Some(a)
                    if a.literal().is_some_and(|l| {
                        l == "-" || (!l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
                    }) =>
                {
                    Vec::new()
                }
                Some(a) => vec![(*a).clone()],
                None => Vec::new(),
            }
        }
        _ => args
            .iter()
            .filter(|a| !a.lit_prefix().starts_with('-'))
            .filter_map(|a| {
                let lit = a.lit_prefix();
                lit.find('=').map(|eq| a.drop_prefix(eq + 1))
            })
            .collect(),
    }
}

/// Whether SQL text drops, truncates, deletes or alters.
fn sql_destroys(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    upper
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| {
            matches!(
                w,
                "DROP" | "TRUNCATE" | "DELETE" | "ALTER" | "UPDATE" | "GRANT" | "REVOKE"
            )
        })
}

/// Splits unquoted text into literal and glob parts.
fn split_globs(s: &str, out: &mut Vec<Part>) {
    let chars: Vec<char> = s.chars().collect();
    let mut lit = String::new();
    let mut i = 0;
    let flush = |lit: &mut String, out: &mut Vec<Part>| {
        if !lit.is_empty() {
            out.push(Part::Lit(std::mem::take(lit)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' | '?' => {
                // extglob `*(…)`, `?(…)`: anything.
                if chars.get(i + 1) == Some(&'(')
                    && let Some(end) = find_close(&chars, i + 1, '(', ')')
                {
                    flush(&mut lit, out);
                    out.push(Part::Glob("*".into()));
                    i = end + 1;
                    continue;
                }
                flush(&mut lit, out);
                out.push(Part::Glob(c.to_string()));
                i += 1;
            }
            '+' | '@' | '!' if chars.get(i + 1) == Some(&'(') => {
                if let Some(end) = find_close(&chars, i + 1, '(', ')') {
                    flush(&mut lit, out);
                    out.push(Part::Glob("*".into()));
                    i = end + 1;
                } else {
                    lit.push(c);
                    i += 1;
                }
            }
            '[' => {
                let mut j = i + 1;
                if matches!(chars.get(j), Some('!' | '^')) {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j < chars.len() {
                    flush(&mut lit, out);
                    let body: String = chars[i + 1..j].iter().collect();
                    let body = match body.strip_prefix('^') {
                        Some(rest) => format!("!{rest}"),
                        None => body,
                    };
                    out.push(Part::Glob(format!("[{body}]")));
                    i = j + 1;
                } else {
                    lit.push(c);
                    i += 1;
                }
            }
            '{' => match find_close(&chars, i, '{', '}') {
                Some(end) => {
                    let body: String = chars[i + 1..end].iter().collect();
                    let nested = body.contains('{');
                    let alternatives = top_level_commas(&body);
                    if body.contains("..") && !alternatives {
                        flush(&mut lit, out);
                        out.push(Part::Glob("*".into()));
                    } else if alternatives && !nested {
                        flush(&mut lit, out);
                        out.push(Part::Glob(format!("{{{body}}}")));
                    } else if alternatives {
                        flush(&mut lit, out);
                        out.push(Part::Glob("*".into()));
                    } else {
                        lit.extend(&chars[i..=end]);
                    }
                    i = end + 1;
                }
                None => {
                    lit.push(c);
                    i += 1;
                }
            },
            _ => {
                lit.push(c);
                i += 1;
            }
        }
    }
    flush(&mut lit, out);
}

fn find_close(chars: &[char], open_at: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &c) in chars.iter().enumerate().skip(open_at) {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

fn top_level_commas(body: &str) -> bool {
    let mut depth = 0usize;
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Decodes the escapes of an ANSI-C quoted string (`$'\x72m'` is `rm`).
fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut number = |radix: u32, max: usize, first: Option<char>| -> Option<char> {
            let mut digits = String::new();
            if let Some(f) = first {
                digits.push(f);
            }
            while digits.len() < max {
                match chars.peek() {
                    Some(d) if d.is_digit(radix) => {
                        digits.push(*d);
                        chars.next();
                    }
                    _ => break,
                }
            }
            u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
        };
        let decoded = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            'x' => number(16, 2, None),
            'u' => number(16, 4, None),
            'U' => number(16, 8, None),
            '0'..='7' => number(8, 3, Some(e)),
            'c' => chars
                .next()
                .map(|x| char::from_u32((x as u32) & 0x1f).unwrap_or(x)),
            other => {
                out.push('\\');
                Some(other)
            }
        };
        if let Some(d) = decoded {
            out.push(d);
        }
    }
    out
}

/// Tokenizes and parses a script behind the guards.
fn parse(text: &str, grammar: Grammar) -> Result<ast::Program, String> {
    let options = parser_options(grammar);
    let tokens =
        guarded(|| brush_parser::uncached_tokenize_str(text, &options.tokenizer_options()))
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
    check_tokens(&tokens)?;
    guarded(|| brush_parser::parse_tokens(&tokens, &options))
        .map_err(|e| e.to_string())?
        .map_err(|e| super::literal::syntax_error(e).to_string())
}

/// Bounds the parser's work: nesting depth, `((` (the parser backtracks
/// exponentially on it), and fd numbers it cannot hold.
fn check_tokens(tokens: &[brush_parser::Token]) -> Result<(), String> {
    use brush_parser::Token;
    let mut depth = 0usize;
    let mut previous: Option<&Token> = None;
    for token in tokens {
        match token {
            Token::Operator(op, _) => {
                match op.as_str() {
                    "(" => {
                        if matches!(previous, Some(Token::Operator(p, _)) if p == "(") {
                            return Err(
                                "arithmetic commands `(( … ))` are not analysed".to_string()
                            );
                        }
                        depth += 1;
                    }
                    ")" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if let Some(Token::Word(word, _)) = previous
                    && op.starts_with(['<', '>'])
                    && word.len() > 9
                    && word.bytes().all(|b| b.is_ascii_digit())
                {
                    return Err(format!("file descriptor `{}` is too large", snippet(word)));
                }
            }
            Token::Word(word, _) => {
                if word.contains(['$', '`'])
                    && super::literal::brackets(word) > super::literal::MAX_WORD_BRACKETS
                {
                    return Err("a word nests too deeply".to_string());
                }
                if word.contains('~') && super::literal::has_long_digit_run(word) {
                    return Err("a tilde prefix with a huge number".to_string());
                }
                match word.as_str() {
                    "{" | "if" | "while" | "until" | "for" | "select" | "case" | "coproc" => {
                        depth += 1
                    }
                    "}" | "fi" | "done" | "esac" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        if depth > MAX_NESTING {
            return Err("it nests too deeply".to_string());
        }
        previous = Some(token);
    }
    if super::literal::expansion_markers(
        &tokens
            .iter()
            .map(brush_parser::Token::to_str)
            .collect::<Vec<_>>()
            .join(" "),
    ) > 4 * super::literal::MAX_EXPANSION_MARKERS
    {
        return Err("it has too many substitutions".to_string());
    }
    Ok(())
}
