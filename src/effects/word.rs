//! A shell word as the analysis sees it: literal text, glob syntax, and the
//! expansions whose value is not known without running the shell.

use super::paths::{self, escape};

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text (after quote removal).
    Lit(String),
    /// Unquoted glob syntax: `*`, `?`, `[…]`, `{a,b}`.
    Glob(String),
    /// `~`, `$HOME` or `${HOME}`.
    Home,
    /// `$PWD` or `~+`.
    Cwd,
    /// An absolute path pattern standing for the word (`find`'s `{}`).
    Pattern(String),
    /// Any other expansion or substitution: a string not known here.
    Unknown {
        /// Inside double quotes (no word splitting).
        quoted: bool,
    },
}

/// A word of a command, with its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// As written in the script.
    pub raw: String,
    /// The parts, in order.
    pub parts: Vec<Part>,
    /// Part of its value comes from a command that fetched from the network.
    pub fetched: bool,
}

/// Marks an unknown string while a path is built.
const UNKNOWN: char = '\u{0}';
/// Marks a `*` that starts a name: it never matches a leading `.`.
const LEADING_STAR: char = '\u{1}';
/// Marks a `?` that starts a name.
const LEADING_QUESTION: char = '\u{2}';

impl Word {
    /// A literal word.
    #[must_use]
    pub fn lit(s: &str) -> Word {
        Word {
            raw: s.to_string(),
            parts: vec![Part::Lit(s.to_string())],
            fetched: false,
        }
    }

    /// A word that stands for the paths of a pattern (`find`'s `{}`).
    #[must_use]
    pub fn pattern(raw: &str, pattern: String) -> Word {
        Word {
            raw: raw.to_string(),
            parts: vec![Part::Pattern(pattern)],
            fetched: false,
        }
    }

    /// An unknown word (what `xargs` appends).
    #[must_use]
    pub fn unknown(raw: &str) -> Word {
        Word {
            raw: raw.to_string(),
            parts: vec![Part::Unknown { quoted: true }],
            fetched: false,
        }
    }

    /// The value, when every part is literal.
    #[must_use]
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                _ => return None,
            }
        }
        Some(out)
    }

    /// Whether every part is literal.
    #[must_use]
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Lit(_)))
    }

    /// The literal text before the first part that is not literal.
    #[must_use]
    pub fn lit_prefix(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                _ => break,
            }
        }
        out
    }

    /// Whether the word starts with an unquoted expansion, which word splitting
    /// may turn into several words, options included.
    #[must_use]
    pub fn starts_unquoted_unknown(&self) -> bool {
        let mut parts = self
            .parts
            .iter()
            .skip_while(|p| matches!(p, Part::Lit(s) if s.is_empty()));
        matches!(parts.next(), Some(Part::Unknown { quoted: false }))
    }

    /// The word without its first `n` bytes of literal text (`-ofile` → `file`).
    #[must_use]
    pub fn drop_prefix(&self, mut n: usize) -> Word {
        let mut parts = Vec::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) if n > 0 => {
                    if n >= s.len() {
                        n -= s.len();
                    } else {
                        let rest = s.get(n..).unwrap_or_default().to_string();
                        n = 0;
                        parts.push(Part::Lit(rest));
                    }
                }
                other => parts.push(other.clone()),
            }
        }
        Word {
            raw: render(&parts),
            parts,
            fetched: self.fetched,
        }
    }

    /// The word as a path pattern: absolute, cleaned, relative to `cwd` (an
    /// absolute pattern), `~` the `home` folder. An unknown string may hold `/`
    /// and `..`, so everything before the last one is lost: `src/$X` is `/**`,
    /// `$X/.env` is `/**/.env`.
    #[must_use]
    pub fn to_path(&self, cwd: &str, home: &str) -> String {
        let mut s = String::new();
        for p in &self.parts {
            let at_name_start = s.is_empty() || s.ends_with('/');
            match p {
                Part::Lit(l) => s.push_str(&escape(l)),
                Part::Glob(g) => {
                    let mut chars = g.chars();
                    match chars.next() {
                        Some('*') if at_name_start => {
                            s.push(LEADING_STAR);
                            s.push_str(chars.as_str());
                        }
                        Some('?') if at_name_start => {
                            s.push(LEADING_QUESTION);
                            s.push_str(chars.as_str());
                        }
                        _ => s.push_str(g),
                    }
                }
                Part::Home => s.push_str(&escape(home)),
                Part::Cwd => s.push_str(cwd),
                Part::Pattern(p) => s.push_str(p),
                Part::Unknown { .. } => s.push(UNKNOWN),
            }
        }
        let s = finish_leading(&s);
        if let Some(i) = s.rfind(UNKNOWN) {
            let suffix = &s[i + UNKNOWN.len_utf8()..];
            if suffix.is_empty() {
                return paths::ANY_PATH.to_string();
            }
            let rest = if suffix.starts_with('/') {
                suffix.to_string()
            } else {
                format!("/*{suffix}")
            };
            // Leading `..` of the rest only climbs out of the unknown part.
            let cleaned = paths::clean(&format!("/**{rest}"));
            return cleaned;
        }
        if s.starts_with('/') {
            paths::clean(&s)
        } else {
            paths::join(cwd, &s)
        }
    }
}

