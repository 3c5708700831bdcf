//! Nothing panics on any input: random bytes, random YAML-ish structures, mutated
//! policies, random CEL and random shell. Every input ends in a coded diagnostic
//! or a policy, and every call in a decision.
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
    assert!(loaded.policy.is_some() || zero_policy::diagnostic::has_errors(&loaded.diagnostics));
    for d in &loaded.diagnostics {
        // Every diagnostic renders, in every format, with nothing unescaped.
        let human = zero_policy::diagnostic::render_human(d, false);
        assert!(human.contains(d.code.as_str()));
        let line = zero_policy::output::github_line(d);
        assert!(!line.contains('\u{1b}') && !human.contains('\u{1b}'));
    }
}

/// YAML-ish text: nested mappings and sequences, in block or flow style, with
/// keys from the format and scalars of every kind.
fn yamlish() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "version",
        "tools",
        "rules",
        "relax",
        "tests",
        "servers",
        "settings",
        "lists",
        "commands",
        "name",
        "description",
        "scope",
        "parameters",
        "safety",
        "permission",
        "side_effect",
        "reason",
        "id",
        "when",
        "action",
        "to",
        "call",
        "args",
        "expect",
        "decision",
        "examples",
        "match",
        "no_match",
        "effects",
        "shell",
        "type",
        "properties",
        "<<",
        "&a x",
        "*a",
        "? k",
    ]);
    let scalar = prop_oneof![
        Just("1".to_string()),
        Just("true".to_string()),
        Just("~".to_string()),
        Just("deny".to_string()),
        Just("prompt".to_string()),
        Just("'args.command == \"x\"'".to_string()),
        Just("*a".to_string()),
        Just("&a v".to_string()),
        Just("!!str x".to_string()),
        Just("!x y".to_string()),
        Just(".nan".to_string()),
        Just("99999999999999999999".to_string()),
        "[a-z0-9 _.:*]{0,12}",
    ];
    let leaf = scalar.prop_map(|s| (s, false));
    leaf.prop_recursive(5, 48, 6, move |inner| {
        let key = key.clone();
        prop_oneof![
            // A block mapping: every line of the value indented under its key.
            prop::collection::vec((key.clone(), inner.clone()), 0..6).prop_map(|entries| {
                let mut s = String::new();
                for (k, (v, block)) in entries {
                    if block {
                        s.push_str(&format!("{k}:\n"));
                        for line in v.lines() {
                            s.push_str(&format!("  {line}\n"));
                        }
                    } else {
                        s.push_str(&format!("{k}: {v}\n"));
                    }
                }
                (s, true)
            }),
            // A block sequence.
            prop::collection::vec(inner.clone(), 0..6).prop_map(|items| {
                let mut s = String::new();
                for (v, block) in items {
                    let mut lines = v.lines();
                    let first = lines.next().unwrap_or("");
                    s.push_str(&format!("- {first}\n"));
                    for line in lines {
                        s.push_str(&format!("  {line}\n"));
                    }
                    let _ = block;
                }
                (s, true)
            }),
            // Flow style.
            prop::collection::vec((key, inner), 0..5).prop_map(|entries| {
                let items: Vec<String> = entries
                    .into_iter()
                    .filter(|(_, (_, block))| !block)
                    .map(|(k, (v, _))| format!("{k}: {v}"))
                    .collect();
                (format!("{{{}}}", items.join(", ")), false)
            }),
        ]
    })
    .prop_map(|(s, _)| s)
}

/// A registry with one shell tool whose effects are the `command` argument.
fn shell_registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let yaml = format!("{TOOL}    effects:\n      shell: args.command\n");
        let loaded = load_sources(vec![SourceFile::new(Path::new("p.yaml"), yaml)]);
        let policy = loaded.policy.unwrap();
        Registry::new(&policy).unwrap()
    })
}

const TOOL: &str = "version: 1\ntools:\n  - name: t\n    description: d\n    scope: shell\n    parameters: {type: object, properties: {command: {type: string}, n: {type: integer}}}\n    safety: {side_effect: shell, permission: prompt, reason: r}\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn arbitrary_text_never_panics_the_loader(text in "\\PC{0,200}") {
        load(text);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_loader(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        // What a file read gives: the bytes as UTF-8, or the not-UTF-8 refusal.
        match String::from_utf8(bytes) {
            Ok(text) => load(format!("version: 1\n{text}")),
            Err(e) => {
                let err = zero_policy::loader::read_capped(
                    e.as_bytes(),
                    Path::new("fuzz.yaml"),
                    zero_policy::loader::MAX_FILE_BYTES,
                )
                .unwrap_err();
                let d = err.to_diagnostic();
                prop_assert_eq!(d.code.as_str(), "unreadable-file");
            }
        }
    }

    #[test]
    fn arbitrary_yamlish_structures_never_panic_the_loader(body in yamlish()) {
        load(format!("version: 1\n{body}"));
        load(body);
    }

    #[test]
    fn arbitrary_cel_never_panics(when in prop_oneof![
        "[ a-z_.()\\[\\]{}\"'!&|=<>+*/%?:0-9,$`;-]{0,60}",
        "\\PC{0,60}",
        // Words from the library, so more of them compile and run.
        prop::collection::vec(prop::sample::select(vec![
            "args", ".command", ".n", "size(", ")", "(", "[", "]", ",", " + ", " * ", " == ",
            " && ", " || ", "!", "-", "1", "'a'", "\"\"", ".exists(x, ", ".all(x, ", ".map(x, ",
            "x", ".split('')", ".join(", "glob(", "shell_commands(", "path_ancestors(",
            "lists", "tool", "session", ".contains(", ".matches(", "? ", " : ",
        ]), 0..24).prop_map(|w| w.concat()),
    ], script in "\\PC{0,80}", n in any::<i64>()) {
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
                confined: false,
            });
            // A rule that cannot be evaluated fails closed: never allow past a deny rule's error.
            if !ev.errors.is_empty() {
                prop_assert!(ev.decision >= zero_policy::Decision::Deny);
            }
        }
    }

    #[test]
    fn arbitrary_shell_scripts_never_panic_the_effects_analyser(script in prop_oneof![
        "\\PC{0,120}",
        prop::collection::vec(prop::sample::select(vec![
            "rm ", "-rf ", "git ", "push ", "curl ", "http://x ", "| ", "; ", "&& ", "$(", ")",
            "`", "'", "\"", "<<EOF\n", "EOF\n", "> ", "/etc/passwd ", "sudo ", "env ",
            "bash -c ", "xargs ", "find . -exec ", " {} \\;", "${A:-b} ", "~/", "*", "\n",
        ]), 0..20).prop_map(|w| w.concat()),
    ]) {
        let _ = zero_policy::effects::literal::shell_commands(&script);
        let _ = zero_policy::effects::literal::shell_parses(&script);
        // The whole analyser, as a bash call is decided.
        let registry = shell_registry();
        let ev = registry.evaluate(&Call {
            tool: "t".into(),
            args: serde_json::json!({"command": script}),
            session: Session::default(),
            confined: false,
        });
        prop_assert!(ev.decision >= zero_policy::Decision::Allow);
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
