//! All printing happens here: diagnostics in four formats, explanations,
//! the tool table and test reports.

use std::io::{IsTerminal, Write};

use serde_json::json;

use crate::call::Call;
use crate::diagnostic::{self, Code, Diagnostic, Severity};
use crate::dispatch::Evaluation;
use crate::registry::Registry;
use crate::testing::Report;

/// Writes to standard output, ignoring a closed pipe.
pub fn stdout(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

/// Writes to standard error.
pub fn stderr(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes());
}

/// Prints `error: message` on standard error, with control and invisible
/// characters escaped (a message may quote a file name or an argument).
pub fn error(message: &str) {
    stderr(&format!(
        "error: {}\n",
        crate::escape::escape_keep_lines(message)
    ));
}

fn color_on(stream_is_tty: bool) -> bool {
    stream_is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn json_line(v: &serde_json::Value) {
    stdout(&format!(
        "{}\n",
        serde_json::to_string_pretty(v).unwrap_or_default()
    ));
}

/// miette graphical reports on standard error.
pub fn diagnostics_human(diags: &[Diagnostic]) {
    let color = color_on(std::io::stderr().is_terminal());
    for d in diags {
        stderr(&diagnostic::render_human(d, color));
        stderr("\n");
    }
}

/// One JSON document with every diagnostic.
pub fn diagnostics_json(diags: &[Diagnostic]) {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    json_line(&json!({
        "diagnostics": diags.iter().map(Diagnostic::to_json).collect::<Vec<_>>(),
        "errors": errors,
        "warnings": diags.len() - errors,
    }));
}

/// The SARIF 2.1.0 log of a lint run.
#[must_use]
pub fn sarif(diags: &[Diagnostic]) -> serde_json::Value {
    let rules: Vec<serde_json::Value> = Code::ALL
        .iter()
        .map(|c| {
            json!({
                "id": c.as_str(),
                "name": c.as_str(),
                "shortDescription": {"text": c.description()},
                "fullDescription": {"text": c.description()},
                "help": {"text": c.description()},
                "defaultConfiguration": {"level": match c.severity() {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                }},
            })
        })
        .collect();
    let results: Vec<serde_json::Value> = diags
        .iter()
        .map(|d| {
            let j = d.to_json();
            let rule_index = Code::ALL.iter().position(|c| *c == d.code).unwrap_or(0);
            let mut message = j.message.to_string();
            if let Some(h) = &j.help {
                message.push_str(&format!("\nhelp: {h}"));
            }
            let mut result = json!({
                "ruleId": d.code.as_str(),
                "ruleIndex": rule_index,
                "level": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
                "message": {"text": message},
            });
            if d.location.is_some() {
                result["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": {"uri": j.file.replace('\\', "/")},
                        "region": {
                            "startLine": j.line.max(1),
                            "startColumn": j.column.max(1),
                            "endLine": j.end_line.max(j.line).max(1),
                            "endColumn": j.end_column.max(1),
                        }
                    }
                }]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "zero-policy",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/zero-policy/zero-policy",
                "rules": rules,
            }},
            "results": results,
        }]
    })
}

/// SARIF 2.1.0 on standard output.
pub fn diagnostics_sarif(diags: &[Diagnostic]) {
    json_line(&sarif(diags));
}

/// Escapes a GitHub workflow command's data.
fn gh_escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a GitHub workflow command's property.
fn gh_escape_prop(s: &str) -> String {
    gh_escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The GitHub workflow command for one diagnostic.
#[must_use]
pub fn github_line(d: &Diagnostic) -> String {
    let j = d.to_json();
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut msg = j.message.to_string();
    if let Some(h) = &j.help {
        msg.push_str(&format!("\nhelp: {h}"));
    }
    if d.location.is_some() {
        format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            gh_escape_prop(&j.file),
            j.line,
            j.column,
            j.end_line,
            j.end_column,
            gh_escape_prop(d.code.as_str()),
            gh_escape_data(&msg)
        )
    } else {
        format!(
            "::{level} title={}::{}",
            gh_escape_prop(d.code.as_str()),
            gh_escape_data(&msg)
        )
    }
}

