//! The built-in detectors: one regex each, and the checks on their matches.

use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexSet, RegexSetBuilder};
use regex_automata::nfa::thompson;
use regex_automata::util::pool::Pool;
use regex_automata::{Input, MatchKind, PatternSet, hybrid};

use super::SIZE_LIMIT;
use super::keys::key_value_span;
use super::quoting::SPLIT_PATTERN;

/// Checks a candidate match `text[start..end]`.
pub(super) type Validator = fn(&str, usize, usize) -> bool;

/// Which part of a match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Extract {
    /// The whole match.
    Whole,
    /// The first capture group that took part in the match.
    Group,
    /// A key and a separator; the value after it is parsed by hand.
    KeyValue,
}

/// One detector: a regex and how to read its matches.
#[derive(Debug, Clone)]
pub(super) struct Detector {
    pub(super) name: &'static str,
    /// As [`Builtin`]'s; empty for a user's detector, which every text is searched for.
    pub(super) keywords: &'static [&'static str],
    /// As [`Builtin`]'s; empty for a user's detector.
    pub(super) needs: &'static [u8],
    pub(super) regex: LazyRegex,
    pub(super) extract: Extract,
    pub(super) validate: Option<Validator>,
}

/// A detector's regex. A built-in one is compiled on first use, once per
/// process (the scrubbers cloned from the built-in one share it): text the
/// prefilter finds clean never needs it, and a hook's process scrubs a few
/// lines.
#[derive(Debug, Clone)]
pub(super) struct LazyRegex {
    pattern: &'static str,
    cell: Arc<OnceLock<Regex>>,
}

impl LazyRegex {
    /// A regex compiled already (a user's, checked when the scrubber is built).
    pub(super) fn compiled(regex: Regex) -> LazyRegex {
        LazyRegex {
            pattern: "",
            cell: Arc::new(OnceLock::from(regex)),
        }
    }

    fn builtin(pattern: &'static str) -> LazyRegex {
        LazyRegex {
            pattern,
            cell: Arc::new(OnceLock::new()),
        }
    }

    /// The regex, compiled now if it was not.
    #[expect(
        clippy::expect_used,
        reason = "only built-in patterns are compiled here: constants, each compiled by the tests"
    )]
    pub(super) fn get(&self) -> &Regex {
        self.cell.get_or_init(|| {
            Regex::new(self.pattern).expect("built-in secret patterns are valid regexes")
        })
    }

    /// The pattern.
    pub(super) fn as_str(&self) -> &str {
        match self.cell.get() {
            Some(r) => r.as_str(),
            None => self.pattern,
        }
    }
}

/// A built-in detector before compilation.
pub(super) struct Builtin {
    name: &'static str,
    /// Words one of which every match holds, compared ASCII
    /// case-insensitively (in ASCII text): text with none of them is not
    /// searched ([`Keywords`]).
    keywords: &'static [&'static str],
    /// Bytes one of which every match also holds, besides a keyword; empty
    /// for none. `key-value`'s keywords (`pass`, `key`, `auth`, …) are common
    /// words, and its regex is the costliest to compile (3.5 million
    /// instructions, in an `explain` that printed the word `pass`), but it
    /// matches only a key followed by `:` or `=`.
    needs: &'static [u8],
    pattern: &'static str,
    extract: Extract,
    validate: Option<Validator>,
}

/// A command-line value: double-quoted, single-quoted or bare, one capture
/// group each (the quotes stay visible).
macro_rules! flag_value {
    () => {
        r#"(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'`;|&)]+))"#
    };
}

/// The words of a command line before a flag, each quoted string whole (so a
/// `-p` inside `-e "select -price"` is no flag), lazily.
macro_rules! words_before {
    () => {
        r#"(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|[^\s"'|;&])+)*?[ \t]+"#
    };
}

