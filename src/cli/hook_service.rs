//! `zero-policy serve --hooks ADDR`: the warm decision service (SPEC §7).
//!
//! Every agent's hook events over HTTP, `POST /hooks/AGENT` with the agent's
//! own event as the body, decided by the very code `zero-policy hook AGENT`
//! runs ([`hook::decide`]) on a policy loaded once per agent and reloaded
//! when its files change, so a decision costs a loopback round trip instead
//! of a process start and a policy load.
//!
//! Two forms of answer:
//!
//! - **native** (the default): the body is the agent's JSON answer, status
//!   200, for Claude Code's and Copilot CLI's `http` hooks. Where `hook`
//!   would exit 2 with the reason on stderr (its blocking form), the body is
//!   the agent's JSON deny with that reason: an HTTP hook has no exit code,
//!   and a deny blocks whatever the agent does with a failed hook.
//! - **process** (header `zero-policy-answer: process`): what `hook` would
//!   print and return, `{"stdout", "stderr", "code"}`, for the `hook AGENT
//!   --via URL` client that the other agents run.
//!
//! Fail closed: a request that is not a POST, has no valid token, comes from
//! a browser (`Origin`, or a `Host` that is not this service: DNS rebinding),
//! has a body over 4 MiB, is not JSON or not the agent's event, or does not
//! arrive within [`READ_TIMEOUT`], is decided as `hook` decides an event it
//! cannot read: the agent's blocking answer and one log line. A panic is the
//! blocking answer too. A policy that does not load blocks every call, as in
//! `hook`; one that stops loading keeps the last good one, as the gateway
//! does.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio_util::sync::CancellationToken;

use crate::cli::hook::{self, Origin};
use crate::cli::{BundleArgs, EXIT_ERROR, EXIT_OK};
use crate::hooks::headless::Asker;
use crate::hooks::{self, Agent, Decided, MAX_EVENT_BYTES, Verdict};
use crate::policy::Policy;
use crate::registry::Registry;

/// The path prefix of the hook endpoints: `/hooks/claude-code`, ...
pub const PREFIX: &str = "/hooks/";
/// The request header that asks for the process form of the answer.
pub const ANSWER_HEADER: &str = "zero-policy-answer";
/// The request header by which the `--via` client says nobody can answer
/// the agent's `ask` (Gemini CLI under `-p`), and why.
pub const HEADLESS_HEADER: &str = "zero-policy-headless";
/// The variable holding the bearer token, for the service (unless
/// `--token-env` names another) and for the `--via` client.
pub const TOKEN_VAR: &str = "ZERO_POLICY_HOOK_TOKEN";
/// How long a request's headers may take to arrive, and then its body.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 1024;
/// How long one connection is kept, however busy: then it is closed after
/// its request in flight, so idle kept-alive connections cannot hold every
/// slot (clients connect again).
const MAX_CONNECTION_LIFE: Duration = Duration::from_secs(300);

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// The policy paths, as `hook` takes them.
    pub paths: Vec<PathBuf>,
    /// The bundle, as `hook` takes it.
    pub bundle: BundleArgs,
}

/// Checks the options before anything binds.
///
/// # Errors
/// A non-loopback address without a token.
pub fn check(options: &Options) -> Result<(), String> {
    if !options.listen.ip().is_loopback() && options.token.is_none() {
        return Err(format!(
            "`--hooks {}` is not a loopback address: anyone who can reach it could ask for decisions and fill the log; give a token (`--token-env NAME`, or `{TOKEN_VAR}`)",
            options.listen
        ));
    }
    Ok(())
}

/// One agent's policy and registry, or why it does not load.
type AgentPolicy = Result<(Policy, Registry), String>;

/// The policy in force: where it comes from and each agent's load of it.
struct Loaded {
    origin: Origin,
    agents: Vec<AgentPolicy>,
    /// Each agent's shadow policy (`settings.shadow`), loaded with its policy.
    shadows: Vec<Option<Result<crate::shadow::Shadow, String>>>,
}

