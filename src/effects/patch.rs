//! Reads a patch the way the tools that apply it read it, and says which files it
//! writes, deletes and reads.
//!
//! Three readers run over every text and their answers are merged, so a text that
//! one tool reads differently from another cannot hide a file behind the other
//! tool's reading:
//!
//! - Codex `apply_patch` (`*** Begin Patch` ... `*** End Patch`), after
//!   `codex-rs/apply-patch/src/{parser,streaming_parser,invocation}.rs` of
//!   `openai/codex`;
//! - `git apply` with its default options, after `apply.c` of `git/git`;
//! - GNU `patch -p1`, after `src/pch.c` and `src/util.c` of GNU patch.
//!
//! The diff readers follow hunk counts, so a header written inside a hunk body is
//! content; where a tool would read lines in a way this module does not follow
//! (an indented hunk, a malformed hunk that GNU `patch` gives up on), those lines
//! are read as if every one of them could be a header.
//!
//! Paths are reported as written in the patch: `..` and absolute paths are kept,
//! nothing is resolved. A diff name `a/X` or `b/X` is reported as `X`; any other
//! name with a `/` is reported both as written and with its first component
//! stripped, since that is what `-p1` applies it to.

use std::collections::HashSet;

/// The files a patch touches, paths as written in the patch (not resolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchFiles {
    /// Files the patch may create, change, delete or rename, in first-seen order.
    pub writes: Vec<String>,
    /// Files the patch may delete, rename sources included; each is also in `writes`.
    pub deletes: Vec<String>,
    /// Files the patch reads without changing them (copy sources).
    pub reads: Vec<String>,
}

/// A patch that cannot be read; the caller should assume it may write anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PatchError(
    /// What could not be read, lowercase, user input in backticks.
    pub String,
);

impl PatchError {
    fn at(line: usize, message: impl std::fmt::Display) -> Self {
        Self(format!("line {}: {message}", line.saturating_add(1)))
    }
}

/// Reads a patch: the Codex `*** Begin Patch` format or a unified/git diff.
///
/// # Errors
/// When the text is empty, holds no patch any of the readers recognises, or holds
/// something a reader cannot follow (a hunk that runs past the end, a hunk line
/// `git apply` rejects, a hunk without a file header, a `diff --git` header without
/// a file name, a quoted path that is not UTF-8, a shell heredoc that may expand).
pub fn patch_files(text: &str) -> Result<PatchFiles, PatchError> {
    if text.trim().is_empty() {
        return Err(PatchError("the patch is empty".to_string()));
    }
    let mut ops = Ops::default();
    let codex = codex::read(text, &mut ops)?;
    let lines: Vec<&str> = text
        .split_terminator('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let git = git::read(&lines, &mut ops)?;
    let gnu = gnu::read(&lines, &mut ops)?;
    if !(codex || git || gnu) {
        return Err(PatchError(
            "no patch found: no `*** Begin Patch` ... `*** End Patch` and no diff header followed by a hunk"
                .to_string(),
        ));
    }
    Ok(ops.finish())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    Delete,
    Read,
}

/// What the readers found, tagged with the line each name was read on.
#[derive(Debug, Default)]
struct Ops {
    list: Vec<(usize, Kind, String)>,
}

impl Ops {
    fn add(&mut self, line: usize, kind: Kind, path: &str) {
        if !path.is_empty() {
            self.list.push((line, kind, path.to_string()));
        }
    }

    fn finish(mut self) -> PatchFiles {
        // Stable: for one line, the readers' order is kept.
        self.list.sort_by_key(|(line, _, _)| *line);
        let mut files = PatchFiles::default();
        let (mut w, mut d, mut r) = (HashSet::new(), HashSet::new(), HashSet::new());
        for (_, kind, path) in self.list {
            match kind {
                Kind::Write => keep(&mut files.writes, &mut w, path),
                Kind::Delete => {
                    keep(&mut files.deletes, &mut d, path.clone());
                    keep(&mut files.writes, &mut w, path);
                }
                Kind::Read => keep(&mut files.reads, &mut r, path),
            }
        }
        files
    }
}

fn keep(list: &mut Vec<String>, seen: &mut HashSet<String>, path: String) {
    if seen.insert(path.clone()) {
        list.push(path);
    }
}

/// A line for an error message: at most 60 characters, control characters escaped.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).flat_map(char::escape_debug).collect();
    if s.chars().nth(60).is_some() {
        out.push_str("...");
    }
    out
}

/// C `isspace` in the C locale, as GNU `patch` uses it.
fn c_isspace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// Git's own `isspace` (`git-compat-util.h`): no vertical tab or form feed.
fn git_isspace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A C-quoted name as `git` (`unquote_c_style`) and GNU `patch` (`parse_c_string`)
/// read it: the bytes and how many bytes of `s` the quoted string took.
fn unquote_c(s: &str) -> Option<(Vec<u8>, usize)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let c = *b.get(i)?;
        i += 1;
        match c {
            b'"' => return Some((out, i)),
            0 => return None,
            b'\\' => {
                let e = *b.get(i)?;
                i += 1;
                let v = match e {
                    b'a' => 7,
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'v' => 11,
                    b'\\' | b'"' => e,
                    b'0'..=b'3' => {
                        let (d1, d2) = (*b.get(i)?, *b.get(i + 1)?);
                        if !(b'0'..=b'7').contains(&d1) || !(b'0'..=b'7').contains(&d2) {
                            return None;
                        }
                        i += 2;
                        ((e - b'0') << 6) | ((d1 - b'0') << 3) | (d2 - b'0')
                    }
                    _ => return None,
                };
                out.push(v);
            }
            _ => out.push(c),
        }
    }
}

/// The text of an unquoted name; a name this module cannot write as a `String`
/// (not UTF-8, or with a NUL that the tools would cut it at) is an error.
fn decode(bytes: Vec<u8>, line: usize) -> Result<String, PatchError> {
    if bytes.contains(&0) {
        return Err(PatchError::at(line, "a quoted path holds a nul byte"));
    }
    String::from_utf8(bytes).map_err(|_| PatchError::at(line, "a quoted path is not valid utf-8"))
}

/// The paths a diff name stands for under `-p1`: `a/X` and `b/X` are `X`; any
/// other name with a `/` is itself and itself without its first component (both
/// git's reading, which keeps a leading `/` of the rest, and GNU's, which drops it).
fn p1_variants(raw: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(3);
    let rest = match raw.strip_prefix("a/").or_else(|| raw.strip_prefix("b/")) {
        Some(rest) => rest,
        None => {
            out.push(raw);
            raw.split_once('/').map_or("", |(_, r)| r)
        }
    };
    out.push(rest);
    out.push(rest.trim_start_matches('/'));
    out.retain(|s| !s.is_empty());
    out.dedup();
    out
}

/// Whether GNU `patch -p1` keeps a name (`strip_leading_slashes`): it has a `/`
/// and something after the first run of slashes.
fn p1_ok(raw: &str) -> bool {
    raw.split_once('/')
        .is_some_and(|(_, r)| !r.trim_start_matches('/').is_empty())
}

/// The Codex `apply_patch` reader.
///
/// Codex's parser (`parser.rs`, `parse_patch_text`) reads `patch.trim().lines()`;
/// the first and last lines, trimmed (`check_start_and_end_lines_strict`), must be
/// `*** Begin Patch` and `*** End Patch`, or, in lenient mode
/// (`check_patch_boundaries_lenient`), the first line is exactly `<<EOF`,
/// `<<'EOF'` or `<<"EOF"`, the last ends with `EOF`, there are at least 4 lines,
/// and the lines between pass the strict check. The body then goes to
/// `streaming_parser.rs` (`process_line`, `handle_hunk_headers_and_end_patch`).
/// At the start, after `*** Add File: ` lines and after `*** Delete File: ` it
/// trims a line before looking for `*** Add File: `, `*** Delete File: `,
/// `*** Update File: ` or `*** End Patch`, so ` *** Delete File: .env` there is
/// a header. Inside an update hunk, the newest versions look at `line.trim_end()`
/// (a leading blank makes the line a context line, and `*** Move to: ` must start
/// the line), an earlier `streaming_parser.rs` trimmed there too (so a context
/// line ` *** Update File: .env` was a header), and the older `parse_one_hunk`
/// ended an update hunk at any line starting with `*`, then trimmed it, and read
/// `*** Move to: ` untrimmed, its path keeping trailing blanks. Rather than pick
/// one version, this reader takes every line that, trimmed, starts with a file
/// marker as a header, and reads a move both trimmed and untrimmed.
mod codex {
    use super::{Kind, Ops, PatchError, clip};
    use std::borrow::Cow;

    const BEGIN_PATCH: &str = "*** Begin Patch";
    const END_PATCH: &str = "*** End Patch";
    const ADD_FILE: &str = "*** Add File: ";
    const DELETE_FILE: &str = "*** Delete File: ";
    const UPDATE_FILE: &str = "*** Update File: ";
    const MOVE_TO: &str = "*** Move to: ";
    const END_OF_FILE: &str = "*** End of File";
    const ENVIRONMENT_ID: &str = "*** Environment ID: ";

    /// Adds what a Codex patch in `text` writes; false when `text` is not one.
    pub(super) fn read(text: &str, ops: &mut Ops) -> Result<bool, PatchError> {
        let script = script(text)?;
        let (body, base, cd) = match &script {
            Some(s) => (s.body.as_str(), s.first_line, s.cd.as_deref()),
            None => (text, 0, None),
        };
        let Some((lines, first)) = patch_lines(body) else {
            return Ok(false);
        };
        scan(&lines, base + first, cd, ops)?;
        Ok(true)
    }

