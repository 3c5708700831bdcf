//! One escaping function for every piece of text that came from input.
//!
//! A tool name, a YAML key, a source line or an argument can hold terminal
//! escapes (which retitle or clear a terminal), bidi overrides (which reorder
//! what is shown) or zero-width characters (which make `act\u{200b}ion` look
//! like `action`). Every output format shows such characters as `\u{…}`, so
//! what is printed is what the file holds.

use std::borrow::Cow;

/// Whether a character is shown escaped: control characters (except tab),
/// bidi controls, zero-width and other invisible format characters.
#[must_use]
pub fn is_unsafe(c: char) -> bool {
    if c == '\t' {
        return false;
    }
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'                  // soft hyphen
            | '\u{034F}'                // combining grapheme joiner
            | '\u{061C}'                // arabic letter mark
            | '\u{115F}' | '\u{1160}'   // hangul fillers
            | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'   // mongolian selectors and vowel separator
            | '\u{200B}'..='\u{200F}'   // zero-width space/joiners, LRM, RLM
            | '\u{2028}' | '\u{2029}'   // line and paragraph separators
            | '\u{202A}'..='\u{202E}'   // bidi embeddings and overrides
            | '\u{2060}'..='\u{206F}'   // word joiner, invisible operators, bidi isolates
            | '\u{3164}'                // hangul filler
            | '\u{FE00}'..='\u{FE0F}'   // variation selectors
            | '\u{FEFF}'                // zero-width no-break space, BOM
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotations
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}' // tags and variation selectors supplement
        )
}

/// The text with every [`is_unsafe`] character shown as `\u{…}` (newlines too:
/// one piece of input stays on one line).
#[must_use]
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// Like [`escape`], but keeps line breaks (for multi-line help and messages).
#[must_use]
pub fn escape_keep_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\n' {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// Appends one character, escaped if it is unsafe.
pub fn push_escaped(out: &mut String, c: char) {
    if is_unsafe(c) {
        out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
    } else {
        out.push(c);
    }
}

/// At most `max` characters of `s` (escaped), with a note of how much was left out.
#[must_use]
pub fn truncate(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (shown, (i, c)) in s.char_indices().enumerate() {
        if shown == max {
            let left = s.len() - i;
            out.push_str(&format!(
                "… ({left} more byte{} not shown)",
                if left == 1 { "" } else { "s" }
            ));
            return out;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// Quotes a word for a POSIX shell when it needs it, so that the shell reads
/// it back unchanged.
#[must_use]
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_bidi_and_invisibles() {
        assert_eq!(escape("act\u{200b}ion"), "act\\u{200b}ion");
        assert_eq!(escape("\u{1b}]0;owned\u{7}"), "\\u{1b}]0;owned\\u{7}");
        assert_eq!(escape("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape("a\nb"), "a\\u{a}b");
        assert_eq!(escape_keep_lines("a\nb\u{feff}"), "a\nb\\u{feff}");
        assert_eq!(escape("tab\tand é ok"), "tab\tand é ok");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn truncates_with_a_note() {
        assert_eq!(truncate("abcdef", 3), "abc… (3 more bytes not shown)");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(
            truncate("é\u{200b}x", 2),
            "é\\u{200b}… (1 more byte not shown)"
        );
    }
}
