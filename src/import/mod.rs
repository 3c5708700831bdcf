//! `import`: the permission rules teams already keep for other agents (Claude Code
//! settings, Gemini CLI policy TOML), turned into a policy written over effects.
//!
//! An importer reads the agent's files into [`Rule`]s (each with example calls drawn
//! from the rule it came from) and [`Finding`]s (what could not be translated exactly,
//! and why). [`Import::check`] then loads the generated policy through the public
//! loader together with the manifests, runs every example through the dispatch path,
//! keeps the examples that decide as the original rule documents, and reports the
//! others: nothing is silently widened, and nothing unverified is written.

pub mod claude_code;
pub mod command;
pub mod gemini_cli;
mod yaml;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Severity, SourceFile};
use crate::loader;
use crate::registry::Registry;

/// The session every generated example and test runs in.
pub const EXAMPLE_WORKSPACE: &str = "/home/dev/project";

/// What a generated rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A relax rule: prompt → allow.
    Relax,
    /// A sandbox rule that asks.
    Prompt,
    /// A sandbox rule that denies.
    Deny,
}

impl Action {
    /// The decision an agent's rule of this kind documents.
    #[must_use]
    pub fn decision(self) -> &'static str {
        match self {
            Action::Relax => "allow",
            Action::Prompt => "prompt",
            Action::Deny => "deny",
        }
    }
}

/// One example call.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: serde_json::Value,
    /// The agent the call comes from (`session.agent`).
    pub agent: String,
}

impl Example {
    /// A call of `tool` with `args`, from `agent`.
    #[must_use]
    pub fn new(agent: &str, tool: &str, args: serde_json::Value) -> Example {
        Example {
            tool: tool.to_string(),
            args,
            agent: agent.to_string(),
        }
    }

    /// A shell command through `tool`'s `command` argument.
    #[must_use]
    pub fn shell(agent: &str, tool: &str, command: &str) -> Example {
        Example::new(agent, tool, serde_json::json!({ "command": command }))
    }

    fn to_call(&self) -> crate::call::Call {
        crate::call::Call {
            tool: self.tool.clone(),
            args: self.args.clone(),
            session: crate::call::Session {
                workspace: EXAMPLE_WORKSPACE.to_string(),
                agent: self.agent.clone(),
                ..crate::call::Session::default()
            },
            confined: false,
        }
    }

    /// How the example reads in a report.
    #[must_use]
    pub fn describe(&self) -> String {
        match self.args.get("command").and_then(|c| c.as_str()) {
            Some(c) => format!("{} `{c}`", self.tool),
            None => format!("{} {}", self.tool, self.args),
        }
    }
}

/// One generated rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its id (unique in the document).
    pub id: String,
    /// What it does.
    pub action: Action,
    /// `tools:` globs; empty for every tool.
    pub tools: Vec<String>,
    /// The CEL expression.
    pub when: String,
    /// One line saying what it matches.
    pub description: String,
    /// Why it asks or denies (sandbox) or relaxes.
    pub reason: String,
    /// Where it came from: `FILE: deny `Bash(rm:*)``.
    pub source: String,
    /// Calls it must match.
    pub matches: Vec<Example>,
    /// Calls it must not match.
    pub no_matches: Vec<Example>,
    /// Named lists the expression reads (`lists.NAME`), written into the document.
    pub lists: Vec<(String, Vec<String>)>,
}

/// How a rule of the original was translated, where not exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FindingKind {
    /// Translated, but matching more calls than the original (stricter for a deny or ask).
    Stricter,
    /// Translated, but relaxing fewer calls than the original.
    Narrower,
    /// Not translated at all.
    Dropped,
    /// Never decides anything in the original (a higher priority always wins first).
    Unreachable,
    /// Worth knowing; not a difference in decisions.
    Note,
}

