//! The library's sandbox-aware shell executor (`sandbox::exec::ConfinedShell`,
//! the seed's `RunWithSandbox`): a shell tool of the registry whose calls are
//! decided as confined calls and run so, checked by what happened on disk.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;
use std::sync::Arc;

use zero_policy::call::{Call, Session};
use zero_policy::sandbox::exec::ConfinedShell;
use zero_policy::{Decision, Registry, loader};

#[test]
fn a_confined_shell_tool_runs_what_the_policy_allows_and_the_kernel_holds_it() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("confined-shell-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let ws = root.join("project");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=canary-0b7d\n").unwrap();
    std::fs::write(ws.join("src/a.txt"), "alpha\n").unwrap();

    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let loaded = loader::load_paths(&[repo.join("policies"), repo.join("manifests")]).unwrap();
    let policy = loaded.policy.expect("the shipped policy loads");
    let mut registry = Registry::new(&policy).unwrap();
    let mut shell = ConfinedShell::new(&policy, "command");
    shell.program = Some(PathBuf::from(env!("CARGO_BIN_EXE_zero-policy")));
    registry.attach_executor("bash", Arc::new(shell)).unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = |script: &str| Call {
        tool: "bash".into(),
        args: serde_json::json!({ "command": script }),
        session: Session {
            workspace: ws.display().to_string(),
            ..Session::default()
        },
        confined: true,
    };
    // Code the analysis cannot read: allowed because it is confined; it reads
    // the workspace but not the credential in it, and writes the workspace.
    let run = rt.block_on(registry.dispatch(
        &call("sh -c \"$(printf 'cat src/a.txt; cat .env; echo done > out.txt')\""),
        None,
    ));
    assert_eq!(
        run.evaluation.decision,
        Decision::Allow,
        "{:?}",
        run.evaluation.reason
    );
    let text = run.result.unwrap().text;
    assert!(text.contains("alpha"), "{text}");
    assert!(!text.contains("canary"), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).unwrap(),
        "done\n"
    );
    // A write outside the workspace fails in the kernel.
    let outside = root.join("outside.txt");
    let run = rt.block_on(registry.dispatch(
        &call(&format!(
            "sh -c \"$(printf 'echo x > {}')\"",
            outside.display()
        )),
        None,
    ));
    assert_eq!(run.evaluation.decision, Decision::Allow);
    assert!(run.result.unwrap().is_error);
    assert!(!outside.exists());
    let _ = std::fs::remove_dir_all(&root);
}