/// GitHub workflow commands on standard output.
pub fn diagnostics_github(diags: &[Diagnostic]) {
    let mut s = String::new();
    for d in diags {
        s.push_str(&github_line(d));
        s.push('\n');
    }
    stdout(&s);
}

fn scrubbed_args(registry: &Registry, call: &Call) -> serde_json::Value {
    let mut args = call.args.clone();
    registry.scrubber().scrub_json(&mut args);
    args
}

/// Most characters of a call's arguments `explain` echoes.
pub const MAX_ECHO_CHARS: usize = 2_000;
/// Most characters of one string in the arguments `explain --format json` echoes.
pub const MAX_ECHO_STRING_CHARS: usize = 4_096;

/// Cuts every long string in a JSON value, saying how much was left out.
fn truncate_strings(v: &mut serde_json::Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::String(s) if s.chars().nth(MAX_ECHO_STRING_CHARS).is_some() => {
                *s = crate::escape::truncate(s, MAX_ECHO_STRING_CHARS);
            }
            serde_json::Value::Array(a) => stack.extend(a.iter_mut()),
            serde_json::Value::Object(o) => stack.extend(o.values_mut()),
            _ => {}
        }
    }
}

/// The human account of an evaluation. Text from the call is escaped and the
/// arguments are cut to [`MAX_ECHO_CHARS`].
#[must_use]
pub fn explain_text(registry: &Registry, call: &Call, ev: &Evaluation) -> String {
    crate::escape::escape_keep_lines(&explain_lines(registry, call, ev)).into_owned()
}

fn explain_lines(registry: &Registry, call: &Call, ev: &Evaluation) -> String {
    let mut s = String::new();
    let args = serde_json::to_string(&scrubbed_args(registry, call)).unwrap_or_default();
    s.push_str(&format!(
        "call     {} {}\n",
        crate::escape::truncate(&registry.scrubber().scrub_str(&call.tool), 200),
        crate::escape::truncate(&args, MAX_ECHO_CHARS)
    ));
    let labels = call
        .session
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    s.push_str(&format!(
        "session  {}mode={} workspace={} scopes={}{}\n",
        if call.session.agent.is_empty() {
            String::new()
        } else {
            format!("agent={} ", call.session.agent)
        },
        call.session.mode,
        call.session.workspace,
        call.session
            .scopes
            .iter()
            .map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join(","),
        if labels.is_empty() {
            String::new()
        } else {
            format!(" labels={labels}")
        }
    ));
    if let Some(tool) = registry.get(&call.tool) {
        if let Some(hints) = &tool.hints {
            s.push_str(&format!(
                "hints    {} (from the server: untrusted, never used to decide)\n",
                serde_json::to_string(hints).unwrap_or_default()
            ));
        }
        for (id, why) in &tool.skipped_relax {
            s.push_str(&format!(
                "note     relax rule `{id}` is not applied: {why}\n"
            ));
        }
        if let Some(pin) = tool.pin {
            s.push_str(&format!(
                "pin      {}: {}\n",
                pin.as_str(),
                pin.describe(tool.source.server(), tool.source.remote_name())
            ));
        }
    }
    if let (Some(lock), crate::registry::Lookup::Found(tool)) = (
        registry.lock(),
        registry.lookup(&call.tool, &call.session.agent),
    ) && tool.offline
    {
        s.push_str(&format!(
            "pin      not checked: nothing is connected (`--connect` compares the definition with `{}`)\n",
            lock.path.display()
        ));
    }
    s.push('\n');
    for (i, step) in ev.steps.iter().enumerate() {
        s.push_str(&format!(
            "{:>2}. {:<11} {:<8} {}\n",
            i + 1,
            step.step.as_str(),
            step.outcome.as_str(),
            registry.scrubber().scrub_str(&step.detail)
        ));
    }
    if let Some(fx) = &ev.effects {
        s.push_str(&effects_text(registry, fx));
        if let Some(g) = &fx.grounding {
            s.push_str(&grounding_text(registry, g));
        }
    }
    if !ev.relax_blocked.is_empty() {
        s.push_str("\nnot relaxed (relaxation needs exact effects)\n");
        for (id, why) in &ev.relax_blocked {
            s.push_str(&format!("  {id}: {}\n", registry.scrubber().scrub_str(why)));
        }
    }
    if !ev.matched.is_empty() {
        s.push_str("\nmatched\n");
        for m in &ev.matched {
            s.push_str(&format!(
                "  {:<8} {:<28} {:<7} {}:{}\n",
                m.kind.as_str(),
                m.id,
                m.action.as_str(),
                m.file,
                m.line
            ));
        }
    }
    if !ev.errors.is_empty() {
        s.push_str("\nrule errors (each failed closed)\n");
        for e in &ev.errors {
            s.push_str(&format!(
                "  {:<8} {:<28} counted as {}: {}\n",
                e.kind.as_str(),
                e.id,
                e.counted_as,
                registry.scrubber().scrub_str(&e.message)
            ));
        }
    }
    s.push_str(&format!(
        "\ndecision {}{}\n",
        ev.decision,
        match (&ev.reject_reason, &ev.reason) {
            (Some(r), _) | (None, Some(r)) => format!(": {}", registry.scrubber().scrub_str(r)),
            _ => String::new(),
        }
    ));
    if let (Some(st), Some(ef)) = (ev.static_permission, ev.effective_permission) {
        s.push_str(&format!("         static {st}, effective {ef}\n"));
    }
    s
}

