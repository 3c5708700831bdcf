//! The document cache (`loader::cache`): a file's parsed YAML, kept as JSON,
//! reads back as the document the YAML gave, places included; an entry is
//! read only from a private folder and file; and a hook or `explain` reads
//! it in place of the YAML.
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use zero_policy::cel::{CelEnv, CompileCtx, PatternCache, stored::Shelf};
use zero_policy::loader::{
    self,
    cache::{Cache, Scans},
};
use zero_policy::model::Document;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A folder of the test's own, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("zp-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Every kind of value the format has, each written in each of its forms.
const EVERY_FORM: &str = r#"
version: 1
agent: my-agent
settings:
  defer_threshold: 12
  paths: {case_insensitive: auto}
  hooks: {unknown_tool: deny}
lists:
  base: ["~/.ssh/**", "**/.env"]
  more: {extends: base, add: ["/etc/shadow", "é\u0000\t"]}
  empty: []
tools:
  - name: t
    description: "a tool: with a \"quoted\" word, and ünïcode"
    scope: shell
    parameters:
      type: object
      properties: {n: {type: integer, maximum: 1.5e3}, s: {type: string, default: null}}
    safety: {side_effect: shell, permission: prompt, reason: because}
    effects: {shell: args.command}
rules:
  - id: r1
    when: |
      call.paths.exists(p,
        path_matches(p, lists.more))
    action: deny
    reason: no
    examples:
      match: [{tool: t, args: {command: "cat ~/.ssh/id_rsa", n: 3, f: -0.25, b: true, z: null}}]
      no_match: [{tool: t, args: {command: ls}, session: {mode: plan, scopes: [read_only, write], labels: {team: infra}}}]
relax:
  - id: x
    when: 'false'
    reason: never
commands:
  - name: mytool
    read_only: true
    options: {"-o, --output": write, "-q": flag, "-c": {value: code}}
    operands: [read...]
tests:
  - name: one
    call: {tool: t, args: {command: ls}}
    expect: {decision: prompt}
"#;

/// Written as JSON and read back, a document is the one its YAML gave: every
/// value and every place (the Debug form shows both).
fn assert_round_trip(name: &str, text: &str) -> bool {
    let Ok(doc) = loader::read_document(text) else {
        return false;
    };
    let json = serde_json::to_string(&doc).unwrap();
    let back: Document =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name}: {e}\n{json}"));
    assert_eq!(format!("{doc:#?}"), format!("{back:#?}"), "{name}");
    true
}

#[test]
fn every_shipped_and_fixture_document_reads_back_from_json_with_its_places() {
    let mut files = Vec::new();
    for dir in [
        "policies",
        "manifests",
        "profiles",
        "catalog",
        "tests/fixtures",
    ] {
        yaml_files(&root().join(dir), &mut files);
    }
    let mut read = 0;
    for f in &files {
        // A fixture that is not UTF-8 text is refused before any YAML is read.
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if assert_round_trip(&f.display().to_string(), &text) {
            read += 1;
        }
    }
    // The shipped files, the red-team suite and the fixtures that are documents.
    assert!(read >= 60, "only {read} of {} files read", files.len());
    assert!(assert_round_trip("every form", EVERY_FORM));
    // An option is kept in its shorthand only where the shorthand reads back
    // as the same option: not a kind named `flag`.
    let options = r#"
version: 1
commands:
  - name: p
    description: d
    options:
      "-a": flag
      "-b": read
      "-c": {value: flag}
      "-d": {value: read, tags: [x]}
      "-e": {}
      "-f": {value: write, optional: true}
"#;
    assert!(assert_round_trip("options", options));
    // The places are real ones: the rule's id is where the YAML has it.
    let doc = loader::read_document(EVERY_FORM).unwrap();
    let id = &doc.rules[0].id;
    let at = id.referenced;
    assert_eq!(
        &EVERY_FORM[at.offset.unwrap()..at.offset.unwrap() + at.len],
        "r1"
    );
    assert_eq!(
        EVERY_FORM.lines().nth(at.line as usize - 1).unwrap(),
        "  - id: r1"
    );
}

