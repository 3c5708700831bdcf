//! The gateway as an OAuth client of a streamable-HTTP MCP server (MCP
//! authorization, 2025-06-18 and 2025-11-25), on `rmcp`'s authorization
//! manager (discovery, registration, PKCE, token exchange and refresh).
//!
//! [`AuthorizedHttp`] sits under rmcp's streamable-HTTP transport and reacts
//! to what the server says, so the MCP session never sees it:
//!
//! - a `401` with a `WWW-Authenticate` challenge starts authorization: the
//!   protected resource metadata it names (RFC 9728, else the well-known
//!   locations), the authorization server's metadata (RFC 8414 or OpenID
//!   discovery), a client (registered in advance, a client metadata document,
//!   or dynamic registration, RFC 7591), then the authorization code with
//!   PKCE S256 and the `resource` parameter (RFC 8707) — the person approves
//!   in a browser and the code comes back to a loopback port — or the client
//!   credentials grant; the request is then sent again, once, with the token;
//! - a `401` to a token that was sent first tries the refresh token;
//! - a `403` with `error="insufficient_scope"` asks for the union of the
//!   scopes held and those the challenge names, at most [`MAX_STEP_UPS`]
//!   times, and never for scopes already granted (the server would refuse
//!   again).
//!
//! A failed authorization is an error of that server's request; nothing is
//! ever sent without the token once the server asked for one. Client secrets,
//! tokens and codes never reach an error message or the log.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    ClientCredentialsConfig, CredentialStore, OAuthClientConfig, StoredCredentials,
    WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::model::AuthGrant;

/// How many times one connection may ask for more scopes after a `403`.
pub const MAX_STEP_UPS: u32 = 3;
/// The client name sent with dynamic registration.
const CLIENT_NAME: &str = "zero-policy";
/// Bound on the request line and headers of the browser's return.
const MAX_CALLBACK_BYTES: usize = 16 * 1024;

/// `servers[].auth` with every `${env:NAME}` resolved.
#[derive(Clone)]
pub struct OAuthSpec {
    /// Which grant obtains tokens.
    pub grant: AuthGrant,
    /// A client registered in advance.
    pub client_id: Option<String>,
    /// Its secret.
    pub client_secret: Option<String>,
    /// The https URL of this client's metadata document.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; empty: those the server names.
    pub scopes: Vec<String>,
    /// The loopback port of the redirect; `None`: any free port.
    pub redirect_port: Option<u16>,
    /// The program (and arguments) that opens the authorization page.
    pub open: Vec<String>,
    /// Where registration and tokens are kept between runs.
    pub token_cache: Option<PathBuf>,
}

/// The secret is never shown.
impl fmt::Debug for OAuthSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSpec")
            .field("grant", &self.grant)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("redirect_port", &self.redirect_port)
            .field("open", &self.open)
            .field("token_cache", &self.token_cache)
            .finish()
    }
}

/// One server's authorization, shared by its connections (a reconnection
/// keeps the token and the count of scope step-ups).
pub struct OAuth {
    server: String,
    url: String,
    spec: OAuthSpec,
    /// Bound on the person's approval in the browser.
    wait: Duration,
    state: tokio::sync::Mutex<State>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("server", &self.server)
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// The manager of the last successful authorization.
    manager: Option<AuthorizationManager>,
    /// The token last obtained.
    token: Option<String>,
    /// The scopes it carries.
    granted: Vec<String>,
    /// Scope step-ups so far.
    step_ups: u32,
    /// The token cache was read.
    cache_read: bool,
}

impl OAuth {
    /// The authorization of server `server` at `url`; the person has `wait`
    /// to approve in the browser.
    #[must_use]
    pub fn new(server: &str, url: &str, spec: OAuthSpec, wait: Duration) -> Self {
        Self {
            server: server.to_string(),
            url: url.to_string(),
            spec,
            wait,
            state: tokio::sync::Mutex::default(),
        }
    }

