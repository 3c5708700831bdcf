//! The document cache: a file's parsed YAML, kept as JSON, for processes that
//! decide one call (`hook`, `explain`).
//!
//! Reading YAML is half of what a hook call costs. A file's [`Document`] is a
//! function of its text alone (and so is what the loader's line scans find in
//! it, [`Scans`]), so both are kept under the SHA-256 of that text
//! (and of this build's sources: another build never reads it) in
//! `$ZERO_POLICY_CACHE`, else `$XDG_CACHE_HOME/zero-policy`, else
//! `~/.cache/zero-policy`. `ZERO_POLICY_CACHE=off` turns it off. Every check
//! of the loader still runs on the document; only the YAML reading is saved.
//!
//! Whoever can write the cache decides what the hook reads, as whoever can
//! write the policy does. So the cache is trusted exactly as far as the files
//! it stands for:
//! - an entry is read or written only for a file the user running the
//!   process may write (or for the built-in default, which
//!   `~/.config/zero-policy/` would replace anyway), so a policy owned by
//!   root, mounted read-only or immutable is always read from its YAML; the
//!   shipped catalog's units are cached only when every file is;
//! - the cache folder and the entry must be owned by that user, not
//!   writable by group or others, not symbolic links, and the entry has one
//!   name only (no hard link);
//! - the folder is one of the places a registry guards
//!   ([`super::policy_places`]): a call that writes there is denied.
//!
//! The same folder keeps the shelves of compiled expressions
//! ([`crate::cel::stored`]), one file (`.bin`) per set of lists and options,
//! read and written with the same checks, and used only when every file of the
//! load may be cached.
//!
//! Anything unexpected (a missing, unreadable, foreign or malformed entry)
//! means the YAML is read, as without a cache; a cache that cannot be written
//! costs only time. Nothing here can fail a load.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::model::Document;

/// The variable that moves the cache (`off` turns it off).
pub const CACHE_VAR: &str = "ZERO_POLICY_CACHE";

/// Largest entry read, in bytes (an entry is about twice its YAML).
const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// Entries kept (a policy file's, or one program's catalog entry); past
/// this, the least recently written are removed when one is added.
const MAX_ENTRIES: usize = 1024;

/// Ties an entry to this build: its version and the fingerprint of its sources.
const BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "/",
    env!("ZP_SOURCE_FINGERPRINT"),
    "\n"
);

/// The cache folder, from the environment; `None` when turned off or when
/// neither a variable nor a home folder names one (or not on Unix).
#[must_use]
pub fn folder() -> Option<PathBuf> {
    if !cfg!(unix) {
        return None;
    }
    // The guard compares paths as text: a folder it could not name, or the
    // root (which it does not guard), is not used.
    let absolute = |v: std::ffi::OsString| {
        Some(PathBuf::from(v))
            .filter(|p| p.is_absolute() && p.to_str().is_some() && p.parent().is_some())
    };
    if let Some(v) = std::env::var_os(CACHE_VAR).filter(|v| !v.is_empty()) {
        // A relative folder would move with the agent's working folder: not used.
        return if v == "off" { None } else { absolute(v) };
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        return Some(dir.join("zero-policy"));
    }
    std::env::var_os("HOME")
        .and_then(absolute)
        .map(|home| home.join(".cache/zero-policy"))
}

