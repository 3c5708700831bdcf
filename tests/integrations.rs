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

// ── pre-commit ───────────────────────────────────────────────────────────────

fn pre_commit() -> String {
    let path = Path::new(&common_deps()).join("venv/bin/pre-commit");
    assert!(
        path.exists(),
        "{} is missing: run `.ci/mcp-deps.sh` (it installs pre-commit into the test venv)",
        path.display()
    );
    path.display().to_string()
}

fn common_deps() -> String {
    std::env::var("ZP_TEST_DEPS").unwrap_or_else(|_| format!("{ROOT}/target/test-deps"))
}

fn run(cmd: &mut std::process::Command) -> (i32, String) {
    let out = cmd.output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

fn git(dir: &Path, args: &[&str]) {
    let (code, out) = run(std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com"));
    assert_eq!(code, 0, "git {args:?}: {out}");
}

/// A project with the shipped policies and manifests, as a team would keep them.
fn project(name: &str, broken: bool) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["policies", "manifests"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for entry in std::fs::read_dir(Path::new(ROOT).join(sub)).unwrap() {
            let p = entry.unwrap().path();
            std::fs::copy(&p, dir.join(sub).join(p.file_name().unwrap())).unwrap();
        }
    }
    if broken {
        std::fs::write(
            dir.join("policies/team.yaml"),
            "version: 1\nrules:\n  - id: no-curl\n    when: 'call.commands.exists(c, c.program == \"curl\"'\n    action: deny\n    reason: no curl\n",
        )
        .unwrap();
    }
    dir
}

/// The hooks repository: `.pre-commit-hooks.yaml` committed in a repository of its own.
fn hooks_repo() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hooks-repo");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        Path::new(ROOT).join(".pre-commit-hooks.yaml"),
        dir.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-qm", "hooks"]);
    dir
}

fn path_with_binary() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_zero-policy"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    format!("{bin}:{}", std::env::var("PATH").unwrap_or_default())
}

#[test]
fn pre_commit_runs_the_system_hooks_and_fails_on_a_broken_policy() {
    let hooks = hooks_repo();
    let pc_home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-home");
    for (broken, want) in [(false, 0), (true, 1)] {
        let dir = project(if broken { "pc-broken" } else { "pc-clean" }, broken);
        git(&dir, &["init", "-q"]);
        git(&dir, &["add", "."]);
        for hook in ["zero-policy-lint-system", "zero-policy-test-system"] {
            let (code, out) = run(std::process::Command::new(pre_commit())
                .args([
                    "try-repo",
                    &hooks.display().to_string(),
                    hook,
                    "--all-files",
                    "--color",
                    "never",
                ])
                .current_dir(&dir)
                .env("PATH", path_with_binary())
                .env("PRE_COMMIT_HOME", &pc_home)
                .env("NO_COLOR", "1"));
            assert_eq!(code, want, "{hook} on {}: {out}", dir.display());
            let name = if hook.contains("lint") {
                "zero-policy lint"
            } else {
                "zero-policy test"
            };
            if broken {
                assert!(out.contains(name) && out.contains("Failed"), "{out}");
            } else {
                assert!(out.contains("Passed"), "{out}");
            }
            if broken && hook.contains("lint") {
                assert!(
                    out.contains("cel-syntax") && out.contains("team.yaml"),
                    "{out}"
                );
            }
        }
    }
}

#[test]
fn the_rust_hooks_run_the_same_commands_as_the_system_hooks() {
    // pre-commit's `rust` hooks build zero-policy with `cargo install` (minutes on a
    // fresh machine), so they are not run here; their entries must be the ones the
    // system hooks run above.
    let text = std::fs::read_to_string(Path::new(ROOT).join(".pre-commit-hooks.yaml")).unwrap();
    let hooks: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let hooks = hooks.as_array().unwrap();
    let by_id = |id: &str| hooks.iter().find(|h| h["id"] == id).unwrap().clone();
    for base in ["zero-policy-lint", "zero-policy-test"] {
        let rust = by_id(base);
        let system = by_id(&format!("{base}-system"));
        assert_eq!(rust["language"], "rust");
        assert_eq!(system["language"], "system");
        assert_eq!(rust["entry"], system["entry"]);
        assert_eq!(rust["pass_filenames"], false);
    }
}