    /// The token to send, refreshed when it has expired; `None` before the
    /// first authorization (the server's `401` starts it).
    async fn token(&self) -> Result<Option<String>, AuthError> {
        let mut state = self.state.lock().await;
        if !state.cache_read {
            state.cache_read = true;
            self.read_cache(&mut state).await;
        }
        let Some(manager) = &state.manager else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => {
                state.token = Some(token.clone());
                Ok(Some(token))
            }
            // Expired with no refresh, or the refresh was refused: the
            // server's 401 starts a new authorization.
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
                state.manager = None;
                state.token = None;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Tokens kept by an earlier run, when there is a cache and it holds them.
    async fn read_cache(&self, state: &mut State) {
        let Some(path) = &self.spec.token_cache else {
            return;
        };
        let store = FileStore(path.clone());
        let Ok(Some(stored)) = store.load().await else {
            return;
        };
        let Ok(mut manager) = AuthorizationManager::new(self.url.as_str()).await else {
            return;
        };
        manager.set_credential_store(store);
        if !matches!(manager.initialize_from_store().await, Ok(true)) {
            return;
        }
        // A client registered in advance refreshes with its secret.
        if let (Some(id), Some(secret)) = (&self.spec.client_id, &self.spec.client_secret)
            && id == &stored.client_id
        {
            let config = OAuthClientConfig::new(id.clone(), self.url.clone())
                .with_client_secret(secret.clone());
            if manager.configure_client(config).is_err() {
                return;
            }
        }
        state.granted = stored.granted_scopes;
        state.manager = Some(manager);
    }

    /// After a `401`: the refresh token if a token was sent, else (or when
    /// that fails) a new authorization. `sent` is the token the request
    /// carried; another request may have obtained a newer one meanwhile.
    async fn unauthorized(&self, sent: Option<&str>, challenge: &str) -> Result<String, AuthError> {
        let mut state = self.state.lock().await;
        if let Some(token) = &state.token
            && Some(token.as_str()) != sent
        {
            return Ok(token.clone());
        }
        if sent.is_some()
            && let Some(manager) = &state.manager
            && manager.refresh_token().await.is_ok()
            && let Ok(token) = manager.get_access_token().await
            && Some(token.as_str()) != sent
        {
            state.token = Some(token.clone());
            return Ok(token);
        }
        let scopes = (!self.spec.scopes.is_empty()).then(|| self.spec.scopes.clone());
        self.authorize(&mut state, challenge, scopes).await
    }

    /// After a `403` `insufficient_scope`: authorize again for the scopes
    /// held and those the challenge names, unless they were all granted
    /// already or the step-ups are used up.
    async fn insufficient_scope(
        &self,
        sent: Option<&str>,
        challenge: &str,
    ) -> Result<String, AuthError> {
        let mut state = self.state.lock().await;
        if let Some(token) = &state.token
            && Some(token.as_str()) != sent
        {
            return Ok(token.clone());
        }
        let base = url::Url::parse(&self.url)?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        if !params.is_insufficient_scope() {
            return Err(AuthError::AuthorizationFailed(
                "the server refused the token (403) without asking for more scope".into(),
            ));
        }
        let required: Vec<String> = params
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if required.is_empty() {
            return Err(AuthError::AuthorizationFailed(
                "the server wants more scope (403 insufficient_scope) but names none".into(),
            ));
        }
        if sent.is_some() && required.iter().all(|s| state.granted.contains(s)) {
            return Err(AuthError::AuthorizationFailed(format!(
                "the server wants scope `{}`, which the token already has; not asking again",
                required.join(" ")
            )));
        }
        if state.step_ups >= MAX_STEP_UPS {
            return Err(AuthError::AuthorizationFailed(format!(
                "the server still wants more scope after {MAX_STEP_UPS} authorizations; giving up"
            )));
        }
        state.step_ups += 1;
        let mut scopes = state.granted.clone();
        for s in required {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        self.authorize(&mut state, challenge, Some(scopes)).await
    }

    /// Discovery from the challenge, then the configured grant. On success
    /// the state holds the new manager, token and scopes.
    async fn authorize(
        &self,
        state: &mut State,
        challenge: &str,
        scopes: Option<Vec<String>>,
    ) -> Result<String, AuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await?;
        if let Some(path) = &self.spec.token_cache {
            manager.set_credential_store(FileStore(path.clone()));
        }
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await?;
        manager.set_metadata(resolution.metadata);
        let manager = match self.spec.grant {
            AuthGrant::ClientCredentials => {
                let scopes = match scopes {
                    Some(s) => s,
                    None => manager.select_initial_scopes(&[]).await,
                };
                let config = ClientCredentialsConfig::ClientSecret {
                    client_id: self.spec.client_id.clone().unwrap_or_default(),
                    client_secret: self.spec.client_secret.clone().unwrap_or_default(),
                    scopes,
                    resource: Some(self.url.clone()),
                };
                manager.validate_client_credentials_metadata(&config)?;
                manager.configure_client_credentials(&config)?;
                manager.exchange_client_credentials(&config).await?;
                manager
            }
            AuthGrant::AuthorizationCode => self.authorization_code(manager, scopes).await?,
        };
        let token = manager.get_access_token().await?;
        state.granted = manager.get_current_scopes().await;
        state.manager = Some(manager);
        state.token = Some(token.clone());
        Ok(token)
    }

    /// The person approves in the browser; the code comes back to a
    /// loopback port and is exchanged (PKCE S256, `resource`).
    async fn authorization_code(
        &self,
        manager: AuthorizationManager,
        scopes: Option<Vec<String>>,
    ) -> Result<AuthorizationManager, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", self.spec.redirect_port.unwrap_or(0)))
            .await
            .map_err(|e| AuthError::AuthorizationFailed(format!("no loopback port: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::AuthorizationFailed(format!("no loopback port: {e}")))?
            .port();
        let redirect = format!("http://127.0.0.1:{port}/callback");
        let mut request = AuthorizationRequest::new(redirect).with_client_name(CLIENT_NAME);
        request = match scopes {
            Some(s) => request.with_scopes(s),
            None => request.with_initial_scope_selection(),
        };
        if let Some(id) = &self.spec.client_id {
            request = request.with_preregistered_client(id.clone());
        }
        if let Some(secret) = &self.spec.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        if let Some(url) = &self.spec.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| e)?;
        self.open(session.get_authorization_url())?;
        let back = tokio::time::timeout(self.wait, callback(listener))
            .await
            .map_err(|_| {
                AuthError::AuthorizationFailed(format!(
                    "nobody approved in the browser within {:?}",
                    self.wait
                ))
            })??;
        session.handle_callback_url(&back).await?;
        Ok(session.auth_manager)
    }

    /// Opens the authorization page with the configured program, else writes
    /// its URL to stderr for the person.
    fn open(&self, url: &str) -> Result<(), AuthError> {
        let Some((program, args)) = self.spec.open.split_first() else {
            eprintln!(
                "zero-policy: MCP server `{}` asks for authorization: open {url}",
                self.server
            );
            return Ok(());
        };
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| {
                AuthError::AuthorizationFailed(format!("could not start `{program}`: {e}"))
            })?;
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        Ok(())
    }
}

/// Waits on the loopback listener for the browser's return to `/callback`
/// and gives its URL; anything else gets a 404 and the wait goes on. An
/// authorization server's `error` ends the wait with that error.
async fn callback(listener: TcpListener) -> Result<String, AuthError> {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 2048];
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_CALLBACK_BYTES {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
        })
        .await;
        if read.is_err() {
            continue;
        }
        let text = String::from_utf8_lossy(&head);
        let mut words = text.lines().next().unwrap_or_default().split_whitespace();
        let (method, target) = (words.next(), words.next().unwrap_or_default());
        let url = url::Url::parse(&format!("http://127.0.0.1{target}")).ok();
        let Some(url) = url.filter(|u| method == Some("GET") && u.path() == "/callback") else {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        };
        let error = url
            .query_pairs()
            .find(|(k, _)| k == "error")
            .map(|(_, v)| v.into_owned());
        let body: &[u8] = if error.is_some() {
            b"Authorization was refused. You can close this page."
        } else {
            b"zero-policy is authorized. You can close this page."
        };
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.write_all(body).await;
        let _ = stream.shutdown().await;
        if let Some(error) = error {
            return Err(AuthError::AuthorizationFailed(format!(
                "the authorization server answered `{error}`"
            )));
        }
        return Ok(url.to_string());
    }
}

