//! Policy bundles: the YAML files of a policy (policies, manifests, catalog
//! additions, profiles) packed into one signed file that many machines verify
//! before they use it. The format is in docs/fleet.md.
//!
//! A bundle is a POSIX ustar archive, written so that the same files always
//! give the same bytes: entries sorted by path, regular files only, mode 0644,
//! owner 0, time 0. Its first entry, [`MANIFEST`], lists every other entry
//! with its SHA-256 and size, and the bundle's version. The signature is a
//! minisign signature of the whole file, in `FILE.minisig` ([`sign`],
//! [`verify_signature`]), so the `minisign` tool can make and check it too.
//!
//! Reading is strict: a header whose checksum is wrong, an entry that is not
//! a regular file, a path that is absolute or climbs (`..`), a file the
//! manifest does not list (or lists with another digest), or trailing data
//! other than the end-of-archive blocks is a refused bundle.

pub mod fetch;
pub mod source;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostic::SourceFile;
use crate::log::chain::{hex, sha256_hex};

/// The manifest's path inside the archive.
pub const MANIFEST: &str = "zero-policy-bundle.json";

/// The manifest's `format`.
pub const FORMAT: &str = "zero-policy-bundle/1";

/// The largest bundle read, against a file that would fill memory.
pub const MAX_BUNDLE_BYTES: usize = 64 * 1024 * 1024;

const BLOCK: usize = 512;

/// The manifest: what the bundle holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The version: given at build time, else `sha256:` and the first 16 hex
    /// digits of the SHA-256 over the file list ([`content_version`]).
    pub version: String,
    /// Every file, sorted by path.
    pub files: Vec<Entry>,
}

/// One file of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The path inside the bundle (`policies/default.yaml`).
    pub path: String,
    /// The SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A bundle that was read and checked: its manifest, and its files' texts
/// by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The manifest.
    pub manifest: Manifest,
    /// Each file's text, by path.
    pub files: BTreeMap<String, String>,
    /// The SHA-256 of the whole bundle file, lowercase hex.
    pub digest: String,
}

impl Bundle {
    /// The bundle's version.
    #[must_use]
    pub fn version(&self) -> &str {
        &self.manifest.version
    }

    /// The files as sources for the loader, named by their path in the bundle.
    #[must_use]
    pub fn sources(&self) -> Vec<SourceFile> {
        self.files
            .iter()
            .map(|(path, text)| SourceFile::new(Path::new(path), text.clone()))
            .collect()
    }
}

/// The version a bundle gets when none is given: `sha256:` and the first 16
/// hex digits of the SHA-256 over each file's path, a NUL, and its digest,
/// one file after another in path order.
#[must_use]
pub fn content_version(files: &[Entry]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(f.path.as_bytes());
        h.update([0]);
        h.update(f.sha256.as_bytes());
        h.update([b'\n']);
    }
    format!("sha256:{}", &hex(&h.finalize())[..16])
}