#[test]
fn an_entry_is_read_back_only_from_a_private_folder_and_file() {
    let scratch = Scratch::new("private");
    let dir = scratch.0.join("cache");
    let cache = Cache::new(dir.clone());
    let text = "version: 1\nrules:\n  - {id: a, when: 'true', action: deny, reason: r}\n";
    assert!(cache.get(text).is_none(), "nothing kept yet");
    let doc = loader::read_document(text).unwrap();
    let scans = Scans {
        tests_only: false,
        tools_of: None,
    };
    cache.put(text, &scans, Some(&doc));
    let entry = cache.entry(text);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&entry), 0o600);
    let kept = cache.get(text).unwrap();
    assert_eq!(kept.scans, scans);
    let back = kept.document(true).unwrap();
    assert_eq!(format!("{doc:?}"), format!("{back:?}"));
    // Another text has another entry.
    assert!(cache.get("version: 1\n").is_none());
    assert_ne!(cache.entry("version: 1\n"), entry);

    // Writable by others: not read.
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o620)).unwrap();
    assert!(cache.get(text).is_none());
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(cache.get(text).is_none());
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(cache.get(text).is_some());

    // A link, to the folder or as the entry, is not followed.
    let linked = scratch.0.join("linked");
    std::os::unix::fs::symlink(&dir, &linked).unwrap();
    assert!(Cache::new(linked).get(text).is_none());
    let real = scratch.0.join("real.json");
    std::fs::rename(&entry, &real).unwrap();
    std::os::unix::fs::symlink(&real, &entry).unwrap();
    assert!(cache.get(text).is_none());
    std::fs::remove_file(&entry).unwrap();
    // Nor is an entry with a second name.
    std::fs::rename(&real, &entry).unwrap();
    assert!(cache.get(text).is_some());
    std::fs::hard_link(&entry, scratch.0.join("second-name")).unwrap();
    assert!(cache.get(text).is_none());
    std::fs::remove_file(scratch.0.join("second-name")).unwrap();
    std::fs::remove_file(&entry).unwrap();

    // A malformed entry is not read, and the next put replaces it.
    std::fs::write(&entry, b"{\"version\": ").unwrap();
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(cache.get(text).is_none());
    cache.put(text, &scans, Some(&doc));
    assert!(cache.get(text).unwrap().document(true).is_some());
}

