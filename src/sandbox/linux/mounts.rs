//! The mounts that enforce denies inside allowed trees, in a private mount namespace.
//!
//! Landlock can only allow; a deny inside an allowed tree is a mount over it. A hidden
//! file gets `/dev/null` bound over it, read-only; a hidden folder an empty read-only
//! tmpfs; a read-only path is bound onto itself and remounted read-only; a `noexec`
//! folder likewise with `noexec,nosuid,nodev`. Every remount covers the mounts below the
//! path too (read from /proc/self/mountinfo), and keeps the flags a user namespace may
//! not clear (`nosuid`, `nodev`, `noexec`, the atime flags, `ro`).

use std::fs;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

use super::super::SandboxError;

const NONE: Option<&str> = None;

/// Makes every mount private, so that nothing below propagates out (or in).
pub(super) fn make_private() -> Result<(), SandboxError> {
    mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE).map_err(|e| {
        SandboxError::Mount {
            what: "make private the mounts of",
            path: PathBuf::from("/"),
            reason: e.desc().to_owned(),
        }
    })
}

/// Hides `path`: `/dev/null` over a file, an empty read-only tmpfs over a folder.
pub(super) fn hide(path: &Path) -> Result<(), SandboxError> {
    let fail = |e: nix::Error| SandboxError::Mount {
        what: "hide",
        path: path.to_owned(),
        reason: e.desc().to_owned(),
    };
    let meta = fs::metadata(path).map_err(|e| SandboxError::Mount {
        what: "hide",
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    if meta.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,nr_inodes=2,mode=0555"),
        )
        .map_err(fail)
    } else {
        mount(Some("/dev/null"), path, NONE, MsFlags::MS_BIND, NONE).map_err(fail)?;
        remount(
            path,
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        )
        .map_err(fail)
    }
}

/// Binds a folder onto itself (with the mounts below it), so it cannot be renamed or
/// removed: it is a mount point now.
pub(super) fn pin(path: &Path) -> Result<(), SandboxError> {
    mount(
        Some(path),
        path,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
    .map_err(|e| SandboxError::Mount {
        what: "pin the folder above a read-only path",
        path: path.to_owned(),
        reason: e.desc().to_owned(),
    })
}

/// Makes `path` and every mount below it read-only.
pub(super) fn read_only(path: &Path) -> Result<(), SandboxError> {
    bind_and_remount(path, MsFlags::MS_RDONLY, "make read-only")
}

/// Mounts `path` and every mount below it `noexec,nosuid,nodev`.
pub(super) fn noexec(path: &Path) -> Result<(), SandboxError> {
    bind_and_remount(
        path,
        MsFlags::MS_NOEXEC | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        "mount noexec",
    )
}

fn bind_and_remount(path: &Path, flags: MsFlags, what: &'static str) -> Result<(), SandboxError> {
    let fail = |at: &Path, e: nix::Error| SandboxError::Mount {
        what,
        path: at.to_owned(),
        reason: e.desc().to_owned(),
    };
    mount(
        Some(path),
        path,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
    .map_err(|e| fail(path, e))?;
    for point in mounts_under(path).map_err(|e| SandboxError::Mount {
        what,
        path: path.to_owned(),
        reason: e.to_string(),
    })? {
        remount(&point, flags).map_err(|e| fail(&point, e))?;
    }
    Ok(())
}

/// Remounts the mount at `path` with its current flags plus `flags`.
fn remount(path: &Path, flags: MsFlags) -> nix::Result<()> {
    let current = statvfs(path)?.flags();
    let mut keep = MsFlags::empty();
    for (st, ms) in [
        (FsFlags::ST_RDONLY, MsFlags::MS_RDONLY),
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if current.contains(st) {
            keep |= ms;
        }
    }
    mount(
        NONE,
        path,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | keep | flags,
        NONE,
    )
}

/// The mount points at or below `path`, outermost first.
fn mounts_under(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")?;
    let mut points: Vec<PathBuf> = mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .filter(|p| p.starts_with(path))
        .collect();
    points.sort();
    points.dedup();
    Ok(points)
}

/// A mountinfo field with its octal escapes (`\040` for a space) decoded.
pub(super) fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = bytes
                .get(i + 1..i + 4)
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(code);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape(r"/home/a\040b"), "/home/a b");
        assert_eq!(unescape(r"/x\134y"), r"/x\y");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/bad\9"), r"/bad\9");
    }
}
