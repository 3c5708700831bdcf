//! The shipped command catalog: the files under `catalog/`, embedded in the
//! binary and compiled the first time a call's script is analysed.

use std::sync::LazyLock;

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
    let mut b = Builder {
        loading_builtin_catalog: true,
        ..Builder::default()
    };
    for (name, text) in FILES {
        let file = SourceFile::new(Path::new(name), (*text).to_string());
        if let Some(doc) = b.parse(&file) {
            for c in &doc.commands {
                b.command(&file, c);
            }
        }
    }
    let mut catalog = Catalog::default();
    for (spec, aliases) in b.commands {
        catalog.insert(spec, &aliases);
    }
    Shipped {
        catalog,
        diagnostics: b.diags,
    }
});

/// The shipped catalog.
#[must_use]
pub fn shipped() -> &'static Catalog {
    &SHIPPED.catalog
}

/// Problems in the shipped catalog's files (none in a release; a test checks).
#[must_use]
pub fn shipped_diagnostics() -> &'static [Diagnostic] {
    &SHIPPED.diagnostics
}

/// Whether the shipped catalog describes `program`.
#[must_use]
pub fn is_builtin(program: &str) -> bool {
    shipped().get(program).is_some()
}

/// Whether `name` is one of the shipped catalog files.
#[must_use]
pub fn is_builtin_file(name: &str) -> bool {
    FILES.iter().any(|(f, _)| name.ends_with(f))
}

/// The catalog a policy runs with: the shipped one plus its documents' `commands:`.
#[must_use]
pub fn with_additions(additions: &[(Arc<crate::effects::catalog::Spec>, Vec<String>)]) -> Catalog {
    let mut c = shipped().clone();
    for (spec, aliases) in additions {
        c.insert(Arc::clone(spec), aliases);
    }
    c
}
