//! A bundle fetched over HTTPS: the file at the URL and its signature at the
//! URL plus `.minisig`, asked for with the `ETag` of the copy already held so
//! that an unchanged bundle costs one small answer (`304 Not Modified`).
//!
//! Only `https` is fetched (redirects too): the signature keeps a forged
//! bundle out, and TLS keeps an observer from learning or freezing which
//! policy a machine runs. Trust is the platform's roots plus a private CA
//! ([`crate::tls`]). Both files are read to at most
//! [`super::MAX_BUNDLE_BYTES`].

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_NONE_MATCH};

/// The largest signature file read.
const MAX_SIGNATURE_BYTES: usize = 64 * 1024;

/// What a fetch brought.
#[derive(Debug)]
pub enum Fetched {
    /// The server says the copy held (its `ETag`) is current.
    NotModified,
    /// A bundle and its signature, not yet verified.
    New {
        /// The bundle file's bytes.
        bytes: Vec<u8>,
        /// The `.minisig` text.
        signature: String,
        /// The bundle's `ETag`, to ask with next time.
        etag: Option<String>,
    },
}

/// Fetches the bundle at `url` and its signature, within `timeout` for each.
/// `etag` is the `ETag` of the copy held, if any.
///
/// # Errors
/// The URL is not `https`, the server cannot be reached or answers with an
/// error, or a file is too large.
pub fn fetch(
    url: &str,
    ca: Option<&std::path::Path>,
    etag: Option<&str>,
    timeout: Duration,
) -> Result<Fetched, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if parsed.scheme() != "https" {
        return Err(format!(
            "`{url}` is not an https URL; a bundle is fetched over https only"
        ));
    }
    let mut signature_url = parsed.clone();
    signature_url.set_path(&format!("{}.minisig", parsed.path()));
    crate::tls::install_provider();
    let mut builder = reqwest::Client::builder()
        .https_only(true)
        .connect_timeout(timeout)
        .timeout(timeout)
        .no_proxy();
    if let Some(ca) = ca {
        for cert in crate::tls::certificates(ca)? {
            let cert = reqwest::Certificate::from_der(&cert)
                .map_err(|e| format!("the CA file `{}`: {e}", ca.display()))?;
            builder = builder.tls_certs_merge([cert]);
        }
    }
    let client = builder
        .build()
        .map_err(|e| format!("cannot set up the HTTPS client: {}", chain(&e)))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the HTTPS client: {e}"))?;
    // On a thread of its own, so that a caller inside a runtime (`serve`)
    // does not start one within another.
    std::thread::scope(|scope| {
        scope
            .spawn(|| runtime.block_on(get(&client, url, &parsed, &signature_url, etag)))
            .join()
            .unwrap_or_else(|_| Err(format!("fetching `{url}` failed unexpectedly")))
    })
}

/// The two requests of [`fetch`].
async fn get(
    client: &reqwest::Client,
    url: &str,
    parsed: &reqwest::Url,
    signature_url: &reqwest::Url,
    etag: Option<&str>,
) -> Result<Fetched, String> {
    {
        let mut request = client.get(parsed.clone());
        if let Some(tag) = etag {
            request = request.header(IF_NONE_MATCH, tag);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("cannot fetch `{url}`: {}", chain(&e)))?;
        if response.status() == StatusCode::NOT_MODIFIED && etag.is_some() {
            return Ok(Fetched::NotModified);
        }
        if !response.status().is_success() {
            return Err(format!("`{url}` answered {}", response.status()));
        }
        let tag = response
            .headers()
            .get(ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = body(response, super::MAX_BUNDLE_BYTES, url).await?;
        let response = client
            .get(signature_url.clone())
            .send()
            .await
            .map_err(|e| format!("cannot fetch `{signature_url}`: {}", chain(&e)))?;
        if !response.status().is_success() {
            return Err(format!("`{signature_url}` answered {}", response.status()));
        }
        let signature = body(response, MAX_SIGNATURE_BYTES, signature_url.as_str()).await?;
        let signature = String::from_utf8(signature)
            .map_err(|_| format!("`{signature_url}` is not a minisign signature (not text)"))?;
        Ok(Fetched::New {
            bytes,
            signature,
            etag: tag,
        })
    }
}

/// A response's body, refused past `limit` bytes before more is read.
async fn body(mut response: reqwest::Response, limit: usize, url: &str) -> Result<Vec<u8>, String> {
    let too_large = || format!("`{url}` is larger than {limit} bytes");
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut out = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("cannot read `{url}`: {}", chain(&e)))?
    {
        if out.len() + chunk.len() > limit {
            return Err(too_large());
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// An error and its causes, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}
