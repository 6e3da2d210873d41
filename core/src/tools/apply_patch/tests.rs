use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use support::*;

use super::contents::derive_new_contents;
use super::*;

#[cfg(unix)]
mod confined;

/// Small helpers shared by the tests.
mod support {
    use super::*;

    pub fn wrap(body: &str) -> String {
        format!("*** Begin Patch\n{body}\n*** End Patch\n")
    }

    pub fn allow_all(_: &Path) -> bool {
        true
    }

    pub fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| (*s).to_string()).collect()
    }

    pub fn hunk_error(e: ParseError) -> (String, usize) {
        match e {
            ParseError::InvalidHunk { message, line } => (message, line),
            other => panic!("expected a hunk error, got {other:?}"),
        }
    }

    /// Parses `patch` (one Update op) and applies it to `original` in memory.
    pub fn apply_text(original: &str, patch: &str) -> Result<String, PatchError> {
        let parsed = parse_patch(patch)?;
        let Some(FileOp::Update { chunks, .. }) = parsed.ops.first() else {
            panic!("expected an update op");
        };
        derive_new_contents(Path::new("/f.txt"), original, chunks)
    }

    pub fn update(body: &str) -> String {
        wrap(&format!("*** Update File: f.txt\n{body}"))
    }

    pub struct Dir {
        pub tmp: tempfile::TempDir,
    }

    impl Dir {
        pub fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            Dir { tmp }
        }
        /// The canonical root (so symlink resolution does not differ from it).
        pub fn root(&self) -> PathBuf {
            fs::canonicalize(self.tmp.path()).unwrap()
        }
        pub fn write(&self, rel: &str, contents: &str) {
            let p = self.root().join(rel);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent).unwrap();
            }
            fs::write(p, contents).unwrap();
        }
        pub fn read(&self, rel: &str) -> Option<String> {
            fs::read_to_string(self.root().join(rel)).ok()
        }
        pub fn plan(&self, patch: &str) -> Result<PatchPlan, PatchError> {
            let root = self.root();
            let inside = move |p: &Path| p.starts_with(&root);
            plan_patch(patch, &self.root(), &inside)
        }
        pub fn apply(&self, patch: &str) -> Result<ApplyOutcome, PatchError> {
            apply_plan(&self.plan(patch)?)
        }
    }
}

// ---------------------------------------------------------------- parser

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
    let f = function_tool_spec();
    assert_eq!(f["type"], "function");
    assert_eq!(f["name"], "apply_patch");
    assert_eq!(f["strict"], false);
    assert_eq!(f["parameters"]["required"], serde_json::json!(["input"]));
    assert_eq!(f["parameters"]["additionalProperties"], false);
    assert_eq!(f["parameters"]["properties"]["input"]["type"], "string");
    assert!(
        f["description"]
            .as_str()
            .unwrap()
            .contains("*** Begin Patch")
    );

    let c = freeform_tool_spec();
    assert_eq!(c["type"], "custom");
    assert_eq!(c["name"], "apply_patch");
    assert_eq!(c["format"]["type"], "grammar");
    assert_eq!(c["format"]["syntax"], "lark");
    let grammar = c["format"]["definition"].as_str().unwrap();
    assert!(grammar.starts_with("start: begin_patch hunk+ end_patch"));
    assert!(grammar.contains("%import common.LF"));
}

// ---------------------------------------------------------------- matcher

#[test]
fn seek_passes_in_order() {
    let lines = strings(&["a  ", "  b", "x", "b"]);
    // Exact match later beats a fuzzy match earlier.
    assert_eq!(seek_sequence(&lines, &strings(&["b"]), 0, false), Some(3));
    // trim_end.
    assert_eq!(seek_sequence(&lines, &strings(&["a"]), 0, false), Some(0));
    // trim.
    assert_eq!(
        seek_sequence(&lines, &strings(&["a", "b"]), 0, false),
        Some(0)
    );
    // From the start index only.
    assert_eq!(seek_sequence(&lines, &strings(&["a"]), 1, false), None);
    // Empty pattern, too-long pattern.
    assert_eq!(seek_sequence(&lines, &[], 2, false), Some(2));
    assert_eq!(
        seek_sequence(&lines, &strings(&["a", "b", "c", "d", "e"]), 0, false),
        None
    );
    assert_eq!(seek_sequence(&[], &strings(&["a"]), 0, false), None);
    // EOF prefers the last window, else falls back to the forward search.
    let dup = strings(&["x", "y", "x"]);
    assert_eq!(seek_sequence(&dup, &strings(&["x"]), 0, true), Some(2));
    assert_eq!(seek_sequence(&dup, &strings(&["y"]), 0, true), Some(1));
}

