//! `zero-policy import AGENT FILE…`: another agent's permission rules as a policy with tests.

use std::path::PathBuf;

use crate::cli::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, Format};
use crate::diagnostic::SourceFile;
use crate::import::{self, Import, ImportError};
use crate::output;

/// Whose rules to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code settings files (`permissions.allow`, `ask`, `deny`).
    ClaudeCode,
    /// Gemini CLI policy TOML files (`[[rule]]`).
    GeminiCli,
}

/// `import`'s arguments (the long help is on `Command::Import`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Whose files these are.
    #[arg(value_enum)]
    pub agent: Agent,
    /// The settings or policy files, in any order.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The folder to write the policy and its tests into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Manifests to check the examples against; default: the shipped ones.
    #[arg(long = "manifests", value_name = "PATH")]
    pub manifests: Vec<PathBuf>,
    /// Output format of the report.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

fn manifests(paths: &[PathBuf]) -> Result<Vec<SourceFile>, ImportError> {
    if paths.is_empty() {
        return Ok(crate::builtin::sources()
            .into_iter()
            .filter(|f| f.path.starts_with("manifests"))
            .collect());
    }
    let files =
        crate::loader::find_files(paths).map_err(|e| ImportError::Manifests(e.to_string()))?;
    files
        .iter()
        .map(|p| import::read_input(p).map(|text| SourceFile::new(p, text)))
        .collect()
}

/// Reads, translates and checks; the import before anything is written.
///
/// # Errors
/// A file cannot be read or parsed, or the manifests do not load.
pub fn build(args: &Args) -> Result<Import, ImportError> {
    let mut imported = match args.agent {
        Agent::ClaudeCode => import::claude_code::import(&args.files)?,
        Agent::GeminiCli => import::gemini_cli::import(&args.files)?,
    };
    imported.check(manifests(&args.manifests)?)?;
    Ok(imported)
}

fn report_json(imported: &Import, written: &[PathBuf]) -> serde_json::Value {
    serde_json::json!({
        "agent": imported.agent,
        "sources": imported.sources,
        "rules_read": imported.rules_read,
        "exact": imported.exact(),
        "written": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "rules": imported.rules.iter().map(|r| serde_json::json!({
            "id": r.id,
            "kind": r.action.decision(),
            "source": r.source,
            "examples": r.matches.len() + r.no_matches.len(),
        })).collect::<Vec<_>>(),
        "tests": imported.tests.len(),
        "findings": imported.findings.iter().map(|f| serde_json::json!({
            "kind": format!("{:?}", f.kind).to_lowercase(),
            "inexact": f.kind.inexact(),
            "file": f.file,
            "rule": f.rule,
            "reason": f.reason,
        })).collect::<Vec<_>>(),
    })
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    let imported = match build(args) {
        Ok(i) => i,
        Err(e) => {
            output::error(&e.to_string());
            return EXIT_ERROR;
        }
    };
    let written = match &args.out {
        Some(dir) => match imported.write(dir) {
            Ok(w) => w,
            Err(e) => {
                output::error(&e.to_string());
                return EXIT_ERROR;
            }
        },
        None => {
            if args.format == Format::Human {
                output::stdout(&imported.policy_yaml());
            }
            Vec::new()
        }
    };
    match args.format {
        Format::Json => output::stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report_json(&imported, &written)).unwrap_or_default()
        )),
        Format::Human => {
            let mut text = imported.report();
            for w in &written {
                text.push_str(&format!("wrote {}\n", w.display()));
            }
            if args.out.is_none() {
                output::stderr(&text);
            } else {
                output::stdout(&text);
            }
        }
    }
    if imported.exact() { EXIT_OK } else { EXIT_FAIL }
}
