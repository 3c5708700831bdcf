#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::Path;
use zero_policy::diagnostic::SourceFile;
use zero_policy::loader::load_sources;

fn t(name: &str, d: &str) {
    let n = 200;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let l = load_sources(vec![SourceFile::new(Path::new("p.yaml"), d.to_string())]);
        assert!(l.policy.is_some(), "{:?}", l.diagnostics);
    }
    println!("{name}: {:?}", t0.elapsed() / n);
}

const TOOL: &str = "  - name: tNAME\n    description: a generated tool\n    scope: write\n    parameters:\n      type: object\n      properties:\n        num: {type: integer}\n        s: {type: string}\n        opt: {type: string}\n      required: [num, s]\n    safety: {side_effect: none, permission: prompt, reason: because}\n";
const TOOL_NOPARAM: &str = "  - name: tNAME\n    description: a generated tool\n    scope: write\n    safety: {side_effect: none, permission: prompt, reason: because}\n";

#[test]
fn timing() {
    let tools3: String = (0..3)
        .map(|i| TOOL.replace("NAME", &i.to_string()))
        .collect();
    let tools3np: String = (0..3)
        .map(|i| TOOL_NOPARAM.replace("NAME", &i.to_string()))
        .collect();
    t("empty", "version: 1\n");
    t("3 tools", &format!("version: 1\ntools:\n{tools3}"));
    t(
        "3 tools no params",
        &format!("version: 1\ntools:\n{tools3np}"),
    );
    let rules = |when: &str, tools: &str| -> String {
        (0..4)
            .map(|i| {
                format!(
                    "  - id: s{i}\n{tools}    when: '{when}'\n    action: deny\n    reason: r\n"
                )
            })
            .collect()
    };
    t(
        "3 tools + 4 rules true",
        &format!("version: 1\ntools:\n{tools3}rules:\n{}", rules("true", "")),
    );
    t(
        "3 tools + 4 rules true tools list",
        &format!(
            "version: 1\ntools:\n{tools3}rules:\n{}",
            rules("true", "    tools: [t0, t1]\n")
        ),
    );
    t(
        "3 tools + 4 rules complex",
        &format!(
            "version: 1\ntools:\n{tools3}rules:\n{}",
            rules(
                "(args.num > 2) && (args.s.contains(\"a\") || has(args.opt))",
                ""
            )
        ),
    );
    let env = zero_policy::cel::CelEnv::new();
    let mut cache = zero_policy::cel::PatternCache::default();
    let n = 200;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let _ = env.compile(
            "(args.num > 2) && (args.s.contains(\"a\") || has(args.opt))",
            &mut cache,
        );
    }
    println!("cel compile complex: {:?}", t0.elapsed() / n);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let _ = env.compile("true", &mut cache);
    }
    println!("cel compile true: {:?}", t0.elapsed() / n);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let _ = jsonschema::draft202012::new(
            &serde_json::json!({"type":"object","properties":{"num":{"type":"integer"}}}),
        );
    }
    println!("jsonschema: {:?}", t0.elapsed() / n);
}