/// Registration and tokens in one JSON file, written with mode 0600 (to a
/// temporary file, then renamed over the old one).
struct FileStore(PathBuf);

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match std::fs::read(&self.0) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                AuthError::CredentialStoreError(format!("`{}`: {e}", self.0.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(AuthError::CredentialStoreError(format!(
                "`{}`: {e}",
                self.0.display()
            ))),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let fail = |e: &dyn fmt::Display| {
            AuthError::CredentialStoreError(format!("`{}`: {e}", self.0.display()))
        };
        let bytes = serde_json::to_vec(&credentials).map_err(|e| fail(&e))?;
        write_private(&self.0, &bytes).map_err(|e| fail(&e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.0) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(
                AuthError::CredentialStoreError(format!("`{}`: {e}", self.0.display())),
            ),
            _ => Ok(()),
        }
    }
}

/// Writes `bytes` to `path` readable by its owner only: a new file with mode
/// 0600 beside it, renamed over it. Its folder is made (0700) if missing.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// rmcp's reqwest client for streamable HTTP, authorized by [`OAuth`]: each
/// request carries the current token, and a `401` or `403` challenge is
/// answered by authorizing and sending the request once more.
#[derive(Clone)]
pub struct AuthorizedHttp {
    inner: reqwest::Client,
    oauth: Arc<OAuth>,
}

