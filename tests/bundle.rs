//! `zero-policy bundle build|sign|verify` against the real `minisign` tool
//! (Debian's, both ways), and `hook`/`serve` taking their policy from a
//! signed bundle: verified before use, the last good one kept, fail closed
//! with none.
#![expect(clippy::unwrap_used, reason = "tests")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

struct Env {
    root: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        let root = std::env::temp_dir().join(format!("zp-bundle-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        Env { root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// A minisign key pair made by the `minisign` tool, without a password.
    fn keygen(&self, name: &str) -> (PathBuf, PathBuf) {
        let (public, secret) = (
            self.path(&format!("{name}.pub")),
            self.path(&format!("{name}.key")),
        );
        let out = Command::new("minisign")
            .args(["-G", "-W", "-f", "-p"])
            .arg(&public)
            .arg("-s")
            .arg(&secret)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        (public, secret)
    }

    fn zp<S: AsRef<std::ffi::OsStr>>(&self, args: impl IntoIterator<Item = S>) -> Output {
        self.zp_home(args, &self.path("home"))
    }

    fn zp_home<S: AsRef<std::ffi::OsStr>>(
        &self,
        args: impl IntoIterator<Item = S>,
        home: &Path,
    ) -> Output {
        Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .args(args)
            .current_dir(self.path("work"))
            .env("HOME", home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("ZERO_POLICY_CACHE")
            .env_remove("ZERO_POLICY_PATH")
            .env_remove("ZERO_POLICY_BUNDLE")
            .env_remove("ZERO_POLICY_BUNDLE_KEY")
            .output()
            .unwrap()
    }

    /// One Claude Code hook event through `--bundle FILE --key PUBKEY`.
    fn hook(&self, bundle: &Path, key: &Path, command: &str, home: &Path) -> Output {
        self.hook_env(
            &[
                ("ZERO_POLICY_BUNDLE", bundle.as_os_str()),
                ("ZERO_POLICY_BUNDLE_KEY", key.as_os_str()),
            ],
            command,
            home,
        )
    }

    /// One Claude Code hook event, with these variables set.
    fn hook_env(&self, vars: &[(&str, &std::ffi::OsStr)], command: &str, home: &Path) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .args(["hook", "claude-code"])
            .current_dir(self.path("work"))
            .env("HOME", home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("ZERO_POLICY_CACHE")
            .env_remove("ZERO_POLICY_PATH")
            .env_remove("ZERO_POLICY_BUNDLE_CA")
            .env_remove("ZERO_POLICY_BUNDLE_POLL")
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let event = serde_json::json!({
            "session_id": "s1",
            "cwd": self.path("work"),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        });
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(event.to_string().as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    }

    fn log(&self, home: &Path) -> Vec<Value> {
        std::fs::read_to_string(home.join(".local/state/zero-policy/decisions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn redact(&self, text: &[u8]) -> String {
        String::from_utf8_lossy(text).replace(&self.root.display().to_string(), "[DIR]")
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn repo(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

/// Builds a bundle of the shipped policies, manifests and profiles.
fn build(env: &Env, name: &str, version: &str) -> PathBuf {
    let out = env.path(name);
    let run = env.zp([
        "bundle".as_ref(),
        "build".as_ref(),
        repo("policies").as_os_str(),
        repo("manifests").as_os_str(),
        repo("profiles").as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--version".as_ref(),
        version.as_ref(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    out
}

fn minisign_sign(file: &Path, secret: &Path) {
    let out = Command::new("minisign")
        .arg("-S")
        .arg("-m")
        .arg(file)
        .arg("-s")
        .arg(secret)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn build_is_deterministic_and_signatures_interoperate_with_minisign_both_ways() {
    let env = Env::new("interop");
    let (public, secret) = env.keygen("team");
    let a = build(&env, "a.bundle", "2026.12.05");
    // The same folders copied elsewhere: the same bytes.
    for dir in ["policies", "manifests", "profiles"] {
        let to = env.path(&format!("copy/{dir}"));
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(repo(dir)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
    let b = env.path("b.bundle");
    let run = env.zp([
        "bundle".as_ref(),
        "build".as_ref(),
        env.path("copy/policies").as_os_str(),
        env.path("copy/manifests").as_os_str(),
        env.path("copy/profiles").as_os_str(),
        "-o".as_ref(),
        b.as_os_str(),
        "--version".as_ref(),
        "2026.12.05".as_ref(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // A plain tar: `tar` lists it.
    let listed = Command::new("tar").arg("tf").arg(&a).output().unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(listed.starts_with("zero-policy-bundle.json\n"), "{listed}");
    assert!(listed.contains("\npolicies/default.yaml\n"), "{listed}");
    assert!(listed.contains("\nprofiles/strict.yaml\n"), "{listed}");

    // Signed by minisign, verified by us.
    minisign_sign(&a, &secret);
    let out = env.zp([
        "bundle".as_ref(),
        "verify".as_ref(),
        a.as_os_str(),
        "--key".as_ref(),
        public.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The digests change with the shipped files: the layout is what is checked.
    insta::with_settings!({filters => vec![(r"\b[0-9a-f]{64}\b", "[SHA256]")]}, {
        insta::assert_snapshot!("verify_good", env.redact(&out.stdout));
    });

    // Signed by us, verified by minisign.
    let out = env.zp([
        "bundle".as_ref(),
        "sign".as_ref(),
        b.as_os_str(),
        "--key".as_ref(),
        secret.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        env.redact(&out.stdout),
        "wrote [DIR]/b.bundle.minisig: version 2026.12.05\n"
    );
    let out = Command::new("minisign")
        .arg("-V")
        .arg("-m")
        .arg(&b)
        .arg("-p")
        .arg(&public)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8(out.stdout).unwrap();
    let (said, at) = said.rsplit_once(" timestamp:").unwrap();
    assert_eq!(
        said,
        "Signature and comment signature verified\nTrusted comment: zero-policy bundle 2026.12.05"
    );
    // The signing time, in seconds, orders bundles against replay.
    let at: u64 = at.trim_end().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(at <= now && now - at < 3600, "{at} {now}");

    // The key given as text rather than a file, and JSON output.
    let key_text = std::fs::read_to_string(&public).unwrap();
    let key_line = key_text.lines().nth(1).unwrap();
    let out = env.zp([
        "bundle".as_ref(),
        "verify".as_ref(),
        b.as_os_str(),
        "--key".as_ref(),
        key_line.as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["good"], true);
    assert_eq!(v["version"], "2026.12.05");
    assert_eq!(v["files"].as_array().unwrap().len(), 10);
}

#[test]
fn forged_edited_and_malformed_bundles_are_refused() {
    let env = Env::new("refused");
    let (public, secret) = env.keygen("team");
    let (_, other_secret) = env.keygen("other");
    let good = build(&env, "good.bundle", "v1");
    minisign_sign(&good, &secret);
    let verify = |file: &Path| {
        let out = env.zp([
            "bundle".as_ref(),
            "verify".as_ref(),
            file.as_os_str(),
            "--key".as_ref(),
            public.as_os_str(),
        ]);
        (out.status.code().unwrap(), env.redact(&out.stdout))
    };
    assert_eq!(verify(&good).0, 0);

    // Signed by another key.
    let forged = env.path("forged.bundle");
    std::fs::copy(&good, &forged).unwrap();
    minisign_sign(&forged, &other_secret);
    // One byte of a policy changed after signing.
    let bytes = std::fs::read(&good).unwrap();
    let at = bytes
        .windows(8)
        .position(|w| w == b"rm -rf /")
        .unwrap_or(5000);
    let mut edited = bytes.clone();
    edited[at] ^= 1;
    let edited_path = env.path("edited.bundle");
    std::fs::write(&edited_path, &edited).unwrap();
    std::fs::copy(
        env.path("good.bundle.minisig"),
        env.path("edited.bundle.minisig"),
    )
    .unwrap();
    // The same change, then signed: the signature is good, the digest is not.
    let resigned = env.path("resigned.bundle");
    std::fs::write(&resigned, &edited).unwrap();
    minisign_sign(&resigned, &secret);
    // Cut short, then signed.
    let truncated = env.path("truncated.bundle");
    std::fs::write(&truncated, &bytes[..bytes.len() - 1024 - 512]).unwrap();
    minisign_sign(&truncated, &secret);
    // No signature at all.
    let unsigned = env.path("unsigned.bundle");
    std::fs::copy(&good, &unsigned).unwrap();

    let results: Vec<String> = [&forged, &edited_path, &resigned, &truncated, &unsigned]
        .iter()
        .map(|f| {
            let (code, text) = verify(f);
            format!("exit {code}: {text}")
        })
        .collect();
    // Key ids are random: each key is made fresh.
    insta::with_settings!({filters => vec![(r"\b[0-9A-F]{16}\b", "[KEYID]")]}, {
        insta::assert_snapshot!("verify_refused", results.join(""));
    });

    // Missing file: could not run.
    assert_eq!(verify(&env.path("missing.bundle")).0, 2);
}

#[test]
fn the_hook_uses_a_verified_bundle_keeps_the_last_good_one_and_fails_closed_without_one() {
    let env = Env::new("hook");
    let (public, secret) = env.keygen("team");
    let (_, other_secret) = env.keygen("other");
    let home = env.path("home");
    let bundle = build(&env, "team.bundle", "v1");
    minisign_sign(&bundle, &secret);

    let out = env.hook(&bundle, &public, "rm -rf /", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let log = env.log(&home);
    assert_eq!(log[0]["bundle"], "v1");
    assert_eq!(log[0]["decision"], "deny");
    assert!(
        log[0]["rules"][0]["file"]
            .as_str()
            .unwrap()
            .starts_with("policies/"),
        "{}",
        log[0]
    );
    assert!(log[0].get("note").is_none());
    // The last good bundle is kept, signed, in the cache.
    let cached: Vec<PathBuf> = std::fs::read_dir(home.join(".cache/zero-policy/bundles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1);
    assert_eq!(
        std::fs::read(cached[0].join("bundle.tar")).unwrap(),
        std::fs::read(&bundle).unwrap()
    );

    // A forged v2 (another key): refused, v1 stays in force, said on stderr and in the log.
    let forged = build(&env, "team.bundle", "v2-forged");
    minisign_sign(&forged, &other_secret);
    let out = env.hook(&bundle, &public, "git status", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = env.redact(&out.stderr);
    let first = stderr.lines().next().unwrap();
    assert!(
        first.starts_with("zero-policy: the bundle `[DIR]/team.bundle` is refused: its signature does not verify: Signature key id: "),
        "{stderr}"
    );
    assert!(
        first.ends_with("; the last good bundle `v1` stays in force"),
        "{stderr}"
    );
    let log = env.log(&home);
    assert_eq!(log[1]["bundle"], "v1");
    assert_eq!(log[1]["decision"], "allow");
    assert!(
        log[1]["note"].as_str().unwrap().contains("is refused"),
        "{}",
        log[1]
    );

    // A good v2: in force.
    let v2 = build(&env, "team.bundle", "v2");
    minisign_sign(&v2, &secret);
    let out = env.hook(&bundle, &public, "git status", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(env.log(&home)[2]["bundle"], "v2");

    // A fresh machine that never saw a good bundle, given a forged one: blocked.
    minisign_sign(&bundle, &other_secret);
    let fresh = env.path("fresh-home");
    std::fs::create_dir_all(&fresh).unwrap();
    let out = env.hook(&bundle, &public, "git status", &fresh);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = env.redact(&out.stderr);
    assert!(stderr.starts_with("zero-policy: the call is blocked: the bundle `[DIR]/team.bundle` is refused: its signature does not verify"), "{stderr}");
    assert!(
        stderr.contains("and no good bundle was seen before"),
        "{stderr}"
    );
    let log = env.log(&fresh);
    assert_eq!(log[0]["decision"], "error");
    assert_eq!(log[0]["answer"], "deny");

    // A bundle without a key: blocked too.
    let out = env.zp_home(
        [
            "hook".as_ref(),
            "claude-code".as_ref(),
            "--bundle".as_ref(),
            bundle.as_os_str(),
        ],
        &fresh,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("has no key to verify it with")
    );
}

/// Signs with the `minisign` tool, the trusted comment given.
fn minisign_sign_saying(file: &Path, secret: &Path, trusted_comment: &str) {
    let out = Command::new("minisign")
        .arg("-S")
        .arg("-m")
        .arg(file)
        .arg("-s")
        .arg(secret)
        .arg("-t")
        .arg(trusted_comment)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_replayed_older_bundle_is_refused_and_a_bundle_signed_again_rolls_back() {
    let env = Env::new("replay");
    let (public, secret) = env.keygen("team");
    let home = env.path("home");
    let bundle = build(&env, "team.bundle", "v1");
    minisign_sign_saying(&bundle, &secret, "timestamp:1000\tfile:team.bundle");
    // What an attacker keeps to put back later.
    std::fs::copy(&bundle, env.path("old.bundle")).unwrap();
    std::fs::copy(
        env.path("team.bundle.minisig"),
        env.path("old.bundle.minisig"),
    )
    .unwrap();
    assert_eq!(
        env.hook(&bundle, &public, "git status", &home)
            .status
            .code(),
        Some(0)
    );
    build(&env, "team.bundle", "v2");
    minisign_sign_saying(&bundle, &secret, "timestamp:2000\tfile:team.bundle");
    assert_eq!(
        env.hook(&bundle, &public, "git status", &home)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(env.log(&home)[1]["bundle"], "v2");

    // v1, validly signed but older, put back: refused, v2 stays.
    std::fs::copy(env.path("old.bundle"), &bundle).unwrap();
    std::fs::copy(
        env.path("old.bundle.minisig"),
        env.path("team.bundle.minisig"),
    )
    .unwrap();
    let out = env.hook(&bundle, &public, "git status", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        env.redact(&out.stderr).lines().next().unwrap(),
        "zero-policy: the bundle `[DIR]/team.bundle` is refused: it was signed at 1970-01-01T00:16:40Z, \
         before the last good bundle `v2` (signed at 1970-01-01T00:33:20Z): an older bundle is not taken back; \
         to roll back, sign it again; the last good bundle `v2` stays in force"
    );
    assert_eq!(env.log(&home)[2]["bundle"], "v2");

    // A signature that says no time cannot be ordered after v2: refused.
    minisign_sign_saying(&bundle, &secret, "file:team.bundle");
    let out = env.hook(&bundle, &public, "git status", &home);
    assert!(
        env.redact(&out.stderr)
            .contains("its signature carries no time (`timestamp:` in the trusted comment), so it cannot be ordered after the last good bundle `v2`"),
        "{out:?}"
    );
    assert_eq!(env.log(&home)[3]["bundle"], "v2");

    // Rolling back on purpose: v1 signed again, later than v2, is taken.
    minisign_sign_saying(&bundle, &secret, "timestamp:3000\tfile:team.bundle");
    let out = env.hook(&bundle, &public, "git status", &home);
    assert!(out.stderr.is_empty(), "{out:?}");
    assert_eq!(env.log(&home)[4]["bundle"], "v1");
}

#[test]
fn serve_starts_on_a_verified_bundle_and_refuses_to_start_without_one() {
    let env = Env::new("serve");
    let (public, secret) = env.keygen("team");
    let (_, other_secret) = env.keygen("other");
    let bundle = build(&env, "team.bundle", "v7");
    minisign_sign(&bundle, &other_secret);
    let out = env.zp([
        "serve".as_ref(),
        "--bundle".as_ref(),
        bundle.as_os_str(),
        "--key".as_ref(),
        public.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("the gateway does not start"),
        "{out:?}"
    );

    minisign_sign(&bundle, &secret);
    // Standard input is empty: the gateway starts, then stops cleanly.
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["serve", "--bundle"])
        .arg(&bundle)
        .arg("--key")
        .arg(&public)
        .current_dir(env.path("work"))
        .env("HOME", env.path("home"))
        .env_remove("XDG_CACHE_HOME")
        .env_remove("ZERO_POLICY_CACHE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("zero-policy serve: bundle `v7` is in force"),
        "{out:?}"
    );
}

// ── bundles over HTTPS ────────────────────────────────────────────────────────

/// Python's `http.server` over TLS (tests/fixtures/https/serve.py), serving
/// `root` with ETags; its requests are logged to `log`.
struct Server {
    child: std::process::Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn start(env: &Env, root: &Path, cert: &Path, key: &Path) -> Server {
        use std::io::BufRead;
        let log = env.path("requests.log");
        let mut child = Command::new("python3")
            .arg(repo("tests/fixtures/https/serve.py"))
            .args([root, cert, key, &log])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Server {
            child,
            port: line.trim().parse().unwrap(),
            log,
        }
    }

    fn url(&self, name: &str) -> String {
        format!("https://127.0.0.1:{}/{name}", self.port)
    }

    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies `bundle` and its signature into the served folder as `team.bundle`.
fn publish(bundle: &Path, served: &Path) {
    std::fs::copy(bundle, served.join("team.bundle")).unwrap();
    std::fs::copy(
        format!("{}.minisig", bundle.display()),
        served.join("team.bundle.minisig"),
    )
    .unwrap();
}

#[test]
fn a_bundle_over_https_is_fetched_once_kept_asked_for_with_its_etag_and_refused_when_forged_replayed_or_unreachable()
 {
    let env = Env::new("https");
    let (public, secret) = env.keygen("team");
    let (_, other_secret) = env.keygen("other");
    let (ca, cert, key) = common::test_certificates(&env.root);
    let served = env.path("served");
    std::fs::create_dir_all(&served).unwrap();
    let v1 = build(&env, "v1.bundle", "v1");
    minisign_sign_saying(&v1, &secret, "timestamp:1000\tfile:team.bundle");
    publish(&v1, &served);
    let server = Server::start(&env, &served, &cert, &key);
    let url = server.url("team.bundle");
    let home = env.path("home");
    let vars: Vec<(&str, std::ffi::OsString)> = vec![
        ("ZERO_POLICY_BUNDLE", url.clone().into()),
        ("ZERO_POLICY_BUNDLE_KEY", public.clone().into()),
        ("ZERO_POLICY_BUNDLE_CA", ca.clone().into()),
    ];
    let vars_ref = |extra: &[(&'static str, &'static str)]| -> Vec<(&str, std::ffi::OsString)> {
        let mut v = vars.clone();
        v.extend(extra.iter().map(|(k, x)| (*k, std::ffi::OsString::from(x))));
        v
    };
    let hook = |vars: &[(&str, std::ffi::OsString)], command: &str, home: &Path| {
        let refs: Vec<(&str, &std::ffi::OsStr)> =
            vars.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        env.hook_env(&refs, command, home)
    };

    // Without the private CA the server is not trusted, and a machine with
    // no copy blocks the call.
    let fresh = env.path("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let untrusted: Vec<_> = vars
        .iter()
        .filter(|(k, _)| *k != "ZERO_POLICY_BUNDLE_CA")
        .cloned()
        .collect();
    let out = hook(&untrusted, "git status", &fresh);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = env.redact(&out.stderr);
    assert!(
        stderr.contains("cannot fetch `https://127.0.0.1:"),
        "{stderr}"
    );
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");
    assert!(
        stderr.contains("and no good bundle was seen before"),
        "{stderr}"
    );

    // The first use fetches it; the decision uses it.
    let out = hook(&vars, "rm -rf /", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(env.log(&home)[0]["bundle"], "v1");
    assert_eq!(
        server.requests(),
        ["GET /team.bundle 200", "GET /team.bundle.minisig 200"]
    );

    // Within the poll interval the copy is used and nothing is asked.
    let out = hook(&vars, "git status", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(server.requests().len(), 2);

    // Past it (poll 0), the hook decides with the copy and a background
    // fetch asks with the ETag: 304.
    let out = hook(
        &vars_ref(&[("ZERO_POLICY_BUNDLE_POLL", "0")]),
        "git status",
        &home,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(env.log(&home)[2]["bundle"], "v1");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server.requests().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(server.requests()[2], "GET /team.bundle 304");

    let fetch = |home: &Path| {
        Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .args(["bundle", "fetch", &url, "--key"])
            .arg(&public)
            .arg("--ca")
            .arg(&ca)
            .env("HOME", home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("ZERO_POLICY_CACHE")
            .output()
            .unwrap()
    };

    // A new bundle on the server: fetched, in force.
    let v2 = build(&env, "v2.bundle", "v2");
    minisign_sign_saying(&v2, &secret, "timestamp:2000\tfile:team.bundle");
    publish(&v2, &served);
    let out = fetch(&home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "fetched bundle `v2`; it is in force\n"
    );
    let out = fetch(&home);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "bundle `v2` is current\n"
    );
    hook(&vars, "git status", &home);
    assert_eq!(env.log(&home)[3]["bundle"], "v2");

    // A forged bundle on the server: refused, v2 stays, and each decision
    // notes why until a fetch succeeds.
    let forged = build(&env, "forged.bundle", "v3-forged");
    minisign_sign_saying(&forged, &other_secret, "timestamp:3000");
    publish(&forged, &served);
    let out = fetch(&home);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("is refused: its signature does not verify"),
        "{out:?}"
    );
    hook(&vars, "git status", &home);
    let line = &env.log(&home)[4];
    assert_eq!(line["bundle"], "v2");
    assert!(
        line["note"]
            .as_str()
            .unwrap()
            .ends_with("; the bundle `v2` fetched before stays in force"),
        "{line}"
    );

    // The older v1, validly signed, served again (a replay): refused.
    publish(&v1, &served);
    let out = fetch(&home);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("it was signed at 1970-01-01T00:16:40Z, before the last good bundle `v2`"),
        "{out:?}"
    );

    // A truncated bundle: refused.
    let bytes = std::fs::read(&v2).unwrap();
    std::fs::write(served.join("team.bundle"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::copy(
        format!("{}.minisig", v2.display()),
        served.join("team.bundle.minisig"),
    )
    .unwrap();
    let out = fetch(&home);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("its signature does not verify"),
        "{out:?}"
    );

    // The server gone: the fetch fails, the decision still uses v2 at once.
    drop(server);
    let out = fetch(&home);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        env.redact(&out.stderr)
            .contains("cannot fetch `https://127.0.0.1:"),
        "{out:?}"
    );
    let out = hook(
        &vars_ref(&[("ZERO_POLICY_BUNDLE_POLL", "0")]),
        "rm -rf /",
        &home,
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(env.log(&home)[5]["bundle"], "v2");

    // Plain http is refused outright.
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["bundle", "fetch", "http://127.0.0.1:1/team.bundle", "--key"])
        .arg(&public)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn run_takes_its_policy_from_a_bundle_and_logs_its_version() {
    let env = Env::new("run");
    let (public, secret) = env.keygen("team");
    let bundle = build(&env, "team.bundle", "r1");
    minisign_sign(&bundle, &secret);
    let home = env.path("home");
    let run = |script: &str| {
        Command::new(env!("CARGO_BIN_EXE_zero-policy"))
            .args(["run", "--bundle"])
            .arg(&bundle)
            .arg("--key")
            .arg(&public)
            .args(["-c", script])
            .current_dir(env.path("work"))
            .env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("ZERO_POLICY_CACHE")
            .env_remove("ZERO_POLICY_PATH")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run("rm -rf /");
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    let log = env.log(&home);
    assert_eq!(log[0]["front"], "run");
    assert_eq!(log[0]["bundle"], "r1");
    assert_eq!(log[0]["decision"], "deny");

    // With policy paths as well: refused, not guessed.
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["run", "--policy", "policies", "--bundle"])
        .arg(&bundle)
        .arg("--key")
        .arg(&public)
        .args(["-c", "true"])
        .env("HOME", &home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("both `--bundle` and policy paths are given"),
        "{out:?}"
    );
}

#[test]
fn a_hook_on_a_bundle_rewrites_shell_calls_to_run_on_the_same_bundle() {
    let env = Env::new("rewrite");
    let (public, secret) = env.keygen("team");
    let bundle = build(&env, "team.bundle", "w1");
    minisign_sign(&bundle, &secret);
    let home = env.path("home");
    std::fs::write(env.path("work/notes.txt"), "hello\n").unwrap();
    let out = env.hook(&bundle, &public, "cat notes.txt", &home);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let command = answer["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    let expected = format!(
        " run --agent claude-code --session workspace={} --cwd-fd 9 --bundle {} --key {} -c 'cat notes.txt'",
        env.path("work").display(),
        bundle.display(),
        public.display()
    );
    assert!(command.contains(&expected), "{command}\n{expected}");

    // The agent's shell runs it: `run` decides on the same bundle.
    let out = Command::new("bash")
        .args(["-c", command])
        .current_dir(env.path("work"))
        .env("HOME", &home)
        .env_remove("ZERO_POLICY_BUNDLE")
        .env_remove("ZERO_POLICY_BUNDLE_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    let log = env.log(&home);
    assert_eq!(log[1]["front"], "run", "{log:?}");
    assert_eq!(log[1]["bundle"], "w1");
}

#[test]
fn the_bundle_version_is_in_every_log_line_and_in_doctor() {
    let env = Env::new("every-line");
    let (public, secret) = env.keygen("team");
    let home = env.path("home");
    let bundle = build(&env, "team.bundle", "2026.12.06");
    minisign_sign(&bundle, &secret);
    let vars = [
        ("ZERO_POLICY_BUNDLE", bundle.as_os_str()),
        ("ZERO_POLICY_BUNDLE_KEY", public.as_os_str()),
    ];
    // An allow, a deny, a prompt, and a call the hook cannot read (an error line).
    for command in ["git status", "rm -rf /", "git push origin main"] {
        let out = env.hook_env(&vars, command, &home);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["hook", "claude-code"])
        .current_dir(env.path("work"))
        .env("HOME", &home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("ZERO_POLICY_CACHE")
        .envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"hook_event_name": "PreToolUse"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let log = env.log(&home);
    let decisions: Vec<&str> = log
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["allow", "deny", "prompt", "error"]);
    for line in &log {
        assert_eq!(line["bundle"], "2026.12.06", "{line}");
    }

    // `doctor` names the version in force, and that the signature verified.
    let out = env.zp_home(
        [
            "doctor".as_ref(),
            "claude-code".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            "--bundle".as_ref(),
            bundle.as_os_str(),
            "--key".as_ref(),
            public.as_os_str(),
        ],
        &home,
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let check = |name: &str| checks.iter().find(|c| c["check"] == name).cloned();
    let b = check("bundle").unwrap();
    assert_eq!(b["level"], "ok");
    assert_eq!(
        env.redact(b["detail"].as_str().unwrap().as_bytes()),
        "version 2026.12.06 from [DIR]/team.bundle, signature verified"
    );
    assert!(
        check("policy").unwrap()["detail"]
            .as_str()
            .unwrap()
            .ends_with("from the bundle, version 2026.12.06"),
        "{report}"
    );

    // A forged bundle: doctor warns that the last good one is in force.
    let (_, other) = env.keygen("other");
    minisign_sign(&bundle, &other);
    let out = env.zp_home(
        [
            "doctor".as_ref(),
            "claude-code".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            "--bundle".as_ref(),
            bundle.as_os_str(),
            "--key".as_ref(),
            public.as_os_str(),
        ],
        &home,
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "bundle")
        .cloned()
        .unwrap();
    assert_eq!(b["level"], "warn", "{report}");
    let detail = b["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("version 2026.12.06 in force (the last good one): the bundle"),
        "{detail}"
    );

    // No good bundle ever seen on this machine: doctor fails, exit 1.
    let fresh = env.path("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let out = env.zp_home(
        [
            "doctor".as_ref(),
            "claude-code".as_ref(),
            "--bundle".as_ref(),
            bundle.as_os_str(),
            "--key".as_ref(),
            public.as_os_str(),
        ],
        &fresh,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = env.redact(&out.stdout);
    assert!(
        text.starts_with("fail  bundle ")
            && text.contains(": with no good bundle, every hook call is blocked"),
        "{text}"
    );
}
