//! URLs read the way a WHATWG parser reads them, with the guesses curl and
//! git make for text without a scheme, and IP ranges to test hosts against.
//!
//! How text becomes a URL:
//! - text with a scheme followed by `//` (`ftp://x`), or with a known scheme
//!   (`http:x`, `file:/x`, `mailto:x`...), is parsed as it is;
//! - `//host/path` is read as `http://host/path`;
//! - `[user@]host:path` where `path` does not start with a port number is git's
//!   scp syntax and reads as `ssh://[user@]host/path`; with a `user@` any text
//!   after the colon is a path (`git@host:2222/x` is the path `/2222/x`, as
//!   git reads it);
//! - any other text is read as curl reads it: `http://` is put in front
//!   (`example.com/x`, `localhost:3000`, `169.254.169.254/latest`);
//! - text starting with `/`, `.` or `~`, or a drive letter (`C:\x`), is a
//!   local path, not a URL.
//!
//! Hosts are normalised further than WHATWG does, so that one address has
//! one spelling: IPv4-mapped IPv6 becomes dotted IPv4, trailing dots are
//! removed, and the opaque hosts of non-special schemes (`ssh://0xa9fea9fe/`)
//! are read with the special host parser (percent-decoding, IDNA, lowercase,
//! IPv4 in decimal, hex, octal and short forms), as a resolver would.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// A URL a call fetches, normalised.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fetch {
    /// The URL as WHATWG serialises it (with any guessed scheme), or the text
    /// itself when it is not a URL.
    pub url: String,
    /// The scheme, lowercase, without `:`; empty when the text is not a URL.
    pub scheme: String,
    /// The normalised host (see the module docs); empty when there is none.
    pub host: String,
    /// The effective port: the explicit one, else the scheme's default
    /// (http 80, https 443, ws 80, wss 443, ftp 21, ssh and sftp 22, git 9418,
    /// rsync 873); `None` when neither is known.
    pub port: Option<u16>,
    /// The path as WHATWG serialises it (percent-encoded, no query).
    pub path: String,
}

impl Fetch {
    /// The `Fetch` for text that is not a URL.
    fn not_a_url(text: &str) -> Fetch {
        Fetch {
            url: text.to_string(),
            scheme: String::new(),
            host: String::new(),
            port: None,
            path: String::new(),
        }
    }
}

/// Parses what a tool or a command was given as a URL.
///
/// Never fails: text that is not a URL gives a `Fetch` whose host is `""`
/// and whose url is the text; text written as one (`scheme://…`) that does not
/// parse gives host `*` (any: another client may read it otherwise). An IPv6
/// zone (`[fe80::1%25eth0]`) is dropped, and a NAT64 address (`64:ff9b::/96`)
/// is the IPv4 address it carries. See the module docs for how text without a
/// scheme is read.
#[must_use]
pub fn parse_fetch(text: &str) -> Fetch {
    let trimmed = text.trim();
    let Some(candidate) = guess(trimmed) else {
        return Fetch::not_a_url(text);
    };
    // A zone (`[fe80::1%25eth0]`) is not WHATWG syntax, but curl sends it: the
    // address is read without it.
    let candidate = without_zone(&candidate);
    let Ok(url) = Url::parse(&candidate) else {
        // Written as a URL (`scheme://…`) but not one this parser reads: the
        // program may still reach a host, which cannot be told.
        if scheme_of(trimmed).is_some_and(|sc| trimmed[sc.len() + 1..].starts_with("//")) {
            return Fetch {
                host: "*".to_string(),
                ..Fetch::not_a_url(text)
            };
        }
        return Fetch::not_a_url(text);
    };
    let scheme = url.scheme().to_string();
    Fetch {
        host: normal_host(&url),
        port: url.port().or_else(|| default_port(&scheme)),
        path: url.path().to_string(),
        url: url.into(),
        scheme,
    }
}

/// The normalised host of a URL, or None.
#[must_use]
pub fn url_host(text: &str) -> Option<String> {
    let host = parse_fetch(text).host;
    (!host.is_empty()).then_some(host)
}

