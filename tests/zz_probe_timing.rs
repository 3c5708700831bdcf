#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::Path;
use zero_policy::diagnostic::SourceFile;
use zero_policy::loader::load_sources;

const T2: &str = "version: 1
tools:
  - name: t0
    description: a generated tool
    scope: write
    safety: {side_effect: none, permission: prompt, reason: because-t0}
  - name: t1
    description: a generated tool
    scope: shell
    safety: {side_effect: none, permission: allow, reason: because-t1}
";
fn t(name: &str, d: &str) {
    let n = 300;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let l = load_sources(vec![SourceFile::new(Path::new("p.yaml"), d.to_string())]);
        assert!(l.policy.is_some(), "{:?}", l.diagnostics);
    }
    println!("{name}: {:?}", t0.elapsed() / n);
}
#[test]
fn timing() {
    t("2 tools", T2);
    t(
        "2 tools + reject",
        &T2.replace(
            "because-t1}\n",
            "because-t1}\n    reject:\n      - id: x0\n        when: 'true'\n        message: m\n",
        ),
    );
    t(
        "2 tools + rule no tools",
        &format!("{T2}rules:\n  - id: s1\n    when: 'true'\n    action: deny\n    reason: r\n"),
    );
    t(
        "2 tools + rule tools [t0]",
        &format!(
            "{T2}rules:\n  - id: s1\n    tools: [t0]\n    when: 'true'\n    action: deny\n    reason: r\n"
        ),
    );
    t(
        "2 tools + 2 rules tools [t0]",
        &format!(
            "{T2}rules:\n  - id: s1\n    tools: [t0]\n    when: 'true'\n    action: deny\n    reason: r\n  - id: s2\n    tools: [t0]\n    when: 'true'\n    action: deny\n    reason: r\n"
        ),
    );
    t(
        "2 tools + relax tools [t0]",
        &format!("{T2}relax:\n  - id: s1\n    tools: [t0]\n    when: 'true'\n"),
    );
    let n = 300;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let g = globset::Glob::new("t0").unwrap();
        let _ = g.compile_matcher();
    }
    println!("glob matcher: {:?}", t0.elapsed() / n);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let mut b = globset::GlobSetBuilder::new();
        b.add(globset::Glob::new("t0").unwrap());
        let _ = b.build();
    }
    println!("globset literal: {:?}", t0.elapsed() / n);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let mut b = globset::GlobSetBuilder::new();
        b.add(globset::Glob::new("*").unwrap());
        let _ = b.build();
    }
    println!("globset *: {:?}", t0.elapsed() / n);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let _ = zero_policy::scrub::Scrubber::builtin();
    }
    println!("Scrubber::builtin: {:?}", t0.elapsed() / n);
}
