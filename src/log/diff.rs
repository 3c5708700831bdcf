//! `zero-policy log diff`: the decision in force against the shadow policy's
//! (`settings.shadow`) over a recorded decision log, so a team rolling out a
//! stricter policy sees every call it would have decided otherwise, and the
//! rules that made the difference.
//!
//! Each line carries both decisions, made for the same call at the same
//! moment (the same arguments, session, workspace and host), so nothing is
//! replayed or reconstructed: what is compared is what each policy decided.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// A rule in a difference: its id and, where the log says, where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The rule id.
    pub id: String,
    /// The file, when logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line, when logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// One call the two policies decided differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Its line in the log (1-based).
    pub line: usize,
    /// The record's time.
    pub time: String,
    /// The front door.
    pub front: String,
    /// The tool.
    pub tool: String,
    /// The call's arguments as logged (scrubbed), or `null` where omitted.
    pub args: Value,
    /// The decision in force.
    pub from: String,
    /// The shadow policy's decision.
    pub to: String,
    /// Why the shadow decided so.
    pub reason: String,
    /// Rules that matched under the shadow policy and not under the one in force.
    pub added: Vec<Rule>,
    /// Rules that matched under the policy in force and not under the shadow.
    pub removed: Vec<Rule>,
}

/// A line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    /// Its line in the log.
    pub line: usize,
    /// The column where reading it failed.
    pub column: usize,
    /// Why.
    pub message: String,
}

/// What `log diff` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Lines in the log (not counting an empty last one).
    pub lines: usize,
    /// Calls both policies decided.
    pub compared: usize,
    /// Of those, decided alike.
    pub unchanged: usize,
    /// Lines without a shadow decision (no `settings.shadow` then, or a
    /// front door that does not decide, such as a resource read).
    pub without_shadow: usize,
    /// Lines where the shadow policy could not decide (it did not load).
    pub shadow_errors: usize,
    /// The first such line's error, to show why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_shadow_error: Option<String>,
    /// Lines where the policy in force did not decide (`error`, `cancelled`).
    pub not_decided: usize,
    /// Lines that are not JSON objects.
    pub unreadable: Vec<Unreadable>,
    /// How many calls changed, by `(from, to)`.
    #[serde(skip)]
    pub counts: BTreeMap<(String, String), usize>,
    /// The calls that changed, in log order.
    pub changes: Vec<Change>,
}

