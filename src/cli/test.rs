//! `zero-policy test`: run the policy's tests and rule examples.

use crate::cli::{EXIT_FAIL, EXIT_OK, Format, Paths, load_registry, with_servers};
use crate::output;
use crate::testing;

const EXAMPLES: &str =
    "Examples:\n\n  zero-policy test\n\n  zero-policy test --coverage --min-coverage 100";

/// Run every `tests:` case and every rule example through the dispatch path.
///
/// Ends with the line `N passed, M failed`. Exit 0 when all pass, 1 on a
/// failure (or coverage below `--min-coverage`), 2 when it could not run.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// List the rules that no test or example matched.
    #[arg(long)]
    pub coverage: bool,
    /// Fail when fewer than this percent of rules are matched by some test or example.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub min_coverage: Option<u8>,
    /// Connect to the declared MCP servers first, so cases calling their tools run too.
    #[arg(long)]
    pub connect: bool,
    /// The files to read.
    #[command(flatten)]
    pub paths: Paths,
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let (policy, mut registry) = match load_registry(&args.paths, crate::loader::Purpose::Check) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let report = match with_servers(&mut registry, args.connect, |registry, _| {
        testing::run(&policy, registry)
    }) {
        Ok(r) => r,
        Err(code) => return code,
    };
    match args.format {
        Format::Human => output::test_human(&report, args.coverage || args.min_coverage.is_some()),
        Format::Json => output::test_json(&report),
    }
    let below = args
        .min_coverage
        .is_some_and(|min| report.coverage() + 1e-9 < f64::from(min));
    if below && args.format == Format::Human {
        output::error(&format!(
            "rule coverage {:.1}% is below --min-coverage {}%",
            report.coverage(),
            args.min_coverage.unwrap_or(0)
        ));
    }
    if report.failed > 0 || below {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}
