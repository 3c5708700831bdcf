//! The hash-chained decision log (`settings.log.chain: true`).
//!
//! Each line carries `seq`, one more than the line before it (1 for the first
//! chained line), and `prev`, the SHA-256 (lowercase hex) of the bytes of the
//! line before it without its newline; the first line of a file chains to the
//! empty string ([`GENESIS`]). Editing a line changes its hash, so the next
//! line's `prev` no longer matches; removing or reordering lines breaks both
//! `prev` and the run of `seq`; a line appended by something that does not
//! know the chain has no `prev`. [`verify`] reports the first of these.
//!
//! What a chain cannot show on its own: lines cut from the end of the file
//! (nothing comes after them to notice), or a whole file rewritten by someone
//! who recomputes every hash. Sending the lines off the machine as they are
//! written (syslog, OTLP) anchors them.
//!
//! Several hook processes append to one file at once, so the last line is read
//! and the new one written under an exclusive lock on the file (`flock`), and
//! each line is still one `write` on a file opened for appending.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Record, cannot_write, open_append, write_whole};

/// The `prev` of the first line of a file: the SHA-256 of the empty string.
pub const GENESIS: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The SHA-256 of `bytes` in lowercase hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Appends `record` to the chained log at `path`: under an exclusive lock,
/// reads the last line, sets `seq` and `prev` from it, and writes the line
/// with one `write`. With `only_if_chained`, a file whose last line is not
/// chained (or an empty one) gets the record plain.
///
/// # Errors
/// The file cannot be opened, locked, read or written; the message names it.
pub fn append(path: &Path, record: &Record, only_if_chained: bool) -> Result<(), String> {
    let mut file = open_append(path, true)?;
    // Released when `file` is closed, at the end of this function.
    file.lock().map_err(|e| cannot_write(path, &e))?;
    let (last, ends_with_newline) = last_line(&mut file).map_err(|e| cannot_write(path, &e))?;
    let last_json = last
        .as_deref()
        .and_then(|l| serde_json::from_slice::<serde_json::Value>(l).ok());
    let mut record = record.clone();
    if only_if_chained && last_json.as_ref().and_then(|v| v.get("prev")).is_none() {
        record.seq = None;
        record.prev = None;
    } else {
        record.prev = Some(match &last {
            Some(l) => sha256_hex(l),
            None => GENESIS.to_string(),
        });
        let seq = last_json
            .as_ref()
            .and_then(|v| v.get("seq").and_then(serde_json::Value::as_u64));
        record.seq = Some(seq.map_or(1, |s| s.saturating_add(1)));
    }
    let mut line = record.line();
    if !ends_with_newline {
        // A torn or foreign last line: end it, so this one stands alone.
        line.insert(0, '\n');
    }
    write_whole(&mut file, path, &line)
}

/// The last line of the file (without its newline), and whether the file
/// ends with a newline (true for an empty file).
fn last_line(file: &mut std::fs::File) -> std::io::Result<(Option<Vec<u8>>, bool)> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((None, true));
    }
    let mut window: u64 = 4096;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
        file.by_ref().take(len - start).read_to_end(&mut buf)?;
        let ends_with_newline = buf.last() == Some(&b'\n');
        let body = if ends_with_newline {
            &buf[..buf.len() - 1]
        } else {
            &buf[..]
        };
        match memchr::memrchr(b'\n', body) {
            Some(i) => return Ok((Some(body[i + 1..].to_vec()), ends_with_newline)),
            None if start == 0 => return Ok((Some(body.to_vec()), ends_with_newline)),
            None => window = window.saturating_mul(4),
        }
    }
}

/// What is wrong at a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Broken {
    /// Lines are missing before this one.
    Removed,
    /// Lines are out of order.
    Reordered,
    /// A line's bytes are not the ones the next line chained to.
    Edited,
    /// A line without `prev` after the chain began.
    Unchained,
    /// A line that is not a JSON object.
    NotJson,
}

impl Broken {
    /// The kebab-free name used in the output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Broken::Removed => "removed",
            Broken::Reordered => "reordered",
            Broken::Edited => "edited",
            Broken::Unchained => "unchained",
            Broken::NotJson => "not-json",
        }
    }
}

/// The first problem [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The line (from 1) the problem is reported at.
    pub line: usize,
    /// What kind of problem.
    pub kind: Broken,
    /// What is wrong, for a person.
    pub message: String,
}

/// The outcome of [`verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Lines in the file.
    pub lines: usize,
    /// Lines before the first chained one (written before `log.chain` was
    /// on); they are not protected.
    pub before_chain: usize,
    /// Chained lines checked before the first problem (all of them when intact).
    pub chained: usize,
    /// The first problem, if any.
    pub problem: Option<Problem>,
}

impl Report {
    /// Whether the chain is whole.
    #[must_use]
    pub fn intact(&self) -> bool {
        self.problem.is_none()
    }
}

