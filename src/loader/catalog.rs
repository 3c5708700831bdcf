//! The shipped command catalog: the files under `catalog/`, embedded in the
//! binary. A call compiles only the specifications of the programs it runs,
//! the first time it runs them: the files are indexed by a scan of their
//! `- name:` and `aliases:` lines (checked against a full load by a test), and
//! one entry is parsed on its own when first asked for.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use super::*;
use crate::effects::Catalog;

/// The shipped catalog files, by their path in the repository.
pub const FILES: &[(&str, &str)] = &[
    (
        "catalog/archive.yaml",
        include_str!("../../catalog/archive.yaml"),
    ),
    (
        "catalog/build.yaml",
        include_str!("../../catalog/build.yaml"),
    ),
    (
        "catalog/coreutils.yaml",
        include_str!("../../catalog/coreutils.yaml"),
    ),
    ("catalog/data.yaml", include_str!("../../catalog/data.yaml")),
    (
        "catalog/findutils.yaml",
        include_str!("../../catalog/findutils.yaml"),
    ),
    ("catalog/git.yaml", include_str!("../../catalog/git.yaml")),
    (
        "catalog/infra.yaml",
        include_str!("../../catalog/infra.yaml"),
    ),
    (
        "catalog/interpreters.yaml",
        include_str!("../../catalog/interpreters.yaml"),
    ),
    (
        "catalog/network.yaml",
        include_str!("../../catalog/network.yaml"),
    ),
    (
        "catalog/shell.yaml",
        include_str!("../../catalog/shell.yaml"),
    ),
    (
        "catalog/system.yaml",
        include_str!("../../catalog/system.yaml"),
    ),
    ("catalog/text.yaml", include_str!("../../catalog/text.yaml")),
    (
        "catalog/wrappers.yaml",
        include_str!("../../catalog/wrappers.yaml"),
    ),
];

struct Shipped {
    catalog: Catalog,
    diagnostics: Vec<Diagnostic>,
}

static SHIPPED: LazyLock<Shipped> = LazyLock::new(|| {
    let mut catalog = Catalog::default();
    let mut diagnostics = Vec::new();
    for index in 0..INDEX.entries.len() {
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

/// Compiles one unit of the shipped files on its own.
type Compiled = (
    Vec<(Arc<crate::effects::catalog::Spec>, Vec<String>)>,
    Vec<Diagnostic>,
);

fn compile_unit(index: usize) -> Compiled {
    let (fi, start, end) = INDEX.entries[index];
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
    if let Some(parsed) = b.parse(&file) {
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

/// Where each top-level entry of the shipped files is: (file, start, end).
struct Index {
    entries: Vec<(usize, usize, usize)>,
    by_name: HashMap<String, usize>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut entries = Vec::new();
    let mut by_name = HashMap::new();
    for (fi, (_, text)) in FILES.iter().enumerate() {
        let starts: Vec<usize> = text
            .match_indices("\n  - name: ")
            .map(|(i, _)| i + 1)
            .collect();
        // Entries joined by YAML anchors (`&x` in one, `*x` in a later one) are
        // parsed together, as one unit: (start, end, anchors, names).
        let mut units: Vec<(usize, usize, Vec<String>, Vec<String>)> = Vec::new();
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(text.len());
            let entry = &text[start..end];
            let names = entry_names(entry);
            let uses = yaml_names(entry, '*');
            let joins = units
                .iter()
                .rposition(|(_, _, anchors, _)| uses.iter().any(|u| anchors.contains(u)));
            match joins {
                Some(first) => {
                    let merged_start = units[first].0;
                    let mut anchors = Vec::new();
                    let mut all_names = Vec::new();
                    for (_, _, a, n) in units.drain(first..) {
                        anchors.extend(a);
                        all_names.extend(n);
                    }
                    anchors.extend(yaml_names(entry, '&'));
                    all_names.extend(names);
                    units.push((merged_start, end, anchors, all_names));
                }
                None => units.push((start, end, yaml_names(entry, '&'), names)),
            }
        }
        for (start, end, _, names) in units {
            let index = entries.len();
            entries.push((fi, start, end));
            for name in names {
                by_name.entry(name).or_insert(index);
            }
        }
    }
    Index { entries, by_name }
});

/// The anchor (`&`) or alias (`*`) names an entry's text holds.
fn yaml_names(entry: &str, sigil: char) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in entry.match_indices(sigil) {
        let before = entry[..i].chars().next_back();
        if !matches!(before, Some(' ' | '[' | ',' | '\n')) {
            continue;
        }
        let name: String = entry[i + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The name and aliases of one entry, from its `- name:` and `aliases:` lines.
fn entry_names(entry: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in entry.lines() {
        if let Some(n) = line.strip_prefix("  - name: ") {
            out.push(unquote(n.split(" #").next().unwrap_or(n).trim()));
        } else if let Some(list) = line.strip_prefix("    aliases: ") {
            let list = list.split(" #").next().unwrap_or(list).trim();
            if let Some(inner) = list.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                out.extend(
                    inner
                        .split(',')
                        .map(|a| unquote(a.trim()))
                        .filter(|a| !a.is_empty()),
                );
            }
        }
    }
    out
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'').to_string()
}

type Unit = Vec<(Arc<crate::effects::catalog::Spec>, Vec<String>)>;

static COMPILED: LazyLock<Mutex<HashMap<usize, Arc<Unit>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The shipped specification of `program`, compiled on first use.
#[must_use]
pub fn lookup(program: &str) -> Option<Arc<crate::effects::catalog::Spec>> {
    let &index = INDEX.by_name.get(program)?;
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
    let mut v: Vec<String> = INDEX.by_name.keys().cloned().collect();
    v.sort();
    v
}

/// Problems in the shipped catalog's files (none in a release; a test checks).
#[must_use]
pub fn shipped_diagnostics() -> &'static [Diagnostic] {
    &SHIPPED.diagnostics
}

/// Whether the shipped catalog describes `program`.
#[must_use]
pub fn is_builtin(program: &str) -> bool {
    INDEX.by_name.contains_key(program)
}

/// Whether `name` is one of the shipped catalog files.
#[must_use]
pub fn is_builtin_file(name: &str) -> bool {
    FILES.iter().any(|(f, _)| name.ends_with(f))
}

/// The catalog a policy runs with: the shipped one plus its documents' `commands:`.
#[must_use]
pub fn with_additions(additions: &[(Arc<crate::effects::catalog::Spec>, Vec<String>)]) -> Catalog {
    let mut c = Catalog::with_fallback(lookup);
    for (spec, aliases) in additions {
        c.insert(Arc::clone(spec), aliases);
    }
    c
}
