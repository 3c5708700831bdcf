//! The `rules:` and `relax:` sections, their examples, and calls written in files.

use super::*;

impl Builder {
    pub(super) fn call(&mut self, file: &SourceFile, raw: &RawCall) -> Call {
        let args = raw
            .args
            .clone()
            .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new()));
        if !args.is_object() {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidCall,
                    format!(
                        "the arguments of a call to `{}` are not a mapping",
                        raw.tool.value
                    ),
                )
                .at(origin(file, &raw.tool).location())
                .help("write `args: {name: value, ...}`"),
            );
        }
        Call {
            tool: raw.tool.value.clone(),
            args,
            session: raw
                .session
                .as_ref()
                .map_or_else(Session::default, Session::from_raw),
            confined: raw.confined,
        }
    }

    pub(super) fn examples(
        &mut self,
        file: &SourceFile,
        raw: Option<&RawExamples>,
    ) -> Vec<Example> {
        // Examples are `test`'s; a load that decides calls neither runs nor checks them.
        let Some(raw) = raw.filter(|_| !self.purpose.decides()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (calls, should_match) in [(&raw.matches, true), (&raw.no_match, false)] {
            for c in calls {
                let call = self.call(file, c);
                out.push(Example {
                    call,
                    should_match,
                    origin: origin(file, &c.tool),
                });
            }
        }
        out
    }

    pub(super) fn sandbox_rule(&mut self, file: &SourceFile, raw: &RawRule) {
        self.check_id(file, &raw.id);
        let id = raw.id.value.clone();
        let action = match raw.action.value {
            Permission::Allow => {
                self.diags.push(
                    Diagnostic::new(
                        Code::SandboxAllows,
                        format!("sandbox rule `{id}` has action `allow`"),
                    )
                    .at(origin(file, &raw.action).location())
                    .label("sandbox rules may only tighten")
                    .help("use `action: prompt` or `action: deny`; to allow, write a relax rule under `relax:`"),
                );
                Decision::Deny
            }
            p => Decision::from(p),
        };
        if raw
            .reason
            .as_ref()
            .is_none_or(|r| r.value.trim().is_empty())
        {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingReason,
                    format!("sandbox rule `{id}` has no reason"),
                )
                .at(origin(file, &raw.id).location())
                .help("add `reason:`; it is what a person sees when asked or refused"),
            );
        }
        let examples = self.examples(file, raw.examples.as_ref());
        self.push_rule(
            file,
            &raw.id,
            RuleKind::Sandbox,
            raw.tools.as_ref(),
            &raw.when,
            action,
            raw.reason.as_ref().map(|r| r.value.clone()),
            raw.description.clone(),
            examples,
        );
    }

    pub(super) fn relax_rule(&mut self, file: &SourceFile, raw: &crate::model::RawRelax) {
        self.check_id(file, &raw.id);
        let id = raw.id.value.clone();
        if let Some(to) = &raw.to
            && to.value != Permission::Allow
        {
            self.diags.push(
                Diagnostic::new(
                    Code::RelaxTightens,
                    format!("relax rule `{id}` has `to: {}`", to.value),
                )
                .at(origin(file, to).location())
                .label("relax rules may only move `prompt` to `allow`")
                .help("remove `to:` (it can only be `allow`); to tighten, write a sandbox rule under `rules:`"),
            );
        }
        let examples = self.examples(file, raw.examples.as_ref());
        self.push_rule(
            file,
            &raw.id,
            RuleKind::Relax,
            raw.tools.as_ref(),
            &raw.when,
            Decision::Allow,
            raw.reason.as_ref().map(|r| r.value.clone()),
            raw.description.clone(),
            examples,
        );
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one call per rule kind, named at the call"
    )]
    pub(super) fn push_rule(
        &mut self,
        file: &SourceFile,
        id: &Spanned<String>,
        kind: RuleKind,
        tools: Option<&Vec<Spanned<String>>>,
        when: &Spanned<String>,
        action: Decision,
        reason: Option<String>,
        description: Option<String>,
        examples: Vec<Example>,
    ) {
        let default_tools = [Spanned::new("*".to_string(), id.referenced)];
        let patterns: Vec<&Spanned<String>> = match tools {
            Some(t) => t.iter().collect(),
            None => default_tools.iter().collect(),
        };
        let (set, written) = name_globset(self, file, patterns);
        if let Some((when, when_origin)) = self.compile_rule(file, id, kind, when) {
            self.rules.push(Arc::new(Rule {
                id: id.value.clone(),
                kind,
                description,
                tool_patterns: written,
                tools: set,
                when,
                when_origin,
                action,
                reason,
                examples,
                origin: origin(file, id),
            }));
        }
    }
}
