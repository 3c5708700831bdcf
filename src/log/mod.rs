//! The decision log: one JSON line per decision, appended whole.
//!
//! Agents run several hooks at once, so lines from concurrent processes must
//! never interleave: each line is written with exactly one `write` call on a
//! file opened with `O_APPEND`, which the kernel applies atomically for a
//! regular file. A line that cannot be written is reported to the caller (the
//! hook prints it on stderr); the decision stands.
//!
//! With `settings.log.chain` each line also carries `seq` and `prev`, the
//! SHA-256 of the line before it ([`chain`]), written under an exclusive lock.

pub mod chain;
pub mod diff;
pub mod otlp;
pub mod ship;
pub mod spool;
pub mod syslog;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::diagnostic::SourceFile;

/// One decision, as logged.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Record {
    /// When the decision was made, RFC 3339 in UTC with milliseconds.
    pub time: String,
    /// The front door: `hook:claude-code`, `serve`, ...
    pub front: String,
    /// The agent's session id, or `""`.
    pub session: String,
    /// The tool as decided (after the front door's name mapping), or `""` when unknown.
    pub tool: String,
    /// The engine's decision (`allow`, `prompt`, `deny`, `reject`), or `error`
    /// when the hook failed closed before deciding.
    pub decision: String,
    /// What the agent was told: `allow`, `ask`, `deny`, or `defer` (its own
    /// permission check decides).
    pub answer: String,
    /// Why, scrubbed.
    pub reason: String,
    /// The ids of the rules that matched.
    pub matched: Vec<String>,
    /// The rules that matched, each with the file and line it is written at.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleAt>,
    /// A hash of the loaded files' names and texts, see [`policy_hash`].
    pub policy: String,
    /// The version of the signed bundle the policy came from, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// Something the operator should know about this call's policy, such as
    /// a bundle that was refused while the last good one stays in force.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How long the hook took, from start to answer.
    pub duration_us: u64,
    /// The call's arguments, scrubbed; absent with `log.args: omit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
    /// With `settings.shadow`: what the shadow policy would have decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowRecord>,
    /// What the sandbox refused the call as it ran (`run --findings`), each
    /// `what target (ERROR)`; absent when none was looked for or found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
    /// With `log.chain`: this line's place in the chain, one more than the
    /// line before it (1 for the first chained line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// With `log.chain`: the SHA-256 (hex) of the line before this one,
    /// without its newline; of the empty string for the first line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
}

/// What a shadow policy (`settings.shadow`) would have decided: logged
/// beside the decision in force, never obeyed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ShadowRecord {
    /// `allow`, `prompt`, `deny` or `reject`; `error` when the shadow
    /// policy could not decide (`error` says why).
    pub decision: String,
    /// Why, scrubbed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The ids of the shadow's rules that matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched: Vec<String>,
    /// Those rules, each with the file and line it is written at.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleAt>,
    /// The hash of the shadow policy's files.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub policy: String,
    /// The version of the shadow bundle, if it came from one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// A refused shadow bundle whose last good one decided instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why the shadow policy could not decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A matched rule and where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleAt {
    /// The rule id.
    pub id: String,
    /// The file it is written in.
    pub file: String,
    /// The line of its id.
    pub line: usize,
}

impl RuleAt {
    /// The matched rules of an evaluation, in its order, each once.
    #[must_use]
    pub fn of(matched: &[crate::dispatch::MatchedRule]) -> Vec<RuleAt> {
        let mut out: Vec<RuleAt> = Vec::with_capacity(matched.len());
        for m in matched {
            if !out
                .iter()
                .any(|r| r.id == m.id && r.file == m.file && r.line == m.line)
            {
                out.push(RuleAt {
                    id: m.id.clone(),
                    file: m.file.clone(),
                    line: m.line,
                });
            }
        }
        out
    }
}

impl Record {
    /// The record as one line of JSON with its newline.
    #[must_use]
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }
}