#[test]
fn unicode_punctuation_is_folded() {
    let file = "let s = \u{201C}hello\u{201D}; // it\u{2019}s \u{2014} ok\u{00A0}\n";
    let out = apply_text(
        file,
        &update("@@\n-let s = \"hello\"; // it's - ok\n+let s = 1;"),
    )
    .unwrap();
    assert_eq!(out, "let s = 1;\n");
    // And the other way round: ASCII in the file, typographic characters in the patch.
    let out = apply_text(
        "a - 'b'\n",
        &update("@@\n-a \u{2013} \u{2018}b\u{2019}\n+c"),
    )
    .unwrap();
    assert_eq!(out, "c\n");
}

#[test]
fn unicode_content_round_trips() {
    let file = "héllo wörld\n日本語\n🦀 crab\n";
    let out = apply_text(file, &update("@@\n 日本語\n-🦀 crab\n+🦀 ferris")).unwrap();
    assert_eq!(out, "héllo wörld\n日本語\n🦀 ferris\n");
}

#[test]
fn hunk_that_matches_nowhere_fails_with_the_reference_text() {
    let err = apply_text("a\nb\n", &update("@@\n-zzz\n-yyy\n+c")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Failed to find expected lines in /f.txt:\nzzz\nyyy"
    );
    assert_eq!(
        err.model_text(),
        "apply_patch verification failed: Failed to find expected lines in /f.txt:\nzzz\nyyy"
    );
    let err = apply_text("a\nb\n", &update("@@ fn missing()\n-a\n+c")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Failed to find context 'fn missing()' in /f.txt"
    );
}

#[test]
fn ambiguous_lines_take_the_first_match_and_anchors_disambiguate() {
    let file = "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n";
    let first = apply_text(file, &update("@@\n-    x = 1;\n+    x = 2;")).unwrap();
    assert_eq!(first, "fn a() {\n    x = 2;\n}\nfn b() {\n    x = 1;\n}\n");
    let anchored = apply_text(file, &update("@@ fn b() {\n-    x = 1;\n+    x = 2;")).unwrap();
    assert_eq!(
        anchored,
        "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 2;\n}\n"
    );
    // Chunks search forward from the previous one: the second chunk finds the second copy.
    let both = apply_text(
        file,
        &update("@@\n-    x = 1;\n+    x = 2;\n@@\n-    x = 1;\n+    x = 3;"),
    )
    .unwrap();
    assert_eq!(both, "fn a() {\n    x = 2;\n}\nfn b() {\n    x = 3;\n}\n");
    // Chunks out of file order fail rather than matching backwards.
    let err = apply_text("a\nb\n", &update("@@\n-b\n+B\n@@\n-a\n+A")).unwrap_err();
    assert!(err.to_string().starts_with("Failed to find expected lines"));
}

#[test]
fn end_of_file_marker_targets_the_tail() {
    let file = "x\nend\nx\nend\n";
    let out = apply_text(file, &update("@@\n x\n-end\n+END\n*** End of File")).unwrap();
    assert_eq!(out, "x\nend\nx\nEND\n");
}

#[test]
fn pure_additions() {
    // No anchor: appended at the end.
    assert_eq!(
        apply_text("a\nb\n", &update("@@\n+c")).unwrap(),
        "a\nb\nc\n"
    );
    // Anchored: right after the anchor line.
    assert_eq!(
        apply_text(
            "class A:\n    pass\nx = 1\n",
            &update("@@ class A:\n+    y = 2")
        )
        .unwrap(),
        "class A:\n    y = 2\n    pass\nx = 1\n"
    );
    // Into an empty file.
    assert_eq!(apply_text("", &update("@@\n+first")).unwrap(), "first\n");
}

#[test]
fn trailing_newline_handling() {
    // A missing final newline is added.
    assert_eq!(apply_text("a\nb", &update("@@\n-a\n+A")).unwrap(), "A\nb\n");
    // A file ending in a blank line keeps it.
    assert_eq!(apply_text("a\n\n", &update("@@\n-a\n+A")).unwrap(), "A\n\n");
    // Deleting every line leaves an empty file.
    assert_eq!(apply_text("a\nb\n", &update("@@\n-a\n-b")).unwrap(), "");
    // A trailing empty old line (the final newline) is retried without it.
    assert_eq!(
        apply_text("a\nb\n", &update("@@\n-b\n+B\n")).unwrap(),
        "a\nB\n"
    );
}

