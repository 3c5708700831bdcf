//! A bundle as a policy source for `hook` and `serve`: verified before use,
//! kept as the last good bundle, and fallen back to when a newer one is
//! refused.
//!
//! The cache keeps the last good bundle *signed*: the file and its
//! `.minisig`, under `~/.cache/zero-policy/bundles/<hash of the location>/`
//! (`$XDG_CACHE_HOME` or `$ZERO_POLICY_CACHE` move it, as for the document
//! cache). It is verified again with the key each time it is used, so a
//! cache someone else wrote to can make a call fail closed but can never
//! put a forged policy in force.
//!
//! A bundle at an `https://` URL is fetched into the same cache
//! ([`BundleSource::refresh`]) and used from there, so no decision waits on
//! the network: a process that finds the copy older than the poll interval
//! starts `zero-policy bundle fetch` in the background and decides with the
//! copy it has, and `serve` polls on a schedule of its own. Only the first
//! use on a machine, with nothing in the cache, waits for the fetch (at most
//! [`FIRST_FETCH_TIMEOUT`]), and every call is denied if it fails. The cache
//! folder also holds the `ETag` of the copy (`etag`), when it was last asked
//! for (`checked`), and why the last fetch failed (`refresh-error`), which
//! each decision's log line then notes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Bundle, Signed, open, open_signed, signature_path};

/// How long the first fetch of a bundle may take, on a machine that has no
/// copy yet and so cannot decide without it.
pub const FIRST_FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a background fetch may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a bundle at a URL is asked for again, unless
/// `ZERO_POLICY_BUNDLE_POLL` (seconds) says otherwise.
pub const DEFAULT_POLL: Duration = Duration::from_secs(300);

/// Where a bundle comes from and the key that must have signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleSource {
    /// The bundle file (its signature is beside it, `FILE.minisig`), or an
    /// `https://` URL (its signature at the URL plus `.minisig`).
    pub location: PathBuf,
    /// The minisign public key: a `.pub` file or the key itself.
    pub key: String,
    /// A PEM file of CA certificates to trust, beside the platform's roots,
    /// for a bundle at a URL.
    pub ca: Option<PathBuf>,
    /// How often a bundle at a URL is asked for again.
    pub poll: Duration,
    /// Whether a stale copy of a bundle at a URL starts a background fetch
    /// (`hook`, `run`), or something else polls it (`serve`).
    pub background_fetch: bool,
}

/// What [`BundleSource::refresh`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refreshed {
    /// The server has nothing newer than the copy (its version).
    Unchanged(String),
    /// A new bundle verified and is now the copy in force (its version).
    New(String),
}

/// The bundle in force for one use, and what the operator should know.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The bundle: the one at the location, or the last good one.
    pub bundle: Bundle,
    /// Set when the bundle at the location was refused and the last good one
    /// is used instead: why.
    pub note: Option<String>,
}

/// The folder of every cached bundle.
#[must_use]
pub fn cache_root() -> Option<PathBuf> {
    crate::loader::cache::folder().map(|d| d.join("bundles"))
}

impl BundleSource {
    /// A bundle at `location` (a file or an `https://` URL) signed by `key`,
    /// with no CA of its own, polled as `ZERO_POLICY_BUNDLE_POLL` says (else
    /// every five minutes), fetched in the background when stale.
    #[must_use]
    pub fn new(location: PathBuf, key: String) -> BundleSource {
        let poll = std::env::var("ZERO_POLICY_BUNDLE_POLL")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map_or(DEFAULT_POLL, Duration::from_secs);
        BundleSource {
            location,
            key,
            ca: None,
            poll,
            background_fetch: true,
        }
    }

    /// The URL, when the bundle is fetched rather than read from a file.
    #[must_use]
    pub fn url(&self) -> Option<&str> {
        self.location
            .to_str()
            .filter(|l| l.starts_with("https://") || l.starts_with("http://"))
    }

    /// The files whose change means another bundle may be in force: the
    /// bundle and its signature, or for a URL their copies in the cache.
    #[must_use]
    pub fn watched(&self) -> Vec<PathBuf> {
        match (self.url(), cache_root()) {
            (Some(_), Some(root)) => {
                let dir = self.cache_dir(&root);
                vec![dir.join("bundle.tar"), dir.join("bundle.tar.minisig")]
            }
            _ => vec![self.location.clone(), signature_path(&self.location)],
        }
    }

    /// This bundle's cache folder under `root`.
    #[must_use]
    pub fn cache_dir(&self, root: &Path) -> PathBuf {
        let name = crate::log::chain::sha256_hex(self.location.as_os_str().as_encoded_bytes());
        root.join(&name[..16])
    }

    /// Where this policy is, or could come from next, for the registry's
    /// guard: the bundle, its signature and its cache.
    #[must_use]
    pub fn places(&self) -> Vec<PathBuf> {
        let mut out = match self.url() {
            Some(_) => Vec::new(),
            None => vec![self.location.clone(), signature_path(&self.location)],
        };
        out.extend(crate::loader::policy_places(&[]));
        out
    }