/// The grounding block of `explain --host`: what the host showed.
fn grounding_text(registry: &Registry, g: &crate::effects::ground::Grounding) -> String {
    let scrub = |t: &str| registry.scrubber().scrub_str(t).into_owned();
    let mut s = String::from("\ngrounding  on this host\n");
    if g.links.is_empty() && g.folded.is_empty() && g.walks.is_empty() {
        s.push_str("  nothing to check: no path reaches another file, no search to walk\n");
    }
    for l in &g.links {
        let arrow = if l.resolved { "->" } else { "--" };
        s.push_str(&format!(
            "  link     {} {arrow} {}\n",
            scrub(&l.path),
            scrub(&l.reaches)
        ));
    }
    for f in &g.folded {
        s.push_str(&format!("  folded   {}\n", scrub(f)));
    }
    for w in &g.walks {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        s.push_str(&format!(
            "  walk     {} ({}) from {}{}\n",
            scrub(&w.tree),
            w.effect,
            scrub(&w.root),
            if w.skips_hidden {
                ", hidden names skipped"
            } else {
                ""
            }
        ));
        s.push_str(&format!(
            "           saw {}, {}, {}; reached {}\n",
            plural(w.entries, "entry", "entries"),
            plural(w.folders, "folder", "folders"),
            plural(w.links, "link", "links"),
            plural(w.credentials.len(), "credential file", "credential files"),
        ));
        for c in &w.credentials {
            s.push_str(&format!("           credential {}\n", scrub(c)));
        }
        for c in &w.linked {
            s.push_str(&format!("           linked     {}\n", scrub(c)));
        }
        match &w.stopped {
            None => s.push_str("           complete: the tree is narrowed to what it reaches\n"),
            Some(why) => s.push_str(&format!(
                "           stopped: {}; the tree is kept (it could reach more)\n",
                scrub(why)
            )),
        }
    }
    s
}