impl Loaded {
    fn load(options: &Options) -> Loaded {
        let origin = Origin::resolve(&options.paths, &options.bundle, false);
        let agents: Vec<AgentPolicy> = Agent::ALL.iter().map(|a| origin.load(a.as_str())).collect();
        let shadows = Agent::ALL
            .iter()
            .zip(&agents)
            .map(|(a, p)| {
                hook::load_shadow(
                    *a,
                    &origin,
                    p.as_ref().map(|(_, r)| r).map_err(String::as_str),
                )
            })
            .collect();
        Loaded {
            origin,
            agents,
            shadows,
        }
    }

    fn shadow(&self, agent: Agent) -> Option<Result<&crate::shadow::Shadow, &str>> {
        let i = Agent::ALL.iter().position(|a| *a == agent)?;
        self.shadows
            .get(i)?
            .as_ref()
            .map(|s| s.as_ref().map_err(String::as_str))
    }

    fn agent(&self, agent: Agent) -> Result<(&Policy, &Registry), String> {
        let i = Agent::ALL.iter().position(|a| *a == agent).unwrap_or(0);
        match self.agents.get(i) {
            Some(Ok((p, r))) => Ok((p, r)),
            Some(Err(why)) => Err(why.clone()),
            None => Err("internal error: no policy for this agent".into()),
        }
    }

    /// The first error of an agent whose policy does not load.
    fn error(&self) -> Option<&str> {
        self.agents
            .iter()
            .find_map(|a| a.as_ref().err().map(String::as_str))
    }

    /// The files whose change may change the policy.
    fn watched(&self, options: &Options) -> Vec<PathBuf> {
        match &self.origin.source {
            Ok(crate::cli::Source::Paths(p)) => p.clone(),
            Ok(crate::cli::Source::Bundle { .. }) | Err(_) => {
                match options.bundle.source(!options.paths.is_empty()) {
                    Some(Ok(b)) => b.watched(),
                    _ => Vec::new(),
                }
            }
            // `hook` reads `~/.config/zero-policy/` once it exists.
            Ok(crate::cli::Source::Builtin) => crate::log::home()
                .map(|h| vec![h.join(".config/zero-policy")])
                .unwrap_or_default(),
        }
    }

    /// Where records go besides the file, by the policy's settings.
    fn remote(&self) -> crate::gateway::log_writer::Remote {
        self.agents
            .iter()
            .find_map(|a| a.as_ref().ok())
            .map(|(_, r)| {
                let s = r.settings();
                (s.log_syslog.clone(), s.log_otlp.clone())
            })
            .unwrap_or((None, None))
    }
}

/// The service's shared state.
struct Service {
    options: Options,
    loaded: RwLock<Arc<Loaded>>,
    remote: Mutex<crate::gateway::log_writer::Sink>,
    /// `Host` values a request may name (empty: any, with a token).
    hosts: Vec<String>,
    shutdown: CancellationToken,
}

