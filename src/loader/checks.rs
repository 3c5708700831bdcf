//! Checks that need every file: relax rules against tools, `tools:` globs, example calls.

use super::*;

impl Builder {
    /// Checks that need every file: relax rules against tools, connect timeouts.
    pub(super) fn cross_checks(&mut self) {
        let default_timeout = self.settings.connect_timeout;
        for s in &mut self.servers {
            if s.connect_timeout.is_zero() {
                s.connect_timeout = default_timeout;
            }
        }
        self.name_collisions();
        // The tools each distinct `tools:` pattern matches, found once: a
        // literal name is looked up, a glob matched against every tool.
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (k, t) in self.tools.iter().enumerate() {
            by_name.entry(t.name.as_str()).or_default().push(k);
        }
        // `None` for a pattern that is not a glob (reported where it is read).
        let mut tools_of: HashMap<&str, Option<Vec<usize>>> = HashMap::new();
        for rule in &self.rules {
            for (pattern, _) in &rule.tool_patterns {
                tools_of.entry(pattern.as_str()).or_insert_with(|| {
                    match crate::policy::NameGlobs::new([pattern.as_str()]) {
                        Ok(m) if m.is_literal() => {
                            Some(by_name.get(pattern.as_str()).cloned().unwrap_or_default())
                        }
                        Ok(m) => Some(
                            (0..self.tools.len())
                                .filter(|&k| m.is_match(&self.tools[k].name))
                                .collect(),
                        ),
                        Err(_) => None,
                    }
                });
            }
        }
        for rule in &self.rules {
            if rule.kind != RuleKind::Relax {
                continue;
            }
            let mut ks: Vec<usize> = rule
                .tool_patterns
                .iter()
                .filter_map(|(p, _)| tools_of.get(p.as_str()).and_then(Option::as_ref))
                .flatten()
                .copied()
                .collect();
            ks.sort_unstable();
            ks.dedup();
            let matched: Vec<&ToolDef> = ks.into_iter().map(|k| &self.tools[k]).collect();
            let denied: Vec<&str> = matched
                .iter()
                .filter(|t| t.safety.permission == Permission::Deny)
                .map(|t| t.name.as_str())
                .collect();
            if !denied.is_empty() {
                self.diags.push(
                    Diagnostic::new(
                        Code::RelaxOnDeny,
                        format!(
                            "relax rule `{}` matches {} whose permission is `deny`",
                            rule.id,
                            backticked(&denied)
                        ),
                    )
                    .at(rule.origin.location())
                    .label("nothing relaxes a deny")
                    .help("narrow the rule's `tools:` so it matches only tools whose permission is `prompt`"),
                );
            } else if !matched.is_empty()
                && matched
                    .iter()
                    .all(|t| t.safety.permission == Permission::Allow)
                && !self.could_match_mcp(&rule.tool_patterns)
            {
                self.diags.push(
                    Diagnostic::new(
                        Code::RelaxNoop,
                        format!(
                            "relax rule `{}` matches only tools that are already `allow`",
                            rule.id
                        ),
                    )
                    .at(rule.origin.location())
                    .label("never changes a decision")
                    .help(
                        "point `tools:` at tools whose permission is `prompt`, or remove the rule",
                    ),
                );
            }
        }
        let mut unknown = Vec::new();
        // A hook does not read the other agents' tools, which a pattern may be
        // meant for; one that matches nothing changes no decision (`lint` says so).
        let for_one_agent = matches!(self.purpose, super::Purpose::DecideFor(_));
        for rule in self.rules.iter().filter(|_| !for_one_agent) {
            for (pattern, at) in &rule.tool_patterns {
                let Some(Some(ks)) = tools_of.get(pattern.as_str()) else {
                    continue;
                };
                if !ks.is_empty()
                    || self.could_match_mcp(std::slice::from_ref(&(pattern.clone(), at.clone())))
                {
                    continue;
                }
                let help = match closest(pattern, self.tools.iter().map(|t| t.name.as_str())) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "`tools:` globs are matched against final tool names (MCP tools are named by `settings.mcp_name_format`)".to_string(),
                };
                unknown.push(
                    Diagnostic::new(
                        Code::UnknownToolPattern,
                        format!(
                            "`{pattern}` in the `tools:` of `{}` matches no tool",
                            rule.id
                        ),
                    )
                    .at(at.location())
                    .help(help),
                );
            }
        }
        self.diags.extend(unknown);
        let mut calls = Vec::new();
        for rule in &self.rules {
            for ex in &rule.examples {
                calls.push((ex.call.tool.clone(), ex.origin.clone()));
            }
        }
        // Tests may name unknown tools on purpose (to test the rejection); examples may not.
        for (tool, at) in calls {
            if self.tools.iter().any(|t| t.name == tool) || self.could_be_mcp_tool(&tool) {
                continue;
            }
            let help = match closest(&tool, self.tools.iter().map(|t| t.name.as_str())) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "name a tool declared in a manifest".to_string(),
            };
            self.diags.push(
                Diagnostic::new(Code::InvalidCall, format!("call to unknown tool `{tool}`"))
                    .at(at.location())
                    .help(help),
            );
        }
    }

    /// The literal name prefix of each server's MCP tools: `mcp__{server}__`.
    pub(super) fn mcp_prefixes(&self) -> Vec<String> {
        self.servers
            .iter()
            .map(|s| {
                crate::names::mcp_name_prefix(
                    s.name_format(&self.settings.mcp_name_format),
                    &s.name,
                )
            })
            .collect()
    }

    /// Two servers whose tool names could be one name are a load error: each
    /// server's names start with a literal prefix (`mcp__github__`; nothing
    /// for `{tool}`), and two names can only be equal when one prefix starts
    /// the other. So unprefixed names are for a policy with one server.
    fn name_collisions(&mut self) {
        let prefixes = self.mcp_prefixes();
        let mut found = Vec::new();
        for (j, b) in self.servers.iter().enumerate() {
            for (i, a) in self.servers.iter().enumerate().take(j) {
                let (pa, pb) = (&prefixes[i], &prefixes[j]);
                if !(pa.starts_with(pb.as_str()) || pb.starts_with(pa.as_str())) {
                    continue;
                }
                // Said where a format was written, else at the later server.
                let at = b
                    .mcp_name_format
                    .as_ref()
                    .or(a.mcp_name_format.as_ref())
                    .map_or(&b.origin, |(_, o)| o);
                let shown = |p: &str| {
                    if p.is_empty() {
                        "any name".to_string()
                    } else {
                        format!("`{p}…`")
                    }
                };
                found.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!(
                            "the tool names of servers `{}` ({}) and `{}` ({}) could collide",
                            a.name,
                            shown(pa),
                            b.name,
                            shown(pb)
                        ),
                    )
                    .at(at.location())
                    .help("give each server a prefix no other server's names start with (`mcp__{server}__{tool}` does); unprefixed names (`{tool}`) are for a policy with a single server"),
                );
            }
        }
        self.diags.extend(found);
    }

    /// Whether a glob could match some MCP tool name of a declared server.
    pub(super) fn could_match_mcp(&self, patterns: &[(String, Origin)]) -> bool {
        let prefixes = self.mcp_prefixes();
        patterns.iter().any(|(p, _)| {
            let literal: String = p
                .chars()
                .take_while(|c| !matches!(c, '*' | '?' | '[' | '{'))
                .collect();
            prefixes
                .iter()
                .any(|pre| pre.starts_with(&literal) || literal.starts_with(pre.as_str()))
        })
    }

    pub(super) fn could_be_mcp_tool(&self, name: &str) -> bool {
        self.mcp_prefixes()
            .iter()
            .any(|p| name.starts_with(p.as_str()))
    }
}
