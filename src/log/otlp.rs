//! Decision records sent as OpenTelemetry logs: OTLP/HTTP (`POST
//! /v1/logs`) with the JSON encoding (`application/json`) or binary protobuf
//! (`application/x-protobuf`), batched from the bounded queue of
//! [`super::ship`].
//!
//! Each record is one `LogRecord`: `timeUnixNano` from the record's time,
//! `severityNumber` 13 (WARN) for `deny`, `reject` and `error`, else 9
//! (INFO); the body is the decision log's JSON line; attributes
//! `zero_policy.decision`, `.tool`, `.front`, `.policy`, `.bundle` and
//! `.rules` (`id@file:line` strings). The resource has `service.name`
//! `zero-policy` and `host.name`.
//!
//! Over `https://` (rustls; the system's roots and a private CA,
//! [`crate::tls`]) or plain `http://` (a collector on the machine or the
//! network's edge). The request is written by hand over one connection per
//! batch. The protobuf encoding is written here too, field by field from
//! the JSON form (the messages are few and flat); the tests decode it with
//! the official definitions.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde_json::{Value, json};

use super::Record;
use super::ship::Shipper;
use crate::model::OtlpEncoding;

/// How long a connection, a write or the response may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Where records go (`settings.log.otlp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https://HOST:PORT/PATH` or `http://…`.
    pub endpoint: String,
    /// The queue's bound.
    pub queue: usize,
    /// How each payload is encoded.
    pub encoding: OtlpEncoding,
    /// With `https://`: a PEM file of CA certificates trusted besides the
    /// system's (`~/` is the home folder).
    pub ca: Option<String>,
}

/// An endpoint split into what the request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `HOST:PORT`.
    pub authority: String,
    /// The request path (`/v1/logs`).
    pub path: String,
    /// Over TLS, for this host name.
    pub tls: Option<String>,
}

