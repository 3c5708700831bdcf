//! The command line: one file per subcommand, each with its `Args` and `run`.

pub mod bundle;
pub mod completions;
#[cfg(unix)]
pub mod confine;
pub mod doctor;
pub mod explain;
pub mod hook;
pub mod hook_service;
pub mod hook_via;
pub mod import;
pub mod init;
pub mod lint;
pub mod log;
pub mod pin;
pub mod run;
pub mod schema;
pub mod serve;
pub mod test;
pub mod tools;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::loader::{self, Loaded};
use crate::output;
use crate::policy::Policy;
use crate::registry::Registry;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the check failed (lint errors, a failing test).
pub const EXIT_FAIL: u8 = 1;
/// Exit code: could not run (bad path, unreadable file, bad arguments, load errors for explain).
pub const EXIT_ERROR: u8 = 2;

/// A policy-and-manifest engine for coding-agent tool calls.
///
/// Manifests (YAML) describe an agent's tools and MCP servers; policies (YAML)
/// hold CEL rules that may only tighten (`rules:`) or only move prompt to allow
/// (`relax:`). With no paths, each command reads `policies/` and `manifests/`
/// under the current folder, or the built-in default where neither exists.
/// `hook` puts the policy in front of Claude Code, Codex, Gemini CLI, Cursor
/// and Copilot CLI; `init` installs it.
#[derive(Debug, Parser)]
#[command(name = "zero-policy", version, about, long_about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load every file, run every check, print diagnostics (exit 1 on errors).
    ///
    /// Exit 0 when there is no error (warnings allowed), 1 on errors (or on
    /// warnings with `--deny-warnings`), 2 when it could not run. Every code is
    /// described by `--explain CODE` and in docs/diagnostics.md.
    Lint(lint::Args),
    /// Show how one call is decided, step by step.
    ///
    /// Give the call as `--tool NAME --args JSON`, or as a JSON file
    /// `{"tool": ..., "args": {...}, "session": {...}}` with `--call FILE` (`-`
    /// reads standard input). `--session` settings apply on top. Prints every
    /// step of the dispatch path, the matched rules with file:line, and the
    /// decision; secrets in the echoed arguments are scrubbed. Exit 0 when
    /// decided (whatever the decision), 2 when it could not run.
    Explain(explain::Args),
    /// Run every `tests:` case and every rule example (ends with `N passed, M failed`).
    ///
    /// Exit 0 when all pass, 1 on a failure (or coverage below
    /// `--min-coverage`), 2 when it could not run. Cases that call MCP tools
    /// need `--connect`.
    Test(test::Args),
    /// List the registry: every tool with its source, scope, side effect and permission.
    Tools(tools::Args),
    /// Print the JSON Schema of the document format.
    Schema(schema::Args),
    /// Answer one agent hook event on stdin, in the agent's protocol (exit per agent).
    ///
    /// Agents run it before each tool call; `zero-policy init AGENT` installs it. It reads one
    /// pre-tool event on stdin (at most 4 MiB), decides the call through the dispatch path,
    /// prints the answer the agent expects, and appends one JSON line to the decision log
    /// (`settings.log.path`, default ~/.local/state/zero-policy/decisions.jsonl).
    ///
    /// The policy: the PATHs given; else $ZERO_POLICY_PATH (paths separated by `:`); else
    /// ~/.config/zero-policy/ if it exists; else the built-in default. The project's own
    /// policies/ folder is not read: the agent can write there. Each file's parsed YAML is
    /// kept in ~/.cache/zero-policy/ for the next call (ZERO_POLICY_CACHE=off turns that off;
    /// ZERO_POLICY_CACHE=DIR moves it); no call may write there.
    ///
    /// Answers:
    ///   claude-code  permissionDecision allow | ask | deny
    ///   codex        nothing to allow; a deny; a prompt follows `on_prompt`
    ///   gemini-cli   decision allow | ask | deny
    ///   cursor       permission allow | ask | deny (ask on shell and MCP events only,
    ///                elsewhere a prompt follows `on_prompt`)
    ///   copilot      nothing to allow; a deny; a prompt follows `on_prompt`
    ///
    /// A tool that no manifest names is answered by `settings.hooks.unknown_tool` (default
    /// prompt); any other rejected call is denied.
    ///
    /// Fails closed: bad or oversized input, another kind of event, a policy that does not
    /// load, any internal error block the call in the agent's blocking form: exit 2 with the
    /// reason on stderr (claude-code, codex, gemini-cli), exit 2 and a JSON deny (cursor),
    /// exit 0 and a JSON deny (copilot, which ignores failing hooks). Secrets are scrubbed
    /// from the answer, stderr and the log.
    #[command(verbatim_doc_comment)]
    Hook(hook::Args),
    /// Install the hook in an agent's settings file (exit 2 if that file is not JSON).
    ///
    /// Adds `zero-policy hook AGENT` to the agent's own settings file, keeping every other
    /// key and the file's indentation, and prints the change as a diff:
    ///   claude-code  .claude/settings.json           PreToolUse
    ///   codex        .codex/hooks.json               PreToolUse
    ///   gemini-cli   .gemini/settings.json           BeforeTool
    ///   cursor       .cursor/hooks.json              preToolUse, beforeShellExecution,
    ///                                                beforeMCPExecution, beforeReadFile
    ///   copilot      .github/hooks/zero-policy.json  preToolUse
    ///
    /// `--project` (the default) writes under the current folder, `--user` under the home
    /// folder (Codex: $CODEX_HOME if set; Copilot: ~/.copilot/hooks/zero-policy.json). The
    /// command written names this binary by its absolute path. Running it again changes
    /// nothing, or only brings that path up to date. A file that is not valid JSON is left
    /// as it is and is an error (exit 2).
    #[command(verbatim_doc_comment)]
    Init(init::Args),
    /// Serve MCP over stdio (or `--listen ADDR`) in front of the manifests' MCP servers.
    ///
    /// An MCP client (Claude Code, Cursor, the MCP Inspector) connects to this gateway
    /// instead of to the servers. Every `tools/call` goes through the dispatch path:
    ///   allow   forwarded to the upstream server; the result is scrubbed of secrets
    ///   prompt  the client is asked to show an approval form (MCP elicitation), if it
    ///           declared the capability; else `settings.on_prompt` decides
    ///   deny    a tool error (`isError: true`) with the reason
    /// Deny tools are never listed; past `defer_threshold` deferred tools are found
    /// with `tool_search`. Each call appends one line to the decision log.
    ///
    /// Servers connect in the background (their tools appear with
    /// `notifications/tools/list_changed`); a server that dies or hangs fails only its
    /// own tools and is reconnected. Changed policy files are reloaded; a file that
    /// no longer loads keeps the last good policy. With `zero-policy.lock` (written by
    /// `zero-policy pin`) a tool whose definition changed is decided
    /// `settings.gateway.pinning` (default prompt).
    ///
    /// Stops with exit 0 when standard input ends (stdio), on SIGINT or SIGTERM,
    /// after closing every upstream and reaping every child process.
    #[command(verbatim_doc_comment)]
    Serve(serve::Args),
    /// Pin each upstream MCP tool's definition into `zero-policy.lock` (exit 2 if a server failed).
    Pin(pin::Args),
    /// Turn Claude Code or Gemini CLI permission rules into a policy with tests.
    ///
    /// Claude Code: give every settings file whose permissions apply (user
    /// ~/.claude/settings.json, project .claude/settings.json, local
    /// .claude/settings.local.json, managed-settings.json); their lists are merged.
    /// Gemini CLI: give the policy files (~/.gemini/policies/*.toml,
    /// .gemini/policies/*.toml, /etc/gemini-cli/policies/*.toml); each file's tier
    /// comes from where it is.
    ///
    /// Deny and ask rules become sandbox rules over the call's effects (every tool,
    /// every wrapper, every part of a compound command); allow rules become relax
    /// rules that apply only when every command of the call matches and the call is
    /// exactly known. Every rule carries examples drawn from it, decided through the
    /// dispatch path against the manifests before anything is written.
    ///
    /// Writes AGENT.yaml and AGENT.test.yaml into --out DIR; without --out, prints the
    /// policy on stdout and the report on stderr (with --format json, only the report,
    /// as one JSON document). The report lists every rule not translated exactly, with
    /// the reason. Then: zero-policy lint DIR manifests && zero-policy test DIR manifests
    ///
    /// Exit 0 when every rule was translated exactly, 1 when some rule was not, 2 when
    /// it could not run (a file that cannot be read or parsed, named with line and
    /// column).
    #[command(verbatim_doc_comment)]
    Import(import::Args),
    /// Check the policy, confinement on this machine and each agent's hook (exit 1 on a failure).
    Doctor(doctor::Args),
    /// Decide a shell call through the dispatch path, then run it confined by the kernel.
    ///
    /// The call is decided as the shared shell tool `bash` decides it (every command, every
    /// read, write and fetch it makes). `allow` runs it inside a sandbox built from the
    /// policy's `settings.enforce` and the call's own effects: reads only where the policy
    /// allows (credentials hidden), writes only where the call writes (and temp folders;
    /// the agents' settings, git hooks and shell start-up files read-only), programs only
    /// from the system and the workspace, no network unless the call fetches, process
    /// limits, no new privileges. What the prediction missed fails in the kernel instead
    /// of happening. `prompt` asks on the terminal, else follows `settings.on_prompt`.
    ///
    /// Standard streams pass through; the exit status is the program's (128+N for signal
    /// N); 126 when denied or rejected; 125 when it cannot be confined. See
    /// docs/enforcement.md.
    #[command(verbatim_doc_comment)]
    Run(run::Args),
    /// Build, sign and verify signed policy bundles (docs/fleet.md).
    Bundle(bundle::Args),
    /// Check a hash-chained decision log (`log verify FILE`).
    Log(log::Args),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) or the man pages.
    ///
    /// Install, for example:
    ///   bash  zero-policy completions bash > ~/.local/share/bash-completion/completions/zero-policy
    ///   zsh   zero-policy completions zsh > ~/.zfunc/_zero-policy   (with ~/.zfunc in $fpath)
    ///   fish  zero-policy completions fish > ~/.config/fish/completions/zero-policy.fish
    ///   man   zero-policy completions --man-dir ~/.local/share/man/man1
    #[command(verbatim_doc_comment)]
    Completions(completions::Args),
    /// Confine this process to the envelope in `ZERO_POLICY_ENVELOPE`, then exec PROGRAM.
    #[cfg(unix)]
    #[command(hide = true, name = "__confine")]
    Confine(confine::Args),
}