/// One line as the verifier sees it.
struct Line<'a> {
    bytes: &'a [u8],
    seq: Option<u64>,
    prev: Option<String>,
    json: bool,
}

fn parse(bytes: &[u8]) -> Line<'_> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(o)) => Line {
            bytes,
            seq: o.get("seq").and_then(serde_json::Value::as_u64),
            prev: o
                .get("prev")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            json: true,
        },
        _ => Line {
            bytes,
            seq: None,
            prev: None,
            json: false,
        },
    }
}

/// Checks a chained log's text and reports the first removed, reordered,
/// edited or unchained line. A file in which no line is chained is broken
/// (there is nothing to check), unless it is empty.
#[must_use]
pub fn verify(text: &[u8]) -> Report {
    let mut raw: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
    if raw.last().is_some_and(|l| l.is_empty()) {
        raw.pop();
    }
    let lines: Vec<Line<'_>> = raw.iter().map(|l| parse(l)).collect();
    let mut report = Report {
        lines: lines.len(),
        before_chain: 0,
        chained: 0,
        problem: None,
    };
    let problem = |line: usize, kind: Broken, message: String| {
        Some(Problem {
            line,
            kind,
            message,
        })
    };
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        if !l.json {
            report.problem = problem(
                n,
                Broken::NotJson,
                format!("line {n} is not a JSON object: it was edited or torn"),
            );
            return report;
        }
        let Some(prev) = &l.prev else {
            if report.chained == 0 {
                report.before_chain += 1;
                continue;
            }
            report.problem = problem(
                n,
                Broken::Unchained,
                format!("line {n} has no `prev`: it was appended without the chain"),
            );
            return report;
        };
        let before = i.checked_sub(1).map(|j| &lines[j]);
        let expected_prev = before.map_or_else(|| GENESIS.to_string(), |b| sha256_hex(b.bytes));
        let expected_seq = before
            .and_then(|b| b.seq)
            .map_or(1, |s| s.saturating_add(1));
        let Some(seq) = l.seq else {
            report.problem = problem(
                n,
                Broken::Edited,
                format!("line {n} has `prev` but no `seq`: it was edited"),
            );
            return report;
        };
        if *prev == expected_prev && seq == expected_seq {
            report.chained += 1;
            continue;
        }
        report.problem = if seq == expected_seq {
            if n == 1 {
                problem(
                    n,
                    Broken::Edited,
                    "line 1 is not the start of the chain: its `prev` was edited".into(),
                )
            } else {
                // Line n-1 is the edited one: it is not verified either.
                report.chained = report.chained.saturating_sub(1);
                problem(
                    n - 1,
                    Broken::Edited,
                    format!(
                        "line {} was edited: its hash is not the `prev` that line {n} recorded",
                        n - 1
                    ),
                )
            }
        } else if *prev == expected_prev {
            problem(
                n,
                Broken::Edited,
                format!("line {n} was edited: its `seq` is {seq}, expected {expected_seq}"),
            )
        } else if let Some(j) = lines.iter().position(|o| o.seq == Some(expected_seq)) {
            problem(
                n,
                Broken::Reordered,
                format!(
                    "line {n} is out of order: it is seq {seq}, and seq {expected_seq} is at line {}",
                    j + 1
                ),
            )
        } else if seq > expected_seq {
            let missing = seq - expected_seq;
            problem(
                n,
                Broken::Removed,
                format!(
                    "{missing} line{} removed before line {n} (seq {expected_seq}{} missing)",
                    if missing == 1 { " was" } else { "s were" },
                    if missing == 1 {
                        String::new()
                    } else {
                        format!("..{}", seq - 1)
                    }
                ),
            )
        } else {
            problem(
                n,
                Broken::Reordered,
                format!(
                    "line {n} is out of order or repeated: it is seq {seq} after seq {}",
                    expected_seq - 1
                ),
            )
        };
        return report;
    }
    if report.chained == 0 && report.lines > 0 {
        report.problem = problem(
            report.lines,
            Broken::Unchained,
            "no line is chained: was `log.chain` on when it was written?".into(),
        );
    }
    report
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn log(n: u64) -> (std::path::PathBuf, Vec<String>) {
        let dir = std::env::temp_dir().join(format!(
            "zp-chain-{}-{n}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("d.jsonl");
        for i in 0..n {
            let r = Record {
                tool: format!("t{i}"),
                ..Record::default()
            };
            append(&path, &r, false).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text.lines().map(str::to_string).collect();
        (path, lines)
    }

    fn check(lines: &[String]) -> Report {
        verify(format!("{}\n", lines.join("\n")).as_bytes())
    }

    #[test]
    fn genesis_is_the_hash_of_nothing() {
        assert_eq!(sha256_hex(b""), GENESIS);
    }

    #[test]
    fn an_appended_chain_verifies_and_links_each_line_to_the_one_before() {
        let (_, lines) = log(4);
        let first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(first["prev"], GENESIS);
        assert_eq!(first["seq"], 1);
        let second: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(second["prev"], sha256_hex(lines[0].as_bytes()));
        assert_eq!(second["seq"], 2);
        let r = check(&lines);
        assert_eq!(
            r,
            Report {
                lines: 4,
                before_chain: 0,
                chained: 4,
                problem: None
            }
        );
    }

    #[test]
    fn each_kind_of_tampering_is_found_at_its_line() {
        let (_, lines) = log(5);
        let mut removed = lines.clone();
        removed.remove(2);
        let p = check(&removed).problem.unwrap();
        assert_eq!((p.line, p.kind), (3, Broken::Removed), "{}", p.message);
        assert_eq!(
            p.message,
            "1 line was removed before line 3 (seq 3 missing)"
        );

        let mut first_removed = lines.clone();
        first_removed.remove(0);
        let p = check(&first_removed).problem.unwrap();
        assert_eq!((p.line, p.kind), (1, Broken::Removed), "{}", p.message);

        let mut swapped = lines.clone();
        swapped.swap(1, 2);
        let p = check(&swapped).problem.unwrap();
        assert_eq!((p.line, p.kind), (2, Broken::Reordered), "{}", p.message);
        assert_eq!(
            p.message,
            "line 2 is out of order: it is seq 3, and seq 2 is at line 3"
        );

        let mut edited = lines.clone();
        edited[1] = edited[1].replace("\"t1\"", "\"t9\"");
        let p = check(&edited).problem.unwrap();
        assert_eq!((p.line, p.kind), (2, Broken::Edited), "{}", p.message);

        let mut last_edited = lines.clone();
        last_edited[4] = last_edited[4].replace("\"seq\":5", "\"seq\":6");
        let p = check(&last_edited).problem.unwrap();
        assert_eq!((p.line, p.kind), (5, Broken::Edited), "{}", p.message);

        let mut unchained = lines.clone();
        unchained.push(r#"{"tool":"x"}"#.into());
        let p = check(&unchained).problem.unwrap();
        assert_eq!((p.line, p.kind), (6, Broken::Unchained), "{}", p.message);

        let mut garbage = lines;
        garbage[3] = "{\"tool\":".into();
        let p = check(&garbage).problem.unwrap();
        assert_eq!((p.line, p.kind), (4, Broken::NotJson), "{}", p.message);
    }

    #[test]
    fn a_chain_started_on_an_old_log_protects_what_follows() {
        let dir = std::env::temp_dir().join(format!("zp-chain-old-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("d.jsonl");
        crate::log::append(&path, "{\"tool\":\"old\"}\n").unwrap();
        append(&path, &Record::default(), false).unwrap();
        append(&path, &Record::default(), false).unwrap();
        let text = std::fs::read(&path).unwrap();
        let r = verify(&text);
        assert_eq!((r.before_chain, r.chained, r.intact()), (1, 2, true));
        // Editing the old line breaks the first chained line's link to it.
        let edited = String::from_utf8(text).unwrap().replace("old", "new");
        assert_eq!(verify(edited.as_bytes()).problem.unwrap().line, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn follow_chains_only_a_chained_file() {
        let dir = std::env::temp_dir().join(format!("zp-chain-follow-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let plain = dir.join("plain.jsonl");
        append(&plain, &Record::default(), true).unwrap();
        assert!(!std::fs::read_to_string(&plain).unwrap().contains("prev"));
        let chained = dir.join("chained.jsonl");
        append(&chained, &Record::default(), false).unwrap();
        append(&chained, &Record::default(), true).unwrap();
        let r = verify(&std::fs::read(&chained).unwrap());
        assert_eq!((r.chained, r.intact()), (2, true));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_log_with_no_chained_line_is_not_intact_and_an_empty_one_is() {
        assert!(!verify(b"{\"a\":1}\n").intact());
        assert!(verify(b"").intact());
    }

    #[test]
    fn a_torn_last_line_is_ended_before_the_next_line() {
        let dir = std::env::temp_dir().join(format!("zp-chain-torn-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("d.jsonl");
        append(&path, &Record::default(), false).unwrap();
        crate::log::append(&path, "{\"torn\":").unwrap();
        append(&path, &Record::default(), false).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        let p = verify(text.as_bytes()).problem.unwrap();
        assert_eq!((p.line, p.kind), (2, Broken::NotJson));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_lines_are_found_past_the_first_window() {
        let dir = std::env::temp_dir().join(format!("zp-chain-long-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("d.jsonl");
        let big = Record {
            reason: "x".repeat(20_000),
            ..Record::default()
        };
        append(&path, &big, false).unwrap();
        append(&path, &big, false).unwrap();
        append(&path, &Record::default(), false).unwrap();
        assert!(verify(&std::fs::read(&path).unwrap()).intact());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
