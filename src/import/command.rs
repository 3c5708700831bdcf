//! Command patterns (`git log *`, `npm run build`, `* --version`) as CEL over one
//! command of `call.commands` (`c`): the same pattern gives a strict matcher for
//! relax rules and a widened one for sandbox rules.

use super::cel_str;

/// A pattern over one command line, as agents write them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPattern {
    /// Any command.
    Any,
    /// Exactly these words.
    Exact(Vec<String>),
    /// These words, then anything (a word boundary after the last).
    Prefix(Vec<String>),
    /// A glob over the whole line (`*` anywhere), as an anchored regex.
    Glob(String),
}

/// Characters that make a pattern more than plain words: quoting, expansions,
/// operators, redirections. Such patterns are not split into words.
const SHELL_SPECIAL: &[char] = &[
    '"', '\'', '\\', '$', '`', ';', '&', '|', '<', '>', '(', ')', '{', '}', '\n', '\r', '#',
];

/// Whether a pattern text holds shell syntax beyond plain words.
#[must_use]
pub fn has_shell_syntax(text: &str) -> bool {
    text.contains(SHELL_SPECIAL)
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// The regex for a glob over a command line: `*` is any text; a trailing ` *` also
/// matches nothing after the word before it.
fn glob_regex(text: &str) -> String {
    let (body, optional_tail) = match text.strip_suffix(" *") {
        Some(b) => (b, true),
        None => (text, false),
    };
    let mut re = String::from("^");
    for (i, part) in body.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(part));
    }
    if optional_tail {
        re.push_str("( .*)?");
    }
    re.push('$');
    re
}

impl CommandPattern {
    /// A Claude Code `Bash(...)` specifier: `cmd *` and legacy `cmd:*` are prefixes
    /// with a word boundary, text without `*` is exact, `*` elsewhere is a glob.
    #[must_use]
    pub fn claude(spec: &str) -> CommandPattern {
        let spec = spec.trim();
        if spec.is_empty() || spec == "*" {
            return CommandPattern::Any;
        }
        let head = spec
            .strip_suffix(":*")
            .or_else(|| spec.strip_suffix(" *"))
            .map(str::trim_end);
        match head {
            Some(h) if !h.contains('*') && !h.is_empty() => CommandPattern::Prefix(words(h)),
            _ if !spec.contains('*') => CommandPattern::Exact(words(spec)),
            _ => CommandPattern::Glob(glob_regex(&spec.replace(":*", " *"))),
        }
    }

    /// The first word, when it is literal.
    #[must_use]
    pub fn program(&self) -> Option<&str> {
        match self {
            CommandPattern::Exact(w) | CommandPattern::Prefix(w) => w.first().map(String::as_str),
            _ => None,
        }
    }

    /// The condition on `c` for a relax rule: the command as written, no wrapper.
    #[must_use]
    pub fn relax_cel(&self) -> String {
        match self {
            CommandPattern::Any => "true".into(),
            CommandPattern::Exact(w) => {
                format!("c.wrappers.size() == 0 && c.argv == {}", super::cel_list(w))
            }
            CommandPattern::Prefix(w) => {
                let mut parts = vec![
                    "c.wrappers.size() == 0".to_string(),
                    format!("c.argv.size() >= {}", w.len()),
                ];
                for (i, word) in w.iter().enumerate() {
                    parts.push(format!("c.argv[{i}] == {}", cel_str(word)));
                }
                parts.join(" && ")
            }
            CommandPattern::Glob(re) => format!(
                "c.wrappers.size() == 0 && c.argv.join(\" \").matches({})",
                cel_str(re)
            ),
        }
    }

