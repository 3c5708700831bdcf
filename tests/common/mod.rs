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

/// A fixture of the gateway's tests (`tests/fixtures/gateway/NAME`), as a string.
pub fn gateway_fixture(name: &str) -> String {
    require(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gateway")
            .join(name),
    )
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

/// A proptest configuration of `cases` cases. `salt` gives each test its own
/// search when CI fixes the seed (`PROPTEST_RNG_SEED`): the same seed would
/// replay one search in every test.
pub fn proptest_config(cases: u32, salt: u64) -> proptest::test_runner::Config {
    let mut c = proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    };
    if let proptest::test_runner::RngSeed::Fixed(seed) = c.rng_seed {
        c.rng_seed = proptest::test_runner::RngSeed::Fixed(seed.wrapping_add(salt));
    }
    c
}

/// JSON values over `leaf`: arrays, and objects keyed from `keys`, up to
/// `depth` levels and about `size` values, each with fewer than `items` members.
pub fn json_tree(
    leaf: proptest::strategy::BoxedStrategy<serde_json::Value>,
    keys: &'static [&'static str],
    (depth, size, items): (u32, u32, usize),
) -> proptest::strategy::BoxedStrategy<serde_json::Value> {
    use proptest::prelude::*;
    leaf.prop_recursive(depth, size, items as u32, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..items).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(prop::sample::select(keys), inner, 0..items).prop_map(
                |m| serde_json::Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )
            ),
        ]
    })
    .boxed()
}

/// Runs `zero-policy hook claude-code` on one `Bash` event, in `dir` (its
/// `work` folder, its `home` as HOME), with the shipped policy and the
/// settings file `dir/settings/log.yaml` holding `log_settings` (the YAML under
/// `settings.log:`, indented by four).
#[allow(clippy::panic, reason = "a test helper: a failure is the test's")]
pub fn claude_bash_hook(dir: &Path, log_settings: &str, command: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    for sub in ["settings", "home", "work"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap_or_else(|e| panic!("cannot make {sub}: {e}"));
    }
    std::fs::write(
        dir.join("settings/log.yaml"),
        format!("version: 1\nsettings:\n  log:\n{log_settings}"),
    )
    .unwrap_or_else(|e| panic!("cannot write the settings: {e}"));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["hook", "claude-code"])
        .arg(repo.join("policies"))
        .arg(repo.join("manifests"))
        .arg(dir.join("settings"))
        .current_dir(dir.join("work"))
        .env("HOME", dir.join("home"))
        .env_remove("ZERO_POLICY_PATH")
        .env_remove("ZERO_POLICY_BUNDLE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the hook: {e}"));
    let event = serde_json::json!({
        "session_id": "s1",
        "cwd": dir.join("work"),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    });
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(event.to_string().as_bytes());
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("the hook did not finish: {e}"))
}

mod certs;
#[allow(unused_imports, reason = "each test binary uses a subset")]
pub use certs::test_certificates;
