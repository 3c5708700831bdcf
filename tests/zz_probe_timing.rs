#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::Path;
use zero_policy::diagnostic::SourceFile;
use zero_policy::loader::load_sources;

const P: &str = "version: 1
tools:
  - name: t0
    description: a generated tool
    scope: write
    safety: {side_effect: none, permission: prompt, reason: because-t0}
  - name: t1
    description: a generated tool
    scope: shell
    safety: {side_effect: none, permission: allow, reason: because-t1}
    reject:
      - id: x0
        when: 'args.num > 1'
        message: rejected-by-x0
rules:
  - id: s1
    tools: [t0]
    when: 'has(args.opt) && args.s.contains(\"a\")'
    action: deny
    reason: because-s1
relax:
  - id: r2
    tools: [t0, t1]
    when: 'args.opt == \"a\" || session.mode == \"plan\"'
    reason: because-r2
";
#[test]
fn timing() {
    let n = 3000;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let l = load_sources(vec![SourceFile::new(Path::new("p.yaml"), P.to_string())]);
        assert!(l.policy.is_some());
    }
    println!("load: {:?}", t0.elapsed() / n);
}
