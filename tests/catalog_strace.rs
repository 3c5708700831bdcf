//! The catalog against the real programs: every example of `catalog/*.yaml`
//! (`examples:`, docs/catalog.md) runs under `strace -f` in a throwaway
//! world, and every file it opened, wrote, created or deleted, every program
//! it executed and every connection it attempted must lie within the effects
//! the engine predicted for that command line. This is the differential test
//! of the effects engine against the programs it describes.
//!
//! **The world.** A fresh folder per example: a home (`home/dev`, with a
//! planted `.ssh/id_rsa`, `.aws/credentials`, `.bashrc`) and a workspace
//! (`home/dev/project`, a git repository with sources, data files, an
//! archive and a SQLite database). The example is analysed with that home
//! and workspace, so the engine's paths are the world's paths.
//!
//! **The bounds.** The example runs as `bash -c RUN` in the workspace with
//! an empty environment but for `HOME`, `PATH`, `TMPDIR` and git's identity;
//! as the unprivileged user `nobody` (`setpriv`), owner of the world and of
//! nothing else; in a new network namespace with no interface up
//! (`unshare -n`: no connection leaves the machine, and every attempt is
//! still seen); under `prlimit` (processes, file size, open files, CPU
//! time) and `timeout` (wall clock, the whole process group killed), with a
//! last deadline here that kills `strace`. An example whose predicted
//! writes leave the world, or that the engine tags `destructive`,
//! `privileged` or `kernel`, is not run, and must say so (`strace: false`).
//! An example whose account runs code no rule can see is not compared: the
//! engine says it cannot know what that code does.
//!
//! **The system rule set.** What any program opens to start and run is no
//! effect of the command line: [`SYSTEM_READS`] (the loader, libraries,
//! installed programs and data, `/etc` but for its secrets, the kernel's
//! `/proc` and `/sys`, the harmless devices), [`SYSTEM_WRITES`] (the
//! terminal and null devices), [`SYSTEM_SOCKETS`] (the name service), a
//! DNS query (port 53) for a call that fetches a host by name, and scratch
//! files: files inside the world that the run creates and removes again.
//! It is the same for every program; what one program does of its own is
//! the catalog's to say.
//!
//! A folder is listed when its entries are read (`getdents64`), not when it
//! is opened (to work relative to it, or to sync it). Only what succeeded
//! counts, except connections: every attempt counts
//! (the network is cut, so none succeeds), and so does every open of a file
//! the world planted.
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zero_policy::cel::functions::compile_path_glob;
use zero_policy::effects::catalog::Spec;
use zero_policy::effects::{self, Effects, Env, Input};
use zero_policy::loader;
use zero_policy::model::RawCommandExample;

/// The user the examples run as.
const NOBODY: u32 = 65_534;
/// Where programs are looked for, in the world and here.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
/// Wall-clock seconds an example may run (then its process group is killed).
const SECONDS: u64 = 20;
/// The last deadline: `strace` itself is killed.
const DEADLINE: Duration = Duration::from_secs(SECONDS + 15);

/// Paths any program reads to start and run (globs; `**` crosses folders).
const SYSTEM_READS: &[&str] = &[
    // the loader, shared libraries, installed programs and their data
    "/etc/ld.so.cache",
    "/lib/**",
    "/lib64/**",
    "/usr/lib/**",
    "/usr/lib64/**",
    "/usr/libexec/**",
    "/usr/local/lib/**",
    "/usr/share/**",
    "/usr/local/share/**",
    "/bin/**",
    "/sbin/**",
    "/usr/bin/**",
    "/usr/sbin/**",
    "/usr/local/bin/**",
    "/usr/include/**",
    // the machine's configuration (its secrets excepted: SYSTEM_SECRETS)
    "/etc/**",
    // the kernel's own files: the process's own, and the machine's
    "/proc/self/**",
    "/proc/thread-self/**",
    "/proc/{cpuinfo,meminfo,stat,filesystems,mounts,version,loadavg,uptime,swaps}",
    "/proc/sys/**",
    "/sys/**",
    // harmless devices
    "/dev/{null,zero,full,random,urandom,tty,ptmx,stdin,stdout,stderr}",
    "/dev/pts/**",
    "/dev/fd/**",
    "/dev/shm/**",
    // the folders above
    "/",
    "/etc",
    "/usr",
    "/usr/local",
    "/proc",
    "/dev",
];

/// Files of `/etc` that hold secrets: their reads are effects like any other.
const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow*",
    "/etc/gshadow*",
    "/etc/sudoers*",
    "/etc/sudoers.d/**",
    "/etc/ssh/*_key",
    "/etc/ssl/private/**",
];