impl Service {
    fn loaded(&self) -> Arc<Loaded> {
        match self.loaded.read() {
            Ok(l) => Arc::clone(&l),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Says `message` on stderr and in the decision log of the policy in force.
    fn note(&self, message: &str) {
        let loaded = self.loaded();
        let registry = loaded.agents.iter().find_map(|a| a.as_ref().ok());
        let scrubber = registry.map_or_else(crate::scrub::Scrubber::builtin, |(_, r)| {
            r.scrubber().clone()
        });
        let text = scrubber.scrub_str(message).into_owned();
        crate::output::stderr(&format!("zero-policy serve: {text}\n"));
        let (path, chain, hash) = registry.map_or_else(
            || {
                (
                    crate::policy::DEFAULT_LOG_PATH.to_string(),
                    None,
                    String::new(),
                )
            },
            |(p, r)| {
                (
                    r.settings().log_path.clone(),
                    Some(r.settings().log_chain),
                    crate::log::policy_hash(&p.files),
                )
            },
        );
        let mut decided = Decided {
            answer: hooks::Answer::silent(),
            record: crate::log::Record {
                time: crate::log::rfc3339_utc(std::time::SystemTime::now()),
                front: "serve:hooks".into(),
                decision: "error".into(),
                reason: text,
                policy: hash,
                bundle: loaded
                    .origin
                    .bundle
                    .as_ref()
                    .map(|b| b.bundle.version().to_string()),
                ..crate::log::Record::default()
            },
            log_path: path,
            log_chain: chain,
            syslog: None,
            otlp: None,
        };
        hook::write_log(&mut decided);
        if !decided.answer.stderr.is_empty() {
            crate::output::stderr(&decided.answer.stderr);
        }
    }

    /// Loads the policy again and swaps it in; a policy that loaded before
    /// and no longer does is kept, and the error said.
    async fn reload(self: &Arc<Self>) {
        let this = Arc::clone(self);
        let Ok(new) = tokio::task::spawn_blocking(move || Loaded::load(&this.options)).await else {
            self.note("kept the last good policy: the reload failed");
            return;
        };
        let old = self.loaded();
        if let Some(why) = new.error()
            && old.error().is_none()
        {
            self.note(&format!("kept the last good policy: {why}"));
            return;
        }
        let remote = new.remote();
        let said = match (&new.origin.bundle, new.error()) {
            (_, Some(why)) => {
                format!("the policy still does not load, every call is blocked: {why}")
            }
            (Some(b), None) => format!("bundle `{}` is in force", b.bundle.version()),
            (None, None) => "reloaded the policy".into(),
        };
        match self.loaded.write() {
            Ok(mut slot) => *slot = Arc::new(new),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(new),
        }
        let mut sink = lock(&self.remote);
        if sink.remote() != &remote {
            *sink = crate::gateway::log_writer::Sink::new(remote);
        }
        drop(sink);
        crate::output::stderr(&format!("zero-policy serve: {said}\n"));
    }

    /// Decides one request's event: the hook's decision, logged, sent on.
    fn decide(
        &self,
        agent: Agent,
        input: Result<Vec<u8>, String>,
        asker: &Asker,
        started: Instant,
    ) -> hooks::Answer {
        let loaded = self.loaded();
        let mut decided = hook::guarded(agent, started, || {
            hook::decide(
                agent,
                input,
                &loaded.origin,
                loaded.agent(agent),
                loaded.shadow(agent),
                asker,
                started,
            )
        });
        if catch_unwind(AssertUnwindSafe(|| hook::write_log(&mut decided))).is_err() {
            decided
                .answer
                .stderr
                .push_str("zero-policy: internal error while writing the decision log\n");
        }
        if decided.syslog.is_some() || decided.otlp.is_some() {
            lock(&self.remote).send(&decided.record);
        }
        decided.answer
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// How the answer is to be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Native,
    Process,
}

/// The HTTP response for an answer.
fn respond(agent: Agent, form: Form, answer: &hooks::Answer) -> hyper::Response<Full<Bytes>> {
    let body = match form {
        Form::Process => serde_json::json!({
            "stdout": answer.stdout,
            "stderr": answer.stderr,
            "code": answer.code,
        })
        .to_string(),
        Form::Native => native(agent, answer),
    };
    let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// The agent's answer as the body of its `http` hook's response.
#[must_use]
pub fn native(agent: Agent, answer: &hooks::Answer) -> String {
    if answer.code == 0 || !answer.stdout.trim().is_empty() {
        let out = answer.stdout.trim();
        return if out.is_empty() {
            "{}".into()
        } else {
            out.into()
        };
    }
    // The blocking form with nothing on stdout (exit 2, the reason on
    // stderr): the agent's deny, with that reason.
    agent
        .answer(Verdict::Deny, answer.stderr.trim())
        .stdout
        .trim()
        .to_string()
}

fn not_found() -> hyper::Response<Full<Bytes>> {
    let names: Vec<String> = Agent::ALL
        .iter()
        .map(|a| format!("{PREFIX}{}", a.as_str()))
        .collect();
    let mut r = hyper::Response::new(Full::new(Bytes::from(format!(
        "not found: the hook endpoints are {}\n",
        names.join(", ")
    ))));
    *r.status_mut() = hyper::StatusCode::NOT_FOUND;
    r
}

/// Why the request may not be decided, before its body is read.
fn refused(service: &Service, req: &hyper::Request<Incoming>) -> Option<String> {
    if req.method() != hyper::Method::POST {
        return Some(format!(
            "the hook service answers only POST, and this request is a {}",
            req.method()
        ));
    }
    let headers = req.headers();
    if headers.contains_key(hyper::header::ORIGIN) {
        return Some("a request from a web page (it sends `Origin`) is refused".into());
    }
    if !service.hosts.is_empty() {
        let host = headers
            .get(hyper::header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !service.hosts.contains(&host) {
            return Some(format!(
                "the request names the host `{}`, not this service (DNS rebinding?)",
                crate::escape::escape(&host)
            ));
        }
    }
    if let Some(token) = &service.options.token
        && !crate::gateway::http::authorized(req, token)
    {
        return Some("unauthorized: the request has no valid `Authorization: Bearer TOKEN`".into());
    }
    let length = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if length.is_some_and(|n| n > MAX_EVENT_BYTES) {
        return Some(too_large());
    }
    None
}

fn too_large() -> String {
    format!(
        "the event (the request's body) is larger than {} MiB",
        MAX_EVENT_BYTES / (1024 * 1024)
    )
}

/// Reads the body, at most [`MAX_EVENT_BYTES`], by `deadline`.
async fn body(
    req: hyper::Request<Incoming>,
    deadline: tokio::time::Instant,
) -> Result<Vec<u8>, String> {
    let limit = usize::try_from(MAX_EVENT_BYTES).unwrap_or(usize::MAX);
    let collected =
        tokio::time::timeout_at(deadline, Limited::new(req.into_body(), limit).collect()).await;
    match collected {
        Err(_) => Err(format!(
            "the event did not arrive within {} s",
            READ_TIMEOUT.as_secs()
        )),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(format!("cannot read the event (the request's body): {e}")),
        Ok(Ok(c)) => Ok(c.to_bytes().to_vec()),
    }
}

/// Answers one request.
async fn handle(
    service: Arc<Service>,
    req: hyper::Request<Incoming>,
    arrived: tokio::time::Instant,
) -> hyper::Response<Full<Bytes>> {
    let started = Instant::now();
    let Some(agent) = req
        .uri()
        .path()
        .strip_prefix(PREFIX)
        .and_then(|name| Agent::ALL.into_iter().find(|a| a.as_str() == name))
    else {
        return not_found();
    };
    let headers = req.headers();
    let form = if headers
        .get(ANSWER_HEADER)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"process"))
    {
        Form::Process
    } else {
        Form::Native
    };
    let asker = Asker::Told(
        headers
            .get(HEADLESS_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_string()),
    );
    let input = match refused(&service, &req) {
        Some(why) => Err(why),
        None => body(req, arrived + READ_TIMEOUT).await,
    };
    let answer = service.decide(agent, input, &asker, started);
    respond(agent, form, &answer)
}

/// Runs the service until SIGINT or SIGTERM: exit 0 on a clean stop, 2 when
/// it could not start.
#[must_use]
pub fn run(options: Options) -> u8 {
    if let Err(e) = check(&options) {
        crate::output::error(&e);
        return EXIT_ERROR;
    }
    // A panic is answered in the agent's blocking form, scrubbed; the default
    // hook would print its message (which may quote input) raw.
    std::panic::set_hook(Box::new(|_| {}));
    let runtime = match super::runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let result = runtime.block_on(serve(options));
    runtime.shutdown_timeout(Duration::from_millis(500));
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::output::error(&e);
            EXIT_ERROR
        }
    }
}

async fn serve(options: Options) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on `{}`: {e}", options.listen))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let opts = options.clone();
    let loaded = tokio::task::spawn_blocking(move || Loaded::load(&opts))
        .await
        .map_err(|e| format!("cannot load the policy: {e}"))?;
    let port = bound.port();
    let hosts = if bound.ip().is_loopback() {
        vec![
            format!("{}:{port}", crate::gateway::http::host_text(bound)),
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ]
    } else {
        Vec::new()
    };
    let service = Arc::new(Service {
        remote: Mutex::new(crate::gateway::log_writer::Sink::new(loaded.remote())),
        loaded: RwLock::new(Arc::new(loaded)),
        options,
        hosts,
        shutdown: CancellationToken::new(),
    });
    let now = service.loaded();
    match (&now.origin.source, now.error()) {
        (Ok(crate::cli::Source::Builtin), None) => {
            crate::output::stderr(&format!("note: {}\n", crate::builtin::NOTICE));
        }
        (_, Some(why)) => service.note(&format!(
            "every call is blocked until the policy loads: {why}"
        )),
        _ => {}
    }
    if let Some(b) = &now.origin.bundle {
        crate::output::stderr(&format!(
            "zero-policy serve: bundle `{}` is in force\n",
            b.bundle.version()
        ));
    }
    drop(now);
    watch(&service);
    crate::output::stderr(&format!(
        "zero-policy serve: answering hook events on http://{}:{port}{PREFIX}AGENT\n",
        crate::gateway::http::host_text(bound)
    ));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let signal = crate::gateway::signalled();
    tokio::pin!(signal);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => p,
            () = &mut signal => break,
        };
        let Ok(permit) = permit else {
            break;
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut signal => break,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = Arc::clone(&service);
        tokio::spawn(async move {
            let shutdown = service.shutdown.clone();
            let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let service = Arc::clone(&service);
                let arrived = tokio::time::Instant::now();
                async move { Ok::<_, Infallible>(handle(service, req, arrived).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(2), conn).await;
                }
                () = tokio::time::sleep(MAX_CONNECTION_LIFE) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(READ_TIMEOUT + Duration::from_secs(2), conn).await;
                }
            }
            drop(permit);
        });
    }
    // Stop: no new connection; those open finish their request (at most
    // the read timeout and the decision), then every slot is back.
    service.shutdown.cancel();
    let all = u32::try_from(MAX_CONNECTIONS).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(
        READ_TIMEOUT + Duration::from_secs(2),
        slots.acquire_many(all),
    )
    .await;
    lock(&service.remote).flush(Duration::from_millis(300));
    crate::output::stderr("zero-policy serve: stopped\n");
    Ok(())
}