/// A range of IP addresses: an address and how many leading bits are fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The network address, host bits cleared; IPv4-mapped IPv6 is stored as IPv4.
    pub addr: IpAddr,
    /// The prefix length: at most 32 for IPv4, 128 for IPv6.
    pub prefix: u8,
}

impl Cidr {
    /// Whether the address lies in the range (IPv4-mapped IPv6 counts as IPv4).
    #[must_use]
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical_ip(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = mask32(self.prefix);
                u32::from(ip) & mask == u32::from(net) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = mask128(self.prefix);
                u128::from(ip) & mask == u128::from(net) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Whether a host that is an IP literal lies in one of the CIDR ranges.
///
/// Ranges are written `169.254.0.0/16`, `fd00::/8`, or as a bare IP meaning
/// /32 or /128. IPv6 hosts may come with or without brackets. A host that is
/// not an IP is in no range. The host is read as a URL host is (`0xa9fea9fe`, `127.1` and
/// `::ffff:169.254.169.254` are IPs), and an IPv6 zone (`fe80::1%eth0`) is
/// ignored.
///
/// # Errors
/// One of the CIDRs is malformed (all are checked, whatever the host).
pub fn ip_in(host: &str, cidrs: &[String]) -> Result<bool, String> {
    let parsed = cidrs
        .iter()
        .map(|c| parse_cidr(c))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(ip) = host_ip(host) else {
        return Ok(false);
    };
    Ok(parsed.iter().any(|c| c.contains(ip)))
}

/// Checks a CIDR at load time.
///
/// Accepts `ADDR/PREFIX` or a bare address (a /32 or /128); host bits set
/// beyond the prefix are cleared (`169.254.1.1/16` is `169.254.0.0/16`).
///
/// # Errors
/// The address or the prefix does not parse, or the prefix is too long.
pub fn parse_cidr(text: &str) -> Result<Cidr, String> {
    let bad = |why: &str| format!("invalid cidr `{text}`: {why}");
    let t = text.trim();
    let (addr_text, prefix_text) = match t.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (t, None),
    };
    let addr_text = addr_text
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(addr_text);
    let addr: IpAddr = addr_text
        .parse()
        .map_err(|_| bad(&format!("`{addr_text}` is not an ip address")))?;
    let max: u8 = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix_text {
        None => max,
        Some(p) => {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&format!("`{p}` is not a prefix length")));
            }
            match p.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => return Err(bad(&format!("prefix `{p}` is longer than {max}"))),
            }
        }
    };
    Ok(normal_cidr(addr, prefix))
}

/// Masks the address to its prefix, and turns an IPv4-mapped range into IPv4.
fn normal_cidr(addr: IpAddr, prefix: u8) -> Cidr {
    match addr {
        IpAddr::V4(a) => Cidr {
            addr: IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask32(prefix))),
            prefix,
        },
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) if prefix >= 96 => normal_cidr(IpAddr::V4(v4), prefix - 96),
            _ => Cidr {
                addr: IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask128(prefix))),
                prefix,
            },
        },
    }
}

/// The mask of the first `prefix` bits of an IPv4 address.
fn mask32(prefix: u8) -> u32 {
    u32::MAX
        .checked_shl(32 - u32::from(prefix.min(32)))
        .unwrap_or(0)
}

/// The mask of the first `prefix` bits of an IPv6 address.
fn mask128(prefix: u8) -> u128 {
    u128::MAX
        .checked_shl(128 - u32::from(prefix.min(128)))
        .unwrap_or(0)
}

/// IPv4-mapped IPv6 as IPv4; any other address as it is.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(a) => {
            // NAT64's well-known prefix (RFC 6052) reaches the IPv4 address in its
            // last 32 bits, as `::ffff:` does.
            let bits = u128::from(a);
            if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
                return IpAddr::V4(Ipv4Addr::from((bits & 0xffff_ffff) as u32));
            }
            a.to_ipv4_mapped().map_or(ip, IpAddr::V4)
        }
        IpAddr::V4(_) => ip,
    }
}

