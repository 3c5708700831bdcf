//! The built-in default: the shipped `policies/` and `manifests/`, embedded in the binary.
//!
//! Used when a command is given no paths and finds neither folder where it
//! runs, and by `hook` after `$ZERO_POLICY_PATH` and `~/.config/zero-policy/`.
//! A test checks that every file under `policies/` and `manifests/` is listed
//! here, so a new shipped file cannot be left out by accident.

use std::path::Path;

use crate::diagnostic::SourceFile;

/// Every shipped file: its path relative to the repository, and its text.
pub const FILES: &[(&str, &str)] = &[
    (
        "manifests/claude-code.yaml",
        include_str!("../manifests/claude-code.yaml"),
    ),
    (
        "manifests/codex.yaml",
        include_str!("../manifests/codex.yaml"),
    ),
    (
        "manifests/copilot.yaml",
        include_str!("../manifests/copilot.yaml"),
    ),
    (
        "manifests/cursor.yaml",
        include_str!("../manifests/cursor.yaml"),
    ),
    (
        "manifests/gemini-cli.yaml",
        include_str!("../manifests/gemini-cli.yaml"),
    ),
    (
        "manifests/mcp-servers.yaml",
        include_str!("../manifests/mcp-servers.yaml"),
    ),
    (
        "manifests/zero-core.yaml",
        include_str!("../manifests/zero-core.yaml"),
    ),
    (
        "policies/default.test.yaml",
        include_str!("../policies/default.test.yaml"),
    ),
    (
        "policies/default.yaml",
        include_str!("../policies/default.yaml"),
    ),
];

/// What the CLI says on stderr when it falls back to the built-in default.
pub const NOTICE: &str = "using the built-in default policy";

/// The embedded files as sources for [`crate::loader::load_sources`], in path order.
#[must_use]
pub fn sources() -> Vec<SourceFile> {
    let mut files: Vec<SourceFile> = FILES
        .iter()
        .map(|(name, text)| SourceFile::new(Path::new(name), (*text).to_string()))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::collections::BTreeSet;
    use std::path::Path;

    #[test]
    fn every_shipped_file_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let on_disk: BTreeSet<String> =
            crate::loader::find_files(&[root.join("policies"), root.join("manifests")])
                .unwrap()
                .into_iter()
                .map(|p| {
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/")
                })
                .collect();
        let embedded: BTreeSet<String> =
            super::FILES.iter().map(|(n, _)| (*n).to_string()).collect();
        assert_eq!(
            on_disk, embedded,
            "src/builtin.rs must list every file under policies/ and manifests/"
        );
    }

    #[test]
    fn the_builtin_default_loads_without_errors() {
        let loaded = crate::loader::load_sources(super::sources());
        assert!(
            loaded.policy.is_some(),
            "the built-in default has errors: {:?}",
            loaded.diagnostics
        );
    }
}