/// Polls the policy's files, as the gateway does, and reloads on a change.
fn watch(service: &Arc<Service>) {
    let service = Arc::clone(service);
    tokio::spawn(async move {
        let watched = service.loaded().watched(&service.options);
        let mut seen = crate::gateway::reload::fingerprint_of(&watched);
        let url = match service
            .options
            .bundle
            .source(!service.options.paths.is_empty())
        {
            Some(Ok(b)) if b.url().is_some() => Some(b),
            _ => None,
        };
        let mut next_fetch = url.as_ref().map(|b| tokio::time::Instant::now() + b.poll);
        loop {
            tokio::select! {
                () = tokio::time::sleep(crate::gateway::reload::POLL_INTERVAL) => {}
                () = service.shutdown.cancelled() => return,
            }
            if let (Some(b), Some(at)) = (&url, next_fetch)
                && tokio::time::Instant::now() >= at
                && let Some(root) = crate::bundle::source::cache_root()
            {
                next_fetch = Some(at + b.poll);
                let b = b.clone();
                match tokio::task::spawn_blocking(move || b.refresh(&root)).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(why)) => service.note(&format!("kept the bundle in force: {why}")),
                    Err(e) => {
                        service.note(&format!("kept the bundle in force: the fetch failed: {e}"))
                    }
                }
            }
            let watched = service.loaded().watched(&service.options);
            let now = crate::gateway::reload::fingerprint_of(&watched);
            if now == seen {
                continue;
            }
            seen = now;
            service.reload().await;
        }
    });
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn options(addr: &str, token: Option<&str>) -> Options {
        Options {
            listen: addr.parse().unwrap(),
            token: token.map(str::to_string),
            paths: Vec::new(),
            bundle: BundleArgs::default(),
        }
    }

    #[test]
    fn a_public_address_needs_a_token() {
        assert!(check(&options("127.0.0.1:8080", None)).is_ok());
        assert!(check(&options("[::1]:8080", None)).is_ok());
        let e = check(&options("0.0.0.0:8080", None)).unwrap_err();
        assert!(e.contains("--token-env"), "{e}");
        assert!(check(&options("0.0.0.0:8080", Some("s3cret"))).is_ok());
    }

    #[test]
    fn the_blocking_form_of_every_agent_is_a_json_deny_over_http() {
        for agent in Agent::ALL {
            let blocked = agent.blocked("zero-policy: the call is blocked: because");
            let body: serde_json::Value = serde_json::from_str(&native(agent, &blocked)).unwrap();
            let text = body.to_string();
            assert!(text.contains("deny"), "{agent:?}: {text}");
            assert!(
                text.contains("the call is blocked: because"),
                "{agent:?}: {text}"
            );
            assert!(!text.contains("allow"), "{agent:?}: {text}");
        }
        // Codex and Copilot allow by saying nothing: an empty JSON object.
        assert_eq!(native(Agent::Copilot, &hooks::Answer::silent()), "{}");
    }
}
