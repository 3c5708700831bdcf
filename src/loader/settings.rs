//! The `settings:` section: each key set in one file only.

use super::*;

impl Builder {
    pub(super) fn setting<T>(
        &mut self,
        key: &'static str,
        file: &SourceFile,
        s: &Spanned<T>,
    ) -> bool {
        let here = origin(file, s);
        if let Some(first) = self.settings_origin.get(key) {
            self.diags.push(
                Diagnostic::new(
                    Code::SettingsConflict,
                    format!("setting `{key}` is also set in `{}`", first.file.name),
                )
                .at(here.location())
                .label("set again here")
                .help(format!(
                    "`{key}` is first set at {}:{}; keep it in one file",
                    first.file.name,
                    first.line()
                )),
            );
            return false;
        }
        self.settings_origin.insert(key, here);
        true
    }

    pub(super) fn settings(&mut self, file: &SourceFile, raw: &RawSettings) {
        if let Some(v) = &raw.defer_threshold
            && self.setting("defer_threshold", file, v)
        {
            self.settings.defer_threshold = v.value;
        }
        if let Some(v) = &raw.mcp_name_format
            && self.setting("mcp_name_format", file, v)
        {
            if v.value.contains("{tool}") {
                self.settings.mcp_name_format = v.value.clone();
            } else {
                self.diags.push(
                    Diagnostic::new(Code::InvalidValue, "`mcp_name_format` has no `{tool}`")
                        .at(origin(file, v).location())
                        .help("MCP tools would all get the same name; include `{tool}`, e.g. `mcp__{server}__{tool}`"),
                );
            }
        }
        if let Some(v) = &raw.connect_timeout
            && self.setting("connect_timeout", file, v)
        {
            match parse_duration(&v.value) {
                Ok(d) => self.settings.connect_timeout = d,
                Err(e) => self
                    .diags
                    .push(Diagnostic::new(Code::InvalidValue, e).at(origin(file, v).location())),
            }
        }
        if let Some(v) = &raw.on_prompt
            && self.setting("on_prompt", file, v)
        {
            self.settings.on_prompt = v.value;
        }
        if let Some(paths) = &raw.paths {
            if let Some(h) = &paths.home
                && self.setting("paths.home", file, h)
            {
                let value = self.env_string(file, h, "`paths.home`");
                match value.resolve(|n| std::env::var(n).ok()) {
                    Ok(home) if home.starts_with('/') => {
                        self.settings.home = crate::effects::paths::clean(&home);
                    }
                    Ok(home) => self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("`paths.home` is `{home}`, not an absolute path"),
                        )
                        .at(origin(file, h).location())
                        .help("write an absolute folder, or `${env:HOME}`"),
                    ),
                    Err(e) => self.diags.push(
                        Diagnostic::new(Code::InvalidEnvReference, format!("`paths.home`: {e}"))
                            .at(origin(file, h).location())
                            .help("set the variable, or write the folder itself"),
                    ),
                }
            }
            if let Some(c) = &paths.case_insensitive
                && self.setting("paths.case_insensitive", file, c)
            {
                self.settings.case_insensitive = match c.value {
                    crate::model::CaseFolding::Auto => crate::policy::host_folds_case(),
                    crate::model::CaseFolding::Fixed(b) => b,
                };
            }
            if let Some(list) = &paths.credentials {
                for entry in list {
                    let v = entry.value.as_str();
                    if v.starts_with("lists.") {
                        continue;
                    }
                    if let Err(e) = globset::Glob::new(v) {
                        self.diags.push(
                            Diagnostic::new(
                                Code::InvalidValue,
                                format!("`paths.credentials` entry `{v}` is not a glob: {e}"),
                            )
                            .at(origin(file, entry).location()),
                        );
                    }
                }
                if list
                    .first()
                    .is_none_or(|first| self.setting("paths.credentials", file, first))
                {
                    self.settings.credentials = list.iter().map(|x| x.value.clone()).collect();
                }
            }
            if let Some(v) = &paths.walk_time
                && self.setting("paths.walk_time", file, v)
            {
                match parse_duration(&v.value) {
                    Ok(d) => self.settings.walk_time = d,
                    Err(e) => self.diags.push(
                        Diagnostic::new(Code::InvalidValue, e).at(origin(file, v).location()),
                    ),
                }
            }
        }
        if let Some(secrets) = &raw.secrets {
            for p in &secrets.patterns {
                match regex::Regex::new(&p.value) {
                    Ok(_) => self.settings.secret_patterns.push(p.value.clone()),
                    Err(e) => self.diags.push(
                        Diagnostic::new(
                            Code::InvalidRegex,
                            format!("invalid secret pattern `{}`", p.value),
                        )
                        .at(origin(file, p).location())
                        .label(
                            e.to_string()
                                .lines()
                                .last()
                                .unwrap_or("")
                                .trim()
                                .to_string(),
                        ),
                    ),
                }
            }
            for e in &secrets.env {
                self.settings.secret_env.push(e.value.clone());
            }
        }
        if let Some(log) = &raw.log {
            if let Some(v) = &log.path
                && self.setting("log.path", file, v)
            {
                let p = v.value.as_str();
                if p.is_empty() || p.starts_with("~/") || Path::new(p).is_absolute() {
                    self.settings.log_path = v.value.clone();
                } else {
                    self.diags.push(
                        Diagnostic::new(Code::InvalidValue, format!("`log.path` `{p}` is relative"))
                            .at(origin(file, v).location())
                            .help("hooks run in the agent's working folder; give an absolute path, one starting with `~/`, or `\"\"` to turn the log off"),
                    );
                }
            }
            if let Some(v) = &log.args
                && self.setting("log.args", file, v)
            {
                self.settings.log_args = v.value;
            }
            if let Some(v) = &log.chain
                && self.setting("log.chain", file, v)
            {
                self.settings.log_chain = v.value;
            }
            if let Some(sys) = &log.syslog
                && self.setting("log.syslog", file, &sys.address)
            {
                let address = sys.address.value.trim();
                let queue = sys
                    .queue
                    .as_ref()
                    .map_or(crate::log::syslog::DEFAULT_QUEUE, |q| q.value);
                if address
                    .rsplit_once(':')
                    .is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err())
                {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("`log.syslog.address` `{address}` is not HOST:PORT"),
                        )
                        .at(origin(file, &sys.address).location())
                        .help("give the receiver's host and TCP port, such as `127.0.0.1:6514`"),
                    );
                } else if queue == 0 {
                    self.diags.push(
                        Diagnostic::new(Code::InvalidValue, "`log.syslog.queue` is 0".to_string())
                            .at(origin(file, &sys.address).location())
                            .help("give the number of records held while the receiver is down, such as 1024"),
                    );
                } else if let Some(ca) = sys
                    .ca
                    .as_ref()
                    .filter(|_| !sys.tls.as_ref().is_some_and(|t| t.value))
                {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            "`log.syslog.ca` is given without `tls: true`".to_string(),
                        )
                        .at(origin(file, ca).location())
                        .help("a CA is only used over TLS; add `tls: true`, or remove `ca`"),
                    );
                } else if let Some(ca) = sys
                    .ca
                    .as_ref()
                    .filter(|c| !(c.value.starts_with("~/") || Path::new(&c.value).is_absolute()))
                {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!("`log.syslog.ca` `{}` is relative", ca.value),
                        )
                        .at(origin(file, ca).location())
                        .help("hooks run in the agent's working folder; give an absolute path or one starting with `~/`"),
                    );
                } else {
                    self.settings.log_syslog = Some(crate::log::syslog::Target {
                        address: address.to_string(),
                        queue,
                        tls: sys.tls.as_ref().is_some_and(|t| t.value),
                        ca: sys.ca.as_ref().map(|c| c.value.clone()),
                    });
                }
            }
        }
        if let Some(log) = &raw.log
            && let Some(otlp) = &log.otlp
            && self.setting("log.otlp", file, &otlp.endpoint)
        {
            let url = otlp.endpoint.value.trim();
            let queue = otlp
                .queue
                .as_ref()
                .map_or(crate::log::syslog::DEFAULT_QUEUE, |q| q.value);
            let ca = otlp.ca.as_ref();
            let https = url.starts_with("https://");
            if let Some(ca) = ca.filter(|_| !https) {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        "`log.otlp.ca` is given for an endpoint that is not `https://`".to_string(),
                    )
                    .at(origin(file, ca).location())
                    .help(
                        "a CA is only used over TLS; give an `https://` endpoint, or remove `ca`",
                    ),
                );
            } else if let Some(ca) =
                ca.filter(|c| !(c.value.starts_with("~/") || Path::new(&c.value).is_absolute()))
            {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("`log.otlp.ca` `{}` is relative", ca.value),
                    )
                    .at(origin(file, ca).location())
                    .help("hooks run in the agent's working folder; give an absolute path or one starting with `~/`"),
                );
            } else {
                match crate::log::otlp::endpoint(url) {
                Err(e) => self.diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("`log.otlp.endpoint` {e}"),
                    )
                    .at(origin(file, &otlp.endpoint).location())
                    .help("give the collector's logs endpoint, such as `https://collector.example.com/v1/logs` or `http://127.0.0.1:4318/v1/logs`"),
                ),
                Ok(_) if queue == 0 => self.diags.push(
                    Diagnostic::new(Code::InvalidValue, "`log.otlp.queue` is 0".to_string())
                        .at(origin(file, &otlp.endpoint).location())
                        .help("give the number of records held while the collector is down, such as 1024"),
                ),
                Ok(_) => {
                    self.settings.log_otlp = Some(crate::log::otlp::Target {
                        endpoint: url.to_string(),
                        queue,
                        encoding: otlp.encoding.as_ref().map(|e| e.value).unwrap_or_default(),
                        ca: otlp.ca.as_ref().map(|c| c.value.clone()),
                    });
                }
            }
            }
        }
        if let Some(hooks) = &raw.hooks
            && let Some(v) = &hooks.unknown_tool
            && self.setting("hooks.unknown_tool", file, v)
        {
            self.settings.unknown_tool = v.value;
        }
        if let Some(gateway) = &raw.gateway
            && let Some(v) = &gateway.pinning
            && self.setting("gateway.pinning", file, v)
        {
            self.settings.pinning = v.value;
        }
        if let Some(enforce) = &raw.enforce {
            self.enforce(file, enforce);
        }
        if let Some(shadow) = &raw.shadow {
            self.shadow(file, shadow);
        }
    }

    /// `settings.shadow`: paths, or a bundle with its key; every path
    /// absolute or `~/…`, since hooks run in the agent's working folder.
    fn shadow(&mut self, file: &SourceFile, raw: &crate::model::RawShadow) {
        let first = raw
            .paths
            .as_ref()
            .and_then(|p| p.first())
            .or(raw.bundle.as_ref())
            .or(raw.key.as_ref())
            .or(raw.ca.as_ref());
        let Some(first) = first else {
            // `shadow: {}` or `paths: []`: nothing is shadowed; say so.
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, "`shadow` names no policy".to_string())
                    .at(Location {
                        file: file.clone(),
                        span: crate::diagnostic::Span {
                            offset: file.text.find("shadow:").unwrap_or(0),
                            len: 6,
                        },
                    })
                    .help("give `paths: [...]`, or `bundle:` and `key:`; or remove `shadow`"),
            );
            return;
        };
        if !self.setting("shadow", file, first) {
            return;
        }
        let mut bad = |at: &Spanned<String>, message: String, help: &str| {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, message)
                    .at(origin(file, at).location())
                    .help(help.to_string()),
            );
        };
        let placed = |p: &str| p.starts_with("~/") || Path::new(p).is_absolute();
        const PLACED: &str = "hooks run in the agent's working folder; give an absolute path or one starting with `~/`";
        match (&raw.paths, &raw.bundle) {
            (Some(_), Some(b)) => bad(
                b,
                "`shadow` has both `paths` and `bundle`".into(),
                "a shadow policy comes from files or from a bundle; keep one",
            ),
            (None, None) => bad(
                first,
                "`shadow` has neither `paths` nor `bundle`".into(),
                "give `paths: [...]`, or `bundle:` and `key:`",
            ),
            (Some(paths), None) => {
                if let Some(k) = raw.key.as_ref().or(raw.ca.as_ref()) {
                    bad(
                        k,
                        "`shadow.key` and `shadow.ca` go with `shadow.bundle`, not `paths`".into(),
                        "remove them, or give the bundle instead of the paths",
                    );
                } else if let Some(p) = paths.iter().find(|p| !placed(&p.value)) {
                    bad(
                        p,
                        format!("`shadow.paths` entry `{}` is relative", p.value),
                        PLACED,
                    );
                } else {
                    self.settings.shadow = Some(crate::policy::Shadow::Paths(
                        paths.iter().map(|p| p.value.clone()).collect(),
                    ));
                }
            }
            (None, Some(bundle)) => {
                let url = bundle.value.starts_with("https://");
                let key_is_file = |k: &str| !k.starts_with("RW") || k.contains('/');
                match &raw.key {
                    None => bad(
                        bundle,
                        "`shadow.bundle` has no `key`".into(),
                        "give the minisign public key it must be signed with: a `.pub` file or the key itself (`RW…`)",
                    ),
                    Some(k) if key_is_file(&k.value) && !placed(&k.value) => {
                        bad(k, format!("`shadow.key` `{}` is relative", k.value), PLACED);
                    }
                    Some(_) if bundle.value.contains("://") && !url => bad(
                        bundle,
                        format!(
                            "`shadow.bundle` `{}` is not an `https://` URL",
                            bundle.value
                        ),
                        "bundles are fetched over HTTPS only; give an `https://` URL or a file",
                    ),
                    Some(_) if !url && !placed(&bundle.value) => bad(
                        bundle,
                        format!("`shadow.bundle` `{}` is relative", bundle.value),
                        PLACED,
                    ),
                    Some(k) => match &raw.ca {
                        Some(ca) if !url => bad(
                            ca,
                            "`shadow.ca` is given for a bundle that is not at an `https://` URL"
                                .into(),
                            "a CA is only used over TLS; remove `ca`",
                        ),
                        Some(ca) if !placed(&ca.value) => {
                            bad(
                                ca,
                                format!("`shadow.ca` `{}` is relative", ca.value),
                                PLACED,
                            );
                        }
                        _ => {
                            self.settings.shadow = Some(crate::policy::Shadow::Bundle {
                                location: bundle.value.clone(),
                                key: k.value.clone(),
                                ca: raw.ca.as_ref().map(|c| c.value.clone()),
                            });
                        }
                    },
                }
            }
        }
    }

    fn enforce(&mut self, file: &SourceFile, raw: &crate::model::RawEnforce) {
        let strings =
            |xs: &[Spanned<String>]| xs.iter().map(|x| x.value.clone()).collect::<Vec<_>>();
        if let Some(v) = &raw.shell
            && self.setting("enforce.shell", file, v)
        {
            self.settings.enforce.shell = v.value;
        }
        if let Some(v) = &raw.unconfined
            && self.setting("enforce.unconfined", file, v)
        {
            self.settings.enforce.unconfined = v.value;
        }
        if let Some(v) = &raw.writes
            && self.setting("enforce.writes", file, v)
        {
            self.settings.enforce.writes = v.value;
        }
        if let Some(v) = &raw.network
            && self.setting("enforce.network", file, v)
        {
            self.settings.enforce.network = v.value;
        }
        if let Some(v) = &raw.unix_sockets
            && self.setting("enforce.unix_sockets", file, v)
        {
            self.settings.enforce.unix_sockets = v.value;
        }
        for (key, list) in [
            ("enforce.reads", &raw.reads),
            ("enforce.deny_reads", &raw.deny_reads),
            ("enforce.write_also", &raw.write_also),
            ("enforce.deny_writes", &raw.deny_writes),
            ("enforce.exec", &raw.exec),
        ] {
            let Some(list) = list else { continue };
            for entry in list {
                self.enforce_entry(file, key, entry);
            }
            if let Some(first) = list.first()
                && !self.setting(key, file, first)
            {
                continue;
            }
            let values = strings(list);
            let e = &mut self.settings.enforce;
            match key {
                "enforce.reads" => e.reads = values,
                "enforce.deny_reads" => e.deny_reads = values,
                "enforce.write_also" => e.write_also = values,
                "enforce.deny_writes" => e.deny_writes = values,
                _ => e.exec = values,
            }
        }
        if let Some(list) = &raw.deny_env {
            for entry in list {
                if !valid_env_glob(&entry.value) {
                    self.diags.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            format!(
                                "`{}` in `enforce.deny_env` is not an environment variable name or a glob of names",
                                entry.value
                            ),
                        )
                        .at(origin(file, entry).location())
                        .help("names are letters, digits and `_`; `*` matches any run of them (`*_TOKEN`)"),
                    );
                }
            }
            if list
                .first()
                .is_none_or(|first| self.setting("enforce.deny_env", file, first))
            {
                self.settings.enforce.deny_env = strings(list);
            }
        }
        if let Some(limits) = &raw.limits {
            if let Some(v) = &limits.processes
                && self.setting("enforce.limits.processes", file, v)
            {
                self.settings.enforce.processes = Some(v.value);
            }
            if let Some(v) = &limits.cpu_seconds
                && self.setting("enforce.limits.cpu_seconds", file, v)
            {
                self.settings.enforce.cpu_seconds = Some(v.value);
            }
            if let Some(v) = &limits.file_size
                && self.setting("enforce.limits.file_size", file, v)
            {
                match parse_size(&v.value) {
                    Ok(n) => self.settings.enforce.file_size = Some(n),
                    Err(e) => self.diags.push(
                        Diagnostic::new(Code::InvalidValue, e).at(origin(file, v).location()),
                    ),
                }
            }
        }
        for (name, p) in &raw.programs {
            let program = crate::policy::EnforceProgram {
                reads: strings(&p.reads),
                writes: strings(&p.writes),
                network: p.network.as_ref().map(|n| n.value),
            };
            self.settings.enforce.programs.insert(name.clone(), program);
        }
    }

    /// Every `lists.NAME` in `settings.paths.credentials` names a list.
    pub(super) fn paths_lists(&mut self, file: &SourceFile, raw: &crate::model::RawPaths) {
        self.known_lists(file, raw.credentials.iter().flatten());
    }

    /// Every `lists.NAME` in `settings.enforce` names a list.
    pub(super) fn enforce_lists(&mut self, file: &SourceFile, raw: &crate::model::RawEnforce) {
        let entries = [
            &raw.reads,
            &raw.deny_reads,
            &raw.write_also,
            &raw.deny_writes,
            &raw.exec,
        ]
        .into_iter()
        .flatten()
        .flatten();
        self.known_lists(file, entries);
    }

    /// Each `lists.NAME` entry names a list.
    fn known_lists<'e>(
        &mut self,
        file: &SourceFile,
        entries: impl Iterator<Item = &'e Spanned<String>>,
    ) {
        for entry in entries {
            let Some(name) = entry.value.strip_prefix("lists.") else {
                continue;
            };
            if !self.lists.contains_key(name) {
                let known: Vec<&str> = self.lists.keys().map(String::as_str).collect();
                let mut d = Diagnostic::new(Code::UnknownList, format!("no list named `{name}`"))
                    .at(origin(file, entry).location());
                if let Some(close) = closest(name, known.iter().copied()) {
                    d = d.help(format!("did you mean `lists.{close}`?"));
                }
                self.diags.push(d);
            }
        }
    }

    /// An entry of an enforce path list: `lists.NAME` or an absolute glob.
    fn enforce_entry(&mut self, file: &SourceFile, key: &str, entry: &Spanned<String>) {
        let v = entry.value.as_str();
        if v.starts_with("lists.") {
            return;
        }
        let absolute =
            v.starts_with('/') || v.starts_with("~/") || v == "~" || v.starts_with("{workspace}");
        // A deny may be anywhere (`**/.env`); a grant names its place.
        let anywhere = key.starts_with("enforce.deny_") && (v == "**" || v.starts_with("**/"));
        if !absolute && !anywhere {
            self.diags.push(
                Diagnostic::new(Code::InvalidValue, format!("`{key}` entry `{v}` is not an absolute path"))
                    .at(origin(file, entry).location())
                    .help("write an absolute glob, one starting with `~/` or `{workspace}`, or `lists.NAME` (a deny may also start with `**/`)"),
            );
        } else if let Err(e) = globset::Glob::new(v) {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("`{key}` entry `{v}` is not a glob: {e}"),
                )
                .at(origin(file, entry).location()),
            );
        }
    }
}

/// A size: bytes, or a number with `KiB`, `MiB`, `GiB` (or `K`, `M`, `G`, `KB`, `MB`, `GB`).
///
/// # Errors
/// Not a size.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("`{s}` is not a size; write bytes or e.g. `500MiB`, `1GiB`"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KB" | "KiB" | "k" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        "T" | "TB" | "TiB" => 1 << 40,
        u => {
            return Err(format!(
                "`{s}`: unknown unit `{u}`; use KiB, MiB, GiB or TiB"
            ));
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("`{s}` is too large"))
}

/// Whether `glob` names environment variables: letters, digits, `_` and `*`,
/// and not empty.
fn valid_env_glob(glob: &str) -> bool {
    !glob.is_empty()
        && glob
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*')
}
