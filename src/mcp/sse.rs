//! The legacy HTTP+SSE MCP transport (protocol 2024-11-05), written on rmcp's
//! [`Transport`] trait because rmcp dropped it in 0.11.
//!
//! The client GETs the SSE URL and waits for an `endpoint` event naming the URL to
//! POST client messages to; every server message then arrives as a `message` event
//! on the same stream. The endpoint must be on the SSE URL's origin, so a server
//! cannot send the configured headers (often credentials) to another host.

use std::borrow::Cow;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, Url};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Largest SSE event (its data lines together) accepted from a server.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;
/// Server messages buffered between the SSE reader and rmcp.
const INBOX_CAPACITY: usize = 64;
/// Bound on one POST of a client message.
const POST_TIMEOUT: Duration = Duration::from_secs(30);

/// An error sending a client message over the SSE transport.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SseSendError {
    /// The message could not be serialised.
    #[error("cannot serialise message: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The POST did not complete.
    #[error("post to the sse endpoint failed: {0}")]
    Post(#[source] reqwest::Error),
    /// The server refused the POST.
    #[error("the sse endpoint answered http {status}: {body}")]
    Status {
        /// HTTP status code.
        status: u16,
        /// Start of the response body.
        body: String,
    },
}

/// A connected legacy SSE transport: a reader task for the event stream and a
/// POST per client message.
pub(crate) struct SseTransport {
    client: Client,
    endpoint: Url,
    headers: HeaderMap,
    inbox: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Opens the event stream at `url` and waits for its `endpoint` event. The caller
/// bounds the wait with its own timeout.
pub(crate) async fn connect(url: &str, headers: HeaderMap) -> Result<SseTransport, String> {
    let base = Url::parse(url).map_err(|e| format!("invalid sse url {url:?}: {e}"))?;
    crate::tls::install_provider();
    let client = Client::builder()
        .build()
        .map_err(|e| format!("cannot build http client: {e}"))?;
    let response = client
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| format!("get {base} failed: {}", error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(format!(
            "get {base} answered http {}: {}",
            status.as_u16(),
            truncate(&body, 512)
        ));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !content_type.starts_with("text/event-stream") {
        return Err(format!(
            "get {base} answered content type {content_type:?}, not text/event-stream"
        ));
    }

    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (inbox_tx, inbox) = mpsc::channel(INBOX_CAPACITY);
    let reader = tokio::spawn(read_events(response, endpoint_tx, inbox_tx));
    let endpoint = match endpoint_rx.await {
        Ok(Ok(endpoint)) => endpoint,
        Ok(Err(e)) => {
            reader.abort();
            return Err(e);
        }
        Err(_) => {
            reader.abort();
            return Err("the sse stream ended before its endpoint event".to_string());
        }
    };
    let endpoint = match resolve_endpoint(&base, &endpoint) {
        Ok(endpoint) => endpoint,
        Err(e) => {
            reader.abort();
            return Err(e);
        }
    };
    Ok(SseTransport {
        client,
        endpoint,
        headers,
        inbox,
        reader,
    })
}

/// Resolves the `endpoint` event's data against the SSE URL and checks that it
/// stays on the same origin (scheme, host and port).
fn resolve_endpoint(base: &Url, data: &str) -> Result<Url, String> {
    let endpoint = base
        .join(data.trim())
        .map_err(|e| format!("invalid sse endpoint {data:?}: {e}"))?;
    let same_origin = endpoint.scheme() == base.scheme()
        && endpoint.host_str() == base.host_str()
        && endpoint.port_or_known_default() == base.port_or_known_default();
    if !same_origin {
        return Err(format!(
            "sse endpoint {endpoint} is not on the origin of {base}; refusing to post there"
        ));
    }
    Ok(endpoint)
}

/// Reads the event stream until it ends: the first `endpoint` event goes to
/// `endpoint_tx`, each `message` event is parsed and queued on `inbox`.
async fn read_events(
    mut response: reqwest::Response,
    endpoint_tx: oneshot::Sender<Result<String, String>>,
    inbox: mpsc::Sender<ServerJsonRpcMessage>,
) {
    let mut endpoint_tx = Some(endpoint_tx);
    let mut parser = SseParser::default();
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                if let Some(tx) = endpoint_tx.take() {
                    let _ = tx.send(Err(format!("reading the sse stream failed: {e}")));
                }
                break;
            }
        };
        let events = match parser.feed(&chunk) {
            Ok(events) => events,
            Err(e) => {
                if let Some(tx) = endpoint_tx.take() {
                    let _ = tx.send(Err(e));
                }
                break;
            }
        };
        for event in events {
            match event.event.as_str() {
                "endpoint" => {
                    if let Some(tx) = endpoint_tx.take() {
                        let _ = tx.send(Ok(event.data));
                    }
                }
                "message" => {
                    // Like rmcp's stdio transport, a message that does not parse is
                    // skipped: it cannot be tied to a request.
                    let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(&event.data)
                    else {
                        continue;
                    };
                    if inbox.send(message).await.is_err() {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
    // Dropping `inbox` ends `receive`, which rmcp reports as a closed transport.
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseSendError;

    fn name() -> Cow<'static, str> {
        "sse".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let body = serde_json::to_vec(&item);
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .timeout(POST_TIMEOUT);
        async move {
            let response = request
                .body(body?)
                .send()
                .await
                .map_err(SseSendError::Post)?;
            let status = response.status();
            if status.is_success() {
                return Ok(());
            }
            let body = response.text().await.unwrap_or_default();
            Err(SseSendError::Status {
                status: status.as_u16(),
                body: truncate(&body, 512),
            })
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.inbox.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.inbox.close();
        Ok(())
    }
}

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, `message` when absent.
    pub(crate) event: String,
    /// The `data:` lines joined by `\n`.
    pub(crate) data: String,
}

/// An incremental parser for `text/event-stream` (the WHATWG rules: lines end in
/// LF, CR or CRLF; `:` starts a comment; a blank line dispatches the event).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds a chunk of the stream; returns the events it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        let mut events = Vec::new();
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue; // the LF of a CRLF
                }
            }
            match byte {
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_done(&line) {
                        events.push(event);
                    }
                }
                _ => {
                    self.line.push(byte);
                    if self.line.len() + self.data.len() > MAX_EVENT_BYTES {
                        return Err(format!(
                            "sse event larger than {MAX_EVENT_BYTES} bytes; closing the stream"
                        ));
                    }
                }
            }
        }
        Ok(events)
    }

    fn line_done(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            if !std::mem::take(&mut self.has_data) {
                return None;
            }
            let event = if event.is_empty() {
                "message".to_string()
            } else {
                event
            };
            return Some(SseEvent { event, data });
        }
        if line.first() == Some(&b':') {
            return None; // comment, often a keep-alive
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // `id`, `retry` and unknown fields do not matter here
        }
        None
    }
}

