//! One file's new contents: the chunks of an `*** Update File` applied to the old text, with
//! the file's line ending kept.

use std::path::Path;

use super::error::PatchError;
use super::parser::Chunk;
use super::seek::seek_sequence;

/// Splits file contents into lines (without terminators) and reports the line ending to
/// write back: `\r\n` when every newline in the file is CRLF, else `\n`.
fn split_file(text: &str) -> (Vec<String>, &'static str) {
    let newlines = text.matches('\n').count();
    let crlf = newlines > 0 && text.matches("\r\n").count() == newlines;
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let lines = lines
        .into_iter()
        .map(|l| {
            if crlf {
                l.strip_suffix('\r').unwrap_or(l).to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    (lines, if crlf { "\r\n" } else { "\n" })
}

/// Applies `chunks` to `original` (the contents of `path`), returning the new contents,
/// which always end with a line terminator unless empty.
pub(crate) fn derive_new_contents(
    path: &Path,
    original: &str,
    chunks: &[Chunk],
) -> Result<String, PatchError> {
    let (lines, eol) = split_file(original);
    let mut replacements: Vec<(usize, usize, &[String])> = Vec::new();
    let mut cursor = 0usize;
    for chunk in chunks {
        if let Some(ctx) = &chunk.context {
            match seek_sequence(&lines, std::slice::from_ref(ctx), cursor, false) {
                Some(i) => cursor = i + 1,
                None => {
                    return Err(PatchError::Match(format!(
                        "Failed to find context '{ctx}' in {}",
                        path.display()
                    )));
                }
            }
        }
        if chunk.old_lines.is_empty() {
            // Pure addition: right after the `@@` anchor when there is one, else at the end.
            let at = if chunk.context.is_some() && !chunk.end_of_file {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, &chunk.new_lines));
            continue;
        }
        let mut pattern: &[String] = &chunk.old_lines;
        let mut new_lines: &[String] = &chunk.new_lines;
        let mut found = seek_sequence(&lines, pattern, cursor, chunk.end_of_file);
        if found.is_none() && pattern.last().is_some_and(String::is_empty) {
            // A trailing empty old line usually stands for the file's final newline.
            pattern = &pattern[..pattern.len() - 1];
            if new_lines.last().is_some_and(String::is_empty) {
                new_lines = &new_lines[..new_lines.len() - 1];
            }
            // (An old side that was only that empty line becomes an insertion at the cursor.)
            found = seek_sequence(&lines, pattern, cursor, chunk.end_of_file);
        }
        let Some(start) = found else {
            return Err(PatchError::Match(format!(
                "Failed to find expected lines in {}:\n{}",
                path.display(),
                chunk.old_lines.join("\n")
            )));
        };
        replacements.push((start, pattern.len(), new_lines));
        cursor = start + pattern.len();
    }
    replacements.sort_by_key(|(start, _, _)| *start);
    let mut result: Vec<&str> = Vec::with_capacity(lines.len());
    let mut pos = 0usize;
    for (start, len, new) in replacements {
        let start = start.max(pos);
        result.extend(lines[pos..start].iter().map(String::as_str));
        result.extend(new.iter().map(String::as_str));
        pos = (start + len).min(lines.len());
    }
    result.extend(lines[pos..].iter().map(String::as_str));
    if result.is_empty() {
        return Ok(String::new());
    }
    let mut out = result.join(eol);
    out.push_str(eol);
    Ok(out)
}
