//! The `lists:` section: named lists shared by every rule as `lists.NAME`.
//!
//! A list name is unique across files; `{extends: NAME, add: [...]}` adds to
//! another list. A leading `~/` is the home folder (`settings.paths.home`), so
//! globs over absolute paths can name the home folder's files.

use super::*;
use crate::model::RawList;

impl Builder {
    /// Collects every file's lists, then resolves extensions and `~/`.
    pub(super) fn lists(&mut self, docs: &[(SourceFile, Document)]) {
        let mut raw: BTreeMap<String, (SourceFile, &RawList)> = BTreeMap::new();
        for (file, doc) in docs {
            for (name, list) in &doc.lists {
                if let Some((first, _)) = raw.get(name) {
                    self.diags.push(
                        Diagnostic::new(Code::DuplicateList, format!("duplicate list `{name}`"))
                            .at(list_location(file, list))
                            .help(format!(
                                "first defined in `{}`; list names are unique across files (use `{{extends: {name}, add: [...]}}` under a new name to add to it)",
                                first.name
                            )),
                    );
                    continue;
                }
                if !valid_list_name(name) {
                    self.diags.push(
                        Diagnostic::new(Code::InvalidValue, format!("invalid list name `{name}`"))
                            .at(list_location(file, list))
                            .help("list names are CEL identifiers: `[a-z_][a-z0-9_]*`"),
                    );
                    continue;
                }
                raw.insert(name.clone(), (file.clone(), list));
            }
        }
        // `~` as it stands in a glob: the home folder, its metacharacters escaped.
        let home = crate::effects::paths::escape(&self.settings.home);
        let home_dir = home.trim_end_matches('/');
        for name in raw.keys() {
            let mut items = Vec::new();
            let mut chain: Vec<&str> = Vec::new();
            let mut cur = name.as_str();
            loop {
                if chain.contains(&cur) {
                    let (file, list) = &raw[name];
                    self.diags.push(
                        Diagnostic::new(
                            Code::DuplicateList,
                            format!("lists extend each other in a circle: {}", chain.join(" → ")),
                        )
                        .at(list_location(file, list))
                        .help("break the circle: a list may extend another, not itself"),
                    );
                    items.clear();
                    break;
                }
                chain.push(cur);
                let Some((file, list)) = raw.get(cur) else {
                    let (file, list) = &raw[name];
                    self.diags.push(
                        Diagnostic::new(
                            Code::UnknownList,
                            format!("list `{name}` extends unknown list `{cur}`"),
                        )
                        .at(list_location(file, list))
                        .help(
                            match closest(cur, raw.keys().map(String::as_str)) {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => {
                                    "name a list defined under `lists:` in some file".to_string()
                                }
                            },
                        ),
                    );
                    break;
                };
                let _ = file;
                match list {
                    RawList::Items(v) => {
                        items.extend(v.iter().rev().map(|s| s.value.clone()));
                        break;
                    }
                    RawList::Extends { extends, add } => {
                        items.extend(add.iter().rev().map(|s| s.value.clone()));
                        cur = extends.value.as_str();
                    }
                }
            }
            items.reverse();
            let items = items
                .into_iter()
                .map(|i| match i.strip_prefix("~/") {
                    Some(rest) => format!("{home_dir}/{rest}"),
                    None if i == "~" => home.clone(),
                    None => i,
                })
                .collect();
            std::sync::Arc::make_mut(&mut self.lists).insert(name.clone(), items);
        }
    }
}

fn valid_list_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_lowercase() || f == '_')
        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_')
}

fn list_location(file: &SourceFile, list: &RawList) -> Location {
    let first = match list {
        RawList::Items(v) => v.first(),
        RawList::Extends { extends, .. } => Some(extends),
    };
    match first {
        Some(s) => origin(file, s).location(),
        None => Location {
            file: file.clone(),
            span: Span { offset: 0, len: 0 },
        },
    }
}