    /// The condition on `c` for a sandbox rule: the program by name whatever its path
    /// or wrappers, and a word that is not plain (quoted, an expansion, a glob) taken
    /// as possibly equal to the word of the pattern; an option of the pattern
    /// (`--force`) anywhere in the command. A program that is not literal (`$CMD`)
    /// could be any program.
    #[must_use]
    pub fn sandbox_cel(&self) -> String {
        let word = |i: usize, w: &str| {
            format!(
                "(c.argv[{i}] == {} || c.argv[{i}].matches({}))",
                cel_str(w),
                cel_str(r#"[$`'"*?\[\\{]"#)
            )
        };
        let program = |w: &str| {
            let base = w.rsplit('/').next().unwrap_or(w);
            format!("(c.program == {} || c.program == \"*\")", cel_str(base))
        };
        match self {
            CommandPattern::Any => "true".into(),
            CommandPattern::Exact(w) | CommandPattern::Prefix(w) => {
                let Some(first) = w.first() else {
                    return "true".into();
                };
                let size = if matches!(self, CommandPattern::Exact(_)) {
                    format!("c.argv.size() == {}", w.len())
                } else {
                    format!("c.argv.size() >= {}", w.len())
                };
                let mut parts = vec![program(first), size];
                for (i, wd) in w.iter().enumerate().skip(1) {
                    if wd.starts_with('-') && wd.len() > 1 {
                        // An option may be given anywhere after the program
                        // (`git push origin --force`), or with its value (`--force=x`).
                        parts.push(format!(
                            "c.argv.exists(a, a == {w} || a.startsWith({eq}) || a.matches({re}))",
                            w = cel_str(wd),
                            eq = cel_str(&format!("{wd}=")),
                            re = cel_str(r#"^[$`'"]"#)
                        ));
                    } else {
                        parts.push(word(i, wd));
                    }
                }
                parts.join(" && ")
            }
            CommandPattern::Glob(re) => {
                // Also with the program's name in place of its path (`/bin/rm` → `rm`).
                format!(
                    "(c.argv.join(\" \").matches({re}) || (c.program + c.argv.join(\" \").substring(c.path.size())).matches({re}))",
                    re = cel_str(re)
                )
            }
        }
    }

    /// Example command lines the pattern matches.
    #[must_use]
    pub fn matching_examples(&self) -> Vec<String> {
        match self {
            CommandPattern::Any => vec!["ls".into()],
            CommandPattern::Exact(w) => vec![w.join(" ")],
            CommandPattern::Prefix(w) => vec![w.join(" "), format!("{} README.md", w.join(" "))],
            CommandPattern::Glob(re) => {
                // The regex back to a line: `.*` → `x`, the optional tail left out.
                let body = re
                    .trim_start_matches('^')
                    .trim_end_matches('$')
                    .trim_end_matches("( .*)?");
                // A leading `*` becomes a program the catalog knows.
                let body = match body.strip_prefix(".*") {
                    Some(rest) => format!("git{rest}"),
                    None => body.to_string(),
                };
                let line = unescape_regex(&body.replace(".*", "x"));
                vec![line.trim().to_string()]
            }
        }
    }
}

fn unescape_regex(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_forms() {
        let w = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            CommandPattern::claude("git log:*"),
            CommandPattern::Prefix(w("git log"))
        );
        assert_eq!(
            CommandPattern::claude("git log *"),
            CommandPattern::Prefix(w("git log"))
        );
        assert_eq!(
            CommandPattern::claude("npm run build"),
            CommandPattern::Exact(w("npm run build"))
        );
        assert_eq!(CommandPattern::claude("*"), CommandPattern::Any);
        assert_eq!(
            CommandPattern::claude("* --version"),
            CommandPattern::Glob("^.* \\-\\-version$".into())
        );
        assert_eq!(
            CommandPattern::claude("ls*"),
            CommandPattern::Glob("^ls.*$".into())
        );
        assert_eq!(
            CommandPattern::claude("git * main"),
            CommandPattern::Glob("^git .* main$".into())
        );
    }

    #[test]
    fn glob_examples_read_back() {
        assert_eq!(
            CommandPattern::claude("* --version").matching_examples(),
            vec!["git --version"]
        );
        assert_eq!(
            CommandPattern::claude("git * main").matching_examples(),
            vec!["git x main"]
        );
    }
}
