//! `zero-policy serve`: the MCP gateway (SPEC §8), in front of the manifests' servers.

use std::net::SocketAddr;

use crate::bundle::source::BundleSource;
use crate::cli::{BundleArgs, EXIT_ERROR, EXIT_OK, Paths, Source};
use crate::gateway::{self, Gateway, PolicySource, Transport, http::HttpOptions};
use crate::output;

const EXAMPLES: &str = r#"Examples:

  zero-policy serve ~/team-policy/                 # stdio, for an MCP client to launch
  claude mcp add zero-policy -- zero-policy serve ~/team-policy/
  zero-policy serve --listen 127.0.0.1:8931 ~/team-policy/   # http://127.0.0.1:8931/mcp
  MCP_TOKEN=$(openssl rand -hex 32) zero-policy serve --listen 0.0.0.0:8931 --token-env MCP_TOKEN
  zero-policy serve --hooks 127.0.0.1:8787        # hook events: POST /hooks/AGENT

Run `zero-policy pin` first so a changed upstream tool is caught; docs/gateway.md has the rest."#;

/// Serve MCP: every upstream tool call is decided by the policy.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Serve streamable HTTP on this address (endpoint `/mcp`) instead of stdio.
    /// A non-loopback address needs `--token-env`.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Answer agents' hook events over HTTP on this address instead of
    /// serving MCP: `POST /hooks/AGENT` with the agent's event, answered as
    /// `zero-policy hook AGENT` answers it (the policy as `hook` reads it).
    /// A non-loopback address needs a token.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["listen", "allow_origin"])]
    pub hooks: Option<SocketAddr>,
    /// With `--listen` or `--hooks`: the environment variable holding the
    /// bearer token every request must send (`Authorization: Bearer TOKEN`;
    /// else 401, or for `--hooks` the agent's blocking answer). `--hooks`
    /// reads `ZERO_POLICY_HOOK_TOKEN` when this is not given.
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
    /// With `--listen`: a browser origin allowed besides loopback ones
    /// (`https://app.example.com`); repeatable. Other origins get 403.
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allow_origin: Vec<String>,
    /// The signed bundle to take the policy from. It is checked again when it
    /// changes (a file) or is fetched again (a URL); with no good bundle, the
    /// gateway does not start.
    #[command(flatten)]
    pub bundle: BundleArgs,
    /// The files to read.
    #[command(flatten)]
    pub paths: Paths,
}

/// The gateway's policy source for the command's paths.
#[must_use]
pub fn policy_source(paths: &Paths) -> PolicySource {
    match paths.resolve() {
        Source::Paths(p) => PolicySource::Paths(p),
        Source::Builtin | Source::Bundle { .. } => PolicySource::Builtin,
    }
}

/// The bundle source `--bundle`/`--key` name, if any. `serve` polls a
/// bundle at a URL itself rather than in a process of its own.
fn bundle_source(args: &Args) -> Option<Result<BundleSource, String>> {
    args.bundle.source(!args.paths.paths.is_empty()).map(|r| {
        r.map(|mut b| {
            b.background_fetch = false;
            b
        })
    })
}

/// The token `--token-env` names, if given.
fn token(args: &Args) -> Result<Option<String>, String> {
    match &args.token_env {
        None => Ok(None),
        Some(name) => match std::env::var(name) {
            Ok(t) if !t.trim().is_empty() => Ok(Some(t.trim().to_string())),
            _ => Err(format!(
                "`--token-env {name}`: the variable `{name}` is not set or empty"
            )),
        },
    }
}

fn transport(args: &Args) -> Result<Transport, String> {
    let Some(listen) = args.listen else {
        if args.token_env.is_some() {
            return Err("`--token-env` needs `--listen ADDR` or `--hooks ADDR`".into());
        }
        return Ok(Transport::Stdio);
    };
    let token = token(args)?;
    let options = HttpOptions {
        listen,
        token,
        allow_origins: args.allow_origin.clone(),
    };
    gateway::http::check(&options)?;
    Ok(Transport::Http(options))
}

/// `serve --hooks ADDR`: the warm decision service for agent hooks.
fn hooks(args: &Args, listen: SocketAddr) -> u8 {
    let token = match token(args) {
        Ok(Some(t)) => Some(t),
        Ok(None) => std::env::var(crate::cli::hook_service::TOKEN_VAR)
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty()),
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    crate::cli::hook_service::run(crate::cli::hook_service::Options {
        listen,
        token,
        paths: args.paths.paths.clone(),
        bundle: args.bundle.clone(),
    })
}

/// Runs the command: exit 0 on a clean stop, 2 when it could not start.
#[must_use]
pub fn run(args: &Args) -> u8 {
    if let Some(listen) = args.hooks {
        return hooks(args, listen);
    }
    let (source, bundle) = match bundle_source(args) {
        None => (policy_source(&args.paths), None),
        Some(Ok(b)) => match gateway::load_bundle(&b) {
            Ok(from) => (PolicySource::Bundle(b), Some(from)),
            Err(e) => {
                output::error(&format!(
                    "{e}; no call can be decided, so the gateway does not start"
                ));
                return EXIT_ERROR;
            }
        },
        Some(Err(e)) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    if source == PolicySource::Builtin {
        output::stderr(&format!("note: {}\n", crate::builtin::NOTICE));
    }
    let transport = match transport(args) {
        Ok(t) => t,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    let (policy, version, note) = match bundle {
        Some(from) => (from.policy, Some(from.version), from.note),
        None => match gateway::load_policy(&source) {
            Ok(p) => (p, None, None),
            Err(e) => {
                output::error(&format!("{e}; run `zero-policy lint` on it"));
                return EXIT_ERROR;
            }
        },
    };
    let has_servers = !policy.servers.is_empty();
    let runtime = match super::runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let result = runtime.block_on(async {
        let gateway = Gateway::new(source.clone(), policy)?;
        if let Some(v) = &version {
            output::stderr(&format!("zero-policy serve: bundle `{v}` is in force\n"));
        }
        gateway.set_bundle(version);
        if let Some(note) = note {
            gateway.note(&note);
        }
        if has_servers && !gateway.has_lock() {
            output::stderr(&format!(
                "warning: no `{}`: pinning is off, so a server that changes a tool's definition is not caught; run `zero-policy pin` to write it\n",
                source.lock_path().display()
            ));
        }
        gateway::run(gateway, transport).await
    });
    // A blocking stdin read may still be pending; do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => {
            output::error(&e);
            EXIT_ERROR
        }
    }
}
