//! Shell quote removal, so that a secret split by quoting
//! (`sk-ant-api03-abc''def…`, `"gh"p_…`) is still found.

/// Longer words are not unquoted, to bound the work.
const MAX_WORD_LEN: usize = 4096;

/// Unquoted words shorter than this are not searched again: no built-in
/// token is shorter, and prose contractions (`don't`, `host's`) are.
const MIN_UNQUOTED_LEN: usize = 12;

/// A run of quote characters between two token characters, as
/// [`splits_a_token`] has it (not a contraction): where [`split_words`] may
/// find a word. The scrubber's prefilter carries it, so text without one
/// costs nothing more. (Narrower patterns, such as one that also wants a
/// digit in the same word, need an unbounded span of word characters, and
/// that overflows the prefilter's lazy DFA cache on varied text: four times
/// slower.)
pub(super) const SPLIT_PATTERN: &str = concat!(
    // A run with `"` or `\` in it, or of several `'`.
    r#"[A-Za-z0-9_\-]['"\\]*["\\]['"\\]*[A-Za-z0-9_\-]|[A-Za-z0-9_\-]''+[A-Za-z0-9_\-]"#,
    // A lone `'` before three token characters, or before one or two and a quote.
    r#"|[A-Za-z0-9_\-]'[A-Za-z0-9_\-]{3}|[A-Za-z0-9_\-]'[A-Za-z0-9_\-]{1,2}['"\\]"#,
);

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
    let bytes = text.as_bytes();
    let mut pos = 0;
    std::iter::from_fn(move || {
        // Only words with a quote character in them: find one, then its word.
        while let Some(offset) = bytes.get(pos..)?.iter().position(|&b| is_quote(b)) {
            let quote = pos + offset;
            if separator_len(bytes, quote) > 0 {
                pos = quote + 2;
                continue;
            }
            let start = (0..quote)
                .rev()
                .find(|&i| separator_ends_at(bytes, i))
                .map_or(0, |i| i + 1);
            let end = (quote..bytes.len())
                .find(|&i| separator_len(bytes, i) > 0)
                .unwrap_or(bytes.len());
            pos = end;
            // Both ends are at ASCII bytes or the ends of the text.
            let word = &text[start..end];
            // Unquoting never lengthens a word.
            if !(MIN_UNQUOTED_LEN..=MAX_WORD_LEN).contains(&word.len())
                || word.bytes().all(|b| b.is_ascii_alphabetic() || is_quote(b))
                || !splits_a_token(word.as_bytes())
            {
                continue;
            }
            let unquoted = shell_unquote(word);
            if unquoted.len() >= MIN_UNQUOTED_LEN {
                return Some((start, end, unquoted));
            }
        }
        None
    })
}

/// The length of the word separator at `bytes[i]`: 1 for ASCII whitespace,
/// 2 for `\n`, `\r`, `\t`, else 0.
fn separator_len(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i) {
        Some(b) if b.is_ascii_whitespace() => 1,
        Some(b'\\') if matches!(bytes.get(i + 1), Some(b'n' | b'r' | b't')) => 2,
        _ => 0,
    }
}

/// True if a word separator ends at `bytes[i]`.
fn separator_ends_at(bytes: &[u8], i: usize) -> bool {
    match bytes.get(i) {
        Some(b) if b.is_ascii_whitespace() => true,
        Some(b'n' | b'r' | b't') => i.checked_sub(1).and_then(|p| bytes.get(p)) == Some(&b'\\'),
        _ => false,
    }
}

/// True if a run of quote characters has a token character on both sides:
/// `abc''def`, `gh"p_`, `gh\p_`, `AKIA'IOSF…`; not `"abc"`, `key="v"`. A
/// lone `'` followed by one or two token characters that end the word is an
/// English contraction (`don't`, `host's`, `we'll`), not a split.
fn splits_a_token(word: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&b) = word.get(i) {
        if !is_quote(b) {
            i += 1;
            continue;
        }
        let run = i;
        while word.get(i).is_some_and(|&b| is_quote(b)) {
            i += 1;
        }
        let before = run
            .checked_sub(1)
            .and_then(|p| word.get(p))
            .is_some_and(|&b| is_token_byte(b));
        let after = word[i..].iter().take_while(|&&b| is_token_byte(b)).count();
        if !before || after == 0 {
            continue;
        }
        let apostrophe = i - run == 1 && b == b'\'';
        if !apostrophe || after >= 3 || word.get(i + after).is_some_and(|&b| is_quote(b)) {
            return true;
        }
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
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        /// The prefilter never hides a word that split_words would search.
        #[test]
        fn the_prefilter_lets_every_searched_word_through(
            text in r#"[ab1_.é'"\\ \u{a0}nt]{0,30}"#
        ) {
            let split = regex::Regex::new(SPLIT_PATTERN).unwrap();
            if split_words(&text).next().is_some() {
                prop_assert!(split.is_match(&text), "{text:?}");
            }
        }
    }

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
        assert!(splits_a_token(b"AKIA'IOSFODNN7EXAMPLE'"));
        assert!(splits_a_token(b"ab'c'd"));
        assert!(!splits_a_token(b"don't"));
        assert!(!splits_a_token(b"host's"));
        assert!(!splits_a_token(b"we'll,"));
        assert!(!splits_a_token(b"abcdefghijk'1"));
        // The prefilter's pattern lets through every word split_words searches.
        let split = regex::Regex::new(SPLIT_PATTERN).unwrap();
        for word in [
            "sk-ant-api03-abc''def",
            "\"gh\"p_a1B2c3D4e5F6",
            "g\"hp_a1B2c3D4e5F6\"",
            "ghp_a1B2c3D4e5F6\"x\"",
            "pass\"word\"=hunter2",
            "ab'c'd'e'f'g'h'i'j'k'1",
            "abcdefghijk'123",
            "1abcdefghij\"k",
            "é.ab'cdefghijk",
        ] {
            assert!(split.is_match(word), "{word}");
            assert_eq!(split_words(word).count(), 1, "{word}");
        }
        for word in [
            "\"abc\"",
            "key=\"value\"",
            "it'",
            "'it",
            "don't",
            "host's",
            "everybody's",
            "abcdefghijk'1",
        ] {
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
        let text = r#"a"b'c\n'long_word'_x1\tzz"#;
        assert_eq!(
            split_words(text).collect::<Vec<_>>(),
            [(7, 21, "long_word_x1".to_owned())]
        );
        assert_eq!(split_words(&format!("a\"b{}", "c".repeat(5000))).count(), 0);
    }
}