#[test]
fn whitespace_insensitive_matching() {
    let file = "    indented   \n\tlast\n";
    let out = apply_text(file, &update("@@\n-indented\n+done\n-last\n")).unwrap();
    assert_eq!(out, "done\n");
}

#[test]
fn crlf_files_keep_crlf() {
    let file = "one\r\ntwo\r\nthree\r\n";
    let out = apply_text(file, &update("@@\n one\n-two\n+TWO\n+2.5")).unwrap();
    assert_eq!(out, "one\r\nTWO\r\n2.5\r\nthree\r\n");
    // A file with mixed endings is treated as LF; its CRs stay where they were.
    let mixed = "a\r\nb\nc\n";
    assert_eq!(
        apply_text(mixed, &update("@@\n-b\n+B")).unwrap(),
        "a\r\nB\nc\n"
    );
}

#[test]
fn ten_thousand_line_file() {
    let file: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    let start = std::time::Instant::now();
    let patch = update(
        "@@\n line 4998\n-line 4999\n+changed 4999\n line 5000\n@@ line 9990\n-line 9999\n+last\n*** End of File",
    );
    let out = apply_text(&file, &patch).unwrap();
    assert!(out.contains("line 4998\nchanged 4999\nline 5000\n"));
    assert!(out.ends_with("line 9998\nlast\n"));
    assert_eq!(out.lines().count(), 10_000);
    // A miss scans the whole file through all four passes.
    assert!(apply_text(&file, &update("@@\n-not there\n+x")).is_err());
    let diff = unified_hunks(&file, &out, 1);
    assert_eq!(
        diff,
        "@@ -4999,3 +4999,3 @@\n line 4998\n-line 4999\n+changed 4999\n line 5000\n\
         @@ -9999,2 +9999,2 @@\n line 9998\n-line 9999\n+last\n"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}

// ---------------------------------------------------------------- plan / apply

#[test]
fn success_text_lists_added_modified_deleted() {
    let dir = Dir::new();
    dir.write("mod.txt", "a\n");
    dir.write("old/name.txt", "n\n");
    dir.write("gone.txt", "g\n");
    let patch = wrap(
        "*** Delete File: gone.txt\n*** Update File: mod.txt\n@@\n-a\n+b\n\
         *** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-n\n+N\n\
         *** Add File: new/nested.txt\n+hello",
    );
    let plan = dir.plan(&patch).unwrap();
    let outcome = apply_plan(&plan).unwrap();
    let want = "Success. Updated the following files:\nA new/nested.txt\nM mod.txt\n\
                M renamed/dir/name.txt\nD gone.txt\n";
    assert_eq!(outcome.success_text(), want);
    assert_eq!(plan.success_text(), want);
    assert_eq!(dir.read("mod.txt").as_deref(), Some("b\n"));
    assert_eq!(dir.read("renamed/dir/name.txt").as_deref(), Some("N\n"));
    assert_eq!(dir.read("old/name.txt"), None);
    assert_eq!(dir.read("gone.txt"), None);
    assert_eq!(dir.read("new/nested.txt").as_deref(), Some("hello\n"));
}

#[test]
fn file_change_diffs_follow_the_protocol() {
    let dir = Dir::new();
    let root = dir.root();
    dir.write("u.txt", "1\n2\n3\n4\n5\n");
    dir.write("d.txt", "bye\n");
    dir.write("m.txt", "keep\nold\n");
    let plan = dir
        .plan(&wrap(
            "*** Add File: a.txt\n+hello from apply_patch\n*** Delete File: d.txt\n\
             *** Update File: u.txt\n@@\n 2\n-3\n+three\n 4\n\
             *** Update File: m.txt\n*** Move to: sub/m2.txt\n@@\n keep\n-old\n+new",
        ))
        .unwrap();
    let c = plan.changes();
    assert_eq!(c.len(), 4);

    assert_eq!(c[0].path, root.join("a.txt"));
    assert_eq!(c[0].kind, ChangeKind::Add);
    assert_eq!(c[0].diff, "hello from apply_patch\n");
    assert_eq!(
        c[0].git_diff,
        "diff --git a/a.txt b/a.txt\nnew file mode 100644\n\
         index 0000000000000000000000000000000000000000..86ddfb8cbbf96928cb6ee38b9174645983db4797\n\
         --- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hello from apply_patch\n"
    );

    assert_eq!(c[1].kind, ChangeKind::Delete);
    assert_eq!(c[1].diff, "bye\n");
    assert!(
        c[1].git_diff
            .starts_with("diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n")
    );
    assert!(
        c[1].git_diff
            .ends_with("--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n")
    );

    assert_eq!(c[2].kind, ChangeKind::Update { move_path: None });
    assert_eq!(c[2].diff, "@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n");
    assert!(
        c[2].git_diff
            .contains("--- a/u.txt\n+++ b/u.txt\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n")
    );

    let dest = root.join("sub/m2.txt");
    assert_eq!(
        c[3].kind,
        ChangeKind::Update {
            move_path: Some(dest.clone())
        }
    );
    assert_eq!(
        c[3].diff,
        format!(
            "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n\n\nMoved to: {}",
            dest.display()
        )
    );
    assert!(
        c[3].git_diff
            .starts_with("diff --git a/m.txt b/sub/m2.txt\n")
    );

    let proto = c[3].to_protocol();
    let json = serde_json::to_value(&proto).unwrap();
    assert_eq!(json["kind"]["type"], "update");
    assert_eq!(json["kind"]["move_path"], dest.to_string_lossy().as_ref());
    assert_eq!(json["path"], root.join("m.txt").to_string_lossy().as_ref());
    assert_eq!(plan.protocol_changes().len(), 4);

    // Planning wrote nothing.
    assert_eq!(dir.read("a.txt"), None);
    assert_eq!(dir.read("d.txt").as_deref(), Some("bye\n"));
    assert_eq!(dir.read("m.txt").as_deref(), Some("keep\nold\n"));
}

#[test]
fn verification_failure_writes_nothing() {
    let dir = Dir::new();
    dir.write("one.txt", "1\n");
    dir.write("two.txt", "2\n");
    dir.write("three.txt", "3\n");
    let patch = wrap(
        "*** Update File: one.txt\n@@\n-1\n+uno\n*** Add File: brand/new.txt\n+new\n\
         *** Delete File: two.txt\n*** Update File: three.txt\n@@\n-not three\n+tres",
    );
    let err = dir.apply(&patch).unwrap_err();
    assert!(err.wrote_nothing());
    assert!(
        err.model_text()
            .starts_with("apply_patch verification failed: Failed to find expected lines in "),
        "{}",
        err.model_text()
    );
    assert_eq!(dir.read("one.txt").as_deref(), Some("1\n"));
    assert_eq!(dir.read("two.txt").as_deref(), Some("2\n"));
    assert_eq!(dir.read("three.txt").as_deref(), Some("3\n"));
    assert!(!dir.root().join("brand").exists());
}

#[test]
fn moves_preserve_permissions_and_overwrite_destinations() {
    let dir = Dir::new();
    dir.write("script.sh", "echo hi\n");
    dir.write("dest/script.sh", "old dest\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            dir.root().join("script.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let plan = dir
        .plan(&wrap(
            "*** Update File: script.sh\n*** Move to: dest/script.sh\n@@\n-echo hi\n+echo bye",
        ))
        .unwrap();
    assert_eq!(
        plan.changes()[0].overwritten_move_content.as_deref(),
        Some("old dest\n")
    );
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("script.sh"), None);
    assert_eq!(dir.read("dest/script.sh").as_deref(), Some("echo bye\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.root().join("dest/script.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}

#[test]
fn add_over_an_existing_file_overwrites_it() {
    let dir = Dir::new();
    dir.write("dup.txt", "before\n");
    let plan = dir.plan(&wrap("*** Add File: dup.txt\n+after")).unwrap();
    let change = &plan.changes()[0];
    assert_eq!(change.kind, ChangeKind::Add);
    assert_eq!(change.old_content.as_deref(), Some("before\n"));
    assert!(change.git_diff.contains("-before\n+after\n"));
    assert!(!change.git_diff.contains("new file mode"));
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("dup.txt").as_deref(), Some("after\n"));
}

#[test]
fn missing_files_and_directories_are_rejected() {
    let dir = Dir::new();
    let root = dir.root();
    let err = dir.plan(&wrap("*** Delete File: nope.txt")).unwrap_err();
    assert_eq!(
        err.model_text(),
        format!(
            "apply_patch verification failed: Failed to read {}: {}",
            root.join("nope.txt").display(),
            std::io::Error::from_raw_os_error(2)
        )
    );
    let err = dir
        .plan(&wrap("*** Update File: nope.txt\n@@\n-a\n+b"))
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "Failed to read file to update {}",
            root.join("nope.txt").display()
        )),
        "{err}"
    );
    fs::create_dir(root.join("adir")).unwrap();
    let err = dir.plan(&wrap("*** Delete File: adir")).unwrap_err();
    assert!(err.to_string().contains("Is a directory"), "{err}");
    let err = dir.plan(&wrap("*** Add File: adir\n+x")).unwrap_err();
    assert!(err.to_string().contains("Is a directory"), "{err}");
    assert!(root.join("adir").is_dir());
    // Deleting twice in one patch: the second sees the first.
    dir.write("once.txt", "x\n");
    assert!(
        dir.plan(&wrap(
            "*** Delete File: once.txt\n*** Delete File: once.txt"
        ))
        .is_err()
    );
    assert_eq!(dir.read("once.txt").as_deref(), Some("x\n"));
}

