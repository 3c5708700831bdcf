//! Decision records sent to syslog: RFC 5424 messages over TCP with
//! octet-counting framing (RFC 6587), or over TLS (RFC 5425, the same
//! framing), from a bounded in-memory queue.
//!
//! A decision never waits on the network: records go through the bounded
//! queue of [`super::ship`]; its sender thread connects, writes, and on a
//! failure reconnects with a growing pause, keeping the records it could not
//! write. A hook process, which ends after one call, waits a bounded time
//! after answering for its record to leave ([`Syslog::flush`]).
//!
//! Each message: `<PRI>1 TIME HOST zero-policy PID decision [SD] JSON`, with
//! facility 13 (log audit), severity warning for `deny`, `reject` and
//! `error`, informational otherwise; the structured data element
//! `zero-policy@32473` carries `decision`, `tool`, `front`, `policy`,
//! `bundle` and `rules` (`id@file:line`, space separated), and the message
//! is the decision log's JSON line.

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::Record;
use super::ship::Shipper;

/// Records held while the receiver is slow or down, unless set.
pub const DEFAULT_QUEUE: usize = 1024;

/// How long a connection attempt, or a write, may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Where records go (`settings.log.syslog`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `HOST:PORT`.
    pub address: String,
    /// The queue's bound.
    pub queue: usize,
    /// Over TLS, the receiver's certificate checked for the host in
    /// `address`.
    pub tls: bool,
    /// With `tls`: a PEM file of CA certificates trusted besides the
    /// system's (`~/` is the home folder).
    pub ca: Option<String>,
}

/// One connection to the receiver.
enum Connection {
    Plain(TcpStream),
    Tls(Box<crate::tls::Stream>),
}

impl Write for Connection {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Connection::Plain(s) => s.write(buf),
            Connection::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Connection::Plain(s) => s.flush(),
            Connection::Tls(s) => s.flush(),
        }
    }
}

/// The sending side: a bounded queue ([`Shipper`]) and one connection.
#[derive(Debug)]
pub struct Syslog {
    shipper: Shipper,
    address: String,
}

impl Syslog {
    /// Starts the sender thread for `target`.
    ///
    /// # Errors
    /// The thread cannot start.
    /// The thread cannot start, or TLS cannot be set up (the CA file does
    /// not read).
    pub fn start(target: &Target) -> Result<Syslog, String> {
        let shipper = Shipper::start("syslog", target.queue, sender(target)?)?;
        Ok(Syslog {
            shipper,
            address: target.address.clone(),
        })
    }

    /// Queues one record; never waits. A full queue drops it and counts it.
    pub fn send(&self, record: &Record) {
        self.shipper.send(framed(record));
    }

    /// Records dropped so far because the queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.shipper.dropped()
    }

    /// Records written so far.
    #[must_use]
    pub fn sent(&self) -> u64 {
        self.shipper.sent()
    }

    /// Waits until every queued record is written, or `timeout` passes;
    /// returns how many are still waiting.
    #[must_use]
    pub fn flush(&self, timeout: Duration) -> u64 {
        self.shipper.flush(timeout)
    }

    /// The receiver's address.
    #[must_use]
    pub fn address(&self) -> &str {
        &self.address
    }
}

/// One record as the sender writes it: the RFC 5424 message, framed.
#[must_use]
pub fn framed(record: &Record) -> String {
    frame(&message(record))
}

/// The function that writes a batch of [`framed`] records to the receiver
/// of `target`, keeping its connection between batches; `false` when it could
/// not (the batch is then to be sent again whole).
///
/// # Errors
/// TLS cannot be set up: the CA file does not read, or the address names no
/// host a certificate could carry.
pub fn sender(target: &Target) -> Result<impl FnMut(&[String]) -> bool + Send + 'static, String> {
    let address = target.address.clone();
    let tls = if target.tls {
        let ca = match &target.ca {
            Some(ca) => super::resolve_path(ca, super::home().as_deref())
                .map_err(|e| format!("syslog over TLS: {e}"))?,
            None => None,
        };
        let server =
            host_of(&address).map_err(|e| format!("syslog over TLS to `{address}`: {e}"))?;
        Some((crate::tls::client_config(ca.as_deref())?, server))
    } else {
        None
    };
    let mut stream: Option<Connection> = None;
    Ok(move |batch: &[String]| {
        if stream.is_none() {
            stream = connect(&address).and_then(|s| match &tls {
                None => Some(Connection::Plain(s)),
                Some((config, server)) => crate::tls::handshake(s, config, server.clone())
                    .ok()
                    .map(|t| Connection::Tls(Box::new(t))),
            });
        }
        let Some(s) = stream.as_mut() else {
            return false;
        };
        let bytes: String = batch.concat();
        if s.write_all(bytes.as_bytes())
            .and_then(|()| s.flush())
            .is_ok()
        {
            true
        } else {
            // Part of the batch may have arrived: it is sent again whole
            // on a new connection (at least once, never lost).
            stream = None;
            false
        }
    })
}

/// The host of `HOST:PORT` (`[v6]:PORT` too) as the name the receiver's
/// certificate must carry.
fn host_of(address: &str) -> Result<rustls::pki_types::ServerName<'static>, String> {
    crate::tls::server_name(address.rsplit_once(':').map_or(address, |(h, _)| h))
}

fn connect(address: &str) -> Option<TcpStream> {
    let addrs = address.to_socket_addrs().ok()?;
    for a in addrs {
        if let Ok(s) = TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            let _ = s.set_write_timeout(Some(CONNECT_TIMEOUT));
            let _ = s.set_nodelay(true);
            return Some(s);
        }
    }
    None
}