impl AuthorizedHttp {
    /// `inner` authorized by `oauth`.
    #[must_use]
    pub fn new(inner: reqwest::Client, oauth: Arc<OAuth>) -> Self {
        Self { inner, oauth }
    }

    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut sent = self.oauth.token().await?;
        let mut reauthorized = false;
        // A 401 is answered once; a 403 as long as `insufficient_scope`
        // allows (new scopes only, at most MAX_STEP_UPS), so this ends.
        for _ in 0..=MAX_STEP_UPS {
            let token = match call(sent.clone()).await {
                Err(StreamableHttpError::AuthRequired(e)) if !reauthorized => {
                    reauthorized = true;
                    self.oauth
                        .unauthorized(sent.as_deref(), &e.www_authenticate_header)
                        .await?
                }
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    self.oauth
                        .insufficient_scope(sent.as_deref(), &e.www_authenticate_header)
                        .await?
                }
                done => return done,
            };
            sent = Some(token);
        }
        call(sent).await
    }
}

type SseStream = BoxStream<'static, Result<Sse, SseError>>;

impl StreamableHttpClient for AuthorizedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        // Ending a session is not worth a new authorization.
        let token = self.oauth.token().await?;
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn debug_hides_the_secret() {
        let spec = OAuthSpec {
            grant: AuthGrant::ClientCredentials,
            client_id: Some("id".into()),
            client_secret: Some("sekrit-value".into()),
            client_metadata_url: None,
            scopes: vec![],
            redirect_port: None,
            open: vec![],
            token_cache: None,
        };
        let shown = format!(
            "{:?}",
            OAuth::new("s", "http://x/mcp", spec, Duration::ZERO)
        );
        assert!(!shown.contains("sekrit"), "{shown}");
        assert!(shown.contains("client_id: Some(\"id\")"), "{shown}");
    }

    #[test]
    fn the_token_cache_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/tokens.json");
        let store = FileStore(path.clone());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            assert!(store.load().await.unwrap().is_none());
            let creds = StoredCredentials::new("client".into(), None, vec!["a".into()], Some(7));
            store.save(creds.clone()).await.unwrap();
            // Saved twice: the second write replaces the first, still private.
            store.save(creds).await.unwrap();
            let back = store.load().await.unwrap().unwrap();
            assert_eq!(back.client_id, "client");
            assert_eq!(back.granted_scopes, vec!["a".to_string()]);
        });
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
        rt.block_on(store.clear()).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn the_callback_gives_the_redirect_and_refuses_the_rest() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let waiting = tokio::spawn(callback(listener));
            let get = |path: &'static str| async move {
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut out = String::new();
                s.read_to_string(&mut out).await.unwrap();
                out
            };
            assert!(get("/favicon.ico").await.starts_with("HTTP/1.1 404"));
            assert!(
                get("/callback?code=c1&state=s1")
                    .await
                    .starts_with("HTTP/1.1 200")
            );
            let url = waiting.await.unwrap().unwrap();
            assert_eq!(url, format!("http://127.0.0.1/callback?code=c1&state=s1"));

            let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            let port2 = listener.local_addr().unwrap().port();
            let waiting = tokio::spawn(callback(listener));
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port2))
                .await
                .unwrap();
            s.write_all(b"GET /callback?error=access_denied&state=s HTTP/1.1\r\n\r\n")
                .await
                .unwrap();
            let err = waiting.await.unwrap().unwrap_err().to_string();
            assert!(err.contains("access_denied"), "{err}");
        });
    }
}