#[test]
fn non_utf8_files() {
    let dir = Dir::new();
    fs::write(dir.root().join("bin"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let err = dir
        .plan(&wrap("*** Update File: bin\n@@\n-A\n+B"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("stream did not contain valid UTF-8"),
        "{err}"
    );
    // Deleting one works.
    dir.apply(&wrap("*** Delete File: bin")).unwrap();
    assert!(!dir.root().join("bin").exists());
}

#[test]
fn paths_outside_the_writable_roots_are_rejected() {
    let dir = Dir::new();
    let root = dir.root();
    fs::create_dir(root.join("ws")).unwrap();
    fs::write(root.join("outside.txt"), "secret\n").unwrap();
    let ws = root.join("ws");
    let inside = |p: &Path| p.starts_with(&ws);

    // `../` traversal.
    let err = plan_patch(&wrap("*** Add File: ../evil.txt\n+x"), &ws, &inside).unwrap_err();
    assert!(matches!(&err, PatchError::NotWritable { path } if *path == root.join("evil.txt")));
    assert_eq!(
        err.model_text(),
        format!(
            "patch rejected: writing outside of the sandbox's writable roots: {}",
            root.join("evil.txt").display()
        )
    );
    let err = plan_patch(&wrap("*** Add File: sub/../../evil.txt\n+x"), &ws, &inside).unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }));
    // Update / delete / move destination outside.
    for body in [
        "*** Update File: ../outside.txt\n@@\n-secret\n+pwned",
        "*** Delete File: ../outside.txt",
    ] {
        let err = plan_patch(&wrap(body), &ws, &inside).unwrap_err();
        assert!(
            matches!(err, PatchError::NotWritable { .. }),
            "{body}: {err}"
        );
    }
    fs::write(ws.join("in.txt"), "a\n").unwrap();
    let err = plan_patch(
        &wrap("*** Update File: in.txt\n*** Move to: ../moved.txt\n@@\n-a\n+b"),
        &ws,
        &inside,
    )
    .unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }));
    // Absolute paths: inside is fine, outside is not.
    let abs_inside = ws.join("abs.txt");
    let plan = plan_patch(
        &wrap(&format!("*** Add File: {}\n+ok", abs_inside.display())),
        &ws,
        &inside,
    )
    .unwrap();
    assert_eq!(plan.changes()[0].path, abs_inside);
    apply_plan(&plan).unwrap();
    assert_eq!(fs::read_to_string(&abs_inside).unwrap(), "ok\n");
    let err = plan_patch(
        &wrap(&format!(
            "*** Add File: {}\n+x",
            root.join("abs-out.txt").display()
        )),
        &ws,
        &inside,
    )
    .unwrap_err();
    assert!(matches!(err, PatchError::NotWritable { .. }));
    // Nothing outside changed.
    assert_eq!(
        fs::read_to_string(root.join("outside.txt")).unwrap(),
        "secret\n"
    );
    assert!(!root.join("evil.txt").exists());
    assert!(!root.join("moved.txt").exists());
    assert_eq!(fs::read_to_string(ws.join("in.txt")).unwrap(), "a\n");
}

