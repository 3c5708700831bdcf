//! macOS: the envelope as a Seatbelt profile (SBPL) for `sandbox-exec -p PROFILE`.
//!
//! A pure function, tested as text (macOS cannot run here). The profile denies by
//! default, then allows the envelope's trees, then denies the deny globs. In SBPL a
//! later rule wins over an earlier one that matches the same operation, so the denies
//! come last. Deny globs become regular expressions: `**/` any folders (or none), `/**`
//! at the end the folder and everything in it, `*` and `?` within one path component.
//! A `**` glob is anchored at each `search` folder, as on Linux; the paths that
//! [`Hidden`] resolved (links followed) are denied as well.
//!
//! The boilerplate that ordinary programs need (sysctls, the user database, ttys) follows
//! the public base profile of OpenAI Codex and Chromium's sandbox.

use std::fmt::Write as _;
use std::path::Path;

use super::{Envelope, Hidden, Network};

/// The Seatbelt profile for `envelope`; `hidden` is [`super::hidden::resolve`]'s answer.
#[must_use]
pub fn seatbelt_profile(envelope: &Envelope, hidden: &Hidden) -> String {
    let mut p = String::new();
    p.push_str(BASE);

    p.push_str("\n; what may be read: the reads, writes and program trees\n");
    let mut readable: Vec<&Path> = Vec::new();
    for path in envelope
        .reads
        .iter()
        .chain(&envelope.writes)
        .chain(&envelope.exec)
    {
        if !readable.contains(&path.as_path()) {
            readable.push(path);
        }
    }
    if !readable.is_empty() {
        p.push_str("(allow file-read*");
        for path in &readable {
            let _ = write!(p, "\n  (subpath {})", quote(path));
        }
        p.push_str(")\n");
        // Shared libraries are mapped from wherever they can be read (as on Linux, where
        // only `noexec` folders refuse it).
        p.push_str("(allow file-map-executable");
        for path in &readable {
            let _ = write!(p, "\n  (subpath {})", quote(path));
        }
        p.push_str(")\n");
        // Programs look up the folders on the way (stat, realpath): their metadata only.
        let mut ancestors: Vec<&Path> = readable
            .iter()
            .flat_map(|p| p.ancestors().skip(1))
            .collect();
        ancestors.sort();
        ancestors.dedup();
        if !ancestors.is_empty() {
            p.push_str("(allow file-read-metadata");
            for a in ancestors {
                let _ = write!(p, "\n  (literal {})", quote(a));
            }
            p.push_str(")\n");
        }
    }

    if !envelope.writes.is_empty() {
        p.push_str("\n; what may be written, created and deleted\n(allow file-write*");
        for path in &envelope.writes {
            let _ = write!(p, "\n  (subpath {})", quote(path));
        }
        p.push_str(")\n");
    }

    p.push_str("\n; what may run\n(allow process-fork)\n");
    if !envelope.exec.is_empty() {
        p.push_str("(allow process-exec");
        for path in &envelope.exec {
            let _ = write!(p, "\n  (subpath {})", quote(path));
        }
        p.push_str(")\n");
    }
    if !envelope.noexec.is_empty() {
        p.push_str("(deny process-exec file-map-executable");
        for path in &envelope.noexec {
            let _ = write!(p, "\n  (subpath {})", quote(path));
        }
        p.push_str(")\n");
    }

    p.push_str("\n; the network\n");
    match &envelope.network {
        Network::None => p.push_str("; none\n"),
        Network::Ports(ports) => {
            p.push_str("(allow network-outbound");
            for port in ports {
                let _ = write!(p, "\n  (remote tcp \"*:{port}\")");
            }
            p.push_str(")\n");
            p.push_str(DNS);
        }
        Network::Any => {
            p.push_str("(allow network-outbound (remote ip))\n(allow network-inbound (local ip))\n(allow network-bind (local ip))\n");
            p.push_str(DNS);
        }
    }
    if envelope.unix_sockets {
        p.push_str("(allow network-outbound (remote unix-socket))\n");
    }

    let deny_reads = denials(&envelope.deny_reads, &envelope.search, &hidden.reads);
    if !deny_reads.is_empty() {
        p.push_str("\n; hidden, even inside the trees above\n(deny file-read* file-write*");
        p.push_str(&deny_reads);
        p.push_str(")\n");
    }
    let deny_writes = denials(&envelope.deny_writes, &envelope.search, &hidden.writes);
    if !deny_writes.is_empty() {
        p.push_str("\n; read-only, even inside the trees above\n(deny file-write*");
        p.push_str(&deny_writes);
        p.push_str(")\n");
    }
    p
}

