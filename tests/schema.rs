//! The committed JSON Schema is the one generated from the Rust types, and
//! every shipped file follows it.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};

const SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/schemas/zero-policy.schema.json"
);

fn shipped_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    zero_policy::loader::find_files(&[root.join("policies"), root.join("manifests")]).unwrap()
}

#[test]
fn committed_schema_is_current() {
    let committed = std::fs::read_to_string(SCHEMA_PATH).unwrap();
    let generated = zero_policy::cli::schema::schema_text();
    assert!(
        committed == generated,
        "schemas/zero-policy.schema.json is stale: run `cargo run -- schema > schemas/zero-policy.schema.json`"
    );
}

#[test]
fn schema_command_prints_the_schema() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .arg("schema")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(SCHEMA_PATH).unwrap()
    );
}

#[test]
fn every_shipped_file_validates_against_the_schema_and_names_it() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SCHEMA_PATH).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let files = shipped_files();
    assert!(
        files.len() >= 4,
        "expected the shipped policies and manifests, got {files:?}"
    );
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            text.starts_with(
                "# yaml-language-server: $schema=../schemas/zero-policy.schema.json\n"
            ),
            "{} does not start with the yaml-language-server comment",
            f.display()
        );
        let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
}

#[test]
fn schema_rejects_what_the_loader_rejects() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(SCHEMA_PATH).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    // An unknown top-level key, a sandbox rule that allows, a relax rule that prompts.
    for bad in [
        serde_json::json!({"version": 1, "rulez": []}),
        serde_json::json!({"version": 2}),
        serde_json::json!({"version": 1, "rules": [{"id": "x", "when": "true", "action": "allow", "reason": "r"}]}),
        serde_json::json!({"version": 1, "relax": [{"id": "x", "when": "true", "to": "prompt"}]}),
    ] {
        assert!(!validator.is_valid(&bad), "schema accepted {bad}");
    }
}
