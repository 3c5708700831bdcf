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
//! | `private-key` | a whole PEM `-----BEGIN … PRIVATE KEY-----` block (RSA, EC, OPENSSH, ENCRYPTED, PKCS#8, PGP `… PRIVATE KEY BLOCK`); an unterminated block is redacted to the end of the text |
//! | `key-value` | the value of a sensitive key in `key=value`, `key: value`, `key => value`, `key := value`, `"key": "value"`, `'key': 'value'`, `\"key\": \"value\"`; the key stays visible. `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` take the rest of the line (or the quoted string) |
//! | `url-password` | the password in `scheme://user:password@host` (the user stays) |
//! | `curl-user` | the password in `curl -u user:password` / `--user` / `--proxy-user` |
//! | `netrc` | the password in `.netrc` lines (`login bob password x`, or a line `password x`) |
//! | `bearer` | the credential after `Bearer ` (at least 16 characters with a digit, so prose survives) |
//! | `openai-anthropic` | `sk-…`, `sk-ant-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…` with at least 20 characters and a digit |
//! | `stripe` | `sk_live_…`, `sk_test_…`, `rk_live_…`, `rk_test_…` |
//! | `github` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` plus at least 36 alphanumerics |
//! | `github-fine-grained` | `github_pat_…` |
//! | `gitlab` | `glpat-…`, `gldt-…`, `glrt-…`, `glptt-…` |
//! | `aws-access-key-id` | `AKIA`/`ASIA` plus exactly 16 uppercase alphanumerics |
//! | `slack` | `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xapp-` tokens |
//! | `google-api-key` | `AIza` plus exactly 35 characters |
//! | `jwt` | three base64url segments, the first starting `eyJ` |
//! | `npm`, `pypi`, `huggingface` | `npm_…`, `pypi-AgE…`, `hf_…` tokens |
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
//! nulls and empty strings stay, as they hold no secret.
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
use std::sync::LazyLock;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde_json::Value;

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
    /// One pattern per detector, same order: which detectors can match.
    /// `None` if it could not be built; then every detector runs.
    prefilter: Option<RegexSet>,
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

/// Checks a candidate match `text[start..end]`.
type Validator = fn(&str, usize, usize) -> bool;

/// Which part of a match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extract {
    /// The whole match.
    Whole,
    /// The first capture group that took part in the match.
    Group,
    /// A key and a separator; the value after it is parsed by hand.
    KeyValue,
}

/// One detector: a compiled regex and how to read its matches.
#[derive(Debug, Clone)]
struct Detector {
    name: &'static str,
    regex: Regex,
    extract: Extract,
    validate: Option<Validator>,
}

/// A built-in detector before compilation.
struct Builtin {
    name: &'static str,
    pattern: &'static str,
    extract: Extract,
    validate: Option<Validator>,
}

/// The built-in detectors. `(?-u:\b)` is an ASCII word boundary: it keeps the
/// fast DFA engines usable on non-ASCII text.
const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "private-key",
        pattern: r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "key-value",
        pattern: r#"[A-Za-z0-9_.\-]*(?i:pass|pwd|secret|token|cred|auth|signature|cookie|(?:api|access|private|ssh|signing|encryption|master|account|client|license|shared|app|deploy)[_.\-]?key)[A-Za-z0-9_.\-]*\\?["'`]?[ \t]*(?:=>|:=|:|=)[ \t]*"#,
        extract: Extract::KeyValue,
        validate: None,
    },
    Builtin {
        name: "url-password",
        pattern: r#"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://[^\s:/?#@"'<>`]*:(?P<secret>[^\s/?#"'<>`]+)@"#,
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "curl-user",
        pattern: r#"(?-u:\b)curl(?-u:\b)[^\n]*?[ \t](?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)["']?[^\s:"']*:(?P<secret>[^\s"']+)"#,
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "netrc",
        pattern: r"(?im)(?:^[ \t]*(?:password|passwd)[ \t]+(?P<line>\S+)[ \t\r]*$|(?-u:\b)login[ \t]+\S+[ \t]+(?:password|passwd)[ \t]+(?P<inline>\S+))",
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "bearer",
        pattern: r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/\-]+=*)",
        extract: Extract::Group,
        validate: Some(bearer_credential),
    },
    Builtin {
        name: "openai-anthropic",
        pattern: r"(?-u:\b)sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        extract: Extract::Whole,
        validate: Some(has_digit),
    },
    Builtin {
        name: "stripe",
        pattern: r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "github",
        pattern: r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "github-fine-grained",
        pattern: r"(?-u:\b)github_pat_[A-Za-z0-9_]{22,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "gitlab",
        pattern: r"(?-u:\b)gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "aws-access-key-id",
        pattern: r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "slack",
        pattern: r"(?-u:\b)(?:xox[abprs]|xapp)-[A-Za-z0-9\-]{10,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "google-api-key",
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
        extract: Extract::Whole,
        validate: Some(not_followed_by_token_char),
    },
    Builtin {
        name: "jwt",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]*",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "npm",
        pattern: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "pypi",
        pattern: r"(?-u:\b)pypi-AgE[A-Za-z0-9_\-]{50,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "huggingface",
        pattern: r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
];