/// Output format for `explain`, `test`, `tools`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text.
    Human,
    /// One JSON document.
    Json,
}

/// The files to read.
#[derive(Debug, Clone, clap::Args)]
pub struct Paths {
    /// Policy and manifest files or folders (searched for *.yaml, *.yml);
    /// default: `policies/` and `manifests/` here, else the built-in default.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Where a signed policy bundle comes from (`hook`, `serve`, `run`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BundleArgs {
    /// Take the policy from this signed bundle instead of files: a file (its
    /// signature is `FILE.minisig`) or an `https://` URL (its signature at
    /// `URL.minisig`; fetched into the cache, then asked for again every
    /// `ZERO_POLICY_BUNDLE_POLL` seconds, default 300, in the background).
    /// Needs `--key`. A bundle that does not verify, or was signed before the
    /// one in force, is refused and the last good one kept; with none, every
    /// call is blocked.
    #[arg(long, value_name = "FILE|URL", env = "ZERO_POLICY_BUNDLE")]
    pub bundle: Option<PathBuf>,
    /// The minisign public key the bundle must be signed with: a `.pub`
    /// file, or the key itself (`RW…`).
    #[arg(long, value_name = "PUBKEY", env = "ZERO_POLICY_BUNDLE_KEY")]
    pub key: Option<String>,
    /// For a bundle at an `https://` URL: a PEM file of CA certificates to
    /// trust besides the system's.
    #[arg(long, value_name = "PEM", env = "ZERO_POLICY_BUNDLE_CA")]
    pub bundle_ca: Option<PathBuf>,
}

