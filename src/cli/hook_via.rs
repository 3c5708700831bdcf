//! `zero-policy hook AGENT --via URL`: the tiny client of `serve --hooks`.
//!
//! For the agents whose hooks are commands (Codex, Gemini CLI, Cursor, and
//! any other where one is wanted), it forwards the event to the service and
//! prints and returns what `hook` itself would have: the service decides
//! with the same code and writes the log line. It loads no policy.
//!
//! Fail closed: a service that is down, slow (past [`DEADLINE`]) or answers
//! anything but a well-formed answer gets the agent's blocking form, and the
//! line is logged here, to the default log path (the policy's own settings
//! were not read), as `hook` does when the policy cannot be read.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::hook_service::{ANSWER_HEADER, HEADLESS_HEADER, PREFIX, TOKEN_VAR};
use crate::hooks::{self, Agent, Answer, Decided};
use crate::policy::DEFAULT_LOG_PATH;
use crate::scrub::Scrubber;

/// The longest the client waits for the service, from connecting to the
/// whole answer; well inside the agents' hook timeouts.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// The largest answer read.
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// Where the service is: host, port and path prefix of `http://HOST:PORT[/PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    host: String,
    port: u16,
    base: String,
}

/// Reads the service's URL: `http://HOST:PORT[/PATH]` or `HOST:PORT`.
///
/// # Errors
/// Not such a URL (`https://` included: the service speaks plain HTTP on
/// loopback).
pub fn parse_url(text: &str) -> Result<Service, String> {
    let text = text.trim();
    let full = if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}")
    };
    let url = url::Url::parse(&full).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    if url.scheme() != "http" {
        return Err(format!(
            "`{text}`: the hook service speaks plain `http://` (on loopback, or with a token)"
        ));
    }
    let host = match url.host() {
        Some(url::Host::Ipv6(a)) => a.to_string(),
        Some(h) => h.to_string(),
        None => return Err(format!("`{text}` names no host")),
    };
    let port = url
        .port()
        .ok_or_else(|| format!("`{text}` names no port"))?;
    let base = url.path().trim_end_matches('/').to_string();
    Ok(Service { host, port, base })
}