/// Resolves the leading-name markers: `*` first in a name never matches a
/// leading `.` (bash without `dotglob`), so `*` alone or before `.` is `[!.]*`.
/// Before other text, `*foo` stays `*foo` (it must still match `foo`).
fn finish_leading(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            LEADING_STAR => match chars.peek() {
                None | Some('/' | '.') | Some(&UNKNOWN) => out.push_str("[!.]*"),
                _ => out.push('*'),
            },
            LEADING_QUESTION => out.push_str("[!.]"),
            c => out.push(c),
        }
    }
    out
}

/// Renders parts back to a readable word.
fn render(parts: &[Part]) -> String {
    let mut out = String::new();
    for p in parts {
        match p {
            Part::Lit(s) | Part::Glob(s) | Part::Pattern(s) => out.push_str(s),
            Part::Home => out.push('~'),
            Part::Cwd => out.push_str("$PWD"),
            Part::Unknown { .. } => out.push('*'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(parts: Vec<Part>) -> Word {
        Word {
            raw: render(&parts),
            parts,
            fetched: false,
        }
    }

    #[test]
    fn paths_of_words() {
        let home = "/home/u";
        let cwd = "/ws";
        let lit = |s: &str| Part::Lit(s.to_string());
        let glob = |s: &str| Part::Glob(s.to_string());
        let unk = Part::Unknown { quoted: false };
        let cases: Vec<(Word, &str)> = vec![
            (Word::lit("src/main.rs"), "/ws/src/main.rs"),
            (Word::lit("../x"), "/x"),
            (
                w(vec![Part::Home, lit("/.ssh/id_rsa")]),
                "/home/u/.ssh/id_rsa",
            ),
            (w(vec![lit(".e"), glob("?"), lit("v")]), "/ws/.e?v"),
            (w(vec![glob("*")]), "/ws/[!.]*"),
            (w(vec![glob("*"), lit(".env")]), "/ws/[!.]*.env"),
            (w(vec![glob("*"), lit("credentials")]), "/ws/*credentials"),
            (w(vec![lit("src/"), unk.clone()]), "/**"),
            (w(vec![unk.clone(), lit("/.env")]), "/**/.env"),
            (w(vec![unk.clone(), lit(".txt")]), "/**/*.txt"),
            (
                w(vec![lit("/etc/"), unk.clone(), lit("/../passwd")]),
                "/**/passwd",
            ),
            (w(vec![Part::Cwd, lit("/a")]), "/ws/a"),
            (Word::lit("a*b"), "/ws/a[*]b"),
        ];
        for (word, want) in cases {
            assert_eq!(word.to_path(cwd, home), want, "{:?}", word.parts);
        }
    }

    #[test]
    fn prefixes() {
        let word = w(vec![Part::Lit("-o".into()), Part::Unknown { quoted: true }]);
        assert_eq!(word.lit_prefix(), "-o");
        assert!(!word.is_literal());
        assert_eq!(
            word.drop_prefix(2).parts,
            vec![Part::Unknown { quoted: true }]
        );
        assert_eq!(
            Word::lit("-ofile").drop_prefix(2).literal().as_deref(),
            Some("file")
        );
        assert!(w(vec![Part::Unknown { quoted: false }]).starts_unquoted_unknown());
        assert!(!w(vec![Part::Unknown { quoted: true }]).starts_unquoted_unknown());
    }
}