impl BundleArgs {
    /// The bundle these name, if any; an error when policy paths are given
    /// too (`paths_given`) or the key is missing.
    #[must_use]
    pub fn source(
        &self,
        paths_given: bool,
    ) -> Option<Result<crate::bundle::source::BundleSource, String>> {
        let location = self.bundle.clone().filter(|b| !b.as_os_str().is_empty())?;
        if paths_given {
            return Some(Err(
                "both `--bundle` and policy paths are given; give one".into()
            ));
        }
        let Some(key) = self.key.clone().filter(|k| !k.trim().is_empty()) else {
            return Some(Err(format!(
                "the bundle `{}` has no key to verify it with; give `--key` or ZERO_POLICY_BUNDLE_KEY",
                location.display()
            )));
        };
        let mut source = crate::bundle::source::BundleSource::new(location, key);
        source.ca = self.bundle_ca.clone().filter(|c| !c.as_os_str().is_empty());
        Some(Ok(source))
    }
}

/// Where a command's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Files and folders on disk.
    Paths(Vec<PathBuf>),
    /// The shipped `policies/` and `manifests/`, embedded in the binary.
    Builtin,
    /// A signed bundle, already verified ([`crate::bundle::source`]).
    Bundle {
        /// The bundle's files.
        bundle: Box<crate::bundle::Bundle>,
        /// The bundle file, its signature and its cache, for the guard.
        places: Vec<PathBuf>,
    },
}

impl Source {
    /// Where this policy comes from, or could come from on the next call
    /// ([`loader::policy_places`]).
    #[must_use]
    pub fn places(&self) -> Vec<PathBuf> {
        match self {
            Source::Paths(paths) => loader::policy_places(paths),
            Source::Builtin => loader::policy_places(&[]),
            Source::Bundle { places, .. } => places.clone(),
        }
    }

