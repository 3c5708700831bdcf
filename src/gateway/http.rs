//! Streamable HTTP in: `zero-policy serve --listen ADDR`, endpoint `/mcp`.
//!
//! rmcp's `StreamableHttpService` speaks the transport (sessions for
//! 2025-era clients, stateless for the 2026-07-28 revision) and checks `Host`
//! and `Origin` against DNS rebinding (403). In front of it this module serves
//! only `/mcp` (404 elsewhere) and, with `--token-env`, checks the bearer token
//! (401). A listen address that is not loopback needs a token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower_service::Service;

use crate::gateway::Gateway;
use crate::gateway::handler::Handler;

/// How the HTTP front door is set up.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Browser origins allowed besides loopback ones (`https://app.example.com`).
    pub allow_origins: Vec<String>,
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: hyper::StatusCode, text: &str) -> hyper::Response<Body> {
    let mut r = hyper::Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *r.status_mut() = status;
    r
}

/// Compares without stopping at the first difference.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request carries `Authorization: Bearer TOKEN` with this token
/// (compared in constant time); `serve --hooks` checks its token the same way.
pub(crate) fn authorized(req: &hyper::Request<Incoming>, token: &str) -> bool {
    req.headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .is_some_and(|given| same_secret(given.trim().as_bytes(), token.as_bytes()))
}

/// Checks the options before anything binds.
///
/// # Errors
/// A non-loopback address without a token.
pub fn check(options: &HttpOptions) -> Result<(), String> {
    if !options.listen.ip().is_loopback() && options.token.is_none() {
        return Err(format!(
            "`--listen {}` is not a loopback address: anyone who can reach it could call the tools; give `--token-env NAME` (a bearer token read from that variable)",
            options.listen
        ));
    }
    Ok(())
}

/// Serves until the gateway's shutdown token is cancelled.
///
/// # Errors
/// The options are refused or the address cannot be bound.
pub async fn serve(gateway: Arc<Gateway>, options: HttpOptions) -> Result<(), String> {
    check(&options)?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on `{}`: {e}", options.listen))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let port = bound.port();
    let mut hosts = vec![format!("{}:{port}", host_text(bound))];
    if bound.ip().is_loopback() {
        hosts.extend([
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ]);
    }
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
        .collect();
    origins.extend(options.allow_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(gateway.shutdown.child_token());
    let handler_gateway = Arc::clone(&gateway);
    let service = StreamableHttpService::new(
        move || Ok(Handler::new(Arc::clone(&handler_gateway))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    crate::output::stderr(&format!(
        "zero-policy serve: listening on http://{}:{port}/mcp\n",
        host_text(bound)
    ));
    let token = options.token.map(Arc::new);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = gateway.shutdown.cancelled() => return Ok(()),
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let service = service.clone();
        let token = token.clone();
        let shutdown = gateway.shutdown.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let mut service = service.clone();
                let token = token.clone();
                async move {
                    if req.uri().path() != "/mcp" {
                        return Ok::<_, Infallible>(plain(
                            hyper::StatusCode::NOT_FOUND,
                            "not found: the MCP endpoint is /mcp",
                        ));
                    }
                    if let Some(t) = &token
                        && !authorized(&req, t)
                    {
                        let mut r = plain(
                            hyper::StatusCode::UNAUTHORIZED,
                            "unauthorized: send `Authorization: Bearer TOKEN`",
                        );
                        r.headers_mut().insert(
                            hyper::header::WWW_AUTHENTICATE,
                            hyper::header::HeaderValue::from_static("Bearer"),
                        );
                        return Ok(r);
                    }
                    service.call(req).await
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), conn).await;
                }
            }
        });
    }
}

/// The address's host as a `Host` header names it (`[::1]` for IPv6).
pub(crate) fn host_text(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn a_public_address_needs_a_token() {
        let opts = |addr: &str, token: Option<&str>| HttpOptions {
            listen: addr
                .parse()
                .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0))),
            token: token.map(str::to_string),
            allow_origins: Vec::new(),
        };
        assert!(check(&opts("127.0.0.1:8080", None)).is_ok());
        assert!(check(&opts("[::1]:8080", None)).is_ok());
        let e = check(&opts("0.0.0.0:8080", None)).unwrap_err();
        assert!(e.contains("--token-env"), "{e}");
        assert!(check(&opts("0.0.0.0:8080", Some("s3cret"))).is_ok());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
