//! The `servers:` section: MCP servers and the safety the host imposes on them.

use super::*;

impl Builder {
    pub(super) fn server(&mut self, file: &SourceFile, raw: &RawServer) {
        let here = origin(file, &raw.name);
        let name = raw.name.value.clone();
        if !valid_server_name(&name) {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, format!("invalid server name `{name}`"))
                    .at(here.location())
                    .help("server names are lowercase: `[a-z0-9][a-z0-9_-]*`"),
            );
        }
        if let Some(first) = self.servers.iter().find(|s| s.name == name) {
            self.diags.push(
                Diagnostic::new(Code::DuplicateTool, format!("duplicate server `{name}`"))
                    .at(here.location())
                    .help(format!(
                        "first declared at {}:{}",
                        first.origin.file.name,
                        first.origin.line()
                    )),
            );
        }
        let transport = raw.transport.value;
        match transport {
            Transport::Stdio => {
                if raw.command.is_none() {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("stdio server `{name}` has no `command`"),
                        )
                        .at(origin(file, &raw.transport).location())
                        .help("a stdio server is a program to start: add `command:` (and `args:`)"),
                    );
                }
                if let Some(u) = &raw.url {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("stdio server `{name}` has a `url`"),
                        )
                        .at(origin(file, u).location())
                        .help("`url` is for `transport: http` or `sse`"),
                    );
                }
            }
            Transport::Http | Transport::Sse => {
                if raw.url.is_none() {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("server `{name}` has no `url`"),
                        )
                        .at(origin(file, &raw.transport).location())
                        .help("an http or sse server is reached at a `url:`"),
                    );
                }
                if let Some(c) = &raw.command {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("server `{name}` has a `command` but is not stdio"),
                        )
                        .at(origin(file, c).location())
                        .help("`command` is for `transport: stdio`"),
                    );
                }
            }
        }
        let mut env = BTreeMap::new();
        for (k, v) in &raw.env {
            self.check_literal_secret(file, k, v, "environment variable");
            env.insert(k.clone(), self.env_string(file, v, "`env`"));
        }
        let mut headers = BTreeMap::new();
        for (k, v) in &raw.headers {
            self.check_literal_secret(file, k, v, "header");
            headers.insert(k.clone(), self.env_string(file, v, "`headers`"));
        }
        let url = raw.url.as_ref().map(|u| self.env_string(file, u, "`url`"));
        let connect_timeout = match &raw.connect_timeout {
            Some(t) => match parse_duration(&t.value) {
                Ok(d) => d,
                Err(e) => {
                    self.diags.push(
                        Diagnostic::new(Code::InvalidValue, e).at(origin(file, t).location()),
                    );
                    self.settings.connect_timeout
                }
            },
            // INVARIANT: settings are read before servers only within one file; a
            // zero duration marks "use settings.connect_timeout" and is resolved in cross_checks.
            None => Duration::ZERO,
        };
        let default_include = [Spanned::new("*".to_string(), raw.name.referenced)];
        let include_src: Vec<&Spanned<String>> = match &raw.include {
            Some(v) => v.iter().collect(),
            None => default_include.iter().collect(),
        };
        let (include, include_written) = name_globset(self, file, include_src);
        let (exclude, _) = name_globset(self, file, raw.exclude.iter());
        let base = Safety {
            side_effect: SideEffect::Network,
            permission: Permission::Prompt,
            reason: None,
        };
        let safety = Self::partial_safety(raw.safety.as_ref(), &base);
        let mut overrides = Vec::new();
        for o in &raw.overrides {
            let (tools, written) = name_globset(self, file, o.tools.iter());
            let s = Self::partial_safety(o.safety.as_ref(), &safety);
            let at = o
                .tools
                .first()
                .map_or_else(|| here.clone(), |t| origin(file, t));
            let effects = o
                .effects
                .as_ref()
                .map(|e| Arc::new(self.effects(file, e, &format!("server `{name}`'s override"))));
            overrides.push(Override {
                effects,
                patterns: written.into_iter().map(|(p, _)| p).collect(),
                tools,
                safety: s,
                origin: at,
            });
        }
        let sandbox = raw.sandbox.as_ref().and_then(|s| {
            let command = raw.command.as_ref().map_or("", |c| c.value.as_str());
            self.server_sandbox(file, &name, &raw.name, s, command)
        });
        // A resource read is decided as a read of its URI (docs/gateway.md):
        // the gateway passes `path` for a `file:` URI, `url` for an http(s) one.
        let resource_effects = {
            let at = raw.name.referenced;
            let fx = RawEffects {
                reads: Some(Spanned::new(
                    "has(args.path) ? [args.path] : []".to_string(),
                    at,
                )),
                fetches: Some(Spanned::new(
                    "has(args.url) ? [args.url] : []".to_string(),
                    at,
                )),
                ..RawEffects::default()
            };
            Some(Arc::new(self.effects(
                file,
                &fx,
                &format!("server `{name}`'s resource reads"),
            )))
        };
        let mcp_name_format = raw.mcp_name_format.as_ref().and_then(|f| {
            if f.value.contains("{tool}") {
                Some((f.value.clone(), origin(file, f)))
            } else {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("server `{name}`'s `mcp_name_format` has no `{{tool}}`"),
                    )
                    .at(origin(file, f).location())
                    .help("its tools would all get the same name; include `{tool}`, e.g. `{tool}` or `{server}_{tool}`"),
                );
                None
            }
        });
        self.servers.push(ServerDef {
            mcp_name_format,
            resource_effects,
            allow: raw.allow.clone(),
            name,
            transport,
            command: raw.command.as_ref().map(|c| c.value.clone()),
            args: raw.args.clone(),
            env,
            url,
            headers,
            connect_timeout,
            include_patterns: include_written.into_iter().map(|(p, _)| p).collect(),
            include,
            exclude,
            safety,
            overrides,
            sandbox,
            origin: here,
        });
    }

    /// The envelope of a confined stdio server: the policy's reads, denies,
    /// exec and limits, and the server's own reads, writes and network.
    fn server_sandbox(
        &mut self,
        file: &SourceFile,
        name: &str,
        at: &Spanned<String>,
        raw: &crate::model::RawServerSandbox,
        command: &str,
    ) -> Option<crate::sandbox::Envelope> {
        let cwd = std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "/".into());
        let home = self.settings.home.clone();
        let place = |p: &str| -> String {
            let full = if p == "~" {
                home.clone()
            } else if let Some(rest) = p.strip_prefix("~/") {
                format!("{}/{rest}", home.trim_end_matches('/'))
            } else if p.starts_with('/') {
                p.to_string()
            } else {
                format!("{cwd}/{p}")
            };
            crate::effects::paths::escape(&crate::effects::paths::clean(&full))
        };
        let fx = crate::effects::Effects {
            reads: raw.reads.iter().map(|r| place(&r.value)).collect(),
            writes: raw.writes.iter().map(|w| place(&w.value)).collect(),
            ..crate::effects::Effects::default()
        };
        let mut enforce = self.settings.enforce.clone();
        enforce.writes = crate::model::WriteScope::Predicted;
        enforce.network = raw
            .network
            .as_ref()
            .map_or(crate::model::NetworkScope::None, |n| n.value);
        let lists: BTreeMap<String, Vec<String>> = (*self.lists).clone();
        let cx = crate::sandbox::plan::Context {
            enforce: &enforce,
            lists: &lists,
            home: &home,
            workspace: &cwd,
        };
        match crate::sandbox::plan::envelope(&cx, &fx) {
            // Exact reads and writes, no code run: the server writes only
            // what it names. Its own program may run, from where it is.
            Ok(mut envelope) => {
                // Deny globs that begin with `**` are looked for where the
                // server reads and writes, besides the gateway's folder.
                envelope.search.extend(
                    raw.reads
                        .iter()
                        .chain(&raw.writes)
                        .filter_map(|p| crate::sandbox::plan::folder_of(&place(&p.value))),
                );
                envelope.search.sort();
                envelope.search.dedup();
                for program in program_places(command) {
                    if let Some(folder) = program.parent() {
                        envelope.exec.push(folder.to_path_buf());
                    }
                }
                envelope.exec.sort();
                envelope.exec.dedup();
                Some(envelope)
            }
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("server `{name}`'s sandbox cannot be built: {e}"),
                    )
                    .at(origin(file, at).location()),
                );
                None
            }
        }
    }
}

/// Where a server's program is: as found on `PATH` (or as written, with a
/// `/`), and where that leads through links.
fn program_places(command: &str) -> Vec<std::path::PathBuf> {
    let found = if command.contains('/') {
        Some(std::path::PathBuf::from(command))
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(command))
                .find(|p| p.is_file())
        })
    };
    let mut out = Vec::new();
    if let Some(p) = found {
        if let Ok(real) = std::fs::canonicalize(&p) {
            out.push(real);
        }
        out.push(std::path::absolute(&p).unwrap_or(p));
    }
    out
}
