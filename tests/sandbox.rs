//! The kernel sandbox, for real: `zero-policy __confine -- sh -c '…'` against planted
//! fake secrets, checked by what happened (what was printed, what is on disk, exit codes).
//!
//! These tests need Landlock (CI here has ABI 7) and a user or mount namespace; where the
//! kernel cannot confine they fail, they do not skip.
#![cfg(target_os = "linux")]
#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "a failed setup ends the test"
)]

use std::fs;
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use zero_policy::sandbox::{self, Envelope, Limits, Network};

const SSH_CANARY: &str = "CANARY-SSH-7f3a9c";
const AWS_CANARY: &str = "CANARY-AWS-51be02";
const ENV_CANARY: &str = "CANARY-ENV-c0ffee";

/// A fake home with secrets, a workspace, a temp folder and a folder outside everything.
struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    tmp: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = fs::canonicalize(dir.path()).expect("canonical");
    let home = root.join("home");
    let ws = root.join("ws");
    let tmp = root.join("tmp");
    let outside = root.join("outside");
    for d in [
        home.join(".ssh"),
        home.join(".aws"),
        ws.join("src"),
        ws.join("sub"),
        ws.join(".git/hooks"),
        tmp.clone(),
        outside.clone(),
    ] {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(home.join(".ssh/id_rsa"), format!("{SSH_CANARY}\n")).expect("write");
    fs::write(home.join(".aws/credentials"), format!("{AWS_CANARY}\n")).expect("write");
    fs::write(ws.join(".env"), format!("TOKEN={ENV_CANARY}\n")).expect("write");
    fs::write(ws.join("src/main.rs"), "fn main() {}\n").expect("write");
    fs::write(ws.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").expect("write");
    fs::write(outside.join("keep.txt"), "outside\n").expect("write");
    Fixture {
        _dir: dir,
        home,
        ws,
        tmp,
        outside,
    }
}

/// What a call in the workspace may touch: the system, the workspace, its temp folder.
fn envelope(f: &Fixture) -> Envelope {
    let system: Vec<PathBuf> = ["/usr", "/bin", "/lib", "/lib64", "/etc", "/sbin"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut reads = system.clone();
    reads.push(f.home.clone());
    Envelope {
        reads,
        writes: vec![f.ws.clone(), f.tmp.clone()],
        exec: system,
        deny_reads: vec![
            format!("{}/.ssh/**", f.home.display()),
            format!("{}/.aws/**", f.home.display()),
            "**/.env".to_owned(),
        ],
        deny_writes: vec!["**/.git/hooks/**".to_owned()],
        search: vec![f.ws.clone()],
        noexec: vec![f.tmp.clone()],
        network: Network::None,
        unix_sockets: false,
        limits: Limits::default(),
        deny_env: Vec::new(),
        keep_env: Vec::new(),
    }
}

fn confined(envelope: &Envelope, cwd: &Path, program: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .arg("__confine")
        .arg("--")
        .args(program)
        .current_dir(cwd)
        .env(
            "ZERO_POLICY_ENVELOPE",
            serde_json::to_string(envelope).expect("json"),
        )
        .output()
        .expect("run zero-policy")
}

fn sh(envelope: &Envelope, cwd: &Path, script: &str) -> Output {
    confined(envelope, cwd, &["sh", "-c", script])
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts that no canary reached stdout or stderr.
fn assert_no_secret(out: &Output) {
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    for canary in [SSH_CANARY, AWS_CANARY, ENV_CANARY] {
        assert!(!all.contains(canary), "{canary} leaked:\n{all}");
    }
}

#[test]
fn the_kernel_here_can_confine() {
    let support = sandbox::probe();
    assert!(
        support.landlock_abi.is_some_and(|abi| abi >= 4),
        "this machine must have Landlock (ABI 4 or later) to test confinement: {support}"
    );
    assert_eq!(support.level(), "full", "{support}");
}

#[test]
fn hidden_files_read_as_empty_while_the_rest_of_the_tree_reads() {
    let f = fixture();
    let script = format!(
        "cat {h}/.ssh/id_rsa; cat {h}/.aws/credentials; cat {w}/.env; ls -a {h}/.ssh; echo done; cat {w}/src/main.rs",
        h = f.home.display(),
        w = f.ws.display()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    assert_no_secret(&out);
    let stdout = text(&out.stdout);
    // The hidden folder lists as empty; the ordinary file still reads.
    assert_eq!(
        stdout,
        ".\n..\ndone\nfn main() {}\n",
        "{}",
        text(&out.stderr)
    );
    assert!(out.status.success());
}

#[test]
fn a_symlink_in_the_workspace_reaches_only_the_hidden_file() {
    let f = fixture();
    std::os::unix::fs::symlink(f.home.join(".ssh/id_rsa"), f.ws.join("key")).expect("link");
    std::os::unix::fs::symlink(f.home.join(".ssh"), f.ws.join("sshdir")).expect("link");
    let out = sh(
        &envelope(&f),
        &f.ws,
        "cat key; cat sshdir/id_rsa; readlink key; echo end",
    );
    assert_no_secret(&out);
    assert!(
        text(&out.stdout).ends_with("/home/.ssh/id_rsa\nend\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn proc_self_root_leads_to_the_same_hidden_files() {
    let f = fixture();
    let script = format!(
        "cat /proc/self/root{h}/.ssh/id_rsa; cat /proc/self/root{w}/.env; cat /proc/self/root{w}/src/main.rs",
        h = f.home.display(),
        w = f.ws.display()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    assert_no_secret(&out);
    assert_eq!(text(&out.stdout), "fn main() {}\n", "{}", text(&out.stderr));
}

#[test]
fn another_process_root_outside_the_sandbox_is_refused() {
    let f = fixture();
    // The parent of `sh` is this test, outside the mount namespace: its /proc/PID/root
    // shows the unhidden tree, and Landlock refuses to look into a process outside.
    let script = format!(
        "cat /proc/$PPID/root{h}/.ssh/id_rsa; echo rc=$?; cat /proc/1/root{h}/.ssh/id_rsa; echo rc=$?",
        h = f.home.display()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    assert_no_secret(&out);
    assert_eq!(text(&out.stdout), "rc=1\nrc=1\n", "{}", text(&out.stderr));
}

#[test]
fn processes_outside_cannot_be_read_or_signalled() {
    let f = fixture();
    let out = sh(
        &envelope(&f),
        &f.ws,
        "cat /proc/$PPID/environ > /dev/null; echo rc=$?; kill -0 $PPID; echo rc=$?; sleep 0 & wait; kill -0 $$; echo rc=$?",
    );
    assert_eq!(
        text(&out.stdout),
        "rc=1\nrc=1\nrc=0\n",
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn root_keeps_its_rights_over_files_of_other_owners() {
    let f = fixture();
    if !nix_is_root() {
        // Another user maps only itself; its own files are the ones it may write.
        let out = sh(&envelope(&f), &f.ws, "echo x > mine.txt && cat mine.txt");
        assert_eq!(text(&out.stdout), "x\n", "{}", text(&out.stderr));
        return;
    }
    let theirs = f.ws.join("theirs");
    fs::create_dir(&theirs).expect("mkdir");
    fs::write(theirs.join("f.txt"), "old\n").expect("write");
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown");
    std::os::unix::fs::chown(theirs.join("f.txt"), Some(65534), Some(65534)).expect("chown");
    let out = sh(
        &envelope(&f),
        &f.ws,
        "echo new > theirs/f.txt && echo x > theirs/g.txt && cat theirs/f.txt && stat -c %u theirs/f.txt",
    );
    assert_eq!(text(&out.stdout), "new\n65534\n", "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(theirs.join("g.txt")).expect("read"),
        "x\n"
    );
}

fn nix_is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .expect("status")
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

#[test]
fn hard_links_to_hidden_files_fail() {
    let f = fixture();
    let script = format!(
        "ln {h}/.ssh/id_rsa {w}/a; echo rc=$?; ln {w}/.env {w}/sub/b; echo rc=$?; cat {w}/a {w}/sub/b",
        h = f.home.display(),
        w = f.ws.display()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    assert_no_secret(&out);
    assert_eq!(text(&out.stdout), "rc=1\nrc=1\n", "{}", text(&out.stderr));
    assert!(!f.ws.join("a").exists());
    assert!(!f.ws.join("sub/b").exists());
}

#[test]
fn a_hard_link_made_before_the_call_is_hidden_too() {
    let f = fixture();
    fs::hard_link(f.home.join(".aws/credentials"), f.ws.join("src/creds.txt")).expect("link");
    let out = sh(&envelope(&f), &f.ws, "cat src/creds.txt; echo rc=$?");
    assert_no_secret(&out);
    assert_eq!(text(&out.stdout), "rc=0\n", "{}", text(&out.stderr));
}

#[test]
fn a_working_folder_inside_a_hidden_folder_sees_it_empty() {
    let f = fixture();
    let out = sh(
        &envelope(&f),
        &f.home.join(".ssh"),
        "cat id_rsa; cat ./id_rsa; ls -a; pwd",
    );
    assert_no_secret(&out);
    assert_eq!(
        text(&out.stdout),
        format!(".\n..\n{}/.ssh\n", f.home.display()),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn grep_of_the_workspace_does_not_print_the_env_file() {
    let f = fixture();
    let out = sh(&envelope(&f), &f.ws, "grep -r . .");
    assert_no_secret(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("./src/main.rs:fn main() {}"), "{stdout}");
    assert!(
        stdout.contains("./.git/hooks/pre-commit:exit 0"),
        "{stdout}"
    );
}

#[test]
fn writes_outside_the_writable_trees_fail() {
    let f = fixture();
    let script = format!(
        "echo x > {o}/new.txt; echo rc=$?; echo x >> {o}/keep.txt; echo rc=$?; rm {o}/keep.txt; echo rc=$?; echo x > {h}/new.txt; echo rc=$?; mkdir {h}/d; echo rc=$?",
        o = f.outside.display(),
        h = f.home.display()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    assert_eq!(
        text(&out.stdout),
        "rc=2\nrc=2\nrc=1\nrc=2\nrc=1\n",
        "{}",
        text(&out.stderr)
    );
    assert!(!f.outside.join("new.txt").exists());
    assert_eq!(
        fs::read_to_string(f.outside.join("keep.txt")).expect("read"),
        "outside\n"
    );
    assert!(!f.home.join("new.txt").exists());
    assert!(!f.home.join("d").exists());
}

#[test]
fn git_hooks_are_read_only_while_the_workspace_is_writable() {
    let f = fixture();
    let script = "echo evil > .git/hooks/pre-commit; echo rc=$?; echo evil > .git/hooks/post-checkout; echo rc=$?; \
                  rm .git/hooks/pre-commit; echo rc=$?; echo x > out.txt; cat out.txt; mkdir -p sub/new && echo y > sub/new/f && cat sub/new/f";
    let out = sh(&envelope(&f), &f.ws, script);
    assert_eq!(
        text(&out.stdout),
        "rc=2\nrc=2\nrc=1\nx\ny\n",
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(f.ws.join(".git/hooks/pre-commit")).expect("read"),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(!f.ws.join(".git/hooks/post-checkout").exists());
    assert_eq!(
        fs::read_to_string(f.ws.join("out.txt")).expect("read"),
        "x\n"
    );
}

#[test]
fn a_read_only_folder_cannot_be_replaced_by_renaming_the_folder_above_it() {
    let f = fixture();
    let script = "mv .git .git2; echo rc=$?; mv .git/hooks .git/h2; echo rc=$?; rmdir .git/hooks; echo rc=$?; ls -a .git";
    let out = sh(&envelope(&f), &f.ws, script);
    assert_eq!(
        text(&out.stdout),
        "rc=1\nrc=1\nrc=1\n.\n..\nhooks\n",
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(f.ws.join(".git/hooks/pre-commit")).expect("read"),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(!f.ws.join(".git2").exists());
}

/// The dynamic loader of this machine.
fn loader() -> &'static str {
    [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/ld-linux-aarch64.so.1",
        "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("a dynamic loader")
}

#[test]
fn a_program_copied_into_the_noexec_folder_does_not_run() {
    let f = fixture();
    let script = format!(
        "cp /bin/echo {t}/x && chmod +x {t}/x && echo copied; {t}/x DIRECT; {l} {t}/x LOADER; echo rc=$?; /bin/echo allowed",
        t = f.tmp.display(),
        l = loader()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("DIRECT"), "{stdout}");
    assert!(!stdout.contains("LOADER"), "{stdout}");
    assert!(stdout.starts_with("copied\n"), "{stdout}");
    assert!(stdout.ends_with("allowed\n"), "{stdout}");
    assert!(!stdout.contains("rc=0"), "{stdout}");
    // The same program outside the noexec folder, in the workspace, is not in `exec`.
    let script = format!(
        "cp /bin/echo {w}/y && {w}/y WORKSPACE; echo rc=$?",
        w = f.ws.display()
    );
    let out = sh(&envelope(&f), &f.ws, &script);
    assert_eq!(text(&out.stdout), "rc=126\n", "{}", text(&out.stderr));
}

/// Runs `bash -c SCRIPT` confined with `network`, next to a TCP and a UDP listener on
/// loopback; returns what it printed and what each listener received.
fn network_round(
    network: Network,
    script: &str,
    extra_port: Option<u16>,
) -> (String, String, String) {
    let f = fixture();
    let tcp = TcpListener::bind("127.0.0.1:0").expect("tcp");
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp");
    let tcp_port = tcp.local_addr().expect("addr").port();
    let udp_port = udp.local_addr().expect("addr").port();
    let network = match network {
        Network::Ports(_) => Network::Ports(vec![extra_port.unwrap_or(tcp_port)]),
        other => other,
    };
    let mut e = envelope(&f);
    e.network = network;
    let script = script
        .replace("TCP_PORT", &tcp_port.to_string())
        .replace("UDP_PORT", &udp_port.to_string());
    let out = confined(&e, &f.ws, &["bash", "-c", &script]);
    tcp.set_nonblocking(true).expect("nonblocking");
    let mut got_tcp = String::new();
    if let Ok((mut stream, _)) = tcp.accept() {
        stream.set_nonblocking(false).expect("blocking");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let _ = stream.read_to_string(&mut got_tcp);
    }
    udp.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 64];
    let got_udp = match udp.recv(&mut buf) {
        Ok(n) => text(&buf[..n]),
        Err(_) => String::new(),
    };
    (
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
        got_tcp,
        got_udp,
    )
}

const NET_SCRIPT: &str = "echo tcp > /dev/tcp/127.0.0.1/TCP_PORT && echo tcp-ok; echo udp > /dev/udp/127.0.0.1/UDP_PORT && echo udp-ok; echo end";

#[test]
fn network_none_refuses_tcp_and_udp() {
    let (printed, tcp, udp) = network_round(Network::None, NET_SCRIPT, None);
    assert!(!printed.contains("tcp-ok"), "{printed}");
    assert!(!printed.contains("udp-ok"), "{printed}");
    assert!(printed.contains("end"), "{printed}");
    assert_eq!((tcp.as_str(), udp.as_str()), ("", ""));
}

#[test]
fn network_any_connects() {
    let (printed, tcp, udp) = network_round(Network::Any, NET_SCRIPT, None);
    assert!(printed.contains("tcp-ok\nudp-ok\nend"), "{printed}");
    assert_eq!((tcp.as_str(), udp.as_str()), ("tcp\n", "udp\n"));
}

#[test]
fn network_ports_allows_tcp_to_those_ports_only() {
    let (printed, tcp, udp) = network_round(Network::Ports(Vec::new()), NET_SCRIPT, None);
    assert!(printed.contains("tcp-ok\n"), "{printed}");
    assert!(!printed.contains("udp-ok"), "{printed}");
    assert_eq!((tcp.as_str(), udp.as_str()), ("tcp\n", ""));
    // Another port than the listener's: refused.
    let (printed, tcp, _) = network_round(Network::Ports(Vec::new()), NET_SCRIPT, Some(9));
    assert!(!printed.contains("tcp-ok"), "{printed}");
    assert_eq!(tcp, "");
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit() {
    let f = fixture();
    let mut e = envelope(&f);
    e.limits.processes = Some(32);
    // Forks until refused (at most 200), each child sleeping a little; prints the count.
    let script = "my $n = 0; for (1..200) { my $p = fork(); last unless defined $p; \
                  if ($p == 0) { sleep 2; exit 0 } $n++ } print \"$n\\n\"; 1 while wait() != -1;";
    let out = confined(&e, &f.ws, &["perl", "-e", script]);
    let count: u32 = text(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("a count: {} {}", text(&out.stdout), text(&out.stderr)));
    assert!((10..32).contains(&count), "{count} forks succeeded");
    // Without the limit, the same script makes all 200.
    let out = confined(&envelope(&f), &f.ws, &["perl", "-e", script]);
    assert_eq!(text(&out.stdout), "200\n");
}

#[test]
fn unix_sockets_are_refused_unless_allowed() {
    let f = fixture();
    let path = f.ws.join("agent.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let script = "use IO::Socket::UNIX; my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) \
                  or die \"refused: $!\\n\"; print $s \"hello\\n\"; close $s; print \"connected\\n\";";
    let sock = path.to_string_lossy().into_owned();
    let out = confined(&envelope(&f), &f.ws, &["perl", "-e", script, &sock]);
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("refused"),
        "{}",
        text(&out.stderr)
    );
    assert!(listener.accept().is_err(), "a connection came through");

    let mut e = envelope(&f);
    e.unix_sockets = true;
    let out = confined(&e, &f.ws, &["perl", "-e", script, &sock]);
    assert_eq!(text(&out.stdout), "connected\n", "{}", text(&out.stderr));
    let (mut stream, _) = listener.accept().expect("the allowed connection");
    let mut got = String::new();
    stream.set_nonblocking(false).expect("blocking");
    stream.read_to_string(&mut got).expect("read");
    assert_eq!(got, "hello\n");
    // socketpair() stays allowed without `unix_sockets`: perl's socketpair works.
    let pair = "use Socket; socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die \"$!\\n\"; print \"pair\\n\";";
    let out = confined(&envelope(&f), &f.ws, &["perl", "-e", pair]);
    assert_eq!(text(&out.stdout), "pair\n", "{}", text(&out.stderr));
}

#[test]
fn sandbox_escapes_by_system_call_are_refused() {
    let f = fixture();
    let out = sh(
        &envelope(&f),
        &f.ws,
        "unshare -U true; echo rc=$?; unshare -m true; echo rc=$?; umount /proc; echo rc=$?",
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().filter(|l| *l == "rc=0").count(),
        0,
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let status = fs::read_to_string("/proc/self/status").expect("status");
    assert!(
        status.contains("NoNewPrivs:\t0"),
        "the test itself is not confined"
    );
    let out = sh(
        &envelope(&f),
        &f.ws,
        "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
    );
    assert_eq!(text(&out.stdout), "NoNewPrivs:\t1\nSeccomp:\t2\n");
}

#[test]
fn bad_input_is_refused_with_125_and_nothing_runs() {
    let f = fixture();
    let marker = f.ws.join("ran");
    let script = format!("touch {}", marker.display());
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["__confine", "--", "sh", "-c", &script])
        .env("ZERO_POLICY_ENVELOPE", "{not json")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).starts_with(
            "zero-policy: cannot confine the call: `ZERO_POLICY_ENVELOPE` is not an envelope"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args(["__confine", "--", "sh", "-c", &script])
        .env_remove("ZERO_POLICY_ENVELOPE")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(125));
    let mut e = envelope(&f);
    e.deny_reads.push("relative/*.pem".to_owned());
    let out = sh(&e, &f.ws, &script);
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("deny glob `relative/*.pem`"),
        "{}",
        text(&out.stderr)
    );
    assert!(!marker.exists());
}

#[test]
fn the_program_sees_no_envelope_and_its_exit_status_passes_through() {
    let f = fixture();
    let out = sh(
        &envelope(&f),
        &f.ws,
        "echo \"[$ZERO_POLICY_ENVELOPE]\"; exit 7",
    );
    assert_eq!(text(&out.stdout), "[]\n");
    assert_eq!(out.status.code(), Some(7));
    // (A path, not a name: a PATH search that meets an unreadable folder says 126.)
    let out = confined(&envelope(&f), &f.ws, &["/no/such/program"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out.stderr).contains("cannot run `/no/such/program`"));
    // Asked for, what was applied is said on stderr; the program does not see the ask.
    let out = Command::new(env!("CARGO_BIN_EXE_zero-policy"))
        .args([
            "__confine",
            "--",
            "sh",
            "-c",
            "echo \"[$ZERO_POLICY_CONFINE_REPORT]\"",
        ])
        .current_dir(&f.ws)
        .env(
            "ZERO_POLICY_ENVELOPE",
            serde_json::to_string(&envelope(&f)).expect("json"),
        )
        .env("ZERO_POLICY_CONFINE_REPORT", "1")
        .output()
        .expect("run");
    assert_eq!(text(&out.stdout), "[]\n");
    let report = text(&out.stderr);
    assert!(
        report.starts_with("zero-policy: confined: Landlock ABI "),
        "{report}"
    );
    assert!(
        report.contains("mount namespace, no network, 3 hidden, 1 read-only, 1 noexec, seccomp"),
        "{report}"
    );
}

#[test]
fn a_file_size_limit_stops_a_large_write() {
    let f = fixture();
    let mut e = envelope(&f);
    e.limits.file_size = Some(4096);
    let out = sh(&e, &f.ws, "head -c 100000 /dev/zero > big; echo rc=$?");
    assert_ne!(text(&out.stdout), "rc=0\n");
    let size = fs::metadata(f.ws.join("big")).expect("big").len();
    assert!(size <= 4096, "{size} bytes written");
}
