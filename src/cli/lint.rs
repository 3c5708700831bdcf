//! `zero-policy lint`: every check, in the format CI wants.

use crate::cli::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, Paths, load_files};
use crate::diagnostic::{self, Code, Severity};
use crate::output;
use crate::registry::Registry;

const EXAMPLES: &str = "Examples:\n\n  zero-policy lint\n\n  zero-policy lint --format github --deny-warnings policies/ manifests/\n\n  zero-policy lint --explain relax-on-deny";

/// Load every file, run every check, print diagnostics.
///
/// Exit 0 when there is no error (warnings allowed), 1 on errors (or on
/// warnings with `--deny-warnings`), 2 when it could not run.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: LintFormat,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Also say how each expression is evaluated: planned, or by the `cel` crate and why.
    #[arg(long)]
    pub verbose: bool,
    /// Print what a diagnostic code means and how to fix it, then exit.
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// The files to read.
    #[command(flatten)]
    pub paths: Paths,
}

/// Output formats of `lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    /// miette reports with labels on the exact span, and a summary line.
    Human,
    /// One JSON document listing every diagnostic.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…`).
    Github,
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    if let Some(code) = &args.explain {
        return match Code::parse(code) {
            Some(c) => {
                output::stdout(&format!(
                    "{} ({}): {}\n",
                    c.as_str(),
                    c.severity(),
                    c.description()
                ));
                EXIT_OK
            }
            None => {
                output::error(&format!(
                    "unknown code `{code}`; the codes are listed in docs/diagnostics.md"
                ));
                EXIT_ERROR
            }
        };
    }
    let loaded = match load_files(&args.paths, crate::loader::Purpose::Check) {
        Ok(l) => l,
        Err(e) => {
            // The files could not be read: said on stderr, and in the format asked
            // for on stdout, so a CI reading JSON or SARIF sees it too; exit 2.
            let diags = [e.to_diagnostic()];
            output::error(&e.to_string());
            match args.format {
                LintFormat::Human => {}
                LintFormat::Json => output::diagnostics_json(&diags),
                LintFormat::Sarif => output::diagnostics_sarif(&diags),
                LintFormat::Github => output::diagnostics_github(&diags),
            }
            return EXIT_ERROR;
        }
    };
    let mut diags = loaded.diagnostics;
    if let Some(policy) = &loaded.policy {
        match Registry::new(policy) {
            Ok(registry) => diags.extend(crate::lint::check(policy, &registry)),
            Err(e) => {
                output::error(&e.to_string());
                return EXIT_ERROR;
            }
        }
    }
    diagnostic::sort(&mut diags);
    let unpinned = loaded
        .policy
        .as_ref()
        .filter(|p| !p.servers.is_empty())
        .map(|_| crate::cli::serve::policy_source(&args.paths).lock_path())
        .filter(|lock| !lock.exists());
    match args.format {
        LintFormat::Human => {
            if let Some(lock) = unpinned {
                // Not a diagnostic: nothing in the files is wrong, and a lock is
                // written by `pin` against live servers, which lint never contacts.
                output::stderr(&format!(
                    "warning: no `{}`: pinning is off, so `serve` does not catch an MCP server that changes a tool's definition; run `zero-policy pin`\n",
                    lock.display()
                ));
            }
            output::diagnostics_human(&diags);
            if let Some(policy) = &loaded.policy {
                let rules: Vec<_> = policy.all_rules().collect();
                let fallback: Vec<_> = rules
                    .iter()
                    .filter_map(|r| r.when.not_planned().map(|why| (r, why)))
                    .collect();
                if args.verbose {
                    for (r, why) in &fallback {
                        output::stderr(&format!(
                            "note: rule `{}` ({}:{}) is evaluated by the cel crate, not planned: {why}\n",
                            r.id,
                            r.origin.file.name,
                            r.origin.line()
                        ));
                    }
                    output::stderr(&format!(
                        "{} of {} rules planned, {} evaluated by the cel crate\n",
                        rules.len() - fallback.len(),
                        rules.len(),
                        fallback.len()
                    ));
                }
            }
            output::stderr(&format!("{}\n", diagnostic::summary(&diags)));
        }
        LintFormat::Json => output::diagnostics_json(&diags),
        LintFormat::Sarif => output::diagnostics_sarif(&diags),
        LintFormat::Github => output::diagnostics_github(&diags),
    }
    let errors = diags.iter().any(|d| d.severity == Severity::Error);
    let warnings = diags.iter().any(|d| d.severity == Severity::Warning);
    if errors || (args.deny_warnings && warnings) {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}
