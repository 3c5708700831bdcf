//! `zero-policy tools`: the registry as a table or JSON.

use crate::cli::{EXIT_OK, Format, Paths, load_registry, with_servers};
use crate::output;

/// List every registered tool: name, source, scope, side effect, static permission, deferred.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Connect to the declared MCP servers, register their tools, and list
    /// skipped servers with their reasons.
    #[arg(long)]
    pub connect: bool,
    /// The files to read.
    #[command(flatten)]
    pub paths: Paths,
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let (_policy, mut registry) = match load_registry(&args.paths, crate::loader::Purpose::Check) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let shown = with_servers(&mut registry, args.connect, |registry, _| {
        match args.format {
            Format::Human => output::tools_human(registry),
            Format::Json => output::tools_json(registry),
        }
    });
    match shown {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}
