//! Embeds the shipped command catalog: every file of `catalog/`, and the index
//! of its entries by program name (`build/catalog_index.rs`), so that a
//! process finds one program's entry without scanning the files; and the
//! fingerprint of the sources (`ZP_SOURCE_FINGERPRINT`), which keys the
//! document cache so that a build never reads another build's cache.

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

#[path = "build/catalog_index.rs"]
mod catalog_index;

fn main() -> Result<(), Box<dyn Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let dir = root.join("catalog");
    // The folder, for files added or removed, and each file by name, so that
    // an edit of any one file reruns the build whatever cargo makes of a
    // folder's times.
    println!("cargo::rerun-if-changed=catalog");
    println!("cargo::rerun-if-changed=build/catalog_index.rs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.retain(|n| n.ends_with(".yaml"));
    names.sort();
    for n in &names {
        println!("cargo::rerun-if-changed=catalog/{n}");
    }
    let texts: Vec<String> = names
        .iter()
        .map(|n| std::fs::read_to_string(dir.join(n)))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let units = catalog_index::scan(&refs);

    let mut out = String::new();
    out.push_str("/// The shipped catalog files, by their path in the repository.\n");
    out.push_str("pub const FILES: &[(&str, &str)] = &[\n");
    for n in &names {
        let path = dir.join(n);
        let path = path.to_str().ok_or("a catalog path is not UTF-8")?;
        writeln!(
            out,
            "    ({:?}, include_str!({path:?})),",
            format!("catalog/{n}")
        )?;
    }
    out.push_str("];\n\n");
    out.push_str("/// Each unit of the files: (file, start, end).\n");
    out.push_str("const UNITS: &[(usize, usize, usize)] = &[\n");
    for u in &units {
        writeln!(out, "    ({}, {}, {}),", u.file, u.start, u.end)?;
    }
    out.push_str("];\n\n");
    // The first unit that names a program describes it.
    let mut by_name: Vec<(&str, usize)> = units
        .iter()
        .enumerate()
        .flat_map(|(k, u)| u.names.iter().map(move |n| (n.as_str(), k)))
        .collect();
    by_name.sort();
    by_name.dedup_by(|later, first| later.0 == first.0);
    out.push_str("/// Every program name and alias, sorted, with its unit.\n");
    out.push_str("const NAMES: &[(&str, usize)] = &[\n");
    for (n, k) in by_name {
        writeln!(out, "    ({n:?}, {k}),")?;
    }
    out.push_str("];\n");
    std::fs::write(
        PathBuf::from(std::env::var("OUT_DIR")?).join("catalog_index.rs"),
        out,
    )?;
    // Whatever changes how a text is read: the sources, the build, and the
    // crates and features it is built with.
    let mut hash = Fnv::default();
    for input in ["src", "build", "build.rs", "Cargo.toml", "Cargo.lock"] {
        println!("cargo::rerun-if-changed={input}");
        let path = root.join(input);
        if path.is_dir() {
            hash.tree(&path)?;
        } else if let Ok(bytes) = std::fs::read(&path) {
            hash.write(&bytes);
        }
    }
    println!("cargo::rustc-env=ZP_SOURCE_FINGERPRINT={:016x}", hash.0);
    hot_functions_first(&root)?;
    Ok(())
}

/// Asks the linker to place the functions a hook call executes next to each
/// other (`build/hot-functions.txt`, written by `build/hot-functions.sh`): a
/// process maps code in windows around each page it touches, so the hot path
/// in one place is fewer pages resident and fewer page faults. Only for release
/// builds linked by Rust's own LLD (the default for x86_64 Linux since Rust
/// 1.90); another linker, or `ZERO_POLICY_LINK_ORDER=off`, links as usual.
fn hot_functions_first(root: &std::path::Path) -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-env-changed=ZERO_POLICY_LINK_ORDER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let rustflags = var("CARGO_ENCODED_RUSTFLAGS");
    let default_linker = var("TARGET") == "x86_64-unknown-linux-gnu"
        && std::env::var_os("RUSTC_LINKER").is_none()
        && !["linker", "fuse-ld", "link-self-contained"]
            .iter()
            .any(|k| rustflags.contains(k))
        && rustc_minor().is_some_and(|minor| minor >= 90);
    if var("PROFILE") != "release" || var("ZERO_POLICY_LINK_ORDER") == "off" || !default_linker {
        return Ok(());
    }
    let order = root.join("build/hot-functions.txt");
    if !order.is_file() {
        return Ok(());
    }
    // `-Wl,` splits at commas: such a path links as usual.
    let Some(order) = order.to_str().filter(|p| !p.contains(',')) else {
        return Ok(());
    };
    println!("cargo::rustc-link-arg-bin=zero-policy=-Wl,--symbol-ordering-file={order}");
    // Names of another build of the code are not errors: they are skipped.
    println!("cargo::rustc-link-arg-bin=zero-policy=-Wl,--no-warn-symbol-ordering");
    // Relative relocations packed as bitmaps (DT_RELR): the dynamic linker reads
    // a few kilobytes instead of 660 KB of RELA entries at every start. Only
    // where the C library building it reads them (glibc 2.36 and later); the
    // binary then needs such a C library to run.
    if glibc_minor().is_some_and(|minor| minor >= 36) {
        println!("cargo::rustc-link-arg-bin=zero-policy=-Wl,-z,pack-relative-relocs");
    }
    Ok(())
}

/// The minor version of the GNU C library on the building machine
/// (`getconf GNU_LIBC_VERSION` says `glibc 2.36`).
fn glibc_minor() -> Option<u32> {
    let out = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    (parts.next()? == "2").then_some(())?;
    parts.next()?.parse().ok()
}

/// The minor version of the compiler building the crate (`rustc 1.95.0 …`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

/// FNV-1a, 64 bits: enough to tell one build's sources from another's.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Every file under `dir`, in name order, with its path.
    fn tree(&mut self, dir: &std::path::Path) -> Result<(), Box<dyn Error>> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for path in entries {
            if path.is_dir() {
                self.tree(&path)?;
            } else {
                self.write(path.to_string_lossy().as_bytes());
                self.write(&std::fs::read(&path)?);
            }
        }
        Ok(())
    }
}
