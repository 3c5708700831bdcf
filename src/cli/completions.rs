//! `zero-policy completions SHELL`: shell completions and the man pages, from the clap definition.

use clap::CommandFactory;

use crate::cli::{Cli, EXIT_ERROR, EXIT_OK};

/// `completions`' arguments (the long help is on `Command::Completions`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell.
    #[arg(value_enum, required_unless_present_any = ["man", "man_dir"])]
    pub shell: Option<clap_complete::Shell>,
    /// Print the main man page (roff) instead.
    #[arg(long, conflicts_with_all = ["shell", "man_dir"])]
    pub man: bool,
    /// Write every man page (zero-policy.1, zero-policy-lint.1, …) into this folder.
    #[arg(long, value_name = "DIR", conflicts_with = "shell")]
    pub man_dir: Option<std::path::PathBuf>,
}

/// The completion script for `shell`.
#[must_use]
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "zero-policy", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn render(cmd: clap::Command) -> String {
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = clap_mangen::Man::new(cmd).render(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Every man page: the main one and one per subcommand, as (file name, roff).
#[must_use]
pub fn man_pages() -> Vec<(String, String)> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = vec![("zero-policy.1".to_string(), render(cmd.clone()))];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_display_name().unwrap_or(sub.get_name()).to_string();
        pages.push((format!("{name}.1"), render(sub.clone())));
    }
    pages
}

/// The generated files the repository keeps, as (path in the repository, text).
#[must_use]
pub fn committed_files() -> Vec<(String, String)> {
    let mut files = vec![
        (
            "completions/zero-policy.bash".to_string(),
            completions(clap_complete::Shell::Bash),
        ),
        (
            "completions/_zero-policy".to_string(),
            completions(clap_complete::Shell::Zsh),
        ),
        (
            "completions/zero-policy.fish".to_string(),
            completions(clap_complete::Shell::Fish),
        ),
    ];
    for (name, text) in man_pages() {
        files.push((format!("docs/man/{name}"), text));
    }
    files
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    if let Some(dir) = &args.man_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            crate::output::error(&format!("cannot create `{}`: {e}", dir.display()));
            return EXIT_ERROR;
        }
        for (name, text) in man_pages() {
            let path = dir.join(&name);
            if let Err(e) = std::fs::write(&path, text) {
                crate::output::error(&format!("cannot write `{}`: {e}", path.display()));
                return EXIT_ERROR;
            }
            crate::output::stdout(&format!("wrote {}\n", path.display()));
        }
        return EXIT_OK;
    }
    let text = match args.shell {
        Some(shell) if !args.man => completions(shell),
        _ => man_pages()
            .into_iter()
            .next()
            .map(|(_, t)| t)
            .unwrap_or_default(),
    };
    crate::output::stdout(&text);
    EXIT_OK
}