    /// The bundle to use: the one at the location if it verifies (and then
    /// it becomes the last good one), else the last good one with a note
    /// saying why.
    ///
    /// # Errors
    /// The key does not read, or the bundle is refused and no good one was
    /// seen before: every call is to be denied.
    pub fn resolve(&self, cache: Option<&Path>) -> Result<Resolved, String> {
        if let Some(url) = self.url() {
            return self.resolve_fetched(url, cache);
        }
        let key = super::public_key(&self.key)?;
        let cache_dir = cache.map(|root| self.cache_dir(root));
        let taken = open_signed(&self.location, &key).and_then(|signed| match &cache_dir {
            Some(dir) => not_older(dir, &signed, &key).map(|()| signed),
            None => Ok(signed),
        });
        match taken {
            Ok(signed) => {
                if let Some(dir) = &cache_dir
                    && let Err(e) = keep(dir, &signed)
                {
                    crate::output::stderr(&format!(
                        "zero-policy: cannot keep the bundle as the last good one: {e}\n"
                    ));
                }
                Ok(Resolved {
                    bundle: signed.bundle,
                    note: None,
                })
            }
            Err(why) => {
                let refused = format!("the bundle `{}` is refused: {why}", self.location.display());
                last_good(cache_dir.as_deref(), &key, &refused)
            }
        }
    }

    /// The bundle to use when it is fetched from `url`: the copy in the
    /// cache, fetched first if there is none.
    fn resolve_fetched(&self, url: &str, cache: Option<&Path>) -> Result<Resolved, String> {
        let key = super::public_key(&self.key)?;
        let Some(root) = cache else {
            return Err(format!(
                "the bundle `{url}` needs a cache folder to be fetched into, and there is none (set HOME, XDG_CACHE_HOME or ZERO_POLICY_CACHE)"
            ));
        };
        let dir = self.cache_dir(root);
        let kept = dir.join("bundle.tar");
        if kept.exists()
            && let Ok(bundle) = open(&kept, &key)
        {
            if self.background_fetch && stale(&dir, self.poll) {
                self.fetch_in_background(&dir);
            }
            let note = std::fs::read_to_string(dir.join("refresh-error"))
                .ok()
                .map(|why| {
                    format!(
                        "{}; the bundle `{}` fetched before stays in force",
                        why.trim_end(),
                        bundle.version()
                    )
                });
            return Ok(Resolved { bundle, note });
        }
        match self.refresh_within(root, FIRST_FETCH_TIMEOUT) {
            Ok(_) => open(&kept, &key)
                .map(|bundle| Resolved { bundle, note: None })
                .map_err(|e| format!("the bundle fetched from `{url}` cannot be used: {e}")),
            Err(why) => Err(format!("{why}, and no good bundle was seen before")),
        }
    }

    /// Asks the server for the bundle (with the `ETag` of the copy held),
    /// and makes a new one that verifies, and is not older than the copy,
    /// the copy in force. Records when it asked, and why it failed.
    ///
    /// # Errors
    /// Not a URL, the fetch failed, or the bundle fetched was refused; the
    /// copy held, if any, stays in force.
    pub fn refresh(&self, root: &Path) -> Result<Refreshed, String> {
        self.refresh_within(root, FETCH_TIMEOUT)
    }

    fn refresh_within(&self, root: &Path, timeout: Duration) -> Result<Refreshed, String> {
        let Some(url) = self.url() else {
            return Err(format!("`{}` is not a URL", self.location.display()));
        };
        let dir = self.cache_dir(root);
        let result = self.fetch_into(url, &dir, timeout);
        let failure = dir.join("refresh-error");
        match &result {
            Ok(_) => {
                let _ = std::fs::remove_file(&failure);
            }
            Err(why) => {
                let _ = write_beside(&dir, "refresh-error", why.as_bytes());
            }
        }
        result
    }

