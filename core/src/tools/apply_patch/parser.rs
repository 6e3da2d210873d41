//! Parser for the apply_patch envelope format.
//!
//! ```text
//! patch        := "*** Begin Patch" LF  file_op*  "*** End Patch" LF?
//! file_op      := add | delete | update
//! add          := "*** Add File: " path LF  ("+" text LF)*
//! delete       := "*** Delete File: " path LF
//! update       := "*** Update File: " path LF  ["*** Move to: " path LF]  chunk+
//! chunk        := ["@@" LF | "@@ " text LF]  change_line+  ["*** End of File" LF]
//! change_line  := (" " | "-" | "+") text LF  |  LF
//! ```
//!
//! Leniency (the same as the reference implementation, nothing more):
//! * the whole text is trimmed and the envelope markers are compared after trimming, so
//!   whitespace around `*** Begin Patch` / `*** End Patch` is tolerated;
//! * a heredoc wrapper (`<<EOF`, `<<'EOF'` or `<<"EOF"` on the first line, a last line
//!   ending in `EOF`) around the patch is tolerated;
//! * file-operation headers are matched after trimming, `*** Move to:` and
//!   `*** End of File` after trimming trailing whitespace (a leading space would make them
//!   context lines);
//! * blank lines between the chunks of an update are skipped;
//! * the first chunk of an update may omit its `@@` header;
//! * CRLF line endings in the patch text are accepted.
//!
//! An envelope with no file operation parses (the caller rejects it as an empty patch).
//! Line numbers in errors are 1-based and count lines of the text exactly as received.

use std::fmt;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const EMPTY_CONTEXT: &str = "@@";
const CONTEXT_PREFIX: &str = "@@ ";

/// Why a patch text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The envelope is wrong (missing `*** Begin Patch` / `*** End Patch`).
    InvalidPatch(String),
    /// A file operation or chunk is malformed; `line` is 1-based in the received text.
    InvalidHunk {
        /// What is wrong.
        message: String,
        /// 1-based line number in the text as received.
        line: usize,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::InvalidPatch(message) => write!(f, "invalid patch: {message}"),
            ParseError::InvalidHunk { message, line } => {
                write!(f, "invalid hunk at line {line}, {message}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// One file operation of a patch. Paths are exactly as written in the patch (trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File:` — create (or overwrite) a file with `contents`.
    Add {
        /// Path as written.
        path: String,
        /// New contents: every `+` line without its `+`, each followed by `\n`.
        contents: String,
        /// Line of the header.
        line: usize,
    },
    /// `*** Delete File:`.
    Delete {
        /// Path as written.
        path: String,
        /// Line of the header.
        line: usize,
    },
    /// `*** Update File:`, optionally with `*** Move to:`.
    Update {
        /// Path as written.
        path: String,
        /// Destination as written, for a rename.
        move_path: Option<String>,
        /// The chunks, in file order.
        chunks: Vec<Chunk>,
        /// Line of the header.
        line: usize,
    },
}

impl FileOp {
    /// The path as written in the patch (the source path for a rename).
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. }
            | FileOp::Delete { path, .. }
            | FileOp::Update { path, .. } => path,
        }
    }
}

/// One chunk of an update: replace `old_lines` by `new_lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The `@@ <context>` anchor line, if any.
    pub context: Option<String>,
    /// Lines that must be found in the file (context and removed lines, in order).
    pub old_lines: Vec<String>,
    /// Lines that replace them (context and added lines, in order).
    pub new_lines: Vec<String>,
    /// `*** End of File` was given: `old_lines` should be at the end of the file.
    pub end_of_file: bool,
    /// Line of the chunk's first line (its `@@` header when present).
    pub line: usize,
}

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPatch {
    /// The file operations, in patch order.
    pub ops: Vec<FileOp>,
    /// The patch text without any heredoc wrapper, lines joined with `\n`.
    pub text: String,
}

/// A line of the input with its 1-based line number.
type Line<'a> = (usize, &'a str);

/// Parses a patch (the raw freeform input, or the `input` field of the function variant).
pub fn parse_patch(input: &str) -> Result<ParsedPatch, ParseError> {
    let all: Vec<Line<'_>> = input
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    let lines = trim_blank_lines(&all);
    let body_with_markers = find_envelope(lines)?;
    let text = body_with_markers
        .iter()
        .map(|(_, l)| *l)
        .collect::<Vec<_>>()
        .join("\n");
    let body = &body_with_markers[1..body_with_markers.len() - 1];
    let ops = parse_ops(body)?;
    Ok(ParsedPatch { ops, text })
}

fn trim_blank_lines<'a, 'b>(lines: &'b [Line<'a>]) -> &'b [Line<'a>] {
    let start = lines
        .iter()
        .position(|(_, l)| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|(_, l)| !l.trim().is_empty())
        .map_or(start, |e| e + 1);
    &lines[start..end.max(start)]
}