/// The effects block of `explain`.
fn effects_text(registry: &Registry, fx: &crate::effects::Effects) -> String {
    let scrub = |t: &str| registry.scrubber().scrub_str(t).into_owned();
    let mut s = format!(
        "\neffects  {}{}\n",
        if fx.exact { "exact" } else { "not exact" },
        if fx.runs_code {
            ", runs code no rule can see"
        } else {
            ""
        }
    );
    for c in &fx.commands {
        let mut line = format!("  command  {}", scrub(&c.program));
        if !c.subcommand.is_empty() {
            line.push_str(&format!(" {}", scrub(&c.subcommand)));
        }
        line.push_str(&format!("  cwd {}", scrub(&c.cwd)));
        if !c.wrappers.is_empty() {
            line.push_str(&format!("  via {}", scrub(&c.wrappers.join(" > "))));
        }
        let mut flags = Vec::new();
        if !c.known {
            flags.push("unknown");
        }
        if c.read_only {
            flags.push("read-only");
        }
        if c.runs_code {
            flags.push("runs code");
        }
        if c.fetched_input {
            flags.push("fetched input");
        }
        if !c.exact {
            flags.push("inexact");
        }
        if !flags.is_empty() {
            line.push_str(&format!("  [{}]", flags.join(", ")));
        }
        s.push_str(&line);
        s.push('\n');
        s.push_str(&format!("           argv {}\n", scrub(&c.argv.join(" "))));
        if !c.tags.is_empty() {
            s.push_str(&format!("           tags {}\n", c.tags.join(", ")));
        }
    }
    for (name, list) in [
        ("reads", &fx.reads),
        ("lists", &fx.lists),
        ("writes", &fx.writes),
        ("deletes", &fx.deletes),
    ] {
        for p in list {
            s.push_str(&format!("  {name:<8} {}\n", scrub(p)));
        }
    }
    for f in &fx.fetches {
        s.push_str(&format!(
            "  fetches  {} (host `{}`)\n",
            scrub(&f.url),
            scrub(&f.host)
        ));
    }
    // The code a rule matches (`call.inexact`), then the sentence.
    for (u, r) in fx.unknown.iter().zip(&fx.inexact) {
        s.push_str(&format!("  unknown  [{r}] {}\n", scrub(u)));
    }
    s
}

/// Prints the human account of an evaluation.
pub fn explain_human(registry: &Registry, call: &Call, ev: &Evaluation) {
    stdout(&explain_text(registry, call, ev));
}

/// The JSON account of an evaluation; secrets in the arguments are scrubbed.
#[must_use]
pub fn explain_value(registry: &Registry, call: &Call, ev: &Evaluation) -> serde_json::Value {
    let mut v = serde_json::to_value(ev).unwrap_or_default();
    let mut args = scrubbed_args(registry, call);
    truncate_strings(&mut args);
    v["args"] = args;
    v["session"] = serde_json::to_value(&call.session).unwrap_or_default();
    if registry.grounded() {
        v["grounding"] = ev
            .effects
            .as_ref()
            .and_then(|fx| fx.grounding.as_ref())
            .map_or(serde_json::Value::Null, |g| {
                serde_json::to_value(g).unwrap_or_default()
            });
    }
    if let Some(tool) = registry.get(&call.tool) {
        v["hints"] = tool.hints.clone().unwrap_or(serde_json::Value::Null);
        v["source"] = serde_json::to_value(&tool.source).unwrap_or_default();
        if let Some(pin) = tool.pin {
            v["pin"] = serde_json::Value::String(pin.as_str().into());
        }
    }
    // Step details and errors may quote arguments: they leave through the scrubber too.
    let text = serde_json::to_string(&v).unwrap_or_default();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    registry.scrubber().scrub_json(&mut v);
    v
}

/// Prints the JSON account of an evaluation.
pub fn explain_json(registry: &Registry, call: &Call, ev: &Evaluation) {
    json_line(&explain_value(registry, call, ev));
}