/// Paths any program may write: the terminal and the null devices.
const SYSTEM_WRITES: &[&str] = &[
    "/dev/{null,zero,full,tty,stdout,stderr}",
    "/dev/pts/**",
    "/dev/fd/**",
];

/// Local sockets of the name service (user and host lookups by the C library).
const SYSTEM_SOCKETS: &[&str] = &[
    "/run/systemd/userdb/**",
    "/var/run/nscd/socket",
    "/run/nscd/socket",
];

#[test]
fn catalog_examples_stay_within_their_predicted_effects() {
    let tools = require_tools();
    let catalog = loader::catalog::shipped();
    let base = tempfile::Builder::new()
        .prefix("zp-strace-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let template = base.path().join("template");
    make_world(&template);
    let system = Rules::new(SYSTEM_READS, SYSTEM_SECRETS, SYSTEM_WRITES, SYSTEM_SOCKETS);

    let mut tally = Tally::default();
    let mut findings: Vec<String> = Vec::new();
    let mut unmarked: Vec<String> = Vec::new();
    let mut builtins = HashMap::new();
    for (names, spec) in entries(catalog) {
        let examples = examples_of(&spec);
        if examples.is_empty() {
            continue;
        }
        tally.entries += 1;
        for ex in examples {
            tally.examples += 1;
            let k = tally.examples;
            let world = base.path().join(format!("w{k}"));
            copy_tree(&template, &world);
            let home = world.join("home/dev");
            let ws = home.join("project");
            let fx = predict(&ex.run, &home, &ws, catalog);
            let Some(first) = fx.commands.iter().find(|c| names.contains(&c.program)) else {
                findings.push(format!(
                    "{}: `{}` runs no `{}`",
                    spec.name, ex.run, names[0]
                ));
                continue;
            };
            let leaves = leaves_world(&fx, &world, first);
            if ex.strace == Some(false) {
                tally.not_run += 1;
                remove(&world);
                continue;
            }
            if let Some(why) = leaves {
                unmarked.push(format!(
                    "{}: `{}` {why}: mark it `strace: false`",
                    spec.name, ex.run
                ));
                remove(&world);
                continue;
            }
            let missing: Vec<&str> = fx
                .commands
                .iter()
                .map(|c| c.program.as_str())
                .filter(|p| !installed(p, &mut builtins))
                .collect();
            if !missing.is_empty() {
                tally.not_installed += 1;
                *tally.missing.entry(missing[0].to_string()).or_default() += 1;
                remove(&world);
                continue;
            }
            if fx.runs_code {
                tally.runs_code += 1;
                remove(&world);
                continue;
            }
            let before = snapshot(&world);
            let trace = run_traced(&tools, &ex.run, &world, &home, &ws);
            tally.run += 1;
            if trace.timed_out {
                tally.timed_out += 1;
            }
            let observed = observe(&trace, &world);
            let state = own_state(&fx, catalog, &home);
            let outside = compare(&observed, &fx, &state, &system, &world, &before, &mut tally);
            for o in outside {
                findings.push(format!("{}: `{}`: {o}", spec.name, ex.run));
            }
            remove(&world);
        }
    }
    let mut summary = String::new();
    writeln!(
        summary,
        "catalog strace: {} entries with examples, {} examples; {} run under strace, \
         {} skipped (not installed), {} not run (`strace: false`), {} not compared (run code \
         no rule can see), {} timed out; {} distinct effects observed: {} predicted, {} \
         system files (the rule set), {} an entry's own `state:`, {} outside the prediction",
        tally.entries,
        tally.examples,
        tally.run,
        tally.not_installed,
        tally.not_run,
        tally.runs_code,
        tally.timed_out,
        tally.observed,
        tally.predicted,
        tally.system,
        tally.state,
        findings.len()
    )
    .unwrap();
    if !tally.missing.is_empty() {
        writeln!(summary, "not installed: {:?}", tally.missing).unwrap();
    }
    eprintln!("{summary}");
    for f in &findings {
        eprintln!("outside the prediction: {f}");
    }
    for u in &unmarked {
        eprintln!("would leave its world: {u}");
    }
    assert!(
        unmarked.is_empty(),
        "examples that would leave their world: {unmarked:#?}"
    );
    assert!(
        findings.is_empty(),
        "{summary}observed effects outside the prediction: {findings:#?}"
    );
    // The harness ran: a broken strace or world would run nothing and find nothing.
    assert!(tally.run >= 100, "{summary}");
    assert!(tally.observed > 0, "{summary}");
}

/// The tools the harness needs, each a path; fails the test saying what is missing.
struct Tools {
    strace: String,
    unshare: String,
    setpriv: String,
    prlimit: String,
    timeout: String,
    bash: String,
}

fn require_tools() -> Tools {
    let find = |name: &str| {
        which(name).unwrap_or_else(|| {
            panic!("`{name}` is missing: `.ci/run` installs strace; util-linux gives unshare, setpriv and prlimit")
        })
    };
    let tools = Tools {
        strace: find("strace"),
        unshare: find("unshare"),
        setpriv: find("setpriv"),
        prlimit: find("prlimit"),
        timeout: find("timeout"),
        bash: find("bash"),
    };
    // A network namespace and another user need root (CI's container is root).
    let ok = Command::new(&tools.unshare)
        .args(["-n", "--", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "`unshare -n` failed: the harness cuts the network with a new network namespace, \
         which needs root"
    );
    tools
}

fn which(name: &str) -> Option<String> {
    PATH.split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|p| p.to_string_lossy().into_owned())
}

/// Whether `program` runs here: on the world's `PATH`, or a bash builtin.
fn installed(program: &str, builtins: &mut HashMap<String, bool>) -> bool {
    if which(program).is_some() {
        return true;
    }
    *builtins.entry(program.to_string()).or_insert_with(|| {
        Command::new("bash")
            .args([
                "-c",
                "[ \"$(type -t \"$1\")\" = builtin ] || [ \"$(type -t \"$1\")\" = keyword ]",
                "-",
                program,
            ])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Each entry of the catalog once, with all its names.
fn entries(catalog: &effects::Catalog) -> Vec<(Vec<String>, Arc<Spec>)> {
    let mut by_spec: Vec<(Vec<String>, Arc<Spec>)> = Vec::new();
    for name in catalog.names() {
        let spec = catalog.get(name).unwrap();
        match by_spec.iter_mut().find(|(_, s)| Arc::ptr_eq(s, &spec)) {
            Some((names, _)) => names.push(name.to_string()),
            None => by_spec.push((vec![name.to_string()], spec)),
        }
    }
    // The entry's own name first.
    for (names, spec) in &mut by_spec {
        names.sort_by_key(|n| n != &spec.name);
    }
    by_spec
}

fn examples_of(spec: &Spec) -> Vec<RawCommandExample> {
    let mut out = spec.examples.clone();
    for sub in spec.subcommands.values() {
        out.extend(examples_of(sub));
    }
    out
}

fn predict(run: &str, home: &Path, ws: &Path, catalog: &effects::Catalog) -> Effects {
    let home = home.to_str().unwrap();
    let ws = ws.to_str().unwrap();
    let env = Env {
        catalog,
        home,
        workspace: ws,
    };
    let input = Input {
        shell: Some(Ok(run.to_string())),
        ..Input::default()
    };
    effects::compute(&input, &env)
}

/// The files the predicted commands keep as their own (`state:` of their
/// entries and subcommands), as absolute globs.
fn own_state(fx: &Effects, catalog: &effects::Catalog, home: &Path) -> Vec<String> {
    let home = home.to_string_lossy();
    let mut out = Vec::new();
    for c in &fx.commands {
        let Some(mut spec) = catalog.get(&c.program) else {
            continue;
        };
        let mut globs = spec.state.clone();
        for word in c.subcommand.split_whitespace() {
            let Some(sub) = spec.subcommands.get(word).cloned() else {
                break;
            };
            spec = sub;
            globs.extend(spec.state.iter().cloned());
        }
        for g in globs {
            out.push(if let Some(rest) = g.strip_prefix("~/") {
                format!("{home}/{rest}")
            } else if g.starts_with('/') {
                g
            } else {
                format!("{}/{g}", c.cwd)
            });
        }
    }
    out
}

/// Why the example must not run here, if it must not.
fn leaves_world(fx: &Effects, world: &Path, first: &effects::Command) -> Option<String> {
    let root = format!("{}/", world.display());
    if let Some(w) = fx.writes.iter().find(|w| !w.starts_with(&root)) {
        return Some(format!("writes `{w}`, outside the world"));
    }
    for c in &fx.commands {
        for t in ["destructive", "privileged", "kernel"] {
            if c.tags.iter().any(|x| x == t) {
                return Some(format!("`{}` is tagged `{t}`", c.program));
            }
        }
    }
    if !first.known {
        return Some(format!("`{}` is not known", first.program));
    }
    None
}

// ─────────────────────────────────────────────────────────────── the world

/// Plants the world: a home with credentials, and a workspace that is a git
/// repository with sources, data, an archive and a database.
fn make_world(root: &Path) {
    let home = root.join("home/dev");
    let ws = home.join("project");
    let files: &[(&str, &str)] = &[
        (
            ".ssh/id_rsa",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n",
        ),
        (".ssh/id_rsa.pub", "ssh-rsa AAAA planted dev@host\n"),
        (
            ".aws/credentials",
            "[default]\naws_secret_access_key = planted\n",
        ),
        (".bashrc", "echo bashrc-ran\n"),
        ("project/README.md", "# Project\n\nTODO: write more\n"),
        ("project/notes.txt", "hello\nworld\nTODO fix\nhello again\n"),
        ("project/a.txt", "alpha\nbeta\ngamma\n"),
        ("project/b.txt", "alpha\nbeta\ndelta\n"),
        ("project/.env", "API_KEY=planted\n"),
        (
            "project/src/main.rs",
            "fn main() {\n    println!(\"hi\"); // TODO\n}\n",
        ),
        ("project/src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n"),
        (
            "project/data.json",
            "{\"name\": \"p\", \"items\": [1, 2, 3], \"nested\": {\"k\": \"v\"}}\n",
        ),
        ("project/data.csv", "id,name\n1,a\n2,b\n3,c\n"),
        (
            "project/package.json",
            "{\"name\": \"p\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"echo ok\"}}\n",
        ),
        ("project/Makefile", "all:\n\t@echo built\n"),
        ("project/script.py", "print('hi')\n"),
        ("project/script.sh", "echo hi\n"),
        (
            "project/fix.diff",
            "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
        ),
        ("project/build/out.o", "object\n"),
        ("project/build/gen/x.o", "object\n"),
        ("project/.gitignore", "build/\n"),
    ];
    for (rel, text) in files {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    let sh = |script: &str| {
        let out = Command::new("bash")
            .args(["-c", script])
            .current_dir(&ws)
            .env_clear()
            .envs(world_env(root, &home))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    sh("git init -q -b main . && git add -A && git commit -q -m init");
    sh("tar cf archive.tar src && tar czf archive.tar.gz src && gzip -c a.txt > a.txt.gz");
    if which("zip").is_some() {
        sh("zip -q -r archive.zip src");
    }
    if which("sqlite3").is_some() {
        sh(
            "sqlite3 app.db 'create table t(id integer, name text); insert into t values (1, \"a\");'",
        );
    }
    chown_tree(root);
}

/// The variables of every run.
fn world_env(world: &Path, home: &Path) -> Vec<(String, String)> {
    let home = home.to_string_lossy().into_owned();
    vec![
        ("HOME".into(), home),
        ("PATH".into(), PATH.into()),
        (
            "TMPDIR".into(),
            world.join("tmp").to_string_lossy().into_owned(),
        ),
        ("LANG".into(), "C.UTF-8".into()),
        ("USER".into(), "dev".into()),
        ("TERM".into(), "dumb".into()),
        ("GIT_AUTHOR_NAME".into(), "Dev".into()),
        ("GIT_AUTHOR_EMAIL".into(), "dev@example.com".into()),
        ("GIT_COMMITTER_NAME".into(), "Dev".into()),
        ("GIT_COMMITTER_EMAIL".into(), "dev@example.com".into()),
        ("GIT_AUTHOR_DATE".into(), "2025-01-01T00:00:00Z".into()),
        ("GIT_COMMITTER_DATE".into(), "2025-01-01T00:00:00Z".into()),
    ]
}

fn chown_tree(p: &Path) {
    std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    if std::fs::symlink_metadata(p).unwrap().is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            chown_tree(&e.unwrap().path());
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .args(["-a", "--"])
        .arg(from)
        .arg(to)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

fn remove(world: &Path) {
    // The run may have made a folder it cannot enter; the harness is root.
    let _ = std::fs::remove_dir_all(world);
}

/// Every path in the world before the run.
fn snapshot(root: &Path) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        out.insert(p.to_string_lossy().into_owned());
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out
}

// ─────────────────────────────────────────────────────────────── the run

struct Trace {
    /// The text of each process's trace, by pid.
    logs: BTreeMap<u32, String>,
    timed_out: bool,
}

fn run_traced(tools: &Tools, run: &str, world: &Path, home: &Path, ws: &Path) -> Trace {
    let logdir = world.with_extension("trace");
    std::fs::create_dir_all(&logdir).unwrap();
    let out = std::fs::File::create(world.with_extension("out")).unwrap();
    let err = out.try_clone().unwrap();
    let mut child = Command::new(&tools.unshare)
        .args(["-n", "--"])
        .arg(&tools.strace)
        .args(["-ff", "-qq", "-y", "-s", "64", "-o"])
        .arg(logdir.join("t"))
        .args([
            "-e",
            "trace=execve,execveat,open,openat,openat2,creat,unlink,unlinkat,rmdir,mkdir,\
             mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,truncate,chdir,\
             fchdir,connect,clone,clone3,fork,vfork,getdents64,getdents",
            "-e",
            "signal=none",
            "--",
        ])
        .arg(&tools.setpriv)
        .args([
            format!("--reuid={NOBODY}"),
            format!("--regid={NOBODY}"),
            "--clear-groups".to_string(),
            "--".to_string(),
        ])
        .arg(&tools.prlimit)
        .args([
            "--nproc=128",
            "--fsize=16777216",
            "--nofile=256",
            &format!("--cpu={SECONDS}"),
            "--",
        ])
        .arg(&tools.timeout)
        .args(["-k", "2", &SECONDS.to_string()])
        .arg(&tools.bash)
        .args(["-c", run])
        .current_dir(ws)
        .env_clear()
        .envs(world_env(world, home))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut timed_out = false;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > DEADLINE {
            timed_out = true;
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut logs = BTreeMap::new();
    for e in std::fs::read_dir(&logdir).unwrap() {
        let p = e.unwrap().path();
        let pid = p
            .extension()
            .and_then(|x| x.to_str())
            .and_then(|x| x.parse().ok());
        if let Some(pid) = pid {
            logs.insert(pid, std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
    let _ = std::fs::remove_dir_all(&logdir);
    let _ = std::fs::remove_file(world.with_extension("out"));
    Trace { logs, timed_out }
}

// ─────────────────────────────────────────────────────────── what it did

#[derive(Debug, Default)]
struct Observed {
    reads: Vec<String>,
    lists: Vec<String>,
    writes: Vec<String>,
    deletes: Vec<String>,
    execs: Vec<String>,
    connects: Vec<Connect>,
    /// Opens of a planted file of the home that failed (still attempts).
    attempts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Connect {
    Inet { ip: String, port: u16 },
    Unix(String),
    Other(String),
}

/// One syscall line: name, arguments (top-level, as printed) and result.
struct Call {
    name: String,
    args: Vec<String>,
    ok: bool,
    ret: String,
}

fn parse_line(line: &str) -> Option<Call> {
    let open = line.find('(')?;
    let name = &line[..open];
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    // The result follows the last `) = ` outside quotes.
    let rest = &line[open + 1..];
    let (args, ret) = split_args(rest)?;
    let ok = !ret.starts_with("-1") && !ret.starts_with('?');
    Some(Call {
        name: name.to_string(),
        args,
        ok,
        ret: ret.to_string(),
    })
}

/// Splits `a, "b, c", {d, e}) = RET` into its arguments and `RET`.
fn split_args(s: &str) -> Option<(Vec<String>, &str)> {
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut quoted = false;
    let mut escaped = false;
    let mut cur = String::new();
    for (i, ch) in s.char_indices() {
        if quoted {
            cur.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                quoted = false;
            }
            continue;
        }
        match ch {
            '"' => {
                quoted = true;
                cur.push(ch);
            }
            '{' | '[' | '(' | '<' => {
                depth += 1;
                cur.push(ch);
            }
            '}' | ']' | '>' => {
                depth -= 1;
                cur.push(ch);
            }
            ')' if depth > 0 => {
                depth -= 1;
                cur.push(ch);
            }
            ')' => {
                let t = cur.trim();
                if !t.is_empty() {
                    args.push(t.to_string());
                }
                let ret = s[i + 1..].trim_start().strip_prefix('=')?.trim();
                return Some((args, ret));
            }
            ',' if depth == 0 => {
                args.push(cur.trim().to_string());
                cur.clear();
            }
            _ => cur.push(ch),
        }
    }
    None
}

/// The text of a quoted argument (`"a\nb"`), unescaped; `None` when it is not one.
fn unquote(arg: &str) -> Option<String> {
    let inner = arg.strip_prefix('"')?;
    let inner = inner.strip_suffix("...").unwrap_or(inner);
    let inner = inner.strip_suffix('"')?;
    let mut bytes = Vec::new();
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'v') => bytes.push(0x0b),
            Some(b'f') => bytes.push(0x0c),
            Some(b'x') => {
                let h: String = [it.next(), it.next()]
                    .iter()
                    .flatten()
                    .map(|b| *b as char)
                    .collect();
                bytes.push(u8::from_str_radix(&h, 16).unwrap_or(b'?'));
            }
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(n @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(*n - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(v).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The path a decoded descriptor names (`3</a/b>`), if it names one.
fn fd_path(arg: &str) -> Option<String> {
    let start = arg.find('<')?;
    let inner = arg[start + 1..].strip_suffix('>')?;
    inner.starts_with('/').then(|| inner.to_string())
}

/// `path` made absolute against the folder a descriptor or the working folder names.
fn resolve(dirfd: Option<&str>, path: &str, cwd: &str) -> String {
    if path.starts_with('/') {
        return clean(path);
    }
    let base = match dirfd {
        Some(d) if d != "AT_FDCWD" => fd_path(d).unwrap_or_else(|| cwd.to_string()),
        _ => cwd.to_string(),
    };
    clean(&format!("{base}/{path}"))
}

/// Removes `.`, `..` and repeated `/` (lexically).
fn clean(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// What the run did, from the traces of its processes: each process starts in
/// its parent's folder at the moment it was made, and belongs to the harness
/// (`setpriv`, `prlimit`, `timeout`) until it becomes `bash -c RUN`.
fn observe(trace: &Trace, world: &Path) -> Observed {
    let parsed: BTreeMap<u32, Vec<Call>> = trace
        .logs
        .iter()
        .map(|(pid, text)| (*pid, text.lines().filter_map(parse_line).collect()))
        .collect();
    // child -> (parent, index of the call that made it)
    let mut parent: HashMap<u32, (u32, usize)> = HashMap::new();
    for (pid, calls) in &parsed {
        for (i, c) in calls.iter().enumerate() {
            if matches!(c.name.as_str(), "clone" | "clone3" | "fork" | "vfork")
                && c.ok
                && let Ok(child) = c.ret.split_whitespace().next().unwrap_or("").parse::<u32>()
            {
                parent.insert(child, (*pid, i));
            }
        }
    }
    let ws = world
        .join("home/dev/project")
        .to_string_lossy()
        .into_owned();
    let mut state: HashMap<u32, (String, bool)> = HashMap::new(); // at the start: (cwd, harness)
    let mut obs = Observed::default();
    // Processes in the order they were made: a parent before its children.
    let mut order: Vec<u32> = parsed.keys().copied().collect();
    order.sort_by_key(|p| depth_of(*p, &parent));
    let mut at: HashMap<(u32, usize), (String, bool)> = HashMap::new(); // state at each clone
    let planted = world.join("home/dev").to_string_lossy().into_owned();
    for pid in order {
        let (mut cwd, mut harness) = match parent.get(&pid) {
            Some(key) => at.get(key).cloned().unwrap_or((ws.clone(), true)),
            None => (ws.clone(), true),
        };
        state.insert(pid, (cwd.clone(), harness));
        for (i, c) in parsed[&pid].iter().enumerate() {
            let arg = |k: usize| c.args.get(k).map(String::as_str).unwrap_or("");
            let path_at = |k: usize, cwd: &str| unquote(arg(k)).map(|p| resolve(None, &p, cwd));
            let path_dirfd = |d: usize, k: usize, cwd: &str| {
                unquote(arg(k)).map(|p| resolve(Some(arg(d)), &p, cwd))
            };
            match c.name.as_str() {
                "clone" | "clone3" | "fork" | "vfork" => {
                    at.insert((pid, i), (cwd.clone(), harness));
                }
                "execve" | "execveat" if c.ok => {
                    let p = if c.name == "execve" {
                        path_at(0, &cwd)
                    } else {
                        path_dirfd(0, 1, &cwd)
                    };
                    let p = p.unwrap_or_default();
                    if harness {
                        // `bash -c RUN` ends the harness's part.
                        if p.ends_with("/bash") && arg(1).contains("\"-c\"") {
                            harness = false;
                        }
                    } else {
                        obs.execs.push(p);
                    }
                }
                "chdir" if c.ok => {
                    if let Some(p) = path_at(0, &cwd) {
                        cwd = p;
                    }
                }
                "fchdir" if c.ok => {
                    if let Some(p) = fd_path(arg(0)) {
                        cwd = p;
                    }
                }
                _ if harness => {}
                "open" | "openat" | "openat2" | "creat" => {
                    let (p, flags) = match c.name.as_str() {
                        "open" => (path_at(0, &cwd), arg(1).to_string()),
                        "creat" => (path_at(0, &cwd), "O_WRONLY|O_CREAT|O_TRUNC".to_string()),
                        _ => (path_dirfd(0, 1, &cwd), arg(2).to_string()),
                    };
                    let Some(p) = p else { continue };
                    if !c.ok {
                        if p.starts_with(&planted) && !p.starts_with(&ws) && Path::new(&p).exists()
                        {
                            obs.attempts.push(p);
                        }
                        continue;
                    }
                    // The real path the descriptor names, where strace shows it.
                    let p = own_proc(&fd_path(&c.ret).unwrap_or(p), &trace.logs);
                    if flags.contains("O_PATH") {
                        continue;
                    }
                    let write = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                        .iter()
                        .any(|f| flags.contains(f));
                    if flags.contains("O_TMPFILE") {
                        // an unnamed file, gone when closed: scratch
                        continue;
                    }
                    if write {
                        obs.writes.push(p);
                    } else if !(flags.contains("O_DIRECTORY") || Path::new(&p).is_dir()) {
                        obs.reads.push(p);
                    }
                    // A folder opened is listed only when its entries are read.
                }
                "getdents64" | "getdents" if c.ok => {
                    if let Some(p) = fd_path(arg(0)) {
                        obs.lists.push(own_proc(&p, &trace.logs));
                    }
                }
                "unlink" | "rmdir" if c.ok => obs.deletes.extend(path_at(0, &cwd)),
                "unlinkat" if c.ok => obs.deletes.extend(path_dirfd(0, 1, &cwd)),
                "mkdir" | "truncate" if c.ok => obs.writes.extend(path_at(0, &cwd)),
                "mkdirat" if c.ok => obs.writes.extend(path_dirfd(0, 1, &cwd)),
                "rename" if c.ok => {
                    obs.deletes.extend(path_at(0, &cwd));
                    obs.writes.extend(path_at(1, &cwd));
                }
                "renameat" | "renameat2" if c.ok => {
                    obs.deletes.extend(path_dirfd(0, 1, &cwd));
                    obs.writes.extend(path_dirfd(2, 3, &cwd));
                }
                "link" | "symlink" if c.ok => obs.writes.extend(path_at(1, &cwd)),
                "linkat" if c.ok => obs.writes.extend(path_dirfd(2, 3, &cwd)),
                "symlinkat" if c.ok => obs.writes.extend(path_dirfd(1, 2, &cwd)),
                "connect" => obs.connects.push(parse_sockaddr(arg(1))),
                _ => {}
            }
        }
    }
    obs
}

/// `/proc/PID/…` of a process of the run is its own: `/proc/self/…`.
fn own_proc(p: &str, logs: &BTreeMap<u32, String>) -> String {
    if let Some(rest) = p.strip_prefix("/proc/") {
        let (pid, tail) = rest.split_once('/').unwrap_or((rest, ""));
        if pid.parse().is_ok_and(|n: u32| logs.contains_key(&n)) {
            return format!("/proc/self/{tail}");
        }
    }
    p.to_string()
}

fn depth_of(pid: u32, parent: &HashMap<u32, (u32, usize)>) -> usize {
    let mut d = 0;
    let mut p = pid;
    while let Some((q, _)) = parent.get(&p) {
        d += 1;
        p = *q;
        if d > 10_000 {
            break;
        }
    }
    d
}

/// strace's `{sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("1.2.3.4")}`.
fn parse_sockaddr(s: &str) -> Connect {
    let field = |key: &str| {
        let i = s.find(key)? + key.len();
        let rest = &s[i..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim().to_string())
    };
    let quoted = |text: &str| {
        let a = text.find('"')?;
        let b = text[a + 1..].find('"')?;
        Some(text[a + 1..a + 1 + b].to_string())
    };
    if s.contains("AF_UNIX") {
        return Connect::Unix(
            field("sun_path=")
                .and_then(|p| quoted(&p))
                .unwrap_or_default(),
        );
    }
    if s.contains("AF_INET") {
        let port = field("sin6_port=")
            .or_else(|| field("sin_port="))
            .and_then(|p| {
                p.trim_start_matches("htons(")
                    .trim_end_matches(')')
                    .parse()
                    .ok()
            })
            .unwrap_or(0);
        let ip = s
            .find("inet_addr(")
            .or_else(|| s.find("inet_pton("))
            .and_then(|i| {
                let rest = &s[i..];
                let close = rest.find(')')?;
                // inet_pton(AF_INET6, "::1") has two quoted parts: the address is the last.
                rest[..close].rsplit('"').nth(1).map(str::to_string)
            })
            .unwrap_or_default();
        return Connect::Inet { ip, port };
    }
    Connect::Other(s.to_string())
}

// ─────────────────────────────────────────────────────────── the compare

struct Rules {
    reads: Vec<zero_policy::cel::functions::PathGlob>,
    secrets: Vec<zero_policy::cel::functions::PathGlob>,
    writes: Vec<zero_policy::cel::functions::PathGlob>,
    sockets: Vec<zero_policy::cel::functions::PathGlob>,
}

impl Rules {
    fn new(reads: &[&str], secrets: &[&str], writes: &[&str], sockets: &[&str]) -> Rules {
        let compile = |v: &[&str]| v.iter().map(|g| compile_path_glob(g).unwrap()).collect();
        Rules {
            reads: compile(reads),
            secrets: compile(secrets),
            writes: compile(writes),
            sockets: compile(sockets),
        }
    }

    fn read(&self, p: &str) -> bool {
        self.reads.iter().any(|g| g.is_match(p)) && !self.secrets.iter().any(|g| g.is_match(p))
    }

    fn write(&self, p: &str) -> bool {
        self.writes.iter().any(|g| g.is_match(p))
    }

    fn socket(&self, p: &str) -> bool {
        self.sockets.iter().any(|g| g.is_match(p))
    }
}

#[derive(Default)]
struct Tally {
    entries: usize,
    examples: usize,
    run: usize,
    not_installed: usize,
    not_run: usize,
    runs_code: usize,
    timed_out: usize,
    /// Observed effects, and those the system rule set accepted.
    observed: usize,
    predicted: usize,
    system: usize,
    state: usize,
    missing: BTreeMap<String, usize>,
}

/// Whether one of the engine's path patterns covers `path` (a pattern `D/**`
/// covers `D` itself too).
fn covered(path: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|pat| {
        pat == path
            || pat
                .strip_suffix("/**")
                .is_some_and(|d| d == path || (d.is_empty() && path == "/"))
            || compile_path_glob(pat).is_ok_and(|g| g.is_match(path))
    })
}

/// The observed effects outside the prediction, one sentence each.
fn compare(
    obs: &Observed,
    fx: &Effects,
    state: &[String],
    system: &Rules,
    world: &Path,
    before: &HashSet<String>,
    tally: &mut Tally,
) -> Vec<String> {
    let root = format!("{}/", world.display());
    // Scratch: made by the run inside the world and gone again by its end.
    let scratch = |p: &str| {
        p.starts_with(&root) && !before.contains(p) && std::fs::symlink_metadata(p).is_err()
    };
    let readable: Vec<String> = fx.reads.iter().chain(&fx.writes).cloned().collect();
    let listable: Vec<String> = readable.iter().chain(&fx.lists).cloned().collect();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut note = |what: &str, p: &str, ok: bool, sys: bool, out: &mut Vec<String>| {
        if !seen.insert(format!("{what} {p}")) {
            return;
        }
        tally.observed += 1;
        if ok {
            tally.predicted += 1;
        } else if sys {
            tally.system += 1;
        } else if covered(p, state) {
            tally.state += 1;
        } else {
            out.push(format!("{what} `{p}`"));
        }
    };
    for p in &obs.reads {
        note(
            "reads",
            p,
            covered(p, &readable),
            system.read(p) || scratch(p),
            &mut out,
        );
    }
    for p in &obs.attempts {
        note("tries to read", p, covered(p, &readable), false, &mut out);
    }
    for p in &obs.lists {
        note(
            "lists",
            p,
            covered(p, &listable),
            system.read(p) || scratch(p),
            &mut out,
        );
    }
    for p in &obs.writes {
        note(
            "writes",
            p,
            covered(p, &fx.writes),
            system.write(p) || scratch(p),
            &mut out,
        );
    }
    for p in &obs.deletes {
        note("deletes", p, covered(p, &fx.writes), scratch(p), &mut out);
    }
    let programs: HashSet<&str> = fx.commands.iter().map(|c| c.program.as_str()).collect();
    // `system()` and `popen()` run a script through `/bin/sh -c`: a shell
    // that runs a script the engine read as commands of another's.
    let nested = fx.commands.iter().any(|c| !c.wrappers.is_empty());
    for p in &obs.execs {
        let base = p.rsplit('/').next().unwrap_or(p);
        let shell = nested && matches!(base, "sh" | "dash" | "bash");
        note("runs", p, programs.contains(base), shell, &mut out);
    }
    let hosts: Vec<&str> = fx.fetches.iter().map(|f| f.host.as_str()).collect();
    let by_name = hosts
        .iter()
        .any(|h| !h.is_empty() && h.parse::<std::net::IpAddr>().is_err());
    for c in &obs.connects {
        match c {
            Connect::Inet { ip, port } => {
                let ok = hosts
                    .iter()
                    .any(|h| *h == "*" || h.trim_matches(['[', ']']) == ip);
                let dns = *port == 53 && by_name;
                note("connects to", &format!("{ip}:{port}"), ok, dns, &mut out);
            }
            Connect::Unix(p) => {
                note(
                    "connects to",
                    p,
                    covered(p, &fx.writes),
                    system.socket(p),
                    &mut out,
                );
            }
            Connect::Other(s) => note("connects to", s, false, false, &mut out),
        }
    }
    out
}