#[cfg(unix)]
#[test]
fn symlinks_cannot_escape_the_writable_roots() {
    let dir = Dir::new();
    let root = dir.root();
    let ws = root.join("ws");
    fs::create_dir_all(root.join("target")).unwrap();
    fs::create_dir(&ws).unwrap();
    std::os::unix::fs::symlink(root.join("target"), ws.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("target/dangling.txt"), ws.join("dangle")).unwrap();
    let inside = |p: &Path| p.starts_with(&ws);
    for body in ["*** Add File: link/x.txt\n+x", "*** Add File: dangle\n+x"] {
        let err = plan_patch(&wrap(body), &ws, &inside).unwrap_err();
        assert!(
            matches!(err, PatchError::NotWritable { .. }),
            "{body}: {err}"
        );
    }
    assert!(!root.join("target/x.txt").exists());
    assert!(!root.join("target/dangling.txt").exists());
    assert!(path_is_writable(&ws.join("plain.txt"), &inside));
    assert!(!path_is_writable(&ws.join("link/plain.txt"), &inside));
}

#[test]
fn files_changed_after_planning_are_not_clobbered() {
    let dir = Dir::new();
    dir.write("a.txt", "a\n");
    dir.write("b.txt", "b\n");
    let plan = dir
        .plan(&wrap(
            "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B",
        ))
        .unwrap();
    dir.write("b.txt", "b\nedited by someone else\n");
    let err = apply_plan(&plan).unwrap_err();
    assert!(matches!(err, PatchError::Stale { .. }));
    assert!(err.wrote_nothing());
    assert!(
        err.model_text()
            .starts_with("apply_patch verification failed: ")
    );
    assert_eq!(dir.read("a.txt").as_deref(), Some("a\n"));
    // A file that appeared where the plan expected none.
    let plan = dir.plan(&wrap("*** Add File: c.txt\n+c")).unwrap();
    dir.write("c.txt", "surprise\n");
    assert!(matches!(apply_plan(&plan), Err(PatchError::Stale { .. })));
    assert_eq!(dir.read("c.txt").as_deref(), Some("surprise\n"));
}

