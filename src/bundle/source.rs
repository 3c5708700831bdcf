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

use std::path::{Path, PathBuf};

use super::{Bundle, Signed, open, open_signed, signature_path};

/// Where a bundle comes from and the key that must have signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleSource {
    /// The bundle file (its signature is beside it, `FILE.minisig`).
    pub location: PathBuf,
    /// The minisign public key: a `.pub` file or the key itself.
    pub key: String,
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
        let mut out = vec![self.location.clone(), signature_path(&self.location)];
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
    std::fs::create_dir_all(dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| -> Result<(), String> {
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(|e| format!("`{}`: {e}", tmp.display()))?;
        std::fs::rename(&tmp, dir.join(name)).map_err(|e| format!("`{}`: {e}", dir.display()))
    };
    // A pair caught half-written fails verification and is refused, never used.
    write("bundle.tar.minisig", signed.signature.as_bytes())?;
    write("bundle.tar", &signed.bytes)
}