/// The hash of a set of loaded files: SHA-256 over each file's name and the
/// SHA-256 of its text, in the order given, the name followed by a NUL byte;
/// the first 16 hex digits, after `sha256:`. Each text's digest is the one
/// the document cache was looked up by, so the texts are read once.
#[must_use]
pub fn policy_hash(files: &[SourceFile]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for f in files {
        h.update(f.name.as_bytes());
        h.update([0]);
        h.update(f.digest());
    }
    let mut out = String::from("sha256:");
    for b in &h.finalize()[..8] {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A time as RFC 3339 in UTC with milliseconds: `2026-12-01T08:42:07.120Z`.
#[must_use]
pub fn rfc3339_utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// The log file a setting names: `None` when the log is off (`""`); `~/` is
/// the home folder.
///
/// # Errors
/// The path starts with `~` and no home folder is known.
pub fn resolve_path(setting: &str, home: Option<&Path>) -> Result<Option<PathBuf>, String> {
    if setting.is_empty() {
        return Ok(None);
    }
    let Some(rest) = setting.strip_prefix('~') else {
        return Ok(Some(PathBuf::from(setting)));
    };
    let Some(home) = home else {
        return Err(format!(
            "cannot write the decision log `{setting}`: `HOME` is not set"
        ));
    };
    let rest = rest.trim_start_matches('/');
    Ok(Some(if rest.is_empty() {
        home.to_path_buf()
    } else {
        home.join(rest)
    }))
}

/// The home folder, from `$HOME`.
#[must_use]
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Appends one line, whole, with a single `write` on a file opened for
/// appending (created with its parent folders, readable by its owner only).
///
/// # Errors
/// The folder or file cannot be created or opened, or the write fails or is
/// short; the message names the file.
pub fn append(path: &Path, line: &str) -> Result<(), String> {
    let mut file = open_append(path, false)?;
    write_whole(&mut file, path, line)
}

/// Whether a record is appended hash-chained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// Plain, as [`append`] (`log.chain: false`).
    Off,
    /// Chained ([`chain::append`], `log.chain: true`).
    On,
    /// Chained if the file's last line is: for a line written when the
    /// policy (and so `log.chain`) could not be read, which must not break
    /// a chain.
    Follow,
}

impl From<Option<bool>> for Chain {
    fn from(setting: Option<bool>) -> Chain {
        match setting {
            Some(true) => Chain::On,
            Some(false) => Chain::Off,
            None => Chain::Follow,
        }
    }
}

/// Appends a record as `chain` says.
///
/// # Errors
/// As [`append`], or the lock or the last line cannot be read.
pub fn append_record(path: &Path, record: &Record, chain: Chain) -> Result<(), String> {
    match chain {
        Chain::Off => append(path, &record.line()),
        Chain::On => chain::append(path, record, false),
        Chain::Follow => chain::append(path, record, true),
    }
}

/// What a failure to write `path` says.
fn cannot_write(path: &Path, e: &dyn std::fmt::Display) -> String {
    format!("cannot write the decision log `{}`: {e}", path.display())
}

/// Opens the log for appending (and reading, for the chain), creating it
/// and its folders.
fn open_append(path: &Path, read: bool) -> Result<std::fs::File, String> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| cannot_write(path, &e))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true).read(read);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map_err(|e| cannot_write(path, &e))
}

/// Writes one line with one `write` call.
fn write_whole(file: &mut std::fs::File, path: &Path, line: &str) -> Result<(), String> {
    // INVARIANT: one `write` call per line; `write_all` could split it into
    // several writes, and another hook's line could land between them.
    let written = file
        .write(line.as_bytes())
        .map_err(|e| cannot_write(path, &e))?;
    if written != line.len() {
        return Err(cannot_write(
            path,
            &format!("only {written} of {} bytes were written", line.len()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::path::Path;
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn policy_hash_changes_with_names_and_texts() {
        let a = SourceFile::new(Path::new("a.yaml"), "version: 1\n".into());
        let b = SourceFile::new(Path::new("b.yaml"), "version: 1\n".into());
        let a2 = SourceFile::new(Path::new("a.yaml"), "version: 1\n# x\n".into());
        let h = policy_hash(std::slice::from_ref(&a));
        assert!(h.starts_with("sha256:") && h.len() == 7 + 16, "{h}");
        assert_ne!(h, policy_hash(std::slice::from_ref(&b)));
        assert_ne!(h, policy_hash(std::slice::from_ref(&a2)));
        assert_eq!(h, policy_hash(&[a]));
    }

    #[test]
    fn rfc3339_utc_formats_known_instants() {
        let at = |s: u64, ms: u64| UNIX_EPOCH + Duration::from_secs(s) + Duration::from_millis(ms);
        assert_eq!(rfc3339_utc(at(0, 0)), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_utc(at(951_782_400, 5)), "2000-02-29T00:00:00.005Z");
        assert_eq!(
            rfc3339_utc(at(1_709_251_199, 999)),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            rfc3339_utc(at(4_102_444_800, 0)),
            "2100-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn resolve_path_expands_home_and_turns_off_on_empty() {
        let home = Path::new("/home/dev");
        assert_eq!(resolve_path("", Some(home)).unwrap(), None);
        assert_eq!(
            resolve_path("~/.local/state/zp.jsonl", Some(home)).unwrap(),
            Some(home.join(".local/state/zp.jsonl"))
        );
        assert_eq!(
            resolve_path("/var/log/zp.jsonl", None).unwrap(),
            Some("/var/log/zp.jsonl".into())
        );
        assert!(resolve_path("~/x", None).unwrap_err().contains("HOME"));
    }

    #[test]
    fn append_creates_folders_and_appends_whole_lines() {
        let dir = std::env::temp_dir().join(format!("zp-log-{}", std::process::id()));
        let path = dir.join("a/b/decisions.jsonl");
        append(&path, "{\"n\":1}\n").unwrap();
        append(&path, "{\"n\":2}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn append_to_an_unwritable_place_is_an_error_naming_it() {
        let err = append(Path::new("/proc/zero-policy/decisions.jsonl"), "x\n").unwrap_err();
        assert!(err.contains("/proc/zero-policy/decisions.jsonl"), "{err}");
    }
}
