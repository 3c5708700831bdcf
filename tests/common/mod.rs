//! Locating the real MCP servers the tests talk to, installed by `.ci/mcp-deps.sh`
//! into `$ZP_TEST_DEPS` (default `<repo>/target/test-deps`).
#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};

/// Where `.ci/mcp-deps.sh` installed the servers.
pub fn deps_dir() -> PathBuf {
    match std::env::var_os("ZP_TEST_DEPS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-deps"),
    }
}

/// The path as a string; fails the test, saying what to run, when it is missing.
pub fn require(path: PathBuf) -> String {
    assert!(
        path.exists(),
        "{} is missing: run `.ci/mcp-deps.sh` first (it installs the MCP test servers \
         into $ZP_TEST_DEPS, default <repo>/target/test-deps)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// The venv's Python, with PyPI `mcp`.
pub fn python() -> String {
    require(deps_dir().join("venv/bin/python"))
}

/// server-everything's entry point, run with `node`.
pub fn everything_js() -> String {
    require(
        deps_dir().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    )
}

/// A Python fixture server under `tests/fixtures/mcp/`.
pub fn fixture(name: &str) -> String {
    require(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mcp")
            .join(name),
    )
}