/// The URL without an IPv6 zone in its bracketed host (`%25eth0`, `%eth0`).
fn without_zone(url: &str) -> String {
    let Some(open) = url.find("://[").map(|i| i + 3) else {
        return url.to_string();
    };
    let Some(close) = url[open..].find(']').map(|i| open + i) else {
        return url.to_string();
    };
    match url[open..close].find('%') {
        Some(z) => format!("{}{}", &url[..open + z], &url[close..]),
        None => url.to_string(),
    }
}

/// The IP a host names literally, read as a URL host is.
fn host_ip(host: &str) -> Option<IpAddr> {
    let h = host.trim();
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    // An IPv6 zone, raw or percent-encoded as in a URL.
    let h = match h.find('%') {
        Some(i) if h.contains(':') => &h[..i],
        _ => h,
    };
    if let Ok(ip) = h.parse::<IpAddr>() {
        return Some(canonical_ip(ip));
    }
    if h.contains(':') {
        return match Host::parse(&format!("[{h}]")) {
            Ok(Host::Ipv6(a)) => Some(canonical_ip(IpAddr::V6(a))),
            _ => None,
        };
    }
    match Host::parse(h.trim_end_matches('.')) {
        Ok(Host::Ipv4(a)) => Some(IpAddr::V4(a)),
        _ => None,
    }
}

/// Schemes that are parsed as they are even without `//` after the colon.
const KNOWN_SCHEMES: &[&str] = &[
    "http",
    "https",
    "ws",
    "wss",
    "ftp",
    "file",
    "ssh",
    "sftp",
    "git",
    "rsync",
    "mailto",
    "data",
    "javascript",
    "about",
    "blob",
    "urn",
    "tel",
];

/// The default port of a scheme, beyond the url crate's own list.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        "ftp" => Some(21),
        "ssh" | "sftp" | "git+ssh" | "ssh+git" => Some(22),
        "git" => Some(9418),
        "rsync" => Some(873),
        _ => None,
    }
}

