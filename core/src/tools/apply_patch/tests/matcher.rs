//! Finding a chunk's lines in a file: seek passes, Unicode folding, anchors, end of file and
//! newlines.

use super::*;

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
fn chunks_out_of_file_order_fail() {
    // Chunks out of file order fail rather than matching backwards.
    let err = apply_text("a\nb\n", &update("@@\n-b\n+B\n@@\n-a\n+A")).unwrap_err();
    assert!(err.to_string().starts_with("Failed to find expected lines"));
}

/// Patches that apply: (what the case shows, the file, the update's chunks, the result).
const APPLIED: &[(&str, &str, &str, &str)] = &[
    (
        "typographic punctuation in the file folds to ASCII",
        "let s = \u{201C}hello\u{201D}; // it\u{2019}s \u{2014} ok\u{00A0}\n",
        "@@\n-let s = \"hello\"; // it's - ok\n+let s = 1;",
        "let s = 1;\n",
    ),
    (
        "ASCII in the file, typographic characters in the patch",
        "a - 'b'\n",
        "@@\n-a \u{2013} \u{2018}b\u{2019}\n+c",
        "c\n",
    ),
    (
        "Unicode content round-trips",
        "héllo wörld\n日本語\n🦀 crab\n",
        "@@\n 日本語\n-🦀 crab\n+🦀 ferris",
        "héllo wörld\n日本語\n🦀 ferris\n",
    ),
    (
        "ambiguous lines take the first match",
        "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n",
        "@@\n-    x = 1;\n+    x = 2;",
        "fn a() {\n    x = 2;\n}\nfn b() {\n    x = 1;\n}\n",
    ),
    (
        "an anchor disambiguates",
        "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n",
        "@@ fn b() {\n-    x = 1;\n+    x = 2;",
        "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 2;\n}\n",
    ),
    (
        "chunks search forward from the previous one: the second finds the second copy",
        "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n",
        "@@\n-    x = 1;\n+    x = 2;\n@@\n-    x = 1;\n+    x = 3;",
        "fn a() {\n    x = 2;\n}\nfn b() {\n    x = 3;\n}\n",
    ),
    (
        "the end-of-file marker targets the tail",
        "x\nend\nx\nend\n",
        "@@\n x\n-end\n+END\n*** End of File",
        "x\nend\nx\nEND\n",
    ),
    (
        "a pure addition without an anchor is appended at the end",
        "a\nb\n",
        "@@\n+c",
        "a\nb\nc\n",
    ),
    (
        "an anchored pure addition goes right after the anchor line",
        "class A:\n    pass\nx = 1\n",
        "@@ class A:\n+    y = 2",
        "class A:\n    y = 2\n    pass\nx = 1\n",
    ),
    (
        "a pure addition into an empty file",
        "",
        "@@\n+first",
        "first\n",
    ),
    (
        "a missing final newline is added",
        "a\nb",
        "@@\n-a\n+A",
        "A\nb\n",
    ),
    (
        "a file ending in a blank line keeps it",
        "a\n\n",
        "@@\n-a\n+A",
        "A\n\n",
    ),
    (
        "deleting every line leaves an empty file",
        "a\nb\n",
        "@@\n-a\n-b",
        "",
    ),
    (
        "a trailing empty old line (the final newline) is retried without it",
        "a\nb\n",
        "@@\n-b\n+B\n",
        "a\nB\n",
    ),
    (
        "matching ignores surrounding whitespace",
        "    indented   \n\tlast\n",
        "@@\n-indented\n+done\n-last\n",
        "done\n",
    ),
    (
        "a CRLF file keeps CRLF",
        "one\r\ntwo\r\nthree\r\n",
        "@@\n one\n-two\n+TWO\n+2.5",
        "one\r\nTWO\r\n2.5\r\nthree\r\n",
    ),
    (
        "a file with mixed endings is treated as LF; its CRs stay where they were",
        "a\r\nb\nc\n",
        "@@\n-b\n+B",
        "a\r\nB\nc\n",
    ),
];

#[test]
fn patches_apply_as_expected() {
    for (what, file, chunks, expected) in APPLIED {
        assert_eq!(applies(file, chunks), *expected, "{what}");
    }
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