    /// The lines between the begin and end markers, and the line number of the first.
    fn patch_lines(text: &str) -> Option<(Vec<&str>, usize)> {
        let skipped = text.len() - text.trim_start().len();
        let offset = text.get(..skipped).map_or(0, |s| s.matches('\n').count());
        let lines: Vec<&str> = text.trim().lines().collect();
        if strict(&lines) {
            return Some((lines.get(1..lines.len() - 1)?.to_vec(), offset + 1));
        }
        // parser.rs, check_patch_boundaries_lenient: exact first line, no trim.
        if let [first, .., last] = lines.as_slice()
            && lines.len() >= 4
            && matches!(*first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
            && last.ends_with("EOF")
        {
            let inner = lines.get(1..lines.len() - 1)?;
            if strict(inner) {
                return Some((inner.get(1..inner.len() - 1)?.to_vec(), offset + 2));
            }
        }
        None
    }

    /// parser.rs, check_start_and_end_lines_strict: both marker lines trimmed.
    fn strict(lines: &[&str]) -> bool {
        matches!(lines, [first, .., last] if first.trim() == BEGIN_PATCH && last.trim() == END_PATCH)
    }

    fn scan(
        lines: &[&str],
        first: usize,
        cd: Option<&str>,
        ops: &mut Ops,
    ) -> Result<(), PatchError> {
        let mut update: Option<&str> = None;
        for (k, raw) in lines.iter().enumerate() {
            let line = first + k;
            let t = raw.trim();
            if let Some(path) = t.strip_prefix(ADD_FILE) {
                ops.add(line, Kind::Write, &joined(cd, path));
                update = None;
            } else if let Some(path) = t.strip_prefix(DELETE_FILE) {
                ops.add(line, Kind::Delete, &joined(cd, path));
                update = None;
            } else if let Some(path) = t.strip_prefix(UPDATE_FILE) {
                ops.add(line, Kind::Write, &joined(cd, path));
                update = Some(path);
            } else if t.starts_with(MOVE_TO) {
                // streaming_parser.rs trims the line; parse_one_hunk did not, and
                // kept trailing blanks (and a stray `\r`) in the path.
                if let Some(src) = update {
                    ops.add(line, Kind::Delete, &joined(cd, src));
                }
                let raw_move = raw.strip_prefix(MOVE_TO);
                let dests = [
                    t.strip_prefix(MOVE_TO),
                    raw_move,
                    raw_move.map(|m| m.trim_end_matches('\r')),
                ];
                for dest in dests.into_iter().flatten() {
                    ops.add(line, Kind::Write, &joined(cd, dest));
                }
            } else if t == BEGIN_PATCH
                || t == END_PATCH
                || t == END_OF_FILE
                || t.starts_with(ENVIRONMENT_ID)
            {
                // `*** End Patch` in the middle ends the patch for the streaming
                // parser and is an error for the old one; reading on is a superset.
            } else if suspicious(t) {
                return Err(PatchError::at(
                    line,
                    format!("unrecognised `apply_patch` file marker `{}`", clip(t)),
                ));
            }
        }
        Ok(())
    }

    /// A line that looks like a file marker but is none: codex rejects it today,
    /// a more lenient version might take it for a header.
    fn suspicious(t: &str) -> bool {
        if !t.starts_with("***") {
            return false;
        }
        let lower = t.to_ascii_lowercase();
        lower.contains("file") || lower.contains("move")
    }

    /// A patch path inside `cd DIR && apply_patch ...`, as codex resolves it
    /// (`invocation.rs`: the workdir is joined to the cwd, the path to the workdir).
    fn joined<'a>(cd: Option<&str>, path: &'a str) -> Cow<'a, str> {
        match cd {
            Some(dir) if !is_absolute(path) => {
                Cow::Owned(format!("{}/{path}", dir.trim_end_matches('/')))
            }
            _ => Cow::Borrowed(path),
        }
    }

    fn is_absolute(path: &str) -> bool {
        path.starts_with('/') || path.starts_with('\\') || path.as_bytes().get(1) == Some(&b':')
    }

    /// A shell script `[cd DIR &&] apply_patch <<'EOF'` ... `EOF`.
    struct Script {
        body: String,
        first_line: usize,
        cd: Option<String>,
    }

    /// The heredoc form that `invocation.rs` (`extract_apply_patch_from_bash`)
    /// accepts: one statement, `apply_patch` or `applypatch` with a heredoc,
    /// optionally after `cd <one word> &&`, nothing before or after.
    fn script(text: &str) -> Result<Option<Script>, PatchError> {
        let rest = text.trim_start();
        let skipped = text.len() - rest.len();
        let line = text.get(..skipped).map_or(0, |s| s.matches('\n').count());
        let (first, after) = rest.split_once('\n').unwrap_or((rest, ""));
        let first = first.trim_end();
        let word_end = first
            .find(|c: char| c.is_ascii_whitespace() || c == '<')
            .unwrap_or(first.len());
        if !matches!(
            first.get(..word_end),
            Some("cd" | "apply_patch" | "applypatch")
        ) {
            return Ok(None);
        }
        let Some(call) = invocation(first) else {
            return Err(PatchError::at(
                line,
                format!("unsupported `apply_patch` invocation `{}`", clip(first)),
            ));
        };
        let mut body = Vec::new();
        let mut rest = after
            .split_terminator('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l));
        let mut closed = false;
        for l in rest.by_ref() {
            let end = if call.dash {
                l.trim_start_matches('\t')
            } else {
                l
            };
            if end == call.delimiter {
                closed = true;
                break;
            }
            body.push(l);
        }
        if !closed {
            return Err(PatchError::at(
                line,
                format!("the heredoc `{}` is never closed", call.delimiter),
            ));
        }
        if rest.any(|l| !l.trim().is_empty()) {
            return Err(PatchError::at(
                line,
                "commands follow the `apply_patch` heredoc",
            ));
        }
        if !call.quoted
            && body
                .iter()
                .any(|l| l.contains(['$', '`']) || l.ends_with('\\'))
        {
            return Err(PatchError::at(
                line,
                format!(
                    "the heredoc delimiter `{}` is unquoted, so a shell may expand the patch",
                    call.delimiter
                ),
            ));
        }
        Ok(Some(Script {
            body: body.join("\n"),
            first_line: line + 1,
            cd: call.cd,
        }))
    }

    struct Invocation {
        cd: Option<String>,
        delimiter: String,
        quoted: bool,
        dash: bool,
    }

    fn invocation(line: &str) -> Option<Invocation> {
        let mut s = line;
        let mut cd = None;
        if let Some(r) = s.strip_prefix("cd") {
            let r = r.strip_prefix([' ', '\t'])?.trim_start();
            let (dir, r) = shell_word(r)?;
            cd = Some(dir);
            s = r.trim_start().strip_prefix("&&")?.trim_start();
        }
        let r = s
            .strip_prefix("apply_patch")
            .or_else(|| s.strip_prefix("applypatch"))?;
        let r = r.trim_start().strip_prefix("<<")?;
        let (dash, r) = match r.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, r),
        };
        let (delimiter, quoted, r) = delimiter(r.trim_start())?;
        if !r.trim().is_empty() {
            return None;
        }
        Some(Invocation {
            cd,
            delimiter,
            quoted,
            dash,
        })
    }

    /// One shell word that expands to itself: quoted, or plain path characters.
    fn shell_word(s: &str) -> Option<(String, &str)> {
        if let Some(r) = s.strip_prefix('\'') {
            let (w, r) = r.split_once('\'')?;
            return Some((w.to_string(), r));
        }
        if let Some(r) = s.strip_prefix('"') {
            let (w, r) = r.split_once('"')?;
            return (!w.contains(['$', '`', '\\'])).then(|| (w.to_string(), r));
        }
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_./+,:@%=-".contains(c)))
            .unwrap_or(s.len());
        let w = s.get(..end).filter(|w| !w.is_empty())?;
        Some((w.to_string(), s.get(end..)?))
    }

    fn delimiter(s: &str) -> Option<(String, bool, &str)> {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        for q in ['\'', '"'] {
            if let Some(r) = s.strip_prefix(q) {
                let (w, r) = r.split_once(q)?;
                return (!w.is_empty() && w.chars().all(word)).then(|| (w.to_string(), true, r));
            }
        }
        let end = s.find(|c: char| !word(c)).unwrap_or(s.len());
        let w = s.get(..end).filter(|w| !w.is_empty())?;
        Some((w.to_string(), false, s.get(end..)?))
    }
}

/// The `git apply` reader (`apply.c`, default options, `-p1`).
///
/// `find_header` scans lines: a valid `@@ -a,b +c,d @@` there is an error
/// ("patch fragment without header"); `diff --git ` starts a git header
/// (`parse_git_diff_header`), whose extended lines run until the first line it
/// does not know; `--- ` directly followed by `+++ ` and `@@ -` starts a
/// traditional one (`parse_traditional_patch`). Hunks (`parse_fragment`) end when
/// their counts are used up, so a `--- ` line inside one is content. Everything
/// else is skipped.
mod git {
    use super::{Kind, Ops, PatchError, clip, decode, git_isspace, p1_variants, unquote_c};

    /// One file patch: old and new names as reported.
    #[derive(Default)]
    struct Patch {
        old: Vec<(usize, String)>,
        new: Vec<(usize, String)>,
        is_new: bool,
        is_delete: bool,
        is_rename: bool,
        is_copy: bool,
    }

    impl Patch {
        fn add_old(&mut self, line: usize, names: Vec<&str>) {
            self.old
                .extend(names.into_iter().map(|n| (line, n.to_string())));
        }