/// Splits an `https://` or `http://` endpoint.
///
/// # Errors
/// It is not `https://HOST[:PORT][/PATH]` or `http://…`.
pub fn endpoint(url: &str) -> Result<Endpoint, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{url}` is not an `https://` or `http://` URL"));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| format!("`{url}` has no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let tls = (parsed.scheme() == "https").then(|| host.to_string());
    let mut path = parsed.path().to_string();
    if let Some(q) = parsed.query() {
        path.push('?');
        path.push_str(q);
    }
    Ok(Endpoint {
        authority: format!("{host}:{port}"),
        path,
        tls,
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
    /// The endpoint is not `https://…` or `http://…`, TLS cannot be set up
    /// (the CA file does not read), or the thread cannot start.
    pub fn start(target: &Target) -> Result<Otlp, String> {
        let shipper = Shipper::start("otlp", target.queue, sender(target)?)?;
        Ok(Otlp {
            shipper,
            endpoint: target.endpoint.clone(),
        })
    }

    /// Queues one record; never waits. A full queue drops it and counts it.
    pub fn send(&self, record: &Record) {
        self.shipper.send(queued(record));
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

/// One record as the sender takes it: its `LogRecord`, as JSON text.
#[must_use]
pub fn queued(record: &Record) -> String {
    log_record(record).to_string()
}

/// The function that posts a batch of [`queued`] records to the endpoint of
/// `target` as one export request; `false` when it was not accepted.
///
/// # Errors
/// The endpoint is not `https://…` or `http://…`, or TLS cannot be set up
/// (the CA file does not read).
pub fn sender(target: &Target) -> Result<impl FnMut(&[String]) -> bool + Send + 'static, String> {
    let ep = endpoint(&target.endpoint)?;
    let tls = match &ep.tls {
        Some(host) => {
            let ca = match &target.ca {
                Some(ca) => super::resolve_path(ca, super::home().as_deref())
                    .map_err(|e| format!("OTLP over TLS: {e}"))?,
                None => None,
            };
            Some((
                crate::tls::client_config(ca.as_deref())?,
                crate::tls::server_name(host)?,
            ))
        }
        None => None,
    };
    let resource = resource();
    let encoding = target.encoding;
    Ok(move |batch: &[String]| {
        let records: Vec<Value> = batch
            .iter()
            .filter_map(|m| serde_json::from_str(m).ok())
            .collect();
        let request = json!({"resourceLogs": [{
            "resource": resource,
            "scopeLogs": [{"scope": {"name": "zero-policy", "version": env!("CARGO_PKG_VERSION")},
                           "logRecords": records}],
        }]});
        let (body, content_type) = match encoding {
            OtlpEncoding::Json => (request.to_string().into_bytes(), "application/json"),
            OtlpEncoding::Protobuf => (protobuf::request(&request), "application/x-protobuf"),
        };
        post(&ep, tls.as_ref(), &body, content_type)
    })
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
fn post(
    ep: &Endpoint,
    tls: Option<&(
        std::sync::Arc<rustls::ClientConfig>,
        rustls::pki_types::ServerName<'static>,
    )>,
    body: &[u8],
    content_type: &str,
) -> bool {
    let Some(addr) = ep
        .authority
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    else {
        return false;
    };
    let Ok(stream) = TcpStream::connect_timeout(&addr, TIMEOUT) else {
        return false;
    };
    let _ = stream.set_write_timeout(Some(TIMEOUT));
    let _ = stream.set_read_timeout(Some(TIMEOUT));
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        ep.path,
        ep.authority,
        body.len()
    )
    .into_bytes();
    head.extend_from_slice(body);
    match tls {
        None => exchange(stream, &head),
        Some((config, server)) => match crate::tls::handshake(stream, config, server.clone()) {
            Ok(t) => exchange(t, &head),
            Err(_) => false,
        },
    }
}

/// Writes the request and reads the status line: true on `HTTP/1.x 2..`.
fn exchange(mut stream: impl Read + Write, request: &[u8]) -> bool {
    if stream
        .write_all(request)
        .and_then(|()| stream.flush())
        .is_err()
    {
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

/// OTLP's protobuf encoding of an `ExportLogsServiceRequest`, from its JSON
/// form as [`Otlp::start`] builds it. Field numbers are those of
/// `opentelemetry/proto/{collector/logs,logs,common,resource}/v1/*.proto`.
mod protobuf {
    use serde_json::Value;

    /// `ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }`
    pub fn request(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        for rl in list(v, "resourceLogs") {
            message(&mut out, 1, &resource_logs(rl));
        }
        out
    }

    /// `ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }`
    fn resource_logs(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(r) = v.get("resource") {
            let mut res = Vec::new();
            for a in list(r, "attributes") {
                message(&mut res, 1, &key_value(a));
            }
            message(&mut out, 1, &res);
        }
        for sl in list(v, "scopeLogs") {
            message(&mut out, 2, &scope_logs(sl));
        }
        out
    }

    /// `ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }`,
    /// `InstrumentationScope { string name = 1; string version = 2; }`
    fn scope_logs(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(scope) = v.get("scope") {
            let mut sc = Vec::new();
            string(&mut sc, 1, text(scope, "name"));
            string(&mut sc, 2, text(scope, "version"));
            message(&mut out, 1, &sc);
        }
        for r in list(v, "logRecords") {
            message(&mut out, 2, &log_record(r));
        }
        out
    }

    /// `LogRecord { fixed64 time_unix_nano = 1; SeverityNumber severity_number = 2;
    /// string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6;
    /// fixed64 observed_time_unix_nano = 11; }`
    fn log_record(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        fixed64(&mut out, 1, nanos(v, "timeUnixNano"));
        let severity = v.get("severityNumber").and_then(Value::as_u64).unwrap_or(0);
        if severity != 0 {
            tag(&mut out, 2, 0);
            varint(&mut out, severity);
        }
        string(&mut out, 3, text(v, "severityText"));
        if let Some(body) = v.get("body") {
            message(&mut out, 5, &any_value(body));
        }
        for a in list(v, "attributes") {
            message(&mut out, 6, &key_value(a));
        }
        fixed64(&mut out, 11, nanos(v, "observedTimeUnixNano"));
        out
    }

    /// `KeyValue { string key = 1; AnyValue value = 2; }`
    fn key_value(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        string(&mut out, 1, text(v, "key"));
        if let Some(value) = v.get("value") {
            message(&mut out, 2, &any_value(value));
        }
        out
    }

    /// `AnyValue { oneof { string string_value = 1; bool bool_value = 2;
    /// int64 int_value = 3; ArrayValue array_value = 5; } }`,
    /// `ArrayValue { repeated AnyValue values = 1; }`
    fn any_value(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(s) = v.get("stringValue").and_then(Value::as_str) {
            // A oneof member is written even when empty, so that it is set.
            tag(&mut out, 1, 2);
            varint(&mut out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        } else if let Some(b) = v.get("boolValue").and_then(Value::as_bool) {
            tag(&mut out, 2, 0);
            varint(&mut out, u64::from(b));
        } else if let Some(i) = v.get("intValue").and_then(|i| {
            i.as_i64()
                .or_else(|| i.as_str().and_then(|s| s.parse().ok()))
        }) {
            tag(&mut out, 3, 0);
            varint(&mut out, i.cast_unsigned());
        } else if let Some(arr) = v.get("arrayValue") {
            let mut a = Vec::new();
            for x in list(arr, "values") {
                message(&mut a, 1, &any_value(x));
            }
            message(&mut out, 5, &a);
        }
        out
    }

    fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
        v.get(key)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    fn text<'a>(v: &'a Value, key: &str) -> &'a str {
        v.get(key).and_then(Value::as_str).unwrap_or_default()
    }

    /// A 64-bit integer as OTLP's JSON writes it: a decimal string.
    fn nanos(v: &Value, key: &str) -> u64 {
        v.get(key)
            .and_then(|n| {
                n.as_u64()
                    .or_else(|| n.as_str().and_then(|s| s.parse().ok()))
            })
            .unwrap_or(0)
    }

    fn tag(out: &mut Vec<u8>, field: u64, wire: u64) {
        varint(out, (field << 3) | wire);
    }

    fn varint(out: &mut Vec<u8>, mut n: u64) {
        while n >= 0x80 {
            out.push(u8::try_from(n & 0x7f).unwrap_or_default() | 0x80);
            n >>= 7;
        }
        out.push(u8::try_from(n).unwrap_or_default());
    }

    fn message(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
        tag(out, field, 2);
        varint(out, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }

    /// A string field; proto3 leaves an empty one out.
    fn string(out: &mut Vec<u8>, field: u64, s: &str) {
        if !s.is_empty() {
            message(out, field, s.as_bytes());
        }
    }

    /// A `fixed64` field; proto3 leaves a zero out.
    fn fixed64(out: &mut Vec<u8>, field: u64, n: u64) {
        if n != 0 {
            tag(out, field, 1);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn varints_and_fields_are_written_as_protobuf_writes_them() {
            let mut out = Vec::new();
            varint(&mut out, 300);
            assert_eq!(out, [0xac, 0x02]);
            let mut out = Vec::new();
            string(&mut out, 3, "WARN");
            assert_eq!(out, [0x1a, 4, b'W', b'A', b'R', b'N']);
            let mut out = Vec::new();
            fixed64(&mut out, 1, 1);
            assert_eq!(out, [0x09, 1, 0, 0, 0, 0, 0, 0, 0]);
            let kv = key_value(&serde_json::json!({"key": "k", "value": {"stringValue": ""}}));
            // key "k", then value { string_value "" } kept: the oneof is set.
            assert_eq!(kv, [0x0a, 1, b'k', 0x12, 2, 0x0a, 0]);
        }
    }
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
                path: "/v1/logs".into(),
                tls: None,
            }
        );
        assert_eq!(
            endpoint("http://collector/v1/logs").unwrap().authority,
            "collector:80"
        );
        let tls = endpoint("https://collector/v1/logs").unwrap();
        assert_eq!(tls.authority, "collector:443");
        assert_eq!(tls.tls.as_deref(), Some("collector"));
        assert!(
            endpoint("ftp://collector/v1/logs")
                .unwrap_err()
                .contains("is not an `https://` or `http://` URL")
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
