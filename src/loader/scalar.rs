//! Mapping positions inside a YAML scalar's value back to the file.
//!
//! A CEL error comes as a position inside the decoded string; the file holds
//! that string quoted, escaped, folded or indented. [`ScalarMap`] re-decodes the
//! raw text, pairing every decoded character with the byte it came from.

/// For each character of a scalar's value, the byte offset in the file it came from.
#[derive(Debug, Clone, Default)]
pub struct ScalarMap {
    /// Byte offset in the file of each char of the value, plus one for the end.
    offsets: Vec<usize>,
    /// The value, to convert byte offsets inside it to char indices.
    value_char_starts: Vec<usize>,
    start: usize,
    end: usize,
}

impl ScalarMap {
    /// Builds the map for a scalar whose raw text is `text[start..end]` and whose decoded value is `value`.
    #[must_use]
    pub fn new(text: &str, start: usize, end: usize, value: &str) -> ScalarMap {
        let start = start.min(text.len());
        let end = end.clamp(start, text.len());
        let value_char_starts: Vec<usize> = value.char_indices().map(|(i, _)| i).collect();
        let style = style_of(text, start, text.get(start..end).unwrap_or(""));
        // A block scalar's span starts at its first content character: decode from the
        // start of that line so the indentation can be measured.
        let start = match style {
            Style::Literal | Style::Folded => text
                .get(..start)
                .and_then(|b| b.rfind('\n'))
                .map_or(0, |i| i + 1),
            _ => start,
        };
        let raw = text.get(start..end).unwrap_or("");
        let decoded = decode(raw, style);
        let chars: Vec<char> = value.chars().collect();
        // A block scalar's final line break may lie outside the span: a missing tail
        // of line breaks still matches.
        let matches = decoded.iter().zip(chars.iter()).all(|((c, _), v)| c == v)
            && chars.iter().skip(decoded.len()).all(|c| *c == '\n');
        let offsets = if matches {
            let mut o: Vec<usize> = decoded
                .iter()
                .take(chars.len())
                .map(|(_, off)| start + off)
                .collect();
            o.resize(chars.len(), end);
            let end_off = decoded.get(chars.len()).map_or(end, |(_, off)| start + off);
            // The end of the last character, not the start of the next decoded one.
            let last_end = o
                .last()
                .zip(chars.last())
                .map_or(end_off, |(l, c)| (l + c.len_utf8()).min(end_off.max(l + 1)));
            o.push(last_end);
            o
        } else {
            // Could not re-decode (an unusual style): point at the scalar as a whole.
            vec![start; chars.len() + 1]
        };
        ScalarMap {
            offsets,
            value_char_starts,
            start,
            end,
        }
    }

    /// The file byte range for a byte range inside the value.
    #[must_use]
    pub fn range(&self, value_start: usize, value_end: usize) -> (usize, usize) {
        let a = self.char_index(value_start);
        let b = self.char_index(value_end.max(value_start));
        let fa = self.offsets.get(a).copied().unwrap_or(self.start);
        let fb = if b > a {
            // End of the last character in the range.
            let last = self.offsets.get(b - 1).copied().unwrap_or(fa);
            let next = self.offsets.get(b).copied().unwrap_or(self.end);
            if next > last { next } else { last + 1 }
        } else {
            fa
        };
        (fa, fb.max(fa))
    }

    /// The whole scalar's range in the file.
    #[must_use]
    pub fn whole(&self) -> (usize, usize) {
        (self.start, self.end)
    }

