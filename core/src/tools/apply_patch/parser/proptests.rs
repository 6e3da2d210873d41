//! Property tests of the patch parser: a patch generated from file operations parses back to
//! exactly those operations (line numbers included, with CRLF line ends, surrounding blank
//! lines and a heredoc wrapper too), and any text, valid or mangled, parses or fails without
//! panicking into something no bigger than a small multiple of itself.

use proptest::prelude::*;

use super::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A path as a model writes it: no surrounding whitespace, maybe an inner space.
fn path() -> impl Strategy<Value = String> {
    "[a-z0-9_./-]{1,8}( [a-z0-9_./-]{1,8})?"
}

/// Text of one line: anything but a line feed, and no trailing `\r` (a CRLF line end is
/// stripped to LF, so it could not round-trip).
fn line_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^\n]{0,16}",
        "[ +\\-*@a-z]{0,6}",
        Just("*** End of File".to_owned()),
        Just("*** End Patch".to_owned()),
        Just("@@".to_owned()),
    ]
    .prop_map(|text| text.trim_end_matches('\r').to_owned())
}

#[derive(Debug, Clone)]
struct GenChunk {
    /// `None`: a bare `@@` header; `Some(None)` on the first chunk: no header at all.
    context: Option<Option<String>>,
    /// `(' ' | '+' | '-', text)`.
    lines: Vec<(char, String)>,
    end_of_file: bool,
}

#[derive(Debug, Clone)]
enum GenOp {
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<GenChunk>,
    },
}

fn chunk() -> impl Strategy<Value = GenChunk> {
    let context = prop_oneof![
        Just(None),
        Just(Some(None)),
        "[^\n]{0,12}"
            .prop_map(|c| c.trim_end_matches('\r').to_owned())
            .prop_filter("a non-blank anchor", |c| !c.trim().is_empty())
            .prop_map(|c| Some(Some(c))),
    ];
    let change = (prop_oneof![Just(' '), Just('+'), Just('-')], line_text());
    (
        context,
        proptest::collection::vec(change, 1..6),
        any::<bool>(),
    )
        .prop_map(|(context, lines, end_of_file)| GenChunk {
            context,
            lines,
            end_of_file,
        })
}

fn op() -> impl Strategy<Value = GenOp> {
    prop_oneof![
        (path(), proptest::collection::vec(line_text(), 0..5))
            .prop_map(|(path, lines)| GenOp::Add { path, lines }),
        path().prop_map(|path| GenOp::Delete { path }),
        (
            path(),
            proptest::option::of(path()),
            proptest::collection::vec(chunk(), 1..4)
        )
            .prop_map(|(path, move_to, chunks)| GenOp::Update {
                path,
                move_to,
                chunks,
            }),
    ]
}

/// How the patch text is wrapped.
#[derive(Debug, Clone, Copy)]
struct Wrapping {
    crlf: bool,
    leading_blank_lines: usize,
    heredoc: bool,
    trailing_newline: bool,
}

fn wrapping() -> impl Strategy<Value = Wrapping> {
    (any::<bool>(), 0usize..3, any::<bool>(), any::<bool>()).prop_map(
        |(crlf, leading_blank_lines, heredoc, trailing_newline)| Wrapping {
            crlf,
            leading_blank_lines,
            heredoc,
            trailing_newline,
        },
    )
}

