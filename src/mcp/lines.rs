//! MCP's stdio transport (one JSON-RPC message per line) for both sides of
//! the gateway, bounded, with every bad line a clear outcome:
//!
//! - A line longer than [`MAX_MESSAGE_BYTES`] is never buffered whole: its
//!   first bytes are kept to read its `id`, the rest is skipped. From a
//!   client (the gateway is the server), the request is answered `-32600`
//!   under that id; from a server (the gateway is the client), the request it
//!   answered fails at once with an error saying so, instead of waiting
//!   forever for an answer that was dropped.
//! - A line that is not JSON: a client gets JSON-RPC's `-32700` parse error
//!   (`id: null`); a server's is skipped (a client answers nothing).
//! - JSON that is not a JSON-RPC message: a request (it has `id` and
//!   `method`) gets `-32600` under its id; an unreadable answer to one of
//!   the gateway's requests fails that request; an unreadable notification
//!   is skipped, as notifications are never answered.
//!
//! Writes serialize each message once and write it whole; the read buffer
//! is given back after a large message, so a 50 MB result is not kept
//! around once it has passed.

use std::marker::PhantomData;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The largest message read, either way: a 50 MB image is 67 MB of base64.
pub const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
/// How much of an oversized line is kept to find its `id`.
const HEAD_BYTES: usize = 4096;
/// A read buffer larger than this is given back after its message.
const KEEP_BUFFER: usize = 1024 * 1024;

/// The line transport; `R` and `W` are the peer's output and input.
pub struct Lines<Role, R, W> {
    read: BufReader<R>,
    buf: Vec<u8>,
    max: usize,
    write: Arc<Mutex<Option<W>>>,
    _role: PhantomData<fn() -> Role>,
}

/// What one bounded line read gave.
enum Read {
    Line,
    /// Longer than the bound: its first bytes.
    Oversized(Vec<u8>),
    Eof,
}

impl<Role, R, W> Lines<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport over a peer's output `read` and input `write`.
    pub fn new(read: R, write: W) -> Self {
        Self::with_max(read, write, MAX_MESSAGE_BYTES)
    }

    /// As [`Lines::new`], with another bound on one message.
    pub fn with_max(read: R, write: W, max: usize) -> Self {
        Lines {
            read: BufReader::with_capacity(64 * 1024, read),
            buf: Vec::new(),
            max,
            write: Arc::new(Mutex::new(Some(write))),
            _role: PhantomData,
        }
    }

    /// Reads one line into `self.buf`, never more than `self.max` bytes of it.
    /// Cancel-safe: a partial line stays in `buf` (or, past the bound, the
    /// skipping goes on) for the next call.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        let mut head: Option<Vec<u8>> = None;
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(match head {
                    Some(h) => Read::Oversized(h),
                    None => Read::Eof,
                });
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            match &mut head {
                Some(_) => {}
                None if self.buf.len() + take > self.max => {
                    let mut h = std::mem::take(&mut self.buf);
                    h.extend_from_slice(&available[..take.min(HEAD_BYTES)]);
                    h.truncate(HEAD_BYTES);
                    head = Some(h);
                    self.give_back();
                }
                None => self.buf.extend_from_slice(&available[..take]),
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(match head {
                    Some(h) => Read::Oversized(h),
                    None => Read::Line,
                });
            }
        }
    }

    fn give_back(&mut self) {
        self.buf.clear();
        if self.buf.capacity() > KEEP_BUFFER {
            self.buf = Vec::new();
        }
    }
}

/// Writes `message` and a newline to the peer.
async fn reply<W: AsyncWrite + Send + Unpin>(write: &Mutex<Option<W>>, message: Value) {
    let mut bytes = serde_json::to_vec(&message).unwrap_or_default();
    bytes.push(b'\n');
    let mut w = write.lock().await;
    if let Some(w) = w.as_mut() {
        let _ = w.write_all(&bytes).await;
        let _ = w.flush().await;
    }
}

/// An error answer of the transport's own to the peer's request `id`
/// (`id: null` when it could not be read).
async fn answer<W: AsyncWrite + Send + Unpin>(
    write: &Mutex<Option<W>>,
    id: Option<RequestId>,
    code: i32,
    message: String,
) {
    let id = id.map_or(Value::Null, |i| {
        serde_json::to_value(i).unwrap_or(Value::Null)
    });
    reply(
        write,
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        }),
    )
    .await;
}

