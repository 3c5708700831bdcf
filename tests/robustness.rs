//! Nothing panics on any input: random and mutated YAML, random CEL, random shell.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

use proptest::prelude::*;
use zero_policy::diagnostic::SourceFile;
use zero_policy::dispatch::{Call, Session};
use zero_policy::loader::load_sources;
use zero_policy::registry::Registry;

fn shipped_policy_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/default.yaml"))
        .unwrap()
}

fn load(text: String) {
    let loaded = load_sources(vec![SourceFile::new(Path::new("fuzz.yaml"), text)]);
    // Either a policy or at least one error, never both missing.
    assert!(loaded.policy.is_some() || !loaded.diagnostics.is_empty());
}

const TOOL: &str = "version: 1\ntools:\n  - name: t\n    description: d\n    scope: shell\n    parameters: {type: object, properties: {command: {type: string}, n: {type: integer}}}\n    safety: {side_effect: shell, permission: prompt, reason: r}\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn arbitrary_text_never_panics_the_loader(text in "\\PC{0,200}") {
        load(text);
    }

    #[test]
    fn arbitrary_cel_and_shell_never_panic(when in "[ a-z_.()\\[\\]\"'!&|=<>+0-9,$`;]{0,60}", script in "\\PC{0,80}", n in any::<i64>()) {
        let yaml = format!(
            "{TOOL}rules:\n  - id: r\n    tools: [t]\n    when: {}\n    action: deny\n    reason: r\n",
            serde_json::to_string(&when).unwrap()
        );
        let loaded = load_sources(vec![SourceFile::new(Path::new("p.yaml"), yaml)]);
        if let Some(policy) = loaded.policy {
            let registry = Registry::new(&policy).unwrap();
            let ev = registry.evaluate(&Call {
                tool: "t".into(),
                args: serde_json::json!({"command": script, "n": n}),
                session: Session::default(),
            });
            // A rule that cannot be evaluated fails closed: never allow past a deny rule's error.
            if !ev.errors.is_empty() {
                prop_assert!(ev.decision >= zero_policy::Decision::Deny);
            }
        }
    }

    #[test]
    fn shell_functions_never_panic(script in "\\PC{0,120}") {
        let _ = zero_policy::effects::literal::shell_commands(&script);
        let _ = zero_policy::effects::literal::shell_parses(&script);
    }
}

proptest! {
    // Each case loads the whole shipped policy: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_shipped_policy_never_panics(pos in 0usize..20_000, len in 0usize..40, insert in "[ :\\-\\[\\]{}'\"&*|>\n#a-z0-9]{0,12}") {
        let mut text = shipped_policy_text();
        let pos = pos.min(text.len());
        let end = (pos + len).min(text.len());
        if text.is_char_boundary(pos) && text.is_char_boundary(end) {
            text.replace_range(pos..end, &insert);
            load(text);
        }
    }
}