/// The registry as JSON values.
#[must_use]
pub fn tools_value(registry: &Registry) -> serde_json::Value {
    let tools: Vec<serde_json::Value> = registry
        .tools()
        .map(|t| {
            let mut v = json!({
                "name": t.name,
                "agent": t.agent,
                "source": t.source,
                "server": t.source.server(),
                "remote_name": t.source.remote_name(),
                "scope": t.scope,
                "side_effect": t.safety.side_effect,
                "permission": t.safety.permission,
                "reason": t.safety.reason,
                "deferred": t.deferred,
                "deferral_eligible": t.deferral_eligible,
                "hints": t.hints,
            });
            if let Some(pin) = t.pin {
                v["pin"] = json!(pin.as_str());
            }
            v
        })
        .collect();
    json!({
        "tools": tools,
        "skipped_servers": registry.skipped_servers(),
    })
}

/// Prints the registry as JSON.
pub fn tools_json(registry: &Registry) {
    json_line(&tools_value(registry));
}

/// The registry as a table.
#[must_use]
pub fn tools_text(registry: &Registry) -> String {
    let rows: Vec<[String; 7]> = registry
        .tools()
        .map(|t| {
            [
                t.name.clone(),
                t.agent.clone().unwrap_or_else(|| "*".into()),
                match &t.source {
                    crate::registry::ToolSource::Manifest { file, line } => {
                        format!("{file}:{line}")
                    }
                    crate::registry::ToolSource::Mcp { server, .. } => format!("mcp:{server}"),
                    crate::registry::ToolSource::Builtin => "builtin".into(),
                },
                t.scope.to_string(),
                t.safety.side_effect.to_string(),
                t.safety.permission.to_string(),
                if t.deferred {
                    "yes".into()
                } else {
                    "no".into()
                },
            ]
        })
        .collect();
    let header = [
        "NAME",
        "AGENT",
        "SOURCE",
        "SCOPE",
        "SIDE EFFECT",
        "PERMISSION",
        "DEFERRED",
    ];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s.push('\n');
        s
    };
    let mut s = line(&header.map(String::from));
    for r in &rows {
        s.push_str(&line(r));
    }
    s.push_str(&format!("\n{} tools\n", rows.len()));
    for t in registry.tools() {
        if let Some(pin) = t.pin
            && pin != crate::lock::PinState::Pinned
        {
            s.push_str(&format!(
                "{} `{}`: {}\n",
                pin.as_str(),
                t.name,
                pin.describe(t.source.server(), t.source.remote_name())
            ));
        }
    }
    for sk in registry.skipped_servers() {
        s.push_str(&format!(
            "skipped server `{}`: {} ({})\n",
            sk.server, sk.reason, sk.detail
        ));
    }
    s
}

/// Prints the registry as a table.
pub fn tools_human(registry: &Registry) {
    stdout(&crate::escape::escape_keep_lines(&tools_text(registry)));
}

/// The human test report.
#[must_use]
pub fn test_text(report: &Report, coverage: bool) -> String {
    let mut s = String::new();
    for r in report.results.iter().filter(|r| !r.passed) {
        s.push_str(&format!("FAIL {} ({}:{})\n", r.name, r.file, r.line));
        if let (Some(f), None) = (&r.failure, r.expected_decision) {
            s.push_str(&format!("     {f}\n"));
        }
        if let Some(exp) = r.expected_decision {
            s.push_str(&format!(
                "     decision: expected {exp}, actual {}{}\n",
                r.actual_decision,
                if exp == r.actual_decision {
                    ""
                } else {
                    "  <- differs"
                }
            ));
        }
        if let Some(exp) = &r.expected_matched {
            s.push_str(&format!("     matched:  expected [{}]\n", exp.join(", ")));
        }
        s.push_str(&format!(
            "     matched:  actual   [{}]\n",
            r.actual_matched.join(", ")
        ));
        if let Some(why) = &r.reject_reason {
            s.push_str(&format!("     rejected: {why}\n"));
        }
        for e in &r.errors {
            s.push_str(&format!(
                "     rule error: `{}` ({}): {}\n",
                e.id, e.counted_as, e.message
            ));
        }
    }
    if coverage {
        s.push_str(&format!(
            "coverage: {} of {} rules matched by a test or example ({:.1}%)\n",
            report.rules - report.uncovered.len(),
            report.rules,
            report.coverage()
        ));
        for id in &report.uncovered {
            s.push_str(&format!("  not covered: {id}\n"));
        }
    }
    for sk in &report.skipped {
        s.push_str(&format!(
            "skipped {sk}: its MCP server is not connected (use --connect)\n"
        ));
    }
    if report.skipped.is_empty() {
        s.push_str(&format!(
            "{} passed, {} failed\n",
            report.passed, report.failed
        ));
    } else {
        s.push_str(&format!(
            "{} passed, {} failed, {} skipped\n",
            report.passed,
            report.failed,
            report.skipped.len()
        ));
    }
    s
}

