//! The secret scrubber: every tool result and every error leaves through it.
//!
//! A [`Scrubber`] finds secrets with a fixed set of built-in detectors plus
//! the user's extra regex patterns and literal values, and replaces each one
//! with [`REDACTED`].
//!
//! # Built-in detectors
//!
//! | detector | what is replaced |
//! | --- | --- |
//! | `private-key` | a whole PEM `-----BEGIN … PRIVATE KEY-----` block (RSA, EC, OPENSSH, ENCRYPTED, PKCS#8, PGP `… PRIVATE KEY BLOCK`), armour in either case; an unterminated block is redacted to the end of the text |
//! | `putty-private-key` | in a `PuTTY-User-Key-File-2:`/`-3:` key, everything from `Private-Lines:` through the `Private-MAC:` value (to the end of the text if cut short); the public half stays |
//! | `jwk-private` | the values of a JSON Web Key's private members `"d"`, `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"`, `"k"`, in an object that also has `"kty"` (within 16 KiB) |
//! | `key-value` | the value of a sensitive key in `key=value`, `key: value`, `key => value`, `key := value`, `"key": "value"`, `'key': 'value'`, `\"key\": \"value\"`; the key stays visible. `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` take the rest of the line (or the quoted string) |
//! | `aws-secret-key` | a 40-character AWS secret key after `aws_secret_access_key`, `--secret-access-key`, `SecretAccessKey`, … with `=`, `:` or just spaces (`aws configure set aws_secret_access_key …`); both cases and a digit, `/` or `+` are required, so a SHA-1 is not one |
//! | `url-password` | the password in `scheme://user:password@host` (the user stays); a password with `/` or `#` counts unless what precedes the first of them is a port (`http://host:8080/u/bob@example.com`) |
//! | `url-token` | a bare token as URL user, `https://TOKEN@host`: at least 20 of `A-Za-z0-9_-` with letters and digits, and both cases or at least 32 characters |
//! | `url-query-password` | the value of a `pass`, `pw`, `pwd`, `passwd` or `password` query parameter (`?pass=…`, `&pw=…`) |
//! | `curl-user` | the password in `curl -u user:password` / `-uuser:password` / `-U` / `--user` / `--proxy-user` |
//! | `mysql-password` | the password attached to `-p` on a `mysql`, `mysqldump`, `mariadb`, … command line (`-pSECRET`, `-p'SECRET'`; not `-p` alone, which prompts, nor `-p 3306`, a database name); `--password=` is `key-value` |
//! | `sshpass` | the password in `sshpass -p SECRET` / `-pSECRET` |
//! | `registry-login` | the password in `docker login -p SECRET` / `--password SECRET` / `--password=SECRET` (also `podman`, `nerdctl`, `buildah`, `skopeo`, `oras`, `helm registry`, `crane auth`); `--password-stdin` is no password |
//! | `openssl-pass` | the password in `-pass pass:SECRET`, `-passin pass:…`, `-passout pass:…`, `-password pass:…` (`env:`, `file:`, `fd:`, `stdin` name no secret) |
//! | `gpg-passphrase` | the passphrase in `gpg … --passphrase SECRET` (`--passphrase-fd`, `--passphrase-file` name no secret) |
//! | `kubectl-literal` | the value in `--from-literal=key=SECRET` / `--from-literal key=SECRET` / `--from-literal='key=SECRET'` |
//! | `netrc` | the password in `.netrc` lines (`login bob password x`, or a line `password x`) |
//! | `bearer` | the credential after `Bearer ` (at least 16 characters with a digit, so prose survives) |
//! | `openai-anthropic` | `sk-…`, `sk-ant-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…` with at least 20 characters and a digit |
//! | `stripe` | `sk_live_…`, `sk_test_…`, `rk_live_…`, `rk_test_…`, webhook secrets `whsec_…` |
//! | `github` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` plus at least 36 alphanumerics |
//! | `github-fine-grained` | `github_pat_…` |
//! | `gitlab` | `glpat-…`, `gldt-…`, `glrt-…`, `glptt-…` |
//! | `aws-access-key-id` | `AKIA`/`ASIA` plus exactly 16 uppercase alphanumerics |
//! | `slack` | `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xapp-` tokens, refresh tokens `xoxe-` and rotating `xoxe.xoxp-` / `xoxe.xoxb-` |
//! | `slack-webhook` | the secret last segment of `https://hooks.slack.com/services/T…/B…/…` (also `workflows/`, `triggers/`) |
//! | `google-api-key` | `AIza` plus exactly 35 characters |
//! | `google-oauth` | OAuth access tokens `ya29.…`, client secrets `GOCSPX-…`, refresh tokens `1//0…` |
//! | `azure-sas` | the `sig=` of an Azure SAS URL or `SharedAccessSignature sr=…&sig=…` (at least 16 characters); `AccountKey=` and `SharedAccessKey=` in connection strings are `key-value` |
//! | `jwt` | three base64url segments, the first starting `eyJ` |
//! | `npm`, `pypi`, `huggingface` | `npm_…`, `pypi-AgE…`, `hf_…` tokens (a legacy npm UUID token after `_authToken=` is `key-value`) |
//! | `twilio` | API keys `SK` + 32 hex; the auth token (32 hex) right after an `AC…` account SID (the SID itself is no secret) |
//! | `sendgrid` | `SG.` + 22 + `.` + 43 characters |
//! | `digitalocean` | `dop_v1_`, `doo_v1_`, `dor_v1_` + 64 hex |
//! | `vault` | HashiCorp Vault `hvs.`, `hvb.`, `hvr.` tokens (at least 24 characters, with a digit) |
//! | `databricks` | `dapi` + 32 hex |
//! | `shopify` | `shpat_`, `shpss_`, `shpca_`, `shppa_` + 32 hex |
//! | `age` | `AGE-SECRET-KEY-1…` (the `age1…` recipient is public) |
//! | `discord-webhook` | the token of `https://discord.com/api/webhooks/ID/TOKEN` (also `discordapp.com`, `ptb.`, `canary.`) |
//! | `telegram` | bot tokens `123456789:AA…` (8 to 10 digits, 35 characters after the colon), also after `/bot` in API URLs |
//!
//! A command-line value that names a secret rather than holds one is left
//! alone: `$VAR`, `"$(cmd)"`, `%VAR%`, `{{ … }}`, `<placeholder>`, `***`.
//!
//! # Shell quoting
//!
//! Shell quoting can split a secret so that no detector sees it whole:
//! `sk-ant-api03-abc''def…`, `"gh"p_…`, `ghp_abc"def"…`. So every word in
//! which a run of `'`, `"` or `\` sits between two token characters
//! (letters, digits, `_`, `-`) is unquoted as the shell would and searched
//! again: single quotes are literal; in double quotes `\` escapes only `$`,
//! `` ` ``, `"` and `\`; outside quotes `\` escapes any character; an
//! unterminated quote runs to the end of the word. If a detector finds a
//! secret in the unquoted word, the whole raw word is replaced.
//!
//! Words end at ASCII whitespace and at the escapes `\n`, `\r`, `\t` (text
//! that shows escaped newlines is not to be glued together). A lone `'`
//! before the last one or two characters of a word is English (`don't`,
//! `host's`, `we'll`), not a split. Words shorter than 12 bytes once
//! unquoted, words of letters and quotes only and words longer than 4 KiB
//! are not searched, and the prefilter notices a split word in the same pass
//! as the detectors, so text without one costs nothing more.
//!
//! # Sensitive keys
//!
//! [`is_sensitive_key`] decides which keys hide their values. The key is cut
//! into segments at `_`, `-`, `.`, other punctuation, camelCase and
//! letter/digit boundaries (`maxTokens` → `max`, `Tokens`; `X-API-Key` → `X`,
//! `API`, `Key`), compared case-insensitively. A key is sensitive when a
//! segment
//!
//! * is one of `password`, `passwd`, `passphrase`, `pwd`, `secret`, `secrets`,
//!   `token`, `credential`, `credentials`, `creds`, `auth`, `authorization`,
//!   `signature`, `apikey`, `accesskey`, `privatekey`, `secretkey`;
//! * ends with `password`, `passwd`, `passphrase`, `pwd`, `secret`, `token`,
//!   `apikey`, `accesskey`, `privatekey` or `secretkey` (`dbpassword`,
//!   `clientsecret`, `accesstoken`);
//! * is `pass` in a key of several segments (`DB_PASS`; a bare `pass=3` is a
//!   test count far more often than a password);
//! * is `key` or `keys` right after `api`, `access`, `private`, `secret`,
//!   `ssh`, `signing`, `encryption`, `master`, `account`, `client`, `license`,
//!   `shared`, `app` or `deploy` (`api_key`, `AccountKey`, `ssh-key`);
//!
//! or the whole key is `authorization`, `proxy-authorization`, `cookie` or
//! `set-cookie`. Exceptions, so that benign keys survive:
//!
//! * whole-segment matching means `author`, `authority`, `keyboard`,
//!   `secretary`, `tokenizer`, `passed`, `bypass`, `key`, `primary_key` are
//!   not sensitive, and neither is the plural `tokens` (`tokens_used`,
//!   `max_tokens`, `input_tokens`);
//! * a key with a metadata segment (`count`, `max`, `min`, `limit`, `used`,
//!   `usage`, `total`, `len`, `length`, `size`, `type`, `kind`, `ttl`,
//!   `expiry`, `expires`, `file`, `path`, `url`, `name`, `env`, …) describes a
//!   secret rather than holding one (`token_count`, `password_min_length`,
//!   `token_type`, `secret_name`, `password_file`, `auth_url`);
//! * `PWD` and `OLDPWD` are the shell's working directories.
//!
//! `session_id` and the like are deliberately not sensitive: agent tool
//! results are full of them and they are not credentials on their own.
//!
//! # Free-text values
//!
//! In free text a quoted value (`"…"`, `'…'`, `` `…` ``, `\"…\"`) is always
//! redacted unless empty. An unquoted value runs to whitespace or one of
//! `"` `'` `` ` `` `,` `;` `&` `)` `}` `]` `\`; a leading scheme word
//! (`Bearer`, `Basic`, `Token`, …) takes the next word along. After `:` or a
//! spaced `=` (YAML, INI, headers) it runs on past spaces to the end of the
//! line, a ` #` or ` //` comment, or one of those punctuation characters, so
//! `passphrase: correct horse battery` hides every word. (A YAML value that
//! contains `,;)}]` keeps what follows: the price of not eating code.)
//!
//! Some unquoted values are left alone because they hold no secret and
//! redacting them would corrupt source code an agent is reading:
//! `true`/`false`/`null`/`none`/`nil`/`undefined`, variable references
//! (`$VAR`, `${VAR}`, `${{ secrets.X }}`, `{{ .x }}`), comparisons
//! (`token == x`, `auth::x`), nested structures starting `{` or `[` (their
//! quoted members are still found; a bare list like `api_keys: [a, b]` in
//! free text is not), `host:443` ports, keyword arguments (`f(password=pw)`),
//! and, after `:` or a spaced `=`, code-looking values (calls, generics, type
//! names like `String` or `&str`, dotted paths like `self.password`, `x;`).
//! A key right after `/` or `@` is part of a URL or path and is ignored.
//!
//! # JSON
//!
//! [`Scrubber::scrub_json`] runs every string (and every object key) through
//! [`Scrubber::scrub_str`]. Below a sensitive key every string and number is
//! replaced by `"[REDACTED]"`, however deep: `{"api_keys": ["a", "b"]}` and
//! `{"credentials": {"user": "x", "key": "y"}}` hide every leaf. Booleans,
//! nulls and empty strings stay, as they hold no secret. An object with a
//! string `"kty"` member is a JSON Web Key: its private members `d`, `p`,
//! `q`, `dp`, `dq`, `qi`, `k` and `oth` count as sensitive keys.
//!
//! # Guarantees
//!
//! Every detector reports byte spans of the original text; overlapping and
//! touching spans are merged before anything is replaced, so when two
//! detectors disagree about a secret's extent the union is hidden and no part
//! of it survives. A span that reaches into an existing `[REDACTED]` is widened
//! to cover it, and a span that is nothing but `[REDACTED]` markers is left as
//! it is; scrubbing repeats until nothing changes (each round strictly
//! shrinks the text outside markers, so it ends). Hence scrubbing is
//! idempotent and [`Scrubber::contains_secret`] is false on scrubbed output.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock, OnceLock};