impl FindingKind {
    fn label(self) -> &'static str {
        match self {
            FindingKind::Stricter => "stricter",
            FindingKind::Narrower => "narrower",
            FindingKind::Dropped => "not translated",
            FindingKind::Unreachable => "unreachable",
            FindingKind::Note => "note",
        }
    }

    /// Whether the translation differs from the original in some decision.
    #[must_use]
    pub fn inexact(self) -> bool {
        matches!(
            self,
            FindingKind::Stricter | FindingKind::Narrower | FindingKind::Dropped
        )
    }
}

/// A rule of the original that was not translated exactly, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// What kind of difference.
    pub kind: FindingKind,
    /// The file the rule is in.
    pub file: String,
    /// The original rule, as written.
    pub rule: String,
    /// Why.
    pub reason: String,
}

/// A `tests:` case of the generated test file.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// Its name.
    pub name: String,
    /// The call.
    pub call: Example,
    /// The decision expected.
    pub decision: &'static str,
}

/// The outcome of one import.
#[derive(Debug, Clone)]
pub struct Import {
    /// `claude-code` or `gemini-cli`.
    pub agent: &'static str,
    /// The files read, in order.
    pub sources: Vec<String>,
    /// How many rules the files held.
    pub rules_read: usize,
    /// The generated rules.
    pub rules: Vec<Rule>,
    /// Whole-decision cases.
    pub tests: Vec<TestCase>,
    /// What was not translated exactly.
    pub findings: Vec<Finding>,
}

/// Why an import could not run.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error("cannot read `{path}`: {message}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// A file is not what the agent reads.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The manifests to check against do not load.
    #[error("the manifests do not load: {0}")]
    Manifests(String),
    /// The generated policy does not load (a bug in the importer).
    #[error("the generated policy does not load (please report this): {0}")]
    Generated(String),
    /// The output could not be written.
    #[error("cannot write `{path}`: {message}")]
    Write {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
}

/// At most this many bytes are read from one input file.
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// Reads one input file as UTF-8 text, refusing devices, FIFOs and oversized files.
///
/// # Errors
/// The file cannot be read, is not a regular file, is too large, or is not UTF-8.
pub fn read_input(path: &Path) -> Result<String, ImportError> {
    use std::io::Read as _;
    let err = |message: String| ImportError::Read {
        path: path.display().to_string(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(err(format!("larger than {MAX_INPUT_BYTES} bytes")));
    }
    String::from_utf8(bytes).map_err(|_| err("not UTF-8 text".into()))
}

/// 1-based line and column of a byte offset.
#[must_use]
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A CEL string literal for `s`.
#[must_use]
pub fn cel_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A CEL list literal of strings.
#[must_use]
pub fn cel_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| cel_str(s)).collect();
    format!("[{}]", inner.join(", "))
}

/// `prefix-words-of-text`, lowercase ASCII letters, digits and dashes, at most 48 chars.
#[must_use]
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 48 {
            break;
        }
    }
    let trimmed = out.trim_end_matches('-');
    if trimmed.is_empty() {
        "rule".into()
    } else {
        trimmed.to_string()
    }
}

/// Gives every rule a unique id (a numeric suffix where two would collide).
pub fn unique_ids(rules: &mut [Rule]) {
    let mut seen = std::collections::BTreeSet::new();
    for r in rules.iter_mut() {
        let base = r.id.clone();
        let mut n = 2;
        while !seen.insert(r.id.clone()) {
            r.id = format!("{base}-{n}");
            n += 1;
        }
    }
}

impl Import {
    /// Whether every rule was translated exactly.
    #[must_use]
    pub fn exact(&self) -> bool {
        !self.findings.iter().any(|f| f.kind.inexact())
    }

    /// The generated policy file.
    #[must_use]
    pub fn policy_yaml(&self) -> String {
        yaml::policy(self, true)
    }

    /// The generated test file.
    #[must_use]
    pub fn tests_yaml(&self) -> String {
        yaml::tests(self)
    }