/// The built-in detectors. `(?-u:\b)` is an ASCII word boundary: it keeps the
/// fast DFA engines usable on non-ASCII text. A token with its own prefix
/// starts at a boundary or right after `_`, which is a word character: a
/// token glued into an identifier (`MY_ghp_…`, `x_sk-…`) is still a token, and
/// the `_` is masked with it.
pub(super) const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "private-key",
        keywords: &["-----begin"],
        needs: b"",
        pattern: r"(?s)-----(?i-u:BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?:.*?-----(?i-u:END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----|.*)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "putty-private-key",
        keywords: &["putty-user-key-file-"],
        needs: b"",
        pattern: r"(?s)PuTTY-User-Key-File-[23]:.*?(Private-Lines:.*?(?:Private-MAC:[ \t]*[0-9A-Fa-f]+|\z))",
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "jwk-private",
        keywords: &["\"d", "\"p", "\"q", "\"k"],
        needs: b"",
        pattern: r#"\\?"(?:d|p|q|dp|dq|qi|k)\\?"[ \t]*:[ \t]*\\?"([A-Za-z0-9_\-+/=]+)"#,
        extract: Extract::Group,
        validate: Some(in_jwk),
    },
    Builtin {
        name: "key-value",
        keywords: &[
            "pass",
            "pwd",
            "secret",
            "token",
            "cred",
            "auth",
            "signature",
            "cookie",
            "key",
        ],
        needs: b":=",
        pattern: r#"[A-Za-z0-9_.\-]*(?i:pass|pwd|secret|token|cred|auth|signature|cookie|(?:api|access|private|ssh|signing|encryption|master|account|client|license|shared|app|deploy)[_.\-]?key)[A-Za-z0-9_.\-]*\\?["'`]?[ \t]*(?:=>|:=|:|=)[ \t]*"#,
        extract: Extract::KeyValue,
        validate: None,
    },
    Builtin {
        name: "aws-secret-key",
        keywords: &["secret"],
        needs: b"",
        pattern: r#"(?i)(?-u:\b)(?:aws[_.\-]?secret[_.\-]?(?:access[_.\-]?)?key|secret[_.\-]?access[_.\-]?key)(?:["'`]?[ \t]*(?:=>|:=|:|=)[ \t]*|[ \t]+)["'`]?([A-Za-z0-9/+]{40})"#,
        extract: Extract::Group,
        validate: Some(aws_secret),
    },
    Builtin {
        name: "url-password",
        keywords: &["://"],
        needs: b"",
        pattern: r#"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://[^\s:/?#@"'<>`]*:(?:([^\s/?#"'<>`]+)|([^\s:/?#@"'<>`]*[/#][^\s?@"'<>`]*))@"#,
        extract: Extract::Group,
        validate: Some(url_password),
    },
    Builtin {
        name: "url-token",
        keywords: &["://"],
        needs: b"",
        pattern: r#"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://([A-Za-z0-9_\-]{20,})@"#,
        extract: Extract::Group,
        validate: Some(token_like),
    },
    Builtin {
        name: "url-query-password",
        keywords: &["pass=", "pw=", "pwd=", "passwd=", "password="],
        needs: b"",
        pattern: r#"(?i)[^\s&?][?&](?:pass|pw|pwd|passwd|password)=([^&#\s"'<>`]+)"#,
        extract: Extract::Group,
        validate: Some(not_a_placeholder),
    },
    Builtin {
        name: "curl-user",
        keywords: &["curl"],
        needs: b"",
        pattern: r#"(?-u:\b)curl(?-u:\b)[^\n]*?[ \t](?:-[uU](?:[ \t]+|=)?|--user(?:[ \t]+|=)|--proxy-user(?:[ \t]+|=))["']?[^\s:"']*:(?P<secret>[^\s"']+)"#,
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "mysql-password",
        keywords: &["mysql", "mariadb"],
        needs: b"",
        pattern: concat!(
            r"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlslap|mysqlpump|mariadb|mariadb-dump|mariadb-admin)(?-u:\b)",
            words_before!(),
            "-p",
            flag_value!()
        ),
        extract: Extract::Group,
        validate: Some(not_a_placeholder),
    },
    Builtin {
        name: "sshpass",
        keywords: &["sshpass"],
        needs: b"",
        pattern: concat!(
            r"(?-u:\b)sshpass(?:[ \t]+(?:-[fdP][ \t]*[^\s\-]\S*|-[ve]\S*))*[ \t]+-p[ \t]*",
            flag_value!()
        ),
        extract: Extract::Group,
        validate: Some(not_a_placeholder),
    },
    Builtin {
        name: "registry-login",
        keywords: &["login"],
        needs: b"",
        pattern: concat!(
            r"(?-u:\b)(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry|crane[ \t]+auth)[ \t]+login(?-u:\b)",
            words_before!(),
            r"(?:-p(?:[ \t]+|=)?|--password(?:[ \t]+|=))",
            flag_value!()
        ),
        extract: Extract::Group,
        validate: Some(not_a_placeholder),
    },
    Builtin {
        name: "openssl-pass",
        keywords: &["pass:"],
        needs: b"",
        pattern: r#"(?m)(?:^|[ \t])-pass(?:in|out|word)?[ \t]+["']?pass:([^\s"']+)"#,
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "gpg-passphrase",
        keywords: &["--passphrase"],
        needs: b"",
        pattern: concat!(
            r"(?-u:\b)gpg2?(?-u:\b)",
            words_before!(),
            r"--passphrase(?:[ \t]+|=)",
            flag_value!()
        ),
        extract: Extract::Group,
        validate: Some(not_a_placeholder),
    },
    Builtin {
        name: "kubectl-literal",
        keywords: &["--from-literal"],
        needs: b"",
        pattern: r#"--from-literal(?:=|[ \t]+)(?:"[A-Za-z0-9_.\-]+=([^"\n]+)"|'[A-Za-z0-9_.\-]+=([^'\n]+)'|[A-Za-z0-9_.\-]+=(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'`;|&)]+)))"#,
        extract: Extract::Group,
        validate: Some(not_a_placeholder),
    },
    Builtin {
        name: "netrc",
        keywords: &["passw"],
        needs: b"",
        pattern: r"(?im)(?:^[ \t]*(?:password|passwd)[ \t]+(?P<line>\S+)[ \t\r]*$|(?-u:\b)login[ \t]+\S+[ \t]+(?:password|passwd)[ \t]+(?P<inline>\S+))",
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "bearer",
        keywords: &["bearer"],
        needs: b"",
        pattern: r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/\-]+=*)",
        extract: Extract::Group,
        validate: Some(bearer_credential),
    },
    Builtin {
        name: "openai-anthropic",
        keywords: &["sk-"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        extract: Extract::Whole,
        validate: Some(has_digit),
    },
    Builtin {
        name: "stripe",
        keywords: &["_live_", "_test_", "whsec_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "github",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))gh[pousr]_[A-Za-z0-9]{36,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "github-fine-grained",
        keywords: &["github_pat_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))github_pat_[A-Za-z0-9_]{22,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "gitlab",
        keywords: &["glpat-", "gldt-", "glrt-", "glptt-"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "aws-access-key-id",
        keywords: &["akia", "asia"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "slack",
        keywords: &["xox", "xapp-"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))(?:xox[abprs]|xapp|xoxe(?:\.xox[abp])?)-[A-Za-z0-9\-]{10,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "slack-webhook",
        keywords: &["hooks.slack.com/"],
        needs: b"",
        pattern: r"(?-u:\b)https?://hooks\.slack\.com/(?:services|workflows|triggers)/(?:[A-Za-z0-9_\-]+/){2,3}([A-Za-z0-9]{16,})",
        extract: Extract::Group,
        validate: Some(last_path_segment),
    },
    Builtin {
        name: "google-api-key",
        keywords: &["aiza"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))AIza[0-9A-Za-z_\-]{35}",
        extract: Extract::Whole,
        validate: Some(not_followed_by_token_char),
    },
    Builtin {
        name: "google-oauth",
        keywords: &["ya29.", "gocspx-", "1//0"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))(?:ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[0-9A-Za-z_\-]{20,}|1//0[0-9A-Za-z_\-]{30,})",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "azure-sas",
        keywords: &["sig="],
        needs: b"",
        pattern: r"(?i)(?:[?&]|(?-u:\b)SharedAccessSignature[ \t]+)sig=([A-Za-z0-9%+/=_\-]{16,})",
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "jwt",
        keywords: &["eyj"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]*",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "npm",
        keywords: &["npm_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))npm_[A-Za-z0-9]{36}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "pypi",
        keywords: &["pypi-age"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))pypi-AgE[A-Za-z0-9_\-]{50,}",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "huggingface",
        keywords: &["hf_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))hf_[A-Za-z0-9]{30,}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "twilio",
        keywords: &["SK", "AC"],
        needs: b"",
        pattern: r#"(?:_|(?-u:\b))(?:(SK[0-9a-f]{32})|AC[0-9a-f]{32}(?:["']?[ \t]*[:,][ \t]*["']?|[ \t]+)([0-9a-f]{32}))(?-u:\b)"#,
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "sendgrid",
        keywords: &["sg."],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        extract: Extract::Whole,
        validate: Some(not_followed_by_token_char),
    },
    Builtin {
        name: "digitalocean",
        keywords: &["_v1_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))do[opr]_v1_[0-9a-f]{64}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "vault",
        keywords: &["hvs.", "hvb.", "hvr."],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))hv[sbr]\.[A-Za-z0-9_\-]{24,}",
        extract: Extract::Whole,
        validate: Some(has_digit),
    },
    Builtin {
        name: "databricks",
        keywords: &["dapi"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))dapi[0-9a-f]{32}(?:-[0-9]+)?(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "shopify",
        keywords: &["shpat_", "shpss_", "shpca_", "shppa_"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))shp(?:at|ss|ca|pa)_[0-9A-Fa-f]{32}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "age",
        keywords: &["age-secret-key-1"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))AGE-SECRET-KEY-1[0-9A-Z]{58}(?-u:\b)",
        extract: Extract::Whole,
        validate: None,
    },
    Builtin {
        name: "discord-webhook",
        keywords: &["discord"],
        needs: b"",
        pattern: r"(?-u:\b)https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api(?:/v[0-9]+)?/webhooks/[0-9]+/([A-Za-z0-9_\-]{20,})",
        extract: Extract::Group,
        validate: None,
    },
    Builtin {
        name: "telegram",
        keywords: &[":aa"],
        needs: b"",
        pattern: r"(?:_|(?-u:\b))(?:bot)?([0-9]{8,10}:AA[A-Za-z0-9_\-]{33})",
        extract: Extract::Group,
        validate: Some(not_followed_by_token_char),
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

/// A Google API key is exactly 35 characters after `AIza` (a SendGrid key, a
/// Telegram bot token are as long as they are): no token character follows.
fn not_followed_by_token_char(text: &str, _start: usize, end: usize) -> bool {
    !text[end..]
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An AWS secret key is 40 base64 characters, not part of a longer run, with
/// both cases and a digit, `/` or `+`; a 40-character hex digest is not one.
fn aws_secret(text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let value = &bytes[start..end];
    let longer = bytes
        .get(end)
        .is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'='));
    !longer
        && value.iter().any(u8::is_ascii_uppercase)
        && value.iter().any(u8::is_ascii_lowercase)
        && value
            .iter()
            .any(|&b| b.is_ascii_digit() || matches!(b, b'/' | b'+'))
}

/// The secret of a webhook URL is its last path segment.
fn last_path_segment(text: &str, _start: usize, end: usize) -> bool {
    !text[end..].starts_with('/')
}

/// A URL password with `/` or `#` in it is one only if what comes before the
/// first of them is not a port: `http://host:8080/users/bob@example.com`.
fn url_password(text: &str, start: usize, end: usize) -> bool {
    let value = &text[start..end];
    value.find(['/', '#']).is_none_or(|i| {
        let head = &value[..i];
        !head.is_empty() && !head.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A bare URL user name is a token when it has letters and digits, and
/// either both cases or at least 32 characters; `firstname_lastname_1990` is
/// a user name.
fn token_like(text: &str, start: usize, end: usize) -> bool {
    let value = &text.as_bytes()[start..end];
    let upper = value.iter().any(u8::is_ascii_uppercase);
    let lower = value.iter().any(u8::is_ascii_lowercase);
    value.iter().any(u8::is_ascii_digit)
        && (upper || lower)
        && ((upper && lower) || value.len() >= 32)
}

/// A value that names a secret rather than holding one: a variable or
/// command substitution (`$PW`, `"$(cat f)"`, `%PW%`, `{{ .pw }}`), a
/// `<placeholder>`, or a mask (`***`). Single quotes keep `$` literal.
fn not_a_placeholder(text: &str, start: usize, end: usize) -> bool {
    let value = &text[start..end];
    if text[..start].ends_with('\'') {
        return true;
    }
    !(value.starts_with('$')
        || value.starts_with("{{")
        || (value.len() > 1 && value.starts_with('%') && value.ends_with('%'))
        || (value.starts_with('<') && value.ends_with('>'))
        || value.bytes().all(|b| b == b'*'))
}

/// How far a JWK member looks for the braces of its object.
const JWK_REACH: usize = 16 << 10;

/// A JWK private member (`"d"`, `"p"`, …) counts only in a JSON object that
/// also has a `"kty"` member: `{"d": "2024-01-01"}` is no key.
fn in_jwk(text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let kty_at = |i: usize| {
        i.checked_sub(1).and_then(|p| bytes.get(p)) == Some(&b'"')
            && bytes
                .get(i..)
                .is_some_and(|rest| rest.starts_with(b"kty\"") || rest.starts_with(b"kty\\\""))
    };
    // Back to the `{` that opens the member's object.
    let mut depth = 0usize;
    let mut opened = false;
    for i in (start.saturating_sub(JWK_REACH)..start).rev() {
        match bytes.get(i) {
            Some(b'}') => depth += 1,
            Some(b'{') if depth == 0 => {
                opened = true;
                break;
            }
            Some(b'{') => depth -= 1,
            _ if depth == 0 && kty_at(i) => return true,
            _ => {}
        }
    }
    if !opened {
        return false;
    }
    // On to the `}` that closes it.
    depth = 0;
    for i in end..bytes.len().min(end + JWK_REACH) {
        match bytes.get(i) {
            Some(b'{') => depth += 1,
            Some(b'}') if depth == 0 => return false,
            Some(b'}') => depth -= 1,
            _ if depth == 0 && kty_at(i) => return true,
            _ => {}
        }
    }
    false
}

/// Compiles the built-in detectors.
#[cfg(test)]
pub(super) fn compile_builtins() -> Result<Vec<Detector>, regex::Error> {
    BUILTINS
        .iter()
        .map(|b| {
            Ok(Detector {
                name: b.name,
                keywords: b.keywords,
                needs: b.needs,
                regex: LazyRegex::compiled(Regex::new(b.pattern)?),
                extract: b.extract,
                validate: b.validate,
            })
        })
        .collect()
}

/// The built-in detectors, each regex compiled on first use.
pub(super) fn lazy_builtins() -> Vec<Detector> {
    BUILTINS
        .iter()
        .map(|b| Detector {
            name: b.name,
            keywords: b.keywords,
            needs: b.needs,
            regex: LazyRegex::builtin(b.pattern),
            extract: b.extract,
            validate: b.validate,
        })
        .collect()
}

/// The longest text [`Keywords`] answer for: past it, one pass of the
/// [`Prefilter`] costs less than a search per detector whose keyword occurs.
pub(super) const KEYWORDS_MAX_BYTES: usize = 4096;

/// Which detectors may match a short ASCII text, told by their keywords: a
/// detector none of whose keywords the text holds cannot match it. So a
/// process that scrubs a few short lines (a hook) never builds the
/// [`Prefilter`], nor a detector's regex unless the text holds one of its
/// keywords.
///
/// Keywords match regardless of ASCII case, except those written with an
/// upper-case letter, which match as written (for a case-sensitive pattern:
/// Twilio's `AC…` is not in every "workspace").
///
/// The first texts are answered by one pass over the text, trying at each
/// byte the keywords that start with it: some hundreds of instructions for a
/// line, where building one Aho-Corasick automaton over the keywords costs
/// about 0.9 million (callgrind). A process that goes on scrubbing (the
/// gateway) builds the automaton once it has scanned
/// [`SCAN_BYTES_BEFORE_AUTOMATON`] bytes; both give the same answer. (Counted
/// in texts, `explain`'s output, a hundred short strings, built it.)
///
/// Only ASCII text: under `(?i)` a Unicode regex matches `K` (U+212A) for
/// `k` and `ſ` (U+017F) for `s`, which no ASCII keyword finds.
#[derive(Debug)]
pub(super) struct Keywords {
    /// Each keyword (ASCII-lowercased unless it matches as written), its
    /// detector, and whether it matches as written.
    words: Vec<(String, usize, bool)>,
    /// For each byte, the keywords whose first byte, lowercased, it is.
    starting: Vec<Vec<usize>>,
    /// The detectors without keywords: they may match any text.
    always: Vec<usize>,
    /// For each detector, bytes one of which every match of it holds
    /// ([`Builtin`]'s `needs`); empty for none.
    needs: Vec<&'static [u8]>,
    /// Bytes of text answered so far.
    answered: std::sync::atomic::AtomicUsize,
    /// The automaton, once built (`None`: it could not be, so texts are scanned).
    automaton: OnceLock<Option<aho_corasick::AhoCorasick>>,
}

/// Bytes of text answered by scanning before the automaton is built.
pub(super) const SCAN_BYTES_BEFORE_AUTOMATON: usize = 32 * 1024;

impl Keywords {
    /// The keywords of `detectors`.
    pub(super) fn build(detectors: &[Detector]) -> Keywords {
        let mut words = Vec::new();
        let mut always = Vec::new();
        for (i, d) in detectors.iter().enumerate() {
            if d.keywords.is_empty() {
                always.push(i);
            }
            for k in d.keywords {
                let exact = k.bytes().any(|b| b.is_ascii_uppercase());
                let word = if exact {
                    (*k).to_owned()
                } else {
                    k.to_ascii_lowercase()
                };
                words.push((word, i, exact));
            }
        }
        let needs = detectors.iter().map(|d| d.needs).collect();
        let mut starting = vec![Vec::new(); 256];
        for (w, (word, _, _)) in words.iter().enumerate() {
            if let Some(b) = word.bytes().next() {
                starting[usize::from(b.to_ascii_lowercase())].push(w);
            }
        }
        Keywords {
            words,
            starting,
            always,
            needs,
            answered: std::sync::atomic::AtomicUsize::new(0),
            automaton: OnceLock::new(),
        }
    }

    /// A contiguous NFA: a DFA of these keywords takes three times as long to
    /// build (callgrind: 2.9 against 0.9 million instructions), and the texts
    /// it answers for are short.
    fn automaton(&self) -> Option<&aho_corasick::AhoCorasick> {
        self.automaton
            .get_or_init(|| {
                aho_corasick::AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                    .build(self.words.iter().map(|(w, _, _)| w))
                    .ok()
            })
            .as_ref()
    }

    /// The detectors that may match `text`, in order, and whether shell
    /// quoting may split a token in it (it holds a quote or a backslash);
    /// `None` for text these cannot answer for (not ASCII, or long).
    pub(super) fn candidates(&self, text: &str, detectors: usize) -> Option<(Vec<usize>, bool)> {
        let n = self
            .answered
            .fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
        self.candidates_by(text, detectors, n >= SCAN_BYTES_BEFORE_AUTOMATON)
    }

    /// As [`Keywords::candidates`], by the automaton or by scanning.
    pub(super) fn candidates_by(
        &self,
        text: &str,
        detectors: usize,
        automaton: bool,
    ) -> Option<(Vec<usize>, bool)> {
        if text.len() > KEYWORDS_MAX_BYTES || !text.is_ascii() {
            return None;
        }
        let mut hit = vec![false; detectors];
        for &i in &self.always {
            hit[i] = true;
        }
        // Built only when asked for: the scan needs none.
        match if automaton { self.automaton() } else { None } {
            Some(ac) => {
                for m in ac.find_overlapping_iter(text) {
                    let (word, i, exact) = &self.words[m.pattern().as_usize()];
                    if !exact || &text[m.range()] == word {
                        hit[*i] = true;
                    }
                }
            }
            None => {
                let bytes = text.as_bytes();
                let lower = text.to_ascii_lowercase();
                for at in 0..bytes.len() {
                    for &w in &self.starting[usize::from(lower.as_bytes()[at])] {
                        let (word, i, exact) = &self.words[w];
                        let tail = if *exact {
                            &bytes[at..]
                        } else {
                            &lower.as_bytes()[at..]
                        };
                        if !hit[*i] && tail.starts_with(word.as_bytes()) {
                            hit[*i] = true;
                        }
                    }
                }
            }
        }
        let holds = |bytes: &[u8]| bytes.is_empty() || text.bytes().any(|b| bytes.contains(&b));
        let found = (0..detectors)
            .filter(|&i| hit[i] && self.needs.get(i).is_none_or(|n| holds(n)))
            .collect();
        Some((found, text.contains(['\'', '"', '\\'])))
    }
}

/// A lazy DFA's per-search state, kept for the next search.
type CachePool = Pool<hybrid::dfa::Cache, Box<dyn Fn() -> hybrid::dfa::Cache + Send + Sync>>;

/// Which of the detectors' patterns, and last the pattern of a word split by
/// shell quoting, match somewhere in a text.
///
/// A forward lazy DFA over all the patterns answers that, and building it
/// costs about two thirds of a [`RegexSet`] of them (callgrind: 11 against 17
/// million instructions for the built-in ones), which also builds what finding
/// where a match starts takes. Where the lazy DFA gives up (a long, varied text
/// that keeps clearing its cache, or a non-ASCII byte near a user pattern's
/// Unicode `\b`) or cannot take the patterns at all, a `RegexSet` of the same
/// patterns, built then and kept, answers instead; the two give the same answer.
pub(super) struct Prefilter {
    /// The lazy DFA and its caches; `None` if the patterns are beyond it.
    dfa: Option<(hybrid::dfa::DFA, CachePool)>,
    patterns: Vec<String>,
    set: OnceLock<Option<RegexSet>>,
}

impl std::fmt::Debug for Prefilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefilter")
            .field("patterns", &self.patterns.len())
            .field("set_built", &self.set.get().is_some())
            .finish_non_exhaustive()
    }
}

/// The lazy DFA's cache, in bytes; a `RegexSet`'s is the same.
const DFA_CACHE: usize = 2 << 20;

impl Prefilter {
    /// The prefilter of `detectors`, if their patterns can be built together.
    pub(super) fn build(detectors: &[Detector]) -> Option<Prefilter> {
        Prefilter::with_cache(detectors, DFA_CACHE)
    }

    /// [`Prefilter::build`] with a lazy DFA cache of `bytes`.
    pub(super) fn with_cache(detectors: &[Detector], bytes: usize) -> Option<Prefilter> {
        let patterns: Vec<String> = detectors
            .iter()
            .map(|d| d.regex.as_str().to_string())
            .chain([SPLIT_PATTERN.to_string()])
            .collect();
        let dfa = hybrid::dfa::DFA::builder()
            .configure(
                hybrid::dfa::DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(bytes)
                    .skip_cache_capacity_check(true)
                    // When to give up, as the `regex` crate's own searches do.
                    .minimum_cache_clear_count(Some(3))
                    .minimum_bytes_per_state(Some(10))
                    // A user's Unicode `\b`: the search stops at a non-ASCII
                    // byte, and the set answers.
                    .unicode_word_boundary(true),
            )
            .thompson(
                thompson::Config::new()
                    .which_captures(thompson::WhichCaptures::None)
                    .nfa_size_limit(Some(SIZE_LIMIT)),
            )
            .build_many(&patterns)
            .ok()
            .map(|dfa| {
                let for_caches = dfa.clone();
                let caches: CachePool = Pool::new(Box::new(move || for_caches.create_cache()));
                (dfa, caches)
            });
        let prefilter = Prefilter {
            dfa,
            patterns,
            set: OnceLock::new(),
        };
        // Patterns the lazy DFA cannot take are searched by the set alone.
        if prefilter.dfa.is_none() && prefilter.set().is_none() {
            return None;
        }
        Some(prefilter)
    }

    /// The set of the same patterns, built on first use.
    fn set(&self) -> Option<&RegexSet> {
        self.set
            .get_or_init(|| {
                RegexSetBuilder::new(&self.patterns)
                    .size_limit(SIZE_LIMIT)
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// The indexes of the patterns that match somewhere in `text`, in order;
    /// `None` if that cannot be told (then every detector must run).
    pub(super) fn matches(&self, text: &str) -> Option<Vec<usize>> {
        if let Some((dfa, caches)) = &self.dfa {
            let mut found = PatternSet::new(dfa.pattern_len());
            let mut cache = caches.get();
            if dfa
                .try_which_overlapping_matches(&mut cache, &Input::new(text), &mut found)
                .is_ok()
            {
                return Some(found.iter().map(|p| p.as_usize()).collect());
            }
        }
        self.set().map(|s| s.matches(text).into_iter().collect())
    }
}

impl Detector {
    /// Appends the byte spans of the secrets this detector finds in `text`.
    pub(super) fn collect(&self, text: &str, spans: &mut Vec<(usize, usize)>) {
        let mut push = |start: usize, end: usize| {
            if start < end && self.validate.is_none_or(|valid| valid(text, start, end)) {
                spans.push((start, end));
            }
        };
        match self.extract {
            Extract::Whole => {
                for m in self.regex.get().find_iter(text) {
                    push(m.start(), m.end());
                }
            }
            Extract::Group => {
                for caps in self.regex.get().captures_iter(text) {
                    if let Some(m) = caps.iter().skip(1).flatten().next() {
                        push(m.start(), m.end());
                    }
                }
            }
            Extract::KeyValue => {
                for m in self.regex.get().find_iter(text) {
                    if let Some((start, end)) = key_value_span(text, m) {
                        push(start, end);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, clippy::panic, reason = "tests")]
pub(super) mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::scrub::{REDACTED, Scrubber};

    pub(in crate::scrub) fn scrub(text: &str) -> String {
        Scrubber::builtin().scrub_str(text).into_owned()
    }

    // Realistic-looking but fake credentials.
    pub(in crate::scrub) const GHP: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    pub(in crate::scrub) const SK: &str = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z";
    pub(in crate::scrub) const SK_ANT: &str = "sk-ant-api03-AbCdEf012345GhIjKl678901MnOpQr";
    pub(in crate::scrub) const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    pub(in crate::scrub) const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
    pub(in crate::scrub) const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    const PUTTY_PUBLIC: &str = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240101\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIGxvbmdwdWJsaWNrZXlieXRlc2hlcmVmb3J0ZXN0\naW5nb25seQ==\n";
    pub(in crate::scrub) const PEM_RSA: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c2\nZm9vYmFyYmF6\n-----END RSA PRIVATE KEY-----";

    /// (detector, input, expected output)
    pub(in crate::scrub) fn positives() -> Vec<(&'static str, String, String)> {
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
            (
                "private-key",
                "-----begin rsa private key-----\nmiiepaibaakcaqea1c2\n-----end rsa private key-----\nok".into(),
                format!("{r}\nok"),
            ),
            // putty-private-key
            (
                "putty-private-key",
                format!("{PUTTY_PUBLIC}Private-Lines: 1\nAAAAIHByaXZhdGVrZXlieXRlc2Zvcm5vYm9keTEyMzQ1Njc4\nPrivate-MAC: 5a8f4c2e1b7d9a3f6e0c8b2d4f1a7e9c3b5d8f0a2c4e6b8d0f1a3c5e7b9d1f2a\n$ ls"),
                format!("{PUTTY_PUBLIC}{r}\n$ ls"),
            ),
            (
                "putty-private-key",
                "PuTTY-User-Key-File-2: ssh-rsa\r\nEncryption: aes256-cbc\r\nPublic-Lines: 1\r\nAAAAB3NzaC1yc2EAAAABJQAAAQEA\r\nPrivate-Lines: 2\r\nc2VjcmV0cHJpdmF0ZWJ5dGVz\r\nbW9yZXNlY3JldGJ5dGVz\r\nPrivate-MAC: 0123456789abcdef0123456789abcdef01234567\r\n".into(),
                format!("PuTTY-User-Key-File-2: ssh-rsa\r\nEncryption: aes256-cbc\r\nPublic-Lines: 1\r\nAAAAB3NzaC1yc2EAAAABJQAAAQEA\r\n{r}\r\n"),
            ),
            (
                "putty-private-key",
                format!("{PUTTY_PUBLIC}Private-Lines: 1\nAAAAIHByaXZh\n(truncated)"),
                format!("{PUTTY_PUBLIC}{r}"),
            ),
            // jwk-private
            (
                "jwk-private",
                r#"{"kty":"RSA","n":"0vx7agoebGcQSuu","e":"AQAB","d":"X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN","p":"83i-7IvMGXoMXCskv","q":"4-dpcwD1","dp":"G4sPXkc6Ya9y8oJW","dq":"s9lAH9fggBsoFR8Oac2R","qi":"GyM_p5ZdAHJ8YU3"}"#.into(),
                format!(r#"{{"kty":"RSA","n":"0vx7agoebGcQSuu","e":"AQAB","d":"{r}","p":"{r}","q":"{r}","dp":"{r}","dq":"{r}","qi":"{r}"}}"#),
            ),
            (
                "jwk-private",
                "{\n  \"d\": \"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A\",\n  \"kty\": \"OKP\",\n  \"crv\": \"Ed25519\"\n}".into(),
                format!("{{\n  \"d\": \"{r}\",\n  \"kty\": \"OKP\",\n  \"crv\": \"Ed25519\"\n}}"),
            ),
            (
                "jwk-private",
                r#"{"keys": [{"kty": "oct", "k": "GawgguFyGrWKav7AX4VKUg", "alg": "HS256"}, {"kty": "RSA", "e": "AQAB"}]}"#.into(),
                format!(r#"{{"keys": [{{"kty": "oct", "k": "{r}", "alg": "HS256"}}, {{"kty": "RSA", "e": "AQAB"}}]}}"#),
            ),
            (
                "jwk-private",
                r#"{\"kty\":\"EC\",\"crv\":\"P-256\",\"d\":\"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI\"}"#.into(),
                format!(r#"{{\"kty\":\"EC\",\"crv\":\"P-256\",\"d\":\"{r}\"}}"#),
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
            // aws-secret-key
            (
                "aws-secret-key",
                format!("aws configure set aws_secret_access_key {AWS_SECRET}"),
                format!("aws configure set aws_secret_access_key {r}"),
            ),
            (
                "aws-secret-key",
                format!("tool --access-key-id {AWS} --secret-access-key {AWS_SECRET} --region x"),
                format!("tool --access-key-id {r} --secret-access-key {r} --region x"),
            ),
            (
                "aws-secret-key",
                format!("export AWS_SECRET_ACCESS_KEY={AWS_SECRET}"),
                format!("export AWS_SECRET_ACCESS_KEY={r}"),
            ),
            (
                "aws-secret-key",
                format!("$env:AWS_SECRET_ACCESS_KEY = \"{AWS_SECRET}\""),
                format!("$env:AWS_SECRET_ACCESS_KEY = \"{r}\""),
            ),
            (
                "aws-secret-key",
                format!("{{\"SecretAccessKey\": \"{AWS_SECRET}\"}}"),
                format!("{{\"SecretAccessKey\": \"{r}\"}}"),
            ),
            // url-password
            ("url-password", "git clone https://bob:hunter2@github.com/x/y".into(), format!("git clone https://bob:{r}@github.com/x/y")),
            ("url-password", "redis://:s3cret@localhost:6379/0".into(), format!("redis://:{r}@localhost:6379/0")),
            ("url-password", "postgres://app:p@ss:w0rd@db:5432/app".into(), format!("postgres://app:{r}@db:5432/app")),
            ("url-password", "https://user:pa#ss@host/x".into(), format!("https://user:{r}@host/x")),
            ("url-password", "https://user:pa/ss@host/a@b".into(), format!("https://user:{r}@host/a@b")),
            ("url-password", "https://x-access-token:v1.a1b2c3d4e5@github.com/o/r".into(), format!("https://x-access-token:{r}@github.com/o/r")),
            // url-token
            ("url-token", format!("git clone https://{GHP}@github.com/o/r.git"), format!("git clone https://{r}@github.com/o/r.git")),
            ("url-token", "https://AbCdEf0123456789GhIjKl@git.example.com/r.git".into(), format!("https://{r}@git.example.com/r.git")),
            ("url-token", "https://0123456789abcdef0123456789abcdef01234567@api.example.com".into(), format!("https://{r}@api.example.com")),
            // url-query-password
            ("url-query-password", "https://example.com/login?user=bob&pass=hunter2&x=1".into(), format!("https://example.com/login?user=bob&pass={r}&x=1")),
            ("url-query-password", "http://cam.local/snapshot.cgi?user=admin&pw=s3cr3t".into(), format!("http://cam.local/snapshot.cgi?user=admin&pw={r}")),
            ("url-query-password", "GET /api?PWD=Pa55w0rd HTTP/1.1".into(), format!("GET /api?PWD={r} HTTP/1.1")),
            ("url-query-password", "https://x.example/?a=1&pass=hunter2#top".into(), format!("https://x.example/?a=1&pass={r}#top")),
            // curl-user
            ("curl-user", "curl -u admin:hunter2 https://x".into(), format!("curl -u admin:{r} https://x")),
            ("curl-user", "curl -s --user 'admin:hunter2' https://x".into(), format!("curl -s --user 'admin:{r}' https://x")),
            ("curl-user", "curl -uadmin:hunter2 https://x".into(), format!("curl -uadmin:{r} https://x")),
            ("curl-user", "curl -s -Uproxy:s3cret -x proxy:3128 https://x".into(), format!("curl -s -Uproxy:{r} -x proxy:3128 https://x")),
            // mysql-password
            ("mysql-password", "mysql -h db -u root -phunter2 app".into(), format!("mysql -h db -u root -p{r} app")),
            ("mysql-password", "mysqldump -uroot -p'Pa55 w0rd' app > dump.sql".into(), format!("mysqldump -uroot -p'{r}' app > dump.sql")),
            ("mysql-password", "mariadb -pS3cr3t -e 'select 1'".into(), format!("mariadb -p{r} -e 'select 1'")),
            ("mysql-password", "mysql -p'$ecret' app".into(), format!("mysql -p'{r}' app")),
            (
                "mysql-password",
                "mysql -e \"select 1 -- -x\" --user='a b' -phunter2".into(),
                format!("mysql -e \"select 1 -- -x\" --user='a b' -p{r}"),
            ),
            // sshpass
            ("sshpass", "sshpass -p hunter2 ssh bob@host".into(), format!("sshpass -p {r} ssh bob@host")),
            ("sshpass", "sshpass -v -p'hunter 2' scp f host:".into(), format!("sshpass -v -p'{r}' scp f host:")),
            ("sshpass", "sshpass -phunter2 ssh host".into(), format!("sshpass -p{r} ssh host")),
            // registry-login
            ("registry-login", "docker login -u bob -p hunter2 registry.example.com".into(), format!("docker login -u bob -p {r} registry.example.com")),
            ("registry-login", "docker login --username bob --password s3cr3t ghcr.io".into(), format!("docker login --username bob --password {r} ghcr.io")),
            ("registry-login", "podman login quay.io -u bob --password=s3cr3t".into(), format!("podman login quay.io -u bob --password={r}")),
            (
                "registry-login",
                "helm registry login r.example.com --username u --password 'p@ss w0rd'".into(),
                format!("helm registry login r.example.com --username u --password '{r}'"),
            ),
            // openssl-pass
            (
                "openssl-pass",
                "openssl pkcs12 -export -in c.pem -passout pass:hunter2 -out c.p12".into(),
                format!("openssl pkcs12 -export -in c.pem -passout pass:{r} -out c.p12"),
            ),
            ("openssl-pass", "openssl rsa -in k.pem -passin 'pass:s3cret' -out k2.pem".into(), format!("openssl rsa -in k.pem -passin 'pass:{r}' -out k2.pem")),
            ("openssl-pass", "openssl enc -aes-256-cbc -pass pass:MySecret -in f".into(), format!("openssl enc -aes-256-cbc -pass pass:{r} -in f")),
            ("openssl-pass", "openssl pkcs12 -in x.p12 -password pass:abc123".into(), format!("openssl pkcs12 -in x.p12 -password pass:{r}")),
            // gpg-passphrase
            ("gpg-passphrase", "gpg --batch --passphrase hunter2 -d f.gpg".into(), format!("gpg --batch --passphrase {r} -d f.gpg")),
            (
                "gpg-passphrase",
                "gpg --pinentry-mode loopback --passphrase='s3cr3t' -c f".into(),
                format!("gpg --pinentry-mode loopback --passphrase='{r}' -c f"),
            ),
            // kubectl-literal
            (
                "kubectl-literal",
                "kubectl create secret generic db --from-literal=password=hunter2 --from-literal=user=bob".into(),
                format!("kubectl create secret generic db --from-literal=password={r} --from-literal=user={r}"),
            ),
            (
                "kubectl-literal",
                "kubectl create secret generic x --from-literal='api-token=abc 123' -n y".into(),
                format!("kubectl create secret generic x --from-literal='api-token={r}' -n y"),
            ),
            (
                "kubectl-literal",
                "kubectl create secret generic x --from-literal key=S3cr3t".into(),
                format!("kubectl create secret generic x --from-literal key={r}"),
            ),
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
            ("stripe", "secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw.".into(), format!("secret {r}.")),
            // github
            ("github", format!("token {GHP}."), format!("token {r}.")),
            // Glued into an identifier after `_`: the `_` is masked with it.
            ("github", format!("nope_{GHP} x"), format!("nope{r} x")),
            ("github", format!("GITHUB_TOKEN_{GHP}"), format!("GITHUB_TOKEN{r}")),
            ("aws-access-key-id", format!("key_{AWS}"), format!("key{r}")),
            ("openai-anthropic", format!("x_{SK}"), format!("x{r}")),
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
            ("slack", "xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTI".into(), r.into()),
            ("slack", "refresh xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODk ok".into(), format!("refresh {r} ok")),
            (
                "slack-webhook",
                "curl -X POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX -d x".into(),
                format!("curl -X POST https://hooks.slack.com/services/T00000000/B00000000/{r} -d x"),
            ),
            (
                "slack-webhook",
                "https://hooks.slack.com/workflows/T01ABCDEF/A02BCDEFG/123456789012345678/abcdefGHIJKL0123456789ab".into(),
                format!("https://hooks.slack.com/workflows/T01ABCDEF/A02BCDEFG/123456789012345678/{r}"),
            ),
            // google
            ("google-api-key", "key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q here".into(), format!("key {r} here")),
            // google-oauth
            ("google-oauth", "access ya29.a0AfH6SMBx7Vb2Tn4Kq9ZcXyW8LmP3rQ1sD5fG7hJ ok".into(), format!("access {r} ok")),
            ("google-oauth", "client 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".into(), format!("client {r}")),
            ("google-oauth", "refresh=1//0gLx3Zy8vB2nQ7kT5rW9pXcYd4Hf6Jm1Ks8Lt0Nv2Pw".into(), format!("refresh={r}")),
            // azure
            (
                "azure-sas",
                "https://acct.blob.core.windows.net/c/b.txt?sv=2021-08-06&sp=r&se=2030-01-01T00:00:00Z&sig=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA%3D%3D".into(),
                format!("https://acct.blob.core.windows.net/c/b.txt?sv=2021-08-06&sp=r&se=2030-01-01T00:00:00Z&sig={r}"),
            ),
            (
                "azure-sas",
                "SAS=SharedAccessSignature sr=https%3A%2F%2Fns.servicebus.windows.net%2Fq&sig=abcDEF123%2Bxyz%3D456789&se=1700000000&skn=Root".into(),
                format!("SAS=SharedAccessSignature sr=https%3A%2F%2Fns.servicebus.windows.net%2Fq&sig={r}&se=1700000000&skn=Root"),
            ),
            (
                "azure-sas",
                "SharedAccessSignature sig=abcDEF123%2Bxyz%3D456789&se=1&sr=x".into(),
                format!("SharedAccessSignature sig={r}&se=1&sr=x"),
            ),
            (
                "key-value",
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFy+YmF6/cXV4==;EndpointSuffix=core.windows.net".into(),
                format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={r};EndpointSuffix=core.windows.net"),
            ),
            (
                "key-value",
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc+def/123=".into(),
                format!("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={r}"),
            ),
            // jwt
            ("jwt", format!("got {JWT} back"), format!("got {r} back")),
            // npm / pypi / huggingface
            ("npm", "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789".into(), format!("//registry.npmjs.org/:_authToken={r}")),
            ("npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789".into(), r.into()),
            (
                "key-value",
                "//registry.npmjs.org/:_authToken=00000000-0000-0000-0000-000000000000".into(),
                format!("//registry.npmjs.org/:_authToken={r}"),
            ),
            ("pypi", "pypi-AgEIcHlwaS5vcmcCJGI2ZTFmNjM4LWE4NTctNDQ2NC04ZmE4LWE5ZDRkYzc0YzFlYwACKlsz".into(), r.into()),
            ("huggingface", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567".into(), r.into()),
            // twilio
            ("twilio", "key SKa1b2c3d4e5f60718293a4b5c6d7e8f90 ok".into(), format!("key {r} ok")),
            (
                "twilio",
                r#"client = Client("AC0123456789abcdef0123456789abcdef", "f0e1d2c3b4a5968778695a4b3c2d1e0f")"#.into(),
                format!(r#"client = Client("AC0123456789abcdef0123456789abcdef", "{r}")"#),
            ),
            (
                "twilio",
                "AC0123456789abcdef0123456789abcdef f0e1d2c3b4a5968778695a4b3c2d1e0f".into(),
                format!("AC0123456789abcdef0123456789abcdef {r}"),
            ),
            // sendgrid, digitalocean, vault, databricks, shopify, age
            ("sendgrid", "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".into(), r.into()),
            (
                "digitalocean",
                "token dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(),
                format!("token {r}"),
            ),
            ("digitalocean", "dor_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(), r.into()),
            ("vault", "VAULT_TOKEN_VALUE hvs.CAESIJ1a2b3c4d5e6f7g8h9i0jKLMNOPQRSTUVWXyz".into(), format!("VAULT_TOKEN_VALUE {r}")),
            ("vault", "hvb.AAAAAQJ1a2b3c4d5e6f7g8h9i0jKLMNOP".into(), r.into()),
            ("vault", "hvr.a1b2c3d4e5f6g7h8i9j0k1l2m3n4".into(), r.into()),
            ("databricks", "dapi0123456789abcdef0123456789abcdef".into(), r.into()),
            ("databricks", "x dapi0123456789abcdef0123456789abcdef-2 y".into(), format!("x {r} y")),
            ("shopify", "shpat_0123456789abcdef0123456789ABCDEF".into(), r.into()),
            ("shopify", "shpss_0123456789abcdef0123456789abcdef shpca_0123456789abcdef0123456789abcdef".into(), format!("{r} {r}")),
            (
                "age",
                "# created: 2024-01-01\nAGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE\n".into(),
                format!("# created: 2024-01-01\n{r}\n"),
            ),
            // secrets split by shell quoting: the whole word goes
            (
                "openai-anthropic",
                "export KEY=sk-ant-api03-AbCdEf012345''GhIjKl678901MnOpQr; echo ok".into(),
                format!("export {r} echo ok"),
            ),
            (
                "github",
                r#"git push https://"gh"p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com/o/r"#.into(),
                format!("git push {r}"),
            ),
            ("github", r#"echo ghp_a1B2c3D4e5F6g7H8i9J0"k1L2m3N4o5P6q7R8" done"#.into(), format!("echo {r} done")),
            ("github", r"echo gh\p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8".into(), format!("echo {r}")),
            (
                "openai-anthropic",
                "echo 'sk-ant-api03-AbCdEf012345''GhIjKl678901MnOpQr and more'".into(),
                format!("echo {r} and more'"),
            ),
            ("aws-access-key-id", "id=AKIA'IOSFODNN7EXAMPLE'".into(), r.into()),
            ("key-value", r#"pass"word"=hunter2 next"#.into(), format!("{r} next")),
            // telegram
            ("telegram", "TG=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0".into(), format!("TG={r}")),
            (
                "telegram",
                "https://api.telegram.org/bot1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/sendMessage".into(),
                format!("https://api.telegram.org/bot{r}/sendMessage"),
            ),
            // discord
            (
                "discord-webhook",
                "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789-abcdefghijklmnopqrstuvwx".into(),
                format!("https://discord.com/api/webhooks/123456789012345678/{r}"),
            ),
            (
                "discord-webhook",
                "post to https://discordapp.com/api/webhooks/1/abcdefghijklmnopqrstuvwxyz012345 now".into(),
                format!("post to https://discordapp.com/api/webhooks/1/{r} now"),
            ),
        ]
    }

    /// (detector the input nearly trips, input that must survive unchanged)
    pub(in crate::scrub) fn near_misses() -> Vec<(&'static str, &'static str)> {
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
            (
                "private-key",
                "-----begin certificate-----\nmiiddzccal+gawibagie\n-----end certificate-----\nbegin private key rotation",
            ),
            (
                "putty-private-key",
                "convert it: puttygen key.ppk (a PuTTY-User-Key-File-3: file) -O private-openssh",
            ),
            (
                "putty-private-key",
                "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5\n",
            ),
            ("putty-private-key", "Private-Lines: 14\nPrivate-MAC: abc"),
            (
                "jwk-private",
                r#"{"kty":"RSA","kid":"k1","use":"sig","n":"0vx7agoebGcQSuu","e":"AQAB"}"#,
            ),
            (
                "jwk-private",
                r#"{"d": "2024-01-01", "p": "page-2", "q": "search", "k": "v1"}"#,
            ),
            (
                "jwk-private",
                r#"{"k": "v1", "meta": {"kty": "RSA", "n": "abc"}}"#,
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
            (
                "url-password",
                "http://localhost:8080/users/bob@example.com and http://localhost:4873/@babel%2fcore",
            ),
            (
                "url-password",
                "https://registry.npmjs.org:443/@types/node#readme@x",
            ),
            (
                "url-token",
                "https://git@github.com/o/r.git ssh://deploy-bot-2024@host",
            ),
            ("url-token", "https://firstname_lastname_1990@example.com"),
            (
                "shell-quoting",
                "don't stop: it's the user's \"ghp_\" prefix, everybody's",
            ),
            (
                "shell-quoting",
                r"C:\Users\runneradmin\AppData\Local\Temp\build-2024\out.log",
            ),
            (
                "shell-quoting",
                r#"echo "hello"world 'it'"'"'s' printf 'a\n' "x\"y" ghp_'' sk-''"""#,
            ),
            (
                "shell-quoting",
                r#"{\"path\":\"/home/dev/project/src/main.rs\",\"n\":1,\"id\":\"550e8400-e29b-41d4-a716-446655440000\"}"#,
            ),
            (
                "shell-quoting",
                "test scrub::tests::user's_token_is_hidden_1 ... ok",
            ),
            (
                "url-token",
                "GET https://api.example.com/v1/items/550e8400-e29b-41d4-a716-446655440000@latest",
            ),
            (
                "url-query-password",
                "https://example.com/search?q=pass&page=2&compass=north&bypass=1",
            ),
            (
                "url-query-password",
                "https://x.example/?pass=${PASS}&pw=&pwd=%PWD% and a test pass=5",
            ),
            ("curl-user", "curl -u admin https://x"),
            ("curl-user", "docker run -u 1000:1000 image"),
            ("curl-user", "curl -uadmin https://x --user-agent 'a:b'"),
            ("aws-secret-key", "aws configure get aws_secret_access_key"),
            (
                "aws-secret-key",
                "tool --secret-access-key $AWS_SECRET_ACCESS_KEY --region x",
            ),
            (
                "aws-secret-key",
                "aws_secret_access_key 356a192b7913b04c54574d18c28d46e6395b8ab6 (a sha1)",
            ),
            (
                "aws-secret-key",
                "the secret-access-key flag takes the 40-character key",
            ),
            (
                "mysql-password",
                "mysql -u root -p\nmysql -u root -p app\nmysql -h db -P 3306 -p 3306",
            ),
            (
                "mysql-password",
                "mysql -u root -p$MYSQL_PWD app; mysql -p\"$MYSQL_PASSWORD\" app",
            ),
            ("mysql-password", "mkdir -pv dir && ssh -p2222 host"),
            (
                "mysql-password",
                "mysql -e \"SELECT price -price FROM t\" -u root -p",
            ),
            ("sshpass", "sshpass -e ssh -p 2222 host"),
            ("sshpass", "sshpass -f ~/.pw ssh -p 22 host"),
            ("sshpass", "sshpass -p \"$SSHPASS\" ssh host"),
            ("registry-login", "docker run -p 8080:80 nginx"),
            (
                "registry-login",
                "echo $T | docker login -u bob --password-stdin ghcr.io",
            ),
            (
                "registry-login",
                "docker login -p \"$TOKEN\" ghcr.io; docker login -p <token> r.io",
            ),
            (
                "openssl-pass",
                "openssl pkcs12 -passin env:P12_PASS -passout file:pw.txt -pass fd:3",
            ),
            ("openssl-pass", "openssl rsa -passin stdin -in k.pem"),
            (
                "gpg-passphrase",
                "gpg --batch --passphrase-fd 0 --passphrase-file ~/.pw -d f.gpg",
            ),
            (
                "gpg-passphrase",
                "pass it with --passphrase or --passphrase-file",
            ),
            (
                "kubectl-literal",
                "kubectl create secret generic x --from-file=key=./key.pem --from-env-file=.env",
            ),
            (
                "kubectl-literal",
                "kubectl create secret generic x --from-literal=key=$VALUE",
            ),
            ("netrc", "password reset required"),
            ("netrc", "machine github.com login bob"),
            ("bearer", "Bearer tokens are opaque strings."),
            ("bearer", "Bearer authentication-for-everyone"),
            ("openai-anthropic", "sk-abc123"),
            ("openai-anthropic", "the skeleton crew"),
            ("openai-anthropic", "task-1234567890abcdefghijklmnop"),
            ("openai-anthropic", "sk-some-very-long-css-class-name"),
            ("stripe", "sk_live_short"),
            ("stripe", "whsec_... whsec_placeholder_for_the_docs"),
            ("github", "ghp_abc123"),
            ("github", "ghx_16C7e42F292c6912E7710c838347Ae178B4a"),
            ("github-fine-grained", "github_pat_short"),
            ("gitlab", "glpat-short"),
            ("aws-access-key-id", "AKIAabcdefghijklmnop"),
            ("aws-access-key-id", "AKIAIOSFODNN7EXAMPL"),
            ("aws-access-key-id", "AKIAIOSFODNN7EXAMPLEXX"),
            ("slack", "xoxo-123456789012 and xoxb-123"),
            ("slack", "xoxe-1 and xoxe.xoxp- prefixes"),
            (
                "slack-webhook",
                "see https://api.slack.com/messaging/webhooks and https://hooks.slack.com/services/",
            ),
            (
                "slack-webhook",
                "https://hooks.slack.com/services/T000/B000/short",
            ),
            ("google-api-key", "AIzaSyA1b2C3d4E5f6G7h8"),
            (
                "google-api-key",
                "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7R8",
            ),
            ("google-oauth", "x = 1//0  # ZeroDivisionError\ny = 21//07"),
            (
                "google-oauth",
                "access tokens start with ya29. and client secrets with GOCSPX-xxxx",
            ),
            ("azure-sas", "kill -s TERM $pid # sig=15"),
            ("azure-sas", "https://example.com/?sig=short&v=2"),
            ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"),
            ("jwt", "aGVsbG8gd29ybGQ.dGhpcyBpcyBiYXNlNjQ.c2lnbmF0dXJl"),
            ("npm", "npm_config_cache=/tmp/npm"),
            ("pypi", "pypi-AgEshort"),
            ("huggingface", "hf_hub_download(repo_id)"),
            ("twilio", "account sid AC0123456789abcdef0123456789abcdef"),
            (
                "twilio",
                "AC0123456789abcdef0123456789abcdef\nMG0123456789abcdef0123456789abcdef",
            ),
            (
                "twilio",
                "SKU-12345 SK0123 SKA1B2C3D4E5F60718293A4B5C6D7E8F90",
            ),
            (
                "twilio",
                "commit 356a192b7913b04c54574d18c28d46e6395b8ab6\nmd5 d41d8cd98f00b204e9800998ecf8427e",
            ),
            ("sendgrid", "SG.com SG.short.x"),
            (
                "digitalocean",
                "dop_v1_abc sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                "vault",
                "the hvs. prefix; hvs.example_token_without_any_digits_at_all",
            ),
            ("databricks", "dapi_version=2 dapi0123"),
            ("shopify", "shpat_xxxxxxxx shpat_0123456789abcdef"),
            (
                "age",
                "recipient age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p, AGE-SECRET-KEY-1...",
            ),
            (
                "telegram",
                "12:34:56 1234567890:AAbc build 20240101:AAAAAAAA",
            ),
            (
                "telegram",
                "request_id=550e8400-e29b-41d4-a716-446655440000 at 1700000000:AAAA",
            ),
            (
                "discord-webhook",
                "https://discord.com/api/webhooks/123456789012345678 and https://discord.com/channels/1/2",
            ),
        ]
    }

    /// The prefilter's answer, by its lazy DFA or by the set it falls back
    /// to, is a `RegexSet`'s of the same patterns.
    fn assert_prefilter_is_the_set(prefilter: &Prefilter, text: &str) {
        let set = RegexSet::new(&prefilter.patterns).unwrap();
        let expected: Vec<usize> = set.matches(text).into_iter().collect();
        assert_eq!(prefilter.matches(text), Some(expected), "{text:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn the_prefilter_answers_as_a_regex_set(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(positives().into_iter().map(|(_, i, _)| i).collect::<Vec<_>>()),
                    "[a-zA-Z0-9_ =:'\"\\/.@-]{0,12}",
                    "[é\u{a0}\n\t ]{0,3}",
                ],
                0..6,
            ),
        ) {
            let text = pieces.concat();
            let builtins = compile_builtins().unwrap();
            assert_prefilter_is_the_set(&Prefilter::build(&builtins).unwrap(), &text);
        }
    }

    /// Whether `text` holds one of `keywords`, ASCII case-insensitively.
    fn holds_keyword(text: &str, keywords: &[&str]) -> bool {
        let lower = text.to_ascii_lowercase();
        keywords
            .iter()
            .any(|k| lower.contains(&k.to_ascii_lowercase()))
    }

    /// `text` with every non-ASCII character made `x`.
    fn ascii(text: &str) -> String {
        text.chars()
            .map(|c| if c.is_ascii() { c } else { 'x' })
            .collect()
    }

    /// A built-in pattern without what proptest cannot generate from (word
    /// boundaries, anchors): it stands for more strings, never fewer.
    fn generable(pattern: &str) -> String {
        let bare = pattern
            .replace(r"(?-u:\b)", "")
            .replace(r"\b", "")
            .replace(r"\z", "");
        // `^` and `$` as anchors (a class's `[^` stays).
        let mut out = String::new();
        let mut prev = ' ';
        for c in bare.chars() {
            let anchor = (c == '^' && prev != '[' && prev != '\\') || (c == '$' && prev != '\\');
            if !anchor {
                out.push(c);
            }
            prev = c;
        }
        out
    }

    #[test]
    fn every_builtin_has_keywords_and_every_example_match_holds_one() {
        let builtins = compile_builtins().unwrap();
        let texts: Vec<String> = positives()
            .into_iter()
            .map(|(_, input, _)| input)
            .chain(near_misses().into_iter().map(|(_, t)| t.to_string()))
            .collect();
        for d in &builtins {
            assert!(!d.keywords.is_empty(), "{} has no keywords", d.name);
            for text in &texts {
                let text = ascii(text);
                if d.regex.get().is_match(&text) {
                    assert!(holds_keyword(&text, d.keywords), "{}: {text:?}", d.name);
                }
            }
        }
    }

    /// Strings generated from every built-in pattern: wherever the detector's
    /// regex matches one (made ASCII), one of its keywords is in it.
    #[test]
    fn a_builtin_matches_no_ascii_text_without_one_of_its_keywords() {
        use proptest::strategy::{Strategy, ValueTree};
        let builtins = compile_builtins().unwrap();
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for d in &builtins {
            let strategy = proptest::string::string_regex(&generable(d.regex.as_str()))
                .unwrap_or_else(|e| panic!("{}: {e}", d.name));
            let mut matched = 0;
            for _ in 0..300 {
                let text = ascii(&strategy.new_tree(&mut runner).unwrap().current());
                if d.regex.get().is_match(&text) {
                    matched += 1;
                    assert!(holds_keyword(&text, d.keywords), "{}: {text:?}", d.name);
                }
            }
            // The strings reach the detector: the check above is not empty.
            assert!(matched > 0, "{}: no generated string matched", d.name);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// On short ASCII text the keywords name every detector, and the
        /// quoting pass, that a `RegexSet` of the patterns says may match.
        #[test]
        fn the_keywords_name_every_detector_the_set_finds(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(positives().into_iter().map(|(_, i, _)| i).collect::<Vec<_>>()),
                    proptest::sample::select(near_misses().into_iter().map(|(_, t)| t.to_string()).collect::<Vec<_>>()),
                    "[a-zA-Z0-9_ =:'\"\\/.@-]{0,12}",
                    "[\n\t ]{0,3}",
                ],
                0..6,
            ),
        ) {
            let text = ascii(&pieces.concat());
            let builtins = compile_builtins().unwrap();
            let keywords = Keywords::build(&builtins);
            let Some((found, split)) = keywords.candidates_by(&text, builtins.len(), false) else {
                proptest::prop_assert!(text.len() > KEYWORDS_MAX_BYTES);
                return Ok(());
            };
            proptest::prop_assert_eq!(
                keywords.candidates_by(&text, builtins.len(), true),
                Some((found.clone(), split)),
                "the automaton and the scan differ on {:?}", text
            );
            let prefilter = Prefilter::build(&builtins).unwrap();
            let expected = prefilter.matches(&text).unwrap();
            for i in &expected {
                if *i == builtins.len() {
                    proptest::prop_assert!(split, "split: {text:?}");
                } else {
                    proptest::prop_assert!(found.contains(i), "{}: {text:?}", builtins[*i].name);
                }
            }
        }
    }

    #[test]
    fn keywords_written_in_upper_case_match_as_written_and_only_for_case_sensitive_patterns() {
        for b in BUILTINS {
            for k in b
                .keywords
                .iter()
                .filter(|k| k.bytes().any(|c| c.is_ascii_uppercase()))
            {
                assert!(
                    !b.pattern.contains("(?i") && !b.pattern.contains("(?-u:(?i"),
                    "{}: `{k}` matches as written, but the pattern ignores case",
                    b.name
                );
            }
        }
        let detectors = compile_builtins().unwrap();
        let n = detectors.len();
        let twilio = detectors.iter().position(|d| d.name == "twilio").unwrap();
        let keywords = Keywords::build(&detectors);
        for automaton in [false, true] {
            let found = |t: &str| keywords.candidates_by(t, n, automaton).unwrap().0;
            assert!(!found("the workspace").contains(&twilio), "{automaton}");
            assert!(found("sid AC0123").contains(&twilio), "{automaton}");
            assert!(!found("sid ac0123").contains(&twilio), "{automaton}");
        }
    }

    #[test]
    fn a_key_without_a_separator_does_not_compile_the_key_value_regex() {
        let detectors = compile_builtins().unwrap();
        let n = detectors.len();
        let kv = detectors
            .iter()
            .position(|d| d.name == "key-value")
            .unwrap();
        let keywords = Keywords::build(&detectors);
        for automaton in [false, true] {
            let found = |t: &str| keywords.candidates_by(t, n, automaton).unwrap().0;
            assert!(!found("pass").contains(&kv), "{automaton}");
            assert!(!found("the api key rotates").contains(&kv), "{automaton}");
            assert!(found("password=hunter2").contains(&kv), "{automaton}");
            assert!(found("token: abc").contains(&kv), "{automaton}");
        }
        // Every match of the regex holds a byte `needs` names.
        let mut checked = 0;
        for (name, input, _) in positives() {
            if name == "key-value" {
                assert!(input.contains([':', '=']), "{input}");
                checked += 1;
            }
        }
        assert!(checked > 3, "{checked} key-value examples");
    }

    #[test]
    fn keywords_answer_only_for_short_ascii_text_and_name_detectors_without_keywords() {
        let mut detectors = compile_builtins().unwrap();
        detectors.push(Detector {
            name: "custom",
            keywords: &[],
            needs: b"",
            regex: LazyRegex::compiled(Regex::new(r"hunter\d+").unwrap()),
            extract: Extract::Whole,
            validate: None,
        });
        let n = detectors.len();
        let keywords = Keywords::build(&detectors);
        // Plain text: only the detector without keywords may match.
        assert_eq!(
            keywords.candidates("ls -la src", n),
            Some((vec![n - 1], false))
        );
        let (found, split) = keywords.candidates("export GH=ghp_x 'a'", n).unwrap();
        let names: Vec<&str> = found.iter().map(|&i| detectors[i].name).collect();
        assert_eq!(names, ["github", "custom"]);
        assert!(split);
        // `K` (U+212A) is a `k` to a Unicode `(?i)`: such text goes to the prefilter.
        assert_eq!(keywords.candidates("api_\u{212a}ey = hunter2", n), None);
        assert_eq!(
            keywords.candidates(&"a".repeat(KEYWORDS_MAX_BYTES + 1), n),
            None
        );
    }

    #[test]
    fn a_prefilter_whose_lazy_dfa_gives_up_answers_by_the_set() {
        let builtins = compile_builtins().unwrap();
        // A cache this small is cleared again and again on varied text.
        let small = Prefilter::with_cache(&builtins, 1).unwrap();
        let varied: String = positives()
            .into_iter()
            .map(|(_, input, _)| input)
            .chain((0..2_000).map(|i| format!("w{i:x}y{} ", i * 7919 % 104_729)))
            .collect();
        assert!(small.set.get().is_none());
        assert_prefilter_is_the_set(&small, &varied);
        assert!(small.set.get().is_some(), "the lazy DFA did not give up");
        // The usual cache does not give up on it.
        let usual = Prefilter::build(&builtins).unwrap();
        assert_prefilter_is_the_set(&usual, &varied);
        assert!(usual.set.get().is_none());
    }

    #[test]
    fn a_unicode_word_boundary_is_answered_by_the_set_past_ascii() {
        let mut detectors = compile_builtins().unwrap();
        detectors.push(Detector {
            name: "custom",
            keywords: &[],
            needs: b"",
            regex: LazyRegex::compiled(Regex::new(r"\bhunter\w+\b").unwrap()),
            extract: Extract::Whole,
            validate: None,
        });
        let prefilter = Prefilter::build(&detectors).unwrap();
        assert_prefilter_is_the_set(&prefilter, "login hunter22 done");
        assert!(
            prefilter.set.get().is_none(),
            "ASCII text: the lazy DFA answers"
        );
        for text in ["é hunter22 é", "éhunter22", "hunter2é", "naïve"] {
            assert_prefilter_is_the_set(&prefilter, text);
        }
        assert!(prefilter.set.get().is_some());
        let custom = detectors.len() - 1;
        assert!(prefilter.matches("é hunter22 é").unwrap().contains(&custom));
        assert!(!prefilter.matches("éhunter22").unwrap().contains(&custom));
    }

    #[test]
    fn every_builtin_pattern_compiles() {
        assert_eq!(compile_builtins().unwrap().len(), BUILTINS.len());
        assert!(Prefilter::build(&compile_builtins().unwrap()).is_some());
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
}
