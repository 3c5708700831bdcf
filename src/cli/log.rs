//! `zero-policy log verify FILE`: checks a hash-chained decision log;
//! `zero-policy log diff FILE`: the decisions in force against the shadow
//! policy's.

use std::path::PathBuf;

use crate::cli::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, Format};
use crate::log::{chain, diff};
use crate::output;

/// Work with decision logs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub command: LogCommand,
}

/// The `log` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum LogCommand {
    /// Check a log written with `settings.log.chain: true`: report the first
    /// removed, reordered, edited or unchained line.
    ///
    /// Exit 0 when the chain is whole, 1 when it is broken (or no line is
    /// chained), 2 when the file cannot be read. Lines cut from the end of the
    /// file cannot be seen by a chain alone: send the log off the machine too.
    Verify(VerifyArgs),
    /// Compare the decisions in force with the shadow policy's
    /// (`settings.shadow`), line by line: counts by change (allow → deny …),
    /// then each call that changed with the rules that made the difference.
    ///
    /// Each line holds both decisions, made for the same call at the same
    /// time, so nothing is replayed. Exit 0 when no call changed, 1 when some
    /// did, 2 when the file cannot be read or no line has a shadow decision.
    Diff(DiffArgs),
}

/// `log diff`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  zero-policy log diff ~/.local/state/zero-policy/decisions.jsonl
  zero-policy log diff decisions.jsonl --format json | jq '.changes[] | select(.to == \"deny\")'")]
pub struct DiffArgs {
    /// The decision log (JSON lines), written with `settings.shadow`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

/// `log verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The decision log (JSON lines).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    match &args.command {
        LogCommand::Verify(v) => verify(v),
        LogCommand::Diff(d) => diff(d),
    }
}

fn diff(args: &DiffArgs) -> u8 {
    let text = match std::fs::read(&args.file) {
        Ok(t) => t,
        Err(e) => {
            output::error(&format!(
                "cannot read the decision log `{}`: {e}",
                args.file.display()
            ));
            return EXIT_ERROR;
        }
    };
    let report = diff::diff(&text);
    let name = args.file.display().to_string();
    for u in &report.unreadable {
        output::stderr(&format!(
            "warning: {}:{}:{}: skipped: {}\n",
            crate::escape::escape(&name),
            u.line,
            u.column,
            u.message
        ));
    }
    if report.compared == 0 {
        let why = match &report.first_shadow_error {
            Some(e) => format!(
                "the shadow policy could not decide any call: {}",
                crate::escape::escape(e)
            ),
            None => "no line has a shadow decision; set `settings.shadow` (docs/fleet.md)".into(),
        };
        output::error(&format!("{}: {why}", crate::escape::escape(&name)));
        return EXIT_ERROR;
    }
    match args.format {
        Format::Human => output::stdout(&output::log_diff_text(&name, &report)),
        Format::Json => output::log_diff_json(&name, &report),
    }
    if report.changes.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAIL
    }
}

fn verify(args: &VerifyArgs) -> u8 {
    let text = match std::fs::read(&args.file) {
        Ok(t) => t,
        Err(e) => {
            output::error(&format!(
                "cannot read the decision log `{}`: {e}",
                args.file.display()
            ));
            return EXIT_ERROR;
        }
    };
    let report = chain::verify(&text);
    let name = args.file.display().to_string();
    match args.format {
        Format::Human => output::stdout(&output::log_verify_text(&name, &report)),
        Format::Json => output::log_verify_json(&name, &report),
    }
    if report.intact() { EXIT_OK } else { EXIT_FAIL }
}
