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
        if !self.tags_known(file, &here, raw) {
            return;
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

    /// Checks every tag the entry names against the closed set
    /// (`effects::tags`); false when one is not in it, each reported where
    /// the entry's text names it.
    fn tags_known(&mut self, file: &SourceFile, here: &Origin, raw: &RawCommand) -> bool {
        let mut named: Vec<&str> = Vec::new();
        tags_of(raw, &mut named);
        let mut ok = true;
        let mut reported: Vec<&str> = Vec::new();
        for t in named {
            let (why, label) = match crate::effects::tags::find(t) {
                Some(tag) if !tag.engine_only => continue,
                Some(_) => (
                    format!("the tag `{t}` is given by the engine, not by a catalog entry"),
                    "given by the engine",
                ),
                None => (format!("unknown tag `{t}`"), "not a tag of the catalog"),
            };
            ok = false;
            if reported.contains(&t) {
                continue;
            }
            reported.push(t);
            let names = crate::effects::tags::TAGS
                .iter()
                .filter(|t| !t.engine_only)
                .map(|t| t.name);
            let help = match super::closest(t, names) {
                Some(c) if c != t => {
                    format!("did you mean `{c}`? The tags are listed in docs/catalog.md")
                }
                _ => "the tags are listed in docs/catalog.md (\"Tags\")".to_string(),
            };
            self.diags.push(
                Diagnostic::new(Code::UnknownTag, why)
                    .at(tag_location(file, here, t))
                    .label(label)
                    .help(help),
            );
        }
        ok
    }

    /// Whether the file is one of the shipped catalog's own.
    fn builtin_catalog_file(&self, file: &SourceFile) -> bool {
        self.loading_builtin_catalog || super::catalog::is_builtin_file(&file.name)
    }
}

/// Every tag `raw` names: its own, its options', its `when`s' (added and
/// removed), its examples' (had and not had), and its subcommands'.
fn tags_of<'a>(raw: &'a RawCommand, out: &mut Vec<&'a str>) {
    out.extend(raw.tags.iter().map(String::as_str));
    for o in raw.options.values() {
        out.extend(o.0.tags.iter().map(String::as_str));
    }
    for w in &raw.when {
        out.extend(w.tags.iter().chain(&w.untags).map(String::as_str));
    }
    for e in &raw.examples {
        out.extend(e.tags.iter().chain(&e.not_tags).map(String::as_str));
    }
    for sub in raw.subcommands.values() {
        tags_of(sub, out);
    }
}

/// Where the entry at `here` first names `tag` as a whole word (tags are not
/// kept with their places: a tag is a word of a flow list, found again only
/// when one is wrong); the entry's name where it is not found.
fn tag_location(file: &SourceFile, here: &Origin, tag: &str) -> Location {
    let text = file.text.as_str();
    let from = here.span.offset.min(text.len());
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let found = text[from..]
        .match_indices(tag)
        .map(|(i, _)| from + i)
        .find(|&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + tag.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        });
    match found {
        Some(offset) => Location {
            file: file.clone(),
            span: Span {
                offset,
                len: tag.len(),
            },
        },
        None => here.location(),
    }
}