/// The filters of a deny rule: one regex per glob (per search folder for `**` globs),
/// then the resolved paths.
fn denials(
    globs: &[String],
    search: &[std::path::PathBuf],
    resolved: &[std::path::PathBuf],
) -> String {
    let mut out = String::new();
    for glob in globs {
        if let Some(rest) = glob.strip_prefix("**") {
            for root in search {
                let prefix = regex_escape(&root.to_string_lossy());
                let _ = write!(
                    out,
                    "\n  (regex #\"^{prefix}{}$\")",
                    glob_regex(&format!("/**{rest}"))
                );
            }
        } else {
            let _ = write!(out, "\n  (regex #\"^{}$\")", glob_regex(glob));
        }
    }
    for path in resolved {
        let _ = write!(out, "\n  (subpath {})", quote(path));
    }
    out
}

/// A glob as an SBPL regular expression body (without anchors).
fn glob_regex(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let slash_before = i > 0 && chars[i - 1] == '/';
                let slash_after = chars.get(i + 2) == Some(&'/');
                let at_end = i + 2 == chars.len();
                if slash_before && slash_after {
                    // `/**/`: the slash already written; any folders, or none.
                    out.push_str("(.*/)?");
                    i += 3;
                } else if slash_before && at_end {
                    // `/**` at the end: the folder itself, or anything in it.
                    out.pop();
                    out.push_str("(/.*)?");
                    i += 2;
                } else {
                    out.push_str(".*");
                    i += 2;
                }
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let close = chars[i + 1..].iter().position(|&c| c == ']');
                if let Some(len) = close {
                    out.push('[');
                    let mut class: String = chars[i + 1..i + 1 + len].iter().collect();
                    if let Some(rest) = class.strip_prefix('!') {
                        class = format!("^{rest}");
                    }
                    out.push_str(&class.replace('"', "."));
                    out.push(']');
                    i += len + 2;
                    continue;
                }
                out.push_str("\\[");
            }
            '{' => {
                braces += 1;
                out.push('(');
            }
            '}' if braces > 0 => {
                braces -= 1;
                out.push(')');
            }
            ',' if braces > 0 => out.push('|'),
            // A quote cannot be escaped inside #"…": any character stands in for it.
            '"' => out.push('.'),
            c => out.push_str(&regex_escape(&c.to_string())),
        }
        i += 1;
    }
    out
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if ".^$|()[]{}+*?\\".contains(c) {
            out.push('\\');
        }
        if c == '"' {
            out.push('.');
        } else {
            out.push(c);
        }
    }
    out
}

/// A path as an SBPL string literal.
fn quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Name resolution and certificate checks, for a call that may connect.
const DNS: &str = r#"(allow mach-lookup
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.trustd.agent"))
(allow network-outbound (literal "/private/var/run/mDNSResponder"))
"#;

/// What ordinary programs need whatever the envelope: the sandbox's own processes,
/// sysctls that describe the machine, the user database, terminals and null devices.
const BASE: &str = r#"(version 1)
(deny default)

; the call's own processes
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow user-preference-read)
(allow ipc-posix-sem)