use regex::{Regex, RegexBuilder};
use serde_json::Value;

mod detectors;
mod keys;
mod quoting;

use detectors::{Detector, Extract, Keywords, LazyRegex, Prefilter, lazy_builtins};
use keys::JWK_PRIVATE_MEMBERS;
pub use keys::is_sensitive_key;

/// What every secret is replaced by.
pub const REDACTED: &str = "[REDACTED]";

/// Literal secret values shorter than this many characters are ignored.
///
/// A value of one to three characters (`1`, `yes`, `dev`, `en`) occurs all
/// over ordinary output: replacing every occurrence would shred tool results
/// while protecting almost nothing, since so short a secret is guessable
/// anyway.
pub const MIN_LITERAL_LEN: usize = 4;

/// Compiled-size limit for the user's patterns and the literal values.
const SIZE_LIMIT: usize = 64 << 20;

/// Upper bound on scrubbing rounds; the loop provably ends long before.
const MAX_ROUNDS: usize = 64;

/// Replaces secrets in text and JSON with `[REDACTED]`.
#[derive(Debug, Clone)]
pub struct Scrubber {
    detectors: Vec<Detector>,
    /// One pattern per detector, same order, then one for a word split by
    /// shell quoting: which detectors can match, and whether the quoting
    /// pass is needed. `None` if it could not be built; then everything runs.
    prefilter: Arc<OnceLock<Option<Prefilter>>>,
    /// Which detectors short ASCII text may match, by their keywords: asked
    /// first, so the prefilter is built only for other text.
    keywords: Arc<Keywords>,
}