/// The files to pack from the paths given: each folder's `*.yaml` and
/// `*.yml` files (searched as the loader searches), named by the folder's own
/// name and the path below it; each file by its name.
///
/// # Errors
/// A path cannot be read, is not UTF-8, or two files would get one name.
pub fn collect(paths: &[PathBuf]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for p in paths {
        let base = p
            .canonicalize()
            .map_err(|e| format!("cannot read `{}`: {e}", p.display()))?;
        let top = base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let files =
            crate::loader::find_files(std::slice::from_ref(&base)).map_err(|e| e.to_string())?;
        for f in files {
            let name = if base.is_dir() {
                let below = f.strip_prefix(&base).unwrap_or(&f);
                let below: Vec<String> = below
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                format!("{top}/{}", below.join("/"))
            } else {
                top.clone()
            };
            let text = std::fs::read_to_string(&f)
                .map_err(|e| format!("cannot read `{}`: {e}", f.display()))?;
            if out.insert(name.clone(), text).is_some() {
                return Err(format!(
                    "two files would be `{name}` in the bundle; give folders with different names"
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("no `*.yaml` or `*.yml` file to pack".into());
    }
    Ok(out)
}

/// Packs files into a bundle: the same files and version give the same bytes.
///
/// # Errors
/// A path is not one a bundle may hold ([`check_path`]) or is too long for a
/// ustar header.
pub fn build(files: &BTreeMap<String, String>, version: Option<&str>) -> Result<Vec<u8>, String> {
    let entries: Vec<Entry> = files
        .iter()
        .map(|(path, text)| Entry {
            path: path.clone(),
            sha256: sha256_hex(text.as_bytes()),
            size: text.len() as u64,
        })
        .collect();
    let version = match version {
        Some(v) if !v.trim().is_empty() => v.trim().to_string(),
        _ => content_version(&entries),
    };
    let manifest = Manifest {
        format: FORMAT.into(),
        version,
        files: entries,
    };
    let mut manifest_text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    manifest_text.push('\n');
    let mut out = Vec::new();
    write_entry(&mut out, MANIFEST, manifest_text.as_bytes())?;
    for (path, text) in files {
        check_path(path)?;
        write_entry(&mut out, path, text.as_bytes())?;
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    Ok(out)
}

/// Whether a path may be in a bundle: relative, `/`-separated, no empty,
/// `.` or `..` part, no NUL or backslash, and a YAML file name.
///
/// # Errors
/// What is wrong with it.
pub fn check_path(path: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("the bundle path `{path}` {why}"));
    if path.starts_with('/') {
        return bad("is absolute");
    }
    if path.contains('\0') || path.contains('\\') {
        return bad("holds a NUL or a backslash");
    }
    if path
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return bad("has an empty, `.` or `..` part");
    }
    if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
        return bad("is not a `.yaml` or `.yml` file");
    }
    Ok(())
}

fn octal(field: &mut [u8], value: u64) {
    let width = field.len() - 1;
    let text = format!("{value:0width$o}");
    field[..width].copy_from_slice(&text.as_bytes()[text.len() - width..]);
    field[width] = 0;
}

/// Writes one ustar header and the data, padded to a block.
fn write_entry(out: &mut Vec<u8>, path: &str, data: &[u8]) -> Result<(), String> {
    let mut h = [0u8; BLOCK];
    let bytes = path.as_bytes();
    if bytes.len() <= 100 {
        h[..bytes.len()].copy_from_slice(bytes);
    } else {
        // ustar: a prefix of up to 155 bytes, split at a `/`.
        let split = bytes[..bytes.len().min(156)]
            .iter()
            .rposition(|b| *b == b'/')
            .filter(|i| bytes.len() - i - 1 <= 100 && *i > 0)
            .ok_or_else(|| format!("the bundle path `{path}` is too long (at most 255 bytes)"))?;
        h[..bytes.len() - split - 1].copy_from_slice(&bytes[split + 1..]);
        h[345..345 + split].copy_from_slice(&bytes[..split]);
    }
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    if data.len() as u64 > 0o77_777_777_777 {
        return Err(format!("`{path}` is too large for a bundle"));
    }
    octal(&mut h[124..136], data.len() as u64);
    octal(&mut h[136..148], 0);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].fill(b' ');
    let sum: u64 = h.iter().map(|b| u64::from(*b)).sum();
    octal(&mut h[148..155], sum);
    h[155] = b' ';
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    let pad = (BLOCK - data.len() % BLOCK) % BLOCK;
    out.resize(out.len() + pad, 0);
    Ok(())
}

fn parse_octal(field: &[u8]) -> Option<u64> {
    let text: Vec<u8> = field
        .iter()
        .copied()
        .take_while(|b| *b != 0)
        .filter(|b| *b != b' ')
        .collect();
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(std::str::from_utf8(&text).ok()?, 8).ok()
}

fn cstr(field: &[u8]) -> Result<&str, String> {
    let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
    std::str::from_utf8(&field[..end]).map_err(|_| "an entry name is not UTF-8".to_string())
}

/// Reads a bundle's bytes (its signature already checked) and checks every
/// digest against the manifest.
///
/// # Errors
/// What makes the bundle unusable: a malformed archive, a missing or wrong
/// manifest, a digest or size that does not match, a file not listed or
/// listed but missing, a path a bundle may not hold, a file not UTF-8.
pub fn read(bytes: &[u8]) -> Result<Bundle, String> {
    if bytes.len() > MAX_BUNDLE_BYTES {
        return Err(format!(
            "it is larger than {} MiB",
            MAX_BUNDLE_BYTES / (1024 * 1024)
        ));
    }
    let mut entries: Vec<(String, &[u8])> = Vec::new();
    let mut at = 0;
    loop {
        let Some(h) = bytes.get(at..at + BLOCK) else {
            return Err("the archive ends before its end-of-archive blocks".into());
        };
        if h.iter().all(|b| *b == 0) {
            let rest = &bytes[at..];
            if rest.len() < 2 * BLOCK || rest.iter().any(|b| *b != 0) {
                return Err("the archive has data after its end or a short end".into());
            }
            break;
        }
        let stored = parse_octal(&h[148..156]).ok_or("a header checksum is not a number")?;
        let sum: u64 = h
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    u64::from(*b)
                }
            })
            .sum();
        if sum != stored {
            return Err(format!("the header at byte {at} has a wrong checksum"));
        }
        if &h[257..263] != b"ustar\0" {
            return Err(format!("the header at byte {at} is not ustar"));
        }
        let name = cstr(&h[..100])?;
        let prefix = cstr(&h[345..500])?;
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        if h[156] != b'0' && h[156] != 0 {
            return Err(format!("`{path}` is not a regular file"));
        }
        let size = parse_octal(&h[124..136]).ok_or("an entry size is not a number")?;
        let size = usize::try_from(size).map_err(|_| "an entry is too large".to_string())?;
        let start = at + BLOCK;
        let data = bytes
            .get(start..start.saturating_add(size))
            .ok_or_else(|| format!("`{path}` is cut short"))?;
        entries.push((path, data));
        at = start + size.div_ceil(BLOCK) * BLOCK;
    }
    let mut iter = entries.into_iter();
    let Some((first, manifest_bytes)) = iter.next() else {
        return Err("the archive is empty".into());
    };
    if first != MANIFEST {
        return Err(format!("its first entry is `{first}`, not `{MANIFEST}`"));
    }
    let manifest: Manifest = serde_json::from_slice(manifest_bytes)
        .map_err(|e| format!("its manifest does not read: {e}"))?;
    if manifest.format != FORMAT {
        return Err(format!(
            "its format is `{}`, this build reads `{FORMAT}`",
            manifest.format
        ));
    }
    let mut files = BTreeMap::new();
    let mut listed = manifest.files.iter();
    for (path, data) in iter {
        check_path(&path)?;
        let Some(entry) = listed.next() else {
            return Err(format!("`{path}` is not in the manifest"));
        };
        if entry.path != path {
            return Err(format!(
                "`{path}` is not the manifest's next file `{}`",
                entry.path
            ));
        }
        if entry.size != data.len() as u64 || entry.sha256 != sha256_hex(data) {
            return Err(format!(
                "the digest of `{path}` is not the one in the manifest"
            ));
        }
        let text = std::str::from_utf8(data).map_err(|_| format!("`{path}` is not UTF-8"))?;
        files.insert(path, text.to_string());
    }
    if let Some(missing) = listed.next() {
        return Err(format!(
            "`{}` is in the manifest but not in the archive",
            missing.path
        ));
    }
    Ok(Bundle {
        manifest,
        files,
        digest: sha256_hex(bytes),
    })
}