    fn char_index(&self, byte: usize) -> usize {
        match self.value_char_starts.binary_search(&byte) {
            Ok(i) => i,
            Err(i) => i,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

fn style_of(text: &str, start: usize, raw: &str) -> Style {
    match raw.chars().next() {
        Some('\'') => return Style::Single,
        Some('"') => return Style::Double,
        _ => {}
    }
    let before = text.get(..start).unwrap_or("").trim_end();
    let last_token = before
        .rsplit(|c: char| c.is_whitespace() || c == ':')
        .next()
        .unwrap_or("");
    if last_token.starts_with('|') {
        Style::Literal
    } else if last_token.starts_with('>') {
        Style::Folded
    } else {
        Style::Plain
    }
}

/// Decodes raw scalar text into (char, byte offset in raw) pairs.
fn decode(raw: &str, style: Style) -> Vec<(char, usize)> {
    match style {
        Style::Literal | Style::Folded => decode_block(raw, style == Style::Folded),
        _ => decode_flow(raw, style),
    }
}

fn decode_block(raw: &str, folded: bool) -> Vec<(char, usize)> {
    let indent = raw
        .lines()
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
    let mut out = Vec::new();
    let mut offset = 0;
    let mut prev_blank = true;
    for line in raw.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let skip = body.len() - body.trim_start_matches(' ').len();
        let skip = skip.min(indent);
        let content = &body[skip..];
        if folded && !out.is_empty() && !content.is_empty() && !prev_blank {
            // The previous line's break was folded into a space.
            if let Some(last) = out.last_mut() {
                let (c, o): &mut (char, usize) = last;
                if *c == '\n' {
                    *c = ' ';
                    let _ = o;
                }
            }
        }
        for (i, c) in content.char_indices() {
            out.push((c, offset + skip + i));
        }
        if line.ends_with('\n') {
            out.push(('\n', offset + body.len()));
        }
        prev_blank = content.is_empty();
        offset += line.len();
    }
    out
}

fn decode_flow(raw: &str, style: Style) -> Vec<(char, usize)> {
    let bytes: Vec<(usize, char)> = raw.char_indices().collect();
    let mut out = Vec::new();
    let (mut i, end) = match style {
        Style::Single | Style::Double => (1, bytes.len().saturating_sub(1)),
        _ => (0, bytes.len()),
    };
    while i < end {
        let (off, c) = bytes[i];
        match c {
            '\'' if style == Style::Single => {
                // `''` is one quote.
                out.push(('\'', off));
                i += 2;
            }
            '\\' if style == Style::Double => {
                let Some(&(_, e)) = bytes.get(i + 1) else {
                    break;
                };
                let (decoded, width) = match e {
                    'n' => (Some('\n'), 2),
                    't' => (Some('\t'), 2),
                    'r' => (Some('\r'), 2),
                    '0' => (Some('\0'), 2),
                    '"' => (Some('"'), 2),
                    '\\' => (Some('\\'), 2),
                    '/' => (Some('/'), 2),
                    ' ' => (Some(' '), 2),
                    'x' | 'u' | 'U' => {
                        let n = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String =
                            bytes.iter().skip(i + 2).take(n).map(|(_, c)| *c).collect();
                        (
                            u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32),
                            2 + n,
                        )
                    }
                    '\n' => {
                        // Escaped line break: joins lines, drops the next line's indentation.
                        i += 2;
                        while i < end && matches!(bytes[i].1, ' ' | '\t') {
                            i += 1;
                        }
                        continue;
                    }
                    other => (Some(other), 2),
                };
                if let Some(d) = decoded {
                    out.push((d, off));
                }
                i += width;
            }
            '\n' => {
                // Line folding: trailing spaces were dropped, a single break is a space,
                // each further empty line is a newline.
                while out.last().is_some_and(|(c, _)| *c == ' ' || *c == '\t') {
                    out.pop();
                }
                let mut breaks = 0;
                let mut j = i;
                while j < end {
                    match bytes[j].1 {
                        '\n' => {
                            breaks += 1;
                            j += 1;
                        }
                        ' ' | '\t' | '\r' => j += 1,
                        _ => break,
                    }
                }
                if breaks == 1 {
                    out.push((' ', off));
                } else {
                    for _ in 1..breaks {
                        out.push(('\n', off));
                    }
                }
                i = j;
            }
            _ => {
                out.push((c, off));
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, value: &str, needle: &str) {
        let start = text.find(':').map_or(0, |i| i + 2);
        let start = if text[start..].starts_with('|') || text[start..].starts_with('>') {
            text[start..].find('\n').map_or(start, |n| start + n + 1)
        } else {
            start
        };
        let end = text.trim_end().len();
        let map = ScalarMap::new(text, start, end, value);
        let at = value.find(needle).unwrap_or(0);
        let (a, b) = map.range(at, at + needle.len());
        assert_eq!(&text[a..b], needle, "in {text:?}");
    }

    #[test]
    fn plain_single_double_and_block() {
        check("when: args.x == 1\n", "args.x == 1", "args.x");
        check("when: 'a == ''b'' && c'\n", "a == 'b' && c", "c");
        check(
            "when: \"a == \\\"b\\\" && zed\"\n",
            "a == \"b\" && zed",
            "zed",
        );
        check("when: |\n  a &&\n  bee\n", "a &&\nbee\n", "bee");
        check("when: a &&\n  bee\n", "a && bee", "bee");
        check("when: 'über && käse'\n", "über && käse", "käse");
    }
}