/// `e` and its sources, joined by `: `.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.to_string(),
            data: data.to_string(),
        }
    }

    #[test]
    fn parses_events_across_chunks_and_line_endings() {
        let mut p = SseParser::default();
        let mut got = Vec::new();
        for chunk in [
            &b"event: endpoint\r\ndata: /messages/?session_id=1"[..],
            b"\r",
            b"\n\r\n: keep-alive\n\ndata:{\"a\":1}\ndata: x\r\r",
            b"event:custom\ndata\n\n",
        ] {
            got.extend(p.feed(chunk).unwrap_or_default());
        }
        assert_eq!(
            got,
            vec![
                ev("endpoint", "/messages/?session_id=1"),
                ev("message", "{\"a\":1}\nx"),
                ev("custom", ""),
            ]
        );
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        let mut p = SseParser::default();
        assert_eq!(p.feed(b"event: ping\n\n").ok(), Some(vec![]));
    }

    #[test]
    fn endpoint_must_stay_on_origin() {
        let base = Url::parse("http://127.0.0.1:8000/sse").ok();
        let base = base.as_ref();
        let ok = base.map(|b| resolve_endpoint(b, "/messages/?session_id=abc"));
        assert_eq!(
            ok.and_then(|r| r.ok()).map(|u| u.to_string()),
            Some("http://127.0.0.1:8000/messages/?session_id=abc".to_string())
        );
        for bad in [
            "http://evil.example/x",
            "http://127.0.0.1:9000/x",
            "//evil/x",
        ] {
            assert!(base.map(|b| resolve_endpoint(b, bad).is_err()) == Some(true));
        }
    }
}
