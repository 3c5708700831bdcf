//! The `zero-policy` command: parses the command line and hands off to `cli`.

use std::process::ExitCode;

use clap::Parser;
use zero_policy::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Lint(args) => cli::lint::run(&args),
        Command::Explain(args) => cli::explain::run(&args),
        Command::Test(args) => cli::test::run(&args),
        Command::Tools(args) => cli::tools::run(&args),
        Command::Schema(args) => cli::schema::run(&args),
        Command::Hook(args) => cli::hook::run(&args),
        Command::Init(args) => cli::init::run(&args),
        Command::Serve(args) => cli::serve::run(&args),
        Command::Pin(args) => cli::pin::run(&args),
        Command::Import(args) => cli::import::run(&args),
        Command::Bundle(args) => cli::bundle::run(&args),
        Command::Log(args) => cli::log::run(&args),
        Command::Completions(args) => cli::completions::run(&args),
        Command::Run(args) => cli::run::run(&args),
        Command::Doctor(args) => cli::doctor::run(&args),
        #[cfg(unix)]
        Command::Confine(args) => cli::confine::run(&args),
    };
    ExitCode::from(code)
}
