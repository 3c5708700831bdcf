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
                .map(|mut envelope| {
                    // What the entry gives the server by name (`env:
                    // {GITHUB_TOKEN: ${env:GITHUB_TOKEN}}`) it keeps; the
                    // rest of the gateway's secrets it does not get.
                    envelope.keep_env = raw.env.keys().cloned().collect();
                    envelope
                })
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
        let auth = raw
            .auth
            .as_ref()
            .and_then(|a| self.server_auth(file, &name, raw, a));
        self.servers.push(ServerDef {
            auth,
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

    /// `servers[].auth`, checked: http only; a secret only from the
    /// environment and only with a client id; a client metadata URL that is
    /// https with a path; `client_credentials` with both id and secret.
    fn server_auth(
        &mut self,
        file: &SourceFile,
        name: &str,
        raw: &RawServer,
        a: &crate::model::RawServerAuth,
    ) -> Option<crate::policy::ServerAuth> {
        let at = origin(file, &a.kind);
        let before = self.diags.len();
        if raw.transport.value != Transport::Http {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("server `{name}` has `auth` but is not `transport: http`"),
                )
                .at(at.location())
                .help("MCP authorization is defined for streamable HTTP servers"),
            );
        }
        if let Some(secret) = &a.client_secret {
            if !secret.value.contains("${env:") {
                self.diags.push(
                    Diagnostic::new(
                        Code::LiteralSecret,
                        format!("server `{name}`'s `client_secret` is written literally"),
                    )
                    .at(origin(file, secret).location())
                    .label("literal secret")
                    .help("read it from the host environment: `client_secret: \"${env:NAME}\"`"),
                );
            }
            if a.client_id.is_none() {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("server `{name}` has a `client_secret` but no `client_id`"),
                    )
                    .at(origin(file, secret).location())
                    .help(
                        "a secret belongs to a client registered in advance: add its `client_id`",
                    ),
                );
            }
        }
        if let Some(u) = &a.client_metadata_url {
            let good = url::Url::parse(&u.value)
                .is_ok_and(|p| p.scheme() == "https" && p.host().is_some() && p.path() != "/");
            if !good {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("server `{name}`'s `client_metadata_url` is not an https URL with a path"),
                    )
                    .at(origin(file, u).location())
                    .help("the URL is the client id: `https://example.com/zero-policy/client.json`"),
                );
            }
        }
        let grant = a
            .grant
            .as_ref()
            .map_or(crate::model::AuthGrant::AuthorizationCode, |g| g.value);
        if grant == crate::model::AuthGrant::ClientCredentials
            && (a.client_id.is_none() || a.client_secret.is_none())
        {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("server `{name}` uses `client_credentials` without `client_id` and `client_secret`"),
                )
                .at(a.grant.as_ref().map_or_else(|| at.clone(), |g| origin(file, g)).location())
                .help("a machine client authenticates as itself: give its `client_id` and `client_secret: \"${env:NAME}\"`"),
            );
        }
        let client_id = a
            .client_id
            .as_ref()
            .map(|c| self.env_string(file, c, "`client_id`"));
        let client_secret = a
            .client_secret
            .as_ref()
            .map(|c| self.env_string(file, c, "`client_secret`"));
        let home = self.settings.home.clone();
        let token_cache = a.token_cache.as_ref().map(|t| {
            let p = &t.value;
            if let Some(rest) = p.strip_prefix("~/") {
                PathBuf::from(format!("{}/{rest}", home.trim_end_matches('/')))
            } else {
                PathBuf::from(p)
            }
        });
        (self.diags.len() == before).then(|| crate::policy::ServerAuth {
            grant,
            client_id,
            client_secret,
            client_metadata_url: a.client_metadata_url.as_ref().map(|u| u.value.clone()),
            scopes: a.scopes.clone(),
            redirect_port: a.redirect_port,
            open: a.open.clone(),
            token_cache,
        })
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

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]
    use crate::diagnostic::{Code, SourceFile};
    use crate::model::AuthGrant;

    fn load(servers: &str) -> crate::loader::Loaded {
        let text = format!("version: 1\nservers:\n{servers}");
        crate::loader::load_sources(vec![SourceFile::new(
            std::path::Path::new("servers.yaml"),
            text,
        )])
    }

    fn messages(loaded: &crate::loader::Loaded) -> Vec<(Code, String)> {
        loaded
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.clone()))
            .collect()
    }

    #[test]
    fn an_oauth_entry_loads_with_its_defaults() {
        let loaded = load(
            "  - name: remote\n    transport: http\n    url: https://mcp.example.com/mcp\n    auth:\n      type: oauth\n      client_id: zp\n      client_secret: \"${env:ZP_SECRET}\"\n      scopes: [read]\n      token_cache: ~/.cache/zp/remote.json\n",
        );
        assert_eq!(messages(&loaded), vec![]);
        let policy = loaded.policy.unwrap();
        let auth = policy.servers[0].auth.as_ref().unwrap();
        assert_eq!(auth.grant, AuthGrant::AuthorizationCode);
        assert_eq!(auth.client_secret.as_ref().unwrap().0, "${env:ZP_SECRET}");
        assert_eq!(auth.scopes, vec!["read".to_string()]);
        assert!(
            auth.token_cache
                .as_ref()
                .unwrap()
                .ends_with(".cache/zp/remote.json")
        );
        assert!(!auth.token_cache.as_ref().unwrap().starts_with("~"));
    }

    #[test]
    fn a_bad_oauth_entry_is_refused_with_a_reason_each() {
        let loaded = load(concat!(
            "  - name: local\n    transport: stdio\n    command: x\n    auth: {type: oauth}\n",
            "  - name: literal\n    transport: http\n    url: http://x/mcp\n    auth: {type: oauth, client_id: a, client_secret: hunter2}\n",
            "  - name: orphan\n    transport: http\n    url: http://x/mcp\n    auth: {type: oauth, client_secret: \"${env:S}\"}\n",
            "  - name: cimd\n    transport: http\n    url: http://x/mcp\n    auth: {type: oauth, client_metadata_url: \"http://x/client.json\"}\n",
            "  - name: machine\n    transport: http\n    url: http://x/mcp\n    auth: {type: oauth, grant: client_credentials, client_id: a}\n",
        ));
        assert!(loaded.policy.is_none());
        assert_eq!(
            messages(&loaded),
            vec![
                (
                    Code::InvalidValue,
                    "server `local` has `auth` but is not `transport: http`".into()
                ),
                (
                    Code::LiteralSecret,
                    "server `literal`'s `client_secret` is written literally".into()
                ),
                (
                    Code::InvalidValue,
                    "server `orphan` has a `client_secret` but no `client_id`".into()
                ),
                (
                    Code::InvalidValue,
                    "server `cimd`'s `client_metadata_url` is not an https URL with a path".into()
                ),
                (
                    Code::InvalidValue,
                    "server `machine` uses `client_credentials` without `client_id` and `client_secret`"
                        .into()
                ),
            ]
        );
    }
}
