//! Sensitive keys, and the value that follows one in free text.

use super::REDACTED;

/// Keys whose unquoted value runs to the end of the line.
const HEADER_KEYS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// The private members of a JSON Web Key (an object with a `"kty"` member).
pub(super) const JWK_PRIVATE_MEMBERS: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "k", "oth"];

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
pub(super) fn key_value_span(text: &str, m: regex::Match<'_>) -> Option<(usize, usize)> {
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
mod tests {
    use super::*;

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