/// `sk-…` keys always carry a digit; `sk-` kebab-case words do not.
fn has_digit(text: &str, start: usize, end: usize) -> bool {
    text[start..end].bytes().any(|b| b.is_ascii_digit())
}

/// A bearer credential is long and has a digit; `Bearer authentication` is prose.
fn bearer_credential(text: &str, start: usize, end: usize) -> bool {
    end - start >= 16 && has_digit(text, start, end)
}

/// A Google API key is exactly 35 characters after `AIza`.
fn not_followed_by_token_char(text: &str, _start: usize, end: usize) -> bool {
    !text[end..]
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Compiles the built-in detectors.
fn compile_builtins() -> Result<Vec<Detector>, regex::Error> {
    BUILTINS
        .iter()
        .map(|b| {
            Ok(Detector {
                name: b.name,
                regex: Regex::new(b.pattern)?,
                extract: b.extract,
                validate: b.validate,
            })
        })
        .collect()
}

/// Builds the prefilter over the detectors' patterns, if it can be built.
fn build_prefilter(detectors: &[Detector]) -> Option<RegexSet> {
    RegexSetBuilder::new(detectors.iter().map(|d| d.regex.as_str()))
        .size_limit(SIZE_LIMIT)
        .build()
        .ok()
}

/// The built-in scrubber, compiled once per process.
static BUILTIN: LazyLock<Scrubber> = LazyLock::new(builtin_scrubber);

#[expect(
    clippy::expect_used,
    reason = "the built-in patterns are constants; the tests compile every one of them"
)]
fn builtin_scrubber() -> Scrubber {
    let detectors = compile_builtins().expect("built-in secret patterns are valid regexes");
    let prefilter = build_prefilter(&detectors);
    Scrubber {
        detectors,
        prefilter,
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
                regex,
                extract: Extract::Whole,
                validate: None,
            });
        }
        if let Some(regex) = literal_regex(literal_values)? {
            detectors.push(Detector {
                name: "literal",
                regex,
                extract: Extract::Whole,
                validate: None,
            });
        }
        let prefilter = build_prefilter(&detectors);
        Ok(Scrubber {
            detectors,
            prefilter,
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
        let mut names: Vec<&'static str> = Vec::new();
        for index in self.candidates(text) {
            if let Some(detector) = self.detectors.get(index) {
                let mut spans = Vec::new();
                detector.collect(text, &mut spans);
                if !names.contains(&detector.name) && redact_spans(text, spans).is_some() {
                    names.push(detector.name);
                }
            }
        }
        names
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
                if map.keys().any(|k| self.contains_secret(k)) {
                    let old = std::mem::take(map);
                    for (key, mut item) in old {
                        let child_sensitive = sensitive || is_sensitive_key(&key);
                        self.scrub_json_inner(&mut item, child_sensitive);
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
                        self.scrub_json_inner(item, sensitive || is_sensitive_key(key));
                    }
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// Indexes of the detectors that may match `text`.
    fn candidates(&self, text: &str) -> Vec<usize> {
        match &self.prefilter {
            Some(set) => set.matches(text).into_iter().collect(),
            None => (0..self.detectors.len()).collect(),
        }
    }

    /// One scrubbing round: `None` if nothing changes.
    fn round(&self, text: &str) -> Option<String> {
        let candidates = self.candidates(text);
        if candidates.is_empty() {
            return None;
        }
        let mut spans = Vec::new();
        for index in candidates {
            if let Some(detector) = self.detectors.get(index) {
                detector.collect(text, &mut spans);
            }
        }
        redact_spans(text, spans)
    }
}

impl Detector {
    /// Appends the byte spans of the secrets this detector finds in `text`.
    fn collect(&self, text: &str, spans: &mut Vec<(usize, usize)>) {
        let mut push = |start: usize, end: usize| {
            if start < end && self.validate.is_none_or(|valid| valid(text, start, end)) {
                spans.push((start, end));
            }
        };
        match self.extract {
            Extract::Whole => {
                for m in self.regex.find_iter(text) {
                    push(m.start(), m.end());
                }
            }
            Extract::Group => {
                for caps in self.regex.captures_iter(text) {
                    if let Some(m) = caps.iter().skip(1).flatten().next() {
                        push(m.start(), m.end());
                    }
                }
            }
            Extract::KeyValue => {
                for m in self.regex.find_iter(text) {
                    if let Some((start, end)) = key_value_span(text, m) {
                        push(start, end);
                    }
                }
            }
        }
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

// ---------------------------------------------------------------------------
// Sensitive keys
// ---------------------------------------------------------------------------

/// Keys whose unquoted value runs to the end of the line.
const HEADER_KEYS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Segments that make a key sensitive on their own.
const SENSITIVE_SEGMENTS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "secrets",
    "token",
    "credential",
    "credentials",
    "creds",
    "auth",
    "authorization",
    "signature",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
];

/// Endings that make a glued segment sensitive (`dbpassword`, `accesstoken`).
const SENSITIVE_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
];

/// Segments before `key` that make it a secret key (`api_key`, `ssh-key`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "ssh",
    "signing",
    "encryption",
    "master",
    "account",
    "client",
    "license",
    "shared",
    "app",
    "deploy",
];

/// Segments that make a key describe a secret instead of holding one.
const BENIGN_SEGMENTS: &[&str] = &[
    "count",
    "counts",
    "num",
    "max",
    "min",
    "limit",
    "limits",
    "used",
    "usage",
    "total",
    "remaining",
    "budget",
    "len",
    "length",
    "size",
    "type",
    "kind",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "lifetime",
    "file",
    "path",
    "dir",
    "url",
    "uri",
    "endpoint",
    "env",
    "var",
    "name",
    "stdin",
];

/// True if a value under this key (JSON key, `key=value`, header name) is a secret.
///
/// See the module documentation for the rules.
pub fn is_sensitive_key(key: &str) -> bool {
    let trimmed = key.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let is = |word: &str| trimmed.eq_ignore_ascii_case(word);
    if HEADER_KEYS.iter().any(|h| is(h)) {
        return true;
    }
    if is("pwd") || is("oldpwd") {
        return false;
    }
    let segments = key_segments(trimmed);
    let among = |s: &str, list: &[&str]| list.iter().any(|w| s.eq_ignore_ascii_case(w));
    if segments.iter().any(|s| among(s, BENIGN_SEGMENTS)) {
        return false;
    }
    segments.iter().enumerate().any(|(i, s)| {
        among(s, SENSITIVE_SEGMENTS)
            || SENSITIVE_SUFFIXES.iter().any(|suffix| {
                s.len() >= suffix.len() && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
            })
            || (s.eq_ignore_ascii_case("pass") && segments.len() > 1)
            || (among(s, &["key", "keys"])
                && i > 0
                && segments
                    .get(i - 1)
                    .is_some_and(|p| among(p, KEY_QUALIFIERS)))
    })
}

/// Cuts a key into segments (ASCII alphanumeric runs) at punctuation,
/// camelCase and letter/digit boundaries; case is kept.
fn key_segments(key: &str) -> Vec<&str> {
    let bytes = key.as_bytes();
    let mut segments = Vec::new();
    let mut start: Option<usize> = None;
    for (i, &c) in bytes.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if let Some(s) = start.take() {
                segments.push(&key[s..i]);
            }
            continue;
        }
        if let Some(s) = start
            && let Some(&prev) = i.checked_sub(1).and_then(|p| bytes.get(p))
        {
            let next_is_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = (c.is_ascii_uppercase()
                && (prev.is_ascii_lowercase() || prev.is_ascii_digit()))
                || (c.is_ascii_uppercase() && prev.is_ascii_uppercase() && next_is_lower)
                || (c.is_ascii_digit() != prev.is_ascii_digit());
            if boundary {
                segments.push(&key[s..i]);
                start = Some(i);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        segments.push(&key[s..]);
    }
    segments
}

// ---------------------------------------------------------------------------
// Values after a sensitive key in free text
// ---------------------------------------------------------------------------

/// Characters that end an unquoted value.
fn ends_unquoted(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '`' | ',' | ';' | '&' | ')' | '}' | ']' | '\\'
        )
}

