//! Readers for the small languages some text tools take as an operand: a `sed`
//! script, an `awk` program, and a pager's initial command (`less +CMD`).
//!
//! Each reader answers one question: is this text *plain*, so that it can only
//! read the tool's input files and print? Anything it does not recognise is not
//! plain: the command then runs code no rule can see, as any other program text
//! does. So a reader may be wrong only toward caution.

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
