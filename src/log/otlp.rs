//! Decision records sent as OpenTelemetry logs: OTLP/HTTP with the JSON
//! encoding (`POST /v1/logs`, `application/json`), batched from the bounded
//! queue of [`super::ship`].
//!
//! Each record is one `LogRecord`: `timeUnixNano` from the record's time,
//! `severityNumber` 13 (WARN) for `deny`, `reject` and `error`, else 9
//! (INFO); the body is the decision log's JSON line; attributes
//! `zero_policy.decision`, `.tool`, `.front`, `.policy`, `.bundle` and
//! `.rules` (`id@file:line` strings). The resource has `service.name`
//! `zero-policy` and `host.name`.
//!
//! Plain `http://` only (a collector on the machine or the network's edge);
//! the request is written by hand over a TCP connection, one per batch.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde_json::{Value, json};

use super::Record;
use super::ship::Shipper;

/// How long a connection, a write or the response may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Where records go (`settings.log.otlp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `http://HOST:PORT/PATH`.
    pub endpoint: String,
    /// The queue's bound.
    pub queue: usize,
}

/// An endpoint split into what the request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `HOST:PORT`.
    pub authority: String,
    /// The request path (`/v1/logs`).
    pub path: String,
}

/// Splits an `http://` endpoint.
///
/// # Errors
/// It is not `http://HOST[:PORT][/PATH]`.
pub fn endpoint(url: &str) -> Result<Endpoint, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if parsed.scheme() != "http" {
        return Err(format!(
            "`{url}`: only `http://` is supported (send to a collector that forwards over TLS)"
        ));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| format!("`{url}` has no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let mut path = parsed.path().to_string();
    if let Some(q) = parsed.query() {
        path.push('?');
        path.push_str(q);
    }
    Ok(Endpoint {
        authority: format!("{host}:{port}"),
        path,
    })
}

/// The sending side.
#[derive(Debug)]
pub struct Otlp {
    shipper: Shipper,
    endpoint: String,
}

impl Otlp {
    /// Starts the sender thread for `target`.
    ///
    /// # Errors
    /// The endpoint is not `http://…`, or the thread cannot start.
    pub fn start(target: &Target) -> Result<Otlp, String> {
        let ep = endpoint(&target.endpoint)?;
        let resource = resource();
        let shipper = Shipper::start("otlp", target.queue, move |batch| {
            let records: Vec<Value> = batch
                .iter()
                .filter_map(|m| serde_json::from_str(m).ok())
                .collect();
            let body = json!({"resourceLogs": [{
                "resource": resource,
                "scopeLogs": [{"scope": {"name": "zero-policy", "version": env!("CARGO_PKG_VERSION")},
                               "logRecords": records}],
            }]});
            post(&ep, &body.to_string())
        })?;
        Ok(Otlp {
            shipper,
            endpoint: target.endpoint.clone(),
        })
    }

    /// Queues one record; never waits. A full queue drops it and counts it.
    pub fn send(&self, record: &Record) {
        self.shipper.send(log_record(record).to_string());
    }

    /// Records dropped so far because the queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.shipper.dropped()
    }

    /// Waits until every queued record is delivered, or `timeout` passes;
    /// returns how many are still waiting.
    #[must_use]
    pub fn flush(&self, timeout: Duration) -> u64 {
        self.shipper.flush(timeout)
    }

    /// The endpoint.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

fn resource() -> Value {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    json!({"attributes": [
        {"key": "service.name", "value": {"stringValue": "zero-policy"}},
        {"key": "host.name", "value": {"stringValue": host}},
    ]})
}

/// Nanoseconds since the epoch of an RFC 3339 UTC time as the log writes it
/// (`2026-12-05T10:00:00.000Z`), or 0.
fn unix_nanos(time: &str) -> u64 {
    let num = |a: usize, b: usize| time.get(a..b).and_then(|s| s.parse::<u64>().ok());
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) = (
        num(0, 4),
        num(5, 7),
        num(8, 10),
        num(11, 13),
        num(14, 16),
        num(17, 19),
    ) else {
        return 0;
    };
    let ms = num(20, 23).unwrap_or(0);
    // Days from civil (Howard Hinnant), for years from 1970.
    let (y, mo) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).saturating_sub(719_468);
    ((days * 86_400 + h * 3600 + mi * 60 + s) * 1000 + ms) * 1_000_000
}

/// One record as an OTLP JSON `LogRecord`.
#[must_use]
pub fn log_record(record: &Record) -> Value {
    let warn = matches!(record.decision.as_str(), "deny" | "reject" | "error");
    let s = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
    let mut attributes = vec![
        s("zero_policy.decision", &record.decision),
        s("zero_policy.tool", &record.tool),
        s("zero_policy.front", &record.front),
        s("zero_policy.policy", &record.policy),
    ];
    if let Some(b) = &record.bundle {
        attributes.push(s("zero_policy.bundle", b));
    }
    if !record.rules.is_empty() {
        let values: Vec<Value> = record
            .rules
            .iter()
            .map(|r| json!({"stringValue": format!("{}@{}:{}", r.id, r.file, r.line)}))
            .collect();
        attributes
            .push(json!({"key": "zero_policy.rules", "value": {"arrayValue": {"values": values}}}));
    }
    let nanos = unix_nanos(&record.time).to_string();
    json!({
        "timeUnixNano": nanos,
        "observedTimeUnixNano": nanos,
        "severityNumber": if warn { 13 } else { 9 },
        "severityText": if warn { "WARN" } else { "INFO" },
        "body": {"stringValue": record.line().trim_end()},
        "attributes": attributes,
    })
}

/// One POST; true on a 2xx answer.
fn post(ep: &Endpoint, body: &str) -> bool {
    let Some(addr) = ep
        .authority
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    else {
        return false;
    };
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, TIMEOUT) else {
        return false;
    };
    let _ = stream.set_write_timeout(Some(TIMEOUT));
    let _ = stream.set_read_timeout(Some(TIMEOUT));
    let request = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        ep.path,
        ep.authority,
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match stream.read(&mut head[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    // `HTTP/1.1 200 ...`
    head.get(9) == Some(&b'2')
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn endpoints_are_http_with_a_port_and_a_path() {
        assert_eq!(
            endpoint("http://127.0.0.1:4318/v1/logs").unwrap(),
            Endpoint {
                authority: "127.0.0.1:4318".into(),
                path: "/v1/logs".into()
            }
        );
        assert_eq!(
            endpoint("http://collector/v1/logs").unwrap().authority,
            "collector:80"
        );
        assert!(
            endpoint("https://collector/v1/logs")
                .unwrap_err()
                .contains("only `http://`")
        );
    }

    #[test]
    fn times_become_unix_nanoseconds() {
        assert_eq!(unix_nanos("1970-01-01T00:00:00.000Z"), 0);
        assert_eq!(
            unix_nanos("2000-02-29T00:00:00.005Z"),
            951_782_400_005_000_000
        );
        assert_eq!(
            unix_nanos("2024-02-29T23:59:59.999Z"),
            1_709_251_199_999_000_000
        );
    }
}