/// Authentication scheme words that take the following word along.
const SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "digest",
    "bot",
    "negotiate",
    "ntlm",
    "apikey",
];

/// Unquoted values that hold no secret.
const KEYWORDS: &[&str] = &["true", "false", "null", "none", "nil", "undefined"];

/// Type names that follow `key:` in source code.
const TYPE_WORDS: &[&str] = &[
    "str",
    "string",
    "bool",
    "boolean",
    "int",
    "integer",
    "number",
    "float",
    "double",
    "char",
    "bytes",
    "any",
    "unknown",
    "object",
    "usize",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "f32",
    "f64",
    "vec",
    "option",
    "secret",
    "secretstring",
];

/// Characters a key is made of (the `key` group of the `key-value` pattern).
fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// The span of the value that follows a sensitive key, if it holds a secret.
///
/// `m` is a match of the `key-value` pattern: a key, then a separator. The
/// key is the longest prefix of key characters (the separator starts with
/// none), so no capture groups are needed: resolving captures costs far more
/// than a plain find on text full of `key: value` pairs.
fn key_value_span(text: &str, m: regex::Match<'_>) -> Option<(usize, usize)> {
    let matched = m.as_str();
    let key_len = matched
        .find(|c: char| !is_key_char(c))
        .unwrap_or(matched.len());
    let (key, sep) = matched.split_at(key_len);
    if !is_sensitive_key(key) {
        return None;
    }
    // `http://auth:8080`, `/path/token:x`: part of a URL or path, not a key.
    if matches!(text[..m.start()].chars().next_back(), Some('/' | '@')) {
        return None;
    }
    let start = m.end();
    let rest = &text[start..];
    // `\"key\": \"value\"`: JSON inside a JSON string.
    if let Some(inner) = rest.strip_prefix("\\\"") {
        let len = inner.find("\\\"").unwrap_or_else(|| line_len(inner));
        return quoted_span(start + 2, &inner[..len]);
    }
    let first = rest.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let inner = &rest[1..];
        let len = quoted_len(inner, first);
        return quoted_span(start + 1, &inner[..len]);
    }
    let lower_key = key
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase();
    if HEADER_KEYS.contains(&lower_key.as_str()) {
        let is_digest = rest
            .get(..7)
            .is_some_and(|w| w.eq_ignore_ascii_case("digest "));
        let len = if is_digest {
            line_len(rest)
        } else {
            rest.find(['"', '\'', '`', '\\', '\r', '\n'])
                .unwrap_or(rest.len())
        };
        let value = rest[..len].trim_end();
        return (!value.is_empty()).then_some((start, start + value.len()));
    }
    let mut len = rest.find(ends_unquoted).unwrap_or(rest.len());
    if len == 0 {
        return None;
    }
    // `token: Bearer abc`: the scheme word takes the credential along.
    if SCHEMES.iter().any(|s| rest[..len].eq_ignore_ascii_case(s)) {
        let after = &rest[len..];
        let gap = after.len() - after.trim_start_matches([' ', '\t']).len();
        if gap > 0 {
            let word = after[gap..]
                .find(ends_unquoted)
                .unwrap_or(after.len() - gap);
            if word > 0 {
                len += gap + word;
            }
        }
    }
    let value = &rest[..len];
    let next = rest[len..].chars().next();
    let op = sep.trim_start_matches(['\\', '"', '\'', '`']);
    let colon = op.trim().starts_with(':') && !op.trim().starts_with(":=");
    let spaced = op.contains([' ', '\t']);
    if holds_no_secret(value, sep, op, colon, spaced, next) {
        return None;
    }
    // `passphrase: correct horse battery`, INI `password = two words`: after
    // `:` or a spaced `=` the value is the rest of the line, up to a comment
    // or a character that closes an enclosing structure.
    if (colon || spaced) && matches!(next, Some(' ' | '\t')) {
        let mut line = &rest[..rest
            .find(['\r', '\n', '"', '\'', '`', '\\', ',', ';', '}', ']', ')'])
            .unwrap_or(rest.len())];
        for comment in [" #", "\t#", " //"] {
            if let Some(i) = line.find(comment) {
                line = &line[..i];
            }
        }
        len = len.max(line.trim_end().len());
    }
    Some((start, start + len))
}