        fn add_new(&mut self, line: usize, names: Vec<&str>) {
            self.new
                .extend(names.into_iter().map(|n| (line, n.to_string())));
        }

        fn emit(self, ops: &mut Ops) {
            let old_kind = if self.is_rename || self.is_delete {
                Kind::Delete
            } else if self.is_copy {
                Kind::Read
            } else {
                Kind::Write
            };
            for (line, path) in &self.old {
                ops.add(*line, old_kind, path);
            }
            for (line, path) in &self.new {
                ops.add(*line, Kind::Write, path);
            }
        }
    }

    /// Names under the strip level in force: `-p0` once `guess_p_value` found
    /// names without a slash, `-p1` before.
    fn names(p0: bool, raw: &str) -> Vec<&str> {
        if p0 { vec![raw] } else { p1_variants(raw) }
    }

    pub(super) fn read(lines: &[&str], ops: &mut Ops) -> Result<bool, PatchError> {
        let (mut p0, mut p_known, mut found) = (false, false, false);
        let mut i = 0;
        while let Some(&line) = lines.get(i) {
            // find_header: "if (len < 6) continue;" (len counts the newline).
            if line.len() < 5 {
                i += 1;
                continue;
            }
            if line.starts_with("@@ -") {
                if fragment_header(line).is_some() {
                    return Err(PatchError::at(
                        i,
                        format!("hunk `{}` has no file header before it", clip(line)),
                    ));
                }
                i += 1;
                continue;
            }
            if let Some(rest) = line.strip_prefix("diff --git ") {
                let mut patch = Patch::default();
                let end = header(lines, i, rest, p0, &mut patch)?;
                if end <= i + 1 {
                    // Only the `diff --git` line: git skips it.
                    i += 1;
                    continue;
                }
                i = fragments(lines, end)?;
                patch.emit(ops);
                found = true;
                continue;
            }
            if let Some(first) = line.strip_prefix("--- ")
                && let Some(second) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ "))
                && lines.get(i + 2).is_some_and(|l| l.starts_with("@@ -"))
            {
                // guess_p_value gives 0 for a name without a slash and -1 for
                // anything else; the first value is replaced by the second when
                // negative, and the level is fixed when both agree, so it comes
                // down to the `+++` name.
                if !p_known && guess_p0(second) {
                    p0 = true;
                    p_known = true;
                }
                let mut patch = Patch::default();
                traditional(first, second, i, p0, &mut patch)?;
                i = fragments(lines, i + 2)?;
                patch.emit(ops);
                found = true;
                continue;
            }
            i += 1;
        }
        Ok(found)
    }

    /// guess_p_value: a name without a slash means `-p0` (0), anything else -1.
    fn guess_p0(v: &str) -> bool {
        !is_dev_null(v)
            && find_name_traditional(v, 0)
                .ok()
                .flatten()
                .is_some_and(|n| !n.contains('/'))
    }

    /// parse_git_diff_header: the extended lines after `diff --git`; returns the
    /// index of the first line after them.
    fn header(
        lines: &[&str],
        start: usize,
        rest: &str,
        p0: bool,
        patch: &mut Patch,
    ) -> Result<usize, PatchError> {
        let def = header_names(rest, if p0 { 0 } else { 1 }, start)?;
        let (mut saw_old, mut saw_new) = (false, false);
        let mut i = start + 1;
        while let Some(&line) = lines.get(i) {
            if line.starts_with("@@ -") {
                break;
            } else if let Some(v) = line.strip_prefix("--- ") {
                // gitdiff_verify_name: for a new file this must be /dev/null.
                if !patch.is_new
                    && let Some(n) = find_name(v, true, i)?
                {
                    patch.add_old(i, names(p0, &n));
                    saw_old = true;
                }
            } else if let Some(v) = line.strip_prefix("+++ ") {
                if !patch.is_delete
                    && let Some(n) = find_name(v, true, i)?
                {
                    patch.add_new(i, names(p0, &n));
                    saw_new = true;
                }
            } else if line.starts_with("deleted file mode ") {
                patch.is_delete = true;
            } else if line.starts_with("new file mode ") {
                patch.is_new = true;
            } else if let Some(v) = line.strip_prefix("copy from ") {
                // gitdiff_copysrc and friends: `p_value - 1` components, so none.
                patch.is_copy = true;
                if let Some(n) = find_name(v, false, i)? {
                    patch.add_old(i, vec![&n]);
                    saw_old = true;
                }
            } else if let Some(v) = line.strip_prefix("copy to ") {
                patch.is_copy = true;
                if let Some(n) = find_name(v, false, i)? {
                    patch.add_new(i, vec![&n]);
                    saw_new = true;
                }
            } else if let Some(v) = line
                .strip_prefix("rename from ")
                .or_else(|| line.strip_prefix("rename old "))
            {
                patch.is_rename = true;
                if let Some(n) = find_name(v, false, i)? {
                    patch.add_old(i, vec![&n]);
                    saw_old = true;
                }
            } else if let Some(v) = line
                .strip_prefix("rename to ")
                .or_else(|| line.strip_prefix("rename new "))
            {
                patch.is_rename = true;
                if let Some(n) = find_name(v, false, i)? {
                    patch.add_new(i, vec![&n]);
                    saw_new = true;
                }
            } else if ![
                "old mode ",
                "new mode ",
                "similarity index ",
                "dissimilarity index ",
                "index ",
            ]
            .iter()
            .any(|p| line.starts_with(p))
            {
                break;
            }
            i += 1;
        }
        match def {
            Some((a, b)) => {
                patch.add_old(start, names(p0, &a));
                patch.add_new(start, names(p0, &b));
            }
            None if (!saw_new && !patch.is_delete) || (!saw_old && !patch.is_new) => {
                return Err(PatchError::at(
                    start,
                    "the `diff --git` header lacks a file name",
                ));
            }
            None => {}
        }
        Ok(i)
    }

    /// git_header_name: the two names of a `diff --git` line when they are the
    /// same name under the strip level, as written (unstripped).
    fn header_names(
        rest: &str,
        p: u8,
        line: usize,
    ) -> Result<Option<(String, String)>, PatchError> {
        if rest.starts_with('"') {
            let Some((first, used)) = unquote_c(rest) else {
                return Ok(None);
            };
            let first = decode(first, line)?;
            let Some(cp) = skip_tree_prefix(p, &first) else {
                return Ok(None);
            };
            let second = rest
                .get(used..)
                .unwrap_or("")
                .trim_start_matches(git_isspace);
            if second.is_empty() {
                return Ok(None);
            }
            let second = if second.starts_with('"') {
                let Some((b, _)) = unquote_c(second) else {
                    return Ok(None);
                };
                decode(b, line)?
            } else {
                second.to_string()
            };
            let same = skip_tree_prefix(p, &second)
                .is_some_and(|cp2| second.get(cp2..) == first.get(cp..));
            return Ok(same.then_some((first, second)));
        }
        let Some(off) = skip_tree_prefix(p, rest) else {
            return Ok(None);
        };
        let name = rest.get(off..).unwrap_or("");
        if let Some(q) = name.find('"') {
            // An unquoted first name and a quoted second one.
            let Some((b, _)) = unquote_c(name.get(q..).unwrap_or("")) else {
                return Ok(None);
            };
            let second = decode(b, line)?;
            let Some(np) = skip_tree_prefix(p, &second) else {
                return Ok(None);
            };
            let tail = second.get(np..).unwrap_or("");
            let len = tail.len();
            let matches = len < q
                && name.as_bytes().get(..len) == Some(tail.as_bytes())
                && name
                    .as_bytes()
                    .get(len)
                    .is_some_and(|&c| git_isspace(char::from(c)));
            return Ok(match (matches, rest.get(..off + len)) {
                (true, Some(first)) => Some((first.to_string(), second)),
                _ => None,
            });
        }
        // The same name twice: try each blank as the separator. The stripped
        // second name must be as long as the first, which holds for at most one
        // blank; the next slash is tracked forward so this stays linear.
        let b = name.as_bytes();
        let mut slash = 0;
        for (k, &c) in b.iter().enumerate() {
            if c != b' ' && c != b'\t' {
                continue;
            }
            let tail = k + 1;
            if tail >= b.len() {
                return Ok(None);
            }
            let second_start = if p == 0 {
                if b.get(tail) == Some(&b'/') {
                    continue;
                }
                tail
            } else {
                slash = slash.max(tail);
                while slash < b.len() && b.get(slash) != Some(&b'/') {
                    slash += 1;
                }
                if slash >= b.len() {
                    return Ok(None);
                }
                if slash == tail {
                    continue;
                }
                slash + 1
            };
            let second = b.get(second_start..).unwrap_or_default();
            if second.len() == k && b.get(..k) == Some(second) {
                return Ok(match (rest.get(..off + k), rest.get(off + tail..)) {
                    (Some(first), Some(second)) => Some((first.to_string(), second.to_string())),
                    _ => None,
                });
            }
        }
        Ok(None)
    }

    /// skip_tree_prefix: where the name starts after `p` components; none for an
    /// absolute name or too few components.
    fn skip_tree_prefix(p: u8, s: &str) -> Option<usize> {
        if p == 0 {
            return (!s.starts_with('/')).then_some(0);
        }
        match s.find('/') {
            Some(0) | None => None,
            Some(k) => Some(k + 1),
        }
    }