; what describes the machine
(allow sysctl-read
  (sysctl-name "hw.activecpu")
  (sysctl-name "hw.byteorder")
  (sysctl-name "hw.cachelinesize_compat")
  (sysctl-name "hw.cpufamily")
  (sysctl-name "hw.cputype")
  (sysctl-name "hw.logicalcpu")
  (sysctl-name "hw.logicalcpu_max")
  (sysctl-name "hw.machine")
  (sysctl-name "hw.memsize")
  (sysctl-name "hw.model")
  (sysctl-name "hw.ncpu")
  (sysctl-name "hw.nperflevels")
  (sysctl-name "hw.pagesize")
  (sysctl-name "hw.pagesize_compat")
  (sysctl-name "hw.physicalcpu")
  (sysctl-name "hw.physicalcpu_max")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "machdep.cpu.brand_string")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name "vm.loadavg")
  (sysctl-name-prefix "hw.optional.")
  (sysctl-name-prefix "hw.perflevel")
  (sysctl-name-prefix "kern.proc.pid."))

; the user database
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))

; terminals and null devices
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))
(allow file-read* file-write-data
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/random")
  (literal "/dev/urandom")
  (literal "/dev/tty"))
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn envelope(network: Network) -> Envelope {
        Envelope {
            reads: vec![PathBuf::from("/usr"), PathBuf::from("/Users/u/ws")],
            writes: vec![
                PathBuf::from("/Users/u/ws"),
                PathBuf::from("/private/tmp/call"),
            ],
            exec: vec![PathBuf::from("/usr/bin"), PathBuf::from("/bin")],
            deny_reads: vec![
                "/Users/u/.ssh/**".to_owned(),
                "**/.env".to_owned(),
                "**/*.pem".to_owned(),
            ],
            deny_writes: vec!["**/.git/hooks/**".to_owned()],
            search: vec![PathBuf::from("/Users/u/ws")],
            noexec: vec![PathBuf::from("/private/tmp/call")],
            network,
            unix_sockets: false,
            limits: crate::sandbox::Limits::default(),
            deny_env: Vec::new(),
            keep_env: Vec::new(),
        }
    }

    #[test]
    fn profile_with_no_network() {
        let hidden = Hidden {
            reads: vec![PathBuf::from("/Users/u/ws/.env")],
            writes: vec![PathBuf::from("/Users/u/ws/.git/hooks")],
        };
        insta::assert_snapshot!(seatbelt_profile(&envelope(Network::None), &hidden));
    }

    #[test]
    fn profile_with_ports_and_unix_sockets() {
        let mut e = envelope(Network::Ports(vec![443, 8080]));
        e.unix_sockets = true;
        e.deny_reads.clear();
        e.deny_writes.clear();
        insta::assert_snapshot!(seatbelt_profile(&e, &Hidden::default()));
    }

    #[test]
    fn profile_with_any_network() {
        let mut e = envelope(Network::Any);
        e.deny_reads.clear();
        e.deny_writes.clear();
        e.noexec.clear();
        let text = seatbelt_profile(&e, &Hidden::default());
        assert!(
            text.contains("(allow network-outbound (remote ip))"),
            "{text}"
        );
        assert!(!text.contains("(deny file-read*"), "{text}");
    }

    #[test]
    fn globs_become_anchored_regexes() {
        for (glob, regex) in [
            ("/Users/u/.ssh/**", r"/Users/u/\.ssh(/.*)?"),
            ("/a/**/b", "/a/(.*/)?b"),
            ("/a/*.pem", r"/a/[^/]*\.pem"),
            ("/a/file?.txt", r"/a/file[^/]\.txt"),
            ("/a/[!x]y", "/a/[^x]y"),
            ("/a/{b,c}", "/a/(b|c)"),
            ("/a/b,c", "/a/b,c"),
            ("/a/**", "/a(/.*)?"),
            ("/a/x**", "/a/x.*"),
        ] {
            assert_eq!(glob_regex(glob), regex, "{glob}");
        }
    }
}