// ── the GitHub Action ────────────────────────────────────────────────────────

/// Runs the Action's steps as the runner does, with no GitHub service: `run:`
/// steps through `bash --noprofile --norc -eo pipefail`, `${{ inputs.* }}` from
/// the inputs given (else their defaults), `$GITHUB_OUTPUT` and `$GITHUB_PATH`
/// files honoured between steps. A `uses:` step is not run; its `with:` values
/// are resolved and returned, to be checked.
struct ActionRun {
    /// (step name, exit code) of each `run:` step that ran.
    steps: Vec<(String, i32, String)>,
    /// The `with:` of each `uses:` step reached, resolved.
    uses: Vec<(String, serde_json::Map<String, serde_json::Value>)>,
}

fn run_action(workspace: &Path, given: &[(&str, &str)]) -> ActionRun {
    let text = std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap();
    let action: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(action["runs"]["using"], "composite");
    let temp = workspace.join(".runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    let output_file = temp.join("github_output");
    let path_file = temp.join("github_path");
    let mut inputs = std::collections::BTreeMap::new();
    for (k, v) in action["inputs"].as_object().unwrap() {
        inputs.insert(k.clone(), v["default"].as_str().unwrap_or("").to_string());
    }
    for (k, v) in given {
        assert!(inputs.contains_key(*k), "no input `{k}`");
        inputs.insert((*k).to_string(), (*v).to_string());
    }
    let outputs = |step: &str| -> std::collections::BTreeMap<String, String> {
        let _ = step;
        std::fs::read_to_string(&output_file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let resolve = |s: &str| -> String {
        let re = regex::Regex::new(r"\$\{\{\s*([^}]*?)\s*\}\}").unwrap();
        re.replace_all(s, |c: &regex::Captures| {
            let expr = &c[1];
            if let Some(name) = expr.strip_prefix("inputs.") {
                inputs[name].clone()
            } else if let Some(rest) = expr.strip_prefix("steps.") {
                let key = rest.rsplit('.').next().unwrap();
                outputs(rest).get(key).cloned().unwrap_or_default()
            } else {
                // An expression the runner does not evaluate: keep it visible, so the
                // assertions on the resolved values fail.
                format!("<unevaluated {expr}>")
            }
        })
        .into_owned()
    };
    let mut run = ActionRun {
        steps: Vec::new(),
        uses: Vec::new(),
    };
    let mut failed = false;
    for step in action["runs"]["steps"].as_array().unwrap() {
        let name = step["name"].as_str().unwrap().to_string();
        let condition = step["if"].as_str().unwrap_or("");
        // `always()` steps run after a failure; others do not.
        if failed && !condition.contains("always()") {
            continue;
        }
        if let Some(uses) = step["uses"].as_str() {
            let mut with = serde_json::Map::new();
            for (k, v) in step["with"].as_object().unwrap() {
                with.insert(
                    k.clone(),
                    serde_json::Value::String(resolve(v.as_str().unwrap())),
                );
            }
            run.uses.push((uses.to_string(), with));
            continue;
        }
        assert_eq!(step["shell"], "bash", "{name}");
        let script = temp.join("step.sh");
        std::fs::write(&script, step["run"].as_str().unwrap()).unwrap();
        let extra: Vec<String> = std::fs::read_to_string(&path_file)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        let mut path = extra.join(":");
        path.push(':');
        path.push_str(&std::env::var("PATH").unwrap_or_default());
        let mut cmd = std::process::Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(workspace)
            .env("PATH", path)
            .env("GITHUB_ACTION_PATH", ROOT)
            .env("GITHUB_WORKSPACE", workspace)
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_PATH", &path_file)
            .env("RUNNER_TEMP", &temp)
            .env("NO_COLOR", "1");
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                cmd.env(k, resolve(v.as_str().unwrap()));
            }
        }
        let (code, out) = run_cmd(&mut cmd);
        if code != 0 {
            failed = true;
        }
        run.steps.push((name, code, out));
    }
    run
}

fn run_cmd(cmd: &mut std::process::Command) -> (i32, String) {
    run(cmd)
}

fn sarif_validator() -> jsonschema::Validator {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("tests/fixtures/sarif-schema-2.1.0.json"))
            .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft4::options().build(&schema).unwrap()
}