    /// parse_traditional_patch: the names of `--- ` and `+++ ` lines.
    fn traditional(
        first: &str,
        second: &str,
        line: usize,
        p0: bool,
        patch: &mut Patch,
    ) -> Result<(), PatchError> {
        if is_dev_null(first) {
            patch.is_new = true;
        } else if let Some(n) = find_name_traditional(first, line)? {
            patch.add_old(line, names(p0, &n));
        }
        if is_dev_null(second) || has_epoch_timestamp(second) {
            patch.is_delete = true;
        }
        if !is_dev_null(second)
            && let Some(n) = find_name_traditional(second, line + 1)?
        {
            patch.add_new(line + 1, names(p0, &n));
        }
        Ok(())
    }

    fn is_dev_null(v: &str) -> bool {
        v.strip_prefix("/dev/null")
            .is_some_and(|r| r.is_empty() || r.starts_with(git_isspace))
    }

    /// has_epoch_timestamp, loosely: a timestamp after the last tab on the epoch day.
    fn has_epoch_timestamp(v: &str) -> bool {
        v.rsplit_once('\t')
            .is_some_and(|(_, t)| t.starts_with("1970-01-01") || t.starts_with("1969-12-31"))
    }

    /// find_name with `p_value` 0: a quoted name, or up to a tab (`TERM_TAB`) or
    /// any other blank but a space.
    fn find_name(v: &str, tab: bool, line: usize) -> Result<Option<String>, PatchError> {
        if v.starts_with('"')
            && let Some((b, _)) = unquote_c(v)
        {
            return decode(b, line).map(Some);
        }
        let end = v
            .find(|c: char| c == '\n' || c == '\r' || (tab && c == '\t'))
            .unwrap_or(v.len());
        let name = v.get(..end).unwrap_or("");
        Ok((!name.is_empty()).then(|| name.to_string()))
    }

    /// find_name_traditional: as find_name, but a trailing timestamp is cut off
    /// even when only spaces separate it (diff_timestamp_len).
    fn find_name_traditional(v: &str, line: usize) -> Result<Option<String>, PatchError> {
        if v.starts_with('"')
            && let Some((b, _)) = unquote_c(v)
        {
            return decode(b, line).map(Some);
        }
        let date = timestamp_len(v.as_bytes());
        if date == 0 {
            return find_name(v, true, line);
        }
        let name = v.get(..v.len().saturating_sub(date)).unwrap_or("");
        Ok((!name.is_empty()).then(|| name.to_string()))
    }

    fn digit(b: &[u8], i: usize) -> bool {
        b.get(i).is_some_and(u8::is_ascii_digit)
    }

    fn at(b: &[u8], i: usize, c: u8) -> bool {
        b.get(i) == Some(&c)
    }

    /// diff_timestamp_len: how many bytes at the end of `b` are a timestamp
    /// (`2010-07-05 19:41:17.620000023 -0500` and the like) with the blanks before it.
    fn timestamp_len(b: &[u8]) -> usize {
        let len = b.len();
        if !digit(b, len.wrapping_sub(1)) {
            return 0;
        }
        let mut end = len;
        let mut n = sane_tz_len(&b[..end]);
        if n == 0 {
            n = tz_with_colon_len(&b[..end]);
        }
        end -= n;
        n = short_time_len(&b[..end]);
        if n == 0 {
            n = fractional_time_len(&b[..end]);
        }
        end -= n;
        n = date_len(&b[..end]);
        if n == 0 {
            return 0;
        }
        end -= n;
        if end == 0 {
            return 0;
        }
        if at(b, end - 1, b'\t') {
            return len - (end - 1);
        }
        if !at(b, end - 1, b' ') {
            return 0;
        }
        while end > 0 && at(b, end - 1, b' ') {
            end -= 1;
        }
        len - end
    }

    #[cfg(test)]
    pub(super) fn timestamp_len_for_test(v: &str) -> usize {
        timestamp_len(v.as_bytes())
    }

    /// ` +0500`
    fn sane_tz_len(b: &[u8]) -> usize {
        let len = b.len();
        if len < 6 || !at(b, len - 6, b' ') || !(at(b, len - 5, b'+') || at(b, len - 5, b'-')) {
            return 0;
        }
        if (len - 4..len).all(|i| digit(b, i)) {
            6
        } else {
            0
        }
    }

    /// ` +08:00`
    fn tz_with_colon_len(b: &[u8]) -> usize {
        let len = b.len();
        if len < 7 || !at(b, len - 3, b':') {
            return 0;
        }
        let t = len - 7;
        let ok = at(b, t, b' ')
            && (at(b, t + 1, b'+') || at(b, t + 1, b'-'))
            && digit(b, t + 2)
            && digit(b, t + 3)
            && digit(b, t + 5)
            && digit(b, t + 6);
        if ok { 7 } else { 0 }
    }

    /// `72-02-05`, or `1972-02-05`
    fn date_len(b: &[u8]) -> usize {
        let len = b.len();
        if len < 8 || !at(b, len - 3, b'-') {
            return 0;
        }
        let d = len - 8;
        let ok = digit(b, d)
            && digit(b, d + 1)
            && at(b, d + 2, b'-')
            && digit(b, d + 3)
            && digit(b, d + 4)
            && digit(b, d + 6)
            && digit(b, d + 7);
        if !ok {
            return 0;
        }
        if d >= 2 && digit(b, d - 1) && digit(b, d - 2) {
            10
        } else {
            8
        }
    }

    /// ` 07:01:32`
    fn short_time_len(b: &[u8]) -> usize {
        let len = b.len();
        if len < 9 || !at(b, len - 3, b':') {
            return 0;
        }
        let t = len - 9;
        let ok = at(b, t, b' ')
            && digit(b, t + 1)
            && digit(b, t + 2)
            && at(b, t + 3, b':')
            && digit(b, t + 4)
            && digit(b, t + 5)
            && digit(b, t + 7)
            && digit(b, t + 8);
        if ok { 9 } else { 0 }
    }

    /// ` 19:41:17.620000023`
    fn fractional_time_len(b: &[u8]) -> usize {
        let len = b.len();
        if len == 0 || !digit(b, len - 1) {
            return 0;
        }
        let mut p = len - 1;
        while p > 0 && digit(b, p) {
            p -= 1;
        }
        if !at(b, p, b'.') {
            return 0;
        }
        match short_time_len(&b[..p]) {
            0 => 0,
            n => len - p + n,
        }
    }

    /// parse_fragment_header: `@@ -a[,b] +c[,d] @@` with the old and new counts.
    fn fragment_header(line: &str) -> Option<(u64, u64)> {
        let b = line.as_bytes();
        let (old, i) = range(b, 4, b" +")?;
        let (new, _) = range(b, i, b" @@")?;
        Some((old, new))
    }

    fn range(b: &[u8], i: usize, expect: &[u8]) -> Option<(u64, usize)> {
        let (_, mut i) = number(b, i)?;
        let mut count = 1;
        if at(b, i, b',') {
            (count, i) = number(b, i + 1)?;
        }
        (b.get(i..i + expect.len()) == Some(expect)).then_some((count, i + expect.len()))
    }

    fn number(b: &[u8], mut i: usize) -> Option<(u64, usize)> {
        let start = i;
        let mut n: u64 = 0;
        while let Some(&c) = b.get(i)
            && c.is_ascii_digit()
        {
            n = n.saturating_mul(10).saturating_add(u64::from(c - b'0'));
            i += 1;
        }
        (i > start).then_some((n, i))
    }

    /// parse_single_patch and parse_fragment: the hunks from line `i`; returns the
    /// index of the first line after them.
    fn fragments(lines: &[&str], mut i: usize) -> Result<usize, PatchError> {
        while let Some(&line) = lines.get(i)
            && line.starts_with("@@ -")
        {
            let Some((mut old, mut new)) = fragment_header(line) else {
                return Err(PatchError::at(
                    i,
                    format!("malformed hunk header `{}`", clip(line)),
                ));
            };
            let head = i;
            i += 1;
            let mut changed = false;
            while old > 0 || new > 0 {
                let Some(&l) = lines.get(i) else {
                    return Err(PatchError::at(
                        head,
                        format!("hunk `{}` runs past the end of the patch", clip(line)),
                    ));
                };
                let more = || {
                    PatchError::at(
                        i,
                        format!(
                            "hunk `{}` has more lines than its header counts",
                            clip(line)
                        ),
                    )
                };
                match l.as_bytes().first() {
                    None | Some(b' ') => {
                        if old == 0 || new == 0 {
                            return Err(more());
                        }
                        old -= 1;
                        new -= 1;
                    }
                    Some(b'-') => {
                        old = old.checked_sub(1).ok_or_else(more)?;
                        changed = true;
                    }
                    Some(b'+') => {
                        new = new.checked_sub(1).ok_or_else(more)?;
                        changed = true;
                    }
                    Some(b'\\') if l.len() >= 11 && l.starts_with("\\ ") => {}
                    Some(_) => {
                        return Err(PatchError::at(
                            i,
                            format!(
                                "`{}` is not a hunk line (`git apply` rejects the patch)",
                                clip(l)
                            ),
                        ));
                    }
                }
                i += 1;
            }
            if !changed {
                return Err(PatchError::at(
                    head,
                    format!("hunk `{}` changes nothing", clip(line)),
                ));
            }
            if lines
                .get(i)
                .is_some_and(|l| l.len() >= 11 && l.starts_with("\\ "))
            {
                i += 1;
            }
        }
        Ok(i)
    }
}

/// The GNU `patch -p1` reader (`pch.c`: `intuit_diff_type`, `another_hunk`,
/// `pget_line`; `util.c`: `fetchname`, `parse_name`).
///
/// GNU `patch` finds headers anywhere in the garbage before a hunk: after
/// skipping blanks and `X`s it takes names from `*** `, `+++ `, `--- ` (also after
/// RFC 934 `- ` pairs), `Index:` and `diff --git ` lines, keeps the git extended
/// lines of a `diff --git` section, and starts a unified patch at `@@ -`. It
/// skips lines starting with `#`, in hunks too, and reads a hunk by its counts.
/// Names that do not survive `-p1` (no slash) are dropped, as GNU drops them.
mod gnu {
    use super::{Kind, Ops, PatchError, c_isspace, decode, p1_ok, p1_variants, unquote_c};
    use std::borrow::Cow;

