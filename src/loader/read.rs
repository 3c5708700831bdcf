//! Reading files and walking folders without trusting what they hold.
//!
//! The size cap counts the bytes actually read, not what metadata claims (a
//! device reports 0); anything but a regular file is refused by kind before
//! it is opened (a FIFO would block the open); a folder walk remembers every
//! folder by device and inode, so `-> .`, `-> ..` and mutual links end.

use std::collections::HashSet;
use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::LoadError;

/// Largest file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Most files one load reads (a folder of a million files is refused, not read).
pub const MAX_FILES: usize = 10_000;
/// Deepest folder nesting walked.
pub const MAX_DEPTH: usize = 64;

/// What kind of thing a path is, in words, when it is not a regular file.
#[must_use]
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    "not a regular file"
}

fn io_message(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => "no such file or folder".into(),
        K::PermissionDenied => "permission denied".into(),
        K::InvalidData => "the file is not UTF-8 text".into(),
        _ => {
            // `Os { code: 5, … }` reads as "Input/output error (os error 5)": keep the words.
            let s = e.to_string();
            let s = s.split(" (os error").next().unwrap_or(&s).to_string();
            super::lowercase_first(&s)
        }
    }
}

fn unreadable(path: &Path, e: &std::io::Error) -> LoadError {
    if e.kind() == std::io::ErrorKind::NotFound {
        LoadError::NotFound(path.to_path_buf())
    } else {
        LoadError::Unreadable {
            path: path.to_path_buf(),
            message: io_message(e),
        }
    }
}

/// Opens a regular file for reading; refuses anything else by kind, before the open
/// can block (a FIFO) or read forever (a device).
/// Returns the file and its size as the open handle reports it.
fn open_regular(path: &Path) -> Result<(File, u64), LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
    if !meta.is_file() {
        return Err(LoadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(&meta),
        });
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // The path may be swapped for a FIFO between the check and the open:
        // a non-blocking open returns at once, and the handle is checked again.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| unreadable(path, &e))?;
    let meta = file.metadata().map_err(|e| unreadable(path, &e))?;
    if !meta.is_file() {
        return Err(LoadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(&meta),
        });
    }
    Ok((file, meta.len()))
}

/// Reads at most `cap` bytes from `reader`; more is [`LoadError::TooLarge`].
///
/// # Errors
/// Reading failed, the text is too large or not UTF-8.
pub fn read_capped(reader: impl Read, path: &Path, cap: u64) -> Result<String, LoadError> {
    read_capped_sized(reader, path, cap, 0)
}

/// As [`read_capped`], with room made for `size` bytes first (what the
/// metadata says; the cap still counts the bytes read): a file is read in
/// one call instead of a dozen doubling ones.
fn read_capped_sized(
    mut reader: impl Read,
    path: &Path,
    cap: u64,
    size: u64,
) -> Result<String, LoadError> {
    let room = usize::try_from(size.min(cap).saturating_add(1)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(room);
    reader
        .by_ref()
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(path, &e))?;
    if bytes.len() as u64 > cap {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            cap,
        });
    }
    String::from_utf8(bytes).map_err(|e| LoadError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`] as UTF-8 text.
///
/// # Errors
/// The path does not exist, is not a regular file, cannot be read, is too large or
/// is not UTF-8.
pub fn read_file(path: &Path) -> Result<String, LoadError> {
    let (file, size) = open_regular(path)?;
    read_capped_sized(file, path, MAX_FILE_BYTES, size)
}

/// As [`read_file`], and whether the user running this process may write the
/// file (what the document cache asks before it stands in for the file).
///
/// # Errors
/// As [`read_file`].
pub fn read_file_writable(path: &Path) -> Result<(String, bool), LoadError> {
    let (file, size) = open_regular(path)?;
    let writable = super::cache::writable_by_me(path);
    Ok((
        read_capped_sized(file, path, MAX_FILE_BYTES, size)?,
        writable,
    ))
}

/// The identity of a file or folder: device and inode where there are such.
#[cfg(unix)]
fn identity(meta: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &Metadata) -> (u64, u64) {
    (0, 0)
}

/// Finds the YAML files under the given paths (folders recursively), sorted.
///
/// Symbolic links are followed, but every folder and file is visited once by
/// device and inode, so link cycles end and a file linked twice is read once.
///
/// # Errors
/// A path does not exist, a folder cannot be read, or there are too many files.
pub fn find_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut walk = Walk::default();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| unreadable(p, &e))?;
        if meta.is_dir() {
            walk.dir(p, &meta, 0)?;
        } else {
            // A file given by name is read whatever its extension; a non-regular one is
            // refused by kind when it is read.
            walk.file(p, &meta)?;
        }
    }
    let mut out = walk.files;
    out.sort();
    out.dedup();
    Ok(out)
}

#[derive(Default)]
struct Walk {
    seen_dirs: HashSet<(u64, u64)>,
    seen_files: HashSet<(u64, u64)>,
    files: Vec<PathBuf>,
}

impl Walk {
    fn file(&mut self, p: &Path, meta: &Metadata) -> Result<(), LoadError> {
        let id = identity(meta);
        // Only regular files have a meaningful identity to deduplicate on; a device
        // or FIFO is kept so reading it reports its kind.
        if meta.is_file() && cfg!(unix) && !self.seen_files.insert(id) {
            return Ok(());
        }
        if self.files.len() >= MAX_FILES {
            return Err(LoadError::TooManyFiles(MAX_FILES));
        }
        self.files.push(p.to_path_buf());
        Ok(())
    }

    fn dir(&mut self, dir: &Path, meta: &Metadata, depth: usize) -> Result<(), LoadError> {
        if cfg!(unix) && !self.seen_dirs.insert(identity(meta)) {
            return Ok(());
        }
        if depth > MAX_DEPTH {
            return Err(LoadError::TooDeep {
                path: dir.to_path_buf(),
                max: MAX_DEPTH,
            });
        }
        let entries = std::fs::read_dir(dir).map_err(|e| unreadable(dir, &e))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            // Follows links; a dangling link or one that cannot be read is skipped
            // unless it is named like a policy file.
            let meta = match std::fs::metadata(&p) {
                Ok(m) => m,
                Err(e) => {
                    if is_yaml(&p) {
                        return Err(unreadable(&p, &e));
                    }
                    continue;
                }
            };
            if meta.is_dir() {
                self.dir(&p, &meta, depth + 1)?;
            } else if is_yaml(&p) {
                self.file(&p, &meta)?;
            }
        }
        Ok(())
    }
}

fn is_yaml(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "yaml" || e == "yml")
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn caps_the_bytes_read_not_the_metadata() {
        let err = read_capped(std::io::repeat(b'a'), Path::new("zero"), 1024).unwrap_err();
        assert!(
            matches!(err, LoadError::TooLarge { cap: 1024, .. }),
            "{err}"
        );
        assert_eq!(
            read_capped(&b"abc"[..], Path::new("f"), 3).unwrap(),
            "abc".to_string()
        );
    }

    #[cfg(unix)]
    #[test]
    fn refuses_devices_by_kind() {
        let err = read_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`/dev/zero` is not a regular file (a character device)"
        );
        let err = read_file(Path::new("/")).unwrap_err();
        assert_eq!(err.to_string(), "`/` is not a regular file (a folder)");
    }

    #[test]
    fn not_utf8_says_where() {
        let err = read_capped(&b"ab\xffc"[..], Path::new("f.yaml"), 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`f.yaml` is not UTF-8 text (invalid byte at offset 2)"
        );
    }
}
