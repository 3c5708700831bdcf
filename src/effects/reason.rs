//! Why an account is not exact, as stable codes.
//!
//! Every reason the engine records for an inexact account has a [`Reason`]:
//! a kebab-case code that rules match (`"parse-error" in call.inexact`),
//! beside the sentence people read (`call.unknown`). The sentences may be
//! reworded at any time; the codes are a closed set, documented in
//! docs/cel.md (generated from this list and checked by a test), so a
//! rule that matches one keeps its meaning.

use serde::Serialize;

macro_rules! reasons {
    ($( $(#[$m:meta])* $variant:ident = $code:literal, $doc:literal; )*) => {
        /// Why an account is not exact: a stable code (docs/cel.md).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Reason {
            $( $(#[$m])* $variant, )*
        }

        impl Reason {
            /// Every code, in the documented order.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant),*];

            /// The code rules match.
            #[must_use]
            pub const fn code(self) -> &'static str {
                match self {
                    $(Reason::$variant => $code,)*
                }
            }

            /// What the code means, for the documentation.
            #[must_use]
            pub const fn doc(self) -> &'static str {
                match self {
                    $(Reason::$variant => $doc,)*
                }
            }
        }
    };
}

reasons! {
    /// A tool's `effects:` expression failed.
    EffectError = "effect-error",
        "one of the tool's `effects:` expressions failed (its working folder, reads, lists, writes, fetches, patch, script or `runs_code`), so that effect is any";
    /// The tool declares no effects.
    NoEffects = "no-effects",
        "the call's tool declares no `effects:` for a rule that reads `call`";
    /// The patch does not parse.
    PatchError = "patch-error",
        "the patch the call applies does not parse, so it may write anything";
    /// The script does not parse.
    ParseError = "parse-error",
        "the script does not parse (or is too large or too deep to read): it has no commands, and it runs code no rule can see";
    /// A word of the script does not parse.
    WordParseError = "word-parse-error",
        "a word of the script does not parse on its own (an expansion the reader cannot take apart)";
    /// The script runs more commands than are followed.
    TooManyCommands = "too-many-commands",
        "the script runs more commands than the engine follows; the rest run code no rule can see";
    /// The program's name is not literal (`$CMD args`).
    DynamicProgram = "dynamic-program",
        "the name of the program that runs is not literal (`$CMD args`): it could be any program";
    /// An argument is not literal.
    DynamicWord = "dynamic-word",
        "an argument or an option word holds an expansion whose value is not known here (`rm $TARGET`); its paths are patterns";
    /// A redirection's target or a here-document is not literal.
    DynamicRedirection = "dynamic-redirection",
        "the target of a redirection, a here-string or a here-document holds an expansion whose value is not known here";
    /// A value the script compares is not known.
    DynamicCompare = "dynamic-compare",
        "a value compared with a string or a pattern (`[[ $X == a* ]]`, `case $X in`) is not known here, and what the call does next tells part of it";
    /// Code given to a program is not literal.
    DynamicCode = "dynamic-code",
        "the code, script, SQL, sed or awk program, or command given to a program (or in a variable it reads as a program) is not literal, so what it runs is not known";
    /// Text the shell evaluates may run a substitution.
    EvaluatedText = "evaluated-text",
        "the shell evaluates text that may run a substitution no rule can see: arithmetic, a variable name's subscript, an integer's value, an array assignment read again";
    /// A callback the shell runs (`mapfile -C`).
    Callback = "callback",
        "a builtin runs a callback, code no rule can see (`mapfile -C`)";
    /// Code the shell stores and runs later (`trap`, `alias`).
    StoredCode = "stored-code",
        "the shell stores code it runs later (`trap`, `alias`)";
    /// A compound array declaration evaluates its values.
    CompoundDeclaration = "compound-declaration",
        "a compound array assignment given to a declaration (`declare a=(…)`) evaluates its values";
    /// A command name is bound to another program.
    ReboundCommand = "rebound-command",
        "a command name is bound to another program (`hash -p`, `BASH_CMDS[NAME]=…`), or a command runs under a name so bound";
    /// A variable that makes programs run code is set.
    CodeVariable = "code-variable",
        "a variable that makes programs run code no rule can see is set (`PS4`, `BASH_ENV`, `LD_PRELOAD`, `GIT_SSH_COMMAND`, a make variable naming a program)";
    /// The program is the workspace's own (`./build.sh`).
    OwnProgram = "own-program",
        "the program is named by a path and is not a system program (`./build.sh`): a program of its own, not one the catalog describes";
    /// The catalog does not know the program.
    UnknownProgram = "unknown-program",
        "the catalog does not describe the program";
    /// The catalog does not know the subcommand.
    UnknownSubcommand = "unknown-subcommand",
        "the catalog describes the program but not the subcommand given";
    /// The catalog does not know an option.
    UnknownOption = "unknown-option",
        "the catalog does not know an option given, or an abbreviation of a long option is ambiguous";
    /// An option is given a value it takes none of, or misses its value.
    OptionValue = "option-value",
        "an option is given a value it takes none of, or is missing the value it takes";
    /// More operands than the specification knows.
    ExtraOperands = "extra-operands",
        "the command has more operands than its catalog entry describes";
    /// The files a command touches are not known here.
    UnknownPaths = "unknown-paths",
        "the program chooses the files it touches itself in a way not known here (git pathspecs with globs, a backup suffix not known)";
    /// The command line is built from a template (`parallel … {}`).
    TemplatedCommand = "templated-command",
        "the command is filled in from a template (`parallel CMD {}`), or a template holds code (`{= … =}`)";
    /// SQL given to a client runs a file or another program.
    SqlEscape = "sql-escape",
        "SQL given to a client runs the SQL of a file, opens another program, or names a file that is not literal";
    /// A client command of a SQL client is not known.
    UnknownSqlCommand = "unknown-sql-command",
        "SQL given to a client holds a client command (`\\x` in psql, `.x` in sqlite3) that is not known here, and may run code no rule can see";
}

impl Reason {
    /// The reason with this code.
    #[must_use]
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.iter().copied().find(|r| r.code() == code)
    }

    /// The codes as a Markdown table, for the documentation.
    #[must_use]
    pub fn markdown() -> String {
        let mut out = String::from("| code | the account is not exact because |\n| --- | --- |\n");
        for r in Reason::ALL {
            out.push_str(&format!("| `{}` | {} |\n", r.code(), r.doc()));
        }
        out
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cel.md lists every code as [`Reason::markdown`] gives it; with `ZP_UPDATE_DOCS=1` the test writes it there instead.
    #[test]
    fn the_documentation_lists_every_code() {
        crate::docs_block::check(
            "docs/cel.md",
            "reasons",
            &Reason::markdown(),
            "effects::reason",
        );
    }

    #[test]
    fn codes_are_unique_kebab_case_and_read_back() {
        let mut seen = std::collections::HashSet::new();
        for r in Reason::ALL {
            let code = r.code();
            assert!(seen.insert(code), "`{code}` twice");
            assert!(
                !code.is_empty()
                    && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                    && !code.starts_with('-')
                    && !code.ends_with('-'),
                "`{code}` is not kebab-case"
            );
            assert_eq!(Reason::from_code(code), Some(*r));
        }
        assert_eq!(Reason::from_code("the script does not parse"), None);
    }
}