    /// What one call of `intuit_diff_type` has gathered.
    #[derive(Default)]
    struct Scan {
        names: Vec<(usize, String)>,
        emitted: usize,
        old: Option<String>,
        new: Option<String>,
        named: bool,
        git: bool,
        ext: bool,
        delete: bool,
        rename: bool,
        copy_from: bool,
        copy_to: bool,
        rfc934: bool,
        stars: bool,
    }

    enum Slot {
        Old,
        New,
        Index,
    }

    impl Scan {
        fn name(&mut self, line: usize, raw: String, slot: Slot) {
            match slot {
                Slot::Old => self.old = Some(raw.clone()),
                Slot::New => self.new = Some(raw.clone()),
                Slot::Index => {}
            }
            self.names.push((line, raw));
        }

        /// A patch found: every name is written; the old one (`p_name[OLD]`,
        /// which the `@@ -` swap takes from the `---` line) is the copy source
        /// or the rename source.
        fn full(&self, swapped: bool, ops: &mut Ops) -> bool {
            let old = if swapped {
                self.new.as_deref()
            } else {
                self.old.as_deref()
            };
            let copy = self.copy_from && self.copy_to && !self.delete;
            for (line, raw) in &self.names {
                let is_old = old == Some(raw.as_str());
                let kind = if copy && is_old {
                    Kind::Read
                } else if self.delete || (self.rename && is_old) {
                    Kind::Delete
                } else {
                    Kind::Write
                };
                for path in p1_variants(raw) {
                    ops.add(*line, kind, path);
                }
            }
            !self.names.is_empty()
        }

        /// A context, normal or ed diff this reader does not follow: the names so
        /// far are written, and every line goes on being read as a possible header.
        fn loose(&mut self, ops: &mut Ops) -> bool {
            let fresh = self.names.get(self.emitted..).unwrap_or_default();
            for (line, raw) in fresh {
                for path in p1_variants(raw) {
                    ops.add(*line, Kind::Write, path);
                }
            }
            self.emitted = self.names.len();
            !fresh.is_empty()
        }
    }

    pub(super) fn read(lines: &[&str], ops: &mut Ops) -> Result<bool, PatchError> {
        let mut found = false;
        let mut scan = Scan::default();
        let mut last_indent = 0;
        let mut i = 0;
        while let Some(&line) = lines.get(i) {
            if line.starts_with('#') {
                i += 1;
                continue;
            }
            let (indent, s) = strip_indent(line);
            let indent_last = last_indent;
            last_indent = indent;
            if scan.named && (ed_command(s) || normal_command(s)) {
                found |= scan.loose(ops);
            }
            let stars_last = scan.stars;
            if !stars_last && let Some(v) = after_blank(s, "***") {
                if let Fetched::Name(n, _) = fetch(v, true, i)? {
                    scan.name(i, n, Slot::Old);
                }
                scan.named = true;
            } else if let Some(v) = after_blank(s, "+++") {
                // Read into p_name[OLD]; the `@@ -` swap makes it the new name.
                match fetch(v, true, i)? {
                    Fetched::DevNull => scan.delete = true,
                    Fetched::Name(n, rest) => {
                        scan.delete |= rest.contains("1970") || rest.contains("1969");
                        scan.name(i, n, Slot::Old);
                    }
                    Fetched::Nothing => {}
                }
                scan.named = true;
            } else if let Some(v) = s.strip_prefix("Index:") {
                if let Fetched::Name(n, _) = fetch(v, false, i)? {
                    scan.name(i, n, Slot::Index);
                }
                scan.named = true;
            } else if s.starts_with("Prereq:") {
            } else if let Some(v) = s.strip_prefix("diff --git ") {
                if scan.ext {
                    // A patch without hunks ends here; read this line again.
                    found |= scan.full(false, ops);
                    scan = Scan::default();
                    continue;
                }
                scan.old = None;
                scan.new = None;
                if let Some((a, b)) = git_names(v, i)? {
                    scan.name(i, a, Slot::Old);
                    scan.name(i, b, Slot::New);
                }
                scan.git = true;
                scan.named = true;
            } else if scan.git
                && let Some(v) = s.strip_prefix("index ")
            {
                scan.delete |= index_deletes(v);
                scan.ext = true;
            } else if scan.git
                && (s.starts_with("old mode ")
                    || s.starts_with("new mode ")
                    || s.starts_with("new file mode "))
            {
                scan.ext = true;
            } else if scan.git && s.starts_with("deleted file mode ") {
                scan.delete = true;
                scan.ext = true;
            } else if scan.git && (s.starts_with("rename from ") || s.starts_with("rename to ")) {
                scan.rename = true;
                scan.ext = true;
            } else if scan.git && s.starts_with("copy from ") {
                scan.copy_from = true;
                scan.ext = true;
            } else if scan.git && s.starts_with("copy to ") {
                scan.copy_to = true;
                scan.ext = true;
            } else if scan.git && s.starts_with("GIT binary patch") {
                found |= scan.full(false, ops);
                scan = Scan::default();
                i += 1;
                continue;
            } else {
                let mut t = s;
                while let Some(r) = t.strip_prefix("- ") {
                    t = r;
                }
                if let Some(v) = after_blank(t, "---") {
                    scan.rfc934 |= t.len() != s.len();
                    if let Fetched::Name(n, _) = fetch(v, true, i)? {
                        scan.name(i, n, Slot::New);
                    }
                    scan.named = true;
                }
            }
            if !scan.named {
                i += 1;
                continue;
            }
            if let Some(range) = s.strip_prefix("@@ -") {
                scan.delete |= new_side_empty(range);
                found |= scan.full(true, ops);
                // An indented or RFC 934 quoted hunk is read with its prefix
                // stripped, which this reader does not follow: its lines are
                // read as possible headers instead.
                let next = if indent == 0 && !scan.rfc934 {
                    hunks(lines, i)
                } else {
                    None
                };
                i = next.unwrap_or(i + 1);
                scan = Scan::default();
                last_indent = 0;
                continue;
            }
            scan.stars = s.starts_with("********");
            if stars_last && indent_last == indent && after_blank(s, "***").is_some() {
                found |= scan.loose(ops);
            }
            i += 1;
        }
        if scan.ext {
            found |= scan.full(false, ops);
        }
        Ok(found)
    }

    /// The blanks and `X`s GNU `patch` skips before looking at a line, in columns.
    fn strip_indent(line: &str) -> (usize, &str) {
        let mut indent = 0usize;
        for (k, c) in line.char_indices() {
            match c {
                '\t' => indent = (indent + 8) & !7,
                ' ' | 'X' => indent += 1,
                _ => return (indent, line.get(k..).unwrap_or("")),
            }
        }
        (indent, "")
    }