/// The document cache of one process.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir` (which need not exist yet).
    #[must_use]
    pub fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    /// The cache the environment names ([`folder`]), if any.
    #[must_use]
    pub fn from_env() -> Option<Cache> {
        folder().map(Cache::new)
    }

    /// Where the entry for `text` is.
    #[must_use]
    pub fn entry(&self, text: &str) -> PathBuf {
        self.entry_of(&crate::diagnostic::text_digest(text))
    }

    /// Where the entry for the text of SHA-256 `digest` is: named by the
    /// SHA-256 of this build's fingerprint and that digest.
    #[must_use]
    pub fn entry_of(&self, digest: &[u8; 32]) -> PathBuf {
        self.named(digest, ".json")
    }

    /// The file of `key` (a SHA-256) for this build, with `suffix`.
    fn named(&self, key: &[u8; 32], suffix: &str) -> PathBuf {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut h = Sha256::new();
        h.update(BUILD.as_bytes());
        h.update(key);
        let mut name = String::with_capacity(69);
        for b in h.finalize() {
            name.push(char::from(HEX[usize::from(b >> 4)]));
            name.push(char::from(HEX[usize::from(b & 15)]));
        }
        name.push_str(suffix);
        self.dir.join(name)
    }

    /// The compiled expressions kept under `key`
    /// ([`crate::cel::stored::shelf_key`]); an empty shelf if there are none.
    #[must_use]
    pub fn shelf(&self, key: &[u8; 32]) -> crate::cel::stored::Shelf {
        let bytes = trusted_folder(&self.dir)
            .then(|| read_trusted(&self.named(key, ".bin")))
            .flatten()
            .unwrap_or_default();
        crate::cel::stored::Shelf::from_bytes(&bytes)
    }

    /// Keeps `shelf` under `key`; a failure is ignored.
    pub fn put_shelf(&self, key: &[u8; 32], shelf: &crate::cel::stored::Shelf) {
        if make_folder(&self.dir) && trusted_folder(&self.dir) {
            write_entry(&self.named(key, ".bin"), &shelf.to_bytes());
            prune(&self.dir);
        }
    }

    /// What is kept for `text`, if a trusted entry holds it.
    #[must_use]
    pub fn get(&self, text: &str) -> Option<Kept> {
        self.get_of(&crate::diagnostic::text_digest(text))
    }

    /// What is kept for the text of SHA-256 `digest`, if a trusted entry holds it.
    #[must_use]
    pub fn get_of(&self, digest: &[u8; 32]) -> Option<Kept> {
        if !trusted_folder(&self.dir) {
            return None;
        }
        let bytes = read_trusted(&self.entry_of(digest))?;
        let end = bytes.iter().position(|b| *b == b'\n')?;
        let scans = serde_json::from_slice(&bytes[..end]).ok()?;
        Some(Kept {
            scans,
            bytes,
            start: end + 1,
        })
    }

    /// Keeps what the loader found in `text`: the scans, and the document if
    /// it was read (a file the load skipped has none); a failure is ignored.
    pub fn put(&self, text: &str, scans: &Scans, doc: Option<&Document>) {
        self.put_of(&crate::diagnostic::text_digest(text), scans, doc);
    }

    /// As [`Cache::put`], for the text of SHA-256 `digest`.
    pub fn put_of(&self, digest: &[u8; 32], scans: &Scans, doc: Option<&Document>) {
        let Ok(mut json) = serde_json::to_vec(scans) else {
            return;
        };
        json.push(b'\n');
        if let Some(doc) = doc {
            let Some(parts) = split_examples(doc) else {
                return;
            };
            json.extend_from_slice(&parts);
        }
        if make_folder(&self.dir) && trusted_folder(&self.dir) {
            write_entry(&self.entry_of(digest), &json);
            prune(&self.dir);
        }
    }
}

/// What the loader's line scans found in a text before any YAML was read
/// (`holds_only_tests`, `holds_only_tools_of`): kept on the first line of an
/// entry, so a file a load skips is skipped without reading its document.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Scans {
    /// The text holds nothing but `version: 1` and `tests:`.
    pub tests_only: bool,
    /// The text holds nothing but one agent's tools: that agent.
    pub tools_of: Option<String>,
}

/// An entry read: the scans, and the document, read when asked for.
///
/// An entry is three lines of JSON: the scans, the document without its
/// rules' `examples`, and those examples. A process that decides calls never
/// builds examples, and they are two fifths of the shipped policy's
/// document, so it does not read them.
#[derive(Debug)]
pub struct Kept {
    /// The scans of the text.
    pub scans: Scans,
    bytes: Vec<u8>,
    start: usize,
}

/// The `examples` of a document's rules and relax rules, in order.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Examples {
    rules: Vec<Option<crate::model::RawExamples>>,
    relax: Vec<Option<crate::model::RawExamples>>,
}