impl Report {
    /// The counts by change, most first (then by name).
    #[must_use]
    pub fn by_change(&self) -> Vec<(&str, &str, usize)> {
        let mut out: Vec<(&str, &str, usize)> = self
            .counts
            .iter()
            .map(|((f, t), n)| (f.as_str(), t.as_str(), *n))
            .collect();
        out.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)).then(a.1.cmp(b.1)));
        out
    }
}

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The rules a record (or its `shadow`) says matched: `rules` with their
/// places, else the ids in `matched`.
fn rules_of(v: &Value) -> Vec<Rule> {
    if let Some(rules) = v.get("rules").and_then(Value::as_array) {
        let parsed: Vec<Rule> = rules
            .iter()
            .filter_map(|r| serde_json::from_value::<RuleAtIn>(r.clone()).ok())
            .map(|r| Rule {
                id: r.id,
                file: Some(r.file),
                line: Some(r.line),
            })
            .collect();
        if !parsed.is_empty() {
            return parsed;
        }
    }
    v.get("matched")
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(|id| Rule {
                    id: id.to_string(),
                    file: None,
                    line: None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A [`super::RuleAt`] as read back from a log.
#[derive(serde::Deserialize)]
struct RuleAtIn {
    id: String,
    file: String,
    line: usize,
}

/// Rules of `a` whose id is not among `b`'s, each id once.
fn missing_from(a: &[Rule], b: &[Rule]) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::new();
    for r in a {
        if !b.iter().any(|x| x.id == r.id) && !out.iter().any(|x| x.id == r.id) {
            out.push(r.clone());
        }
    }
    out
}

/// Compares each line's decision with its shadow decision.
#[must_use]
pub fn diff(log: &[u8]) -> Report {
    let mut report = Report::default();
    for (i, raw) in log.split(|b| *b == b'\n').enumerate() {
        let line = i + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        report.lines = line;
        let record: Value = match serde_json::from_slice(raw) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                report.unreadable.push(Unreadable {
                    line,
                    column: 1,
                    message: "not a JSON object".into(),
                });
                continue;
            }
            Err(e) => {
                report.unreadable.push(Unreadable {
                    line,
                    column: e.column(),
                    message: {
                        // The place is in `line` and `column`.
                        let e = e.to_string();
                        let what = e.split(" at line ").next().unwrap_or_default();
                        format!("not JSON: {what}")
                    },
                });
                continue;
            }
        };
        let Some(shadow) = record.get("shadow").filter(|s| s.is_object()) else {
            report.without_shadow += 1;
            continue;
        };
        let from = text(&record, "decision");
        let to = text(shadow, "decision");
        if !matches!(from.as_str(), "allow" | "prompt" | "deny" | "reject") {
            report.not_decided += 1;
            continue;
        }
        if !matches!(to.as_str(), "allow" | "prompt" | "deny" | "reject") {
            report.shadow_errors += 1;
            if report.first_shadow_error.is_none() {
                report.first_shadow_error = Some(text(shadow, "error"));
            }
            continue;
        }
        report.compared += 1;
        if from == to {
            report.unchanged += 1;
            continue;
        }
        let (real, shadowed) = (rules_of(&record), rules_of(shadow));
        *report.counts.entry((from.clone(), to.clone())).or_default() += 1;
        report.changes.push(Change {
            line,
            time: text(&record, "time"),
            front: text(&record, "front"),
            tool: text(&record, "tool"),
            args: record.get("args").cloned().unwrap_or(Value::Null),
            from,
            to,
            reason: text(shadow, "reason"),
            added: missing_from(&shadowed, &real),
            removed: missing_from(&real, &shadowed),
        });
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    const REAL: &str = r#""rules":[{"id":"read-only","file":"p/default.yaml","line":9}]"#;

    fn line(decision: &str, shadow: &str) -> String {
        format!(
            r#"{{"time":"t","front":"hook:codex","tool":"Bash","decision":"{decision}","matched":["read-only"],{REAL},"args":{{"command":"git push"}}{shadow}}}"#
        )
    }

    #[test]
    fn counts_changes_and_names_the_rules_that_made_them() {
        let shadow_deny = r#","shadow":{"decision":"deny","reason":"no pushing","rules":[{"id":"read-only","file":"n/default.yaml","line":9},{"id":"no-push","file":"n/strict.yaml","line":3}]}"#;
        let log = [
            line("allow", shadow_deny),
            line("allow", r#","shadow":{"decision":"allow"}"#),
            line("allow", ""),
            line("error", shadow_deny),
            line(
                "allow",
                r#","shadow":{"decision":"error","error":"it does not load"}"#,
            ),
            "{torn".to_string(),
            line("prompt", shadow_deny),
        ]
        .join("\n");
        let r = diff(log.as_bytes());
        assert_eq!(r.lines, 7);
        assert_eq!((r.compared, r.unchanged), (3, 1));
        assert_eq!(
            (r.without_shadow, r.not_decided, r.shadow_errors),
            (1, 1, 1)
        );
        assert_eq!(r.first_shadow_error.as_deref(), Some("it does not load"));
        assert_eq!(r.unreadable.len(), 1);
        assert_eq!(r.unreadable[0].line, 6);
        assert_eq!(
            r.by_change(),
            vec![("allow", "deny", 1), ("prompt", "deny", 1)]
        );
        let c = &r.changes[0];
        assert_eq!(
            (c.line, c.from.as_str(), c.to.as_str()),
            (1, "allow", "deny")
        );
        assert_eq!(c.added.len(), 1);
        assert_eq!(c.added[0].id, "no-push");
        assert_eq!(c.added[0].line, Some(3));
        assert!(c.removed.is_empty());
        assert_eq!(c.reason, "no pushing");
    }

    #[test]
    fn a_rule_that_no_longer_matches_is_removed() {
        let log = line(
            "deny",
            r#","shadow":{"decision":"allow","matched":["other"]}"#,
        );
        let r = diff(log.as_bytes());
        let c = &r.changes[0];
        assert_eq!(c.removed[0].id, "read-only");
        assert_eq!(c.removed[0].file.as_deref(), Some("p/default.yaml"));
        assert_eq!(c.added[0].id, "other");
        assert_eq!(c.added[0].file, None);
    }
}
