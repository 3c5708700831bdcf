//! Where teams work: the generated shell completions and man pages are current,
//! the pre-commit hooks run as pre-commit runs them, and the GitHub Action's steps
//! run on a checkout with no GitHub service.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn committed_completions_and_man_pages_are_current() {
    let mut stale = Vec::new();
    for (path, generated) in zero_policy::cli::completions::committed_files() {
        let committed = std::fs::read_to_string(Path::new(ROOT).join(&path)).unwrap_or_default();
        if committed != generated {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale: {stale:?}; regenerate with `bash .ci/generate.sh`"
    );
    // No page is committed that is not generated.
    let generated: Vec<String> = zero_policy::cli::completions::man_pages()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for entry in std::fs::read_dir(Path::new(ROOT).join("docs/man")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            generated.contains(&name),
            "docs/man/{name} is not generated any more"
        );
    }
}

#[test]
fn completions_name_every_subcommand_and_the_import_agents() {
    let bash = zero_policy::cli::completions::completions(clap_complete::Shell::Bash);
    for word in [
        "lint",
        "explain",
        "test",
        "import",
        "completions",
        "claude-code",
        "gemini-cli",
    ] {
        assert!(bash.contains(word), "bash completions lack `{word}`");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["completions", "fish"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let fish = String::from_utf8(out.stdout).unwrap();
    assert!(fish.contains("complete -c zero-policy"), "{fish}");
    assert!(fish.contains("-a \"import\""), "{fish}");
}