/// A document's entry lines: the document without examples, a newline, the
/// examples; `None` if it does not serialize.
fn split_examples(doc: &Document) -> Option<Vec<u8>> {
    let mut value = serde_json::to_value(doc).ok()?;
    let mut take = |key: &str| -> Vec<serde_json::Value> {
        value
            .get_mut(key)
            .and_then(serde_json::Value::as_array_mut)
            .map(|rules| {
                rules
                    .iter_mut()
                    .map(|r| {
                        r.as_object_mut()
                            .and_then(|o| o.remove("examples"))
                            .unwrap_or(serde_json::Value::Null)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let examples = serde_json::json!({"rules": take("rules"), "relax": take("relax")});
    let mut out = serde_json::to_vec(&value).ok()?;
    out.push(b'\n');
    serde_json::to_writer(&mut out, &examples).ok()?;
    Some(out)
}

impl Kept {
    /// The document, if the entry holds one and its JSON reads as one; with
    /// its rules' examples, or without (each `None`).
    #[must_use]
    pub fn document(&self, with_examples: bool) -> Option<Document> {
        let rest = self.bytes.get(self.start..).filter(|j| !j.is_empty())?;
        let (doc, examples) = match rest.iter().position(|b| *b == b'\n') {
            Some(end) => (&rest[..end], Some(&rest[end + 1..])),
            None => (rest, None),
        };
        // Read as text checked once: reading bytes, the JSON reader checks
        // each string on its own (a sixth of the time it takes).
        let mut doc: Document = serde_json::from_str(std::str::from_utf8(doc).ok()?).ok()?;
        if with_examples {
            let examples: Examples =
                serde_json::from_str(std::str::from_utf8(examples?).ok()?).ok()?;
            if examples.rules.len() != doc.rules.len() || examples.relax.len() != doc.relax.len() {
                return None;
            }
            for (rule, ex) in doc.rules.iter_mut().zip(examples.rules) {
                rule.examples = ex;
            }
            for (rule, ex) in doc.relax.iter_mut().zip(examples.relax) {
                rule.examples = ex;
            }
        }
        Some(doc)
    }
}

/// Whether the user running this process may write `path` (by its
/// effective ids; a read-only mount or an immutable file is not writable).
#[must_use]
pub fn writable_by_me(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use nix::fcntl::{AT_FDCWD, AtFlags};
        use nix::unistd::{AccessFlags, faccessat};
        faccessat(AT_FDCWD, path, AccessFlags::W_OK, AtFlags::AT_EACCESS).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Whether the file `meta` describes belongs to the user running this process.
#[must_use]
pub fn owned_by_me(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.uid() == nix::unistd::geteuid().as_raw()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Owned by this user, and writable by nobody else.
fn private(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        owned_by_me(meta) && meta.mode() & 0o022 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// The folder is a real folder (not a link), private to this user.
fn trusted_folder(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && private(&m))
}

/// Reads a private regular file, never through a link and never blocking.
fn read_trusted(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || !private(&meta) || !one_name(&meta) || meta.len() > MAX_ENTRY_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_ENTRY_BYTES).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The file has no other name (a hard link made elsewhere).
fn one_name(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() == 1
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Creates the folder, readable by its owner only, and each missing folder
/// above it, but only inside a folder of this user's: root running with a
/// user's `HOME` leaves no root-owned `~/.cache` there.
fn make_folder(dir: &Path) -> bool {
    if std::fs::symlink_metadata(dir).is_ok() {
        return true;
    }
    let Some(parent) = dir.parent() else {
        return false;
    };
    if !make_folder(parent) || !std::fs::metadata(parent).is_ok_and(|m| owned_by_me(&m)) {
        return false;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).is_ok() || dir.is_dir()
}

/// An entry's file name: 64 hexadecimal digits and `.json` (a document) or
/// `.bin` (compiled expressions).
fn is_entry_name(name: &str) -> bool {
    name.strip_suffix(".json")
        .or_else(|| name.strip_suffix(".bin"))
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Writes the entry whole: a private temporary file beside it, then a rename,
/// so a reader sees the old entry, none, or the new one.
fn write_entry(path: &Path, json: &[u8]) {
    use std::io::Write;
    let Some(dir) = path.parent() else { return };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".tmp-{}-{nanos}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let Ok(mut file) = options.open(&tmp) else {
        return;
    };
    let written = file.write_all(json).is_ok() && file.flush().is_ok();
    drop(file);
    if !written || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Past [`MAX_ENTRIES`] entries, removes the least recently written down to
/// half, and temporary files a killed process left over an hour ago. Nothing
/// else in the folder is touched (it may be a folder of the user's own).
fn prune(dir: &Path) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for e in read.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(modified) = e.metadata().ok().and_then(|m| m.modified().ok()) else {
            continue;
        };
        if is_entry_name(&name) {
            entries.push((modified, e.path()));
        } else if name.starts_with(".tmp-") && modified < hour_ago {
            let _ = std::fs::remove_file(e.path());
        }
    }
    if entries.len() <= MAX_ENTRIES {
        return;
    }
    entries.sort();
    for (_, path) in &entries[..entries.len() - MAX_ENTRIES / 2] {
        let _ = std::fs::remove_file(path);
    }
}