/// A minisign public key: the contents of a `.pub` file (with or without its
/// comment line), or the key itself (`RW…`), or a path to the file.
///
/// # Errors
/// The key is neither a readable file nor a minisign public key.
pub fn public_key(key: &str) -> Result<minisign::PublicKey, String> {
    let text = if Path::new(key).is_file() {
        std::fs::read_to_string(key).map_err(|e| format!("cannot read the key `{key}`: {e}"))?
    } else {
        key.to_string()
    };
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
        .unwrap_or("");
    minisign::PublicKey::from_base64(line)
        .map_err(|e| format!("`{key}` is not a minisign public key: {e}"))
}

/// Signs `bytes` with the minisign secret key in `key_file`, returning the
/// text of the `.minisig` file. A password-protected key takes its password
/// from `password`.
///
/// # Errors
/// The key cannot be read or opened, or signing fails.
pub fn sign(
    bytes: &[u8],
    key_file: &Path,
    password: Option<String>,
    trusted_comment: &str,
) -> Result<String, String> {
    let text = std::fs::read_to_string(key_file)
        .map_err(|e| format!("cannot read the secret key `{}`: {e}", key_file.display()))?;
    let text = with_checksum(&text).unwrap_or(text);
    let boxed = minisign::SecretKeyBox::from_string(&text)
        .map_err(|e| format!("`{}` is not a minisign secret key: {e}", key_file.display()))?;
    let sk = if let Some(p) = password {
        boxed.into_secret_key(Some(p))
    } else {
        boxed.into_unencrypted_secret_key()
    }
    .map_err(|e| {
        format!(
            "cannot open the secret key `{}`: {e} (a password-protected key needs ZERO_POLICY_KEY_PASSWORD)",
            key_file.display()
        )
    })?;
    let sig = minisign::sign(
        None,
        &sk,
        std::io::Cursor::new(bytes),
        Some(trusted_comment),
        Some("signature from zero-policy bundle sign"),
    )
    .map_err(|e| format!("cannot sign: {e}"))?;
    Ok(sig.into_string())
}