impl Service {
    /// The service's URL, `http://HOST:PORT[/PATH]`.
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}{}", self.host_header(), self.base)
    }

    /// The endpoint of `agent`'s events.
    #[must_use]
    pub fn endpoint(&self, agent: Agent) -> String {
        format!("{}{PREFIX}{}", self.base_url(), agent.as_str())
    }

    /// Whether something accepts connections there (within a second).
    #[must_use]
    pub fn is_listening(&self) -> bool {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .into_iter()
            .flatten()
            .any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok())
    }

    fn host_header(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Asks the service; the answer, or why there is none.
fn exchange(
    service: &Service,
    agent: Agent,
    event: &[u8],
    headless: Option<&str>,
    token: Option<&str>,
) -> Result<Answer, String> {
    let deadline = Instant::now() + DEADLINE;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("no answer within {} s", DEADLINE.as_secs()))
    };
    let addrs: Vec<_> = (service.host.as_str(), service.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{}`: {e}", service.host))?
        .collect();
    let mut stream = None;
    let mut last = String::from("no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, left()?.min(Duration::from_secs(2))) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("cannot connect to {a}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    let _ = stream.set_nodelay(true);
    let mut head = format!(
        "POST {}{PREFIX}{} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{ANSWER_HEADER}: process\r\n",
        service.base,
        agent.as_str(),
        service.host_header(),
        event.len()
    );
    if let Some(why) = headless {
        // A header holds printable ASCII only.
        let why: String = why
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        head.push_str(&format!("{HEADLESS_HEADER}: {why}\r\n"));
    }
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    let io = |e: std::io::Error| format!("the exchange failed: {e}");
    stream.set_write_timeout(Some(left()?)).map_err(io)?;
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(event).map_err(io)?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        stream.set_read_timeout(Some(left()?)).map_err(io)?;
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("no answer within {} s", DEADLINE.as_secs()));
            }
            Err(e) => return Err(io(e)),
        };
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > MAX_ANSWER {
            return Err("the answer is too large".into());
        }
    }
    read_answer(&raw)
}

/// Reads the service's HTTP response: status 200 and a process-form answer.
fn read_answer(raw: &[u8]) -> Result<Answer, String> {
    let split = memchr::memmem::find(raw, b"\r\n\r\n").ok_or("the answer is cut short")?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|_| "the answer is not HTTP")?;
    let body = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let code = status.split_whitespace().nth(1).unwrap_or_default();
    if code != "200" {
        return Err(format!(
            "it answered `{}`",
            crate::escape::escape(&crate::escape::truncate(status, 200))
        ));
    }
    let mut length = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err("the answer is chunked, which this client does not read".into());
            }
        }
    }
    if length.is_some_and(|n| n != body.len()) {
        return Err("the answer is cut short".into());
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    match (
        text("stdout"),
        text("stderr"),
        value
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u8::try_from(c).ok()),
    ) {
        (Some(stdout), Some(stderr), Some(code)) => Ok(Answer {
            stdout,
            stderr,
            code,
        }),
        _ => Err("the answer is not a hook's answer".into()),
    }
}

/// Forwards one event (`input`, as read from standard input) to the service
/// at `url`; the answer, and whether the service logged it.
pub(crate) fn ask(
    agent: Agent,
    input: Result<Vec<u8>, String>,
    url: &str,
    asker: &hooks::headless::Asker,
    started: Instant,
) -> (Decided, bool) {
    let blocked = |why: &str, event: Option<&[u8]>| {
        let parsed = event.and_then(|e| agent.parse(e).ok());
        hooks::fail(
            agent,
            &Scrubber::builtin(),
            (DEFAULT_LOG_PATH, None),
            "",
            parsed,
            why,
            started,
        )
    };
    let event = match input {
        Ok(e) => e,
        Err(why) => {
            return (
                blocked(
                    &format!("cannot read the {} hook event: {why}", agent.display()),
                    None,
                ),
                false,
            );
        }
    };
    let service = match parse_url(url) {
        Ok(s) => s,
        Err(why) => return (blocked(&format!("`--via`: {why}"), Some(&event)), false),
    };
    let token = std::env::var(TOKEN_VAR)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let headless = asker.nobody_to_ask(agent);
    match exchange(
        &service,
        agent,
        &event,
        headless.as_deref(),
        token.as_deref(),
    ) {
        Ok(answer) => (
            Decided {
                answer,
                record: crate::log::Record::default(),
                log_path: String::new(),
                log_chain: None,
                syslog: None,
                otlp: None,
            },
            true,
        ),
        Err(why) => (
            blocked(
                &format!(
                    "the hook service at `{}` gave no answer: {why}",
                    service.endpoint(agent)
                ),
                Some(&event),
            ),
            false,
        ),
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn urls_name_a_plain_http_service() {
        let s = parse_url("127.0.0.1:8787").unwrap();
        assert_eq!(
            s.endpoint(Agent::Codex),
            "http://127.0.0.1:8787/hooks/codex"
        );
        let s = parse_url("http://[::1]:9/zp/").unwrap();
        assert_eq!(s.endpoint(Agent::Cursor), "http://[::1]:9/zp/hooks/cursor");
        assert_eq!(s.host_header(), "[::1]:9");
        assert!(
            parse_url("https://127.0.0.1:8787")
                .unwrap_err()
                .contains("plain")
        );
        assert!(parse_url("http://127.0.0.1").unwrap_err().contains("port"));
        assert!(parse_url("::::").is_err());
    }

    #[test]
    fn only_a_whole_answer_of_200_is_taken() {
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 37\r\n\r\n{\"stdout\":\"\",\"stderr\":\"x\",\"code\":2}  ";
        let a = read_answer(ok).unwrap();
        assert_eq!((a.stderr.as_str(), a.code), ("x", 2));
        for bad in [
            &b"HTTP/1.1 500 Internal\r\ncontent-length: 2\r\n\r\n{}"[..],
            b"HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n{\"stdout\":\"\"}",
            b"HTTP/1.1 200 OK\r\n\r\n{\"stdout\":\"\",\"stderr\":\"\",\"code\":300}",
            b"HTTP/1.1 200 OK\r\n\r\nnot json",
            b"HTTP/1.1 200 OK",
            b"",
        ] {
            assert!(
                read_answer(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