    /// Loads the generated policy with `manifests`, runs every candidate example
    /// through the dispatch path, keeps those that decide as the original rule
    /// documents and reports the others; then adds whole-decision tests for calls
    /// where rules of different kinds meet (deny beats ask beats allow).
    ///
    /// # Errors
    /// The manifests or the generated policy do not load.
    pub fn check(&mut self, manifests: Vec<SourceFile>) -> Result<(), ImportError> {
        let manifest_only = loader::load_sources(manifests.clone());
        if manifest_only.policy.is_none() {
            return Err(ImportError::Manifests(first_errors(
                &manifest_only.diagnostics,
            )));
        }
        let mut files = manifests;
        files.push(SourceFile::new(
            &PathBuf::from(format!("{}.yaml", self.agent)),
            yaml::policy(self, false),
        ));
        let loaded = loader::load_sources(files);
        let Some(policy) = loaded.policy else {
            return Err(ImportError::Generated(first_errors(&loaded.diagnostics)));
        };
        let registry = Registry::new(&policy).map_err(|e| ImportError::Generated(e.to_string()))?;
        let source_of = |rule: &Rule| {
            let (file, original) = rule.source.split_once(": ").unwrap_or(("", &rule.source));
            (file.to_string(), original.to_string())
        };
        let mut tests = Vec::new();
        let mut findings = Vec::new();
        let mut seen_tests = std::collections::BTreeSet::new();
        for rule in &mut self.rules {
            let (file, original) = source_of(rule);
            let mut kept = Vec::new();
            let mut blocked = Vec::new();
            for ex in std::mem::take(&mut rule.matches) {
                let ev = registry.evaluate(&ex.to_call());
                if ev.matched.iter().any(|m| m.id == rule.id) {
                    // A deny's first example, and calls where rules of different
                    // kinds meet, are worth a whole-decision test.
                    let first_deny = rule.action == Action::Deny && kept.is_empty();
                    let meet = ev.matched.iter().any(|m| m.action != ev.matched[0].action);
                    if (first_deny || meet)
                        && ev.reject_reason.is_none()
                        && seen_tests.insert((ex.tool.clone(), ex.args.to_string()))
                    {
                        tests.push(TestCase {
                            name: format!("{original}: {}", ex.describe()),
                            call: ex.clone(),
                            decision: ev.decision.as_str(),
                        });
                    }
                    kept.push(ex);
                } else if let Some((_, why)) =
                    ev.relax_blocked.iter().find(|(id, _)| *id == rule.id)
                {
                    blocked.push(Finding {
                        kind: FindingKind::Narrower,
                        file: file.clone(),
                        rule: original.clone(),
                        reason: format!(
                            "{} is not relaxed: its effects are not exactly known ({why}); \
                             a relax rule never applies to such a call",
                            ex.describe()
                        ),
                    });
                } else {
                    let why = if rule.action == Action::Relax
                        && ev.static_permission == Some(crate::model::Permission::Allow)
                    {
                        "the tool is `allow` already, so there is nothing to relax".to_string()
                    } else if ev.reject_reason.is_some() && ex.tool.starts_with("mcp__") {
                        let server = ex.tool["mcp__".len()..].split("__").next().unwrap_or("");
                        format!(
                            "no manifest declares the MCP server `{server}`; declare it to check this rule"
                        )
                    } else {
                        let decided = ev
                            .reject_reason
                            .clone()
                            .unwrap_or_else(|| format!("decided `{}`", ev.decision));
                        format!("the rule does not match it ({decided})")
                    };
                    findings.push(Finding {
                        kind: FindingKind::Note,
                        file: file.clone(),
                        rule: original.clone(),
                        reason: format!("example {} left out: {why}", ex.describe()),
                    });
                }
            }
            // A relax rule none of whose examples is exactly known may never apply
            // (an unknown program): that narrows it. Otherwise the left-out
            // example is only worth a note.
            if !kept.is_empty() {
                for f in &mut blocked {
                    f.kind = FindingKind::Note;
                }
            }
            findings.extend(blocked);
            rule.matches = kept;
            let mut kept = Vec::new();
            for ex in std::mem::take(&mut rule.no_matches) {
                let ev = registry.evaluate(&ex.to_call());
                if ev.matched.iter().any(|m| m.id == rule.id) {
                    findings.push(Finding {
                        kind: FindingKind::Note,
                        file: file.clone(),
                        rule: original.clone(),
                        reason: format!(
                            "example {} left out: the rule matches it too",
                            ex.describe()
                        ),
                    });
                } else {
                    kept.push(ex);
                }
            }
            rule.no_matches = kept;
        }
        self.tests.extend(tests);
        self.findings.extend(findings);
        self.findings.sort();
        self.findings.dedup();
        Ok(())
    }

