//! `zero-policy pin`: write `zero-policy.lock`, the approved upstream tool definitions.

use crate::cli::{EXIT_ERROR, EXIT_OK, Format, Paths};
use crate::gateway::{self, pin::Change};
use crate::output;

const EXAMPLES: &str = r#"Examples:

  zero-policy pin ~/team-policy/        # writes ~/team-policy/zero-policy.lock
  git diff ~/team-policy/zero-policy.lock

Review what changed before you commit the lock: while it exists, `serve` decides a tool
whose definition differs from it (or that it does not list) by `settings.gateway.pinning`."#;

/// Connect to the MCP servers and pin each tool's definition into `zero-policy.lock`.
///
/// The lock is written in the first folder given, else beside the first file
/// (with no paths: `policies/`, else the current folder). Each tool's name,
/// description, input schema and annotations are hashed (SHA-256 over canonical
/// JSON). A server that does not answer keeps its earlier entries, and the
/// exit code is 2.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// The files to read.
    #[command(flatten)]
    pub paths: Paths,
}

/// Runs the command: 0 when every server was pinned, 2 otherwise.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let source = crate::cli::serve::policy_source(&args.paths);
    let policy = match gateway::load_policy(&source) {
        Ok(p) => p,
        Err(e) => {
            output::error(&format!("{e}; run `zero-policy lint` on it"));
            return EXIT_ERROR;
        }
    };
    if policy.servers.is_empty() {
        output::error("no MCP servers are declared: there is nothing to pin");
        return EXIT_ERROR;
    }
    let path = source.lock_path();
    let runtime = match super::runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let report = match runtime.block_on(gateway::pin::pin(&policy, &path)) {
        Ok(r) => r,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    let tools: usize = report.lock.servers.values().map(|t| t.len()).sum();
    match args.format {
        Format::Human => {
            let mut s = String::new();
            for c in &report.changes {
                s.push_str(&match c {
                    Change::Added(sv, t) => format!("+ {sv}/{t}  pinned\n"),
                    Change::Changed(sv, t) => format!("~ {sv}/{t}  definition changed\n"),
                    Change::Removed(sv, t) => format!("- {sv}/{t}  no longer listed\n"),
                });
            }
            s.push_str(&format!(
                "{} {tools} tool{} of {} server{} in {}\n",
                if report.changes.is_empty() {
                    "unchanged:"
                } else {
                    "pinned"
                },
                if tools == 1 { "" } else { "s" },
                report.lock.servers.len(),
                if report.lock.servers.len() == 1 {
                    ""
                } else {
                    "s"
                },
                path.display()
            ));
            output::stdout(&s);
        }
        Format::Json => {
            let changes: Vec<serde_json::Value> = report
                .changes
                .iter()
                .map(|c| {
                    let (kind, sv, t) = match c {
                        Change::Added(s, t) => ("added", s, t),
                        Change::Changed(s, t) => ("changed", s, t),
                        Change::Removed(s, t) => ("removed", s, t),
                    };
                    serde_json::json!({"change": kind, "server": sv, "tool": t})
                })
                .collect();
            output::stdout(&format!(
                "{}\n",
                serde_json::json!({
                    "lock": path.display().to_string(),
                    "tools": tools,
                    "changes": changes,
                    "skipped_servers": report.skipped,
                })
            ));
        }
    }
    for sk in &report.skipped {
        output::stderr(&format!(
            "warning: server `{}` was not pinned ({}: {}); its earlier entries were kept\n",
            sk.server, sk.reason, sk.detail
        ));
    }
    if report.skipped.is_empty() {
        EXIT_OK
    } else {
        EXIT_ERROR
    }
}