#[test]
fn operations_on_the_same_path_compose() {
    let dir = Dir::new();
    let plan = dir
        .plan(&wrap(
            "*** Add File: f.txt\n+one\n+two\n*** Update File: f.txt\n@@\n-two\n+deux\n\
             *** Update File: f.txt\n*** Move to: g.txt\n@@\n-one\n+un",
        ))
        .unwrap();
    assert_eq!(
        plan.changes()[1].diff,
        "@@ -1,2 +1,2 @@\n one\n-two\n+deux\n"
    );
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("f.txt"), None);
    assert_eq!(dir.read("g.txt").as_deref(), Some("un\ndeux\n"));
}

#[test]
fn write_failures_are_reported_with_their_cause() {
    let dir = Dir::new();
    let plan = dir
        .plan(&wrap(
            "*** Add File: first.txt\n+1\n*** Add File: sub/child.txt\n+x",
        ))
        .unwrap();
    // After planning, a file appears where the parent directory must be created.
    dir.write("sub", "I am a file\n");
    let err = apply_plan(&plan).unwrap_err();
    assert!(!err.wrote_nothing());
    assert!(
        err.model_text()
            .starts_with("Failed to create parent directories for "),
        "{err}"
    );
    // No rollback: the first operation stays applied.
    assert_eq!(dir.read("first.txt").as_deref(), Some("1\n"));
}

