//! Paths and path patterns as effects hold them: absolute, lexically cleaned,
//! in glob syntax (`*`, `?`, `[…]`, `{a,b}`, `**`), with literal text escaped.
//!
//! Nothing here touches the file system: `~` and `$HOME` mean the configured
//! home folder, and `..` is folded lexically. A `..` after a segment that is a
//! pattern folds it too (the parent of any child of `/a` is `/a`); after `**`
//! it is dropped, since the parent of "anything below" is still "anything below".

/// The pattern that stands for every absolute path.
pub const ANY_PATH: &str = "/**";

/// Escapes a literal path so that, as a glob, it matches only itself.
#[must_use]
pub fn escape(literal: &str) -> String {
    super::globs::escape(literal)
}

/// Whether a path holds glob syntax (it then stands for many paths).
#[must_use]
pub fn is_pattern(p: &str) -> bool {
    p.contains(['*', '?', '[', '{'])
}

/// Splits a pattern at `/`, except inside `[…]` and `{…}`.
fn segments(p: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut brackets, mut braces, mut start) = (false, 0usize, 0usize);
    for (i, c) in p.char_indices() {
        match c {
            '[' if !brackets => brackets = true,
            ']' if brackets => brackets = false,
            '{' if !brackets => braces += 1,
            '}' if !brackets && braces > 0 => braces -= 1,
            '/' if !brackets && braces == 0 => {
                out.push(&p[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&p[start..]);
    out
}

/// Lexical cleaning of an absolute pattern: `.` and empty segments dropped,
/// `..` folded (see the module docs). A relative input is taken from `/`.
#[must_use]
pub fn clean(p: &str) -> String {
    let mut stack: Vec<&str> = Vec::new();
    for seg in segments(p) {
        match seg {
            "" | "." => {}
            ".." => match stack.last() {
                Some(&"**") => {}
                Some(_) => {
                    stack.pop();
                }
                None => {}
            },
            s => {
                // `**/**` is `**`.
                if s == "**" && stack.last() == Some(&"**") {
                    continue;
                }
                stack.push(s);
            }
        }
    }
    proc_alias(&stack).unwrap_or_else(|| format!("/{}", stack.join("/")))
}

/// The path a `/proc` alias stands for: `/proc/PID/root/X` is `/X` (the
/// process's root), `/proc/PID/cwd/X` is `X` in some folder (`/**/X`), and a
/// descriptor above 2 (`/proc/PID/fd/3`, `/dev/fd/3`, `map_files`) could be any
/// file. `PID` may be `self`, a thread (`task/TID`) or any pattern.
fn proc_alias(stack: &[&str]) -> Option<String> {
    let fd_above_stderr = |n: &str| !matches!(n, "0" | "1" | "2");
    // `/dev/fd/*` is what `<(…)` gives the shell: a pipe, not a file.
    if let ["dev", "fd", n, ..] = stack {
        return (n.bytes().all(|b| b.is_ascii_digit()) && fd_above_stderr(n))
            .then(|| ANY_PATH.to_string());
    }
    let ["proc", _, rest @ ..] = stack else {
        return None;
    };
    let rest = match rest {
        ["task", _, inner @ ..] => inner,
        other => other,
    };
    match rest {
        ["root", tail @ ..] => Some(clean(&tail.join("/"))),
        ["cwd", tail @ ..] => Some(clean(&format!("/**/{}", tail.join("/")))),
        ["fd", n, ..] if fd_above_stderr(n) => Some(ANY_PATH.to_string()),
        ["map_files", _, ..] => Some(ANY_PATH.to_string()),
        _ => None,
    }
}

/// `rel` resolved against `base` (an absolute pattern), cleaned.
#[must_use]
pub fn join(base: &str, rel: &str) -> String {
    if rel.starts_with('/') {
        clean(rel)
    } else if rel.is_empty() {
        clean(base)
    } else {
        clean(&format!("{base}/{rel}"))
    }
}

/// A path that a tool's effect expression gave (glob syntax allowed), made
/// absolute: a leading `~`, `$HOME` or `${HOME}` is the home folder, and a
/// relative path is taken from `cwd` (an absolute pattern).
#[must_use]
pub fn tool_path(p: &str, cwd: &str, home: &str) -> String {
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = p.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return clean(&format!("{}{rest}", escape(home)));
        }
    }
    join(cwd, p)
}

/// The parent folders of a literal absolute path, nearest first, ending at `/`.
#[must_use]
pub fn ancestors(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = clean(p);
    while cur != "/" {
        match cur.rfind('/') {
            Some(0) => cur = "/".to_string(),
            Some(i) => cur.truncate(i),
            None => break,
        }
        out.push(cur.clone());
    }
    out
}

/// Whether `p` is `DIR/**` with a literal `DIR`: a whole tree.
#[must_use]
pub fn is_tree(p: &str) -> bool {
    match p.strip_suffix("/**") {
        Some("") => true,
        Some(dir) => !is_pattern(dir),
        None => p == "/**",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_table() {
        let cases = [
            ("/a/b/../c", "/a/c"),
            ("/a/./b//c/", "/a/b/c"),
            ("/../..", "/"),
            ("/", "/"),
            ("/a/*/..", "/a"),
            ("/**/../x", "/**/x"),
            ("/**/**/x", "/**/x"),
            ("/a/{b/c,d}/e", "/a/{b/c,d}/e"),
            ("/a/[/]/..", "/a"),
            ("/proc/self/root/etc/shadow", "/etc/shadow"),
            (
                "/proc/1/root/proc/self/root/root/.ssh/id_rsa",
                "/root/.ssh/id_rsa",
            ),
            ("/proc/self/task/7/root/etc/x", "/etc/x"),
            ("/proc/*/cwd/.env", "/**/.env"),
            ("/proc/self/cwd", "/**"),
            ("/proc/self/fd/3", "/**"),
            ("/proc/self/fd/1", "/proc/self/fd/1"),
            ("/dev/fd/9", "/**"),
            ("/dev/fd/2", "/dev/fd/2"),
            ("/dev/fd/*", "/dev/fd/*"),
            ("/proc/self/environ", "/proc/self/environ"),
            ("/proc/1/map_files/x", "/**"),
        ];
        for (input, want) in cases {
            assert_eq!(clean(input), want, "clean({input:?})");
        }
    }

    #[test]
    fn join_and_tool_paths() {
        assert_eq!(join("/ws", "src/../.env"), "/ws/.env");
        assert_eq!(join("/ws", "/etc/passwd"), "/etc/passwd");
        assert_eq!(join("/ws", ""), "/ws");
        assert_eq!(join("/**", "x"), "/**/x");
        assert_eq!(
            tool_path("~/.ssh/id_rsa", "/ws", "/home/u"),
            "/home/u/.ssh/id_rsa"
        );
        assert_eq!(tool_path("$HOME", "/ws", "/home/u"), "/home/u");
        assert_eq!(tool_path("~x", "/ws", "/home/u"), "/ws/~x");
        assert_eq!(tool_path("a", "/ws", "/h[1]"), "/ws/a");
        assert_eq!(tool_path("~/a", "/ws", "/h[1]"), "/h[[]1[]]/a");
    }

    #[test]
    fn escape_and_patterns() {
        assert_eq!(escape("/a/*.txt"), "/a/[*].txt");
        assert!(is_pattern(&escape("/a/*.txt")));
        assert!(!is_pattern("/a/b"));
        assert!(is_tree("/ws/src/**"));
        assert!(is_tree("/**"));
        assert!(!is_tree("/ws/*/**"));
        assert!(!is_tree("/ws/src"));
        assert_eq!(ancestors("/home/dev/p"), vec!["/home/dev", "/home", "/"]);
        assert!(ancestors("/").is_empty());
    }
}