/// Length of a quoted string's content: up to the closing quote (skipping
/// backslash escapes) or, if unterminated, the end of the line.
fn quoted_len(s: &str, quote: char) -> usize {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '\r' | '\n' => return i,
            c if c == quote => return i,
            _ => {}
        }
    }
    s.len()
}

/// Length up to the end of the line.
fn line_len(s: &str) -> usize {
    s.find(['\r', '\n']).unwrap_or(s.len())
}

/// The span of quoted content starting at `start`, unless it is empty or a
/// pure variable reference.
fn quoted_span(start: usize, content: &str) -> Option<(usize, usize)> {
    (!content.is_empty() && !is_reference(content)).then_some((start, start + content.len()))
}

/// `$VAR`, `${VAR}`, `${{ secrets.X }}`, `{{ .Values.x }}`: names a secret, holds none.
fn is_reference(v: &str) -> bool {
    if v.starts_with("${") || v.starts_with("{{") {
        return true;
    }
    v.strip_prefix('$').is_some_and(|name| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// True if an unquoted value after a sensitive key is not a secret.
fn holds_no_secret(
    value: &str,
    sep: &str,
    op: &str,
    colon: bool,
    spaced: bool,
    next: Option<char>,
) -> bool {
    let lower = value.to_ascii_lowercase();
    // `token == x`, `auth::login`: comparison or path, not an assignment.
    if value.starts_with(['=', ':', '{']) || op.trim_end().ends_with("::") {
        return true;
    }
    if value.starts_with('[') && !value.starts_with(REDACTED) {
        return true;
    }
    if KEYWORDS.contains(&lower.as_str()) || is_reference(value) {
        return true;
    }
    // `host:443` (a quoted key, as in `"token":123`, is not a host).
    if sep == ":" && value.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    // `connect(password=pw)`: a keyword argument.
    if next == Some(')') && is_identifier_path(value) {
        return true;
    }
    if !(colon || spaced) {
        return false;
    }
    // Source code: `password: String`, `token = get()`, `password = self.password`.
    value.starts_with(['$', '&', '*', '<', '%'])
        || value.contains(['(', '<'])
        || TYPE_WORDS.contains(&lower.trim_end_matches(['?', '!']))
        || (spaced && next == Some(';'))
        || ((spaced || matches!(next, Some(',' | ';' | '}')))
            && value.contains(['.', ':', '-'])
            && is_identifier_path(value))
}

/// `a`, `a.b`, `a::b`, `a->b`: identifiers joined by member access.
fn is_identifier_path(v: &str) -> bool {
    v.replace("::", ".")
        .replace("->", ".")
        .split('.')
        .all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use serde_json::json;

    fn scrub(text: &str) -> String {
        Scrubber::builtin().scrub_str(text).into_owned()
    }

    // Realistic-looking but fake credentials.
    const GHP: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    const SK: &str = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
    const SK_ANT: &str = "sk-ant-api03-AbCdEf012345GhIjKl678901MnOpQr";
    const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
    const PEM_RSA: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c2\nZm9vYmFyYmF6\n-----END RSA PRIVATE KEY-----";

    /// (detector, input, expected output)
    fn positives() -> Vec<(&'static str, String, String)> {
        let r = REDACTED;
        vec![
            // private-key
            ("private-key", format!("key:\n{PEM_RSA}\ndone"), format!("key:\n{r}\ndone")),
            (
                "private-key",
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n".into(),
                format!("{r}\n"),
            ),
            (
                "private-key",
                "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA==\n-----END EC PRIVATE KEY-----".into(),
                r.into(),
            ),
            (
                "private-key",
                "x -----BEGIN ENCRYPTED PRIVATE KEY-----\\nMIIFHDBOBgkqhkiG9w0BBQ0w\\n-----END ENCRYPTED PRIVATE KEY----- y".into(),
                format!("x {r} y"),
            ),
            (
                "private-key",
                "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n(truncated)".into(),
                r.into(),
            ),
            // authorization headers
            ("key-value", "Authorization: Bearer abc.def-123".into(), format!("Authorization: {r}")),
            ("key-value", "authorization: basic dXNlcjpwYXNzd29yZA==\nHost: x".into(), format!("authorization: {r}\nHost: x")),
            ("key-value", "> Proxy-Authorization: Basic Zm9vOmJhcg==".into(), format!("> Proxy-Authorization: {r}")),
            (
                "key-value",
                r#"curl -H "Authorization: Bearer abc123" https://api.example.com"#.into(),
                format!(r#"curl -H "Authorization: {r}" https://api.example.com"#),
            ),
            ("key-value", r#"{"authorization": "Bearer xyz789"}"#.into(), format!(r#"{{"authorization": "{r}"}}"#)),
            ("key-value", "Cookie: session=abc; csrftoken=def".into(), format!("Cookie: {r}")),
            // key=value pairs
            ("key-value", "export DB_PASSWORD=hunter2".into(), format!("export DB_PASSWORD={r}")),
            ("key-value", "mysql --password=s3cr3t! --user=root".into(), format!("mysql --password={r} --user=root")),
            ("key-value", "GET /cb?code=1&api_key=abc123&x=1".into(), format!("GET /cb?code=1&api_key={r}&x=1")),
            ("key-value", "Server=db;User Id=sa;Password=Pa55w0rd;".into(), format!("Server=db;User Id=sa;Password={r};")),
            ("key-value", "client_secret: 'abc def'".into(), format!("client_secret: '{r}'")),
            ("key-value", "password: hunter2".into(), format!("password: {r}")),
            ("key-value", "spring.datasource.password=tiger".into(), format!("spring.datasource.password={r}")),
            ("key-value", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG".into(), format!("aws_secret_access_key = {r}")),
            ("key-value", r#"const apiKey = "k-123";"#.into(), format!(r#"const apiKey = "{r}";"#)),
            ("key-value", "X-Api-Key: abcdef".into(), format!("X-Api-Key: {r}")),
            ("key-value", "token: Bearer abc".into(), format!("token: {r}")),
            ("key-value", "config = {:access_token => 'xyz'}".into(), format!("config = {{:access_token => '{r}'}}")),
            ("key-value", r#"{"token":12345,"n":1}"#.into(), format!(r#"{{"token":{r},"n":1}}"#)),
            ("key-value", r#"{\"password\": \"p4ss\"}"#.into(), format!(r#"{{\"password\": \"{r}\"}}"#)),
            ("key-value", "GITHUB_TOKEN=abc PWD=/work".into(), format!("GITHUB_TOKEN={r} PWD=/work")),
            ("key-value", "DB_PASS=abc".into(), format!("DB_PASS={r}")),
            ("key-value", "credentials: xyz".into(), format!("credentials: {r}")),
            (
                "key-value",
                "passphrase: correct horse battery staple # note\nuser: bob".into(),
                format!("passphrase: {r} # note\nuser: bob"),
            ),
            ("key-value", "[db]\npassword = two words\n".into(), format!("[db]\npassword = {r}\n")),
            ("key-value", "const c = { token: abc123 };".into(), format!("const c = {{ token: {r} }};")),
            ("key-value", "{password: abc, user: x}".into(), format!("{{password: {r}, user: x}}")),
            // url-password
            ("url-password", "git clone https://bob:hunter2@github.com/x/y".into(), format!("git clone https://bob:{r}@github.com/x/y")),
            ("url-password", "redis://:s3cret@localhost:6379/0".into(), format!("redis://:{r}@localhost:6379/0")),
            ("url-password", "postgres://app:p@ss:w0rd@db:5432/app".into(), format!("postgres://app:{r}@db:5432/app")),
            // curl-user
            ("curl-user", "curl -u admin:hunter2 https://x".into(), format!("curl -u admin:{r} https://x")),
            ("curl-user", "curl -s --user 'admin:hunter2' https://x".into(), format!("curl -s --user 'admin:{r}' https://x")),
            // netrc
            ("netrc", "machine github.com login bob password hunter2".into(), format!("machine github.com login bob password {r}")),
            ("netrc", "machine x\n  login bob\n  password hunter2\n".into(), format!("machine x\n  login bob\n  password {r}\n")),
            // bearer
            ("bearer", "X-Custom: Bearer abcdef0123456789xyz".into(), format!("X-Custom: Bearer {r}")),
            // openai / anthropic
            ("openai-anthropic", format!("key {SK} ok"), format!("key {r} ok")),
            ("openai-anthropic", format!("({SK_ANT})"), format!("({r})")),
            ("openai-anthropic", "sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJ".into(), r.into()),
            // stripe
            ("stripe", "sk_live_4eC39HqLyjWDarjtT1zdp7dc".into(), r.into()),
            ("stripe", "rk_test_51HqLyjWDarjtT1zdp7dcXyZ".into(), r.into()),
            // github
            ("github", format!("token {GHP}."), format!("token {r}.")),
            ("github", "gho_16C7e42F292c6912E7710c838347Ae178B4a".into(), r.into()),
            ("github", "ghu_16C7e42F292c6912E7710c838347Ae178B4a".into(), r.into()),
            ("github", "ghs_16C7e42F292c6912E7710c838347Ae178B4a".into(), r.into()),
            ("github", "ghr_16C7e42F292c6912E7710c838347Ae178B4a".into(), r.into()),
            (
                "github-fine-grained",
                "github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJ0123456789abcdefghijABCDEF".into(),
                r.into(),
            ),
            // gitlab
            ("gitlab", "glpat-xxxxxxxxxxxxxxxxxxxx".into(), r.into()),
            ("gitlab", "use glpat-AbCdEf0123456789_-zz. Done".into(), format!("use {r}. Done")),
            // aws
            ("aws-access-key-id", format!("id={AWS}"), format!("id={r}")),
            ("aws-access-key-id", "ASIAY34FZKBOKMUTVV7A is temporary".into(), format!("{r} is temporary")),
            // slack
            ("slack", "xoxb-2635482374-2634823746-abcdEFGHijklMNOP".into(), r.into()),
            ("slack", "xoxp-123456789012-abcdef".into(), r.into()),
            ("slack", "xoxa-2-123456789012".into(), r.into()),
            ("slack", "xoxr-123456789012".into(), r.into()),
            ("slack", "xoxs-123456789012".into(), r.into()),
            // google
            ("google-api-key", "key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q here".into(), format!("key {r} here")),
            // jwt
            ("jwt", format!("got {JWT} back"), format!("got {r} back")),
            // npm / pypi / huggingface
            ("npm", "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789".into(), format!("//registry.npmjs.org/:_authToken={r}")),
            ("npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789".into(), r.into()),
            ("pypi", "pypi-AgEIcHlwaS5vcmcCJGI2ZTFmNjM4LWE4NTctNDQ2NC04ZmE4LWE5ZDRkYzc0YzFlYwACKlsz".into(), r.into()),
            ("huggingface", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567".into(), r.into()),
        ]
    }

    /// (detector the input nearly trips, input that must survive unchanged)
    fn near_misses() -> Vec<(&'static str, &'static str)> {
        vec![
            (
                "private-key",
                "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----",
            ),
            (
                "private-key",
                "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----",
            ),
            (
                "private-key",
                "the private key is stored in ~/.ssh/id_ed25519",
            ),
            ("key-value", "Please reset your password before logging in."),
            ("key-value", "The Authorization header is required."),
            (
                "key-value",
                "max_tokens=5 tokens_used: 10 \"input_tokens\": 42",
            ),
            ("key-value", "author: Jane Doe\nkeyboard=us\nsecretary: Bob"),
            (
                "key-value",
                "token_count=17 password_min_length: 12 token_type: bearer",
            ),
            ("key-value", "PWD=/work/main\nOLDPWD=/root"),
            ("key-value", "test result: ok. 5 passed; 0 failed; pass=5"),
            (
                "key-value",
                "fn login(password: String, token: &str) -> bool {",
            ),
            (
                "key-value",
                "let token = get_token(&config);\nif token == \"\" { return; }",
            ),
            (
                "key-value",
                "password = self.password\nsecret = cfg.secret;",
            ),
            (
                "key-value",
                "password: ${{ secrets.DB_PASSWORD }}\nDB_PASSWORD=$DB_PASSWORD",
            ),
            (
                "key-value",
                "\"password\": \"\", \"token\": null, \"auth\": true",
            ),
            (
                "key-value",
                "connecting to auth.docker.io:443 and http://auth:8080/",
            ),
            (
                "key-value",
                "use auth::login;\nconnect(user=u, password=pw)",
            ),
            ("key-value", "\"credentials\": {"),
            ("url-password", "https://user@example.com/path"),
            ("url-password", "http://localhost:8080/api?x=a@b"),
            ("url-password", "git@github.com:org/repo.git"),
            ("curl-user", "curl -u admin https://x"),
            ("curl-user", "docker run -u 1000:1000 image"),
            ("netrc", "password reset required"),
            ("netrc", "machine github.com login bob"),
            ("bearer", "Bearer tokens are opaque strings."),
            ("bearer", "Bearer authentication-for-everyone"),
            ("openai-anthropic", "sk-abc123"),
            ("openai-anthropic", "the skeleton crew"),
            ("openai-anthropic", "task-1234567890abcdefghijklmnop"),
            ("openai-anthropic", "sk-some-very-long-css-class-name"),
            ("stripe", "sk_live_short"),
            ("github", "ghp_abc123"),
            ("github", "ghx_16C7e42F292c6912E7710c838347Ae178B4a"),
            ("github-fine-grained", "github_pat_short"),
            ("gitlab", "glpat-short"),
            ("aws-access-key-id", "AKIAabcdefghijklmnop"),
            ("aws-access-key-id", "AKIAIOSFODNN7EXAMPL"),
            ("aws-access-key-id", "AKIAIOSFODNN7EXAMPLEXX"),
            ("slack", "xoxo-123456789012 and xoxb-123"),
            ("google-api-key", "AIzaSyA1b2C3d4E5f6G7h8"),
            (
                "google-api-key",
                "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7R8",
            ),
            ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"),
            ("jwt", "aGVsbG8gd29ybGQ.dGhpcyBpcyBiYXNlNjQ.c2lnbmF0dXJl"),
            ("npm", "npm_config_cache=/tmp/npm"),
            ("pypi", "pypi-AgEshort"),
            ("huggingface", "hf_hub_download(repo_id)"),
        ]
    }

    #[test]
    fn every_builtin_pattern_compiles() {
        assert_eq!(compile_builtins().unwrap().len(), BUILTINS.len());
        assert!(build_prefilter(&compile_builtins().unwrap()).is_some());
    }

    #[test]
    fn detector_positives() {
        let s = Scrubber::builtin();
        for (detector, input, expected) in positives() {
            assert_eq!(
                scrub(&input),
                expected,
                "detector {detector}, input {input:?}"
            );
            assert!(
                s.detect(&input).contains(&detector),
                "detector {detector} did not fire on {input:?}: {:?}",
                s.detect(&input)
            );
            assert!(s.contains_secret(&input), "{input:?}");
        }
    }

    #[test]
    fn detector_near_misses_survive() {
        let s = Scrubber::builtin();
        for (detector, input) in near_misses() {
            let out = s.scrub_str(input);
            assert!(
                matches!(out, Cow::Borrowed(_)),
                "detector {detector}: {input:?} became {out:?}"
            );
            assert_eq!(out, input);
            assert!(!s.contains_secret(input));
            assert!(
                s.detect(input).is_empty(),
                "{input:?}: {:?}",
                s.detect(input)
            );
        }
    }

    #[test]
    fn every_builtin_detector_has_a_positive_and_a_near_miss() {
        let positives = positives();
        let misses = near_misses();
        for builtin in BUILTINS {
            assert!(
                positives.iter().any(|p| p.0 == builtin.name),
                "no positive for {}",
                builtin.name
            );
            assert!(
                misses.iter().any(|m| m.0 == builtin.name),
                "no near miss for {}",
                builtin.name
            );
        }
    }

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
    fn sensitive_keys() {
        for key in [
            "password",
            "PASSWORD",
            "db_password",
            "dbPassword",
            "passwd",
            "passphrase",
            "DB_PWD",
            "secret",
            "client_secret",
            "clientSecret",
            "token",
            "GITHUB_TOKEN",
            "accessToken",
            "id_token",
            "refresh-token",
            "api_key",
            "apiKey",
            "api-key",
            "APIKey",
            "X-API-Key",
            "apikey",
            "access_key",
            "AWS_ACCESS_KEY_ID",
            "private_key",
            "privateKey",
            "credential",
            "credentials",
            "auth",
            "x-auth-token",
            "Authorization",
            "Proxy-Authorization",
            "Cookie",
            "Set-Cookie",
            "DB_PASS",
            "ssh_key",
            "AccountKey",
            "--password",
            "\"password\"",
            "signature",
            "secret_id",
        ] {
            assert!(is_sensitive_key(key), "{key} should be sensitive");
        }
        for key in [
            "tokens_used",
            "max_tokens",
            "maxTokens",
            "input_tokens",
            "author",
            "authors",
            "authority",
            "keyboard",
            "key",
            "monkey",
            "secretary",
            "tokenizer",
            "passed",
            "pass",
            "bypass",
            "token_count",
            "token_type",
            "password_min_length",
            "secret_name",
            "password_file",
            "auth_url",
            "PWD",
            "OLDPWD",
            "primary_key",
            "sort_key",
            "session_id",
            "name",
            "",
        ] {
            assert!(!is_sensitive_key(key), "{key} should not be sensitive");
        }
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

    #[test]
    fn key_segments_split() {
        assert_eq!(key_segments("X-API-Key"), ["X", "API", "Key"]);
        assert_eq!(key_segments("APIKey"), ["API", "Key"]);
        assert_eq!(key_segments("maxTokens"), ["max", "Tokens"]);
        assert_eq!(key_segments("db.password2"), ["db", "password", "2"]);
        assert_eq!(key_segments("__x__"), ["x"]);
        assert_eq!(key_segments("ümlaut_Key"), ["mlaut", "Key"]);
        assert!(key_segments("").is_empty());
    }
}