/// Render `ops` as patch text, and the [`ParsedPatch`] it must parse to.
fn render(ops: &[GenOp], wrapping: Wrapping) -> (String, ParsedPatch) {
    let mut lines: Vec<String> = Vec::new();
    for _ in 0..wrapping.leading_blank_lines {
        lines.push(String::new());
    }
    if wrapping.heredoc {
        lines.push("<<'EOF'".to_owned());
    }
    let begin = lines.len();
    lines.push(BEGIN_PATCH.to_owned());
    let mut expected = Vec::new();
    for op in ops {
        let header_line = lines.len() + 1;
        match op {
            GenOp::Add { path, lines: text } => {
                lines.push(format!("{ADD_FILE}{path}"));
                let mut contents = String::new();
                for line in text {
                    lines.push(format!("+{line}"));
                    contents.push_str(line);
                    contents.push('\n');
                }
                expected.push(FileOp::Add {
                    path: path.clone(),
                    contents,
                    line: header_line,
                });
            }
            GenOp::Delete { path } => {
                lines.push(format!("{DELETE_FILE}{path}"));
                expected.push(FileOp::Delete {
                    path: path.clone(),
                    line: header_line,
                });
            }
            GenOp::Update {
                path,
                move_to,
                chunks,
            } => {
                lines.push(format!("{UPDATE_FILE}{path}"));
                if let Some(dest) = move_to {
                    lines.push(format!("{MOVE_TO}{dest}"));
                }
                let mut parsed = Vec::new();
                for (n, chunk) in chunks.iter().enumerate() {
                    // A missing header is only allowed on the first chunk, and only when its
                    // first line is not blank (blank lines before a chunk are skipped).
                    let first = format!("{}{}", chunk.lines[0].0, chunk.lines[0].1);
                    let (context, chunk_line) = match &chunk.context {
                        Some(None) if n == 0 && !first.trim().is_empty() => (None, lines.len() + 1),
                        Some(Some(anchor)) => {
                            lines.push(format!("{CONTEXT_PREFIX}{anchor}"));
                            (Some(anchor.clone()), lines.len())
                        }
                        _ => {
                            lines.push(EMPTY_CONTEXT.to_owned());
                            (None, lines.len())
                        }
                    };
                    let mut old_lines = Vec::new();
                    let mut new_lines = Vec::new();
                    for (prefix, text) in &chunk.lines {
                        lines.push(format!("{prefix}{text}"));
                        if *prefix != '+' {
                            old_lines.push(text.clone());
                        }
                        if *prefix != '-' {
                            new_lines.push(text.clone());
                        }
                    }
                    if chunk.end_of_file {
                        lines.push(END_OF_FILE.to_owned());
                    }
                    parsed.push(Chunk {
                        context,
                        old_lines,
                        new_lines,
                        end_of_file: chunk.end_of_file,
                        line: chunk_line,
                    });
                }
                expected.push(FileOp::Update {
                    path: path.clone(),
                    move_path: move_to.clone(),
                    chunks: parsed,
                    line: header_line,
                });
            }
        }
    }
    lines.push(END_PATCH.to_owned());
    let text = lines[begin..].join("\n");
    if wrapping.heredoc {
        lines.push("EOF".to_owned());
    }
    let end = if wrapping.crlf { "\r\n" } else { "\n" };
    let mut input = lines.join(end);
    if wrapping.trailing_newline {
        input.push_str(end);
    }
    (
        input,
        ParsedPatch {
            ops: expected,
            text,
        },
    )
}

/// Bytes of text a parse result holds, and how many strings and vector slots hold them.
fn footprint(parsed: &Result<ParsedPatch, ParseError>) -> (usize, usize) {
    match parsed {
        Ok(patch) => {
            let mut bytes = patch.text.len();
            let mut slots = patch.ops.len();
            for op in &patch.ops {
                match op {
                    FileOp::Add { path, contents, .. } => bytes += path.len() + contents.len(),
                    FileOp::Delete { path, .. } => bytes += path.len(),
                    FileOp::Update {
                        path,
                        move_path,
                        chunks,
                        ..
                    } => {
                        bytes += path.len() + move_path.as_ref().map_or(0, String::len);
                        slots += chunks.len();
                        for chunk in chunks {
                            bytes += chunk.context.as_ref().map_or(0, String::len);
                            bytes += chunk.old_lines.iter().map(String::len).sum::<usize>();
                            bytes += chunk.new_lines.iter().map(String::len).sum::<usize>();
                            slots += chunk.old_lines.len() + chunk.new_lines.len();
                        }
                    }
                }
            }
            (bytes, slots)
        }
        Err(err) => (err.to_string().len(), 0),
    }
}

