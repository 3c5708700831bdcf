//! Whole-process wall time of `zero-policy hook claude-code` on the same
//! policy taken four ways, interleaved in every round so the machine's drift
//! weighs on all alike:
//!
//! - `files`: the shipped policy and manifests as local paths;
//! - `files + shadow`: the same, with `settings.shadow` naming a second copy
//!   plus one rule (shadow mode: a second policy loaded and decided per call);
//! - `bundle (cached, verified)`: the same files as a signed bundle, already
//!   verified once and kept as the last good bundle in the cache; each call
//!   reads it, checks its signature and digests, and loads from memory;
//! - `bundle + shadow`: the bundle, with the shadow as above;
//! - `bundle over https (cached)`: the same bundle published on a real HTTPS
//!   server (Python's `http.server` over TLS, tests/fixtures/https/serve.py,
//!   with a CA made by `openssl`), fetched once, then taken from the cache on
//!   each call (verified again) until the poll interval asks the server.
//!
//! Prints the median and p90 of each and the ratios to `files`; asserts only
//! that each variant gives the expected answer.
//!
//! `cargo bench --bench fleet` (`ZP_BENCH_RUNS=N` rounds, default 120;
//! `ZP_BIN=path` measures that binary instead of the bench build).
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "benchmark harness")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/common/certs.rs"]
mod certs;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if p.is_file() && !name.ends_with(".test.yaml") {
            std::fs::copy(&p, to.join(&name)).unwrap();
        }
    }
}

fn stats(mut t: Vec<Duration>) -> (f64, f64) {
    t.sort();
    let n = t.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(t[n / 2]), ms(t[(n * 9 / 10).min(n - 1)]))
}

