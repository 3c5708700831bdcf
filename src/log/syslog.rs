//! Decision records sent to syslog: RFC 5424 messages over TCP with
//! octet-counting framing (RFC 6587), from a bounded in-memory queue.
//!
//! A decision never waits on the network: [`Syslog::send`] puts the message
//! in a queue of [`Target::queue`] records and returns; a sender thread
//! connects, writes, and on a failure reconnects with a growing pause while
//! keeping the message it could not write. A full queue drops the new record
//! and counts it ([`Syslog::dropped`]). A hook process, which ends after one
//! call, waits a bounded time after answering for its record to leave
//! ([`Syslog::flush`]).
//!
//! Each message: `<PRI>1 TIME HOST zero-policy PID decision [SD] JSON`, with
//! facility 13 (log audit), severity warning for `deny`, `reject` and
//! `error`, informational otherwise; the structured data element
//! `zero-policy@32473` carries `decision`, `tool`, `front`, `policy`,
//! `bundle` and `rules` (`id@file:line`, space separated), and the message
//! is the decision log's JSON line.

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::Record;

/// Records held while the receiver is slow or down, unless set.
pub const DEFAULT_QUEUE: usize = 1024;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest pause between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Where records go (`settings.log.syslog`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `HOST:PORT`.
    pub address: String,
    /// The queue's bound.
    pub queue: usize,
}

/// The sending side: a bounded queue and the thread that empties it.
#[derive(Debug)]
pub struct Syslog {
    tx: mpsc::SyncSender<String>,
    counters: Arc<Counters>,
    address: String,
}

#[derive(Debug, Default)]
struct Counters {
    /// Queued and not yet written.
    pending: AtomicU64,
    /// Dropped because the queue was full.
    dropped: AtomicU64,
    /// Written to a connection.
    sent: AtomicU64,
}

impl Syslog {
    /// Starts the sender thread for `target`.
    ///
    /// # Errors
    /// The thread cannot start.
    pub fn start(target: &Target) -> Result<Syslog, String> {
        let (tx, rx) = mpsc::sync_channel::<String>(target.queue);
        let counters = Arc::new(Counters::default());
        let thread_counters = Arc::clone(&counters);
        let address = target.address.clone();
        std::thread::Builder::new()
            .name("zero-policy-syslog".into())
            .spawn(move || run(&address, &rx, &thread_counters))
            .map_err(|e| format!("cannot start the syslog sender: {e}"))?;
        Ok(Syslog {
            tx,
            counters,
            address: target.address.clone(),
        })
    }

    /// Queues one record; never waits. A full queue drops it and counts it.
    pub fn send(&self, record: &Record) {
        let message = frame(&message(record));
        self.counters.pending.fetch_add(1, Ordering::SeqCst);
        if self.tx.try_send(message).is_err() {
            self.counters.pending.fetch_sub(1, Ordering::SeqCst);
            self.counters.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Records dropped so far because the queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::SeqCst)
    }

    /// Records written so far.
    #[must_use]
    pub fn sent(&self) -> u64 {
        self.counters.sent.load(Ordering::SeqCst)
    }

    /// Waits until every queued record is written, or `timeout` passes;
    /// returns how many are still waiting.
    #[must_use]
    pub fn flush(&self, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        loop {
            let pending = self.counters.pending.load(Ordering::SeqCst);
            if pending == 0 || Instant::now() >= deadline {
                return pending;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The receiver's address.
    #[must_use]
    pub fn address(&self) -> &str {
        &self.address
    }
}

/// The sender thread: one message at a time, kept until written.
fn run(address: &str, rx: &mpsc::Receiver<String>, counters: &Counters) {
    let mut stream: Option<TcpStream> = None;
    let mut backoff = Duration::from_millis(50);
    while let Ok(message) = rx.recv() {
        loop {
            if stream.is_none() {
                stream = connect(address);
            }
            if let Some(s) = stream.as_mut() {
                if s.write_all(message.as_bytes())
                    .and_then(|()| s.flush())
                    .is_ok()
                {
                    counters.sent.fetch_add(1, Ordering::SeqCst);
                    counters.pending.fetch_sub(1, Ordering::SeqCst);
                    backoff = Duration::from_millis(50);
                    break;
                }
                stream = None;
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
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
        let s = Syslog::start(&Target { address, queue: 4 }).unwrap();
        let started = Instant::now();
        for _ in 0..100 {
            s.send(&record());
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        // The sender holds one, the queue four: at least 95 dropped.
        assert!(s.dropped() >= 95, "{}", s.dropped());
        assert_eq!(s.sent(), 0);
    }

    #[test]
    fn records_reach_a_receiver_in_order_after_it_comes_up() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let s = Syslog::start(&Target { address, queue: 16 }).unwrap();
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
}
