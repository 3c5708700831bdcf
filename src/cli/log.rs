//! `zero-policy log verify FILE`: checks a hash-chained decision log.

use std::path::PathBuf;

use crate::cli::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, Format};
use crate::log::chain;
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