fn main() {
    let exe = std::env::var("ZP_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_zero-policy").into());
    let runs: usize = std::env::var("ZP_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = std::env::temp_dir().join(format!("zp-bench-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (home, work) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let zp = |args: &[&std::ffi::OsStr]| {
        let mut c = Command::new(&exe);
        c.args(args)
            .current_dir(&work)
            .env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("ZERO_POLICY_CACHE")
            .env_remove("ZERO_POLICY_PATH")
            .env_remove("ZERO_POLICY_BUNDLE")
            .env_remove("ZERO_POLICY_BUNDLE_KEY");
        c
    };
    // The policy in force: the shipped policy and manifests.
    let live = root.join("live");
    copy_dir(&repo.join("policies"), &live.join("policies"));
    copy_dir(&repo.join("manifests"), &live.join("manifests"));
    // The shadow: the same plus one rule.
    let next = root.join("next");
    copy_dir(&live.join("policies"), &next.join("policies"));
    copy_dir(&live.join("manifests"), &next.join("manifests"));
    std::fs::write(
        next.join("policies/strict.yaml"),
        "version: 1\nrules:\n  - id: no-curl\n    when: call.commands.exists(c, c.program == \"curl\")\n    action: deny\n    reason: curl waits for review\n",
    )
    .unwrap();
    let shadow_yaml = format!(
        "version: 1\nsettings:\n  shadow:\n    paths: [\"{}\"]\n",
        next.display()
    );
    let shadowed = root.join("live-shadow");
    copy_dir(&live.join("policies"), &shadowed.join("policies"));
    copy_dir(&live.join("manifests"), &shadowed.join("manifests"));
    std::fs::write(shadowed.join("policies/shadow.yaml"), &shadow_yaml).unwrap();

    // The bundles, signed with a key made by `minisign` (no password).
    let (public, secret) = (root.join("team.pub"), root.join("team.key"));
    let out = Command::new("minisign")
        .args(["-G", "-W", "-f", "-p"])
        .arg(&public)
        .arg("-s")
        .arg(&secret)
        .output()
        .expect("minisign (Debian package `minisign`)");
    assert!(out.status.success(), "{out:?}");
    let bundle = |dir: &Path, name: &str| -> PathBuf {
        let file = root.join(name);
        let out = zp(&[
            "bundle".as_ref(),
            "build".as_ref(),
            dir.join("policies").as_os_str(),
            dir.join("manifests").as_os_str(),
            "-o".as_ref(),
            file.as_os_str(),
            "--version".as_ref(),
            "bench".as_ref(),
        ])
        .output()
        .unwrap();
        assert!(out.status.success(), "{out:?}");
        let out = zp(&[
            "bundle".as_ref(),
            "sign".as_ref(),
            file.as_os_str(),
            "--key".as_ref(),
            secret.as_os_str(),
        ])
        .output()
        .unwrap();
        assert!(out.status.success(), "{out:?}");
        file
    };
    let plain_bundle = bundle(&live, "team.bundle");
    let shadow_bundle = bundle(&shadowed, "team-shadow.bundle");
    let size = std::fs::metadata(&plain_bundle).unwrap().len();

    // The same bundle on a real HTTPS server.
    let served = root.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(&plain_bundle, served.join("team.bundle")).unwrap();
    std::fs::copy(
        format!("{}.minisig", plain_bundle.display()),
        served.join("team.bundle.minisig"),
    )
    .unwrap();
    let (ca, cert, key) = certs::test_certificates(&root);
    let mut server = Command::new("python3")
        .arg(repo.join("tests/fixtures/https/serve.py"))
        .args([&served, &cert, &key, &root.join("requests.log")])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let port: u16 = {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.trim().parse().unwrap()
    };
    let url = format!("https://127.0.0.1:{port}/team.bundle");

    let event = serde_json::to_vec(&serde_json::json!({
        "session_id": "bench",
        "cwd": work,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status && ls -la src"},
    }))
    .unwrap();
    let os = |p: &Path| p.as_os_str().to_owned();
    let variants: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        (
            "files",
            vec![os(&live.join("policies")), os(&live.join("manifests"))],
        ),
        (
            "files + shadow",
            vec![
                os(&shadowed.join("policies")),
                os(&shadowed.join("manifests")),
            ],
        ),
        (
            "bundle (cached, verified)",
            vec![
                "--bundle".into(),
                os(&plain_bundle),
                "--key".into(),
                os(&public),
            ],
        ),
        (
            "bundle + shadow",
            vec![
                "--bundle".into(),
                os(&shadow_bundle),
                "--key".into(),
                os(&public),
            ],
        ),
        (
            "bundle over https (cached)",
            vec![
                "--bundle".into(),
                url.clone().into(),
                "--key".into(),
                os(&public),
                "--bundle-ca".into(),
                os(&ca),
            ],
        ),
    ];
    let once = |extra: &[std::ffi::OsString]| -> (Duration, String) {
        let mut args: Vec<&std::ffi::OsStr> = vec!["hook".as_ref(), "claude-code".as_ref()];
        args.extend(extra.iter().map(std::ffi::OsString::as_os_str));
        let t = Instant::now();
        let mut child = zp(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&event).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            t.elapsed(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // Warm-up: each answers allow (and fills the document and bundle caches).
    for (name, extra) in &variants {
        for _ in 0..3 {
            let (_, out) = once(extra);
            assert!(
                out.contains(r#""permissionDecision":"allow""#),
                "{name}: {out}"
            );
        }
    }
    // The shadow variants' lines carry the shadow's decision; the HTTPS
    // bundle's carry its version.
    let log = home.join(".local/state/zero-policy/decisions.jsonl");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged
            .lines()
            .any(|l| l.contains(r#""shadow":{"decision":"allow""#)),
        "{logged}"
    );
    let last = logged.lines().last().unwrap();
    assert!(last.contains(r#""bundle":"bench""#), "{last}");

    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); variants.len()];
    for round in 0..runs {
        // A different order each round.
        for k in 0..variants.len() {
            let i = (k + round) % variants.len();
            times[i].push(once(&variants[i].1).0);
        }
    }
    println!(
        "zero-policy hook claude-code on `git status && ls -la src`, {runs} interleaved rounds, whole process ({size} byte bundle)\n"
    );
    println!(
        "{:<28} {:>10} {:>10} {:>10}",
        "variant", "median", "p90", "vs files"
    );
    let base = stats(times[0].clone()).0;
    for ((name, _), t) in variants.iter().zip(times) {
        let (m, p90) = stats(t);
        println!(
            "{name:<28} {m:>7.2} ms {p90:>7.2} ms {:>+9.1}%",
            (m / base - 1.0) * 100.0
        );
    }
    // Fetched once, in the warm-up, and not asked for again within the poll
    // interval: no call waited on the network.
    let requests = std::fs::read_to_string(root.join("requests.log")).unwrap_or_default();
    println!(
        "\nrequests to the HTTPS server over all rounds: {}",
        requests.lines().count()
    );
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&root);
}
