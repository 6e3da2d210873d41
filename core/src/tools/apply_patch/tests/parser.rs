//! The patch grammar: operations, headers, chunks and their errors, and the tool specs.

use super::*;

#[test]
fn parses_all_operation_kinds() {
    let patch = wrap(
        "*** Add File: path/add.py\n+abc\n+\n+def\n*** Delete File: path/delete.py\n\
         *** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n\
         +    return 123\n*** End of File",
    );
    let parsed = parse_patch(&patch).unwrap();
    assert_eq!(
        parsed.ops,
        vec![
            FileOp::Add {
                path: "path/add.py".into(),
                contents: "abc\n\ndef\n".into(),
                line: 2,
            },
            FileOp::Delete {
                path: "path/delete.py".into(),
                line: 6,
            },
            FileOp::Update {
                path: "path/update.py".into(),
                move_path: Some("path/update2.py".into()),
                chunks: vec![Chunk {
                    context: Some("def f():".into()),
                    old_lines: strings(&["    pass"]),
                    new_lines: strings(&["    return 123"]),
                    end_of_file: true,
                    line: 9,
                }],
                line: 7,
            },
        ]
    );
}

#[test]
fn empty_input_and_missing_markers_are_rejected() {
    let first = "invalid patch: The first line of the patch must be '*** Begin Patch'";
    let last = "invalid patch: The last line of the patch must be '*** End Patch'";
    for (input, want) in [
        ("", first),
        ("   \n\n", first),
        ("bad", first),
        ("*** Add File: x\n+y\n*** End Patch", first),
        ("*** Begin Patch", last),
        ("*** Begin Patch\n*** Add File: x\n+y\n", last),
        ("*** Begin Patch\n*** Add File: x\n+y\n*** End Patc", last),
    ] {
        assert_eq!(
            parse_patch(input).unwrap_err().to_string(),
            want,
            "{input:?}"
        );
    }
}

#[test]
fn empty_envelope_parses_but_is_rejected_as_empty() {
    let parsed = parse_patch("*** Begin Patch\n*** End Patch").unwrap();
    assert!(parsed.ops.is_empty());
    let dir = Dir::new();
    let err = dir.plan("*** Begin Patch\n*** End Patch\n").unwrap_err();
    assert!(matches!(err, PatchError::Empty));
    assert_eq!(err.model_text(), "patch rejected: empty patch");
}

#[test]
fn heredoc_wrappers_and_padding_are_tolerated() {
    for wrapper in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let patch =
            format!("{wrapper}\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n");
        let parsed = parse_patch(&patch).unwrap();
        assert_eq!(parsed.ops.len(), 1, "{wrapper}");
        assert_eq!(
            parsed.text,
            "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"
        );
    }
    // Whitespace around markers and around the whole text.
    let padded = "\n\n  *** Begin Patch  \n*** Add File: a  \n+x\n  *** End Patch \n\n";
    let parsed = parse_patch(padded).unwrap();
    assert_eq!(parsed.ops[0].path(), "a");
    // A heredoc with too few lines, or a wrong opener, is not unwrapped.
    assert!(parse_patch("<<EOF\n*** Begin Patch\nEOF").is_err());
    assert!(parse_patch("<<END\n*** Begin Patch\n*** End Patch\nEND").is_err());
}

#[test]
fn crlf_patch_text_is_accepted() {
    let patch = "*** Begin Patch\r\n*** Update File: f.txt\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n";
    assert_eq!(apply_text("a\n", patch).unwrap(), "b\n");
}

#[test]
fn invalid_headers_report_their_line() {
    let err = parse_patch(&wrap("*** Add File: a\n+x\n*** Frobnicate File: b")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid hunk at line 4, '*** Frobnicate File: b' is not a valid hunk header. Valid hunk \
         headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    );
    // A header without a path is not a header.
    let (msg, line) = hunk_error(parse_patch(&wrap("*** Delete File: ")).unwrap_err());
    assert!(
        msg.starts_with("'*** Delete File:' is not a valid hunk header"),
        "{msg}"
    );
    assert_eq!(line, 2);
    // Line numbers count the text as received, including leading blank lines.
    let (_, line) =
        hunk_error(parse_patch("\n\n*** Begin Patch\nnonsense\n*** End Patch").unwrap_err());
    assert_eq!(line, 4);
}