#[test]
fn turn_diff_tracker_aggregates_patches() {
    let dir = Dir::new();
    let root = dir.root();
    dir.write("a.txt", "a\n");
    dir.write("r.txt", "r\n");
    let mut tracker = TurnDiffTracker::new(Some(root.clone()));
    assert_eq!(tracker.unified_diff(), None);

    let p1 = dir
        .plan(&wrap(
            "*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: n.txt\n+n",
        ))
        .unwrap();
    apply_plan(&p1).unwrap();
    tracker.track(&p1);
    let p2 = dir
        .plan(&wrap(
            "*** Update File: a.txt\n@@\n-b\n+c\n*** Update File: r.txt\n*** Move to: s.txt\n@@\n-r\n+s",
        ))
        .unwrap();
    apply_plan(&p2).unwrap();
    tracker.track(&p2);
    let diff = tracker.unified_diff().unwrap();
    assert!(
        diff.starts_with("diff --git a/a.txt b/a.txt\nindex "),
        "{diff}"
    );
    assert!(
        diff.contains("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+c\n"),
        "{diff}"
    );
    assert!(
        diff.contains("diff --git a/n.txt b/n.txt\nnew file mode 100644\n"),
        "{diff}"
    );
    assert!(diff.contains("diff --git a/r.txt b/s.txt\n"), "{diff}");
    assert!(
        diff.contains("--- a/r.txt\n+++ b/s.txt\n@@ -1 +1 @@\n-r\n+s\n"),
        "{diff}"
    );

    // Reverting everything leaves no diff.
    let p3 = dir
        .plan(&wrap(
            "*** Update File: a.txt\n@@\n-c\n+a\n*** Delete File: n.txt\n\
             *** Update File: s.txt\n*** Move to: r.txt\n@@\n-s\n+r",
        ))
        .unwrap();
    apply_plan(&p3).unwrap();
    tracker.track(&p3);
    assert_eq!(tracker.unified_diff(), None);
}

// ---------------------------------------------------------------- property tests