    fn fetch_into(&self, url: &str, dir: &Path, timeout: Duration) -> Result<Refreshed, String> {
        let key = super::public_key(&self.key)?;
        std::fs::create_dir_all(dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
        mark_checked(dir);
        let kept = open(&dir.join("bundle.tar"), &key).ok();
        let etag = kept
            .as_ref()
            .and_then(|_| std::fs::read_to_string(dir.join("etag")).ok());
        let fetched = super::fetch::fetch(url, self.ca.as_deref(), etag.as_deref(), timeout)?;
        match fetched {
            super::fetch::Fetched::NotModified => Ok(Refreshed::Unchanged(
                kept.map(|b| b.version().to_string()).unwrap_or_default(),
            )),
            super::fetch::Fetched::New {
                bytes,
                signature,
                etag,
            } => {
                let signed = super::check_signed(bytes, signature, &key)
                    .and_then(|signed| not_older(dir, &signed, &key).map(|()| signed))
                    .map_err(|why| format!("the bundle `{url}` is refused: {why}"))?;
                let version = signed.bundle.version().to_string();
                let unchanged = kept
                    .as_ref()
                    .is_some_and(|k| k.digest == signed.bundle.digest);
                keep(dir, &signed)?;
                match etag {
                    Some(tag) => write_beside(dir, "etag", tag.as_bytes())?,
                    None => {
                        let _ = std::fs::remove_file(dir.join("etag"));
                    }
                }
                Ok(if unchanged {
                    Refreshed::Unchanged(version)
                } else {
                    Refreshed::New(version)
                })
            }
        }
    }

    /// Starts `zero-policy bundle fetch` for this bundle, detached, and does
    /// not wait for it; marks the copy checked first, so that the calls
    /// decided meanwhile do not start one each.
    fn fetch_in_background(&self, dir: &Path) {
        mark_checked(dir);
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut command = std::process::Command::new(exe);
        command
            .arg("bundle")
            .arg("fetch")
            .arg(&self.location)
            .arg("--key")
            .arg(&self.key)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(ca) = &self.ca {
            command.arg("--ca").arg(ca);
        }
        if let Err(e) = command.spawn() {
            let _ = write_beside(
                dir,
                "refresh-error",
                format!("cannot start a background fetch: {e}").as_bytes(),
            );
        }
    }
}

/// The last good bundle in `dir`, noted as standing in for one refused for
/// `refused`; an error when there is none.
fn last_good(
    dir: Option<&Path>,
    key: &minisign::PublicKey,
    refused: &str,
) -> Result<Resolved, String> {
    let last = dir
        .map(|d| d.join("bundle.tar"))
        .filter(|kept| kept.exists())
        .map(|kept| open(&kept, key))
        .transpose();
    match last {
        Ok(Some(bundle)) => Ok(Resolved {
            note: Some(format!(
                "{refused}; the last good bundle `{}` stays in force",
                bundle.version()
            )),
            bundle,
        }),
        Ok(None) => Err(format!("{refused}, and no good bundle was seen before")),
        Err(e) => Err(format!(
            "{refused}, and the last good bundle cannot be used: {e}"
        )),
    }
}

/// Refuses a bundle signed before the last good one in `dir` (a replayed
/// older bundle), and one whose signature carries no time when the last
/// good one's does, since it cannot be ordered after it. The same bundle
/// again, or no last good bundle that verifies, is no objection.
fn not_older(dir: &Path, signed: &Signed, key: &minisign::PublicKey) -> Result<(), String> {
    let kept = dir.join("bundle.tar");
    let Ok(bytes) = std::fs::read(&kept) else {
        return Ok(());
    };
    if crate::log::chain::sha256_hex(&bytes) == signed.bundle.digest {
        return Ok(());
    }
    let Ok(last) = open_signed(&kept, key) else {
        return Ok(());
    };
    let Some(last_at) = last.signed_at else {
        return Ok(());
    };
    let when = |secs: u64| {
        crate::log::rfc3339_utc(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .replace(".000Z", "Z")
    };
    match signed.signed_at {
        Some(at) if at >= last_at => Ok(()),
        Some(at) => Err(format!(
            "it was signed at {}, before the last good bundle `{}` (signed at {}): an older bundle is not taken back; to roll back, sign it again",
            when(at),
            last.bundle.version(),
            when(last_at)
        )),
        None => Err(format!(
            "its signature carries no time (`timestamp:` in the trusted comment), so it cannot be ordered after the last good bundle `{}`, signed at {}",
            last.bundle.version(),
            when(last_at)
        )),
    }
}

/// Whether the copy in `dir` was last asked for longer than `poll` ago (or
/// never).
fn stale(dir: &Path, poll: Duration) -> bool {
    std::fs::metadata(dir.join("checked"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age >= poll)
}

/// Records that the copy in `dir` is being asked for now.
fn mark_checked(dir: &Path) {
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join("checked"), b"");
}

/// Writes `name` in `dir` through a file beside it, renamed into place.
fn write_beside(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
    crate::log::spool::write_replacing(dir, name, bytes)
        .map_err(|e| format!("`{}`: {e}", dir.join(name).display()))
}

/// Writes a verified bundle and its signature into `dir`, unless the copy
/// there is already this bundle; each file is written beside and renamed
/// into place.
fn keep(dir: &Path, signed: &Signed) -> Result<(), String> {
    let kept = dir.join("bundle.tar");
    if let Ok(bytes) = std::fs::read(&kept)
        && crate::log::chain::sha256_hex(&bytes) == signed.bundle.digest
    {
        return Ok(());
    }
    // A pair caught half-written fails verification and is refused, never used.
    write_beside(dir, "bundle.tar.minisig", signed.signature.as_bytes())?;
    write_beside(dir, "bundle.tar", &signed.bytes)
}
