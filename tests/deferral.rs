//! Deferral and `tool_search` (SPEC §4): deferred tools leave the advertised list
//! once enough visible tools are deferral-eligible; `deny` tools are never advertised.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

use zero_policy::diagnostic::SourceFile;
use zero_policy::loader::load_sources;
use zero_policy::registry::Registry;

fn registry(threshold: u32) -> Registry {
    let mut yaml = format!("version: 1\nsettings: {{defer_threshold: {threshold}}}\ntools:\n");
    for (name, deferred, perm) in [
        ("read", false, "allow"),
        ("notebook_edit", true, "prompt"),
        ("web_search", true, "prompt"),
        ("web_fetch", true, "prompt"),
        ("format_disk", true, "deny"),
    ] {
        yaml.push_str(&format!(
            "  - name: {name}\n    description: the {name} tool\n    scope: read_only\n    deferred: {deferred}\n    safety: {{side_effect: read, permission: {perm}, reason: r}}\n"
        ));
    }
    let policy = load_sources(vec![SourceFile::new(Path::new("d.yaml"), yaml)])
        .policy
        .unwrap();
    Registry::new(&policy).unwrap()
}

fn names(tools: &[&zero_policy::registry::RegisteredTool]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn deferred_tools_are_hidden_at_the_threshold_and_deny_tools_never_shown() {
    // Three visible deferral-eligible tools (the deny one does not count): threshold 3 defers.
    let r = registry(3);
    let (shown, deferred) = r.advertised();
    assert!(deferred);
    assert_eq!(names(&shown), ["read"]);
    // Threshold 4 is not reached: everything visible is shown, still no deny tool.
    let r = registry(4);
    let (shown, deferred) = r.advertised();
    assert!(!deferred);
    assert_eq!(
        names(&shown),
        ["read", "notebook_edit", "web_search", "web_fetch"]
    );
    // 0 disables deferral.
    let (_, deferred) = registry(0).advertised();
    assert!(!deferred);
}

#[test]
fn tool_search_finds_by_select_and_keywords_but_never_deny_tools() {
    let r = registry(3);
    assert_eq!(
        names(&r.search("select:web_fetch,read")),
        ["read", "web_fetch"]
    );
    assert_eq!(names(&r.search("web")), ["web_fetch", "web_search"]);
    assert!(r.search("format_disk").is_empty());
    assert!(r.search("select:format_disk").is_empty());
}