    /// Reads and loads the files for `purpose`.
    ///
    /// # Errors
    /// A path does not exist or cannot be read; problems *in* the files are diagnostics.
    pub fn load(&self, purpose: loader::Purpose) -> Result<Loaded, loader::LoadError> {
        match self {
            Source::Paths(paths) => loader::load_paths_for(paths, purpose),
            Source::Builtin => Ok(loader::load_sources_for(crate::builtin::sources(), purpose)),
            Source::Bundle { bundle, .. } => {
                Ok(loader::load_sources_for(bundle.sources(), purpose))
            }
        }
    }

    /// As [`Source::load`], with the document cache the environment names
    /// ([`loader::cache`]), for a process that decides one call.
    ///
    /// # Errors
    /// As [`Source::load`].
    pub fn load_cached(&self, purpose: loader::Purpose) -> Result<Loaded, loader::LoadError> {
        let Some(cache) = loader::cache::Cache::from_env() else {
            return self.load(purpose);
        };
        match self {
            Source::Paths(paths) => loader::load_paths_cached(paths, purpose, &cache),
            Source::Builtin => Ok(loader::load_sources_cached(
                crate::builtin::sources(),
                purpose,
                &cache,
            )),
            Source::Bundle { bundle, .. } => Ok(loader::load_sources_cached(
                bundle.sources(),
                purpose,
                &cache,
            )),
        }
    }
}

impl Paths {
    /// The paths given; else the default folders that exist here; else the built-in default.
    #[must_use]
    pub fn resolve(&self) -> Source {
        if !self.paths.is_empty() {
            return Source::Paths(self.paths.clone());
        }
        let defaults: Vec<PathBuf> = ["policies", "manifests"]
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        if defaults.is_empty() {
            Source::Builtin
        } else {
            Source::Paths(defaults)
        }
    }
}

/// Loads the files; on a problem that stops the command, prints it and returns the exit code.
/// Falling back to the built-in default is said on stderr.
///
/// # Errors
/// The exit code to return: the paths could not be read.
pub fn load(paths: &Paths, purpose: loader::Purpose) -> Result<Loaded, u8> {
    load_files(paths, purpose).map_err(|e| {
        output::error(&e.to_string());
        EXIT_ERROR
    })
}

/// Loads the files, saying on stderr when the built-in default is used; a problem
/// that stops the load is returned, not printed.
///
/// # Errors
/// The paths could not be read.
pub fn load_files(paths: &Paths, purpose: loader::Purpose) -> Result<Loaded, loader::LoadError> {
    let source = paths.resolve();
    if source == Source::Builtin {
        output::stderr(&format!("note: {}\n", crate::builtin::NOTICE));
    }
    if purpose.decides() {
        source.load_cached(purpose)
    } else {
        source.load(purpose)
    }
}

/// Loads and builds a registry; on load errors prints the diagnostics and returns 2.
///
/// # Errors
/// The exit code to return.
pub fn load_registry(paths: &Paths, purpose: loader::Purpose) -> Result<(Policy, Registry), u8> {
    let loaded = load(paths, purpose)?;
    let Some(policy) = loaded.policy else {
        output::diagnostics_human(&loaded.diagnostics);
        output::error("the files have errors; fix them first (see `zero-policy lint`)");
        return Err(EXIT_ERROR);
    };
    let lock_path = match paths.resolve() {
        Source::Paths(p) => loader::lock::lock_path(&p),
        Source::Builtin | Source::Bundle { .. } => loader::lock::lock_path(&[]),
    };
    let lock = match loader::lock::Lock::read(&lock_path) {
        Ok(l) => l.map(std::sync::Arc::new),
        Err(e) => {
            output::error(&e);
            return Err(EXIT_ERROR);
        }
    };
    match Registry::new(&policy) {
        Ok(mut r) => {
            r.set_lock(lock);
            r.guard(paths.resolve().places());
            Ok((policy, r))
        }
        Err(e) => {
            output::error(&e.to_string());
            Err(EXIT_ERROR)
        }
    }
}

/// Connects to the declared MCP servers (when `connect`), runs `f` on the
/// registry, then closes every connection and reaps every server process.
///
/// # Errors
/// The async runtime could not start (exit code 2, message printed).
pub fn with_servers<T>(
    registry: &mut Registry,
    connect: bool,
    f: impl FnOnce(&Registry, Option<&tokio::runtime::Runtime>) -> T,
) -> Result<T, u8> {
    if !connect || registry.servers().is_empty() {
        return Ok(f(registry, None));
    }
    let runtime = runtime()?;
    let progress = output::connect_progress();
    let connections = runtime.block_on(crate::mcp::register::register_servers(registry, &progress));
    let result = f(registry, Some(&runtime));
    runtime.block_on(connections.close());
    Ok(result)
}

/// The async runtime the commands that talk to MCP servers run on.
///
/// # Errors
/// It could not start: exit code 2, the message printed.
pub fn runtime() -> Result<tokio::runtime::Runtime, u8> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            output::error(&format!("cannot start the async runtime: {e}"));
            EXIT_ERROR
        })
}
