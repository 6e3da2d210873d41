//! Fuzzy location of a run of lines inside a file (`seek_sequence` of docs/architecture.md §8.3).
//!
//! Four passes, each over every window position from the start index, first match wins:
//! exact equality; equality after `trim_end`; equality after `trim`; equality after `trim`
//! and folding of Unicode punctuation (dashes, curly quotes, exotic spaces) to ASCII.
//! A stricter pass anywhere in the file beats a looser pass earlier in the file.

/// Finds `pattern` in `lines` at or after `start`.
///
/// With `eof`, the window ending at the last line is tried first (all four passes); if it
/// does not match, the ordinary forward search from `start` follows. An empty pattern
/// matches at `start`; a pattern longer than the remaining lines never matches.
pub fn seek_sequence(
    lines: &[String],
    pattern: &[String],
    start: usize,
    eof: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start.min(lines.len()));
    }
    if pattern.len() > lines.len() || start > lines.len() - pattern.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    if eof && let Some(found) = search(lines, pattern, last, last) {
        return Some(found);
    }
    search(lines, pattern, start, last)
}

/// Tries every pass over window positions `from..=to`.
fn search(lines: &[String], pattern: &[String], from: usize, to: usize) -> Option<usize> {
    let passes: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| {
            let (a, b) = (a.trim(), b.trim());
            a == b || normalise(a) == normalise(b)
        },
    ];
    passes.iter().find_map(|same| {
        (from..=to).find(|&i| {
            lines[i..i + pattern.len()]
                .iter()
                .zip(pattern)
                .all(|(l, p)| same(l, p))
        })
    })
}

/// Folds typographic punctuation and exotic spaces to their ASCII look-alikes, then trims.
pub fn normalise(s: &str) -> String {
    let folded: String = s
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect();
    folded.trim().to_string()
}