/// Returns the lines from `*** Begin Patch` to `*** End Patch` inclusive.
fn find_envelope<'a, 'b>(lines: &'b [Line<'a>]) -> Result<&'b [Line<'a>], ParseError> {
    let plain = check_markers(lines);
    if plain.is_ok() {
        return plain.map(|()| lines);
    }
    if let [(_, first), .., (_, last)] = lines {
        let first = first.trim();
        if matches!(first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
            && last.trim().ends_with("EOF")
            && lines.len() >= 4
        {
            let inner = trim_blank_lines(&lines[1..lines.len() - 1]);
            check_markers(inner)?;
            return Ok(inner);
        }
    }
    plain.map(|()| lines)
}

fn check_markers(lines: &[Line<'_>]) -> Result<(), ParseError> {
    match lines {
        [(_, first), ..] if first.trim() != BEGIN_PATCH => Err(ParseError::InvalidPatch(
            "The first line of the patch must be '*** Begin Patch'".to_string(),
        )),
        [_, .., (_, last)] if last.trim() == END_PATCH => Ok(()),
        [] => Err(ParseError::InvalidPatch(
            "The first line of the patch must be '*** Begin Patch'".to_string(),
        )),
        _ => Err(ParseError::InvalidPatch(
            "The last line of the patch must be '*** End Patch'".to_string(),
        )),
    }
}

fn invalid(line: usize, message: impl Into<String>) -> ParseError {
    ParseError::InvalidHunk {
        message: message.into(),
        line,
    }
}

fn header_path(rest: &str) -> Option<String> {
    let path = rest.trim();
    (!path.is_empty()).then(|| path.to_string())
}

fn parse_ops(body: &[Line<'_>]) -> Result<Vec<FileOp>, ParseError> {
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let (line_no, raw) = body[i];
        let header = raw.trim();
        if let Some(path) = header.strip_prefix(ADD_FILE).and_then(header_path) {
            i += 1;
            let mut contents = String::new();
            while let Some((_, l)) = body.get(i) {
                let Some(text) = l.strip_prefix('+') else {
                    break;
                };
                contents.push_str(text);
                contents.push('\n');
                i += 1;
            }
            ops.push(FileOp::Add {
                path,
                contents,
                line: line_no,
            });
        } else if let Some(path) = header.strip_prefix(DELETE_FILE).and_then(header_path) {
            i += 1;
            ops.push(FileOp::Delete {
                path,
                line: line_no,
            });
        } else if let Some(path) = header.strip_prefix(UPDATE_FILE).and_then(header_path) {
            i += 1;
            let mut move_path = None;
            if let Some((_, l)) = body.get(i)
                && let Some(dest) = l.trim_end().strip_prefix(MOVE_TO).and_then(header_path)
            {
                move_path = Some(dest);
                i += 1;
            }
            let mut chunks = Vec::new();
            while let Some((_, l)) = body.get(i) {
                if l.trim().is_empty() {
                    i += 1;
                    continue;
                }
                if l.starts_with('*') {
                    break;
                }
                let (chunk, next) = parse_chunk(body, i, chunks.is_empty())?;
                chunks.push(chunk);
                i = next;
            }
            if chunks.is_empty() {
                return Err(invalid(
                    line_no,
                    format!("Update file hunk for path '{path}' is empty"),
                ));
            }
            ops.push(FileOp::Update {
                path,
                move_path,
                chunks,
                line: line_no,
            });
        } else {
            return Err(invalid(
                line_no,
                format!(
                    "'{header}' is not a valid hunk header. Valid hunk headers: \
                     '*** Add File: {{path}}', '*** Delete File: {{path}}', \
                     '*** Update File: {{path}}'"
                ),
            ));
        }
    }
    Ok(ops)
}

/// Parses one chunk starting at `body[start]`; returns it and the index after it.
fn parse_chunk(
    body: &[Line<'_>],
    start: usize,
    first_chunk: bool,
) -> Result<(Chunk, usize), ParseError> {
    let (header_line, header) = body[start];
    let (context, mut i) = if header.trim_end() == EMPTY_CONTEXT {
        (None, start + 1)
    } else if let Some(ctx) = header.strip_prefix(CONTEXT_PREFIX) {
        let ctx = (!ctx.trim().is_empty()).then(|| ctx.to_string());
        (ctx, start + 1)
    } else if first_chunk {
        (None, start)
    } else {
        return Err(invalid(
            header_line,
            format!("Expected update hunk to start with a @@ context marker, got: '{header}'"),
        ));
    };
    if i >= body.len() {
        return Err(invalid(
            header_line + 1,
            "Update hunk does not contain any lines",
        ));
    }
    let mut chunk = Chunk {
        context,
        old_lines: Vec::new(),
        new_lines: Vec::new(),
        end_of_file: false,
        line: header_line,
    };
    let mut count = 0usize;
    while let Some(&(line_no, line)) = body.get(i) {
        if line.trim_end() == END_OF_FILE {
            if count == 0 {
                return Err(invalid(line_no, "Update hunk does not contain any lines"));
            }
            chunk.end_of_file = true;
            i += 1;
            break;
        }
        match line.as_bytes().first() {
            None => {
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            }
            Some(b' ') => {
                chunk.old_lines.push(line[1..].to_string());
                chunk.new_lines.push(line[1..].to_string());
            }
            Some(b'+') => chunk.new_lines.push(line[1..].to_string()),
            Some(b'-') => chunk.old_lines.push(line[1..].to_string()),
            Some(_) => {
                if count == 0 {
                    return Err(invalid(
                        line_no,
                        format!(
                            "Unexpected line found in update hunk: '{line}'. Every line should \
                             start with ' ' (context line), '+' (added line), or '-' (removed line)"
                        ),
                    ));
                }
                break;
            }
        }
        count += 1;
        i += 1;
    }
    Ok((chunk, i))
}

#[cfg(test)]
mod proptests;
