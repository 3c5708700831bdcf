//! The scan that indexes the shipped catalog's files by program name, run by
//! `build.rs` when the binary is built, so that a process never scans 1 MB of
//! YAML to find one entry. A test checks the names it finds against a full load.
//!
//! A file's top-level entries start at `\n  - name: `. Entries joined by YAML
//! anchors (`&x` in one, `*x` in a later one) are parsed together, as one unit.

/// One unit: its file, its byte range, and the names and aliases it describes.
pub struct Unit {
    /// Index of the file.
    pub file: usize,
    /// Start of the unit's text.
    pub start: usize,
    /// End of the unit's text (exclusive).
    pub end: usize,
    /// The names and aliases of its entries.
    pub names: Vec<String>,
}

/// Scans the files' texts into units.
pub fn scan(texts: &[&str]) -> Vec<Unit> {
    let mut out = Vec::new();
    for (file, text) in texts.iter().enumerate() {
        let starts: Vec<usize> = text
            .match_indices("\n  - name: ")
            .map(|(i, _)| i + 1)
            .collect();
        // (start, end, anchors, names)
        let mut units: Vec<(usize, usize, Vec<String>, Vec<String>)> = Vec::new();
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(text.len());
            let entry = &text[start..end];
            let names = entry_names(entry);
            let uses = yaml_names(entry, '*');
            let joins = units
                .iter()
                .rposition(|(_, _, anchors, _)| uses.iter().any(|u| anchors.contains(u)));
            match joins {
                Some(first) => {
                    let merged_start = units[first].0;
                    let mut anchors = Vec::new();
                    let mut all_names = Vec::new();
                    for (_, _, a, n) in units.drain(first..) {
                        anchors.extend(a);
                        all_names.extend(n);
                    }
                    anchors.extend(yaml_names(entry, '&'));
                    all_names.extend(names);
                    units.push((merged_start, end, anchors, all_names));
                }
                None => units.push((start, end, yaml_names(entry, '&'), names)),
            }
        }
        out.extend(units.into_iter().map(|(start, end, _, names)| Unit {
            file,
            start,
            end,
            names,
        }));
    }
    out
}
/// The anchor (`&`) or alias (`*`) names an entry's text holds.
fn yaml_names(entry: &str, sigil: char) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in entry.match_indices(sigil) {
        let before = entry[..i].chars().next_back();
        if !matches!(before, Some(' ' | '[' | ',' | '\n')) {
            continue;
        }
        let name: String = entry[i + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The name and aliases of one entry, from its `- name:` and `aliases:` lines.
fn entry_names(entry: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in entry.lines() {
        if let Some(n) = line.strip_prefix("  - name: ") {
            out.push(unquote(n.split(" #").next().unwrap_or(n).trim()));
        } else if let Some(list) = line.strip_prefix("    aliases: ") {
            let list = list.split(" #").next().unwrap_or(list).trim();
            if let Some(inner) = list.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                out.extend(
                    inner
                        .split(',')
                        .map(|a| unquote(a.trim()))
                        .filter(|a| !a.is_empty()),
                );
            }
        }
    }
    out
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'').to_string()
}
