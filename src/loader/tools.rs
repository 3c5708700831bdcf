//! The `tools:` section, and what every rule-bearing section shares: ids, safety, CEL compilation.

use super::*;

impl Builder {
    pub(super) fn check_id(&mut self, file: &SourceFile, id: &Spanned<String>) {
        let here = origin(file, id);
        if !valid_id(&id.value) {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("invalid rule id `{}`", id.value),
                )
                .at(here.location())
                .help("ids are lowercase: `[a-z0-9][a-z0-9_.-]*`"),
            );
        }
        if let Some(first) = self.ids.get(&id.value) {
            self.diags.push(
                Diagnostic::new(Code::DuplicateId, format!("duplicate rule id `{}`", id.value))
                    .at(here.location())
                    .label("used again here")
                    .help(format!(
                        "first used at {}:{}; ids are unique across rules, relax rules and reject rules",
                        first.file.name,
                        first.line()
                    )),
            );
        } else {
            self.ids.insert(id.value.clone(), here);
        }
    }

    pub(super) fn safety(&mut self, file: &SourceFile, raw: &RawSafety, what: &str) -> Safety {
        let reason = raw.reason.as_ref().map(|r| r.value.clone());
        if raw.permission.value != Permission::Allow
            && reason.as_deref().is_none_or(|r| r.trim().is_empty())
        {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingReason,
                    format!(
                        "{what} has permission `{}` but no reason",
                        raw.permission.value
                    ),
                )
                .at(origin(file, &raw.permission).location())
                .help("add `reason:`; it is what a person sees when asked or refused"),
            );
        }
        Safety {
            side_effect: raw.side_effect.value,
            permission: raw.permission.value,
            reason,
        }
    }

    pub(super) fn compile_rule(
        &mut self,
        file: &SourceFile,
        id: &Spanned<String>,
        kind: RuleKind,
        when: &Spanned<String>,
    ) -> Option<(crate::cel::Expression, Origin)> {
        self.compile_expr(
            file,
            &format!("{} `{}`", kind.as_str(), id.value),
            when,
            true,
        )
    }

    /// Compiles one CEL expression written in `file`; `what` names it in messages.
    pub(super) fn compile_expr(
        &mut self,
        file: &SourceFile,
        what: &str,
        when: &Spanned<String>,
        allow_call: bool,
    ) -> Option<(crate::cel::Expression, Origin)> {
        let when_origin = origin(file, when);
        let cx = crate::cel::CompileCtx {
            lists: &self.lists,
            allow_call,
            case_insensitive: self.settings.case_insensitive,
        };
        if let Some(expr) = self
            .shelf
            .as_ref()
            .and_then(|shelf| shelf.get(&when.value, allow_call))
            .and_then(|stored| {
                self.cel
                    .restore(&when.value, stored, &mut self.patterns, &cx)
            })
        {
            return Some((expr, when_origin));
        }
        match self.cel.compile(&when.value, &mut self.patterns, &cx) {
            Ok(expr) => {
                if let Some(shelf) = &mut self.shelf
                    && let Some(stored) = expr.to_stored(&self.patterns, &self.lists)
                {
                    shelf.add(&when.value, allow_call, stored);
                }
                Some((expr, when_origin))
            }
            Err(errors) => {
                // Positions in the value mapped to the file: only for errors.
                let map = ScalarMap::new(
                    &file.text,
                    when_origin.span.offset,
                    when_origin.span.offset + when_origin.span.len,
                    &when.value,
                );
                for e in errors {
                    let (a, b) = map.range(e.start, e.end);
                    let code = match e.kind {
                        ExprErrorKind::Syntax => Code::CelSyntax,
                        ExprErrorKind::UnknownVariable => Code::CelUnknownVariable,
                        ExprErrorKind::UnknownFunction => Code::CelUnknownFunction,
                        ExprErrorKind::InvalidGlob => Code::InvalidGlob,
                        ExprErrorKind::InvalidRegex => Code::InvalidRegex,
                        ExprErrorKind::UnknownList => Code::UnknownList,
                        ExprErrorKind::TooLarge => Code::CelTooLarge,
                        ExprErrorKind::Cost => Code::CelCost,
                        ExprErrorKind::UnknownField => Code::CelUnknownField,
                        ExprErrorKind::TypeMismatch => Code::TypeMismatch,
                    };
                    let help = match e.kind {
                        _ if e.help.is_some() => e.help.clone().unwrap_or_default(),
                        ExprErrorKind::UnknownField => "docs/cel.md lists the fields of `tool`, `session` and `call`".to_string(),
                        ExprErrorKind::TypeMismatch => "docs/cel.md gives each variable's type; `args` is dynamic: convert it with `int()`, `string()` and the like".to_string(),
                        ExprErrorKind::Syntax => "check the CEL syntax near the marked position; strings in CEL use double quotes inside a single-quoted YAML value".to_string(),
                        ExprErrorKind::UnknownVariable => "the variables are `tool`, `args`, `session`, `call` and `lists`".to_string(),
                        ExprErrorKind::UnknownList => {
                            let name = e.message.split('`').nth(1).unwrap_or("");
                            match closest(name, self.lists.keys().map(String::as_str)) {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "define it under `lists:` in some file".to_string(),
                            }
                        }
                        ExprErrorKind::UnknownFunction => {
                            let name = e.message.split('`').nth(1).unwrap_or("");
                            let all = crate::cel::functions::FUNCTIONS;
                            match closest(name, all.iter().copied()) {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "zero-policy adds `glob`, `path_clean`, `path_under`, `shell_parses` and `shell_commands` to standard CEL".to_string(),
                            }
                        }
                        ExprErrorKind::InvalidGlob => "`*` stays in one path segment, `**` crosses them; escape literal metacharacters with `[...]`".to_string(),
                        ExprErrorKind::TooLarge => "split the condition into several rules, or move long literal lists under `lists:`".to_string(),
                        ExprErrorKind::Cost => "iterate over `lists:` or a single argument rather than nesting comprehensions over call arguments, and compare strings rather than building them".to_string(),
                        ExprErrorKind::InvalidRegex => "the syntax is RE2's (Rust `regex` crate); escape backslashes once for CEL".to_string(),
                    };
                    self.diags.push(
                        Diagnostic::new(code, format!("{what}: {}", e.message))
                            .at(Location {
                                file: file.clone(),
                                span: Span {
                                    offset: a,
                                    len: b - a,
                                },
                            })
                            .label(match e.kind {
                                ExprErrorKind::Syntax => "the expression breaks here".to_string(),
                                _ => e.message.clone(),
                            })
                            .help(help),
                    );
                }
                None
            }
        }
    }

    /// Adds one tool; `schema`, if given, is its `parameters` (taken out of `raw`).
    pub(super) fn tool(
        &mut self,
        file: &SourceFile,
        raw: &RawTool,
        schema: Option<serde_json::Value>,
    ) {
        let here = origin(file, &raw.name);
        let name = raw.name.value.clone();
        if !valid_tool_name(&name) {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, format!("invalid tool name `{name}`"))
                    .at(here.location())
                    .help("tool names are 1 to 128 of `A-Z a-z 0-9 _ . -`"),
            );
        }
        let key = (self.agent.clone(), name.clone());
        if let Some(first) = self.tool_names.get(&key) {
            self.diags.push(
                Diagnostic::new(Code::DuplicateTool, format!("duplicate tool `{name}`"))
                    .at(here.location())
                    .label("declared again here")
                    .help(format!(
                        "first declared at {}:{}; tool names are unique within an agent (files without `agent:` share theirs with every agent)",
                        first.file.name,
                        first.line()
                    )),
            );
        } else {
            self.tool_names.insert(key, here.clone());
        }
        let parameters = schema.unwrap_or_else(|| {
            raw.parameters.as_ref().map_or_else(
                || serde_json::json!({"type": "object"}),
                |p| p.value.clone(),
            )
        });
        // A load that decides calls compiles the schema when the tool is called.
        if !self.purpose.decides()
            && let Err(e) = jsonschema::draft202012::new(&parameters)
        {
            let at = raw
                .parameters
                .as_ref()
                .map_or_else(|| here.clone(), |p| origin(file, p));
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidSchema,
                    format!("parameters of `{name}` are not a valid JSON Schema"),
                )
                .at(at.location())
                .label(e.to_string())
                .help("`parameters` is a JSON Schema (draft 2020-12) for the arguments object"),
            );
        }
        // A lint: a load that decides calls does not look.
        if let Some(p) = &raw.parameters
            && !self.purpose.decides()
        {
            self.stray_schema_keys(file, p, &name);
        }
        let safety = self.safety(file, &raw.safety, &format!("tool `{name}`"));
        let mut reject = Vec::new();
        for r in &raw.reject {
            self.check_id(file, &r.id);
            if let Some((when, when_origin)) =
                self.compile_rule(file, &r.id, RuleKind::Reject, &r.when)
            {
                reject.push(Arc::new(Rule {
                    id: r.id.value.clone(),
                    kind: RuleKind::Reject,
                    description: None,
                    tool_patterns: vec![(name.clone(), here.clone())],
                    tools: crate::policy::NameGlobs::exact(&name),
                    when,
                    when_origin,
                    action: Decision::Reject,
                    reason: Some(r.message.clone()),
                    examples: Vec::new(),
                    origin: origin(file, &r.id),
                }));
            }
        }
        let deferred = raw.deferred.unwrap_or(false);
        let effects = raw
            .effects
            .as_ref()
            .map(|e| Arc::new(self.effects(file, e, &format!("tool `{name}`"))));
        self.tools.push(ToolDef {
            effects,
            agent: self.agent.clone(),
            name,
            description: raw.description.clone(),
            scope: raw.scope.value,
            safety,
            parameters: std::sync::Arc::new(parameters),
            deferred,
            deferral_eligible: raw.deferral_eligible.unwrap_or(deferred),
            reject,
            origin: here,
        });
    }

    pub(super) fn env_string(
        &mut self,
        file: &SourceFile,
        v: &Spanned<String>,
        what: &str,
    ) -> EnvString {
        let mut rest = v.value.as_str();
        while let Some(i) = rest.find("${") {
            let after = &rest[i + 2..];
            let ok = after.strip_prefix("env:").and_then(|a| {
                let end = a.find('}')?;
                let name = &a[..end];
                (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                    .then_some(&a[end + 1..])
            });
            match ok {
                Some(r) => rest = r,
                None => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidEnvReference,
                            format!("malformed `${{...}}` in {what}"),
                        )
                        .at(origin(file, v).location())
                        .help("write `${env:NAME}` with NAME made of letters, digits and `_`"),
                    );
                    break;
                }
            }
        }
        EnvString(v.value.clone())
    }

    pub(super) fn check_literal_secret(
        &mut self,
        file: &SourceFile,
        key: &str,
        v: &Spanned<String>,
        what: &str,
    ) {
        let without_refs = strip_env_refs(&v.value);
        if crate::scrub::Scrubber::builtin().contains_secret(&format!("{key}={without_refs}"))
            || crate::scrub::Scrubber::builtin().contains_secret(&format!("{key}: {without_refs}"))
        {
            self.diags.push(
                Diagnostic::new(
                    Code::LiteralSecret,
                    format!("{what} `{key}` holds a literal credential"),
                )
                .at(origin(file, v).location())
                .label("literal secret")
                .help({
                    let var = key.to_uppercase().replace('-', "_");
                    let scheme = v
                        .value
                        .split_once(' ')
                        .filter(|(s, _)| matches!(s.to_ascii_lowercase().as_str(), "bearer" | "basic" | "token"))
                        .map(|(s, _)| format!("{s} "))
                        .unwrap_or_default();
                    format!("read it from the host environment instead: `{key}: \"{scheme}${{env:{var}}}\"`")
                }),
            );
        }
    }

    pub(super) fn partial_safety(raw: Option<&RawPartialSafety>, base: &Safety) -> Safety {
        let Some(raw) = raw else {
            return base.clone();
        };
        Safety {
            side_effect: raw
                .side_effect
                .as_ref()
                .map_or(base.side_effect, |s| s.value),
            permission: raw.permission.as_ref().map_or(base.permission, |s| s.value),
            reason: raw
                .reason
                .as_ref()
                .map(|r| r.value.clone())
                .or_else(|| base.reason.clone()),
        }
    }

    /// Compiles a tool's (or an MCP override's) `effects:` expressions.
    pub(super) fn effects(
        &mut self,
        file: &SourceFile,
        raw: &RawEffects,
        what: &str,
    ) -> ToolEffects {
        let mut out = ToolEffects::default();
        #[expect(clippy::type_complexity, reason = "one table of the eight keys")]
        let keys: [(
            &str,
            &Option<Spanned<String>>,
            &[&str],
            &mut Option<crate::cel::Expression>,
        ); 8] = [
            ("shell", &raw.shell, &["a string"], &mut out.shell),
            ("cwd", &raw.cwd, &["a string"], &mut out.cwd),
            ("reads", &raw.reads, &["a list", "a string"], &mut out.reads),
            ("lists", &raw.lists, &["a list", "a string"], &mut out.lists),
            (
                "writes",
                &raw.writes,
                &["a list", "a string"],
                &mut out.writes,
            ),
            (
                "fetches",
                &raw.fetches,
                &["a list", "a string"],
                &mut out.fetches,
            ),
            ("patch", &raw.patch, &["a string"], &mut out.patch),
            ("runs_code", &raw.runs_code, &["a bool"], &mut out.runs_code),
        ];
        for (key, src, allowed, slot) in keys {
            let Some(src) = src else { continue };
            let label = format!("effect `{key}` of {what}");
            if let Some((expr, at)) = self.compile_expr(file, &label, src, false) {
                if let Some(kind) = expr.literal_kind()
                    && !allowed.contains(&kind)
                {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidEffect,
                            format!("{label} is {kind}, not {}", allowed[0]),
                        )
                        .at(at.location())
                        .help(match key {
                            "reads" | "lists" | "writes" | "fetches" => {
                                format!("write a CEL list of strings: `{key}: '[args.path]'`")
                            }
                            "runs_code" => "write a CEL bool: `runs_code: 'true'`".to_string(),
                            _ => format!("write a CEL string: `{key}: args.command`"),
                        }),
                    );
                    continue;
                }
                *slot = Some(expr);
            }
        }
        out
    }

    /// Warns of each key of a schema in `parameters` that is no JSON Schema
    /// keyword and has no value ([`Code::StraySchemaKey`]), placed at the key
    /// where the text shows it.
    fn stray_schema_keys(
        &mut self,
        file: &SourceFile,
        parameters: &Spanned<serde_json::Value>,
        tool: &str,
    ) {
        let stray = crate::arguments::stray_keys(&parameters.value);
        let start = parameters.referenced.offset.unwrap_or(0);
        for key in stray {
            let at = match file
                .text
                .get(start..)
                .and_then(|rest| rest.find(key.as_str()))
            {
                Some(i) => Location {
                    file: file.clone(),
                    span: Span {
                        offset: start + i,
                        len: key.len(),
                    },
                },
                None => origin(file, parameters).location(),
            };
            self.diags.push(
                Diagnostic::new(
                    Code::StraySchemaKey,
                    format!("`{key}` in the parameters of `{tool}` is no JSON Schema keyword and has no value"),
                )
                .at(at)
                .help("a YAML flow mapping ends a value at `, `: quote the text before it (`description: \"First line, 0-based.\"`)"),
            );
        }
    }
}