/// An unencrypted secret key written by the `minisign` tool (0.11, `-G -W`)
/// carries an all-zero checksum, which the minisign crate takes for a
/// corrupt key: the same key text with its checksum (BLAKE2b-256 of the
/// signature algorithm, key number and secret key) filled in. `None` for any
/// other key, left as it is.
fn with_checksum(text: &str) -> Option<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use blake2::digest::{Update, VariableOutput};
    let mut lines: Vec<&str> = text.lines().collect();
    let encoded = *lines.get(1)?;
    let mut bytes = STANDARD.decode(encoded.trim()).ok()?;
    // sig_alg 2, kdf_alg 2, chk_alg 2, salt 32, ops 8, mem 8, keynum 8, sk 64, chk 32.
    if bytes.len() != 158 || bytes[2..4] != [0, 0] || bytes[126..].iter().any(|b| *b != 0) {
        return None;
    }
    let mut h = blake2::Blake2bVar::new(32).ok()?;
    h.update(&bytes[0..2]);
    h.update(&bytes[54..62]);
    h.update(&bytes[62..126]);
    h.finalize_variable(&mut bytes[126..]).ok()?;
    let fixed = STANDARD.encode(&bytes);
    lines[1] = &fixed;
    Some(format!("{}\n", lines.join("\n")))
}

/// Checks a minisign signature (prehashed, as minisign 0.8+ writes; legacy
/// signatures are refused) of `bytes` with `key`, trusted comment included.
/// Returns the trusted comment.
///
/// # Errors
/// The signature does not read, is by another key, or does not verify.
pub fn verify_signature(
    bytes: &[u8],
    signature: &str,
    key: &minisign::PublicKey,
) -> Result<String, String> {
    let sig = minisign::SignatureBox::from_string(signature)
        .map_err(|e| format!("its signature does not read: {e}"))?;
    minisign::verify(key, &sig, std::io::Cursor::new(bytes), true, false, false)
        .map_err(|e| format!("its signature does not verify: {e}"))?;
    sig.trusted_comment()
        .map_err(|e| format!("its signature does not read: {e}"))
}

/// The signature file of a bundle file: `FILE.minisig`.
#[must_use]
pub fn signature_path(bundle: &Path) -> PathBuf {
    let mut s = bundle.as_os_str().to_os_string();
    s.push(".minisig");
    PathBuf::from(s)
}

/// Reads, verifies and checks a bundle file and its `.minisig`.
///
/// # Errors
/// Why the bundle is refused.
pub fn open(path: &Path, key: &minisign::PublicKey) -> Result<Bundle, String> {
    open_signed(path, key).map(|s| s.bundle)
}

/// A verified bundle with the bytes and signature it was verified from.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The checked bundle.
    pub bundle: Bundle,
    /// The bundle file's bytes.
    pub bytes: Vec<u8>,
    /// The `.minisig` text.
    pub signature: String,
    /// When the signature says it was made ([`signed_at`]), if it says.
    pub signed_at: Option<u64>,
}