/// RFC 6587 octet counting: the length in bytes, a space, the message.
#[must_use]
pub fn frame(message: &str) -> String {
    format!("{} {message}", message.len())
}

/// The host name for the HOSTNAME field, or `-`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or_else(|| "-".into())
}

/// An SD-PARAM value with `"`, `\` and `]` escaped (RFC 5424 6.3.3).
fn sd_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One record as an RFC 5424 message (without framing).
#[must_use]
pub fn message(record: &Record) -> String {
    let severity = match record.decision.as_str() {
        "deny" | "reject" | "error" => 4,
        _ => 6,
    };
    let pri = 13 * 8 + severity;
    let rules = record
        .rules
        .iter()
        .map(|r| format!("{}@{}:{}", r.id, r.file, r.line))
        .collect::<Vec<_>>()
        .join(" ");
    let mut sd = format!(
        "[zero-policy@32473 decision=\"{}\" tool=\"{}\" front=\"{}\" policy=\"{}\"",
        sd_escape(&record.decision),
        sd_escape(&record.tool),
        sd_escape(&record.front),
        sd_escape(&record.policy),
    );
    if let Some(b) = &record.bundle {
        sd.push_str(&format!(" bundle=\"{}\"", sd_escape(b)));
    }
    if !rules.is_empty() {
        sd.push_str(&format!(" rules=\"{}\"", sd_escape(&rules)));
    }
    sd.push(']');
    let time = if record.time.is_empty() {
        "-"
    } else {
        &record.time
    };
    let line = record.line();
    format!(
        "<{pri}>1 {time} {} zero-policy {} decision {sd} {}",
        hostname(),
        std::process::id(),
        line.trim_end()
    )
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::io::Read;
    use std::time::Instant;

    use super::*;
    use crate::log::RuleAt;

    fn record() -> Record {
        Record {
            time: "2026-12-05T10:00:00.000Z".into(),
            front: "hook:claude-code".into(),
            tool: "Bash".into(),
            decision: "deny".into(),
            rules: vec![RuleAt {
                id: "no-rm".into(),
                file: "policies/a \"b\".yaml".into(),
                line: 7,
            }],
            policy: "sha256:0011".into(),
            bundle: Some("v1".into()),
            ..Record::default()
        }
    }

    #[test]
    fn a_message_is_rfc5424_with_the_decision_in_structured_data() {
        let m = message(&record());
        let head = format!(
            "<108>1 2026-12-05T10:00:00.000Z {} zero-policy {} decision ",
            hostname(),
            std::process::id()
        );
        assert!(m.starts_with(&head), "{m}");
        let sd = r#"[zero-policy@32473 decision="deny" tool="Bash" front="hook:claude-code" policy="sha256:0011" bundle="v1" rules="no-rm@policies/a \"b\".yaml:7"] {"#;
        assert!(m[head.len()..].starts_with(sd), "{m}");
        assert_eq!(frame("abc"), "3 abc");
        assert_eq!(frame("é"), "2 é");
    }

    #[test]
    fn a_full_queue_drops_and_counts_and_nothing_waits() {
        // A receiver that accepts nothing: the address refuses connections.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        drop(listener);
        let s = Syslog::start(&Target {
            address,
            queue: 4,
            tls: false,
            ca: None,
        })
        .unwrap();
        let started = Instant::now();
        for _ in 0..100 {
            s.send(&record());
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        // The sender holds at most one batch of five, the queue four more.
        assert!(s.dropped() >= 91, "{}", s.dropped());
        assert_eq!(s.sent(), 0);
    }

    #[test]
    fn records_reach_a_receiver_in_order_after_it_comes_up() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let s = Syslog::start(&Target {
            address,
            queue: 16,
            tls: false,
            ca: None,
        })
        .unwrap();
        for i in 0..3 {
            let mut r = record();
            r.tool = format!("t{i}");
            s.send(&r);
        }
        let (mut conn, _) = listener.accept().unwrap();
        assert_eq!(s.flush(Duration::from_secs(10)), 0);
        drop(s);
        let mut got = String::new();
        conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = conn.read_to_string(&mut got);
        let tools: Vec<&str> = ["t0", "t1", "t2"]
            .into_iter()
            .filter(|t| got.contains(&format!("tool=\"{t}\"")))
            .collect();
        assert_eq!(tools, ["t0", "t1", "t2"]);
        assert!(got.find("t0").unwrap() < got.find("t2").unwrap());
    }

    #[test]
    fn records_queued_while_the_receiver_is_down_arrive_when_it_is_back() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let s = Syslog::start(&Target {
            address: address.to_string(),
            queue: 16,
            tls: false,
            ca: None,
        })
        .unwrap();
        for i in 0..5 {
            let mut r = record();
            r.tool = format!("t{i}");
            s.send(&r);
        }
        // Down: nothing leaves, nothing is dropped.
        assert_eq!(s.flush(Duration::from_millis(300)), 5);
        assert_eq!((s.sent(), s.dropped()), (0, 0));
        let listener = std::net::TcpListener::bind(address).unwrap();
        let (mut conn, _) = listener.accept().unwrap();
        assert_eq!(s.flush(Duration::from_secs(20)), 0);
        assert_eq!(s.sent(), 5);
        drop(s);
        let mut got = String::new();
        conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = conn.read_to_string(&mut got);
        let at: Vec<usize> = (0..5)
            .map(|i| got.find(&format!("tool=\"t{i}\"")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{got}");
    }
}