/// Builds an apply_patch update body from the unified diff between two texts.
fn patch_between(old: &str, new: &str) -> Option<String> {
    let hunks = unified_hunks(old, new, 3);
    if hunks.is_empty() {
        return None;
    }
    let body: Vec<String> = hunks
        .lines()
        .map(|l| {
            if l.starts_with("@@ ") {
                "@@".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    Some(update(&body.join("\n")))
}

fn line_strategy() -> impl Strategy<Value = String> {
    // Hostile characters: markers, prefixes, typographic punctuation, spaces, non-ASCII.
    proptest::string::string_regex("[a-z*@+ \\-#é—’\u{00A0}]{0,10}").unwrap()
}

#[derive(Debug, Clone)]
enum EditOp {
    Replace(usize, String),
    Insert(usize, String),
    Delete(usize),
}

fn edit_strategy() -> impl Strategy<Value = EditOp> {
    prop_oneof![
        (any::<usize>(), line_strategy()).prop_map(|(i, s)| EditOp::Replace(i, s)),
        (any::<usize>(), line_strategy()).prop_map(|(i, s)| EditOp::Insert(i, s)),
        any::<usize>().prop_map(EditOp::Delete),
    ]
}

fn apply_edits(lines: &[String], edits: &[EditOp]) -> Vec<String> {
    let mut out = lines.to_vec();
    for e in edits {
        match e {
            EditOp::Replace(i, s) if !out.is_empty() => {
                let i = i % out.len();
                out[i] = s.clone();
            }
            EditOp::Insert(i, s) => {
                let i = i % (out.len() + 1);
                out.insert(i, s.clone());
            }
            EditOp::Delete(i) if !out.is_empty() => {
                let i = i % out.len();
                out.remove(i);
            }
            _ => {}
        }
    }
    out
}

fn join_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn arbitrary_patchish() -> impl Strategy<Value = String> {
    let fixed = proptest::sample::select(vec![
        "*** Begin Patch".to_string(),
        "*** End Patch".to_string(),
        "*** End of File".to_string(),
        "@@".to_string(),
        String::new(),
    ]);
    let line = prop_oneof![
        fixed,
        "[a-z]{0,3}".prop_map(|p| format!("*** Add File: {p}")),
        "[a-z]{0,3}".prop_map(|p| format!("*** Update File: {p}")),
        "[a-z]{0,3}".prop_map(|p| format!("*** Delete File: {p}")),
        "[a-z]{0,3}".prop_map(|p| format!("*** Move to: {p}")),
        "[a-z ]{0,4}".prop_map(|c| format!("@@ {c}")),
        "[ +\\-*@a-z\r\t]{0,6}",
        any::<String>(),
    ];
    proptest::collection::vec(line, 0..24).prop_map(|lines| lines.join("\n"))
}

proptest! {
    /// Random file + random edits: the patch generated from their diff applies back to
    /// exactly the edited file.
    #[test]
    fn generated_patches_apply_back(
        raw in proptest::collection::vec(line_strategy(), 0..40),
        edits in proptest::collection::vec(edit_strategy(), 1..8),
    ) {
        // Unique original lines, so the forward search cannot pick a wrong occurrence.
        let original: Vec<String> = raw.iter().enumerate().map(|(i, l)| format!("{l}#{i}")).collect();
        let edited = apply_edits(&original, &edits);
        let (old, new) = (join_lines(&original), join_lines(&edited));
        if let Some(patch) = patch_between(&old, &new) {
            let out = apply_text(&old, &patch);
            prop_assert!(out.is_ok(), "{:?}\n{}", out.err().map(|e| e.to_string()), patch);
            prop_assert_eq!(out.ok(), Some(new));
        } else {
            prop_assert_eq!(old, new);
        }
    }

    /// The parser never panics, and parsing is deterministic.
    #[test]
    fn parser_never_panics(input in any::<String>()) {
        let a = parse_patch(&input);
        prop_assert_eq!(a, parse_patch(&input));
    }

    /// Structured noise reaches deeper into the parser and the matcher without panicking.
    #[test]
    fn parser_and_matcher_survive_patch_shaped_noise(
        body in arbitrary_patchish(),
        file in proptest::collection::vec("[a-z +\\-@]{0,4}", 0..12),
    ) {
        for input in [body.clone(), format!("*** Begin Patch\n{body}\n*** End Patch")] {
            if let Ok(parsed) = parse_patch(&input) {
                for op in &parsed.ops {
                    if let FileOp::Update { chunks, .. } = op {
                        let _ = derive_new_contents(Path::new("/x"), &file.join("\n"), chunks);
                    }
                }
            }
        }
    }

    /// Generated diffs never lose or invent lines: replaying the hunks rebuilds the new text.
    #[test]
    fn unified_hunks_replay(
        a in proptest::collection::vec("[abc]{0,2}", 0..30),
        b in proptest::collection::vec("[abc]{0,2}", 0..30),
    ) {
        let (old, new) = (join_lines(&a), join_lines(&b));
        let hunks = unified_hunks(&old, &new, 2);
        // Replay: walk old lines, applying each hunk at its stated position.
        let old_lines: Vec<&str> = old.lines().collect();
        let mut out: Vec<String> = Vec::new();
        let mut pos = 0usize;
        for hunk in hunks.split("@@ -").skip(1) {
            let header_end = hunk.find(" @@\n").unwrap();
            let old_range = hunk[..header_end].split(' ').next().unwrap();
            let mut parts = old_range.split(',');
            let start: usize = parts.next().unwrap().parse().unwrap();
            let len: usize = parts.next().map_or(1, |l| l.parse().unwrap());
            let start0 = if len == 0 { start } else { start - 1 };
            out.extend(old_lines[pos..start0].iter().map(|s| (*s).to_string()));
            pos = start0;
            for l in hunk[header_end + 4..].lines() {
                match l.as_bytes().first() {
                    Some(b' ') => { prop_assert_eq!(old_lines[pos], &l[1..]); out.push(l[1..].to_string()); pos += 1; }
                    Some(b'-') => { prop_assert_eq!(old_lines[pos], &l[1..]); pos += 1; }
                    Some(b'+') => out.push(l[1..].to_string()),
                    _ => prop_assert!(false, "bad hunk line {:?}", l),
                }
            }
        }
        out.extend(old_lines[pos..].iter().map(|s| (*s).to_string()));
        prop_assert_eq!(out, b);
    }

    /// Myers finds a minimal diff: changed lines = |a| + |b| − 2·LCS(a, b).
    #[test]
    fn unified_hunks_are_minimal(
        a in proptest::collection::vec("[abc]", 0..25),
        b in proptest::collection::vec("[abc]", 0..25),
    ) {
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let hunks = unified_hunks(&join_lines(&a), &join_lines(&b), 0);
        let changed = hunks
            .lines()
            .filter(|l| l.starts_with('+') || l.starts_with('-'))
            .count();
        prop_assert_eq!(changed, a.len() + b.len() - 2 * lcs[0][0]);
    }
}

#[test]
fn generated_patches_apply_through_the_filesystem() {
    // One end-to-end pass of the round trip through plan_patch/apply_plan.
    let dir = Dir::new();
    let old: String = (0..200).map(|i| format!("row {i}\n")).collect();
    let new = old
        .replace("row 10\n", "ROW TEN\n")
        .replace("row 150\n", "")
        + "tail\n";
    dir.write("f.txt", &old);
    let plan = plan_patch(&patch_between(&old, &new).unwrap(), &dir.root(), &allow_all).unwrap();
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("f.txt"), Some(new));
}