/// The scheme at the start of the text, if it has one (WHATWG's syntax).
fn scheme_of(text: &str) -> Option<&str> {
    let colon = text.find(':')?;
    let scheme = &text[..colon];
    let mut bytes = scheme.bytes();
    let first = bytes.next()?;
    (first.is_ascii_alphabetic()
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
    .then_some(scheme)
}

/// The URL text to parse: the text itself when it has a scheme, else the
/// curl or scp reading of it; `None` for a local path.
fn guess(text: &str) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    if let Some(scheme) = scheme_of(text) {
        let after = &text[scheme.len() + 1..];
        let lower = scheme.to_ascii_lowercase();
        if after.starts_with("//") || KNOWN_SCHEMES.contains(&lower.as_str()) {
            return Some(text.to_string());
        }
    }
    if text.starts_with("//") {
        return Some(format!("http:{text}"));
    }
    if text.starts_with(['/', '.', '~', '\\']) {
        return None;
    }
    let bytes = text.as_bytes();
    if bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && (bytes.len() == 2 || matches!(bytes[2], b'\\' | b'/'))
    {
        return None;
    }
    let end = text.find(['/', '?', '#']).unwrap_or(text.len());
    let authority = &text[..end];
    let (user, hostport) = match authority.rfind('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    };
    let host_len = if hostport.starts_with('[') {
        hostport.find(']').map_or(hostport.len(), |i| i + 1)
    } else {
        hostport.find(':').unwrap_or(hostport.len())
    };
    let host = &hostport[..host_len];
    let after_host = &hostport[host_len..];
    let Some(port_text) = after_host.strip_prefix(':') else {
        return Some(format!("http://{text}"));
    };
    let user_plain = user.is_some_and(|u| !u.is_empty() && !u.contains(':'));
    let is_port = port_text.bytes().all(|b| b.is_ascii_digit());
    if host.is_empty() || (!user_plain && is_port) {
        return Some(format!("http://{text}"));
    }
    // scp syntax: everything after the host's colon is the path.
    let colon = authority.len() - after_host.len();
    let path = &text[colon + 1..];
    let slash = if path.starts_with('/') { "" } else { "/" };
    let user = user.map(|u| format!("{u}@")).unwrap_or_default();
    Some(format!("ssh://{user}{host}{slash}{path}"))
}

/// The host of a parsed URL, normalised (see the module docs).
fn normal_host(url: &Url) -> String {
    match url.host() {
        None => String::new(),
        Some(Host::Ipv4(a)) => a.to_string(),
        Some(Host::Ipv6(a)) => canonical_ip(IpAddr::V6(a)).to_string(),
        Some(Host::Domain(d)) => normal_domain(d),
    }
}

/// A domain or an opaque host, read with the special host parser.
fn normal_domain(domain: &str) -> String {
    let stripped = domain.trim_end_matches('.');
    match Host::parse(stripped) {
        Ok(Host::Ipv4(a)) => a.to_string(),
        Ok(Host::Ipv6(a)) => canonical_ip(IpAddr::V6(a)).to_string(),
        Ok(Host::Domain(d)) => d.trim_end_matches('.').to_string(),
        Err(_) => stripped.to_ascii_lowercase(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn fetch_table() {
        // text, scheme, host, port, path
        let cases: &[(&str, &str, &str, Option<u16>, &str)] = &[
            (
                "https://Example.COM/a?b",
                "https",
                "example.com",
                Some(443),
                "/a",
            ),
            (
                "http://example.com:8080/x",
                "http",
                "example.com",
                Some(8080),
                "/x",
            ),
            (
                "http://example.com:80/x",
                "http",
                "example.com",
                Some(80),
                "/x",
            ),
            ("HTTP://EXAMPLE.com", "http", "example.com", Some(80), "/"),
            ("example.com/x", "http", "example.com", Some(80), "/x"),
            ("example.com", "http", "example.com", Some(80), "/"),
            ("localhost:3000", "http", "localhost", Some(3000), "/"),
            (
                "localhost:3000/api",
                "http",
                "localhost",
                Some(3000),
                "/api",
            ),
            (
                "169.254.169.254/latest",
                "http",
                "169.254.169.254",
                Some(80),
                "/latest",
            ),
            (
                "169.254.169.254:80/latest",
                "http",
                "169.254.169.254",
                Some(80),
                "/latest",
            ),
            (
                "  http://example.com/  ",
                "http",
                "example.com",
                Some(80),
                "/",
            ),
            ("//example.com/x", "http", "example.com", Some(80), "/x"),
            ("http:example.com/x", "http", "example.com", Some(80), "/x"),
            (
                "http:\\\\example.com\\x",
                "http",
                "example.com",
                Some(80),
                "/x",
            ),
            // scp syntax
            (
                "git@github.com:org/repo.git",
                "ssh",
                "github.com",
                Some(22),
                "/org/repo.git",
            ),
            ("user@host:path", "ssh", "host", Some(22), "/path"),
            ("user@host:/abs/path", "ssh", "host", Some(22), "/abs/path"),
            ("git@host:2222/x", "ssh", "host", Some(22), "/2222/x"),
            (
                "github.com:org/repo",
                "ssh",
                "github.com",
                Some(22),
                "/org/repo",
            ),
            ("git@[::1]:repo", "ssh", "::1", Some(22), "/repo"),
            ("user:pw@host:8080/x", "http", "host", Some(8080), "/x"),
            (
                "ssh://git@GitHub.com/org/repo",
                "ssh",
                "github.com",
                Some(22),
                "/org/repo",
            ),
            (
                "ssh://git@github.com:2222/org",
                "ssh",
                "github.com",
                Some(2222),
                "/org",
            ),
            (
                "git://example.com/r",
                "git",
                "example.com",
                Some(9418),
                "/r",
            ),
            ("ftp://example.com/f", "ftp", "example.com", Some(21), "/f"),
            ("wss://example.com/s", "wss", "example.com", Some(443), "/s"),
            ("foo://example.com/s", "foo", "example.com", None, "/s"),
            // IPv4 spellings
            (
                "http://2852039166/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://0xa9fea9fe/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://0xA9FEA9FE/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://0251.0376.0251.0376/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://0xa9.0xfe.0xa9.0xfe/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://169.254.43518/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            ("http://127.1/", "http", "127.0.0.1", Some(80), "/"),
            ("http://0/", "http", "0.0.0.0", Some(80), "/"),
            (
                "2852039166/latest",
                "http",
                "169.254.169.254",
                Some(80),
                "/latest",
            ),
            (
                "http://169.254.169.254./",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://169.254.169.254../",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://%31%36%39.254.169.254/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://%30%78%61%39%66%65%61%39%66%65/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://１６９.２５４.１６９.２５４/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            // opaque hosts of non-special schemes read as a resolver would
            (
                "ssh://0xa9fea9fe/x",
                "ssh",
                "169.254.169.254",
                Some(22),
                "/x",
            ),
            (
                "ssh://%31%36%39.254.169.254/",
                "ssh",
                "169.254.169.254",
                Some(22),
                "/",
            ),
            ("ssh://Example.COM./x", "ssh", "example.com", Some(22), "/x"),
            (
                "root@2852039166:x",
                "ssh",
                "169.254.169.254",
                Some(22),
                "/x",
            ),
            // IPv6
            ("http://[::1]/", "http", "::1", Some(80), "/"),
            (
                "http://[0:0:0:0:0:0:0:1]:8080/",
                "http",
                "::1",
                Some(8080),
                "/",
            ),
            ("http://[FD00::ABCD]/", "http", "fd00::abcd", Some(80), "/"),
            (
                "http://[::ffff:169.254.169.254]/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://[::ffff:a9fe:a9fe]/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            ("[::1]:8080/x", "http", "::1", Some(8080), "/x"),
            // userinfo and backslash tricks
            (
                "http://a@b@169.254.169.254/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://169.254.169.254\\@evil.example.com/",
                "http",
                "169.254.169.254",
                Some(80),
                "/@evil.example.com/",
            ),
            (
                "http://evil.example.com@169.254.169.254/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://169.254.169.254#@evil.example.com/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://169.254.169.254?@evil.example.com/",
                "http",
                "169.254.169.254",
                Some(80),
                "/",
            ),
            (
                "http://user:pass@example.com:8443/p",
                "http",
                "example.com",
                Some(8443),
                "/p",
            ),
            // trailing dots and IDNA
            (
                "http://metadata.google.internal./computeMetadata",
                "http",
                "metadata.google.internal",
                Some(80),
                "/computeMetadata",
            ),
            (
                "http://Metadata.Google.Internal../",
                "http",
                "metadata.google.internal",
                Some(80),
                "/",
            ),
            (
                "http://bücher.example/",
                "http",
                "xn--bcher-kva.example",
                Some(80),
                "/",
            ),
            (
                "http://ＥＸＡＭＰＬＥ.com/",
                "http",
                "example.com",
                Some(80),
                "/",
            ),
            // near misses: domains, not the metadata IP
            (
                "http://169.254.169.254.nip.io/",
                "http",
                "169.254.169.254.nip.io",
                Some(80),
                "/",
            ),
            (
                "http://metadata.169.254.169.254.example/",
                "http",
                "metadata.169.254.169.254.example",
                Some(80),
                "/",
            ),
            (
                "http://169-254-169-254.example/",
                "http",
                "169-254-169-254.example",
                Some(80),
                "/",
            ),
            // `*` stands for an unknown host and stays one
            ("*", "http", "*", Some(80), "/"),
            ("ssh://*", "ssh", "*", Some(22), ""),
            ("ssh://git@github.com", "ssh", "github.com", Some(22), ""),
            // hostless URLs
            ("file:///etc/passwd", "file", "", None, "/etc/passwd"),
            ("mailto:a@example.com", "mailto", "", None, "a@example.com"),
            ("data:text/plain,hi", "data", "", None, "text/plain,hi"),
        ];
        for &(text, scheme, host, port, path) in cases {
            let f = parse_fetch(text);
            assert_eq!(
                (f.scheme.as_str(), f.host.as_str(), f.port, f.path.as_str()),
                (scheme, host, port, path),
                "{text}: {f:?}"
            );
            assert_eq!(url_host(text), (!host.is_empty()).then(|| host.to_string()));
        }
    }

    #[test]
    fn url_field() {
        assert_eq!(parse_fetch("example.com/x").url, "http://example.com/x");
        assert_eq!(
            parse_fetch("git@github.com:o/r.git").url,
            "ssh://git@github.com/o/r.git"
        );
        assert_eq!(
            parse_fetch("http://0xa9fea9fe").url,
            "http://169.254.169.254/"
        );
        assert_eq!(
            parse_fetch("http://[::ffff:a9fe:a9fe]/").url,
            "http://[::ffff:a9fe:a9fe]/"
        );
        let f = parse_fetch("https://example.com/");
        let json = serde_json_like(&f);
        assert!(json.contains("example.com"));
    }

    fn serde_json_like(f: &Fetch) -> String {
        // Checks the Serialize derive is present without a JSON dependency.
        fn is_serialize<T: serde::Serialize>(_: &T) {}
        is_serialize(f);
        format!("{f:?}")
    }

    #[test]
    fn not_urls() {
        for text in [
            "",
            "   ",
            "/etc/passwd",
            "./x",
            "../x",
            "~/x",
            "C:\\Users\\x",
            "C:/x",
            "hello world",
            "user@:path",
            "@",
        ] {
            let f = parse_fetch(text);
            assert_eq!(f.host, "", "{text:?}: {f:?}");
            if f.scheme.is_empty() {
                assert_eq!(f.url, text);
                assert_eq!(f.port, None);
            }
            assert_eq!(url_host(text), None, "{text:?}");
        }
        // Written as URLs but not readable as one: another client may still
        // reach a host, so the host is any (`*`).
        for text in [
            "http://",
            "http://[::1",
            "http://exa mple.com/",
            "http://example.com:99999/",
            "http://%zz/",
            "https://a\u{0}b/",
        ] {
            let f = parse_fetch(text);
            assert_eq!((f.host.as_str(), f.url.as_str()), ("*", text), "{f:?}");
        }
    }

    #[test]
    fn ip_in_table() {
        let meta = strings(&["169.254.0.0/16", "fd00::/8", "127.0.0.1", "::1"]);
        let cases: &[(&str, bool)] = &[
            ("169.254.169.254", true),
            ("169.254.0.1", true),
            ("169.255.0.1", false),
            ("127.0.0.1", true),
            ("127.0.0.2", false),
            ("::1", true),
            ("[::1]", true),
            ("fd00::1", true),
            ("[fdff:ffff::1]", true),
            ("fe80::1", false),
            ("fe80::1%eth0", false),
            ("fd00::1%25eth0", true),
            ("::ffff:169.254.169.254", true),
            ("[::ffff:a9fe:a9fe]", true),
            ("0xa9fea9fe", true),
            ("2852039166", true),
            ("169.254.169.254.", true),
            ("169.254.169.254.nip.io", false),
            ("metadata.google.internal", false),
            ("example.com", false),
            ("", false),
            ("not an ip", false),
        ];
        for &(host, want) in cases {
            assert_eq!(ip_in(host, &meta).unwrap(), want, "{host}");
        }
        // A mapped range matches the IPv4 host and the other way round.
        let mapped = strings(&["::ffff:169.254.0.0/112"]);
        assert!(ip_in("169.254.169.254", &mapped).unwrap());
        assert!(ip_in("::ffff:169.254.1.1", &strings(&["169.254.0.0/16"])).unwrap());
        assert!(!ip_in("169.254.169.254", &strings(&["::/0"])).unwrap());
        assert!(ip_in("8.8.8.8", &strings(&["0.0.0.0/0"])).unwrap());
        assert!(ip_in("2001:db8::1", &strings(&["::/0"])).unwrap());
        assert!(!ip_in("169.254.169.254", &[]).unwrap());
        // Hosts from parse_fetch feed straight in.
        for text in [
            "http://0251.0376.0251.0376/",
            "http://[::ffff:a9fe:a9fe]/",
            "169.254.169.254/latest",
        ] {
            assert!(ip_in(&parse_fetch(text).host, &meta).unwrap(), "{text}");
        }
        assert!(!ip_in(&parse_fetch("http://169.254.169.254.nip.io/").host, &meta).unwrap());
    }

    #[test]
    fn cidr_parsing() {
        assert_eq!(
            parse_cidr("169.254.0.0/16").unwrap().to_string(),
            "169.254.0.0/16"
        );
        assert_eq!(
            parse_cidr("169.254.1.1/16").unwrap().to_string(),
            "169.254.0.0/16"
        );
        assert_eq!(parse_cidr("10.1.2.3").unwrap().to_string(), "10.1.2.3/32");
        assert_eq!(parse_cidr("fd00::/8").unwrap().to_string(), "fd00::/8");
        assert_eq!(parse_cidr("[::1]").unwrap().to_string(), "::1/128");
        assert_eq!(
            parse_cidr("::ffff:10.0.0.0/104").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(parse_cidr("0.0.0.0/0").unwrap().to_string(), "0.0.0.0/0");
        for (bad, msg) in [
            (
                "169.254.0.0/33",
                "invalid cidr `169.254.0.0/33`: prefix `33` is longer than 32",
            ),
            (
                "fd00::/129",
                "invalid cidr `fd00::/129`: prefix `129` is longer than 128",
            ),
            (
                "169.254.0.0/",
                "invalid cidr `169.254.0.0/`: `` is not a prefix length",
            ),
            (
                "169.254.0.0/x",
                "invalid cidr `169.254.0.0/x`: `x` is not a prefix length",
            ),
            (
                "169.254.0.0/+8",
                "invalid cidr `169.254.0.0/+8`: `+8` is not a prefix length",
            ),
            (
                "example.com/8",
                "invalid cidr `example.com/8`: `example.com` is not an ip address",
            ),
            (
                "010.0.0.0/8",
                "invalid cidr `010.0.0.0/8`: `010.0.0.0` is not an ip address",
            ),
            ("", "invalid cidr ``: `` is not an ip address"),
        ] {
            assert_eq!(parse_cidr(bad).unwrap_err(), msg);
        }
        let err = ip_in("example.com", &strings(&["10.0.0.0/8", "nope"])).unwrap_err();
        assert_eq!(err, "invalid cidr `nope`: `nope` is not an ip address");
    }

    #[test]
    fn zones_nat64_and_unreadable_urls_name_the_host_a_program_reaches() {
        for (text, host) in [
            ("http://[fe80::1%25eth0]/", "fe80::1"),
            ("http://[fe80::1%eth0]:8080/x", "fe80::1"),
            ("http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254"),
            ("http://[64:ff9b::7f00:1]/", "127.0.0.1"),
            ("http://[::1", "*"),
            ("https://example.com/%zz", "example.com"),
            ("not a url", ""),
        ] {
            assert_eq!(parse_fetch(text).host, host, "{text}");
        }
        let internal = strings(&["169.254.0.0/16", "127.0.0.0/8", "fe80::/10"]);
        for host in ["64:ff9b::a9fe:a9fe", "[64:ff9b::7f00:1]", "fe80::1%eth0"] {
            assert!(ip_in(host, &internal).unwrap(), "{host}");
        }
        assert!(!ip_in("64:ff9b::808:808", &internal).unwrap());
        // Only the well-known prefix: `64:ff9b:1::/48` is a local one.
        assert!(!ip_in("64:ff9b:1::a9fe:a9fe", &internal).unwrap());
    }
}