#[test]
fn pruning_removes_old_entries_and_nothing_else() {
    let scratch = Scratch::new("prune");
    let dir = scratch.0.join("shared");
    std::fs::create_dir_all(&dir).unwrap();
    // A folder the user also keeps files in, named like entries or not.
    for name in ["notes.json", "a.json", ".tmp-mine", "0123.json"] {
        std::fs::write(dir.join(name), "{}").unwrap();
    }
    for k in 0..1100 {
        std::fs::write(dir.join(format!("{k:064x}.json")), "").unwrap();
    }
    let cache = Cache::new(dir.clone());
    let text = "version: 1\n";
    let scans = Scans {
        tests_only: false,
        tools_of: None,
    };
    cache.put(text, &scans, Some(&loader::read_document(text).unwrap()));
    let left: Vec<String> = entries(&dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for name in ["notes.json", "a.json", ".tmp-mine", "0123.json"] {
        assert!(left.contains(&name.to_string()), "{name} was removed");
    }
    let kept = left.iter().filter(|n| n.len() == 69).count();
    assert!((512..=1024).contains(&kept), "{kept} entries kept");
    assert!(cache.get(text).is_some(), "the new entry is kept");
}

/// A hook run in `home`, with the cache in `cache` (or the environment's `off`).
fn hook(home: &Path, cache: &str, paths: &[&Path], command: &str) -> Value {
    hook_in(home, std::ffi::OsStr::new(cache), paths, command)
}

fn hook_in(home: &Path, cache: &std::ffi::OsStr, paths: &[&Path], command: &str) -> Value {
    let event = json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": home,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .arg("hook")
        .arg("claude-code")
        .args(paths)
        .current_dir(home)
        .env("HOME", home)
        .env("ZERO_POLICY_CACHE", cache)
        .env_remove("ZERO_POLICY_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &event).unwrap();
    let out = child.wait_with_output().unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    answer["hookSpecificOutput"]["permissionDecision"].clone()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map_or_else(|_| Vec::new(), |r| r.map(|e| e.unwrap().path()).collect())
}

#[test]
fn a_hook_reads_the_cache_in_place_of_the_yaml_it_stands_for() {
    let scratch = Scratch::new("hook");
    let home = scratch.0.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let policy = scratch.0.join("team");
    std::fs::create_dir_all(&policy).unwrap();
    let allow_all = "version: 1\nrelax:\n  - id: everything\n    when: 'true'\n    reason: all\n";
    let text = format!(
        "{allow_all}rules:\n  - id: no-ls\n    when: \"call.commands.exists(c, c.program == 'ls')\"\n    action: deny\n    reason: no ls\n"
    );
    let text = text.as_str();
    std::fs::write(policy.join("p.yaml"), text).unwrap();
    let manifests = root().join("manifests");
    let dir = scratch.0.join("cache");
    let cache = dir.to_str().unwrap();

    // Turned off: the decision, and nothing written; nor where a folder is
    // relative, or named by bytes that are not text (which the guard, which
    // compares paths as text, could not protect).
    assert_eq!(hook(&home, "off", &[&policy, &manifests], "ls"), "deny");
    assert_eq!(hook(&home, "cache", &[&policy, &manifests], "ls"), "deny");
    let not_text = {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let mut bytes = scratch.0.join("c").into_os_string().into_vec();
        bytes.push(0xff);
        PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))
    };
    assert_eq!(
        hook_in(&home, not_text.as_os_str(), &[&policy, &manifests], "ls"),
        "deny"
    );
    assert!(!not_text.exists());
    assert!(entries(&dir).is_empty());
    assert!(entries(&home.join(".cache")).is_empty());
    assert!(!home.join("cache").exists());

    // The first call keeps an entry for each file: the document of each it
    // read, the scans alone of the other agents' manifests it skipped; one
    // for the shipped catalog's entry of `ls`; and the shelf of the
    // expressions it compiled.
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "deny");
    let (shelves, kept): (Vec<PathBuf>, Vec<PathBuf>) = entries(&dir)
        .into_iter()
        .partition(|p| p.extension().is_some_and(|e| e == "bin"));
    assert_eq!(kept.len(), 2 + entries(&manifests).len(), "{kept:?}");
    assert_eq!(shelves.len(), 1, "{shelves:?}");
    let store = Cache::new(dir.clone());
    let entry = store.entry(text);
    assert!(kept.contains(&entry), "{kept:?}");
    let codex = std::fs::read_to_string(manifests.join("codex.yaml")).unwrap();
    let skipped = store.get(&codex).unwrap();
    assert_eq!(skipped.scans.tools_of.as_deref(), Some("codex"));
    assert!(skipped.document(true).is_none());
    let own = std::fs::read_to_string(manifests.join("claude-code.yaml")).unwrap();
    assert!(store.get(&own).unwrap().document(true).is_some());
    // The second decides the same from the cache.
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "deny");

    // What the shelf says is what the hook runs: the rule's condition kept
    // as `false` lets `ls` through.
    let shelf_path = &shelves[0];
    let original = std::fs::read(shelf_path).unwrap();
    let mut shelf = Shelf::from_bytes(&original);
    let source = "call.commands.exists(c, c.program == 'ls')";
    assert!(shelf.get(source, true).is_some());
    let lists = std::sync::Arc::new(std::collections::BTreeMap::new());
    let mut patterns = PatternCache::default();
    let cx = CompileCtx {
        lists: &lists,
        allow_call: true,
        case_insensitive: false,
    };
    let never = CelEnv::new().compile("false", &mut patterns, &cx).unwrap();
    shelf.add(source, true, never.to_stored(&patterns, &lists).unwrap());
    std::fs::write(shelf_path, shelf.to_bytes()).unwrap();
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "allow");
    // Unless someone else could have written it: then it is compiled again
    // (and the shelf written anew).
    std::fs::set_permissions(shelf_path, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "deny");
    assert_eq!(
        std::fs::metadata(shelf_path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A shelf that does not read as one is none.
    std::fs::write(shelf_path, &original[..original.len() / 2]).unwrap();
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "deny");
    assert_eq!(std::fs::read(shelf_path).unwrap(), original);

    // What the entry says is what the hook reads: a document without the rule.
    let other = loader::read_document(allow_all).unwrap();
    let mut forged = b"{\"tests_only\": false, \"tools_of\": null}\n".to_vec();
    forged.extend(serde_json::to_vec(&other).unwrap());
    std::fs::write(&entry, &forged).unwrap();
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "allow");
    // Unless someone else could have written it: then the YAML is read.
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "deny");
    // A changed file is another entry.
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(policy.join("p.yaml"), text.replace("'ls'", "'pwd'")).unwrap();
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "ls"), "allow");
    assert_eq!(hook(&home, cache, &[&policy, &manifests], "pwd"), "deny");
}

#[test]
fn a_process_that_decides_reads_a_document_without_its_examples() {
    let scratch = Scratch::new("examples");
    let cache = Cache::new(scratch.0.join("cache"));
    let text = "version: 1
rules:
  - id: a
    when: 'true'
    action: deny
    reason: r
    examples:
      match: [{tool: Bash, args: {command: ls}}]
  - {id: b, when: 'false', action: prompt, reason: r}
relax:
  - id: c
    when: 'true'
    reason: r
    examples:
      no_match: [{tool: Read, args: {file_path: /x}}]
";
    let doc = loader::read_document(text).unwrap();
    assert!(doc.rules[0].examples.is_some() && doc.relax[0].examples.is_some());
    let scans = Scans {
        tests_only: false,
        tools_of: None,
    };
    cache.put(text, &scans, Some(&doc));
    let kept = cache.get(text).unwrap();
    // With examples: the document as read from YAML.
    let mut whole = kept.document(true).unwrap();
    assert_eq!(format!("{doc:?}"), format!("{whole:?}"));
    // Without: the same but for the examples.
    let mut bare = kept.document(false).unwrap();
    assert!(bare.rules.iter().all(|r| r.examples.is_none()));
    assert!(bare.relax.iter().all(|r| r.examples.is_none()));
    bare.rules[0].examples = whole.rules[0].examples.take();
    bare.relax[0].examples = whole.relax[0].examples.take();
    assert_eq!(format!("{doc:?}"), format!("{bare:?}"));
}