#[test]
fn update_errors() {
    let (msg, line) = hunk_error(parse_patch(&wrap("*** Update File: t.py")).unwrap_err());
    assert_eq!(
        (msg.as_str(), line),
        ("Update file hunk for path 't.py' is empty", 2)
    );

    let (msg, line) =
        hunk_error(parse_patch(&wrap("*** Update File: t.py\n@@\n-a\n+b\nstray\n-c")).unwrap_err());
    assert_eq!(
        (msg.as_str(), line),
        (
            "Expected update hunk to start with a @@ context marker, got: 'stray'",
            6
        )
    );

    let (msg, line) =
        hunk_error(parse_patch(&wrap("*** Update File: t.py\n@@\nstray")).unwrap_err());
    assert_eq!(
        (msg.as_str(), line),
        (
            "Unexpected line found in update hunk: 'stray'. Every line should start with ' ' \
             (context line), '+' (added line), or '-' (removed line)",
            4
        )
    );

    let (msg, _) =
        hunk_error(parse_patch(&wrap("*** Update File: t.py\n@@\n*** End of File")).unwrap_err());
    assert_eq!(msg, "Update hunk does not contain any lines");
}

#[test]
fn first_chunk_may_omit_its_header_and_blank_lines_separate_chunks() {
    let parsed = parse_patch(&wrap(
        "*** Update File: f\n import foo\n+bar\n@@ def g():\n-x\n\n+y\n*** End of File\n\n\n@@\n-z\n\n*** Delete File: z",
    ))
    .unwrap();
    let FileOp::Update { chunks, .. } = &parsed.ops[0] else {
        panic!("update expected");
    };
    assert_eq!(chunks.len(), 3);
    assert_eq!(chunks[0].old_lines, strings(&["import foo"]));
    assert_eq!(chunks[0].new_lines, strings(&["import foo", "bar"]));
    assert_eq!(chunks[1].context.as_deref(), Some("def g():"));
    // An empty line inside a chunk is an empty context line.
    assert_eq!(chunks[1].old_lines, strings(&["x", ""]));
    assert_eq!(chunks[1].new_lines, strings(&["", "y"]));
    assert!(chunks[1].end_of_file);
    // Blank lines between chunks are skipped.
    assert_eq!(chunks[2].old_lines, strings(&["z", ""]));
    assert_eq!(parsed.ops[1].path(), "z");
}

#[test]
fn function_and_freeform_inputs_feed_the_same_parser() {
    let patch = wrap("*** Add File: hello.txt\n+hi");
    let args = serde_json::json!({ "input": patch }).to_string();
    let from_json = patch_from_function_arguments(&args).unwrap();
    assert_eq!(
        parse_patch(&from_json).unwrap(),
        parse_patch(&patch).unwrap()
    );
    assert!(patch_from_function_arguments("{\"patch\": \"x\"}").is_err());
    assert!(patch_from_function_arguments("not json").is_err());
}

#[test]
fn tool_specs_have_the_documented_shapes() {
    use serde_json::json;
    let f = function_tool_spec();
    let c = freeform_tool_spec();
    // (spec, JSON pointer, value)
    let fields = [
        (&f, "/type", json!("function")),
        (&f, "/name", json!("apply_patch")),
        (&f, "/strict", json!(false)),
        (&f, "/parameters/required", json!(["input"])),
        (&f, "/parameters/additionalProperties", json!(false)),
        (&f, "/parameters/properties/input/type", json!("string")),
        (&c, "/type", json!("custom")),
        (&c, "/name", json!("apply_patch")),
        (&c, "/format/type", json!("grammar")),
        (&c, "/format/syntax", json!("lark")),
    ];
    for (spec, pointer, value) in fields {
        assert_eq!(spec.pointer(pointer), Some(&value), "{pointer} of {spec}");
    }
    let description = f["description"].as_str().unwrap();
    assert!(description.contains("*** Begin Patch"), "{description}");
    let grammar = c["format"]["definition"].as_str().unwrap();
    assert!(grammar.starts_with("start: begin_patch hunk+ end_patch"));
    assert!(grammar.contains("%import common.LF"));
}