/// Prints the human test report.
pub fn test_human(report: &Report, coverage: bool) {
    stdout(&crate::escape::escape_keep_lines(&test_text(
        report, coverage,
    )));
}

/// Prints the test report as JSON.
pub fn test_json(report: &Report) {
    let mut v = serde_json::to_value(report).unwrap_or_default();
    v["coverage"] = json!(report.coverage());
    json_line(&v);
}

/// Progress while connecting to MCP servers: on standard error, only when it is a terminal.
pub fn connect_progress() -> impl Fn(crate::mcp::register::Progress) + Send + Sync {
    use crate::mcp::register::Progress;
    let tty = std::io::stderr().is_terminal();
    move |p: Progress| {
        if !tty {
            return;
        }
        match p {
            Progress::Connecting(s) => stderr(&format!("connecting  {s}\n")),
            Progress::Listed {
                server,
                tools,
                elapsed,
            } => stderr(&format!(
                "listed      {server}: {tools} tools in {} ms\n",
                elapsed.as_millis()
            )),
            Progress::Skipped(s) => stderr(&format!(
                "skipped     {}: {} ({})\n",
                s.server, s.reason, s.detail
            )),
        }
    }
}

/// `log verify` as text: one line saying whether the chain is whole, and
/// where it first breaks.
#[must_use]
pub fn log_verify_text(file: &str, report: &crate::log::chain::Report) -> String {
    let file = crate::escape::escape_keep_lines(file);
    let before = match report.before_chain {
        0 => String::new(),
        1 => "; line 1 precedes the chain and is not protected".into(),
        n => format!("; lines 1..{n} precede the chain and are not protected"),
    };
    match &report.problem {
        None => format!(
            "{file}: intact, {} line{} chained{before}\n",
            report.chained,
            if report.chained == 1 { "" } else { "s" }
        ),
        Some(p) => format!(
            "{file}:{}: {}: {}\n{} line{} chained before it{before}\n",
            p.line,
            p.kind.as_str(),
            p.message,
            report.chained,
            if report.chained == 1 { "" } else { "s" }
        ),
    }
}

/// `log verify` as one JSON object.
pub fn log_verify_json(file: &str, report: &crate::log::chain::Report) {
    json_line(&json!({
        "file": file,
        "intact": report.intact(),
        "lines": report.lines,
        "before_chain": report.before_chain,
        "chained": report.chained,
        "problem": report.problem,
    }));
}