fn zero_policy_on_path() -> bool {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .any(|d| Path::new(d).join("zero-policy").exists())
}

#[test]
fn action_steps_pass_on_a_clean_checkout_and_hand_code_scanning_valid_sarif() {
    assert!(
        !zero_policy_on_path(),
        "the test needs a PATH without zero-policy"
    );
    let dir = project("action-clean", false);
    let run = run_action(&dir, &[("binary", env!("CARGO_BIN_EXE_zero-policy"))]);
    let names: Vec<(&str, i32)> = run.steps.iter().map(|(n, c, _)| (n.as_str(), *c)).collect();
    assert_eq!(
        names,
        [
            ("Install zero-policy", 0),
            ("Lint (SARIF for code scanning)", 0),
            ("Lint", 0),
            ("Test", 0)
        ],
        "{:#?}",
        run.steps
    );
    let test_out = &run.steps[3].2;
    assert!(test_out.contains(" passed, 0 failed"), "{test_out}");
    let (uses, with) = &run.uses[0];
    assert!(
        uses.starts_with("github/codeql-action/upload-sarif@"),
        "{uses}"
    );
    let sarif_path = with["sarif_file"].as_str().unwrap();
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_path).unwrap()).unwrap();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 0);
}

#[test]
fn action_steps_report_a_broken_policy_to_code_scanning_and_fail() {
    let dir = project("action-broken", true);
    let run = run_action(
        &dir,
        &[
            ("binary", env!("CARGO_BIN_EXE_zero-policy")),
            ("paths", "policies manifests"),
        ],
    );
    let names: Vec<(&str, i32)> = run.steps.iter().map(|(n, c, _)| (n.as_str(), *c)).collect();
    // The SARIF step records findings without failing; the annotations step fails
    // the job; the tests do not run after it.
    assert_eq!(
        names,
        [
            ("Install zero-policy", 0),
            ("Lint (SARIF for code scanning)", 0),
            ("Lint", 1)
        ],
        "{:#?}",
        run.steps
    );
    assert!(
        run.steps[2]
            .2
            .contains("::error file=policies/team.yaml,line=4"),
        "{}",
        run.steps[2].2
    );
    let sarif_path = run.uses[0].1["sarif_file"].as_str().unwrap().to_string();
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_path).unwrap()).unwrap();
    assert!(sarif_validator().is_valid(&sarif));
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(
        results.iter().any(|r| r["ruleId"] == "cel-syntax"),
        "{results:?}"
    );
}

#[test]
fn action_install_step_refuses_a_missing_binary() {
    let dir = project("action-missing", false);
    let run = run_action(&dir, &[("binary", "/nonexistent/zero-policy")]);
    assert_eq!(run.steps.len(), 1, "{:#?}", run.steps);
    assert_eq!(run.steps[0].1, 2);
    assert!(
        run.steps[0].2.contains("::error::zero-policy binary"),
        "{}",
        run.steps[0].2
    );
}

#[test]
fn the_example_workflow_uses_only_inputs_the_action_declares() {
    let action: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap(),
    )
    .unwrap();
    let wf: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("docs/examples/zero-policy.yml")).unwrap(),
    )
    .unwrap();
    let steps = wf["jobs"]["policy"]["steps"].as_array().unwrap();
    let ours = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.contains("/zero-policy@"))
        })
        .unwrap();
    for key in ours["with"].as_object().unwrap().keys() {
        assert!(
            action["inputs"].get(key).is_some(),
            "the example passes `{key}`, which the action does not declare"
        );
    }
    assert_eq!(wf["permissions"]["security-events"], "write");
}
