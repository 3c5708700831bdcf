//! TLS for every connection zero-policy makes: bundles fetched over HTTPS,
//! syslog over TLS, and HTTPS MCP servers. One library, rustls with the
//! `ring` provider, and one trust decision: the platform's roots (as
//! `rustls-platform-verifier` finds them) plus the certificates of a private
//! CA the settings name.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

/// The provider: `ring`. rustls 0.23.48 deprecates it for lacking
/// post-quantum key exchange; `aws-lc-rs`, which has it, adds minutes of C
/// build to every clean build (LIBRARIES.md), so key exchange is classical
/// (X25519, P-256, P-384) for now.
#[expect(
    deprecated,
    reason = "ring has no post-quantum key exchange; see above"
)]
fn provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// Makes `ring` the process's TLS provider, once. Every HTTP client is built
/// after this: reqwest, built without a provider of its own, refuses to
/// build one otherwise.
pub fn install_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Another provider installed first (by a program embedding the
        // library) is as good: keep it.
        let _ = provider().install_default();
    });
}

/// The certificates in a PEM file: a private CA to trust beside the
/// platform's roots.
///
/// # Errors
/// The file cannot be read or holds no certificate.
pub fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read the CA file `{}`: {e}", path.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the CA file `{}` does not read as PEM: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "the CA file `{}` holds no certificate",
            path.display()
        ));
    }
    Ok(certs)
}

/// A client configuration that trusts the platform's roots and, if given,
/// the certificates in `extra_ca`.
///
/// # Errors
/// The CA file does not read, or the platform's roots cannot be loaded.
pub fn client_config(extra_ca: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, String> {
    install_provider();
    let provider = Arc::new(provider());
    let verifier = match extra_ca {
        Some(path) => rustls_platform_verifier::Verifier::new_with_extra_roots(
            certificates(path)?,
            Arc::clone(&provider),
        ),
        None => rustls_platform_verifier::Verifier::new(Arc::clone(&provider)),
    }
    .map_err(|e| format!("cannot load the trusted roots: {e}"))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A TLS stream over a connected socket, for a synchronous writer.
pub type Stream = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;

/// The name a server's certificate must carry for `host` (a DNS name or an
/// IP address; `[v6]` brackets are taken off).
///
/// # Errors
/// It is neither.
pub fn server_name(host: &str) -> Result<rustls::pki_types::ServerName<'static>, String> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| format!("`{host}` is not a host name: {e}"))
}

/// Starts TLS on `socket` for `server` and finishes the handshake, so that
/// a server whose certificate is refused fails here, before any data.
///
/// # Errors
/// The handshake fails: the certificate is not trusted, or the connection
/// breaks.
pub fn handshake(
    socket: std::net::TcpStream,
    config: &Arc<rustls::ClientConfig>,
    server: rustls::pki_types::ServerName<'static>,
) -> Result<Stream, String> {
    let connection = rustls::ClientConnection::new(Arc::clone(config), server)
        .map_err(|e| format!("cannot start TLS: {e}"))?;
    let mut stream = rustls::StreamOwned::new(connection, socket);
    while stream.conn.is_handshaking() {
        stream
            .conn
            .complete_io(&mut stream.sock)
            .map_err(|e| format!("TLS handshake failed: {e}"))?;
    }
    Ok(stream)
}