    /// Writes `AGENT.yaml` and `AGENT.test.yaml` into `dir` (created if missing).
    ///
    /// # Errors
    /// The folder or a file cannot be written.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
        let werr = |path: &Path, e: std::io::Error| ImportError::Write {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| werr(dir, e))?;
        let policy = dir.join(format!("{}.yaml", self.agent));
        let tests = dir.join(format!("{}.test.yaml", self.agent));
        std::fs::write(&policy, self.policy_yaml()).map_err(|e| werr(&policy, e))?;
        std::fs::write(&tests, self.tests_yaml()).map_err(|e| werr(&tests, e))?;
        Ok(vec![policy, tests])
    }

    /// The report: what was read, what was written, and every rule not translated exactly.
    #[must_use]
    pub fn report(&self) -> String {
        let mut out = String::new();
        let count = |a: Action| self.rules.iter().filter(|r| r.action == a).count();
        let _ = writeln!(
            out,
            "read {} rule{} from {}",
            self.rules_read,
            if self.rules_read == 1 { "" } else { "s" },
            self.sources.join(", ")
        );
        let _ = writeln!(
            out,
            "wrote {} deny, {} prompt and {} relax rule{}, {} test{}",
            count(Action::Deny),
            count(Action::Prompt),
            count(Action::Relax),
            if count(Action::Relax) == 1 { "" } else { "s" },
            self.tests.len(),
            if self.tests.len() == 1 { "" } else { "s" },
        );
        let inexact: Vec<&Finding> = self.findings.iter().filter(|f| f.kind.inexact()).collect();
        let notes: Vec<&Finding> = self.findings.iter().filter(|f| !f.kind.inexact()).collect();
        if inexact.is_empty() {
            let _ = writeln!(out, "every rule was translated exactly");
        } else {
            let _ = writeln!(out, "\nnot translated exactly ({}):", inexact.len());
            for f in inexact {
                let _ = writeln!(
                    out,
                    "  {} {} ({}): {}",
                    f.kind.label(),
                    shown(&f.rule),
                    shown(&f.file),
                    shown(&f.reason)
                );
            }
        }
        if !notes.is_empty() {
            let _ = writeln!(out, "\nnotes ({}):", notes.len());
            for f in notes {
                let _ = writeln!(
                    out,
                    "  {} ({}): {}",
                    shown(&f.rule),
                    shown(&f.file),
                    shown(&f.reason)
                );
            }
        }
        out
    }
}

/// Text from the input as the report shows it: control and invisible characters
/// (line breaks, bidirectional overrides, zero-width spaces) escaped.
#[must_use]
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        let invisible = matches!(ch,
            '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{00ad}');
        if ch.is_control() || invisible {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

fn first_errors(diags: &[crate::diagnostic::Diagnostic]) -> String {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .take(5)
        .map(|d| match &d.location {
            Some(l) => {
                let (line, column) = l.start();
                format!("{}:{line}:{column}: {}", l.file.name, d.message)
            }
            None => d.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