/// `log diff` as text: the summary, the counts by change, then each call
/// that changed with the rules added (`+`) and no longer matching (`-`).
#[must_use]
pub fn log_diff_text(file: &str, report: &crate::log::diff::Report) -> String {
    use crate::escape::{escape, truncate};
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut out = format!(
        "{}: {} compared, {} changed",
        escape(file),
        plural(report.compared, "call", "calls"),
        report.changes.len()
    );
    let mut aside = Vec::new();
    if report.without_shadow > 0 {
        aside.push(format!(
            "{} without a shadow decision",
            plural(report.without_shadow, "line", "lines")
        ));
    }
    if report.shadow_errors > 0 {
        aside.push(format!(
            "{} where the shadow policy could not decide",
            plural(report.shadow_errors, "line", "lines")
        ));
    }
    if report.not_decided > 0 {
        aside.push(format!(
            "{} not decided by the policy in force",
            plural(report.not_decided, "line", "lines")
        ));
    }
    if !report.unreadable.is_empty() {
        aside.push(format!(
            "{} unreadable",
            plural(report.unreadable.len(), "line", "lines")
        ));
    }
    if !aside.is_empty() {
        out.push_str(&format!(" ({})", aside.join(", ")));
    }
    out.push('\n');
    let counts = report.by_change();
    let width = counts
        .iter()
        .map(|(f, t, _)| f.len() + t.len() + 3)
        .max()
        .unwrap_or(0);
    for (from, to, n) in &counts {
        let change = format!("{from} → {to}");
        out.push_str(&format!("  {change:<width$}  {n}\n"));
    }
    let rule = |sign: char, r: &crate::log::diff::Rule| match (&r.file, r.line) {
        (Some(f), Some(l)) => format!("    {sign} {} at {}:{l}\n", escape(&r.id), escape(f)),
        _ => format!("    {sign} {}\n", escape(&r.id)),
    };
    for c in &report.changes {
        let args = if c.args.is_null() {
            String::new()
        } else {
            format!(" {}", truncate(&c.args.to_string(), 100))
        };
        out.push_str(&format!(
            "\nline {}  {}  {}  {}{args}\n  {} → {}",
            c.line,
            escape(&c.time),
            escape(&c.front),
            escape(&c.tool),
            c.from,
            c.to
        ));
        if !c.reason.is_empty() {
            out.push_str(&format!(": {}", escape(&c.reason)));
        }
        out.push('\n');
        for r in &c.added {
            out.push_str(&rule('+', r));
        }
        for r in &c.removed {
            out.push_str(&rule('-', r));
        }
    }
    out
}

/// `log diff` as one JSON object.
pub fn log_diff_json(file: &str, report: &crate::log::diff::Report) {
    let by_change: Vec<serde_json::Value> = report
        .by_change()
        .into_iter()
        .map(|(from, to, count)| json!({"from": from, "to": to, "count": count}))
        .collect();
    json_line(&json!({
        "file": file,
        "lines": report.lines,
        "compared": report.compared,
        "unchanged": report.unchanged,
        "changed": report.changes.len(),
        "without_shadow": report.without_shadow,
        "shadow_errors": report.shadow_errors,
        "first_shadow_error": report.first_shadow_error,
        "not_decided": report.not_decided,
        "unreadable": report.unreadable,
        "by_change": by_change,
        "changes": report.changes,
    }));
}

/// `bundle verify` as text.
#[must_use]
pub fn bundle_verify_text(file: &str, result: &Result<crate::bundle::Bundle, String>) -> String {
    let file = crate::escape::escape_keep_lines(file);
    match result {
        Ok(b) => format!(
            "{file}: good, version {}, {} file{}\n{}",
            b.version(),
            b.files.len(),
            if b.files.len() == 1 { "" } else { "s" },
            b.manifest
                .files
                .iter()
                .map(|f| format!("  {}  {}\n", f.sha256, f.path))
                .collect::<String>()
        ),
        Err(why) => format!("{file}: refused: {why}\n"),
    }
}

/// `bundle verify` as one JSON object.
pub fn bundle_verify_json(file: &str, result: &Result<crate::bundle::Bundle, String>) {
    json_line(&match result {
        Ok(b) => json!({
            "file": file,
            "good": true,
            "version": b.version(),
            "sha256": b.digest,
            "files": b.manifest.files,
        }),
        Err(why) => json!({"file": file, "good": false, "error": why}),
    });
}