    /// `prefix` followed by a space or a tab: what comes after that blank.
    fn after_blank<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
        let r = s.strip_prefix(prefix)?;
        r.strip_prefix([' ', '\t'])
    }

    enum Fetched<'a> {
        Nothing,
        DevNull,
        Name(String, &'a str),
    }

    /// fetchname: a name and what follows it. Without a tab the name ends at the
    /// first blank (for `Index:`, at the end of the line); with one, at the blanks
    /// before the tab.
    fn fetch(v: &str, stamp: bool, line: usize) -> Result<Fetched<'_>, PatchError> {
        let v = v.trim_start_matches(c_isspace);
        let (name, rest): (Cow<'_, str>, &str) = if v.starts_with('"') {
            match unquote_c(v) {
                Some((b, used)) => (Cow::Owned(decode(b, line)?), v.get(used..).unwrap_or("")),
                None => return Ok(Fetched::Nothing),
            }
        } else if let Some(k) = v.find('\t') {
            (
                Cow::Borrowed(v.get(..k).unwrap_or("").trim_end_matches(c_isspace)),
                v.get(k..).unwrap_or(""),
            )
        } else if stamp {
            let k = v.find(c_isspace).unwrap_or(v.len());
            (
                Cow::Borrowed(v.get(..k).unwrap_or("")),
                v.get(k..).unwrap_or(""),
            )
        } else {
            (Cow::Borrowed(v.trim_end_matches(c_isspace)), "")
        };
        if name == "/dev/null" {
            return Ok(Fetched::DevNull);
        }
        if !p1_ok(&name) {
            return Ok(Fetched::Nothing);
        }
        Ok(Fetched::Name(name.into_owned(), rest))
    }

    /// parse_name: one name of a `diff --git` line and what follows it.
    fn parse_name(v: &str, line: usize) -> Result<Option<(String, &str)>, PatchError> {
        let v = v.trim_start_matches(c_isspace);
        let (name, rest) = if v.starts_with('"') {
            match unquote_c(v) {
                Some((b, used)) => (decode(b, line)?, v.get(used..).unwrap_or("")),
                None => return Ok(None),
            }
        } else {
            let k = v.find(c_isspace).unwrap_or(v.len());
            (
                v.get(..k).unwrap_or("").to_string(),
                v.get(k..).unwrap_or(""),
            )
        };
        Ok(p1_ok(&name).then_some((name, rest)))
    }

    /// The two names of a `diff --git` line: exactly two words, both kept by `-p1`.
    fn git_names(v: &str, line: usize) -> Result<Option<(String, String)>, PatchError> {
        let Some((a, rest)) = parse_name(v, line)? else {
            return Ok(None);
        };
        if !rest.starts_with(c_isspace) {
            return Ok(None);
        }
        let Some((b, rest)) = parse_name(rest, line)? else {
            return Ok(None);
        };
        Ok(rest
            .trim_start_matches(c_isspace)
            .is_empty()
            .then_some((a, b)))
    }

    /// An `index` line whose new object id is all zeros: the file is deleted.
    fn index_deletes(v: &str) -> bool {
        let hex = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        };
        let Some((a, rest)) = v.split_once("..") else {
            return false;
        };
        let b = rest.split(c_isspace).next().unwrap_or("");
        hex(a) && hex(b) && b.bytes().all(|c| c == b'0')
    }

    /// `+0` after the old range: the new file is empty, which `patch -E` deletes.
    fn new_side_empty(range: &str) -> bool {
        let after = range
            .split_once(' ')
            .map_or("", |(_, r)| r)
            .trim_start_matches(' ');
        after
            .strip_prefix("+0")
            .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_digit()))
    }

    /// get_ed_command_letter: `a`, `i`, `c`, `d` or `s/.//`, after a line number.
    fn ed_command(s: &str) -> bool {
        let b = s.as_bytes();
        let mut p = 0;
        let mut pair = false;
        if b.first().is_some_and(u8::is_ascii_digit) {
            while b.get(p).is_some_and(u8::is_ascii_digit) {
                p += 1;
            }
            if b.get(p) == Some(&b',') {
                p += 1;
                if !b.get(p).is_some_and(u8::is_ascii_digit) {
                    return false;
                }
                while b.get(p).is_some_and(u8::is_ascii_digit) {
                    p += 1;
                }
                pair = true;
            }
        }
        match b.get(p) {
            Some(b'a' | b'i') if !pair => p += 1,
            Some(b'c' | b'd') => p += 1,
            Some(b's') if b.get(p + 1..p + 5) == Some(b"/.//") => p += 5,
            _ => return false,
        }
        b.get(p..)
            .is_some_and(|r| r.iter().all(|&c| c == b' ' || c == b'\t'))
    }

    /// A normal diff command such as `1,2c3,4`.
    fn normal_command(s: &str) -> bool {
        let b = s.as_bytes();
        if !b.first().is_some_and(u8::is_ascii_digit) {
            return false;
        }
        let mut t = 1;
        while b.get(t).is_some_and(|c| c.is_ascii_digit() || *c == b',') {
            t += 1;
        }
        if !matches!(b.get(t), Some(b'a' | b'c' | b'd')) {
            return false;
        }
        t += 1;
        while b.get(t).is_some_and(|c| c.is_ascii_digit() || *c == b',') {
            t += 1;
        }
        b.get(t..)
            .is_some_and(|r| r.iter().all(|&c| c == b' ' || c == b'\t'))
    }

    /// another_hunk for a unified diff: the hunks from line `i`; the index of the
    /// first line after them, or none when GNU `patch` would give up on one.
    fn hunks(lines: &[&str], mut i: usize) -> Option<usize> {
        loop {
            let (mut old, mut new) = hunk_header(lines.get(i)?)?;
            i += 1;
            let mut changed = false;
            while old > 0 || new > 0 {
                let line = loop {
                    let l = lines.get(i)?;
                    i += 1;
                    if !l.starts_with('#') {
                        break *l;
                    }
                };
                match line.as_bytes().first() {
                    Some(b'-') => {
                        old = old.checked_sub(1)?;
                        changed = true;
                        if old == 0 {
                            incomplete_line(lines, &mut i);
                        }
                    }
                    None | Some(b'\t' | b' ' | b'=') => {
                        if old == 0 || new == 0 {
                            return None;
                        }
                        old -= 1;
                        if old == 0 {
                            incomplete_line(lines, &mut i);
                        }
                        new -= 1;
                        if new == 0 {
                            incomplete_line(lines, &mut i);
                        }
                    }
                    Some(b'+') => {
                        new = new.checked_sub(1)?;
                        changed = true;
                        if new == 0 {
                            incomplete_line(lines, &mut i);
                        }
                    }
                    Some(_) => return None,
                }
            }
            if !changed {
                return None;
            }
            let mut j = i;
            while lines.get(j).is_some_and(|l| l.starts_with('#')) {
                j += 1;
            }
            if !lines.get(j).is_some_and(|l| l.starts_with("@@ -")) {
                return Some(i);
            }
            i = j;
        }
    }

    /// incomplete_line: a `\ No newline at end of file` line right after the last
    /// line of one side.
    fn incomplete_line(lines: &[&str], i: &mut usize) {
        if lines.get(*i).is_some_and(|l| l.starts_with('\\')) {
            *i += 1;
        }
    }

    /// The counts of `@@ -a[,b] [+]c[,d] @` as GNU `patch` reads them.
    fn hunk_header(line: &str) -> Option<(u64, u64)> {
        let b = line.as_bytes();
        let (_, mut i) = linenum(b, 4)?;
        let mut old = 1;
        if b.get(i) == Some(&b',') {
            (old, i) = linenum(b, i + 1)?;
        }
        if b.get(i) == Some(&b' ') {
            i += 1;
        }
        if b.get(i) != Some(&b'+') {
            return None;
        }
        (_, i) = linenum(b, i + 1)?;
        let mut new = 1;
        if b.get(i) == Some(&b',') {
            (new, i) = linenum(b, i + 1)?;
        }
        if b.get(i) == Some(&b' ') {
            i += 1;
        }
        (b.get(i) == Some(&b'@')).then_some((old, new))
    }

    /// scan_linenum: blanks, digits, blanks.
    fn linenum(b: &[u8], mut i: usize) -> Option<(u64, usize)> {
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let start = i;
        let mut n: u64 = 0;
        while let Some(&c) = b.get(i)
            && c.is_ascii_digit()
        {
            n = n.saturating_mul(10).saturating_add(u64::from(c - b'0'));
            i += 1;
        }
        if i == start {
            return None;
        }
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        Some((n, i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::{Duration, Instant};

    enum Want {
        Files(
            &'static [&'static str],
            &'static [&'static str],
            &'static [&'static str],
        ),
        Err(&'static str),
    }

    struct Case {
        name: &'static str,
        text: String,
        want: Want,
    }

    fn files(
        name: &'static str,
        text: &str,
        w: &'static [&'static str],
        d: &'static [&'static str],
        r: &'static [&'static str],
    ) -> Case {
        Case {
            name,
            text: text.to_string(),
            want: Want::Files(w, d, r),
        }
    }

    fn fails(name: &'static str, text: &str, message: &'static str) -> Case {
        Case {
            name,
            text: text.to_string(),
            want: Want::Err(message),
        }
    }

    fn same(got: &[String], want: &[&str]) -> bool {
        got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g == w)
    }

    fn check(cases: Vec<Case>) {
        let mut failures = Vec::new();
        for case in &cases {
            let got = patch_files(&case.text);
            let ok = match (&case.want, &got) {
                (Want::Files(w, d, r), Ok(f)) => {
                    same(&f.writes, w) && same(&f.deletes, d) && same(&f.reads, r)
                }
                (Want::Err(m), Err(e)) => e.0.contains(m),
                _ => false,
            };
            if !ok {
                failures.push(format!("{}: got {got:?}", case.name));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    fn crlf(s: &str) -> String {
        s.replace('\n', "\r\n")
    }

    const CODEX_ALL: &str = "*** Begin Patch
*** Add File: src/new.rs
+fn main() {}
*** Update File: src/lib.rs
@@ fn old()
-    1
+    2
*** Delete File: src/gone.rs
*** Update File: src/a.rs
*** Move to: src/b.rs
@@
-x
+y
*** End Patch
";

    #[test]
    fn codex_patches() {
        check(vec![
            files(
                "add, update, delete, move",
                CODEX_ALL,
                &[
                    "src/new.rs",
                    "src/lib.rs",
                    "src/gone.rs",
                    "src/a.rs",
                    "src/b.rs",
                ],
                &["src/gone.rs", "src/a.rs"],
                &[],
            ),
            files(
                "crlf line endings",
                &crlf(CODEX_ALL),
                &[
                    "src/new.rs",
                    "src/lib.rs",
                    "src/gone.rs",
                    "src/a.rs",
                    "src/b.rs",
                ],
                &["src/gone.rs", "src/a.rs"],
                &[],
            ),
            files(
                "padded begin and end markers",
                "  *** Begin Patch  \n*** Add File: a.txt\n+a\n\t*** End Patch \n",
                &["a.txt"],
                &[],
                &[],
            ),
            files(
                "a header with a leading blank inside an update hunk",
                "*** Begin Patch\n*** Update File: README.md\n@@\n hello\n *** Update File: .env\n+x\n*** End Patch",
                &["README.md", ".env"],
                &[],
                &[],
            ),
            files(
                "an indented delete after add lines",
                "*** Begin Patch\n*** Add File: a.txt\n+hi\n   *** Delete File: .ssh/id_rsa\n*** End Patch",
                &["a.txt", ".ssh/id_rsa"],
                &[".ssh/id_rsa"],
                &[],
            ),
            files(
                "a crlf header with a leading tab",
                "*** Begin Patch\r\n*** Update File: a\r\n@@\r\n-x\r\n+y\r\n\t*** Add File: .git/hooks/pre-commit\r\n+evil\r\n*** End Patch\r\n",
                &["a", ".git/hooks/pre-commit"],
                &[],
                &[],
            ),
            files(
                "an add line is content",
                "*** Begin Patch\n*** Add File: notes.md\n+*** Delete File: keep.txt\n*** End Patch",
                &["notes.md"],
                &[],
                &[],
            ),
            files(
                "a move path read trimmed and untrimmed",
                "*** Begin Patch\n*** Update File: a\n*** Move to: b  \n@@\n-x\n+y\n*** End Patch",
                &["a", "b", "b  "],
                &["a"],
                &[],
            ),
            files(
                "headers after an inner end marker",
                "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n*** Delete File: b\n*** End Patch",
                &["a", "b"],
                &["b"],
                &[],
            ),
            files(
                "dot-dot and absolute paths kept as written",
                "*** Begin Patch\n*** Update File: ../outside/x\n@@\n-a\n+b\n*** Add File: /etc/cron.d/job\n+x\n*** End Patch",
                &["../outside/x", "/etc/cron.d/job"],
                &[],
                &[],
            ),
            files(
                "environment id preamble",
                "*** Begin Patch\n*** Environment ID: remote\n*** Add File: x\n+1\n*** End Patch",
                &["x"],
                &[],
                &[],
            ),
            files(
                "end of file marker",
                "*** Begin Patch\n*** Update File: t.txt\n@@\n+quux\n*** End of File\n*** End Patch",
                &["t.txt"],
                &[],
                &[],
            ),
            files(
                "an empty patch writes nothing",
                "*** Begin Patch\n*** End Patch\n",
                &[],
                &[],
                &[],
            ),
            fails(
                "a marker in another case",
                "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n *** update file: .env\n*** End Patch",
                "unrecognised `apply_patch` file marker",
            ),
            fails(
                "a marker without its space",
                "*** Begin Patch\n*** Add File:.env\n+x\n*** End Patch",
                "unrecognised `apply_patch` file marker",
            ),
            fails(
                "only a begin marker",
                "*** Begin Patch\n*** Add File: a\n+x\n",
                "no patch found",
            ),
        ]);
    }

    #[test]
    fn codex_heredocs() {
        let inner = "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** End Patch";
        check(vec![
            files(
                "lenient <<'EOF'",
                &format!("<<'EOF'\n{inner}\nEOF\n"),
                &["src/main.rs"],
                &[],
                &[],
            ),
            files(
                "lenient <<EOF",
                &format!("<<EOF\n{inner}\nEOF"),
                &["src/main.rs"],
                &[],
                &[],
            ),
            files(
                "lenient <<\"EOF\"",
                &format!("<<\"EOF\"\n{inner}\nEOF\n"),
                &["src/main.rs"],
                &[],
                &[],
            ),
            fails(
                "lenient mismatched quotes",
                &format!("<<\"EOF'\n{inner}\nEOF\n"),
                "no patch found",
            ),
            files(
                "apply_patch <<'EOF'",
                &format!("apply_patch <<'EOF'\n{inner}\nEOF\n"),
                &["src/main.rs"],
                &[],
                &[],
            ),
            files(
                "applypatch <<\"PATCH\"",
                &format!("applypatch <<\"PATCH\"\n{inner}\nPATCH"),
                &["src/main.rs"],
                &[],
                &[],
            ),
            files(
                "unquoted delimiter without expansions",
                &format!("apply_patch <<EOF\n{inner}\nEOF\n"),
                &["src/main.rs"],
                &[],
                &[],
            ),
            files(
                "cd before apply_patch",
                "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.txt\n+1\n*** Delete File: /tmp/abs\n*** End Patch\nEOF\n",
                &["sub/x.txt", "/tmp/abs"],
                &["/tmp/abs"],
                &[],
            ),
            fails(
                "unquoted delimiter with an expansion",
                "apply_patch <<EOF\n*** Begin Patch\n*** Add File: $HOME/.bashrc\n+x\n*** End Patch\nEOF\n",
                "is unquoted",
            ),
            fails(
                "commands after the heredoc",
                &format!("apply_patch <<'EOF'\n{inner}\nEOF\nrm -rf ~\n"),
                "commands follow",
            ),
            fails(
                "commands on the first line",
                &format!("apply_patch <<'EOF' && rm -rf ~\n{inner}\nEOF\n"),
                "unsupported `apply_patch` invocation",
            ),
            fails(
                "an unclosed heredoc",
                &format!("apply_patch <<'EOF'\n{inner}\n"),
                "never closed",
            ),
            fails(
                "a here-string",
                &format!("apply_patch <<< '{inner}'"),
                "unsupported `apply_patch` invocation",
            ),
        ]);
    }

    const GIT_MODIFY: &str = "diff --git a/src/lib.rs b/src/lib.rs
index 83db48f..bf269f4 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@
 fn a() {}
-fn b() {}
+fn c() {}
 fn d() {}
";

    #[test]
    fn git_diffs() {
        check(vec![
            files("modify", GIT_MODIFY, &["src/lib.rs"], &[], &[]),
            files(
                "modify with crlf",
                &crlf(GIT_MODIFY),
                &["src/lib.rs"],
                &[],
                &[],
            ),
            files(
                "new file",
                "diff --git a/docs/new.md b/docs/new.md\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# title\n+text\n",
                &["docs/new.md"],
                &[],
                &[],
            ),
            files(
                "deleted file",
                "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 3b18e51..0000000\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hello\n",
                &["old.txt"],
                &["old.txt"],
                &[],
            ),
            files(
                "rename with changes",
                "diff --git a/src/old.rs b/src/new.rs\nsimilarity index 90%\nrename from src/old.rs\nrename to src/new.rs\nindex 1111111..2222222 100644\n--- a/src/old.rs\n+++ b/src/new.rs\n@@ -1 +1 @@\n-a\n+b\n",
                &["src/old.rs", "src/new.rs"],
                &["src/old.rs"],
                &[],
            ),
            files(
                "pure rename",
                "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n",
                &["a.txt", "b.txt"],
                &["a.txt"],
                &[],
            ),
            files(
                "copy",
                "diff --git a/src/a.rs b/src/b.rs\nsimilarity index 95%\ncopy from src/a.rs\ncopy to src/b.rs\nindex 1111111..2222222 100644\n--- a/src/a.rs\n+++ b/src/b.rs\n@@ -1 +1 @@\n-a\n+b\n",
                &["src/b.rs"],
                &[],
                &["src/a.rs"],
            ),
            files(
                "mode change only",
                "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
                &["run.sh"],
                &[],
                &[],
            ),
            files(
                "binary patch",
                "diff --git a/img.png b/img.png\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 5\nMcmZ?wbhEHb0000\n\nliteral 0\nHcmV?d00001\n\n",
                &["img.png"],
                &[],
                &[],
            ),
            files(
                "binary files differ",
                "diff --git a/x.bin b/x.bin\nindex 1111111..2222222 100644\nBinary files a/x.bin and b/x.bin differ\n",
                &["x.bin"],
                &[],
                &[],
            ),
            files(
                "quoted paths with octal escapes",
                "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\nindex 1111111..2222222 100644\n--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-a\n+b\n",
                &["café.txt"],
                &[],
                &[],
            ),
            files(
                "quoted paths with other escapes",
                "--- \"a/we\\\"ird\\\\name\\ttab\"\n+++ \"b/we\\\"ird\\\\name\\ttab\"\n@@ -1 +1 @@\n-a\n+b\n",
                &["we\"ird\\name\ttab"],
                &[],
                &[],
            ),
            files(
                "a name with spaces",
                "diff --git a/my file.txt b/my file.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/my file.txt\t\n@@ -0,0 +1 @@\n+x\n",
                &["my file.txt"],
                &[],
                &[],
            ),
            files(
                "two files, the second deleted",
                "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/b b/b\ndeleted file mode 100644\n--- a/b\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n",
                &["a", "b"],
                &["b"],
                &[],
            ),
            files(
                "a format-patch mail",
                "From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] fix\n\n---\n src/x.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\ndiff --git a/src/x.rs b/src/x.rs\nindex 1..2 100644\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n",
                &["src/x.rs"],
                &[],
                &[],
            ),
            files(
                "no newline at end of file",
                "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
                &["x"],
                &[],
                &[],
            ),
            files(
                "dot-dot kept as written",
                "diff --git a/../../etc/x b/../../etc/x\n--- a/../../etc/x\n+++ b/../../etc/x\n@@ -1 +1 @@\n-a\n+b\n",
                &["../../etc/x"],
                &[],
                &[],
            ),
            fails(
                "a git header without names",
                "diff --git a/x b/y\nold mode 100644\nnew mode 100755\n",
                "lacks a file name",
            ),
        ]);
    }

    #[test]
    fn traditional_diffs() {
        check(vec![
            files(
                "tab timestamps",
                "--- a/src/main.c\t2024-01-01 10:00:00.000000000 +0000\n+++ b/src/main.c\t2024-01-02 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n",
                &["src/main.c"],
                &[],
                &[],
            ),
            files(
                "names without a/ and b/",
                "--- project.orig/src/x.c\t2024-01-01 10:00:00 +0000\n+++ project/src/x.c\t2024-01-01 10:00:00 +0000\n@@ -1 +1 @@\n-a\n+b\n",
                &["project.orig/src/x.c", "src/x.c", "project/src/x.c"],
                &[],
                &[],
            ),
            files(
                "space before the timestamp: git keeps the spaces in the name, GNU patch stops at the first",
                "--- a/my file.c 2024-01-01 10:00:00 +0000\n+++ b/my file.c 2024-01-01 10:00:00 +0000\n@@ -1 +1 @@\n-a\n+b\n",
                &["my file.c", "my"],
                &[],
                &[],
            ),
            files(
                "svn Index lines",
                "Index: src/foo.c\n===================================================================\n--- src/foo.c\t(revision 1)\n+++ src/foo.c\t(working copy)\n@@ -1 +1 @@\n-a\n+b\n",
                &["src/foo.c", "foo.c"],
                &[],
                &[],
            ),
            files(
                "names without a slash",
                "--- README\n+++ README\n@@ -1 +1 @@\n-a\n+b\n",
                &["README"],
                &[],
                &[],
            ),
            files(
                "absolute paths kept",
                "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
                &["/etc/passwd", "etc/passwd"],
                &[],
                &[],
            ),
            files(
                "dev null deletes",
                "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
                &["gone.txt"],
                &["gone.txt"],
                &[],
            ),
            files(
                "epoch timestamp deletes",
                "--- a/gone.txt\t2024-01-01 00:00:00 +0000\n+++ b/gone.txt\t1970-01-01 00:00:00 +0000\n@@ -1 +0,0 @@\n-a\n",
                &["gone.txt"],
                &["gone.txt"],
                &[],
            ),
        ]);
    }

    #[test]
    fn smuggling() {
        check(vec![
            files(
                "a header inside a hunk body is content",
                "--- a/README\n+++ b/README\n@@ -1,3 +1,3 @@\n line\n--- a/x\n+++ b/.env\n end\n",
                &["README"],
                &[],
                &[],
            ),
            files(
                "a header after the hunk counts is a header",
                "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n--- a/x\n+++ b/.env\n@@ -1 +1 @@\n-c\n+d\n",
                &["README", "x", ".env"],
                &[],
                &[],
            ),
            files(
                "a unified diff inside a codex patch, for git apply",
                "*** Begin Patch\n*** Update File: README.md\n@@\n--- a/notes.txt\n+++ b/.env\n@@ -1 +1 @@\n-a\n+b\n*** End Patch\n",
                &["README.md", "notes.txt", ".env"],
                &[],
                &[],
            ),
            files(
                "an indented diff, for GNU patch",
                "  --- a/README\n  +++ b/.env\n  @@ -1 +1 @@\n  -a\n  +b\n",
                &["README", ".env"],
                &[],
                &[],
            ),
            files(
                "an Index line and a normal diff, for GNU patch",
                "Index: conf/.env\n1c1\n< a\n---\n> b\n",
                &["conf/.env", ".env"],
                &[],
                &[],
            ),
            files(
                "a git header in a crlf patch",
                &crlf(
                    "diff --git a/ok b/ok\n--- a/ok\n+++ b/ok\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-a\n+b\n",
                ),
                &["ok", ".env"],
                &[],
                &[],
            ),
            fails(
                "a hunk that runs past the end",
                "--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n+b\n",
                "runs past the end",
            ),
            fails(
                "a hunk without a header",
                "@@ -1 +1 @@\n-a\n+b\n",
                "has no file header",
            ),
            fails(
                "names split by garbage, which git rejects",
                "--- a/README\nnoise\n+++ b/.env\n@@ -1 +1 @@\n-a\n+b\n",
                "has no file header",
            ),
            fails(
                "a comment line in a hunk",
                "--- a/x\n+++ b/x\n@@ -1 +1 @@\n# c\n-a\n+b\n",
                "is not a hunk line",
            ),
            fails(
                "more lines than counted",
                "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n+c\n",
                "more lines than its header counts",
            ),
            fails(
                "a hunk that changes nothing",
                "--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n",
                "changes nothing",
            ),
            fails(
                "a quoted path that is not utf-8",
                "--- \"a/\\377\"\n+++ \"b/\\377\"\n@@ -1 +1 @@\n-a\n+b\n",
                "not valid utf-8",
            ),
            fails(
                "a quoted path with a nul",
                "--- \"a/x\\000y\"\n+++ \"b/x\"\n@@ -1 +1 @@\n-a\n+b\n",
                "nul byte",
            ),
        ]);
    }

    #[test]
    fn not_patches() {
        check(vec![
            fails("empty", "", "empty"),
            fails("blank", " \n\t\r\n", "empty"),
            fails("prose", "please fix the bug in main.rs\n", "no patch found"),
            fails(
                "names without a hunk",
                "--- a/x\n+++ b/x\n",
                "no patch found",
            ),
        ]);
    }

    #[test]
    fn deletes_are_writes_and_nothing_is_empty() {
        for text in [CODEX_ALL, GIT_MODIFY] {
            let Ok(f) = patch_files(text) else { continue };
            assert!(f.deletes.iter().all(|d| f.writes.contains(d)));
            assert!(f.writes.iter().chain(&f.reads).all(|p| !p.is_empty()));
        }
    }

    #[test]
    fn git_timestamps() {
        for (v, n) in [
            ("a/x 2010-07-05 19:41:17", 20),
            ("a/x 2010-07-05 19:41:17.620000023 -0500", 36),
            ("a/x\t2010-07-05 19:41:17 +08:00", 27),
            ("a/x   72-02-05 07:01:32", 20),
            ("a/x", 0),
            ("a/x 19:41:17", 0),
            ("", 0),
        ] {
            assert_eq!(git::timestamp_len_for_test(v), n, "{v}");
        }
    }

    fn line() -> impl Strategy<Value = String> {
        proptest::strategy::Union::new(vec![
            Just("*** Begin Patch".to_string()).boxed(),
            Just("*** End Patch".to_string()).boxed(),
            "( |\t)?\\*\\*\\* (Add|Delete|Update) File: [a-z./ ]{0,8}".boxed(),
            "\\*\\*\\* Move to: .{0,6}".boxed(),
            "diff --git (a/|\")?[a-z ]{0,6}( b/[a-z ]{0,4})?".boxed(),
            "(---|\\+\\+\\+|\\*\\*\\*|Index:)[ \t](/dev/null|a/|b/|\")?[a-z/\\\\0-7 ]{0,8}(\t.{0,6})?".boxed(),
            "@@ -[0-9]{1,2}(,[0-9])? \\+[0-9](,[0-9])? @@.{0,4}".boxed(),
            "[ +\\-\\\\#=\t]?.{0,10}".boxed(),
            "(rename|copy) (from|to) .{0,6}".boxed(),
            "(deleted|new) file mode 100644".boxed(),
            "index [0-9a-f]{1,3}\\.\\.[0-9a-f]{1,3}".boxed(),
            Just("GIT binary patch".to_string()).boxed(),
            "[0-9](,[0-9])?[acdi]([0-9])?".boxed(),
            Just("********".to_string()).boxed(),
            "(<<'EOF'|EOF|apply_patch <<'EOF'|cd x && apply_patch <<EOF)".boxed(),
        ])
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(s in "\\PC*") {
            let _ = patch_files(&s);
        }

        #[test]
        fn never_panics_on_patch_like_text(lines in proptest::collection::vec(line(), 0..40), sep in "\n|\r\n") {
            let text = lines.join(&sep);
            if let Ok(f) = patch_files(&text) {
                prop_assert!(f.deletes.iter().all(|d| f.writes.contains(d)));
                prop_assert!(f.writes.iter().chain(&f.reads).all(|p| !p.is_empty()));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn one_megabyte_of_repeated_lines_is_quick(lines in proptest::collection::vec(line(), 1..6)) {
            let unit = format!("{}\n", lines.join("\n"));
            let text = unit.repeat((1 << 20) / unit.len() + 1);
            let start = Instant::now();
            let _ = patch_files(&text);
            prop_assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
        }
    }

    #[test]
    fn adversarial_megabytes_are_quick() {
        let mb = 1 << 20;
        let fill = |unit: &str| unit.repeat(mb / unit.len() + 1);
        let inputs = [
            "a".repeat(mb),
            "\t".repeat(mb),
            "X".repeat(mb),
            "\"".repeat(mb),
            format!("diff --git a/{}", " a/".repeat(mb / 3)),
            format!("diff --git a/{}b/x\n", "x ".repeat(mb / 2)),
            format!("diff --git \"a/{}", "x".repeat(mb)),
            format!(
                "diff --git a/{} b/{}\n",
                "y/".repeat(mb / 4),
                "y/".repeat(mb / 4)
            ),
            fill("diff --git a/x b/x\n"),
            fill("diff --git a/x b/x\nindex 1..2\n"),
            fill("@@ -1,2 +1,2 @@x\n"),
            fill("--- a/x\n+++ b/x\n"),
            format!(
                "--- a/x\n+++ b/x\n@@ -1,99999999999 +1,99999999999 @@\n{}",
                fill(" c\n")
            ),
            format!(
                "*** Begin Patch\n{}*** End Patch\n",
                fill("*** Add File: a/b\n+x\n")
            ),
            format!(
                "*** Begin Patch\n*** Update File: a\n{}*** End Patch\n",
                fill(" *** Update File: x\n")
            ),
            format!(
                "apply_patch <<'EOF'\n*** Begin Patch\n{}*** End Patch\nEOF\n",
                fill("*** Add File: a\n+x\n")
            ),
            format!("Index: a/b\n{}", fill("Index: a/c\nd\n")),
            format!("--- a/x\n{}", fill("1d\n")),
            format!("--- \"{}\"", "\\303\\251".repeat(mb / 8)),
            format!("--- a/x{}", " 2020-01-01".repeat(mb / 11)),
            format!("--- a/x {}", "1".repeat(mb)),
            fill("- - - - --- a/x\n"),
            format!("--- a/x\n+++ b/x\n{}", fill("@@ -1 +1 @@\n-a\n+b\n")),
        ];
        for input in &inputs {
            let start = Instant::now();
            let _ = patch_files(input);
            let took = start.elapsed();
            assert!(
                took < Duration::from_secs(5),
                "took {took:?} on `{}`",
                clip(input)
            );
        }
    }
}
