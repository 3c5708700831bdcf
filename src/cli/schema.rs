//! `zero-policy schema`: the JSON Schema of the document format.

use crate::cli::EXIT_OK;
use crate::model::Document;

/// Print the JSON Schema (draft 2020-12) of a policy or manifest file.
///
/// Editors use it through the comment atop each file:
/// `# yaml-language-server: $schema=../schemas/zero-policy.schema.json`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format (the schema is always JSON).
    #[arg(long, value_enum, default_value = "json")]
    pub format: SchemaFormat,
}

/// The schema's only format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFormat {
    /// JSON.
    Json,
}

/// The schema as pretty JSON, with a trailing newline.
#[must_use]
pub fn schema_text() -> String {
    let schema = schemars::schema_for!(Document);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}

/// Runs the command.
#[must_use]
pub fn run(_args: &Args) -> u8 {
    crate::output::stdout(&schema_text());
    EXIT_OK
}