/// A parse keeps each input byte at most three times (the normalised text, then a context
/// line in both `old_lines` and `new_lines`), and at most two strings per input line.
fn check_bounded(input: &str) -> Result<(), TestCaseError> {
    let parsed = parse_patch(input);
    let (bytes, slots) = footprint(&parsed);
    let lines = input.split('\n').count();
    prop_assert!(
        bytes <= 3 * input.len() + 256,
        "{} bytes held from {} input bytes: {:?}",
        bytes,
        input.len(),
        parsed
    );
    prop_assert!(slots <= 2 * lines, "{} strings from {} lines", slots, lines);
    Ok(())
}

/// A mangling of a valid patch's lines.
#[derive(Debug, Clone)]
enum Mangle {
    Drop(usize),
    Duplicate(usize),
    Insert(usize, String),
    Truncate(usize, usize),
}

fn mangle() -> impl Strategy<Value = Mangle> {
    prop_oneof![
        any::<usize>().prop_map(Mangle::Drop),
        any::<usize>().prop_map(Mangle::Duplicate),
        (
            any::<usize>(),
            prop_oneof![
                line_text(),
                Just(BEGIN_PATCH.to_owned()),
                Just(END_PATCH.to_owned()),
                Just("*** Update File: ".to_owned()),
                Just("*** Move to: x".to_owned()),
                Just("<<EOF".to_owned()),
                Just("EOF".to_owned()),
                Just("\r".to_owned()),
            ]
        )
            .prop_map(|(at, line)| Mangle::Insert(at, line)),
        (any::<usize>(), any::<usize>()).prop_map(|(at, keep)| Mangle::Truncate(at, keep)),
    ]
}

fn apply_mangles(input: &str, mangles: &[Mangle]) -> String {
    let mut lines: Vec<String> = input.split('\n').map(str::to_owned).collect();
    for mangle in mangles {
        let len = lines.len();
        match mangle {
            Mangle::Drop(at) if len > 0 => {
                lines.remove(at % len);
            }
            Mangle::Duplicate(at) if len > 0 => {
                let line = lines[at % len].clone();
                lines.insert(at % len, line);
            }
            Mangle::Insert(at, line) => lines.insert(at % (len + 1), line.clone()),
            Mangle::Truncate(at, keep) if len > 0 => {
                let line = &mut lines[at % len];
                let mut keep = keep % (line.len() + 1);
                while !line.is_char_boundary(keep) {
                    keep -= 1;
                }
                line.truncate(keep);
            }
            _ => {}
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(config())]

    /// A patch rendered from file operations parses to exactly those operations.
    #[test]
    fn generated_patches_parse_to_their_operations(
        ops in proptest::collection::vec(op(), 0..5),
        wrapping in wrapping(),
    ) {
        let (input, expected) = render(&ops, wrapping);
        prop_assert_eq!(parse_patch(&input), Ok(expected), "input:\n{}", input);
        check_bounded(&input)?;
    }

    /// A valid patch with lines dropped, duplicated, inserted or cut short parses or fails
    /// cleanly, within the bound.
    #[test]
    fn mangled_patches_never_panic(
        ops in proptest::collection::vec(op(), 0..5),
        wrapping in wrapping(),
        mangles in proptest::collection::vec(mangle(), 1..6),
    ) {
        let (input, _) = render(&ops, wrapping);
        check_bounded(&apply_mangles(&input, &mangles))?;
    }

    /// Arbitrary text, bare and inside an envelope, never panics and stays within the bound.
    #[test]
    fn arbitrary_text_is_bounded(text in any::<String>()) {
        check_bounded(&text)?;
        check_bounded(&format!("{BEGIN_PATCH}\n{UPDATE_FILE}f\n{text}\n{END_PATCH}"))?;
        check_bounded(&format!("<<EOF\n{BEGIN_PATCH}\n{ADD_FILE}f\n{text}\n{END_PATCH}\nEOF"))?;
    }

    /// Many empty lines in a chunk: each costs two empty strings, never more.
    #[test]
    fn blank_lines_cost_two_strings_each(blank in 1usize..2_000) {
        let input = format!("{BEGIN_PATCH}\n{UPDATE_FILE}f\n@@\n{}\n{END_PATCH}", "\n".repeat(blank));
        check_bounded(&input)?;
    }
}