/// Why a scrubber could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ScrubError {
    /// A user pattern is not a valid regular expression.
    #[error("invalid secret pattern `{pattern}`: {message}")]
    InvalidPattern {
        /// The pattern as the user wrote it.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// The literal secret values could not be compiled (too many or too long).
    /// The message never contains the values.
    #[error("literal secret values could not be compiled: {message}")]
    LiteralValues {
        /// What went wrong.
        message: String,
    },
}

/// The built-in scrubber, compiled once per process.
static BUILTIN: LazyLock<Scrubber> = LazyLock::new(builtin_scrubber);

fn builtin_scrubber() -> Scrubber {
    let detectors = lazy_builtins();
    let keywords = Arc::new(Keywords::build(&detectors));
    Scrubber {
        detectors,
        prefilter: Arc::new(OnceLock::new()),
        keywords,
    }
}

impl Default for Scrubber {
    fn default() -> Self {
        Scrubber::builtin()
    }
}

impl Scrubber {
    /// Built-in detectors only.
    pub fn builtin() -> Scrubber {
        BUILTIN.clone()
    }

    /// Built-in detectors plus user regex patterns and literal values. Errors name the bad pattern.
    ///
    /// Every match of a pattern is redacted whole. Literal values (the values
    /// of configured environment variables) are matched exactly,
    /// case-sensitively; empty values and values shorter than
    /// [`MIN_LITERAL_LEN`] are skipped. A value with surrounding whitespace
    /// is also matched trimmed, and a value that JSON escapes differently is
    /// also matched in its escaped form.
    pub fn new(patterns: &[String], literal_values: Vec<String>) -> Result<Scrubber, ScrubError> {
        let mut detectors = BUILTIN.detectors.clone();
        for pattern in patterns {
            let regex = RegexBuilder::new(pattern)
                .size_limit(SIZE_LIMIT)
                .build()
                .map_err(|e| ScrubError::InvalidPattern {
                    pattern: pattern.clone(),
                    message: regex_error_message(&e),
                })?;
            detectors.push(Detector {
                name: "custom",
                keywords: &[],
                needs: b"",
                regex: LazyRegex::compiled(regex),
                extract: Extract::Whole,
                validate: None,
            });
        }
        if let Some(regex) = literal_regex(literal_values)? {
            detectors.push(Detector {
                name: "literal",
                keywords: &[],
                needs: b"",
                regex: LazyRegex::compiled(regex),
                extract: Extract::Whole,
                validate: None,
            });
        }
        // Only the built-in detectors: share their prefilter and keywords.
        if detectors.len() == BUILTIN.detectors.len() {
            return Ok(BUILTIN.clone());
        }
        let keywords = Arc::new(Keywords::build(&detectors));
        Ok(Scrubber {
            detectors,
            prefilter: Arc::new(OnceLock::new()),
            keywords,
        })
    }