/// The `id` of a message from its first bytes, when it is a top-level
/// member written before the cut (as every SDK writes it).
fn head_id(head: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    let mut key_start = None;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < head.len() && head[i] != b'"' {
                    if head[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if depth == 1 {
                    key_start = Some((start, i));
                }
            }
            b'{' | b'[' => {
                depth += 1;
                key_start = None;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                key_start = None;
            }
            b':' if depth == 1 => {
                if let Some((s, e)) = key_start.take()
                    && head.get(s..e) == Some(b"id".as_slice())
                {
                    let rest = &head[i + 1..];
                    let end = rest
                        .iter()
                        .position(|c| matches!(c, b',' | b'}'))
                        .unwrap_or(rest.len());
                    let value: Value = serde_json::from_slice(rest.get(..end)?).ok()?;
                    return serde_json::from_value(value).ok();
                }
            }
            b',' => key_start = None,
            _ => {}
        }
        i += 1;
    }
    None
}

fn id_of(v: &Value) -> Option<RequestId> {
    v.get("id")
        .filter(|i| !i.is_null())
        .and_then(|i| serde_json::from_value(i.clone()).ok())
}

impl<Role, R, W> Transport<Role> for Lines<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            drop(item);
            bytes.push(b'\n');
            let mut w = write.lock().await;
            let Some(w) = w.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                ));
            };
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            let head = match self.read_line().await {
                Ok(Read::Line) => None,
                Ok(Read::Oversized(head)) => Some(head),
                Ok(Read::Eof) | Err(_) => return None,
            };
            if let Some(head) = head {
                let what = if Role::IS_CLIENT {
                    "the server's message"
                } else {
                    "the message"
                };
                let message = format!(
                    "{what} is larger than {} MiB and was dropped",
                    self.max / (1024 * 1024)
                );
                let id = head_id(&head);
                if !Role::IS_CLIENT {
                    // A client's request: refused under its id.
                    answer(&self.write, id, -32600, message).await;
                } else if let Some(id) = id {
                    // A server's answer: the request it answers fails now.
                    let error = ErrorData::new(rmcp::model::ErrorCode(-32603), message, None);
                    return Some(JsonRpcMessage::error(error, Some(id)));
                }
                continue;
            }
            let mut line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                self.give_back();
                continue;
            }
            let parsed = serde_json::from_slice::<RxJsonRpcMessage<Role>>(line);
            let outcome = match parsed {
                Ok(m) => Ok(m),
                Err(e) => Err((
                    e.classify(),
                    e.to_string(),
                    serde_json::from_slice::<Value>(line).ok(),
                )),
            };
            self.give_back();
            let (category, error, value) = match outcome {
                Ok(m) => return Some(m),
                Err(e) => e,
            };
            let Some(value) = value.filter(|_| {
                !matches!(
                    category,
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof
                )
            }) else {
                if !Role::IS_CLIENT {
                    answer(
                        &self.write,
                        None,
                        -32700,
                        format!("parse error: not JSON ({error})"),
                    )
                    .await;
                }
                continue;
            };
            let method = value.get("method").and_then(Value::as_str);
            let id = id_of(&value);
            match (method, id) {
                // A notification is never answered; one we cannot read is skipped.
                (Some(_), None) if value.get("id").is_none() => {}
                // A request we cannot read: the peer is told, under its id.
                (Some(_), id) => {
                    answer(&self.write, id, -32600, format!("invalid request: {error}")).await;
                }
                // An answer we cannot read fails the request it answers.
                (None, Some(id)) => {
                    let error = ErrorData::new(
                        rmcp::model::ErrorCode(-32603),
                        format!("the peer's answer is not a JSON-RPC response: {error}"),
                        None,
                    );
                    return Some(JsonRpcMessage::error(error, Some(id)));
                }
                // Neither a request nor an answer: a client is told; a server's is skipped.
                (None, None) => {
                    if !Role::IS_CLIENT {
                        answer(
                            &self.write,
                            None,
                            -32600,
                            format!("invalid request: {error}"),
                        )
                        .await;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let taken = self.write.lock().await.take();
        if let Some(mut w) = taken {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_the_head_of_a_message() {
        let id = |s: &str| head_id(s.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"data":"AAAA"#),
            Some(RequestId::Number(7))
        );
        assert_eq!(
            id(r#"{"jsonrpc":"2.0", "id" : "a-1", "method":"tools/call","params":{"x"#),
            Some(RequestId::String("a-1".into()))
        );
        // An `id` inside params is not the message's.
        assert_eq!(id(r#"{"jsonrpc":"2.0","params":{"id":3,"data":"AAA"#), None);
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","method":"x","params":{"s":"\"id\":4"#),
            None
        );
        assert_eq!(id("garbage"), None);
    }
}
