//! The shipped command catalog: the files under `catalog/`, embedded in the
//! binary. A call compiles only the specifications of the programs it runs,
//! the first time it runs them: the files are indexed when the binary is built
//! (`build.rs` runs `build/catalog_index.rs`, a scan of their `- name:` and
//! `aliases:` lines, checked against a full load by a test), and one entry is
//! parsed on its own when first asked for.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use super::*;
use crate::effects::Catalog;

// FILES, UNITS and NAMES, written by build.rs with `catalog_index::scan`.
include!(concat!(env!("OUT_DIR"), "/catalog_index.rs"));

/// The unit that describes `program`.
fn unit_of(program: &str) -> Option<usize> {
    NAMES
        .binary_search_by(|(n, _)| (*n).cmp(program))
        .ok()
        .map(|i| NAMES[i].1)
}

struct Shipped {
    catalog: Catalog,
    diagnostics: Vec<Diagnostic>,
}

static SHIPPED: LazyLock<Shipped> = LazyLock::new(|| {
    let mut catalog = Catalog::default();
    let mut diagnostics = Vec::new();
    for index in 0..UNITS.len() {
        let (specs, diags) = compile_unit(index);
        diagnostics.extend(diags);
        for (spec, aliases) in specs {
            catalog.insert(spec, &aliases);
        }
    }
    Shipped {
        catalog,
        diagnostics,
    }
});

/// The document cache the shipped catalog's units are read through, once a
/// process that decides one call names it ([`use_cache`]).
static CACHE: std::sync::OnceLock<super::cache::Cache> = std::sync::OnceLock::new();

/// Reads the shipped catalog's units through `cache` from now on; the loader
/// asks it only when the user may write every file the policy was read from
/// (so the entries could change no more than those files could).
pub fn use_cache(cache: super::cache::Cache) {
    let _ = CACHE.set(cache);
}

/// Compiles one unit of the shipped files on its own.
type Compiled = (
    Vec<(Arc<crate::effects::catalog::Spec>, Vec<String>)>,
    Vec<Diagnostic>,
);

fn compile_unit(index: usize) -> Compiled {
    let (fi, start, end) = UNITS[index];
    let (name, text) = FILES[fi];
    // Padded with blank lines so that line numbers stay those of the file.
    let lines_before = text[..start].matches('\n').count();
    let doc = format!(
        "version: 1\ncommands:\n{}{}",
        "\n".repeat(lines_before.saturating_sub(2)),
        &text[start..end]
    );
    let mut b = Builder {
        loading_builtin_catalog: true,
        ..Builder::default()
    };
    let file = SourceFile::new(Path::new(name), doc);
    if let Some(parsed) = b.parse(&file, CACHE.get()) {
        for c in &parsed.commands {
            b.command(&file, c);
        }
    }
    (b.commands, b.diags)
}

/// The whole shipped catalog, every file compiled (for checks and tests; calls
/// use [`lookup`], which compiles one program at a time).
#[must_use]
pub fn shipped() -> &'static Catalog {
    &SHIPPED.catalog
}

type Unit = Vec<(Arc<crate::effects::catalog::Spec>, Vec<String>)>;

static COMPILED: LazyLock<Mutex<HashMap<usize, Arc<Unit>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The shipped specification of `program`, compiled on first use.
#[must_use]
pub fn lookup(program: &str) -> Option<Arc<crate::effects::catalog::Spec>> {
    let index = unit_of(program)?;
    let cached = COMPILED.lock().ok().and_then(|c| c.get(&index).cloned());
    let unit = match cached {
        Some(u) => u,
        None => {
            let unit = Arc::new(compile_unit(index).0);
            if let Ok(mut cache) = COMPILED.lock() {
                cache.insert(index, Arc::clone(&unit));
            }
            unit
        }
    };
    unit.iter()
        .find(|(spec, aliases)| spec.name == program || aliases.iter().any(|a| a == program))
        .map(|(spec, _)| Arc::clone(spec))
}

/// The names the scan of the shipped files finds (a test checks them against a full load).
#[must_use]
pub fn indexed_names() -> Vec<String> {
    NAMES.iter().map(|(n, _)| (*n).to_string()).collect()
}

/// Problems in the shipped catalog's files (none in a release; a test checks).
#[must_use]
pub fn shipped_diagnostics() -> &'static [Diagnostic] {
    &SHIPPED.diagnostics
}

/// Whether the shipped catalog describes `program`.
#[must_use]
pub fn is_builtin(program: &str) -> bool {
    unit_of(program).is_some()
}

/// Whether `name` is one of the shipped catalog files.
#[must_use]
pub fn is_builtin_file(name: &str) -> bool {
    FILES.iter().any(|(f, _)| name.ends_with(f))
}

/// The catalog a policy runs with: the shipped one plus its documents' `commands:`.
#[must_use]
pub fn with_additions(additions: &[(Arc<crate::effects::catalog::Spec>, Vec<String>)]) -> Catalog {
    Catalog::with_additions(lookup, additions)
}
