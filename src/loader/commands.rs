//! The `commands:` section: additions to the command catalog (docs/catalog.md).

use super::*;
use crate::effects::catalog;
use crate::model::RawCommand;

impl Builder {
    pub(super) fn command(&mut self, file: &SourceFile, raw: &RawCommand) {
        let Some(name) = &raw.name else {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidCommand,
                    "a command specification has no `name`",
                )
                .at(Location {
                    file: file.clone(),
                    span: Span { offset: 0, len: 0 },
                })
                .help("give the program's basename: `name: grep`"),
            );
            return;
        };
        let here = origin(file, name);
        if name.value.is_empty()
            || name.value.contains('/')
            || name.value.contains(char::is_whitespace)
        {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidCommand,
                    format!("invalid command name `{}`", name.value),
                )
                .at(here.location())
                .help("a command is named by the program's basename, without a folder"),
            );
            return;
        }
        for n in std::iter::once(&name.value).chain(&raw.aliases) {
            if let Some(first) = self.command_names.get(n) {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidCommand,
                        format!("command `{n}` is specified twice"),
                    )
                    .at(here.location())
                    .help(format!(
                        "first specified at {}:{}; keep one specification per program",
                        first.file.name,
                        first.line()
                    )),
                );
                return;
            }
        }
        match catalog::compile(raw, &name.value) {
            Ok(spec) => {
                for n in std::iter::once(&name.value).chain(&raw.aliases) {
                    self.command_names.insert(n.clone(), here.clone());
                    if !self.builtin_catalog_file(file) && super::catalog::is_builtin(n) {
                        self.diags.push(
                            Diagnostic::new(
                                Code::CommandReplaced,
                                format!("`{n}` replaces the shipped specification of `{n}`"),
                            )
                            .at(here.location())
                            .help("the shipped catalog's entry is no longer used; describe every option and operand the program takes"),
                        );
                    }
                }
                let spec = Arc::new(spec);
                // A policy's own entry: its examples hold, or it does not load.
                // (The shipped catalog's are checked by its tests.)
                if !self.builtin_catalog_file(file) {
                    let names: Vec<String> = std::iter::once(&name.value)
                        .chain(&raw.aliases)
                        .cloned()
                        .collect();
                    let catalog =
                        super::catalog::with_additions(&[(Arc::clone(&spec), raw.aliases.clone())]);
                    for why in crate::effects::check_examples(&names, &spec, &catalog) {
                        self.diags.push(
                            Diagnostic::new(
                                Code::InvalidCommand,
                                format!("command `{}`: {why}", name.value),
                            )
                            .at(here.location())
                            .help("the entry and its example disagree: fix the one that is wrong"),
                        );
                    }
                }
                self.commands.push((spec, raw.aliases.clone()));
            }
            Err(errors) => {
                for e in errors {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidCommand,
                            format!("command `{}`: {e}", name.value),
                        )
                        .at(here.location())
                        .help("see docs/catalog.md for the format"),
                    );
                }
            }
        }
    }

    /// Whether the file is one of the shipped catalog's own.
    fn builtin_catalog_file(&self, file: &SourceFile) -> bool {
        self.loading_builtin_catalog || super::catalog::is_builtin_file(&file.name)
    }
}