/// When a signature says it was made: the seconds since 1970 of
/// `timestamp:SECONDS` in its trusted comment, which `bundle sign` and the
/// `minisign` tool both write. The trusted comment is covered by the
/// signature, so the time is the signer's word.
#[must_use]
pub fn signed_at(trusted_comment: &str) -> Option<u64> {
    trusted_comment
        .split(|c: char| c.is_whitespace())
        .find_map(|w| w.strip_prefix("timestamp:"))
        .and_then(|n| n.parse().ok())
}

/// As [`open`], keeping the bytes that were verified.
///
/// # Errors
/// Why the bundle is refused.
pub fn open_signed(path: &Path, key: &minisign::PublicKey) -> Result<Signed, String> {
    let bytes = read_limited(path)?;
    let sig_path = signature_path(path);
    let signature = std::fs::read_to_string(&sig_path)
        .map_err(|e| format!("cannot read its signature `{}`: {e}", sig_path.display()))?;
    check_signed(bytes, signature, key)
}

/// Verifies a bundle's bytes against its signature's text and checks the
/// bundle, wherever both came from.
///
/// # Errors
/// Why the bundle is refused.
pub fn check_signed(
    bytes: Vec<u8>,
    signature: String,
    key: &minisign::PublicKey,
) -> Result<Signed, String> {
    let comment = verify_signature(&bytes, &signature, key)?;
    let bundle = read(&bytes)?;
    Ok(Signed {
        bundle,
        bytes,
        signature,
        signed_at: signed_at(&comment),
    })
}

/// Reads a file of at most [`MAX_BUNDLE_BYTES`].
///
/// # Errors
/// It cannot be read or is too large.
pub fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_BUNDLE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    if bytes.len() > MAX_BUNDLE_BYTES {
        return Err(format!(
            "`{}` is larger than {} MiB",
            path.display(),
            MAX_BUNDLE_BYTES / (1024 * 1024)
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn files() -> BTreeMap<String, String> {
        let mut f = BTreeMap::new();
        f.insert("policies/a.yaml".into(), "version: 1\n".into());
        f.insert(
            format!("{}/b.yaml", "deep/".repeat(30).trim_end_matches('/')),
            "version: 1\nrules: []\n".into(),
        );
        f
    }

    #[test]
    fn build_is_deterministic_and_reads_back() {
        let a = build(&files(), None).unwrap();
        assert_eq!(a, build(&files(), None).unwrap());
        assert_eq!(a.len() % BLOCK, 0);
        let b = read(&a).unwrap();
        assert_eq!(b.files, files());
        assert!(b.version().starts_with("sha256:"), "{}", b.version());
        assert_eq!(
            read(&build(&files(), Some("2026.12.05")).unwrap())
                .unwrap()
                .version(),
            "2026.12.05"
        );
    }

    #[test]
    fn a_changed_byte_anywhere_is_refused() {
        let good = build(&files(), None).unwrap();
        // Every byte of the first file's data and header, and the manifest's.
        let mut refused = 0;
        for at in (0..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            if read(&bad).is_err() {
                refused += 1;
            } else {
                // Only padding may change without notice.
                let b = read(&bad).unwrap();
                assert_eq!(b.files, files(), "byte {at}");
            }
        }
        assert!(refused > good.len() / 7 / 3, "{refused}");
    }

    #[test]
    fn the_signing_time_is_read_from_either_tools_trusted_comment() {
        assert_eq!(
            signed_at("zero-policy bundle v1 timestamp:1764900000"),
            Some(1_764_900_000)
        );
        assert_eq!(
            signed_at("timestamp:1764900000\tfile:team.bundle\thashed"),
            Some(1_764_900_000)
        );
        assert_eq!(signed_at("zero-policy bundle v1"), None);
        assert_eq!(signed_at("timestamp:soon"), None);
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for p in [
            "/etc/x.yaml",
            "../x.yaml",
            "a/./b.yaml",
            "a//b.yaml",
            "a.sh",
            "a\\b.yaml",
        ] {
            assert!(check_path(p).is_err(), "{p}");
        }
        assert!(check_path("policies/a.yaml").is_ok());
    }
}