    /// Scrubs free text.
    pub fn scrub_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut current = Cow::Borrowed(text);
        for _ in 0..MAX_ROUNDS {
            match self.round(&current) {
                Some(next) => current = Cow::Owned(next),
                None => break,
            }
        }
        current
    }

    /// Scrubs a JSON value in place: string values through scrub_str, values under sensitive keys replaced wholesale with "[REDACTED]" (if the value is a string/number; if it is an object/array recurse instead).
    ///
    /// Below a sensitive key the recursion keeps redacting every string and
    /// number, so arrays and objects of secrets are hidden too. Object keys
    /// are scrubbed like strings; keys that collide once scrubbed get `#2`,
    /// `#3`, … appended so no entry is lost.
    pub fn scrub_json(&self, value: &mut Value) {
        self.scrub_json_inner(value, false);
    }

    /// True if scrub_str would change the text (for lint's literal-secret check).
    pub fn contains_secret(&self, text: &str) -> bool {
        matches!(self.scrub_str(text), Cow::Owned(_))
    }

    /// Names of the detectors that find something in `text`, in detector
    /// order, without duplicates (`custom`, `literal` for user ones).
    pub fn detect(&self, text: &str) -> Vec<&'static str> {
        let mut found = vec![false; self.detectors.len()];
        self.mark_found(text, &mut found);
        for (_, _, unquoted) in quoting::split_words(text) {
            self.mark_found(&unquoted, &mut found);
        }
        let mut names: Vec<&'static str> = Vec::new();
        for (detector, hit) in self.detectors.iter().zip(found) {
            if hit && !names.contains(&detector.name) {
                names.push(detector.name);
            }
        }
        names
    }

    /// Marks, by index, the detectors that find something in `text`.
    fn mark_found(&self, text: &str, found: &mut [bool]) {
        for index in self.candidates(text).0 {
            if let (Some(detector), Some(hit)) = (self.detectors.get(index), found.get_mut(index))
                && !*hit
            {
                let mut spans = Vec::new();
                detector.collect(text, &mut spans);
                *hit = redact_spans(text, spans).is_some();
            }
        }
    }

    fn scrub_json_inner(&self, value: &mut Value, sensitive: bool) {
        match value {
            Value::String(s) => {
                if sensitive {
                    if !s.is_empty() && s != REDACTED {
                        *s = REDACTED.to_owned();
                    }
                } else if let Cow::Owned(scrubbed) = self.scrub_str(s) {
                    *s = scrubbed;
                }
            }
            Value::Number(_) => {
                if sensitive {
                    *value = Value::String(REDACTED.to_owned());
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.scrub_json_inner(item, sensitive);
                }
            }
            Value::Object(map) => {
                let jwk = map.get("kty").is_some_and(Value::is_string);
                let child_sensitive = |key: &str| {
                    sensitive
                        || is_sensitive_key(key)
                        || (jwk && JWK_PRIVATE_MEMBERS.contains(&key))
                };
                if map.keys().any(|k| self.contains_secret(k)) {
                    let old = std::mem::take(map);
                    for (key, mut item) in old {
                        self.scrub_json_inner(&mut item, child_sensitive(&key));
                        let mut new_key = self.scrub_str(&key).into_owned();
                        let base = new_key.clone();
                        let mut n = 2;
                        while map.contains_key(&new_key) {
                            new_key = format!("{base}#{n}");
                            n += 1;
                        }
                        map.insert(new_key, item);
                    }
                } else {
                    for (key, item) in map.iter_mut() {
                        self.scrub_json_inner(item, child_sensitive(key));
                    }
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// Indexes of the detectors that may match `text`, and whether shell
    /// quoting may split a token in it.
    fn candidates(&self, text: &str) -> (Vec<usize>, bool) {
        let n = self.detectors.len();
        if let Some(found) = self.keywords.candidates(text, n) {
            return found;
        }
        let prefilter = self
            .prefilter
            .get_or_init(|| Prefilter::build(&self.detectors));
        match prefilter.as_ref().and_then(|p| p.matches(text)) {
            Some(mut matched) => {
                let split = matched.last() == Some(&n);
                matched.retain(|&i| i < n);
                (matched, split)
            }
            None => ((0..n).collect(), true),
        }
    }

    /// Appends the spans of the secrets the `candidates` find in `text`.
    fn collect(&self, text: &str, candidates: Vec<usize>, spans: &mut Vec<(usize, usize)>) {
        for index in candidates {
            if let Some(detector) = self.detectors.get(index) {
                detector.collect(text, spans);
            }
        }
    }

    /// One scrubbing round: `None` if nothing changes.
    ///
    /// A word in which shell quoting splits a secret is replaced whole.
    fn round(&self, text: &str) -> Option<String> {
        let (candidates, split) = self.candidates(text);
        let mut spans = Vec::new();
        self.collect(text, candidates, &mut spans);
        if split {
            for (start, end, unquoted) in quoting::split_words(text) {
                let mut inner = Vec::new();
                self.collect(&unquoted, self.candidates(&unquoted).0, &mut inner);
                if redact_spans(&unquoted, inner).is_some() {
                    spans.push((start, end));
                }
            }
        }
        redact_spans(text, spans)
    }
}

/// Merges the spans and replaces each with [`REDACTED`]; `None` if nothing changes.
fn redact_spans(text: &str, mut spans: Vec<(usize, usize)>) -> Option<String> {
    if spans.is_empty() {
        return None;
    }
    // Widen spans to whole markers, so a marker is never cut in half.
    let markers: Vec<(usize, usize)> = text
        .match_indices(REDACTED)
        .map(|(i, _)| (i, i + REDACTED.len()))
        .collect();
    if !markers.is_empty() {
        for span in &mut spans {
            let (start, end) = *span;
            let first = markers.partition_point(|&(_, m_end)| m_end <= start);
            for &(m_start, m_end) in markers[first..].iter().take_while(|m| m.0 < end) {
                span.0 = span.0.min(m_start);
                span.1 = span.1.max(m_end);
            }
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut pos = 0;
    for (start, end) in merged {
        out.push_str(&text[pos..start]);
        let piece = &text[start..end];
        if is_all_markers(piece) {
            out.push_str(piece);
        } else {
            out.push_str(REDACTED);
            changed = true;
        }
        pos = end;
    }
    out.push_str(&text[pos..]);
    changed.then_some(out)
}

/// True if `s` is one or more `[REDACTED]` markers and nothing else.
fn is_all_markers(s: &str) -> bool {
    !s.is_empty()
        && s.len().is_multiple_of(REDACTED.len())
        && s.as_bytes()
            .chunks(REDACTED.len())
            .all(|c| c == REDACTED.as_bytes())
}

/// A one-line description of a regex compilation error.
fn regex_error_message(error: &regex::Error) -> String {
    match error {
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find_map(|line| line.trim().strip_prefix("error: "))
            .unwrap_or(text.trim())
            .to_owned(),
        regex::Error::CompiledTooBig(limit) => {
            format!("pattern is too large once compiled (limit {limit} bytes)")
        }
        _ => "pattern could not be compiled".to_owned(),
    }
}

/// Compiles the literal secret values into one regex, longest first.
fn literal_regex(values: Vec<String>) -> Result<Option<Regex>, ScrubError> {
    let mut literals: Vec<String> = Vec::new();
    let mut add = |v: &str| {
        if v.chars().count() >= MIN_LITERAL_LEN && !literals.iter().any(|l| l == v) {
            literals.push(v.to_owned());
        }
    };
    for value in &values {
        add(value);
        add(value.trim());
        if let Ok(quoted) = serde_json::to_string(value.trim())
            && let Some(escaped) = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"'))
        {
            add(escaped);
        }
    }
    if literals.is_empty() {
        return Ok(None);
    }
    literals.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    let alternation = literals
        .iter()
        .map(|l| regex::escape(l))
        .collect::<Vec<_>>()
        .join("|");
    RegexBuilder::new(&alternation)
        .size_limit(SIZE_LIMIT)
        .build()
        .map(Some)
        .map_err(|e| ScrubError::LiteralValues {
            message: match e {
                regex::Error::CompiledTooBig(limit) => {
                    format!("the values need more than {limit} bytes once compiled")
                }
                _ => "the values could not be turned into a matcher".to_owned(),
            },
        })
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::detectors::BUILTINS;
    use super::detectors::tests::{AWS, GHP, JWT, SK, SK_ANT, near_misses, positives, scrub};
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_never_survive() {
        let secrets = [
            GHP,
            SK,
            SK_ANT,
            JWT,
            AWS,
            "hunter2",
            "s3cr3t!",
            "Pa55w0rd",
            "dXNlcjpwYXNzd29yZA==",
            "p4ss",
            "MIIEpAIBAAKCAQEA1c2",
        ];
        for (_, input, _) in positives() {
            let out = scrub(&input);
            for secret in secrets {
                if input.contains(secret) {
                    assert!(!out.contains(secret), "{secret} survived in {out:?}");
                }
            }
        }
    }

    #[test]
    fn idempotent() {
        let s = Scrubber::builtin();
        let mut inputs: Vec<String> = positives().into_iter().map(|p| p.1).collect();
        inputs.extend(near_misses().into_iter().map(|m| m.1.to_owned()));
        inputs.push(format!(
            "password=[REDACTED] token: {REDACTED} {REDACTED}{REDACTED}"
        ));
        for input in inputs {
            let once = s.scrub_str(&input).into_owned();
            let twice = s.scrub_str(&once);
            assert_eq!(twice, once);
            assert!(matches!(twice, Cow::Borrowed(_)), "{once:?}");
            assert!(!s.contains_secret(&once), "{once:?}");
        }
    }

    #[test]
    fn clean_text_is_borrowed() {
        let s = Scrubber::builtin();
        let text = "Compiling zero-policy v0.1.0\n   Finished `dev` profile in 2.3s\nüñíçødé ok";
        assert!(matches!(s.scrub_str(text), Cow::Borrowed(t) if t == text));
        assert!(matches!(s.scrub_str(""), Cow::Borrowed("")));
    }

    #[test]
    fn overlapping_detectors() {
        let r = REDACTED;
        // A JWT inside an Authorization header.
        assert_eq!(
            scrub(&format!("Authorization: Bearer {JWT}\n")),
            format!("Authorization: {r}\n")
        );
        // A URL password that is also an sk- token.
        assert_eq!(
            scrub(&format!("https://user:{SK}@api.example.com/v1")),
            format!("https://user:{r}@api.example.com/v1")
        );
        // A token as a key=value value.
        assert_eq!(scrub(&format!("GH_TOKEN={GHP}")), format!("GH_TOKEN={r}"));
        // A token in a URL user name.
        assert_eq!(
            scrub(&format!("https://x-access-token:{GHP}@github.com/o/r.git")),
            format!("https://x-access-token:{r}@github.com/o/r.git")
        );
        // A private key under a JSON key in text.
        assert_eq!(
            scrub(
                r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n", "n": 1}"#
            ),
            format!(r#"{{"private_key": "{r}", "n": 1}}"#)
        );
        // Neighbouring secrets each become a marker.
        assert_eq!(scrub(&format!("{SK},{GHP}")), format!("{r},{r}"));
    }

    #[test]
    fn json_scrubbing() {
        let s = Scrubber::builtin();
        let mut value = json!({
            "model": "claude",
            "max_tokens": 1024,
            "usage": {"input_tokens": 10, "output_tokens": 20, "tokens_used": 30},
            "author": "Jane",
            "keyboard": "us",
            "password": "hunter2",
            "api_key": 12345,
            "enabled": true,
            "nested": {"deeper": [{"client_secret": "abc"}, {"note": format!("use {GHP} now")}]},
            "credentials": {"user": "bob", "key": "xyz", "active": true, "count": null},
            "api_keys": ["k1", "k2"],
            "token": "",
            "auth": {"type": "basic"},
            "stdout": "DB_PASSWORD=hunter2\nok",
            "headers": {"Authorization": "Bearer abc", "Accept": "*/*"},
        });
        s.scrub_json(&mut value);
        let r = REDACTED;
        assert_eq!(
            value,
            json!({
                "model": "claude",
                "max_tokens": 1024,
                "usage": {"input_tokens": 10, "output_tokens": 20, "tokens_used": 30},
                "author": "Jane",
                "keyboard": "us",
                "password": r,
                "api_key": r,
                "enabled": true,
                "nested": {"deeper": [{"client_secret": r}, {"note": format!("use {r} now")}]},
                "credentials": {"user": r, "key": r, "active": true, "count": null},
                "api_keys": [r, r],
                "token": "",
                "auth": {"type": r},
                "stdout": format!("DB_PASSWORD={r}\nok"),
                "headers": {"Authorization": r, "Accept": "*/*"},
            })
        );
        let again = value.clone();
        s.scrub_json(&mut value);
        assert_eq!(value, again);
    }

    #[test]
    fn json_web_keys() {
        let s = Scrubber::builtin();
        let mut value = json!({
            "keys": [
                {"kty": "RSA", "kid": "k1", "n": "0vx7", "e": "AQAB", "d": "X4cT", "p": "83i",
                 "q": "4-dp", "dp": "G4s", "dq": "s9l", "qi": "GyM",
                 "oth": [{"r": "x", "d": "y", "t": "z"}]},
                {"kty": "oct", "k": "Gawg", "alg": "HS256"},
                {"kty": "EC", "crv": "P-256", "x": "f83O", "y": "x_FE"},
            ],
            "d": "2024-01-01",
            "p": {"k": "page"},
        });
        s.scrub_json(&mut value);
        let r = REDACTED;
        assert_eq!(
            value,
            json!({
                "keys": [
                    {"kty": "RSA", "kid": "k1", "n": "0vx7", "e": "AQAB", "d": r, "p": r,
                     "q": r, "dp": r, "dq": r, "qi": r,
                     "oth": [{"r": r, "d": r, "t": r}]},
                    {"kty": "oct", "k": r, "alg": "HS256"},
                    {"kty": "EC", "crv": "P-256", "x": "f83O", "y": "x_FE"},
                ],
                "d": "2024-01-01",
                "p": {"k": "page"},
            })
        );
    }

    #[test]
    fn json_keys_and_top_level_values() {
        let s = Scrubber::builtin();
        let mut value = json!({GHP: 1, AWS: 2, "plain": 3});
        s.scrub_json(&mut value);
        assert_eq!(
            value,
            json!({REDACTED: 1, format!("{REDACTED}#2"): 2, "plain": 3})
        );
        let mut top = json!(format!("token={GHP}"));
        s.scrub_json(&mut top);
        assert_eq!(top, json!(format!("token={REDACTED}")));
        let mut arr = json!([SK, 1, null, "fine"]);
        s.scrub_json(&mut arr);
        assert_eq!(arr, json!([REDACTED, 1, null, "fine"]));
    }

    #[test]
    fn custom_patterns() {
        let s = Scrubber::new(
            &[r"ACME-[0-9]{6}".to_owned(), r"(?i)internal-\w+".to_owned()],
            Vec::new(),
        )
        .unwrap();
        assert_eq!(
            s.scrub_str("id ACME-123456 and Internal-build, ACME-12")
                .into_owned(),
            format!("id {REDACTED} and {REDACTED}, ACME-12")
        );
        // Built-ins still apply.
        assert_eq!(s.scrub_str(GHP).into_owned(), REDACTED);
        // A pattern that matches the marker itself stays idempotent.
        let s = Scrubber::new(
            &["REDACTED".to_owned(), r"\S+".to_owned(), "a*".to_owned()],
            Vec::new(),
        )
        .unwrap();
        let once = s.scrub_str("hello world").into_owned();
        assert_eq!(once, format!("{REDACTED} {REDACTED}"));
        assert_eq!(s.scrub_str(&once), once);
        assert!(!s.contains_secret(&once));
        // Touching matches merge into one marker.
        let s = Scrubber::new(&["ab".to_owned(), "cd".to_owned()], Vec::new()).unwrap();
        assert_eq!(s.scrub_str("xabcdx").into_owned(), format!("x{REDACTED}x"));
    }

    #[test]
    fn invalid_pattern_is_named() {
        let err =
            Scrubber::new(&["ok".to_owned(), "(unclosed".to_owned()], Vec::new()).unwrap_err();
        let ScrubError::InvalidPattern { pattern, .. } = &err else {
            unreachable!("wrong error {err:?}");
        };
        assert_eq!(pattern, "(unclosed");
        assert_eq!(
            err.to_string(),
            "invalid secret pattern `(unclosed`: unclosed group"
        );
        let err = Scrubber::new(&["[z-a]".to_owned()], Vec::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid secret pattern `[z-a]`: invalid character class range, the start must be <= the end"
        );
    }

    #[test]
    fn literal_values() {
        let s = Scrubber::new(
            &[],
            vec![
                "correct horse".to_owned(),
                "abc".to_owned(),
                String::new(),
                "  padded-value\n".to_owned(),
                "with\"quote".to_owned(),
            ],
        )
        .unwrap();
        let r = REDACTED;
        assert_eq!(
            s.scrub_str("said correct horse; abc stays; padded-value too")
                .into_owned(),
            format!("said {r}; abc stays; {r} too")
        );
        assert_eq!(
            s.scrub_str(r#"{"v": "with\"quote"} with"quote"#)
                .into_owned(),
            format!(r#"{{"v": "{r}"}} {r}"#)
        );
        assert!(s.contains_secret("xx correct horsexx"));
        assert!(!s.contains_secret("correct  horse"));
        // Short values only: no literal detector at all.
        let short = Scrubber::new(&[], vec!["a".to_owned(), "xyz".to_owned()]).unwrap();
        assert_eq!(short.detectors.len(), BUILTINS.len());
        assert!(!short.contains_secret("a xyz"));
    }

    #[test]
    fn literal_split_by_quotes() {
        let s = Scrubber::new(&[], vec!["correct-horse-42".to_owned()]).unwrap();
        assert_eq!(
            s.scrub_str(r#"login pw=correct"-horse-"42 now"#)
                .into_owned(),
            format!("login {REDACTED} now")
        );
        assert_eq!(s.detect(r#"pw=correct"-horse-"42"#), ["literal"]);
    }

    #[test]
    fn literal_inside_token_hides_whole_token() {
        // The literal is part of a token: the union of both spans goes, no tail left.
        let s = Scrubber::new(&[], vec!["a1B2c3D4".to_owned()]).unwrap();
        assert_eq!(
            s.scrub_str(&format!("t {GHP} x")).into_owned(),
            format!("t {REDACTED} x")
        );
        let s = Scrubber::new(&[], vec!["hunter2".to_owned()]).unwrap();
        assert_eq!(
            s.scrub_str("pw hunter2, hunter2x").into_owned(),
            format!("pw {REDACTED}, {REDACTED}x")
        );
    }
}
