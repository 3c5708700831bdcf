//! Shell quote removal, so that a secret split by quoting
//! (`sk-ant-api03-abc''def…`, `"gh"p_…`) is still found.

/// Longer words are not unquoted, to bound the work.
const MAX_WORD_LEN: usize = 4096;

/// Unquoted words shorter than this are not searched again: no built-in
/// token is shorter, and prose contractions (`don't`, `host's`) are.
const MIN_UNQUOTED_LEN: usize = 12;

/// A run of quote characters between two token characters, with at least
/// five more non-space characters on one side: a word [`split_words`] may
/// search (it skips words under 12 bytes). The scrubber's prefilter carries
/// it, so text without one (`don't`, `host's`) costs nothing more.
pub(super) const SPLIT_PATTERN: &str =
    r#"\S{5}[A-Za-z0-9_\-]['"\\]+[A-Za-z0-9_\-]|[A-Za-z0-9_\-]['"\\]+[A-Za-z0-9_\-]\S{5}"#;

/// `'`, `"` and `\`: the characters shell quoting adds.
fn is_quote(b: u8) -> bool {
    matches!(b, b'\'' | b'"' | b'\\')
}

/// A character of the tokens the detectors look for.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The words of `text` in which quoting splits a run of token characters,
/// as `(start, end, unquoted)` byte spans of `text`.
///
/// Words are separated by ASCII whitespace and by the two-character escapes
/// `\n`, `\r`, `\t`: text showing escaped newlines (`"a\n+TOKEN=\n"`) is far
/// more common than a shell escape of `n`, `r` or `t`, and gluing its lines
/// together would make up secrets. Words longer than 4 KiB are skipped, and
/// so are words of letters and quotes only and words whose unquoted form is
/// shorter than 12 bytes.
pub(super) fn split_words(text: &str) -> impl Iterator<Item = (usize, usize, String)> + '_ {
    words(text).filter_map(|(start, end)| {
        // Both ends are at ASCII bytes or the ends of the text.
        let word = &text[start..end];
        // Unquoting never lengthens a word.
        if !(MIN_UNQUOTED_LEN..=MAX_WORD_LEN).contains(&word.len())
            || word.bytes().all(|b| b.is_ascii_alphabetic() || is_quote(b))
            || !splits_a_token(word.as_bytes())
        {
            return None;
        }
        let unquoted = shell_unquote(word);
        (unquoted.len() >= MIN_UNQUOTED_LEN).then_some((start, end, unquoted))
    })
}

/// The `(start, end)` byte spans of the words of `text` (see [`split_words`]).
fn words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut start = 0;
    std::iter::from_fn(move || {
        while let Some(&b) = bytes.get(i) {
            let separator = if b.is_ascii_whitespace() {
                1
            } else if b == b'\\' && matches!(bytes.get(i + 1), Some(b'n' | b'r' | b't')) {
                2
            } else {
                0
            };
            if separator == 0 {
                i += 1;
                continue;
            }
            let word = (start, i);
            i += separator;
            start = i;
            if word.0 < word.1 {
                return Some(word);
            }
        }
        let word = (start, bytes.len());
        start = bytes.len();
        (word.0 < word.1).then_some(word)
    })
}

/// True if a run of quote characters has a token character on both sides:
/// `abc''def`, `gh"p_`, `gh\p_`; not `"abc"`, `key="v"`.
fn splits_a_token(word: &[u8]) -> bool {
    let mut after_token = false;
    let mut in_run = false;
    let mut run_after_token = false;
    for &b in word {
        if is_quote(b) {
            if !in_run {
                in_run = true;
                run_after_token = after_token;
            }
            continue;
        }
        let token = is_token_byte(b);
        if in_run && run_after_token && token {
            return true;
        }
        in_run = false;
        after_token = token;
    }
    false
}

/// Removes shell quoting from one word, as the shell would: `'…'` is
/// literal; in `"…"` a backslash escapes only `$`, `` ` ``, `"`, `\` and a
/// newline; outside quotes a backslash escapes any character. An
/// unterminated quote runs to the end of the word.
fn shell_unquote(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    out.push(c);
                }
            }
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(escaped @ ('$' | '`' | '"' | '\\')) => out.push(escaped),
                            Some('\n') => {}
                            Some(other) => {
                                out.push('\\');
                                out.push(other);
                            }
                            None => out.push('\\'),
                        },
                        c => out.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(escaped) => out.push(escaped),
                None => out.push('\\'),
            },
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn unquotes_like_the_shell() {
        for (word, unquoted) in [
            ("plain", "plain"),
            ("'a b'", "a b"),
            ("'a\\b'", "a\\b"),
            (r#""a\"b""#, "a\"b"),
            (r#""a\nb""#, "a\\nb"),
            (r#""a\$b\\c""#, "a$b\\c"),
            ("a\\ b\\'c", "a b'c"),
            (r#"'it'"'"'s'"#, "it's"),
            ("sk-ant-api03-abc''def", "sk-ant-api03-abcdef"),
            (r#""gh"p_x"#, "ghp_x"),
            ("\"unterminated", "unterminated"),
            ("'unterminated", "unterminated"),
            ("trailing\\", "trailing\\"),
            ("ümlaut'ß'", "ümlautß"),
            ("", ""),
        ] {
            assert_eq!(shell_unquote(word), unquoted, "{word:?}");
        }
    }

    #[test]
    fn finds_words_split_by_quotes() {
        assert!(splits_a_token(b"abc''def"));
        assert!(splits_a_token(b"\"gh\"p_x"));
        assert!(splits_a_token(b"gh\\p_x"));
        assert!(splits_a_token(b"sk-\"ant\""));
        assert!(!splits_a_token(b"\"abc\""));
        assert!(!splits_a_token(b"key=\"value\""));
        assert!(!splits_a_token(b"{\\\"a\\\":1}"));
        assert!(!splits_a_token(b""));
        // The prefilter's pattern lets through every word split_words searches.
        let split = regex::Regex::new(SPLIT_PATTERN).unwrap();
        for word in [
            "sk-ant-api03-abc''def",
            "\"gh\"p_a1B2c3D4e5F6",
            "g\"hp_a1B2c3D4e5F6\"",
            "ghp_a1B2c3D4e5F6\"x\"",
            "pass\"word\"=hunter2",
            "ab'c'd'e'f'g'h'i'j'k'1",
        ] {
            assert!(split.is_match(word), "{word}");
            assert_eq!(split_words(word).count(), 1, "{word}");
        }
        for word in ["don't", "host's", "you're", "\"abc\"", "key=\"value\""] {
            assert!(!split.is_match(word), "{word}");
            assert_eq!(split_words(word).count(), 0, "{word}");
        }
        let text = "x don't 'ghp_abc''def0123456' ok \"a\"b";
        let found: Vec<_> = split_words(text).collect();
        assert_eq!(found, [(8, 29, "ghp_abcdef0123456".to_owned())]);
        assert_eq!(&text[8..29], "'ghp_abc''def0123456'");
        assert_eq!(split_words("no quotes at all").count(), 0);
        // Escaped newlines separate words; they are not shell escapes.
        assert_eq!(
            split_words(r"patch: .env\n+TOKEN=\n*** .env\n+TOKEN=abc\n***").count(),
            0
        );
        assert_eq!(
            words(" a\tbb\\ncc\\\\x \\t").collect::<Vec<_>>(),
            [(1, 2), (3, 5), (7, 12)]
        );
        assert_eq!(split_words(&format!("a\"b{}", "c".repeat(5000))).count(), 0);
    }
}
